"""Every content block type of the official Anthropic and OpenAI (Chat Completions) Python SDKs:
each one an instance validated by the SDK's own type, wrapped in a schema-valid export, converted.

For each: it maps as mappings/dialects.toml says (or is opaque with a loss naming its type and
record), no visible string of it is silent, continuity -> ASIF -> continuity is exact, and
edits of what it mapped to (texts, arguments) travel back. The SDK unions are enumerated at run
time: a release that adds a block type fails ``test_every_sdk_block_type_has_a_case``.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import Any, get_type_hints

import anthropic.types as at
import anthropic.types.beta as ab
import openai.types.chat as oc
import pytest

from asif_convert import Options, convert
from asif_convert._dialects import REASONING
from asif_convert._docs import load_dialects

from . import sdk_blocks as sb
from .test_visibility import unseen

TABLE = load_dialects()
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\nfake").decode()
PDF = base64.b64encode(b"%PDF-1.4 fake").decode()
WAV = base64.b64encode(b"RIFF0000WAVEfmt ").decode()


@dataclass
class Case:
    dialect: str
    key: str  # the block type's entry in mappings/dialects.toml
    messages: list[tuple[str, Any]]  # (role, content_json), the last one holds the block under test
    sdk: list[tuple[Any, Any]] = field(default_factory=list)  # (SDK type, value) pairs the SDK validates


def _by_tag(unions: tuple[Any, ...], tag: str, key: str = "type") -> list[Any]:
    return [m for u in unions for m in sb.members(u) if sb.tag(m, key) == tag]


A_UNIONS = (at.ContentBlock, at.ContentBlockParam, ab.BetaContentBlock, ab.BetaContentBlockParam)
A_RESULT_CONTENT = sb.members(get_type_hints(at.ToolResultBlockParam)["content"].__args__[1].__args__[0])
A_SOURCES = {"image": get_type_hints(at.ImageBlockParam)["source"],
             "document": get_type_hints(at.DocumentBlockParam)["source"]}


def _anthropic(key: str, block: dict[str, Any], *, role: str = "assistant", before: list[dict[str, Any]] = (),
               earlier: list[tuple[str, Any]] = ()) -> Case:
    """A case whose block is validated by every Anthropic SDK type of its type (response and
    request, stable and beta), placed after ``before`` in its message, after ``earlier`` messages."""
    kind = block["type"]
    types = _by_tag(A_UNIONS, kind) or [m for m in A_RESULT_CONTENT if sb.tag(m) == kind]
    assert types, f"no SDK type for {kind}"
    return Case("anthropic-messages", key, [*earlier, (role, [*before, block])], [(t, block) for t in types])


USE = {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Paris"}}


def _server(name: str, call_id: str) -> dict[str, Any]:
    return {"type": "server_tool_use", "id": call_id, "name": name, "input": {"query": "asif"}}


def _result_content(block: dict[str, Any]) -> Case:
    """A block that only appears in tool_result content."""
    result = {"type": "tool_result", "tool_use_id": "toolu_01", "content": [block]}
    case = _anthropic(block["type"], block, role="user")
    case.messages = [("assistant", [USE]), ("user", [result])]
    case.sdk.append((at.ToolResultBlockParam, result))
    return case


def _source(kind: str, source: dict[str, Any]) -> Case:
    block = {"type": kind, "source": source}
    return _anthropic(f"{kind}/{source['type']}", block, role="user", before=[{"type": "text", "text": "see"}])


ANTHROPIC = [
    _anthropic("text", {"type": "text", "text": "It is sunny.", "citations": [
        {"type": "char_location", "cited_text": "sunny", "document_index": 0, "document_title": "Forecast",
         "start_char_index": 0, "end_char_index": 5}]}),
    _anthropic("thinking", {"type": "thinking", "thinking": "The user wants weather.", "signature": "EqQBCgIYAh"}),
    _anthropic("redacted_thinking", {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"}),
    _source("image", {"type": "base64", "media_type": "image/png", "data": PNG}),
    _source("image", {"type": "url", "url": "https://example.com/a.png"}),
    _source("image", {"type": "file", "file_id": "file_011CNha8iCJcU1wXNR6q4V8w"}),
    _source("document", {"type": "base64", "media_type": "application/pdf", "data": PDF}),
    _source("document", {"type": "text", "media_type": "text/plain", "data": "Plain notes."}),
    _source("document", {"type": "content", "content": [{"type": "text", "text": "Chunk one."}]}),
    _source("document", {"type": "url", "url": "https://example.com/a.pdf"}),
    _source("document", {"type": "file", "file_id": "file_011CPMxVD3fHLUhvTqtsQA5w"}),
    _anthropic("search_result", {"type": "search_result", "source": "https://example.com/kb", "title": "KB",
                                 "content": [{"type": "text", "text": "The answer is 42."}]}, role="user"),
    _anthropic("container_upload", {"type": "container_upload", "file_id": "file_011CQ"}, role="user"),
    _anthropic("tool_use", USE),
    _anthropic("server_tool_use", _server("web_search", "srvtoolu_01")),
    _anthropic("mcp_tool_use", {"type": "mcp_tool_use", "id": "mcptoolu_01", "name": "echo", "server_name": "tools",
                                "input": {"text": "hi"}}),
    _anthropic("tool_result", {"type": "tool_result", "tool_use_id": "toolu_01", "content": "18 degrees",
                               "is_error": False}, role="user", earlier=[("assistant", [USE])]),
    _anthropic("mcp_tool_result", {"type": "mcp_tool_result", "tool_use_id": "mcptoolu_01", "is_error": False,
                                   "content": [{"type": "text", "text": "hi"}]},
               before=[{"type": "mcp_tool_use", "id": "mcptoolu_01", "name": "echo", "server_name": "tools",
                        "input": {"text": "hi"}}]),
    _anthropic("web_search_tool_result", {
        "type": "web_search_tool_result", "tool_use_id": "srvtoolu_01",
        "content": [{"type": "web_search_result", "url": "https://example.com", "title": "Example",
                     "encrypted_content": "EqgfCioIARgBIiQ", "page_age": "2 days"}]},
        before=[_server("web_search", "srvtoolu_01")]),
    _anthropic("web_fetch_tool_result", {
        "type": "web_fetch_tool_result", "tool_use_id": "srvtoolu_02",
        "content": {"type": "web_fetch_result", "url": "https://example.com/page",
                    "content": {"type": "document", "source": {"type": "text", "media_type": "text/plain",
                                                               "data": "Page text."}}}},
        before=[_server("web_fetch", "srvtoolu_02")]),
    _anthropic("code_execution_tool_result", {
        "type": "code_execution_tool_result", "tool_use_id": "srvtoolu_03",
        "content": {"type": "code_execution_result", "stdout": "4\n", "stderr": "", "return_code": 0, "content": []}},
        before=[_server("code_execution", "srvtoolu_03")]),
    _anthropic("bash_code_execution_tool_result", {
        "type": "bash_code_execution_tool_result", "tool_use_id": "srvtoolu_04",
        "content": {"type": "bash_code_execution_tool_result_error", "error_code": "unavailable"}},
        before=[_server("bash_code_execution", "srvtoolu_04")]),
    _anthropic("text_editor_code_execution_tool_result", {
        "type": "text_editor_code_execution_tool_result", "tool_use_id": "srvtoolu_05",
        "content": {"type": "text_editor_code_execution_view_result", "content": "print(1)\n", "file_type": "text"}},
        before=[_server("text_editor_code_execution", "srvtoolu_05")]),
    _anthropic("tool_search_tool_result", {
        "type": "tool_search_tool_result", "tool_use_id": "srvtoolu_06",
        "content": {"type": "tool_search_tool_search_result",
                    "tool_references": [{"type": "tool_reference", "tool_name": "get_weather"}]}},
        before=[_server("tool_search_tool_regex", "srvtoolu_06")]),
    _anthropic("advisor_tool_result", {
        "type": "advisor_tool_result", "tool_use_id": "srvtoolu_07",
        "content": {"type": "advisor_tool_result_error", "error_code": "unavailable"}},
        before=[_server("advisor", "srvtoolu_07")]),
    _anthropic("compaction", {"type": "compaction", "content": "Summary of the earlier turns."},
               before=[{"type": "text", "text": "Continuing."}]),
    _anthropic("fallback", {"type": "fallback", "from": {"model": "claude-opus-5-5"},
                            "to": {"model": "claude-sonnet-5-5"}, "trigger": {"type": "refusal"}},
               before=[{"type": "text", "text": "Answer."}]),
    _anthropic("mcp_tool_listing", {"type": "mcp_tool_listing", "mcp_server_name": "tools", "tools": [
        {"name": "echo", "input_schema": {"type": "object"}}]}, before=[{"type": "text", "text": "Tools."}]),
    _anthropic("tool_addition", {"type": "tool_addition", "tool": {"type": "tool_reference", "name": "echo"}},
               role="user", before=[{"type": "text", "text": "Added."}]),
    _anthropic("tool_removal", {"type": "tool_removal", "tool": {"type": "tool_reference", "name": "echo"}},
               role="user", before=[{"type": "text", "text": "Removed."}]),
    _result_content({"type": "tool_reference", "tool_name": "get_weather"}),
    _result_content({"type": "browser_state", "tabs": [{"tab_id": "t1", "url": "https://example.com",
                                                        "title": "Example", "active": True}]}),
]
_MESSAGE = {"id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [{"type": "text", "text": "Hello.", "citations": None}, USE],
            "stop_reason": "tool_use", "stop_sequence": None,
            "usage": {"input_tokens": 12, "output_tokens": 7}}
ANTHROPIC.append(Case("anthropic-messages", "message.Message", [("assistant", _MESSAGE)], [(at.Message, _MESSAGE)]))


def _openai(key: str, message: dict[str, Any], *, role: str = "assistant", earlier: list[tuple[str, Any]] = (),
            sdk: Any = None) -> Case:
    types = [sdk] if sdk is not None else _by_tag((oc.ChatCompletionMessageParam,), message["role"], "role")
    return Case("openai-chat", key, [*earlier, (role, message)], [(t, message) for t in types])


CALL = {"id": "call_01", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}
_RESPONSE = {"content": "It is sunny [1].", "refusal": None, "role": "assistant", "annotations": [
    {"type": "url_citation", "url_citation": {"start_index": 12, "end_index": 15, "title": "Forecast",
                                              "url": "https://example.com/forecast"}}],
    "audio": None, "function_call": None, "tool_calls": [CALL]}
_AUDIO = {"content": None, "role": "assistant", "audio": {"id": "audio_01", "data": WAV, "expires_at": 1767225600,
                                                          "transcript": "It is sunny."}}

OPENAI = [
    # (a name: without it, text parts only are also an Anthropic message, read as such, see test_dialects)
    _openai("text", {"role": "user", "name": "ann", "content": [{"type": "text", "text": "Weather?"},
                                                                {"type": "text", "text": "In Paris."}]}, role="user"),
    _openai("refusal", {"role": "assistant", "content": [{"type": "text", "text": "Well."},
                                                         {"type": "refusal", "refusal": "I can't help."}]}),
    _openai("image_url", {"role": "user", "content": [
        {"type": "text", "text": "see"}, {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
        {"type": "image_url", "image_url": {"url": "https://example.com/a.png", "detail": "low"}}]}, role="user"),
    _openai("input_audio", {"role": "user", "content": [
        {"type": "text", "text": "hear"}, {"type": "input_audio", "input_audio": {"data": WAV, "format": "wav"}}]},
        role="user"),
    _openai("file", {"role": "user", "content": [
        {"type": "text", "text": "read"},
        {"type": "file", "file": {"file_data": f"data:application/pdf;base64,{PDF}", "filename": "a.pdf"}},
        {"type": "file", "file": {"file_id": "file-abc123"}}]}, role="user"),
    _openai("message.refusal", {"role": "assistant", "content": None, "refusal": "I can't help with that."}),
    _openai("message.annotations", dict(_RESPONSE, tool_calls=None), sdk=oc.ChatCompletionMessage),
    _openai("message.audio", _AUDIO, sdk=oc.ChatCompletionMessage),
    _openai("function", {"role": "assistant", "content": None, "tool_calls": [CALL]}),
    _openai("custom", {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_02", "type": "custom", "custom": {"name": "sql", "input": "SELECT 1"}}]}),
    _openai("message.function_call", {"role": "assistant", "content": None,
                                      "function_call": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}),
    _openai("tool message", {"role": "tool", "tool_call_id": "call_01",
                             "content": [{"type": "text", "text": "18 degrees"}]},
            role="tool", earlier=[("assistant", {"role": "assistant", "content": None, "tool_calls": [CALL]})]),
    _openai("function message", {"role": "function", "name": "get_weather", "content": "18 degrees"}, role="tool",
            earlier=[("assistant", {"role": "assistant", "content": None,
                                    "function_call": {"name": "get_weather", "arguments": '{"city": "Paris"}'}})]),
    _openai("developer message", {"role": "developer", "content": "Be brief."}, role="user"),
    _openai("system message", {"role": "system", "content": [{"type": "text", "text": "Be brief."}]}, role="user"),
    _openai("user message", {"role": "user", "content": "Hello", "name": "ann"}, role="user"),
    _openai("assistant message", {"role": "assistant", "content": "Let me look.", "tool_calls": [CALL]}),
    _openai("message.ChatCompletionMessage", _RESPONSE, sdk=oc.ChatCompletionMessage),
]
CASES = ANTHROPIC + OPENAI


# --- the SDKs' unions, enumerated at run time -------------------------------------------------


def _keys(dialect: str) -> set[str]:
    return {c.key for c in CASES if c.dialect == dialect}


def test_every_sdk_block_type_has_a_case():
    """A block type an SDK release adds fails here, until a case and a table entry cover it."""
    keys = _keys("anthropic-messages")
    blocks = {k.split("/")[0] for k in keys}
    for union in A_UNIONS:
        assert sb.uncovered(union, blocks) == set(), union
    assert {sb.tag(m) for m in A_RESULT_CONTENT} <= blocks
    for kind, union in A_SOURCES.items():
        assert sb.uncovered(union, {k.split("/")[1] for k in keys if k.startswith(f"{kind}/")}) == set(), kind
    keys = _keys("openai-chat")
    assert sb.uncovered(oc.ChatCompletionContentPartParam, keys) == set()
    assert sb.tag(oc.ChatCompletionContentPartRefusalParam) in keys
    assert sb.uncovered(oc.ChatCompletionMessageToolCallUnionParam, keys) == set()
    assert sb.uncovered(oc.ChatCompletionMessageToolCallUnion, keys) == set()
    roles = {k.removesuffix(" message") for k in keys if k.endswith(" message")}
    assert sb.uncovered(oc.ChatCompletionMessageParam, roles, "role") == set()
    # the response message's fields: content, role and tool_calls are the message itself
    assert set(oc.ChatCompletionMessage.model_fields) - {"content", "role", "tool_calls"} \
        <= {k.removeprefix("message.") for k in keys}


def test_the_table_and_the_cases_name_the_same_block_types():
    for dialect in ("anthropic-messages", "openai-chat"):
        assert set(TABLE[dialect]["blocks"]) == _keys(dialect), dialect


def test_the_sdk_enumeration_sees_nested_unions_and_discriminated_ones():
    tags = [sb.tag(m) for m in sb.members(at.ContentBlock)]
    assert tags[:4] == ["text", "thinking", "redacted_thinking", "tool_use"] and len(tags) == len(set(tags))
    with pytest.raises(Exception):  # noqa: B017 - the SDK's own validation error, whatever its class
        sb.instance(at.TextBlockParam, {"type": "text"})
    with pytest.raises(KeyError):
        sb.instance(at.TextBlockParam, {"type": "text", "text": "a", "unknown_key": 1})


# --- each block: its mapping, nothing silent, exact round trip, edits travel ------------------


def _ids(case: Case) -> list[str]:
    return [f"m{k}" for k in range(1, len(case.messages) + 1)]


def _events(doc: dict[str, Any], mid: str) -> list[dict[str, Any]]:
    return [e for e in doc["events"] if e["id"] == mid or e["id"].startswith(f"{mid}/")]


def _becomes(part: dict[str, Any]) -> str:
    if part["kind"] == "structured":
        return "reasoning" if part["schema"] == REASONING else "structured"
    return part["kind"]


def _what(events: list[dict[str, Any]]) -> set[str]:
    """What a message became: its parts' kinds, the results' parts', and call / result events."""
    out = set()
    for e in events:
        out |= {_becomes(p) for p in e["data"].get("parts", ())}
        out |= {"call"} if e["kind"] == "tool_call" else {"result"} if e["kind"] == "tool_result" else set()
    return out


