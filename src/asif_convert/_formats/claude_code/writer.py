"""An IR session as a Claude Code transcript.

A session read from Claude Code gives its records back (``records``), value for value. Any
other session is written as the transcript ``claude --resume`` continues (``foreign``), and so
is one read from Claude Code whose records no longer fit its events (an edited document)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from asif_convert import ir
from asif_convert._errors import InvalidInput, Problem
from asif_convert._formats.claude_code import NAMESPACE, foreign, records
from asif_convert._ledger import Ledger, name_extensions


def write(doc: ir.Document, ledger: Ledger, warnings: list[Problem], files: Mapping[str, bytes]) -> list[Any]:
    """``files``: the bytes of the files the session embeds by path, where the user's folder gave
    them (a transcript written from the session's events carries them inline)."""
    if NAMESPACE not in doc.native:
        return foreign.write(doc, ledger, files)
    try:
        grouped = records.coherent_groups(doc)
        rendered = records.render(doc, grouped)  # read from Claude Code: its records
    except records.Incoherent as exc:
        warnings.append(_incoherent(doc, exc))
        return foreign.write(doc, ledger, files)
    out = [record for _, record in rendered]
    warnings += _unresumable(doc, grouped, rendered)
    written: set[str] = set()
    own_file: set[str] = set()  # (the events of the session's file: a subagent's is not written)
    for home, group in grouped:
        written.update(m.id for m in group)
        if home.r[0].f is not None:
            ledger.add("records[].companion", "event", group[0].id, about=home.r[0].f)
        else:
            own_file.update(m.id for m in group)
    name_extensions(ledger, "events[].extensions", [ev for ev in doc.events if ev.id in own_file], NAMESPACE)
    for ev in doc.events:
        if ev.id not in written:  # added since: it has no record
            ledger.add("events[].unwritten", "event", ev.id)
    if not out:
        raise InvalidInput([Problem(rule="format", path="/events", message=(
            "nothing in this session can be a Claude Code transcript: it holds no record"))], doc.session.id)
    return out


def _incoherent(doc: ir.Document, exc: records.Incoherent) -> Problem:
    """The warning of a session whose records no longer fit its events: where, and what it is
    written as instead (its losses say the rest)."""
    at = next((k for k, ev in enumerate(doc.events) if ev.id == exc.event_id), None)
    pointer = NAMESPACE.replace("/", "~1")
    path = f"/events/{at}/extensions/{pointer}" if at is not None else f"/{pointer}"
    where = f"event {exc.event_id!r}: " if at is not None else ""
    return Problem(rule="native-state", path=path, severity="warning", message=(
        f"the transcript this session was read from no longer fits its events ({where}{exc.why}; edited "
        "since?): it is written from its events, as a session read from elsewhere is, not record for record"))


def _unresumable(doc: ir.Document, grouped: list[tuple[records.Home, list[ir.Event]]],
                 rendered: list[tuple[int, Any]]) -> list[Problem]:
    """Warnings for records given back as the session says them that ``claude --resume`` cannot
    take: an assistant record with no model (the client hangs), a last message record with no
    timestamp (it finds no conversation). The records are not changed: written back, a session
    is what its document says (an edit that removed an event's time or execution, or a file
    that lacked them)."""
    event_of = {slot.n: group[0] for home, group in grouped for slot in home.r if slot.f is None}
    at = {ev.id: k for k, ev in enumerate(doc.events)}
    messages = [(n, r) for n, r in rendered if isinstance(r, dict) and r.get("type") in ("user", "assistant")
                and isinstance(r.get("message"), dict)]
    found = []
    modelless = [n for n, r in messages if r["type"] == "assistant" and not (
        isinstance(r["message"].get("model"), str) and r["message"]["model"])]
    if modelless:
        more = f" (and {len(modelless) - 1} more)" if len(modelless) > 1 else ""
        found.append((modelless[0], f"an assistant record with no model{more}: claude --resume hangs on it "
                                    "(its event has no execution that names a model)"))
    if messages and not (isinstance(messages[-1][1].get("timestamp"), str) and messages[-1][1]["timestamp"]):
        found.append((messages[-1][0], "the last message record has no timestamp: claude --resume finds no "
                                       "conversation (its event has no time)"))
    return [Problem(rule="resume", path=f"/events/{at[event_of[n].id]}", severity="warning",
                    message=f"written back as the session says it, {why}") for n, why in found]
