"""An IR session as a Claude Code transcript.

A session read from Claude Code gives its records back (``records``), value for value. Any
other session is written as the transcript ``claude --resume`` continues (``foreign``)."""

from __future__ import annotations

from typing import Any

from asif_convert import ir
from asif_convert._errors import InvalidInput, Problem
from asif_convert._formats.claude_code import NAMESPACE, foreign, records
from asif_convert._ledger import Ledger


def write(doc: ir.Document, ledger: Ledger) -> list[Any]:
    if NAMESPACE not in doc.native:
        return foreign.write(doc, ledger)
    out = [record for _, record in records.render(doc)]  # read from Claude Code: its records
    written: set[str] = set()
    for home, group in records.groups(doc.events):
        written.update(m.id for m in group)
        if home.r[0].f is not None:  # a subagent's own file
            ledger.add("records[].companion", "event", group[0].id, about=home.r[0].f)
    for ev in doc.events:
        if ev.id not in written:  # added since: it has no record
            ledger.add("events[].unwritten", "event", ev.id)
    if not out:
        raise InvalidInput([Problem(rule="format", path="/events", message=(
            "nothing in this session can be a Claude Code transcript: it holds no record"))], doc.session.id)
    return out