_VISIBLE = ("text", "thinking", "refusal", "transcript", "cited_text", "content", "input")


def _visible(value: Any) -> list[str]:
    """The strings a person reads in a block: texts, reasoning, refusals, transcripts."""
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in ([v] if k in _VISIBLE and isinstance(v, str) else _visible(v))]
    if isinstance(value, list):
        return [s for v in value for s in _visible(v)]
    return []


@pytest.fixture(scope="module", params=CASES, ids=lambda c: f"{c.dialect}:{c.key}")
def converted(request: pytest.FixtureRequest) -> tuple[Case, dict[str, Any], Any]:
    case = request.param
    for sdk_type, value in case.sdk:
        sb.instance(sdk_type, value)  # an instance of the SDK's own type
    src = sb.export(*case.messages)
    return case, src, convert(json.dumps(src).encode(), to="asif")


def test_block_maps_as_the_table_says(converted):
    case, src, out = converted
    doc, entry = out.document, TABLE[case.dialect]["blocks"][case.key]
    mid = _ids(case)[-1]
    events = _events(doc, mid)
    assert {e["extensions"]["agent-continuity/1"]["dialect"] for e in events if e["id"] == mid} == {case.dialect}
    assert entry["maps"] in _what(events)
    opaque = [loss for loss in doc["losses"] if loss["id"].startswith("translation:dialect-opaque-block:")]
    if entry["maps"] == "opaque":
        block = case.key.split("/")[0]
        (loss,) = opaque
        assert loss["id"].endswith(f":{case.dialect}/{block}") and f"{case.dialect}/{block}" in loss["explanation"]
        assert loss["references"] == [{"type": "event", "id": mid}]
    else:
        assert opaque == [], "nothing beside the block under test is opaque"


