"""For the request tests: each provider's request body checked by its SDK's own request types
(strictly: a key the type does not declare fails), the conversation read back out of a body, and
each API's pairing and alternation rules as checkers."""

from __future__ import annotations

import collections.abc
import functools
import json
import re
import types
import typing
from typing import Any, Literal, NotRequired, Required, get_args, get_origin, get_type_hints

import pydantic
import typing_extensions
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming as AnthropicParams
from google.genai import types as gtypes
from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming as ChatParams
from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming as ResponsesParams

TARGETS = ("anthropic-messages", "openai-chat", "openai-responses", "google-genai")


# --- strict validation by the SDK types --------------------------------------------------------


def _unwrap(t: Any) -> Any:
    while get_origin(t) in (typing.Annotated, Required, NotRequired):
        t = get_args(t)[0]
    return t


def mismatch(t: Any, value: Any, where: str = "") -> str | None:
    """Where ``value`` is not an instance of the (TypedDict) annotation ``t``: a key it does not
    declare, a missing required key, a literal or scalar of the wrong kind; None if it fits."""
    t = _unwrap(t)
    origin = get_origin(t)
    if t is Any or t is object:
        return None
    if origin is typing.Union or origin is types.UnionType:
        found = [mismatch(a, value, where) for a in get_args(t)]
        return None if any(f is None for f in found) else min((f for f in found if f), key=len)
    if origin is Literal:
        return None if value in get_args(t) else f"{where}: {value!r} is not one of {get_args(t)}"
    if typing_extensions.is_typeddict(t):
        if not isinstance(value, dict):
            return f"{where}: not an object"
        hints = get_type_hints(t, include_extras=True)
        extra = set(value) - set(hints)
        if extra:
            return f"{where}: {t.__name__} does not declare {sorted(extra)}"
        missing = set(getattr(t, "__required_keys__", ())) - set(value)
        missing |= {k for k, h in hints.items() if get_origin(h) is Required and k not in value}
        if missing:
            return f"{where}: {t.__name__} needs {sorted(missing)}"
        for k, v in value.items():
            if (found := mismatch(hints[k], v, f"{where}/{k}")) is not None:
                return found
        return None
    if isinstance(t, type) and issubclass(t, pydantic.BaseModel):  # (a response type a request may echo)
        if not isinstance(value, dict):
            return f"{where}: not an object"
        fields = {f.alias or n: f.annotation for n, f in t.model_fields.items()}
        extra = set(value) - set(fields)
        if extra:
            return f"{where}: {t.__name__} does not declare {sorted(extra)}"
        for k, v in value.items():
            if (found := mismatch(fields[k], v, f"{where}/{k}")) is not None:
                return found
        return None
    if t in (str, int, float, bool, type(None)):
        ok = isinstance(value, t) and not (t is int and isinstance(value, bool)) or (t is float and isinstance(
            value, int) and not isinstance(value, bool))
        return None if ok else f"{where}: {value!r} is not a {t.__name__}"
    if origin in (dict, collections.abc.Mapping) or t is dict:
        if not isinstance(value, dict):
            return f"{where}: not an object"
        args = get_args(t)
        if args:
            for k, v in value.items():
                if (found := mismatch(args[1], v, f"{where}/{k}")) is not None:
                    return found
        return None
    if origin is not None and len(get_args(t)) == 1 and isinstance(value, list):  # list, Iterable, SequenceNotStr
        for k, v in enumerate(value):
            if (found := mismatch(get_args(t)[0], v, f"{where}/{k}")) is not None:
                return found
        return None
    if origin is not None and len(get_args(t)) == 1:
        return f"{where}: not a list"
    return None  # another type (a pydantic model, a class): what the TypeAdapter checks


_PARAMS = {"anthropic-messages": (AnthropicParams, {"model": "m", "max_tokens": 16}),
           "openai-chat": (ChatParams, {"model": "m"}),
           "openai-responses": (ResponsesParams, {"model": "m"})}


@functools.cache
def _adapter(target: str) -> pydantic.TypeAdapter[Any]:
    """The SDK's request type as a validator, built once per target (building one costs far more
    than a validation)."""
    return pydantic.TypeAdapter(_PARAMS[target][0])


def check_body(target: str, body: dict[str, Any]) -> None:
    """``body`` is what the target's SDK create call takes (model and required sampling settings
    added): its keys are the call's, and its values the SDK's types, strictly."""
    expected = {"anthropic-messages": {"system", "messages", "tools"}, "openai-chat": {"messages", "tools"},
                "openai-responses": {"instructions", "input", "tools"}, "google-genai": {"contents", "config"}}
    assert set(body) <= expected[target], sorted(set(body) - expected[target])
    json.dumps(body, allow_nan=False)  # plain JSON
    if target == "google-genai":
        for content in body["contents"]:
            gtypes.Content.model_validate(content)  # (the Gen AI models refuse a key they do not declare)
        if "config" in body:
            assert set(body["config"]) <= {"system_instruction", "tools"}
            gtypes.GenerateContentConfig.model_validate(body["config"])
        return
    params, required = _PARAMS[target]
    full = {**required, **body}
    _adapter(target).validate_python(full)
    found = mismatch(params, full)
    assert found is None, found


