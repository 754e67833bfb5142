"""A rollout Codex resumes, from a session not read from one (Claude Code, continuity, ASIF).

The first line is the ``session_meta`` Codex requires (``id``, ``timestamp``, ``cwd``,
``originator``, ``cli_version``, ``model_provider``); then the selected branch's messages, tool
calls and results as Responses items, one ``response_item`` line each. Outputs are strings;
reasoning travels only as Responses reasoning items; every adaptation is a loss.
"""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path
from typing import Any

from asif_convert import ir
from asif_convert._codec import codec_for
from asif_convert._dialects import openai_responses
from asif_convert._dialects.common import REASONING, Pieces
from asif_convert._formats.codex.reader import NAMESPACE
from asif_convert._ledger import name_extensions
from asif_convert._version import __version__
from asif_convert.plugin import Context, Ledger, load_mapping

TABLE_PATH = Path(__file__).with_name("asif-to-codex.toml")
EPOCH = "1970-01-01T00:00:00.000Z"
ERROR_LINE = "The tool reported an error."
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_ROLES = {"user": "user", "assistant": "assistant", "developer": "developer", "system": "developer"}


def session_uuid(session_id: str) -> str:
    """The session id when it is a UUID, else one derived from it (uuid5, deterministic)."""
    return session_id if _UUID.match(session_id) else str(uuid.uuid5(uuid.NAMESPACE_URL, f"asif:{session_id}"))


class Fresh:
    def __init__(self, doc: ir.Document, ctx: Context, session_id: str | None, cwd: str | None) -> None:
        self.doc = doc
        self.codec = codec_for(ctx.namespaces)
        self.ledger: Ledger = ctx.ledger(load_mapping(TABLE_PATH))
        self.resources = {r.id: self.codec.dump(ir.with_bytes(r, ctx.embedded)) for r in doc.resources}
        self.sid = session_id or session_uuid(doc.session.id)
        if session_id is None and self.sid != doc.session.id:
            self.ledger.add("session.id")
        self.cwd = cwd
        self.lines: list[Any] = []
        self.time = EPOCH
        self.custom: set[str] = set()  # the calls written as custom tool calls (their outputs follow suit)

    def write(self) -> list[Any]:
        events = ir.continued_history(self.doc)
        superseded = ir.superseded_calls(events)
        for ev in events:
            if ev.id in superseded:
                self.ledger.add("superseded-call", "event", ev.id)
        events = [ev for ev in events if ev.id not in superseded]
        if len(self.doc.branches) > 1:
            self.ledger.add("branches")
        state = self.doc.native.get(NAMESPACE) if self.doc.native else None
        kept = state.get("kept") if isinstance(state, dict) else None  # (a value of any shape: data)
        if isinstance(kept, list) and kept:  # (a rollout read before: its lines that are no events)
            self.ledger.add("kept-lines", about=f"{len(kept)} line(s)")
        known = [ev.time for ev in events if isinstance(ev.time, str)]
        self.time = known[0] if known else EPOCH
        self.ledger.add("session_meta")
        meta = {"id": self.sid, "timestamp": self.time, "cwd": self.cwd or "/", "originator": "asif-convert",
                "cli_version": __version__, "source": "exec", "model_provider": "openai"}
        self.lines.append({"timestamp": self.time, "type": "session_meta", "payload": meta})
        calls = {ev.body.call_id for ev in events if isinstance(ev.body, ir.ToolCall)}
        answered = {ev.body.call_id for ev in events if isinstance(ev.body, ir.ToolResult)}
        written = []
        for ev in events:
            if isinstance(ev.time, str):
                self.time = ev.time
            elif known:
                self.ledger.add("time", "event", ev.id)
            items = self._items(ev, calls, answered)
            if items:
                written.append(ev)
            for item in items:
                self.lines.append({"timestamp": self.time, "type": "response_item", "payload": item})
        if not known:
            self.ledger.add("time")
        name_extensions(self.ledger, "extensions", written)
        return self.lines

    def _items(self, ev: ir.Event, calls: set[str], answered: set[str]) -> list[dict[str, Any]]:
        body = ev.body
        if isinstance(body, ir.Message):
            return self._message(ev, body)
        if isinstance(body, ir.ToolCall):
            if body.call_id not in answered:
                self.ledger.add("unanswered-call", "event", ev.id)
            if body.arguments_status != "complete":
                self.ledger.add("partial-arguments", "event", ev.id)
            if isinstance(body.arguments, str):  # a freeform tool's text (Codex's apply_patch): its own item
                self.custom.add(body.call_id)
                return [{"type": "custom_tool_call", "call_id": body.call_id, "name": body.tool_id,
                         "input": body.arguments}]
            return [{"type": "function_call", "name": body.tool_id,
                     "arguments": json.dumps(body.arguments, ensure_ascii=False), "call_id": body.call_id}]
        if isinstance(body, ir.ToolResult):
            if body.call_id not in calls:
                self.ledger.add("orphan-result", "event", ev.id)
                return []
            kind = "custom_tool_call_output" if body.call_id in self.custom else "function_call_output"
            return [{"type": kind, "call_id": body.call_id, "output": self._output(ev, body)}]
        self.ledger.add("event", "event", ev.id, about=body.KIND)
        return []

    def _output(self, ev: ir.Event, body: ir.ToolResult) -> str:
        texts = [p.text for p in body.parts if isinstance(p, ir.TextPart)]
        if len(texts) != len(body.parts):
            self.ledger.add("result-parts", "event", ev.id)
        text = "\n".join(texts)
        if body.outcome == "error":
            self.ledger.add("error-outcome", "event", ev.id)
            return f"{ERROR_LINE}\n{text}"
        return text

    def _message(self, ev: ir.Event, body: ir.Message) -> list[dict[str, Any]]:
        role = _ROLES.get(body.role, "user")
        if role != body.role:
            self.ledger.add("role", "event", ev.id, about=body.role)
        parts: list[dict[str, Any]] = []
        for part in body.parts:
            if isinstance(part, ir.StructuredPart) and part.schema == REASONING:
                if isinstance(part.value, dict) and part.value.get("type") == "reasoning" and role == "assistant":
                    parts.append(self.codec.dump_part(part))
                else:
                    self.ledger.add("reasoning", "event", ev.id)
            elif isinstance(part, ir.TextPart) or (isinstance(part, ir.ResourcePart) and role != "assistant"
                                                   and self._image(part)):  # (an assistant message holds text only)
                parts.append(self.codec.dump_part(part))
            else:
                self.ledger.add("content", "event", ev.id, about=type(part).__name__)
        if not parts:
            return []
        items = openai_responses.render(Pieces(role=role, parts=parts, calls=[], results=[],
                                               resources=self.resources), {})
        return [i for i in (items if isinstance(items, list) else [items]) if isinstance(i, dict)]

    def _image(self, part: ir.ResourcePart) -> bool:
        res = self.resources.get(part.resource_id)
        return isinstance(res, dict) and str(res.get("media_type", "")).startswith("image/") \
            and isinstance(res.get("data"), str)


def write(doc: ir.Document, ctx: Context, session_id: str | None = None, cwd: str | None = None) -> list[Any]:
    return Fresh(doc, ctx, session_id, cwd).write()