def test_no_visible_string_is_silent(converted):
    """Every text a person reads in the content is in the ASIF data of its message's events, or
    in a resource they name (an opaque block's is reported as a loss, tested above)."""
    case, src, out = converted
    doc = out.document
    for mid, message in zip(_ids(case), src["messages"], strict=True):
        events = _events(doc, mid)
        named = {p["resource_id"] for e in events for p in e["data"].get("parts", ()) if "resource_id" in p}
        seen = json.dumps([e["data"] for e in events], ensure_ascii=False) + "".join(
            r.get("text", "") for r in doc["resources"] if r["id"] in named)
        for text in _visible(message["content_json"]):
            assert json.dumps(text, ensure_ascii=False)[1:-1] in seen, (mid, text)
    assert unseen(src, doc) == []  # the corpus's rule too: every text seen, or a loss names its record


def test_round_trip_is_exact(converted):
    case, src, out = converted
    assert convert(out.output, to="continuity").document == src


def _edit(doc: dict[str, Any], mids: list[str]) -> None:
    """Change every text part and every call's arguments of these messages."""
    for mid in mids:
        for e in _events(doc, mid):
            data = e["data"]
            for p in [*data.get("parts", ())]:
                if p["kind"] == "text":
                    p["text"] += " (edited)"
            if e["kind"] == "tool_call":
                args = data["arguments"]
                data["arguments"] = args + " (edited)" if isinstance(args, str) else {"edited": args}
                data["arguments_status"] = "complete"


