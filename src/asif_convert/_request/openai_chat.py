"""The OpenAI Chat Completions request: ``client.chat.completions.create(messages=..., tools=...)``.

Roles need not alternate: each input is its own message, except that tool calls join the
assistant message just before them (``tool_calls``), and each is answered by a ``tool`` message
naming its ``tool_call_id``. System and developer messages keep their place. Assistant messages
carry text only; the API takes no reasoning, and a tool message no error flag."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from asif_convert import ir
from asif_convert._request.common import (
    Refusal,
    Renderer,
    arrange,
    json_arguments,
    offered,
    role_as_user,
    schema,
    unsaid,
)
from asif_convert._request.selection import Input, Selection

NAME = "openai-chat"
# Chat takes a tool call id of at most 40 characters (longer ones are rewritten, with a loss)
_ID = re.compile(r".{1,40}", re.DOTALL)
_AUDIO = {"audio/wav": "wav", "audio/x-wav": "wav", "audio/mpeg": "mp3", "audio/mp3": "mp3"}


def render(selection: Selection) -> tuple[dict[str, Any], list[ir.Loss]]:
    r = Renderer(selection, NAME)
    messages: list[dict[str, Any]] = []
    instructions = [{"type": "text", "text": p.text} for p in selection.instructions
                    if isinstance(p, ir.TextPart) and p.text]
    if instructions:
        messages.append({"role": "system", "content": instructions})
    open_calls = False  # whether the last message is an assistant message calls may join
    for i in arrange(r):
        if i.kind == "tool_call":
            call = {"id": r.fit_id(i.call_id or "", _ID, i.id), "type": "function",
                    "function": {"name": r.sent_name(i.tool_id, i.id),
                                 "arguments": json_arguments(r, i)}}
            if open_calls:
                messages[-1].setdefault("tool_calls", []).append(call)
            else:
                messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
                open_calls = True
            continue
        open_calls = False
        if i.kind == "tool_result":
            if i.outcome in ("error", "cancelled"):  # (unknown: what these APIs say of every result)
                r.loss("outcome_adapted", i.outcome or "unknown", f"a tool result of outcome {i.outcome!r} is sent "
                       "as a tool message, which has no outcome: only its text says how the call ended", i.id)
            messages.append({"role": "tool", "tool_call_id": r.fit_id(i.call_id or "", _ID, i.id),
                             "content": "\n".join(_texts(r, i, "a tool message holds text only"))})
        elif i.role == "assistant":
            open_calls = _assistant(r, i, messages)
        elif i.role in ("system", "developer"):
            texts = r.texts(i, f"a {i.role} message holds text only")
            if texts:
                messages.append(_named(r, i, {"role": i.role, "content": [{"type": "text", "text": t} for t in texts]}))
            else:
                unsaid(r, i)
        else:
            if i.role != "user":
                role_as_user(r, i, "is sent as a user message: the API has no such role")
            content = _user_content(r, i)
            if content:
                messages.append(_named(r, i, {"role": "user", "content": content}))
            else:
                unsaid(r, i)
    body: dict[str, Any] = {"messages": messages}
    tools = [{"type": "function", "function": {"name": name, "description": t.description,
                                               "parameters": schema(t)}}
             for name, t in offered(r)]
    if tools:
        body["tools"] = tools
    return body, r.losses()


def _named(r: Renderer, i: Input, message: dict[str, Any]) -> dict[str, Any]:
    """A message with the participant name its recorded message gave its speaker, if any."""
    name = r.speaker(i)
    return {**message, "name": name} if name is not None else message


def _assistant(r: Renderer, i: Input, messages: list[dict[str, Any]]) -> bool:
    """An assistant message: its texts, and its refusals as the API's refusal parts. Said in the
    turn of tool calls not yet answered (after one of them), it joins their message, whose
    content goes before its calls (a loss: the order changes). Whether it said anything."""
    content: list[dict[str, Any]] = []
    for p in i.parts:
        if isinstance(p, Refusal) and p.text:
            content.append({"type": "refusal", "refusal": p.text})
        else:
            content += [{"type": "text", "text": t} for t in _texts(r, replace(i, parts=(p,)), "an assistant "
                                                                   "message holds text only")]
    if not content:
        unsaid(r, i)  # (or each part is a loss)
        return False
    last = messages[-1] if messages else None
    if last is not None and last["role"] == "assistant" and last.get("tool_calls"):
        r.loss("order_adapted", "text after calls", "an assistant message holds its text before its tool calls: "
               "a text said after a call of its turn is sent before it", i.id)
        before = last["content"]
        said = [{"type": "text", "text": before}] if isinstance(before, str) else list(before or ())
        last["content"] = said + content
        return True
    plain = len(content) == 1 and content[0]["type"] == "text"
    messages.append(_named(r, i, {"role": "assistant", "content": content[0]["text"] if plain else content}))
    return True


def _texts(r: Renderer, i: Input, why: str) -> list[str]:
    """The texts of a message that holds text only: a text document is its text, as in a user
    message (a loss); other media is dropped, saying why."""
    out: list[str] = []
    for p in i.parts:
        m = r.media(p) if isinstance(p, ir.ResourcePart) else None
        if m is not None and m.source == "text":
            r.loss("media_adapted", m.media_type, "a text document is sent as a text part", i.id)
            out.append(m.value)
        elif (text := r.text(p, i, why)) is not None:
            out.append(text)
    return out


def _user_content(r: Renderer, i: Input) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for p in i.parts:
        if not isinstance(p, ir.ResourcePart):
            if (text := r.text(p, i, "it holds a block this API does not know")) is not None:
                out.append({"type": "text", "text": text})
            continue
        m = r.media(p, i)
        if m is None:
            continue  # (its loss says why)
        if m.image and m.source in ("base64", "url"):
            url = r.data_url(m) if m.source == "base64" else m.value
            out.append({"type": "image_url", "image_url": {"url": url}})
        elif m.source == "base64" and m.media_type in _AUDIO:
            out.append({"type": "input_audio", "input_audio": {"data": m.value, "format": _AUDIO[m.media_type]}})
        elif m.source == "base64":
            out.append({"type": "file", "file": {"file_data": r.data_url(m), "filename": m.name or "file"}})
        elif m.source == "file":
            out.append({"type": "file", "file": {"file_id": m.value}})
        elif m.source == "text":
            r.loss("media_adapted", m.media_type, "a text document is sent as a text part", i.id)
            out.append({"type": "text", "text": m.value})
        else:
            r.drop(p, i, "the API takes a file by URL only for images")
    return out

