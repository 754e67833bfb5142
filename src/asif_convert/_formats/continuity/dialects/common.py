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
    status: str  # complete | partial


@dataclass
class Result:
    call_id: str
    outcome: str  # success | error | unknown
    parts: list[ir.Part]


@dataclass
class Split:
    """One message's pieces. ``parts`` is None when the message has no message event of its own
    (only tool calls or results)."""

    dialect: str
    parts: list[ir.Part] | None = None
    calls: list[Call] = field(default_factory=list)
    results: list[Result] = field(default_factory=list)
    resources: list[ir.Resource] = field(default_factory=list)
    template: Any = None


def ph(role: str, index: int, *path: str | int, encode: str | None = None) -> dict[str, Any]:
    """A placeholder for the value at ``path`` of piece ``index`` of kind ``role``
    (``msg``: the message body, ``call``/``result``: an event body, ``res``: a resource)."""
    out: dict[str, Any] = {PLACEHOLDER: [role, index, *path]}
    if encode:
        out["encode"] = encode
    return out


def fill(template: Any, pieces: dict[str, list[Any]]) -> Any:
    """The template with each placeholder replaced by its value in ``pieces`` (ASIF JSON)."""
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


def parse_arguments(text: str) -> tuple[Any, str, bool]:
    """(arguments, status, re-encodes exactly): a JSON string that does not parse is partial,
    and its arguments are unknown (null), never guessed."""
    try:
        value = msgspec.json.decode(text)
    except msgspec.DecodeError:
        return None, "partial", False
    return value, "complete", json.dumps(value, ensure_ascii=False) == text