# --- the conversation a body holds -----------------------------------------------------------------


def conversation(target: str, body: dict[str, Any]) -> list[tuple[Any, ...]]:
    """The body's texts (by side), tool calls (id, name, arguments) and results (id, error, text),
    in order; consecutive texts of one side as separate entries."""
    out: list[tuple[Any, ...]] = []
    if target == "anthropic-messages":
        for m in body["messages"]:
            for b in m["content"]:
                if b["type"] == "text":
                    out.append(("text", m["role"], b["text"]))
                elif b["type"] == "tool_use":
                    out.append(("call", b["id"], b["name"], b["input"]))
                elif b["type"] == "tool_result":
                    content = b.get("content", "")
                    text = content if isinstance(content, str) else "".join(x.get("text", "") for x in content)
                    out.append(("result", b["tool_use_id"], b.get("is_error", False), text))
    elif target == "openai-chat":
        for m in body["messages"]:
            if m["role"] == "tool":
                out.append(("result", m["tool_call_id"], False, m["content"]))
                continue
            content = m.get("content")
            texts = [content] if isinstance(content, str) else [x["text"] for x in content or () if x["type"] == "text"]
            out += [("text", m["role"], t) for t in texts]
            out += [("call", c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
                    for c in m.get("tool_calls", ())]
    elif target == "openai-responses":
        for item in body["input"]:
            if item["type"] == "function_call":
                out.append(("call", item["call_id"], item["name"], json.loads(item["arguments"])))
            elif item["type"] == "function_call_output":
                output = item["output"]
                out.append(("result", item["call_id"], False, output if isinstance(output, str)
                            else "".join(x.get("text", "") for x in output)))
            elif item["type"] == "message":
                content = item["content"]
                texts = [content] if isinstance(content, str) else [x["text"] for x in content if "text" in x]
                out += [("text", item["role"], t) for t in texts]
    else:
        for c in body["contents"]:
            role = "assistant" if c["role"] == "model" else "user"
            for p in c["parts"]:
                if "text" in p and not p.get("thought"):
                    out.append(("text", role, p["text"]))
                elif "function_call" in p:
                    f = p["function_call"]
                    out.append(("call", f["id"], f["name"], f["args"]))
                elif "function_response" in p:
                    f = p["function_response"]
                    response = f["response"]
                    error = "error" in response
                    value = response.get("error" if error else "output", response)
                    out.append(("result", f["id"], error, value if isinstance(value, str) else json.dumps(value)))
    return out


# --- each API's rules ----------------------------------------------------------------------------


def check_rules(target: str, body: dict[str, Any]) -> None:
    """The pairing and alternation each API demands of a history (which is never empty), and no
    empty message or text anywhere (Anthropic and Gemini: none of whitespace only either)."""
    assert body[{"google-genai": "contents", "openai-responses": "input"}.get(target, "messages")], "no conversation"
    _said(target, body)
    {"anthropic-messages": _anthropic, "openai-chat": _chat, "openai-responses": _responses,
     "google-genai": _google}[target](body)


def _texts(value: Any) -> list[str]:
    """Every text a body's message holds (a text block's or part's, a string content)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [t for v in value for t in _texts(v)]
    if isinstance(value, dict) and value.get("type") in (None, "text", "input_text", "output_text") \
            and isinstance(value.get("text"), str) and not value.get("thought"):
        return [value["text"]]
    if isinstance(value, dict) and value.get("type") == "tool_result":
        return _texts(value.get("content", []))
    return []


def _said(target: str, body: dict[str, Any]) -> None:
    """No message (or content) is empty and no text is; for the APIs that refuse it, no text is
    whitespace only. A tool's answer may be empty: it must be there to answer its call."""
    blank = target in ("anthropic-messages", "google-genai")
    if target == "anthropic-messages":
        messages = [m["content"] for m in body["messages"]] + [body.get("system", "x")]
    elif target == "openai-chat":
        messages = [m.get("content") for m in body["messages"] if m["role"] != "tool"
                    and not (m["role"] == "assistant" and m.get("tool_calls") and m.get("content") is None)]
    elif target == "openai-responses":
        messages = [i["content"] for i in body["input"] if i.get("type") == "message"]
    else:
        messages = [c["parts"] for c in body["contents"]] + [body.get("config", {}).get(
            "system_instruction", {}).get("parts", [{"text": "x"}])]
    for k, content in enumerate(messages):
        assert content, f"message {k} is empty"
        for text in _texts(content):
            assert text.strip() if blank else text, f"message {k} holds an empty text: {text!r}"


def _anthropic(body: dict[str, Any]) -> None:
    messages = body["messages"]
    for k, m in enumerate(messages):
        assert m["role"] in ("user", "assistant")
        assert m["content"], f"message {k} is empty"
        if k:
            assert m["role"] != messages[k - 1]["role"], f"messages {k - 1} and {k} have one role"
        uses = [b["id"] for b in m["content"] if b["type"] == "tool_use"]
        results = [b["tool_use_id"] for b in m["content"] if b["type"] == "tool_result"]
        if results:
            assert m["role"] == "user"
            kinds = [b["type"] for b in m["content"]]
            assert kinds[:len(results)] == ["tool_result"] * len(results), "tool_result blocks come first"
            before = [b["id"] for b in messages[k - 1]["content"] if b["type"] == "tool_use"] if k else []
            assert set(results) <= set(before), "a tool_result answers a tool_use of the message before"
        if uses:
            assert m["role"] == "assistant" and k + 1 < len(messages), "a tool_use is answered"
            answered = [b["tool_use_id"] for b in messages[k + 1]["content"] if b["type"] == "tool_result"]
            assert sorted(answered) == sorted(uses), "every tool_use is answered in the next message"
        _server_pairs(m)
        for b in m["content"]:
            if b["type"] in ("tool_use", "tool_result"):
                assert re.fullmatch(r"[A-Za-z0-9_-]+", b.get("id", b.get("tool_use_id", "")))
    _names([t["name"] for t in body.get("tools", ())] + [b["name"] for m in messages for b in m["content"]
                                                          if b["type"] == "tool_use"])


# the result blocks of Anthropic's server tools (each answers a server_tool_use by tool_use_id)
SERVER_RESULTS = ("web_search_tool_result", "web_fetch_tool_result", "code_execution_tool_result",
                  "bash_code_execution_tool_result", "text_editor_code_execution_tool_result",
                  "tool_search_tool_result")


def _server_pairs(message: dict[str, Any]) -> None:
    """A server_tool_use is answered by its result block later in the same assistant turn (the
    API ran it within that turn), and a server result answers a server_tool_use before it."""
    blocks = message["content"]
    used: list[str] = []
    for b in blocks:
        if b["type"] == "server_tool_use":
            assert message["role"] == "assistant", "a server_tool_use is the assistant's"
            used.append(b["id"])
        elif b["type"] in SERVER_RESULTS:
            assert message["role"] == "assistant", f"a {b['type']} is the assistant's"
            assert b["tool_use_id"] in used, f"a {b['type']} answers a server_tool_use before it in its turn"
            used.remove(b["tool_use_id"])
    assert not used, f"server_tool_use {used} unanswered in its turn"


def _chat(body: dict[str, Any]) -> None:
    messages = body["messages"]
    k = 0
    while k < len(messages):
        m = messages[k]
        assert m["role"] != "tool", f"tool message {k} answers no call just before it"
        calls = [c["id"] for c in m.get("tool_calls", ())]
        k += 1
        if calls:
            answered = []
            while k < len(messages) and messages[k]["role"] == "tool":
                answered.append(messages[k]["tool_call_id"])
                k += 1
            assert sorted(answered) == sorted(calls), "the tool messages after a call answer exactly its calls"
    _names([t["function"]["name"] for t in body.get("tools", ())]
           + [c["function"]["name"] for m in messages for c in m.get("tool_calls", ())])


def _responses(body: dict[str, Any]) -> None:
    called: list[str] = []
    answered: list[str] = []
    for item in body["input"]:
        if item["type"] == "function_call":
            called.append(item["call_id"])
        elif item["type"] == "function_call_output":
            assert item["call_id"] in called, "an output answers an earlier call"
            answered.append(item["call_id"])
    assert sorted(called) == sorted(answered), "every call is answered once"
    _names([t["name"] for t in body.get("tools", ())]
           + [i["name"] for i in body["input"] if i["type"] == "function_call"])


def _google(body: dict[str, Any]) -> None:
    contents = body["contents"]
    assert contents[0]["role"] == "user", "the contents open with a user turn"
    names = []
    for k, c in enumerate(contents):
        assert c["role"] in ("user", "model")
        if k:
            assert c["role"] != contents[k - 1]["role"], f"contents {k - 1} and {k} have one role"
        calls = {p["function_call"]["id"]: p["function_call"]["name"] for p in c["parts"] if "function_call" in p}
        responses = {p["function_response"]["id"]: p["function_response"]["name"] for p in c["parts"]
                     if "function_response" in p}
        names += calls.values()
        if calls:
            assert c["role"] == "model" and k + 1 < len(contents)
            after = {p["function_response"]["id"]: p["function_response"]["name"]
                     for p in contents[k + 1]["parts"] if "function_response" in p}
            assert after == calls, "each call is answered in the next content, by id and name"
        if responses:
            assert c["role"] == "user"
    for t in body.get("config", {}).get("tools", ()):
        names += [d["name"] for d in t["function_declarations"]]
    _names(names)


def _names(names: list[str]) -> None:
    for n in names:
        assert re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]{0,63}", n), n