def _mapped(doc: dict[str, Any], mids: list[str]) -> list[Any]:
    return [(e["id"], e["kind"], [p.get("text") for p in e["data"].get("parts", ())], e["data"].get("arguments"))
            for mid in mids for e in _events(doc, mid)]


def test_edits_travel(converted):
    """Edited texts and arguments come back: ASIF (edited) -> continuity -> ASIF maps them again."""
    case, src, out = converted
    doc = json.loads(out.output)
    _edit(doc, _ids(case))
    back = convert(json.dumps(doc).encode(), to="continuity")
    again = convert(back.output, to="asif").document
    assert _mapped(again, _ids(case)) == _mapped(doc, _ids(case))


def _dumped(case: Case) -> list[tuple[str, Any]] | None:
    """The case's messages with the block under test as the SDK's response model dumps it
    (``to_dict()``: the SDK's key order, its nulls), or None when no response model types it."""
    role, content = case.messages[-1]
    for sdk_type, value in case.sdk:
        if isinstance(sdk_type, type) and issubclass(sdk_type, sb.pydantic.BaseModel):
            dump = sb.instance(sdk_type, value)
            if content == value:
                return [*case.messages[:-1], (role, dump)]
            if isinstance(content, list) and value in content:
                return [*case.messages[:-1], (role, [dump if b == value else b for b in content])]
    return None


