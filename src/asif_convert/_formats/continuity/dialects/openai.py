"""OpenAI Chat Completions messages: ``{"role", "content", "tool_calls", "tool_call_id", ...}``
with string or part-list content and tool calls whose arguments are a JSON string."""

from __future__ import annotations

from typing import Any

from asif_convert import ir
from asif_convert._formats.continuity.dialects.common import (
    Call,
    Result,
    Split,
    embedded,
    external,
    parse_arguments,
    ph,
)

NAME = "openai-chat"
_KEYS = {"role", "content", "tool_calls", "tool_call_id", "name", "refusal", "function_call", "audio"}
_PART_TYPES = ("text", "image_url", "input_audio", "file", "refusal")  # a tuple: an unhashable "type" must not fail


def detect(content: Any) -> bool:
    if not (isinstance(content, dict) and isinstance(content.get("role"), str) and content.keys() <= _KEYS):
        return False
    body = content.get("content")
    parts_ok = body is None or isinstance(body, str) or (
        isinstance(body, list) and all(isinstance(p, dict) and p.get("type") in _PART_TYPES for p in body))
    calls = content.get("tool_calls")
    calls_ok = calls is None or (isinstance(calls, list) and all(_is_call(c) for c in calls))
    return parts_ok and calls_ok


def _is_call(c: Any) -> bool:
    fn = c.get("function") if isinstance(c, dict) else None
    return (fn is not None and isinstance(c.get("id"), str) and c["id"] != "" and isinstance(fn, dict)
            and isinstance(fn.get("name"), str) and fn["name"] != ""
            and isinstance(fn.get("arguments"), str))


def split(content: dict[str, Any], role: str, message_id: str) -> Split:
    out = Split(dialect=NAME, parts=[])
    template = dict(content)
    body = content.get("content")
    call_id = content.get("tool_call_id")
    if isinstance(call_id, str) and call_id and (body is None or isinstance(body, str)):
        # a tool result: its content is the result's text
        result = Result(call_id=call_id, outcome="unknown", parts=[])
        out.results.append(result)
        template["tool_call_id"] = ph("result", 0, "call_id")
        if isinstance(body, str):
            result.parts.append(ir.TextPart(text=body))
            template["content"] = ph("result", 0, "parts", 0, "text")
    elif isinstance(body, str):
        out.parts.append(ir.TextPart(text=body))
        template["content"] = ph("msg", 0, "parts", 0, "text")
    elif isinstance(body, list):
        template["content"] = [_part(p, out, message_id) for p in body]
    if content.get("tool_calls"):
        template["tool_calls"] = [_call(c, out) for c in content["tool_calls"]]
    if not out.parts and (out.calls or out.results):
        out.parts = None
    out.template = template
    return out


def _part(p: dict[str, Any], out: Split, mid: str) -> Any:
    parts = out.parts
    if p["type"] == "text" and isinstance(p.get("text"), str):
        parts.append(ir.TextPart(text=p["text"]))
        return {**p, "text": ph("msg", 0, "parts", len(parts) - 1, "text")}
    image = p.get("image_url")
    if p["type"] == "image_url" and isinstance(image, dict) and isinstance(image.get("url"), str) and image["url"]:
        res, encoded = _image(image["url"], f"{mid}/image/{len(out.resources)}")
        if res is not None:
            out.resources.append(res)
            parts.append(ir.ResourcePart(resource_id=res.id))
            k = len(out.resources) - 1
            url = ph("res", k, encode="data-url") if encoded else ph("res", k, "locator")
            return {**p, "image_url": {**image, "url": url}}
    parts.append(ir.StructuredPart(schema=f"{NAME}/{p['type']}", value=p))
    return ph("msg", 0, "parts", len(parts) - 1, "value")


def _image(url: str, rid: str) -> tuple[ir.Resource | None, bool]:
    if url.startswith("data:"):
        head, sep, data = url[5:].partition(",")
        media_type, _, encoding = head.partition(";")
        if sep and encoding == "base64" and media_type:
            res = embedded(rid, media_type, data)
            return res, res is not None
        return None, False
    return external(rid, url), False


def _call(c: dict[str, Any], out: Split) -> dict[str, Any]:
    fn = c["function"]
    arguments, status, exact = parse_arguments(fn["arguments"])
    out.calls.append(Call(call_id=c["id"], name=fn["name"], arguments=arguments, status=status))
    k = len(out.calls) - 1
    # Arguments that do not re-encode to the same string stay verbatim: the text is the record.
    args = ph("call", k, "arguments", encode="json") if exact else fn["arguments"]
    return {**c, "id": ph("call", k, "call_id"), "function": {**fn, "arguments": args}}
