"""Anthropic Messages content blocks: text, thinking, redacted_thinking, tool_use, tool_result,
image and document. content_json is the block list (or a message object holding it)."""

from __future__ import annotations

from typing import Any

from asif_convert import ir
from asif_convert._formats.continuity.dialects.common import REASONING, Call, Result, Split, embedded, external, ph

NAME = "anthropic-messages"
# a tuple, not a set: a "type" that is an object or an array must not match (nor fail to hash)
_TYPES = ("text", "thinking", "redacted_thinking", "tool_use", "tool_result", "image", "document")


def detect(content: Any) -> bool:
    blocks = content.get("content") if isinstance(content, dict) and "role" in content else content
    return (isinstance(blocks, list) and bool(blocks)
            and all(isinstance(b, dict) and b.get("type") in _TYPES for b in blocks))


def split(content: Any, role: str, message_id: str) -> Split:
    out = Split(dialect=NAME, parts=[])
    wrapped = isinstance(content, dict)
    blocks = content["content"] if wrapped else content
    template = [_block(b, out, message_id, out.parts) for b in blocks]
    out.template = {**content, "content": template} if wrapped else template
    if not out.parts and (out.calls or out.results):
        out.parts = None
    return out


def _block(b: dict[str, Any], out: Split, mid: str, parts: list[ir.Part], role: str = "msg", index: int = 0) -> Any:
    kind = b["type"]
    if kind == "text" and isinstance(b.get("text"), str):
        parts.append(ir.TextPart(text=b["text"]))
        return {**b, "text": ph(role, index, "parts", len(parts) - 1, "text")}
    if kind in ("thinking", "redacted_thinking"):
        parts.append(ir.StructuredPart(schema=REASONING, value=b))
        return ph(role, index, "parts", len(parts) - 1, "value")
    if kind in ("image", "document") and isinstance(b.get("source"), dict):
        res = _media(b["source"], f"{mid}/{kind}/{len(out.resources)}")
        if res is not None:
            out.resources.append(res)
            parts.append(ir.ResourcePart(resource_id=res.id))
            k = len(out.resources) - 1
            src = dict(b["source"])
            if res.availability == "embedded":
                src.update(media_type=ph("res", k, "media_type"), data=ph("res", k, "data"))
            else:
                src["url"] = ph("res", k, "locator")
            return {**b, "source": src}
    if role == "msg" and kind == "tool_use" and isinstance(b.get("id"), str) and isinstance(b.get("name"), str) \
            and b["id"] and b["name"] and "input" in b:  # (ASIF ids are never empty)
        out.calls.append(Call(call_id=b["id"], name=b["name"], arguments=b["input"], status="complete"))
        k = len(out.calls) - 1
        return {**b, "id": ph("call", k, "call_id"), "input": ph("call", k, "arguments")}
    if role == "msg" and kind == "tool_result" and isinstance(b.get("tool_use_id"), str) and b["tool_use_id"]:
        outcome = "error" if b.get("is_error") is True else "success"
        result = Result(call_id=b["tool_use_id"], outcome=outcome, parts=[])
        out.results.append(result)
        k = len(out.results) - 1
        body = b.get("content")
        if isinstance(body, str):
            result.parts.append(ir.TextPart(text=body))
            filled: Any = ph("result", k, "parts", 0, "text")
        elif isinstance(body, list) and all(isinstance(x, dict) and x.get("type") in _TYPES for x in body):
            filled = [_block(x, out, mid, result.parts, "result", k) for x in body]
        else:
            return b  # no content, or a shape we do not know: stays in the template verbatim
        return {**b, "tool_use_id": ph("result", k, "call_id"), "content": filled}
    # anything else stays verbatim in the template (and so in the continuity round trip)
    parts.append(ir.StructuredPart(schema=f"{NAME}/{kind}", value=b))
    return ph(role, index, "parts", len(parts) - 1, "value")


def _media(source: dict[str, Any], rid: str) -> ir.Resource | None:
    if source.get("type") == "base64" and isinstance(source.get("data"), str) \
            and isinstance(source.get("media_type"), str):
        return embedded(rid, source["media_type"], source["data"])
    if source.get("type") == "url" and isinstance(source.get("url"), str) and source["url"]:
        return external(rid, source["url"])
    return None
