"""Any session (a continuity export, an ASIF document) as a transcript ``claude --resume``
continues: the active branch's messages, calls and results as user and assistant records in
one parentUuid chain, each response's pieces one record per block as the client writes them.

What the client needs and the session lacks is made and said (a loss each): a UUID for every
record and for the session, a timestamp on the last record, a model on assistant records
(``<synthetic>``, the client's own marker for a response no model produced). What it would
drop or the API refuse is left out and said: a call with no result, a result with no call,
reasoning without Claude's signature, a blank text (the API refuses it), a part with no block."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

import msgspec

from asif_convert import ir
from asif_convert._dialects import REASONING, anthropic
from asif_convert._dialects.common import Pieces
from asif_convert._errors import InvalidInput, Problem
from asif_convert._formats.claude_code import media
from asif_convert._formats.claude_code.records import TOOL_USE_RESULT
from asif_convert._ledger import Ledger, name_extensions

EPOCH = "1970-01-01T00:00:00.000Z"
SYNTHETIC_MODEL = "<synthetic>"
_ANTHROPIC_PARTS = (REASONING, anthropic.SEARCH_RESULT)


def _signed(block: Any) -> bool:
    """Claude's own reasoning: a thinking block with its signature, or a redacted one."""
    if not isinstance(block, dict):
        return False
    if block.get("type") == "thinking":
        return isinstance(block.get("signature"), str) and bool(block["signature"])
    return block.get("type") == "redacted_thinking" and isinstance(block.get("data"), str)


def _uuid(*names: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "asif-convert:" + ":".join(names)))


def session_uuid(session_id: str) -> str:
    """The session's id when it is a UUID (Claude Code names the file after it), else one made from it."""
    try:
        return str(uuid.UUID(session_id))
    except ValueError:
        return _uuid("session", session_id)


class _Writer:
    def __init__(self, doc: ir.Document, ledger: Ledger, files: Mapping[str, bytes]) -> None:
        self.doc, self.ledger = doc, ledger
        self.session = session_uuid(doc.session.id)
        self.resource_of = {r.id: ir.with_bytes(r, files) for r in doc.resources}
        self.executions = {x.id: x for x in doc.executions}
        self.out: list[dict[str, Any]] = []
        self.parent: str | None = None
        self.turn: str | None = None  # the message id of the assistant turn being written
        self.written_calls: set[str] = set()
        self.wrote: set[str] = set()  # the events with a record

    def record(self, kind: str, message: dict[str, Any], ev: ir.Event, k: int = 0) -> dict[str, Any]:
        rid = _uuid(self.doc.session.id, ev.id, str(k))
        rec: dict[str, Any] = {"parentUuid": self.parent, "isSidechain": False, "userType": "external",
                               "sessionId": self.session, "type": kind, "message": message, "uuid": rid}
        if isinstance(ev.time, str):
            rec["timestamp"] = ev.time
        self.out.append(rec)
        self.wrote.add(ev.id)
        self.parent = rid
        return rec

    def blocks(self, parts: list[ir.Part], ev: ir.Event) -> list[Any]:
        out: list[Any] = []
        for p in parts:
            if isinstance(p, ir.ResourcePart):
                block, said = media.block(self.resource_of.get(p.resource_id))
                if block is None or said:
                    self.ledger.add("parts[].media" if block is not None else "parts[]", "event", ev.id,
                                    about=said if block is not None else None)
                out += [block] if block is not None else []
                continue
            why = self._left_out(p)
            if why is not None:
                if why:
                    self.ledger.add(why, "event", ev.id)
                continue
            pieces = Pieces(role="user", parts=[msgspec.to_builtins(p)], calls=[], results=[], resources={})
            out += anthropic.render(pieces, {})
        return out

    def _left_out(self, p: ir.Part) -> str | None:
        """The loss key of a part Claude Code cannot take ("" for the structured copy a result
        carries as toolUseResult), or None."""
        if isinstance(p, ir.StructuredPart) and p.schema == TOOL_USE_RESULT:
            return ""
        if isinstance(p, ir.StructuredPart) and p.schema == REASONING:
            return None if _signed(p.value) else "parts[].reasoning"
        blank = isinstance(p, ir.TextPart) and not p.text.strip()  # (the API refuses a blank text)
        foreign = isinstance(p, ir.StructuredPart) and p.schema not in _ANTHROPIC_PARTS
        return "parts[]" if blank or foreign or isinstance(p, ir.OpaquePart) else None

    def model(self, ev: ir.Event) -> str:
        x = self.executions.get(ev.execution_id) if isinstance(ev.execution_id, str) else None
        name = x.model.get("name") if x is not None and isinstance(x.model, dict) else None
        if isinstance(name, str) and name:
            return name
        self.ledger.add("executions[].model", "event", ev.id)
        return SYNTHETIC_MODEL

    def assistant(self, ev: ir.Event, blocks: list[Any]) -> None:
        if not blocks:  # (nothing of it is written: no record, no model made for one)
            return
        if self.turn is None:
            self.turn = "msg_" + _uuid(self.doc.session.id, "response", ev.id).replace("-", "")[:24]
        model = self.model(ev)
        for k, block in enumerate(blocks):
            self.record("assistant", {"id": self.turn, "type": "message", "role": "assistant", "model": model,
                                      "content": [block], "stop_reason": None, "stop_sequence": None}, ev, k)

    def event(self, ev: ir.Event, answered: set[str]) -> None:
        body = ev.body
        if isinstance(body, ir.Message) and body.role == "assistant":
            self.assistant(ev, self.blocks(body.parts, ev))
        elif isinstance(body, ir.Message):
            if body.role != "user":
                self.ledger.add("events[].role", "event", ev.id)
            self.turn = None
            content = self.blocks(body.parts, ev)
            if content:
                self.record("user", {"role": "user", "content": content}, ev)
        elif isinstance(body, ir.ToolCall):
            if body.call_id not in answered:
                self.ledger.add("events[].tool_call", "event", ev.id)
                return
            self.written_calls.add(body.call_id)
            self.assistant(ev, [{"type": "tool_use", "id": body.call_id, "name": self._tool_name(body.tool_id),
                                 "input": self._input(body, ev)}])
        elif isinstance(body, ir.ToolResult):
            self.result(ev, body)
        else:
            self.ledger.add("events[]", "event", ev.id, about=ev.kind)

    def _input(self, body: ir.ToolCall, ev: ir.Event) -> dict[str, Any]:
        """A call's input: the Messages API takes an object. Arguments of another shape (a
        freeform tool's text) are its ``input`` member; unknown ones (partial) an empty object."""
        if isinstance(body.arguments, dict):
            return body.arguments
        self.ledger.add("events[].arguments", "event", ev.id)
        return {} if body.arguments is None else {"input": body.arguments}

    def _tool_name(self, tool_id: str) -> str:
        tool = next((t for t in self.doc.tools if t.id == tool_id), None)
        return tool.name if tool is not None else tool_id

    def result(self, ev: ir.Event, body: ir.ToolResult) -> None:
        if body.call_id not in self.written_calls:
            self.ledger.add("events[].tool_result", "event", ev.id)
            return
        self.written_calls.discard(body.call_id)  # (one result per call: the client takes one)
        self.turn = None
        shown = [p for p in body.parts if not (isinstance(p, ir.StructuredPart) and p.schema == TOOL_USE_RESULT)]
        blocks = self.blocks(shown, ev)
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": body.call_id,
                                 "content": blocks[0]["text"] if len(blocks) == 1 and blocks[0].get("type") == "text"
                                 else blocks}
        if body.outcome == "error":
            block["is_error"] = True
        rec = self.record("user", {"role": "user", "content": [block]}, ev)
        structured = next((p.value for p in body.parts
                           if isinstance(p, ir.StructuredPart) and p.schema == TOOL_USE_RESULT), None)
        if structured is not None:
            rec["toolUseResult"] = structured