DUMPED = [c for c in CASES if _dumped(c) is not None]


@pytest.mark.parametrize("case", DUMPED, ids=lambda c: f"{c.dialect}:{c.key}")
def test_response_model_dumps_map_the_same_and_round_trip(case):
    """What a runtime stores from a response is the SDK's dump of it: the same mapping, nothing
    unseen, exact."""
    src = sb.export(*_dumped(case))
    out = convert(json.dumps(src).encode(), to="asif")
    mid = _ids(case)[-1]
    assert TABLE[case.dialect]["blocks"][case.key]["maps"] in _what(_events(out.document, mid))
    assert unseen(src, out.document) == []
    assert convert(out.output, to="continuity").document == src


def test_the_response_models_are_exercised():
    assert len(DUMPED) >= 20


# --- legacy function messages: the result of the function_call just before them ---------------

_LEGACY_CALL = {"role": "assistant", "content": None,
                "function_call": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
_LEGACY_RESULT = {"role": "function", "name": "get_weather", "content": "18 degrees"}


@pytest.mark.parametrize("messages", [
    [("tool", _LEGACY_RESULT)],  # no call before it
    [("assistant", dict(_LEGACY_CALL, function_call={"name": "get_time", "arguments": "{}"})),
     ("tool", _LEGACY_RESULT)],  # a call of another function
    [("assistant", _LEGACY_CALL), ("tool", _LEGACY_RESULT), ("tool", _LEGACY_RESULT)],  # the second answers none
    [("assistant", _LEGACY_CALL), ("assistant", {"role": "assistant", "content": None, "tool_calls": [CALL]}),
     ("tool", _LEGACY_RESULT)],  # another call came after it
], ids=["no-call", "other-function", "answered", "not-the-last-call"])
def test_a_function_message_that_answers_no_call_stays_a_message(messages):
    src = sb.export(*messages)
    out = convert(json.dumps(src).encode(), to="asif")
    last = _events(out.document, f"m{len(messages)}")
    assert [(e["kind"], e["data"]["parts"][0]["text"]) for e in last] == [("message", "18 degrees")]
    assert convert(out.output, to="continuity").document == src


def test_a_function_message_is_the_result_of_the_function_call_before_it():
    src = sb.export(("assistant", _LEGACY_CALL), ("tool", dict(_LEGACY_RESULT, content=None)))
    doc = convert(json.dumps(src).encode(), to="asif").document
    (result,) = _events(doc, "m2")
    assert (result["kind"], result["data"]["call_id"], result["data"]["outcome"], result["data"]["parts"]) \
        == ("tool_result", "m1/function_call", "unknown", [])
    assert convert(json.dumps(doc).encode(), to="continuity").document == src


def test_an_edited_function_name_and_result_reach_the_function_message():
    src = sb.export(("assistant", _LEGACY_CALL), ("tool", _LEGACY_RESULT))
    doc = convert(json.dumps(src).encode(), to="asif").document
    (call,) = _events(doc, "m1")
    (result,) = _events(doc, "m2")
    call["data"]["tool_id"] = "get_forecast"
    result["data"]["parts"][0]["text"] = "19 degrees"
    back = convert(json.dumps(doc).encode(), to="continuity", options=Options(residual=False))
    assert back.document["messages"][1]["content_json"] == {"role": "function", "name": "get_forecast",
                                                             "content": "19 degrees"}
    again = convert(back.output, to="asif").document
    assert [(e["kind"], e["data"]["call_id"]) for e in _events(again, "m2")] == [("tool_result", "m1/function_call")]
