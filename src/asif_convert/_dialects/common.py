"""What every content dialect shares: the pieces a split produces and the helpers that build them."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET, Meta, UnsetType

from asif_convert import ir
from asif_convert._limits import NestedTooDeep, json_in_text

PLACEHOLDER = "asif.piece/1"
REASONING = "asif-convert.private-reasoning/1"  # structured-part schema of private reasoning blocks
# Structured parts a client keeps beside what the model saw (Claude Code's toolUseResult, the
# structured copy of a tool's result): part of the session's record, never model input, so a
# request leaves them out.
CLIENT_RECORDS = frozenset({"claude-code/1:toolUseResult"})
OPAQUE_MEDIA_TYPE = "application/json"  # the resource that holds an opaque block: the block's JSON

# Server identities (Call.server, Result.server) name who ran a tool on the caller's behalf: a
# provider's own servers ("anthropic") or an MCP server the provider called ("mcp:<server name>").
# The reader gives each one a participant of kind service and the tool its server_identity.


# Indices as the continuity schema (draft-07) counts them: 3.0 is one too.
_Index = Annotated[int, Meta(ge=0)] | Annotated[float, Meta(ge=0, multiple_of=1)]
_Name = Annotated[str, Meta(min_length=1)]


# Records of this module are msgspec Structs, not dataclasses: a dataclass takes about half a
# millisecond to create at import (its methods are generated and compiled), a Struct a hundredth.


class Style(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    """A split's style options (``Split.options``), as a format that keeps them reads them back:
    what ``render`` needs to give the content back as it was. Kept values are data like any
    other (a document may have been edited): a value of another shape is not a style."""

    w: Literal[1] | UnsetType = UNSET  # anthropic: a message object around the blocks
    o: Annotated[str, Meta(pattern="^[pcr]+$")] | UnsetType = UNSET  # anthropic: block order
    l: list[_Index] | UnsetType = UNSET  # noqa: E741  # anthropic: results whose content is a block list
    e: list[_Index] | UnsetType = UNSET  # anthropic: results that say is_error: false
    s: list[_Index] | UnsetType = UNSET  # anthropic: calls that are server_tool_use blocks
    m: list[_Index] | UnsetType = UNSET  # anthropic: calls that are mcp_tool_use blocks
    n: list[_Index] | UnsetType = UNSET  # anthropic: results that are mcp_tool_result blocks
    # anthropic: each result block's key order (type, tool_use_id, content, is_error), "" for the rendering's
    R: list[Annotated[str, Meta(pattern="^[tuce]{0,4}$")]] | UnsetType = UNSET
    p: Literal[1] | UnsetType = UNSET  # openai: one text part written as a list
    a: Literal["spaced"] | UnsetType = UNSET  # openai: argument strings with spaces
    r: _Index | UnsetType = UNSET  # openai: the part that is the message's refusal
    q: list[_Index] | UnsetType = UNSET  # openai: refusal parts of the content list
    f: Literal[1] | UnsetType = UNSET  # openai: the last call is a legacy function_call
    c: list[_Index] | UnsetType = UNSET  # openai: calls that are custom tool calls
    k: Literal[1] | UnsetType = UNSET  # openai: the result is a legacy function message
    v: _Index | UnsetType = UNSET  # openai: the part that is the message's audio
    x: _Index | UnsetType = UNSET  # openai: the part that is the message's audio transcript
    u: Literal[1] | UnsetType = UNSET  # openai-responses: one item, not a list
    i: Annotated[str, Meta(pattern="^[mpcrst]+$")] | UnsetType = UNSET  # openai-responses: item layout
    j: list[_Index] | UnsetType = UNSET  # openai-responses: parts of each message item
    z: list[_Index] | UnsetType = UNSET  # openai-responses: message items whose content is a string
    b: list[_Index] | UnsetType = UNSET  # openai-responses: calls whose id is their item's id, not a call_id
    t: list[_Name] | UnsetType = UNSET  # openai-responses, google-genai: the item or part type of each call
    y: list[_Name] | UnsetType = UNSET  # openai-responses, google-genai: the item or part type of each result
    h: Literal[1] | UnsetType = UNSET  # google-genai: the REST API's camelCase
    d: list[_Index] | UnsetType = UNSET  # google-genai: calls whose id the part does not have
    g: list[_Index] | UnsetType = UNSET  # google-genai: code results whose id the part does not have


class Call(msgspec.Struct):
    call_id: str
    name: str
    arguments: Any
    status: ir.ArgumentsStatus  # complete | partial
    server: str | None = None  # who runs the tool when not the caller's runtime (see ``SERVERS``)


class Result(msgspec.Struct):
    call_id: str
    outcome: ir.ToolOutcome  # success | error | unknown
    parts: list[ir.Part]
    server: str | None = None  # who produced it when not the caller's runtime (see ``SERVERS``)


class Split(msgspec.Struct):
    """One message's pieces. ``parts`` is None when the message has no message event of its own
    (only tool calls or results). ``options`` are the style choices the provider varies, which
    the canonical rendering takes (short keys: they are stored with every message that has them)."""

    dialect: str
    parts: list[ir.Part] | None = None
    calls: list[Call] = msgspec.field(default_factory=list)
    results: list[Result] = msgspec.field(default_factory=list)
    resources: list[ir.Resource] = msgspec.field(default_factory=list)
    options: dict[str, Any] = msgspec.field(default_factory=dict)
    opaque: list[str] = msgspec.field(default_factory=list)  # block types kept as opaque parts (see ``opaque``)
    # Whether the dialect vouches that its rendering of these pieces in these options is the
    # content itself, key for key (most messages): then the reader need not render it to find
    # that nothing differs. Only for shapes plain enough to tell from their keys; a property
    # (tests/test_dialects.py) holds every exact split to an empty difference.
    exact: bool = False
    # The tool a message answers by its name alone (OpenAI Chat's legacy function messages, which
    # name no call id): the reader ties it to the call it answers (``answering``), if any. Only
    # a call a message may answer so (``by_name``, the id of a legacy function_call) can be it.
    answers: str | None = None
    by_name: str | None = None
    # (call id, tool) of a model turn's calls that the responses after it answer by name and
    # order, having no id (Gen AI): the reader hands those unanswered to the next messages' split
    # (``awaiting``) until the branch's next assistant message.
    turn: list[tuple[str, str]] = msgspec.field(default_factory=list)


def answering(split: Split, call_id: str) -> None:
    """Make a message that answers a call by its tool's name (``split.answers``) that call's
    result: its parts become the result's, its outcome unknown (the message says none), and
    the style's ``k`` tells the renderer so."""
    split.results.append(Result(call_id=call_id, outcome="unknown", parts=split.parts or []))
    split.parts = None
    split.options["k"] = 1
    split.exact = False


