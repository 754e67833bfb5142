"""The OpenAI Responses request: ``client.responses.create(instructions=..., input=..., tools=...)``.

``input`` is a flat list of items: messages (user, system and developer content as input parts,
assistant text as plain text), ``function_call`` items and the ``function_call_output`` items that
answer them by ``call_id``. Reasoning items travel only when they came from this API."""

from __future__ import annotations

from typing import Any

from asif_convert import ir
from asif_convert._request.common import (
    NAME_SYNTAX,
    Renderer,
    arrange,
    json_arguments,
    offered,
    reasoning_of,
    role_as_user,
    schema,
)
from asif_convert._request.selection import Input, Selection

NAME = "openai-responses"


def render(selection: Selection) -> tuple[dict[str, Any], list[ir.Loss]]:
    r = Renderer(selection, NAME)
    items: list[dict[str, Any]] = []
    for i in arrange(r):
        if i.kind == "tool_call":
            items.append({"type": "function_call", "call_id": i.call_id,
                          "name": r.fit_name(r.tool_name(i.tool_id), NAME_SYNTAX, i.id),
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
            items += _assistant(r, i)
        else:
            role = i.role if i.role in ("user", "system", "developer") else "user"
            if role != i.role:
                role_as_user(r, i, "is sent as a user message: the API has no such role")
            content = _content(r, i, "input")
            if content:
                items.append({"type": "message", "role": role, "content": content})
    body: dict[str, Any] = {}
    instructions = [p.text for p in selection.instructions if isinstance(p, ir.TextPart)]
    if instructions:
        body["instructions"] = "\n\n".join(instructions)
        if len(instructions) > 1:
            r.loss("instructions_joined", "instructions", "several instruction texts are sent as one, joined by a "
                   "blank line: the API takes one instructions string")
    body["input"] = items
    tools = [{"type": "function", "name": name, "description": t.description, "strict": False,
              "parameters": schema(t)}
             for name, t in offered(r, NAME_SYNTAX)]
    if tools:
        body["tools"] = tools
    return body, r.losses()


def _assistant(r: Renderer, i: Input) -> list[dict[str, Any]]:
    """An assistant message: each text a message of its own (the API takes assistant text as a
    string), this API's reasoning items as they were."""
    out: list[dict[str, Any]] = []
    for p in i.parts:
        if reasoning_of(p) == NAME:
            assert isinstance(p, ir.StructuredPart) and isinstance(p.value, dict)
            out.append(dict(p.value))
        elif isinstance(p, ir.ResourcePart):
            r.drop(p, i, "an assistant message holds text only")
        elif (text := r.text(p, i, "an assistant message holds text only")) is not None:
            out.append({"type": "message", "role": "assistant", "content": text})
    return out


def _content(r: Renderer, i: Input, prefix: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for p in i.parts:
        if not isinstance(p, ir.ResourcePart):
            if (text := r.text(p, i, "it holds a block this API does not know")) is not None:
                out.append({"type": "input_text", "text": text})
            continue
        m = r.media(p)
        if m is None:
            r.drop(p, i, "its resource is not embedded nor referenced")
        elif m.image and m.source in ("base64", "url"):
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
