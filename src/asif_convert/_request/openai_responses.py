"""The OpenAI Responses request: ``client.responses.create(instructions=..., input=..., tools=...)``.

``input`` is a flat list of items: messages (user, system and developer content as input parts,
assistant text as plain text), ``function_call`` items and the ``function_call_output`` items that
answer them by ``call_id``. Reasoning items travel only when they came from this API, and so do
the items of the tools it runs itself (web and file search, code interpreter, image generation),
each the call and its outcome in one item."""

from __future__ import annotations

from typing import Any

from asif_convert import ir
from asif_convert._request.common import (
    Renderer,
    arrange,
    json_arguments,
    native_blocks,
    offered,
    reasoning_of,
    role_as_user,
    schema,
    unsaid,
)
from asif_convert._request.selection import Input, Selection

NAME = "openai-responses"
_PROVIDER = "openai"  # the server identity the continuity reader gives the tools this API runs
# the input item of each tool the API runs that a request takes back (its ...ToolCallParam), by
# tool name, with the item's keys the call's recorded arguments must hold (the item requires them)
_SERVER_ITEMS = {"web_search": ("web_search_call", ("action",)), "file_search": ("file_search_call", ("queries",)),
                 "code_interpreter": ("code_interpreter_call", ("code", "container_id")),
                 "image_generation": ("image_generation_call", ())}
_STATUS = {"success": "completed", "error": "failed"}  # (an unknown outcome names no status)


def render(selection: Selection) -> tuple[dict[str, Any], list[ir.Loss]]:
    r = Renderer(selection, NAME, native=_server_item)
    items: list[dict[str, Any]] = []
    for i in arrange(r):
        if i.kind == "tool_call":
            items.append({"type": "function_call", "call_id": i.call_id,
                          "name": r.sent_name(i.tool_id, i.id),
                          "arguments": json_arguments(r, i)})
        elif i.kind == "tool_result":
            if i.outcome in ("error", "cancelled"):  # (unknown: what these APIs say of every result)
                r.loss("outcome_adapted", i.outcome or "unknown", f"a tool result of outcome {i.outcome!r} is sent "
                       "as a function_call_output, which has no outcome: only its output says how the call ended",
                       i.id)
            output = _content(r, i, "input")
            items.append({"type": "function_call_output", "call_id": i.call_id,
                          "output": output[0]["text"] if len(output) == 1 and output[0]["type"] == "input_text"
                          else output if output else ""})
        elif i.role == "assistant":
            said = _assistant(r, i)
            if not said:
                unsaid(r, i)
            items += said
        else:
            role = i.role if i.role in ("user", "system", "developer") else "user"
            if role != i.role:
                role_as_user(r, i, "is sent as a user message: the API has no such role")
            content = _content(r, i, "input")
            if content:
                items.append({"type": "message", "role": role, "content": content})
            else:
                unsaid(r, i)
    body: dict[str, Any] = {}
    instructions = [p.text for p in selection.instructions if isinstance(p, ir.TextPart) and p.text]
    if instructions:
        body["instructions"] = "\n\n".join(instructions)
        if len(instructions) > 1:
            r.loss("instructions_joined", "instructions", "several instruction texts are sent as one, joined by a "
                   "blank line: the API takes one instructions string")
    body["input"] = items
    tools = [{"type": "function", "name": name, "description": t.description, "strict": False,
              "parameters": schema(t)}
             for name, t in offered(r)]
    if tools:
        body["tools"] = tools
    return body, r.losses()


def _server_item(r: Renderer, call: Input, result: Input) -> list[dict[str, Any]] | None:
    """The item of a tool this API ran: its id, the call's recorded arguments (the item's own
    keys, as the reader took them), the outcome as its status and the result's parts in the
    item's outcome field. None for anything the item cannot hold as it was recorded."""
    tool = r.tools.get(call.tool_id or "")
    spec = _SERVER_ITEMS.get(r.tool_name(call.tool_id))
    status = _STATUS.get(result.outcome or "")
    args = call.arguments
    if tool is None or tool.server_identity != _PROVIDER or spec is None or status is None \
            or not isinstance(args, dict) or not all(k in args for k in spec[1]) or "status" in args:
        return None
    outcome = _server_outcome(r, spec[0], result)
    if outcome is None:
        return None
    return [{"id": call.call_id, "type": spec[0], **args, "status": status, **outcome}]