class Pieces(msgspec.Struct):
    """What a dialect renders content_json from, as ASIF JSON: the message's parts, its tool
    call and tool result bodies, and the resources its parts name (by id)."""

    role: str
    parts: list[dict[str, Any]]
    calls: list[dict[str, Any]]
    results: list[dict[str, Any]]
    resources: dict[str, dict[str, Any]]
    # the tool names of the calls the results answer, by call id, for a dialect whose result
    # names its tool (an OpenAI Chat legacy function message, a Gen AI function response)
    names: dict[str, str] = msgspec.field(default_factory=dict)


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
    """An embedded resource for strict base64 ``data``, or None when it does not decode or names
    no media type (ASIF requires one: the block stays as it is written)."""
    if not media_type:
        return None
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None
    return ir.Resource(id=rid, media_type=media_type, availability="embedded", purpose="input", data=data,
                       bytes=len(raw), sha256=hashlib.sha256(raw).hexdigest())


def embedded_text(rid: str, media_type: str, text: str) -> ir.Resource:
    """An embedded resource for a text the message holds whole (a document given as text)."""
    raw = text.encode()
    return ir.Resource(id=rid, media_type=media_type, availability="embedded", purpose="input", text=text,
                       bytes=len(raw), sha256=hashlib.sha256(raw).hexdigest())


def external(rid: str, url: str) -> ir.Resource:
    return ir.Resource(id=rid, media_type="application/octet-stream", availability="external", purpose="input",
                       locator=url, explanation="Referenced by URL in the message; never fetched.")


def provider_file(rid: str, file_id: str) -> ir.Resource:
    """A file the provider stores (its Files API), named by its id: the locator is the id, which
    holds no ``://`` (how a renderer tells it from a URL)."""
    return ir.Resource(id=rid, media_type="application/octet-stream", availability="external", purpose="input",
                       locator=file_id,
                       explanation="A file stored by the model provider, referenced by its file id; never fetched.")


def opaque(out: Split, block: Any, block_type: str, rid: str) -> ir.OpaquePart:
    """An opaque part for a block the dialect cannot map, in its place: the block's JSON is an
    embedded resource (ASIF opaque parts name a resource), and ``out.opaque`` lists its type so
    that the reader reports it. ``block_type`` is the block's own type (``"foo"``, not namespaced)."""
    text = msgspec.json.encode(block).decode()
    raw = text.encode()
    out.resources.append(ir.Resource(id=rid, media_type=OPAQUE_MEDIA_TYPE, availability="embedded",
                                     purpose="input", text=text, bytes=len(raw),
                                     sha256=hashlib.sha256(raw).hexdigest()))
    out.opaque.append(block_type)
    return ir.OpaquePart(resource_id=rid, semantic_type=f"{out.dialect}/{block_type}",
                         reason=f"{out.dialect} content block of type {block_type!r}, which the converter does not "
                                "map; the resource holds it verbatim")


def opaque_value(part: dict[str, Any], resources: dict[str, dict[str, Any]]) -> list[Any]:
    """The block an opaque part holds (ASIF JSON part), as a one-item list; empty when its
    resource is gone or no longer holds JSON (an edit removed or changed it)."""
    res = resources.get(part.get("resource_id", ""))
    if res is None or not isinstance(res.get("text"), str):
        return []
    try:
        return [json_in_text(res["text"])]
    except ValueError:
        return []


def block_type(block: Any) -> str:
    """A block's type for a semantic type and a loss: its ``type`` when that is a non-empty
    string, else ``?`` (documents are untrusted: a type may be anything)."""
    kind = block.get("type") if isinstance(block, dict) else None
    return kind if isinstance(kind, str) and kind else "?"


def parse_arguments(text: str) -> tuple[Any, ir.ArgumentsStatus]:
    """(arguments, status): a JSON string that does not parse is partial, and its arguments are
    unknown (null), never guessed. JSON nested deeper than the converter carries raises
    ``NestedTooDeep``: no ASIF value can hold it, so its message stays a message."""
    try:
        return json_in_text(text), "complete"
    except NestedTooDeep:
        raise
    except ValueError:
        return None, "partial"


def json_text(value: Any, spaced: bool) -> str:
    """A JSON text in one of the two styles providers write: compact (``{"a":1}``, what the
    APIs return) or spaced (``{"a": 1}``, Python's default)."""
    return (_SPACED if spaced else _COMPACT)(value)


# json.dumps's own encoders for these styles, made once: given options, json.dumps builds an
# encoder per call, a third of the call's time (tool arguments of every OpenAI message)
_SPACED = json.JSONEncoder(ensure_ascii=False).encode
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


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
