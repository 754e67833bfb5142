"""What every content dialect shares: the pieces a split produces and the helpers that build them."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

import msgspec

from asif_convert import ir

PLACEHOLDER = "asif.piece/1"
REASONING = "asif-convert.private-reasoning/1"  # structured-part schema of private reasoning blocks


@dataclass
class Call:
    call_id: str
    name: str
    arguments: Any
    status: ir.ArgumentsStatus  # complete | partial
    provider_executed: bool = False  # a server-side tool: the provider ran it, not the client


@dataclass
class Result:
    call_id: str
    outcome: ir.ToolOutcome  # success | error | unknown
    parts: list[ir.Part]
    provider_executed: bool = False


@dataclass
class Split:
    """One message's pieces. ``parts`` is None when the message has no message event of its own
    (only tool calls or results). ``options`` are the style choices the provider varies, which
    the canonical rendering takes (short keys: they are stored with every message that has them)."""

    dialect: str
    parts: list[ir.Part] | None = None
    calls: list[Call] = field(default_factory=list)
    results: list[Result] = field(default_factory=list)
    resources: list[ir.Resource] = field(default_factory=list)
    options: dict[str, Any] = field(default_factory=dict)
    opaque: list[str] = field(default_factory=list)


@dataclass
class Pieces:
    """What a dialect renders content_json from, as ASIF JSON: the message's parts, its tool
    call and tool result bodies, and the resources its parts name (by id)."""

    role: str
    parts: list[dict[str, Any]]
    calls: list[dict[str, Any]]
    results: list[dict[str, Any]]
    resources: dict[str, dict[str, Any]]


def fill(template: Any, pieces: dict[str, list[Any]]) -> Any:
    """The template with each placeholder replaced by its value in ``pieces`` (ASIF JSON).

    Only for documents written by the first release, which kept a template of content_json
    in the message's state; today's keep a difference from the canonical rendering."""
    if isinstance(template, dict):
        if PLACEHOLDER in template:
            role, index, *path = template[PLACEHOLDER]
            value = pieces[role][index]
            for step in path:
                value = value[step]
            match template.get("encode"):
                case "json":
                    return json.dumps(value, ensure_ascii=False)
                case "data-url":
                    return f"data:{value['media_type']};base64,{value['data']}"
            return value
        return {k: fill(v, pieces) for k, v in template.items()}
    if isinstance(template, list):
        return [fill(v, pieces) for v in template]
    return template


def embedded(rid: str, media_type: str, data: str) -> ir.Resource | None:
    """An embedded resource for strict base64 ``data``, or None when it does not decode."""
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None
    return ir.Resource(id=rid, media_type=media_type, availability="embedded", purpose="input", data=data,
                       bytes=len(raw), sha256=hashlib.sha256(raw).hexdigest())


def external(rid: str, url: str) -> ir.Resource:
    return ir.Resource(id=rid, media_type="application/octet-stream", availability="external", purpose="input",
                       locator=url, explanation="Referenced by URL in the message; never fetched.")


def parse_arguments(text: str) -> tuple[Any, ir.ArgumentsStatus]:
    """(arguments, status): a JSON string that does not parse is partial, and its arguments are
    unknown (null), never guessed."""
    try:
        return msgspec.json.decode(text), "complete"
    except msgspec.DecodeError:
        return None, "partial"


def json_text(value: Any, spaced: bool) -> str:
    """A JSON text in one of the two styles providers write: compact (``{"a":1}``, what the
    APIs return) or spaced (``{"a": 1}``, Python's default)."""
    if spaced:
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def members(anchor: str, events: dict[str, Any]) -> dict[str, Any]:
    """The events a dialect split one message into, found by the ids the reader gives them:
    the message itself under the record's id, then ``<id>/call/<k>`` and ``<id>/result/<k>``
    (the first of them under the record's id when there is no message). ``events`` maps ids to
    IR events. A message whose events were renamed on a collision stores its members instead."""
    first = events[anchor].body
    msg = anchor if isinstance(first, ir.Message) else None
    out: dict[str, Any] = {"msg": msg, "call": [], "result": []}
    for key, body_type in (("call", ir.ToolCall), ("result", ir.ToolResult)):
        k = 0
        while True:
            eid = anchor if (k == 0 and msg is None and not out["call"] and isinstance(first, body_type)) \
                else f"{anchor}/{key}/{k}"
            ev = events.get(eid)
            if ev is None or not isinstance(ev.body, body_type):
                break
            out[key].append(eid)
            k += 1
    return out


EXECUTED_BY = "asif-convert.executed-by"  # property of a tool call or result the provider ran itself


def opaque(out: Split, dialect: str, kind: str, block: Any, rid: str) -> ir.OpaquePart:
    """An opaque part in place of a block the dialect has no ASIF home for: the block is kept
    whole, as an embedded JSON resource, and its type is listed in ``out.opaque``."""
    text = json.dumps(block, ensure_ascii=False)
    raw = text.encode()
    out.resources.append(ir.Resource(id=rid, media_type="application/json", availability="embedded",
                                     purpose="input", text=text, bytes=len(raw),
                                     sha256=hashlib.sha256(raw).hexdigest()))
    out.opaque.append(kind)
    return ir.OpaquePart(resource_id=rid, semantic_type=f"{dialect}/{kind}",
                         reason=f"A {dialect} block of type {kind!r} that ASIF has no semantics for.")


def opaque_block(part: dict[str, Any], pieces: Pieces) -> list[Any]:
    """The block an opaque part keeps (see :func:`opaque`), or nothing when its resource is gone
    or no longer holds JSON (an edit): the difference, or a loss, says the rest."""
    res = pieces.resources.get(part.get("resource_id", ""))
    if res is None or not isinstance(res.get("text"), str):
        return []
    try:
        return [msgspec.json.decode(res["text"])]
    except msgspec.DecodeError:
        return []
