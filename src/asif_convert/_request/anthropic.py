"""The Anthropic Messages request: ``client.messages.create(system=..., messages=..., tools=...)``.

User and assistant turns alternate (consecutive inputs of one side merged); a turn of tool calls
is answered by a user turn that opens with their ``tool_result`` blocks; system and developer
messages have no place among the messages: those before the first other input join ``system``,
later ones are user text. Thinking blocks travel only when they came from this API (they carry
its signature); so do server tool blocks (a server_tool_use and its result block, in the
assistant's turn) and the citations of a text."""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from asif_convert import ir
from asif_convert._request.common import (
    Media,
    Renderer,
    arrange,
    call_arguments,
    native_blocks,
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
_PROVIDER = "anthropic"  # the server identity the continuity reader gives the tools this API runs
# The server tools, and their result blocks, a request's messages take back (the stable
# ServerToolUseBlockParam names and ContentBlockParam members; an advisor result is a beta's)
_SERVER_TOOLS = ("web_search", "web_fetch", "code_execution", "bash_code_execution", "text_editor_code_execution",
                 "tool_search_tool_regex", "tool_search_tool_bm25")
_SERVER_RESULTS = ("web_search_tool_result", "web_fetch_tool_result", "code_execution_tool_result",
                   "bash_code_execution_tool_result", "text_editor_code_execution_tool_result",
                   "tool_search_tool_result")


def render(selection: Selection) -> tuple[dict[str, Any], list[ir.Loss]]:
    r = Renderer(selection, NAME, native=_server_blocks)
    items = arrange(r)
    system = [_text(p) for p in selection.instructions if isinstance(p, ir.TextPart) and p.text.strip()]
    while items and items[0].kind == "message" and items[0].role in ("system", "developer"):
        head = items.pop(0)
        role_as_user(r, head, "before the conversation joins the top-level system prompt")
        system += [{"type": "text", "text": t} for t in r.texts(head, "a system prompt holds text only")]
    groups = turns(r, [(i, _blocks(r, i, side(i))) for i in items])
    messages = [{"role": role, "content": blocks} for role, blocks in groups]
    body: dict[str, Any] = {}
    if system:
        body["system"] = system
    body["messages"] = messages
    tools = [{"name": name, "description": t.description, "input_schema": schema(t)}
             for name, t in offered(r)]
    if tools:
        body["tools"] = tools
    return body, r.losses()


def _text(p: ir.TextPart) -> dict[str, Any]:
    return {"type": "text", "text": p.text}


def _server_blocks(r: Renderer, call: Input, result: Input) -> list[dict[str, Any]] | None:
    """A server_tool_use and its result block, as this API wrote them: the call's id, name and
    input, the result block's type and content as recorded (the reader keeps the content whole,
    as a structured part named after the block). None for a tool or block a request cannot hold."""
    tool = r.tools.get(call.tool_id or "")
    name = r.tool_name(call.tool_id)
    if tool is None or tool.server_identity != _PROVIDER or name not in _SERVER_TOOLS \
            or not isinstance(call.arguments, dict) or call.arguments_status not in (None, "complete") \
            or not _ID.fullmatch(call.call_id or ""):
        return None  # (a rewritten id would no longer be the provider's)
    if len(result.parts) != 1 or not isinstance(part := result.parts[0], ir.StructuredPart):
        return None
    kind = part.schema.removeprefix(f"{NAME}/")
    if kind not in _SERVER_RESULTS or part.schema == kind:
        return None
    return [{"type": "server_tool_use", "id": call.call_id, "name": name, "input": call.arguments},
            {"type": kind, "tool_use_id": call.call_id, "content": part.value}]


def _cited(r: Renderer, p: ir.TextPart, i: Input) -> dict[str, Any]:
    """A text block, with its citations when this API recorded them (a citation points into this
    API's own documents and results: no other API's is valid here); a null field says nothing."""
    block = _text(p)
    citations = p.unknown.get("citations")
    if citations and isinstance(citations, list) and r.recorded_by(i) == NAME \
            and all(isinstance(c, dict) for c in citations):
        block["citations"] = [{k: v for k, v in c.items() if v is not None} for c in citations]
    else:
        r.cited(p, i)
    return block


def _blocks(r: Renderer, i: Input, side: str) -> list[dict[str, Any]]:
    if i.kind == "tool_call":
        return [{"type": "tool_use", "id": r.fit_id(i.call_id or "", _ID, i.id),
                 "name": r.sent_name(i.tool_id, i.id), "input": call_arguments(r, i)}]
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
            if r.sent(p, i):
                out.append(_cited(r, p, i))
        elif (blocks := native_blocks(p)) is not None:
            out += blocks
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
    m = r.media(p, i)
    if m is None:
        return None
    if m.media_type in _IMAGES or (m.source in ("url", "file") and m.image):
        kind = "image"
    elif m.media_type == "application/pdf" or m.source in ("url", "file") or m.media_type.startswith("text/"):
        kind = "document"
    else:
        r.drop(p, i, f"the API takes no {m.media_type} media")
        return None
    text = _decoded(m) if m.source == "base64" and kind == "document" and m.media_type != "application/pdf" \
        else m.value if m.source == "text" else None
    if m.source == "base64" and text is None:
        if kind == "document" and m.media_type != "application/pdf":
            r.drop(p, i, f"the API takes no {m.media_type} media as base64, and it is no UTF-8 text")
            return None
        source: dict[str, Any] = {"type": "base64", "media_type": m.media_type, "data": m.value}
    elif text is not None:  # a text document (given whole, or as base64 of its UTF-8): a text source
        kind, source = "document", {"type": "text", "media_type": "text/plain", "data": text}
        if m.media_type != "text/plain":
            r.loss("media_adapted", m.media_type, f"a {m.media_type} text document is sent as text/plain", i.id)
    elif m.source == "url":
        source = {"type": "url", "url": m.value}
    else:
        source = {"type": "file", "file_id": m.value}
    return {"type": kind, "source": source, **({"title": m.name} if kind == "document" and m.name else {})}


def _decoded(m: Media) -> str | None:
    """A base64 text document's text (None when it is not a text type, or not UTF-8)."""
    if not m.media_type.startswith("text/"):
        return None
    try:
        return base64.b64decode(m.value, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return None