def write(doc: ir.Document, ledger: Ledger, files: Mapping[str, bytes]) -> list[dict[str, Any]]:
    branch = ir.continued_branch(doc)
    events = ir.continued_history(doc)  # (with what the branch inherits from the one it forked from)
    written = {ev.id for ev in events}
    for b in doc.branches:
        if branch is not None and b.id != branch.id:
            ledger.add("branches[]", "branch", b.id)
            for eid in b.event_ids:  # what only that branch holds
                if eid not in written:
                    ledger.add("branches[]", "event", eid)
    answered = {ev.body.call_id for ev in events if isinstance(ev.body, ir.ToolResult)}
    superseded = ir.superseded_calls(events)
    for ev in events:
        if ev.id in superseded:
            ledger.add("events[]", "event", ev.id, about="superseded tool_call")
    events = [ev for ev in events if ev.id not in superseded]
    writer = _Writer(doc, ledger, files)
    if writer.session != doc.session.id or events:
        ledger.add("events[].id")
    for ev in events:
        writer.event(ev, answered)
    if not writer.out:
        where = f"its branch {branch.id!r}" if branch is not None else "it"
        raise InvalidInput([Problem(rule="format", path="/events", message=(
            f"nothing in this session can be a Claude Code transcript: {where} holds no message, call or result "
            "Claude Code could resume"))], doc.session.id)
    _timestamp_the_leaf(writer.out, ledger, events)
    name_extensions(ledger, "events[].extensions", [ev for ev in events if ev.id in writer.wrote])
    return writer.out


def _timestamp_the_leaf(out: list[dict[str, Any]], ledger: Ledger, events: list[ir.Event]) -> None:
    """Claude Code finds no conversation whose last record has no timestamp: the nearest earlier
    time, or the epoch, said as made."""
    if not out or "timestamp" in out[-1]:
        return
    earlier = next((r["timestamp"] for r in reversed(out) if "timestamp" in r), None)
    out[-1]["timestamp"] = earlier or next((ev.time for ev in reversed(events) if isinstance(ev.time, str)), EPOCH)
    ledger.add("events[].time")
