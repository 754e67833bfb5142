"""The Google Gen AI request: ``client.models.generate_content(contents=..., config={system_instruction,
tools})``.

Contents alternate between ``user`` and ``model`` (consecutive inputs of one side merged); a call
is a ``function_call`` part of a model turn, its result a ``function_response`` part of the user
turn after it (by id and name, the outcome as the response's ``output`` or ``error`` key). System
and developer messages before the conversation join ``system_instruction``; later ones are user
text. Thought parts and thought signatures travel only when they came from this API, and so does
code the model ran (an ``executable_code`` part and its ``code_execution_result``)."""

from __future__ import annotations

import base64
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from asif_convert import ir
from asif_convert._request.common import (
    GOOGLE_RESPONSE,
    Rendered,
    Renderer,
    arrange,
    call_arguments,
    native_blocks,
    offered,
    origin,
    reasoning_of,
    role_as_user,
    schema,
    side,
    turns,
)
from asif_convert._request.selection import Input, Selection

NAME = "google-genai"
_PROVIDER = "google"  # the server identity the continuity reader gives the tools this API runs
_URIS = ("gs://", "https://", "http://")  # the file URIs the API reads (Cloud Storage, the web, its Files API)
_CODES = {"success": "OUTCOME_OK", "error": "OUTCOME_FAILED"}  # a code execution's outcome, as the API says it
UNKNOWN_MEDIA = "application/octet-stream"  # what a resource known only by its URL says of its type
# the media type a URL's file name says (a fixed table: the system's would differ between machines)
_BY_SUFFIX = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
              ".webp": "image/webp", ".heic": "image/heic", ".heif": "image/heif", ".pdf": "application/pdf"}
# media a function response carries as its own parts (images and documents; the rest is its JSON)
_RESPONSE_MEDIA = ("image/", "application/pdf")


def render(selection: Selection) -> tuple[dict[str, Any], list[ir.Loss]]:
    r = Renderer(selection, NAME, native=_code_parts)
    items = arrange(r)
    system = [{"text": p.text} for p in selection.instructions if isinstance(p, ir.TextPart) and p.text]
    while items and items[0].kind == "message" and items[0].role in ("system", "developer"):
        head = items.pop(0)
        role_as_user(r, head, "before the conversation joins system_instruction")
        system += [{"text": t} for t in r.texts(head, "a system instruction holds text only")]
    names = {i.call_id: r.sent_name(i.tool_id, i.id) for i in items if i.kind == "tool_call"}
    groups = turns(r, _opening(r, [(i, _parts(r, i, side(i), names)) for i in items]))
    contents = [{"role": "model" if role == "assistant" else "user", "parts": _attach_signatures(parts)}
                for role, parts in groups]
    body: dict[str, Any] = {"contents": contents}
    config: dict[str, Any] = {}
    if system:
        config["system_instruction"] = {"parts": system}
    declarations = [{"name": name, "description": t.description,
                     "parameters_json_schema": schema(t)}
                    for name, t in offered(r)]
    if declarations:
        config["tools"] = [{"function_declarations": declarations}]
    if config:
        body["config"] = config
    return body, r.losses()


def _opening(r: Renderer, rendered: list[Rendered]) -> list[Rendered]:
    """The contents from the first user turn on: the API refuses a history that opens with a
    model turn ("multiturn requests alternate between user and model", and a function call must
    follow a user turn). What the model said or called before any user turn, and the responses to
    those calls, are left out, each with a loss; nothing is invented to stand before them."""
    calls: set[str | None] = set()
    start = len(rendered)
    for k, (i, blocks) in enumerate(rendered):
        if blocks and side(i) == "user" and not (i.kind == "tool_result" and i.call_id in calls):
            start = k
            break
        if i.kind == "tool_call":
            calls.add(i.call_id)
    for i, blocks in rendered[:start]:
        if blocks:
            r.loss("part_dropped", "opening model turn", "what the model said or called before the first user turn "
                   "(and the responses to those calls) is not sent: the API refuses a history that opens with a "
                   "model turn", i.id)
    return rendered[start:]


