"""OpenAI Chat Completions messages: ``{"role", "content", "tool_calls", "tool_call_id", ...}``
with string or part-list content and tool calls whose arguments are a JSON string."""

from __future__ import annotations

from typing import Any

from asif_convert import ir
from asif_convert._formats.continuity.dialects.common import (
    Call,
    Pieces,
    Result,
    Split,
    embedded,
    external,
    json_text,
    parse_arguments,
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
    parts: list[ir.Part] = []
    out = Split(dialect=NAME, parts=parts)
    body = content.get("content")
    call_id = content.get("tool_call_id")
    if isinstance(call_id, str) and call_id and (body is None or isinstance(body, str)):
        # a tool result: its content is the result's text
        result = Result(call_id=call_id, outcome="unknown", parts=[])
        out.results.append(result)
        if isinstance(body, str):
            result.parts.append(ir.TextPart(text=body))
    elif isinstance(body, str):
        parts.append(ir.TextPart(text=body))
    elif isinstance(body, list):
        for p in body:
            _part(p, out, message_id)
        if len(body) == 1 and parts and isinstance(parts[0], ir.TextPart) and "q" not in out.options:
            out.options["p"] = 1  # one text part, written as a list
    refusal = content.get("refusal")
    if isinstance(refusal, str) and not out.results:
        out.options["r"] = len(parts)  # what the model said instead of answering: a text part too
        parts.append(ir.TextPart(text=refusal))
    spaced = False
    for c in content.get("tool_calls") or ():
        arguments, status = parse_arguments(c["function"]["arguments"])
        spaced = spaced or (status == "complete" and json_text(arguments, True) == c["function"]["arguments"]
                            and json_text(arguments, False) != c["function"]["arguments"])
        out.calls.append(Call(call_id=c["id"], name=c["function"]["name"], arguments=arguments, status=status))
    legacy = content.get("function_call")
    if isinstance(legacy, dict) and isinstance(legacy.get("name"), str) and legacy["name"] \
            and isinstance(legacy.get("arguments"), str) and not out.results:
        # the legacy form of one tool call: it has no id, so the call is named after its message
        arguments, status = parse_arguments(legacy["arguments"])
        spaced = spaced or (status == "complete" and json_text(arguments, True) == legacy["arguments"]
                            and json_text(arguments, False) != legacy["arguments"])
        out.calls.append(Call(call_id=f"{message_id}/function_call", name=legacy["name"], arguments=arguments,
                              status=status))
        out.options["f"] = 1
    if spaced:
        out.options["a"] = "spaced"
    if not out.parts and (out.calls or out.results):
        out.parts = None
    return out


def _part(p: dict[str, Any], out: Split, mid: str) -> None:
    parts = out.parts
    assert parts is not None
    if p["type"] == "text" and isinstance(p.get("text"), str):
        parts.append(ir.TextPart(text=p["text"]))
        return
    if p["type"] == "refusal" and isinstance(p.get("refusal"), str):
        out.options.setdefault("q", []).append(len(parts))  # a refusal part: shown as text
        parts.append(ir.TextPart(text=p["refusal"]))
        return
    image = p.get("image_url")
    if p["type"] == "image_url" and isinstance(image, dict) and isinstance(image.get("url"), str) and image["url"]:
        res = _image(image["url"], f"{mid}/image/{len(out.resources)}")
        if res is not None:
            out.resources.append(res)
            parts.append(ir.ResourcePart(resource_id=res.id))
            return
    parts.append(ir.StructuredPart(schema=f"{NAME}/{p['type']}", value=p))


def _image(url: str, rid: str) -> ir.Resource | None:
    if url.startswith("data:"):
        head, sep, data = url[5:].partition(",")
        media_type, _, encoding = head.partition(";")
        if sep and encoding == "base64" and media_type:
            return embedded(rid, media_type, data)
        return None
    return external(rid, url)


# -- canonical rendering ------------------------------------------------------------------------


def render(pieces: Pieces, options: dict[str, Any]) -> Any:
    """The message the Chat Completions API would hold for these pieces, in ``options``' style."""
    if pieces.results and not pieces.parts and not pieces.calls:
        result = pieces.results[0]
        texts = [p["text"] for p in result.get("parts", []) if p["kind"] == "text"]
        out: dict[str, Any] = {"role": "tool", "tool_call_id": result["call_id"]}
        if texts:
            out["content"] = "".join(texts)
        return out
    out = {"role": pieces.role}
    parts = list(pieces.parts)
    at = options.get("r")
    refusal = parts.pop(at) if isinstance(at, int) and at < len(parts) and parts[at]["kind"] == "text" else None
    refusals = set(options.get("q", ()))
    if len(parts) == 1 and parts[0]["kind"] == "text" and not options.get("p") and not refusals:
        out["content"] = parts[0]["text"]
    elif parts:
        out["content"] = [b for k, p in enumerate(parts) for b in
                          ([{"type": "refusal", "refusal": p["text"]}] if k in refusals and p["kind"] == "text"
                           else _render_part(p, pieces))]
    else:
        out["content"] = None
    if refusal is not None:
        out["refusal"] = refusal["text"]
    spaced = options.get("a") == "spaced"
    calls = list(pieces.calls)
    legacy = calls.pop() if options.get("f") and calls else None
    if calls:
        out["tool_calls"] = [{"id": c["call_id"], "type": "function",
                              "function": {"name": c["tool_id"], "arguments": json_text(c.get("arguments"), spaced)}}
                             for c in calls]
    if legacy is not None:
        out["function_call"] = {"name": legacy["tool_id"], "arguments": json_text(legacy.get("arguments"), spaced)}
    return out


def _render_part(part: dict[str, Any], pieces: Pieces) -> list[Any]:
    kind = part["kind"]
    if kind == "text":
        return [{"type": "text", "text": part["text"]}]
    if kind == "structured":
        return [part["value"]]
    if kind == "resource":
        res = pieces.resources.get(part["resource_id"])
        if res is None:
            return []
        if res.get("availability") == "embedded" and "data" in res:
            url = f"data:{res['media_type']};base64,{res['data']}"
        else:
            url = res.get("locator", "")
        return [{"type": "image_url", "image_url": {"url": url}}]
    return []
