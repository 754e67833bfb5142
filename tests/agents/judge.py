"""What the real clients are asked to show: every text, call and result of a session's selected
history arrives in the client's first request after resuming, in order, or a loss names it."""

from __future__ import annotations

import json
from typing import Any

from asif_convert import ir


def pieces(ev: ir.Event) -> list[str]:
    """What of an event must be found on the wire, as JSON-escaped text: a message's and a
    result's texts, a call's and a result's call id (quoted)."""
    body = ev.body
    if isinstance(body, ir.ToolCall):
        return [json.dumps(body.call_id, ensure_ascii=False)]
    if isinstance(body, ir.Message | ir.ToolResult):
        texts = [json.dumps(p.text, ensure_ascii=False)[1:-1] for p in ir.parts_of(body)
                 if isinstance(p, ir.TextPart) and p.text.strip()]
        return [json.dumps(body.call_id, ensure_ascii=False), *texts] if isinstance(body, ir.ToolResult) else texts
    return []


def arrived(sent: Any, history: list[ir.Event], losses: list[ir.Loss]) -> list[str]:
    """The events of ``history`` whose pieces are not in ``sent`` (in order) and that no loss
    names: what went missing without a word (empty when all is well)."""
    named = {ref.id for loss in losses for ref in (loss.references or ())}
    wire = json.dumps(sent, ensure_ascii=False)
    at = 0
    missing = []
    for ev in history:
        for piece in pieces(ev):
            found = wire.find(piece, at)
            if found >= 0:
                at = found
            elif ev.id not in named:
                missing.append(f"{ev.id}: {piece[:80]!r}")
    return missing