def _parts(r: Renderer, i: Input, side: str, names: dict[str | None, str]) -> list[dict[str, Any]]:
    if i.kind == "tool_call":
        return [{"function_call": {"id": i.call_id, "name": names[i.call_id], "args": call_arguments(r, i)}}]
    if i.kind == "tool_result":
        if i.outcome in ("cancelled", "unknown"):
            r.loss("outcome_adapted", i.outcome, f"a tool result of outcome {i.outcome!r} is sent as an output "
                   "(the API knows only an output and an error)", i.id)
        if len(i.parts) == 1 and isinstance(i.parts[0], ir.StructuredPart) and i.parts[0].schema == GOOGLE_RESPONSE \
                and isinstance(i.parts[0].value, dict) and (i.outcome != "error" or "error" in i.parts[0].value):
            # the response object as recorded (an error one says its error under "error" itself)
            return [{"function_response": {"id": i.call_id, "name": names[i.call_id], "response": i.parts[0].value}}]
        media = [b for p in i.parts if isinstance(p, ir.ResourcePart) and _response_media(r, p)
                 for b in _media(r, p, i)]
        said = replace(i, parts=tuple(p for p in i.parts if not (isinstance(p, ir.ResourcePart)
                                                                 and _response_media(r, p))))
        texts = r.texts(said, "a function response holds JSON and media only")
        values = [p.value for p in i.parts if isinstance(p, ir.StructuredPart) and reasoning_of(p) is None]
        value: Any = values[0] if len(values) == 1 and len(texts) == 1 else "\n".join(texts)
        response = {"id": i.call_id, "name": names[i.call_id],
                    "response": {"error" if i.outcome == "error" else "output": value}}
        return [{"function_response": {**response, "parts": media} if media else response}]
    if i.role not in ("user", "assistant"):
        role_as_user(r, i, f"is sent as {side} text: the API has no such role among its contents")
    out: list[dict[str, Any]] = []
    for p in i.parts:
        if isinstance(p, ir.TextPart):
            if (text := r.text(p, i, "")) is not None:
                out.append({"text": text})
        elif (blocks := native_blocks(p)) is not None:
            out += blocks
        elif isinstance(p, ir.ResourcePart):
            out += _media(r, p, i)
        elif (origin := reasoning_of(p)) is not None:
            assert isinstance(p, ir.StructuredPart)
            if origin == NAME and side == "assistant" and isinstance(p.value, dict):
                out.append(_snake(p.value))
            else:
                r.loss("reasoning_dropped", origin, "private reasoning of another API (or out of the model's turn) "
                       "is not sent: only this API's own thoughts and signatures can be", i.id)
        elif isinstance(p, ir.StructuredPart):
            if (text := r.text(p, i, "")) is not None:
                out.append({"text": text})
        else:
            r.drop(p, i, "it holds a block this API does not know")
    return out


def _response_media(r: Renderer, p: ir.ResourcePart) -> bool:
    """Whether a result's resource goes as a part of its function response (an image or a PDF)."""
    m = r.media(p)
    return m is not None and m.source in ("base64", "url") and (m.image or m.media_type.startswith(_RESPONSE_MEDIA))


def _media(r: Renderer, p: ir.ResourcePart, i: Input) -> list[dict[str, Any]]:
    """A resource as inline data, or as ``file_data`` by a URI the API can read (a Cloud Storage
    or web address: a bare file id is no URI); anything else is dropped with a loss saying why."""
    m = r.media(p, i)
    if m is None:
        return []  # (its loss says why)
    if m.name and not m.image:
        r.loss("media_adapted", "document title", "a document's name (its title) is not sent: the API takes no "
               "name for a file's data", i.id)
    if m.source == "base64":
        return [{"inline_data": {"mime_type": m.media_type, "data": m.value}}]
    if m.source == "text":
        return [{"inline_data": {"mime_type": m.media_type, "data": base64.b64encode(m.value.encode()).decode()}}]
    if m.source == "url" and m.value.startswith(_URIS):
        mime = m.media_type if m.media_type != UNKNOWN_MEDIA else _BY_SUFFIX.get(_suffix(m.value))
        if mime is None:
            r.drop(p, i, "the API takes a file by URI with its media type, and neither the session nor the URI "
                   "says it")
            return []
        return [{"file_data": {"file_uri": m.value, "mime_type": mime}}]
    r.drop(p, i, "the API takes a file by a gs:// or http(s):// URI only" if m.source == "url" else
           "the API takes a file by its URI, and a bare file id is none")
    return []


def _suffix(url: str) -> str:
    path = urlsplit(url).path
    dot = path.rfind(".")
    return path[dot:].lower() if dot > path.rfind("/") else ""


def _code_parts(r: Renderer, call: Input, result: Input) -> list[dict[str, Any]] | None:
    """Code the model ran and its result, as this API wrote them: the code and its language, the
    outcome and the output; the id only where the parts had one (the reader derives an id,
    ``<message>/executable_code/<k>``, for parts that name none)."""
    tool = r.tools.get(call.tool_id or "")
    args = call.arguments
    if tool is None or tool.server_identity != _PROVIDER or tool.name != "code_execution" \
            or not isinstance(args, dict) or not isinstance(args.get("code"), str) \
            or not set(args) <= {"code", "language"} or len(result.parts) > 1 \
            or not all(isinstance(p, ir.TextPart) for p in result.parts):
        return None
    derived = (call.call_id or "").startswith(f"{origin(call)}/executable_code/")
    ids = {} if derived else {"id": call.call_id}
    outcome = {"outcome": _CODES[result.outcome]} if result.outcome in _CODES else {}
    text = next((p.text for p in result.parts if isinstance(p, ir.TextPart)), None)
    output = {"output": text} if text is not None else {}
    return [{"executable_code": {**args, **ids}}, {"code_execution_result": {**outcome, **output, **ids}}]


def _snake(part: dict[str, Any]) -> dict[str, Any]:
    """A recorded part in the SDK's own (snake_case) keys; a REST dump writes camelCase."""
    return {"thought_signature" if k == "thoughtSignature" else k: v for k, v in part.items() if v is not None}


def _attach_signatures(parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A thought signature recorded alone goes back onto the part after it, where the API wrote it."""
    out: list[dict[str, Any]] = []
    pending: Any = None
    for p in parts:
        if set(p) == {"thought_signature"}:
            pending = p["thought_signature"]
            continue
        if pending is not None and "thought_signature" not in p:
            p = {**p, "thought_signature": pending}
        pending = None
        out.append(p)
    return out

