"""IR -> Codex rollout lines.

A session read from a rollout (its ``native["codex/1"]``) gives its lines back, equal in value:
the kept lines in their places, each response item rendered from its events and the difference
the reader kept. Any other session becomes a rollout Codex resumes (``fresh``): a
``session_meta`` first line with the fields Codex requires, then one ``response_item`` line per
Responses item, every adaptation a loss.
"""

from __future__ import annotations

from typing import Any

import msgspec

from asif_convert import ir
from asif_convert._codec import codec_for
from asif_convert._dialects import difference
from asif_convert._dialects.common import Style
from asif_convert._dialects.difference import Difference
from asif_convert._errors import Problem
from asif_convert._formats.codex import fresh
from asif_convert._formats.codex.reader import NAMESPACE, generation, line_of, render_item
from asif_convert._ledger import name_extensions
from asif_convert.plugin import Context, load_mapping


def write(doc: ir.Document, ctx: Context) -> list[Any]:
    native = doc.native.get(NAMESPACE)
    if isinstance(native, dict) and native.get("generation") in ("rollout", "legacy") \
            and isinstance(native.get("kept"), list) and type(native.get("lines")) is int:
        lines, grouped = _back(doc, ctx, native)
        if lines and _opens_a_rollout(lines[0]):
            _name_what_is_left(doc, grouped, ctx)
            return lines
        # (an edited state whose lines no longer open with the session's header: the session
        # is written as any other, with the header and losses a fresh rollout has)
    return fresh.write(doc, ctx)


def _opens_a_rollout(line: Any) -> bool:
    """Whether ``line`` is a rollout's first line, with the session id Codex resumes by."""
    kind = generation(line)
    meta = line.get("payload") if kind == "rollout" else line if kind == "legacy" else None
    return isinstance(meta, dict) and isinstance(meta.get("id"), str) and bool(meta["id"])


def _groups(events: list[ir.Event]) -> list[list[ir.Event]]:
    """The events of each response item: a line's first event (it holds the line's state), then
    the events the reader made from the same item (ids ``<first>/<k>``)."""
    groups: list[list[ir.Event]] = []
    for ev in events:
        if NAMESPACE in ev.native:
            groups.append([ev])
        elif groups and ev.id.startswith(f"{groups[-1][0].id}/"):
            groups[-1].append(ev)
    return groups


def _back(doc: ir.Document, ctx: Context, native: dict[str, Any]) -> tuple[list[Any], set[str]]:
    """The lines given back, and the ids of the events they were rendered from."""
    codec = codec_for(ctx.namespaces)
    resources = {r.id: codec.dump(r) for r in doc.resources}
    kept = {entry[0]: entry[1] for entry in native["kept"]
            if isinstance(entry, list) and len(entry) == 2 and type(entry[0]) is int}
    listed = _groups(doc.events)
    states = [_state(group[0]) for group in listed]
    _warn_of_foreign_states(doc, [group[0] for group, state in zip(listed, states, strict=True) if state is None], ctx)
    groups = zip(listed, states, strict=True)
    legacy = native["generation"] == "legacy"
    out: list[Any] = []
    # (past the last kept line and one line per group, no index writes anything: an edited
    # count never makes the loop longer than the output)
    for index in range(min(native["lines"], max(kept, default=-1) + 1 + len(listed))):
        if index in kept:
            out.append(kept[index])
            continue
        group, state = next(groups, (None, None))
        if group is None:
            continue
        out.append(_line(codec, group, resources, legacy, state or {}))
    out += [_line(codec, group, resources, legacy, state or {}) for group, state in groups]  # items added after reading
    return out, {ev.id for group in listed for ev in group}


def _name_what_is_left(doc: ir.Document, grouped: set[str], ctx: Context) -> None:
    """Losses for a rollout given back line for line: an event with no line of its own (added
    since: a message, call or result without codex/1 state, or any other event the reader did
    not read from a line) is not written; the events that are (their lines, or the kept lines
    they were read from) lose their other extensions."""
    items = ir.Message | ir.ToolCall | ir.ToolResult
    unwritten = {ev.id for ev in doc.events
                 if ev.id not in grouped and (isinstance(ev.body, items) or line_of(ev.id) is None)}
    written = [ev for ev in doc.events if ev.id not in unwritten]
    if not unwritten and not ir.extensions_held(written, NAMESPACE):
        return
    ledger = ctx.ledger(load_mapping(fresh.TABLE_PATH))
    for ev in doc.events:
        if ev.id in unwritten:
            ledger.add("unwritten", "event", ev.id)
    name_extensions(ledger, "extensions", written, NAMESPACE)


def _warn_of_foreign_states(doc: ir.Document, foreign: list[ir.Event], ctx: Context) -> None:
    """One warning for the lines whose state is not of the shape the reader writes: nothing of
    the session is lost (the state only says how the line looked), but the line no longer comes
    back as it was, and whoever edited the state should know it was not followed."""
    if not foreign:
        return
    at = doc.events.index(foreign[0])
    others = f" and {len(foreign) - 1} other line(s)" if len(foreign) > 1 else ""
    ctx.warnings.append(Problem(rule="native-state", path=f"/events/{at}/extensions/{NAMESPACE.replace('/', '~1')}",
                                severity="warning", message=(
        f"the codex/1 state of event {foreign[0].id!r}{others} is not of the shape asif-convert writes (edited, or "
        "another tool's): it is not followed, and the line is written from its events alone")))


class _Wrapper(msgspec.Struct):
    keys: list[str] = []
    extra: dict[str, Any] = {}


class _LineState(msgspec.Struct):
    """A line's ``codex/1`` value as the reader writes it (what the writer reads of it)."""

    w: _Wrapper | None = None  # the line's keys in order, and its other members
    style: Style | None = None  # the dialect's style of the item
    d: Difference | None = None  # the item's difference from its rendering
    enc: dict[str, Any] | None = None  # an output string's JSON encoding, by result index
    ns: str | None = None  # a namespaced call's namespace


def _state(event: ir.Event) -> dict[str, Any] | None:
    """A line's state, when it has the shape the reader writes; else None: the value is
    foreign (edited, or another tool's), and the line is written from its events alone."""
    state = event.native[NAMESPACE]
    try:
        msgspec.convert(state, _LineState)
    except msgspec.ValidationError:
        return None
    return state if isinstance(state, dict) else None


def _line(codec: Any, group: list[ir.Event], resources: dict[str, Any], legacy: bool, state: dict[str, Any]) -> Any:
    first = group[0].body
    role = first.role if isinstance(first, ir.Message) else "tool" if isinstance(first, ir.ToolResult) else "assistant"
    item = render_item(codec, role, group, resources, state)
    item = difference.apply(item, state.get("d"))
    if legacy:
        return item
    time = group[0].time if isinstance(group[0].time, str) and "t" not in state else state.get("t")
    line = {"timestamp": time, "type": "response_item", "payload": item}
    wrapper = state.get("w")
    if isinstance(wrapper, dict):
        line.update(wrapper.get("extra") or {})
        keys = wrapper.get("keys") or ()
        if keys and "timestamp" not in keys and time is None:  # (the line had none: not one of null)
            del line["timestamp"]
        order = [k for k in keys if k in line]
        line = {k: line[k] for k in [*order, *(k for k in line if k not in order)]}
    return line
