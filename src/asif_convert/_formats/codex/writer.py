"""IR -> Codex rollout lines.

A session read from a rollout (its ``native["codex/1"]``) gives its lines back, equal in value:
the kept lines in their places, each response item rendered from its events and the difference
the reader kept. Any other session becomes a rollout Codex resumes (``fresh``): a
``session_meta`` first line with the fields Codex requires, then one ``response_item`` line per
Responses item, every adaptation a loss.
"""

from __future__ import annotations

from typing import Any

from asif_convert import ir
from asif_convert._codec import codec_for
from asif_convert._dialects import difference
from asif_convert._formats.codex import fresh
from asif_convert._formats.codex.reader import NAMESPACE, render_item
from asif_convert.plugin import Context


def write(doc: ir.Document, ctx: Context) -> list[Any]:
    native = doc.native.get(NAMESPACE)
    if isinstance(native, dict) and native.get("generation") in ("rollout", "legacy") \
            and isinstance(native.get("kept"), list) and type(native.get("lines")) is int:
        return _back(doc, ctx, native)
    return fresh.write(doc, ctx)


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


def _back(doc: ir.Document, ctx: Context, native: dict[str, Any]) -> list[Any]:
    codec = codec_for(ctx.namespaces)
    resources = {r.id: codec.dump(r) for r in doc.resources}
    kept = {entry[0]: entry[1] for entry in native["kept"] if isinstance(entry, list) and len(entry) == 2}
    groups = iter(_groups(doc.events))
    legacy = native["generation"] == "legacy"
    out: list[Any] = []
    for index in range(native["lines"]):
        if index in kept:
            out.append(kept[index])
            continue
        group = next(groups, None)
        if group is None:
            continue
        out.append(_line(codec, group, resources, legacy))
    out += [_line(codec, group, resources, legacy) for group in groups]  # items added after reading
    return out


def _line(codec: Any, group: list[ir.Event], resources: dict[str, Any], legacy: bool) -> Any:
    state = group[0].native[NAMESPACE]
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
        order = [k for k in wrapper.get("keys") or () if k in line]
        line = {k: line[k] for k in [*order, *(k for k in line if k not in order)]}
    return line
