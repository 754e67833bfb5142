"""Anthropic Messages content blocks: text, thinking, redacted_thinking, tool_use, tool_result,
image and document. content_json is the block list (or a message object holding it)."""

from __future__ import annotations

from typing import Any

from asif_convert import ir
from asif_convert._formats.continuity.dialects.common import (
    REASONING,
    Call,
    Pieces,
    Result,
    Split,
    embedded,
    external,
)

NAME = "anthropic-messages"
RESULT_OBJECT = f"{NAME}/tool_result-object"  # structured-part schema of a tool result's object content
# a tuple, not a set: a "type" that is an object or an array must not match (nor fail to hash)
_TYPES = ("text", "thinking", "redacted_thinking", "tool_use", "tool_result", "image", "document")


def detect(content: Any) -> bool:
    blocks = content.get("content") if isinstance(content, dict) and "role" in content else content
    return (isinstance(blocks, list) and bool(blocks)
            and all(isinstance(b, dict) and b.get("type") in _TYPES for b in blocks))


def split(content: Any, role: str, message_id: str) -> Split:
    parts: list[ir.Part] = []
    out = Split(dialect=NAME, parts=parts)
    wrapped = isinstance(content, dict)
    blocks = content["content"] if wrapped else content
    order = "".join(_block(b, out, message_id, parts) for b in blocks)
    if wrapped:
        out.options["w"] = 1
    if order != "".join(sorted(order, key="pcr".index)):  # not all parts, then calls, then results
        out.options["o"] = order
    if not out.parts and (out.calls or out.results):
        out.parts = None
    return out


def _block(b: dict[str, Any], out: Split, mid: str, parts: list[ir.Part], top: bool = True) -> str:
    """Map one block into the pieces; returns what it became: a part (p), a call (c), a result (r)."""
    kind = b["type"]
    if kind == "text" and isinstance(b.get("text"), str):
        # citations stay attached to the text they support, as a property of its part
        cited = {"citations": b["citations"]} if "citations" in b else {}
        parts.append(ir.TextPart(text=b["text"], unknown=cited))
        return "p"
    if kind in ("thinking", "redacted_thinking"):
        parts.append(ir.StructuredPart(schema=REASONING, value=b))
        return "p"
    if kind in ("image", "document") and isinstance(b.get("source"), dict):
        res = _media(b["source"], f"{mid}/{kind}/{len(out.resources)}")
        if res is not None:
            out.resources.append(res)
            parts.append(ir.ResourcePart(resource_id=res.id))
            return "p"
    if top and kind == "tool_use" and isinstance(b.get("id"), str) and isinstance(b.get("name"), str) \
            and b["id"] and b["name"] and "input" in b:  # (ASIF ids are never empty)
        out.calls.append(Call(call_id=b["id"], name=b["name"], arguments=b["input"], status="complete"))
        return "c"
    if top and kind == "tool_result" and isinstance(b.get("tool_use_id"), str) and b["tool_use_id"]:
        outcome: ir.ToolOutcome = "error" if b.get("is_error") is True else "success"
        result = Result(call_id=b["tool_use_id"], outcome=outcome, parts=[])
        k = len(out.results)
        out.results.append(result)
        if b.get("is_error") is False:
            out.options.setdefault("e", []).append(k)  # says is_error: false, where absent means the same
        body = b.get("content")
        if isinstance(body, str):
            result.parts.append(ir.TextPart(text=body))
        elif isinstance(body, list) and all(isinstance(x, dict) and x.get("type") in _TYPES for x in body):
            for x in body:
                _block(x, out, mid, result.parts, top=False)
            out.options.setdefault("l", []).append(k)  # content as a block list, not a string
        elif isinstance(body, dict):  # an object: what the tool returned, as structured data
            result.parts.append(ir.StructuredPart(schema=RESULT_OBJECT, value=body))
        return "r"
    # anything else is kept as it is, as a part of its own
    parts.append(ir.StructuredPart(schema=f"{NAME}/{kind}", value=b))
    return "p"


def _media(source: dict[str, Any], rid: str) -> ir.Resource | None:
    if source.get("type") == "base64" and isinstance(source.get("data"), str) \
            and isinstance(source.get("media_type"), str):
        return embedded(rid, source["media_type"], source["data"])
    if source.get("type") == "url" and isinstance(source.get("url"), str) and source["url"]:
        return external(rid, source["url"])
    return None


# -- canonical rendering ------------------------------------------------------------------------


def render(pieces: Pieces, options: dict[str, Any]) -> Any:
    """The content_json the Messages API would hold for these pieces, in ``options``' style."""
    parts = [b for p in pieces.parts for b in _part(p, pieces)]
    calls = [{"type": "tool_use", "id": c["call_id"], "name": c["tool_id"], "input": c.get("arguments")}
             for c in pieces.calls]
    as_list = set(options.get("l", ()))
    explicit = set(options.get("e", ()))
    results = [_result(r, pieces, k in as_list, k in explicit) for k, r in enumerate(pieces.results)]
    order = options.get("o")
    if order:
        queues = {"p": iter(parts), "c": iter(calls), "r": iter(results)}
        blocks = [b for kind in order if (b := next(queues[kind], None)) is not None]
        blocks += [*queues["p"], *queues["c"], *queues["r"]]  # pieces an edit added
    else:
        blocks = parts + calls + results
    return {"role": pieces.role, "content": blocks} if options.get("w") else blocks


def _part(part: dict[str, Any], pieces: Pieces) -> list[Any]:
    kind = part["kind"]
    if kind == "text":
        block = {"type": "text", "text": part["text"]}
        if "citations" in part:
            block["citations"] = part["citations"]
        return [block]
    if kind == "structured":
        return [part["value"]]
    if kind == "resource":
        res = pieces.resources.get(part["resource_id"])
        if res is None:
            return []
        media = "document" if res["media_type"] == "application/pdf" or "/document/" in res["id"] else "image"
        if res.get("availability") == "embedded" and "data" in res:
            source = {"type": "base64", "media_type": res["media_type"], "data": res["data"]}
        else:
            source = {"type": "url", "url": res.get("locator", "")}
        return [{"type": media, "source": source}]
    return []  # a part this dialect has no block for: the residual or a loss says so


def _result(result: dict[str, Any], pieces: Pieces, as_list: bool, explicit: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "tool_result", "tool_use_id": result["call_id"]}
    parts = result.get("parts", [])
    if len(parts) == 1 and parts[0]["kind"] == "text" and not as_list:
        out["content"] = parts[0]["text"]
    elif len(parts) == 1 and parts[0]["kind"] == "structured" and parts[0]["schema"] == RESULT_OBJECT \
            and isinstance(parts[0]["value"], dict) and not as_list:
        out["content"] = parts[0]["value"]
    elif parts or as_list:
        out["content"] = [b for p in parts for b in _part(p, pieces)]
    if result.get("outcome") == "error":
        out["is_error"] = True
    elif explicit:
        out["is_error"] = False
    return out
