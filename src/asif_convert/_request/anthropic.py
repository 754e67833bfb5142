"""The Anthropic Messages request: ``client.messages.create(system=..., messages=..., tools=...)``.

User and assistant turns alternate (consecutive inputs of one side merged); a turn of tool calls
is answered by a user turn that opens with their ``tool_result`` blocks; system and developer
messages have no place among the messages: those before the first other input join ``system``,
later ones are user text. Thinking blocks travel only when they came from this API (they carry
its signature)."""

from __future__ import annotations

import re
from typing import Any

from asif_convert import ir
from asif_convert._request.common import (
    NAME_SYNTAX,
    Renderer,
    arrange,
    call_arguments,
    offered,
    reasoning_of,
    role_as_user,
    schema,
    side,
    turns,
)
from asif_convert._request.selection import Input, Selection

NAME = "anthropic-messages"
_ID = re.compile(r"[A-Za-z0-9_-]+")
_IMAGES = ("image/jpeg", "image/png", "image/gif", "image/webp")


def render(selection: Selection) -> tuple[dict[str, Any], list[ir.Loss]]:
    r = Renderer(selection, NAME)
    items = arrange(r)
    system = [_text(p) for p in selection.instructions if isinstance(p, ir.TextPart)]
    while items and items[0].kind == "message" and items[0].role in ("system", "developer"):
        head = items.pop(0)
        role_as_user(r, head, "before the conversation joins the top-level system prompt")
        system += [_text(p) for p in head.parts if isinstance(p, ir.TextPart) and p.text]
    groups = turns(r, [(i, _blocks(r, i, side(i))) for i in items])
    messages = [{"role": role, "content": blocks} for role, blocks in groups]
    body: dict[str, Any] = {}
    if system:
        body["system"] = system
    body["messages"] = messages
    tools = [{"name": name, "description": t.description, "input_schema": schema(t)}
             for name, t in offered(r, NAME_SYNTAX)]
    if tools:
        body["tools"] = tools
    return body, r.losses()


def _text(p: ir.TextPart) -> dict[str, Any]:
    return {"type": "text", "text": p.text}


def _blocks(r: Renderer, i: Input, side: str) -> list[dict[str, Any]]:
    if i.kind == "tool_call":
        return [{"type": "tool_use", "id": r.fit_id(i.call_id or "", _ID, i.id),
                 "name": r.fit_name(r.tool_name(i.tool_id), NAME_SYNTAX, i.id), "input": call_arguments(r, i)}]
    if i.kind == "tool_result":
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": r.fit_id(i.call_id or "", _ID, i.id)}
        content = _parts(r, i, in_result=True)
        if len(content) == 1 and content[0]["type"] == "text":
            block["content"] = content[0]["text"]
        elif content:
            block["content"] = content
        if i.outcome == "error":
            block["is_error"] = True
        elif i.outcome in ("cancelled", "unknown"):
            r.loss("outcome_adapted", i.outcome, f"a tool result of outcome {i.outcome!r} is sent as a result "
                   "(the API knows only success and error)", i.id)
        return [block]
    if i.role not in ("user", "assistant"):
        role_as_user(r, i, f"is sent as {side} text: the API has no such role among its messages")
    return _parts(r, i, in_result=False, side=side)


def _parts(r: Renderer, i: Input, in_result: bool, side: str = "user") -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for p in i.parts:
        if isinstance(p, ir.TextPart):
            r.cited(p, i)
            if p.text:
                out.append(_text(p))
        elif isinstance(p, ir.ResourcePart):
            block = _media(r, p, i)
            if block is not None:
                out.append(block)
        elif reasoning_of(p) is not None:
            assert isinstance(p, ir.StructuredPart)
            if reasoning_of(p) == NAME and side == "assistant" and not in_result:
                out.append(dict(p.value))
            else:
                r.loss("reasoning_dropped", reasoning_of(p) or "", "private reasoning of another API (or out of "
                       "the assistant's turn) is not sent: only this API's own thinking blocks, with their "
                       "signature, can be", i.id)
        elif (text := r.as_text(p, i)) is not None:
            out.append({"type": "text", "text": text})
        else:
            r.drop(p, i, "it holds a block this API does not know")
    return out


def _media(r: Renderer, p: ir.ResourcePart, i: Input) -> dict[str, Any] | None:
    m = r.media(p)
    if m is None:
        r.drop(p, i, "its resource is not embedded nor referenced")
        return None
    if m.media_type in _IMAGES or (m.source in ("url", "file") and m.image):
        kind = "image"
    elif m.media_type == "application/pdf" or m.source in ("url", "file") or m.media_type.startswith("text/"):
        kind = "document"
    else:
        r.drop(p, i, f"the API takes no {m.media_type} media")
        return None
    if m.source == "base64":
        if kind == "document" and m.media_type != "application/pdf":
            r.drop(p, i, f"the API takes no {m.media_type} media as base64")
            return None
        source: dict[str, Any] = {"type": "base64", "media_type": m.media_type, "data": m.value}
    elif m.source == "text":
        kind, source = "document", {"type": "text", "media_type": "text/plain", "data": m.value}
        if m.media_type != "text/plain":
            r.loss("media_adapted", m.media_type, f"a {m.media_type} text document is sent as text/plain", i.id)
    elif m.source == "url":
        source = {"type": "url", "url": m.value}
    else:
        source = {"type": "file", "file_id": m.value}
    return {"type": kind, "source": source}