def _server_outcome(r: Renderer, kind: str, result: Input) -> dict[str, Any] | None:
    """The outcome fields of a server tool's item from its result's parts (as the reader made
    them: file search results a structured part, code interpreter logs texts and images
    resources, a generated image a resource and its revised prompt a text)."""
    parts = result.parts
    if kind == "web_search_call":
        return {} if not parts else None
    if kind == "file_search_call":
        values = [p.value for p in parts if isinstance(p, ir.StructuredPart)]
        return {"results": values[0]} if len(values) == len(parts) == 1 else {} if not parts else None
    media = {p.resource_id: r.media(p) for p in parts if isinstance(p, ir.ResourcePart)}
    if any(m is None or m.source not in ("base64", "url") for m in media.values()) \
            or not all(isinstance(p, ir.TextPart | ir.ResourcePart) for p in parts):
        return None
    if kind == "code_interpreter_call":
        return {"outputs": [{"type": "logs", "logs": p.text} if isinstance(p, ir.TextPart) else
                            {"type": "image", "url": _url(r, media[p.resource_id])}
                            for p in parts if isinstance(p, ir.TextPart | ir.ResourcePart)]}
    images = [m.value for m in media.values() if m is not None and m.source == "base64"]
    texts = [p.text for p in parts if isinstance(p, ir.TextPart)]
    if len(images) != len(media) or len(images) > 1 or len(texts) > 1:
        return None
    return {"result": images[0] if images else None, **({"revised_prompt": texts[0]} if texts else {})}


def _url(r: Renderer, m: Any) -> str:
    return str(r.data_url(m) if m.source == "base64" else m.value)


def _assistant(r: Renderer, i: Input) -> list[dict[str, Any]]:
    """An assistant message: each text a message of its own (the API takes assistant text as a
    string), this API's reasoning items as they were."""
    out: list[dict[str, Any]] = []
    for p in i.parts:
        if reasoning_of(p) == NAME:
            assert isinstance(p, ir.StructuredPart) and isinstance(p.value, dict)
            out.append(_reasoning_item(r, i, p.value))
        elif (blocks := native_blocks(p)) is not None:
            out += blocks
        elif isinstance(p, ir.ResourcePart):
            r.drop(p, i, "an assistant message holds text only")
        elif (text := r.text(p, i, "an assistant message holds text only")) is not None:
            out.append({"type": "message", "role": "assistant", "content": text})
    return out


# The members of a reasoning input item (the SDK's ResponseReasoningItemParam): the API refuses
# others, such as the metadata Codex records beside the items it was given; and those of them
# that take no null (Codex records a null ``content``: no content, said as the API says it).
_REASONING_MEMBERS = frozenset(("type", "id", "summary", "content", "encrypted_content", "status"))
_NOT_NULL = frozenset(("content", "status"))


def _reasoning_item(r: Renderer, i: Input, item: dict[str, Any]) -> dict[str, Any]:
    """A reasoning item as recorded, but for the members the API does not take (each a loss)."""
    for key in item.keys() - _REASONING_MEMBERS:
        r.loss("member_dropped", f"reasoning.{key}", f"a reasoning item's {key!r} is not a member the API takes",
               i.id)
    return {k: v for k, v in item.items() if k in _REASONING_MEMBERS and not (v is None and k in _NOT_NULL)}


def _content(r: Renderer, i: Input, prefix: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for p in i.parts:
        if not isinstance(p, ir.ResourcePart):
            if (text := r.text(p, i, "it holds a block this API does not know")) is not None:
                out.append({"type": "input_text", "text": text})
            continue
        m = r.media(p, i)
        if m is None:
            continue  # (its loss says why)
        if m.image and m.source in ("base64", "url"):
            out.append({"type": "input_image", "detail": "auto",
                        "image_url": r.data_url(m) if m.source == "base64" else m.value})
        elif m.image and m.source == "file":
            out.append({"type": "input_image", "detail": "auto", "file_id": m.value})
        elif m.source == "base64":
            out.append({"type": "input_file", "file_data": r.data_url(m), "filename": m.name or "file"})
        elif m.source == "url":
            out.append({"type": "input_file", "file_url": m.value})
        elif m.source == "file":
            out.append({"type": "input_file", "file_id": m.value})
        else:
            r.loss("media_adapted", m.media_type, "a text document is sent as a text part", i.id)
            out.append({"type": "input_text", "text": m.value})
    return out
