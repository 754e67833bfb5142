"""``asif-convert request``: a captured session as each provider's request body, typed by the
providers' own SDKs, the recorded conversation kept (or a loss names what is not), each API's
pairing and alternation rules held, bad input refused with the path and a hint."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import asif_convert
from asif_convert import InvalidInput, LossPolicyError, Options, RequestRefused, UsageError, ir
from asif_convert._registry import loss_kinds
from asif_convert._request.api import PROVIDERS
from asif_convert._request.selection import Input, Selection
from tests import sdk_blocks as sb
from tests.request_rules import TARGETS, check_body, check_rules, conversation
from tests.test_sdk_anthropic_openai_chat import CASES
from tests.test_sdk_responses_google import _GOOGLE, _RESPONSES, _google_export, _responses_export, _turns

# --- the block catalogue, recorded in each dialect, rendered for each target ----------------------

CORPUS_ASIF = Path(__file__).parent.parent / "corpus" / "asif"
CATALOGUE: dict[str, dict[str, Any]] = {f"{c.dialect}:{c.key}": sb.export(*c.messages) for c in CASES}
CATALOGUE |= {f"openai-responses:{k}": _responses_export(k, "to_dict", True)[0] for k in sorted(_RESPONSES)}
CATALOGUE |= {f"google-genai:{k}": _google_export(k, False) for k in sorted(_GOOGLE)}


def _opened(export: dict[str, Any]) -> dict[str, Any]:
    """A recorded export with a user turn before its first message, as a conversation opens (Gen AI
    leaves out a model turn before any user turn)."""
    first = {**export["messages"][0], "message_id": "m0", "role": "user", "text_content": "go", "sequence": 1}
    first.pop("content_json", None)
    later = [{**m, "sequence": m["sequence"] + 1} for m in export["messages"]]
    return {**export, "messages": [first, *later]}


def _request(doc: dict[str, Any], target: str, **kw: Any) -> asif_convert.RequestResult:
    return asif_convert.request(json.dumps(doc).encode(), provider=target, **kw)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dialect", TARGETS)
def test_every_catalogue_block_renders_as_the_sdk_types_it(dialect, target):
    """Sessions recorded in each dialect (every block type its SDK has), for each target: the
    body is what the target's SDK create call takes, key for key, and its rules hold."""
    cases = {k: v for k, v in CATALOGUE.items() if k.startswith(f"{dialect}:")}
    assert len(cases) > 10
    for key, doc in cases.items():
        try:
            result = _request(doc, target, pending="as-error")
        except (InvalidInput, RequestRefused) as exc:  # only a history with nothing to continue from (on this target)
            assert "has no message, tool call or tool result" in str(exc.problems) \
                or "nothing is left to continue from" in str(exc.problems), key
            continue
        try:
            check_body(target, result.body)
            check_rules(target, result.body)
        except AssertionError as exc:
            raise AssertionError(f"{key} -> {target}: {exc}") from None
        assert {loss.kind for loss in result.losses} <= set(loss_kinds()), key
        assert all(loss.stage == "translation" for loss in result.losses)


@pytest.mark.parametrize(("target", "body"), [
    ("anthropic-messages", {"messages": [{"role": "user", "content": [{"type": "text", "text": "a", "txt": 1}]}]}),
    ("anthropic-messages", {"messages": [{"role": "user", "content": "a"}], "tool": []}),
    ("openai-chat", {"messages": [{"role": "tool", "content": "a"}]}),
    ("openai-chat", {"messages": [{"role": "assistant", "content": None,
                                   "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f"}}]}]}),
    ("openai-responses", {"input": [{"type": "function_call_output", "call_id": "c", "outputs": "a"}]}),
    ("google-genai", {"contents": [{"role": "user", "parts": [{"txt": "a"}]}]}),
    ("google-genai", {"contents": [], "config": {"system_instructions": "a"}}),
])
def test_the_validation_catches_a_wrong_key(target, body):
    with pytest.raises(Exception):  # noqa: B017 - the SDK's validation error or our key check
        check_body(target, body)


# --- server tools and citations: the recording API's own blocks, text (a loss) for any other -----

# catalogue entries whose server tool blocks or citations the recording API's request takes back,
# with the block types (or keys) its body holds for them
NATIVE: dict[str, set[str]] = {
    **{f"anthropic-messages:{k}": {"server_tool_use", k} for k in (
        "web_search_tool_result", "web_fetch_tool_result", "code_execution_tool_result",
        "bash_code_execution_tool_result", "text_editor_code_execution_tool_result", "tool_search_tool_result")},
    "anthropic-messages:text": {"citations"},
    "openai-responses:response_function_web_search.ResponseFunctionWebSearch": {"web_search_call"},
    "openai-responses:response_file_search_tool_call.ResponseFileSearchToolCall": {"file_search_call"},
    "openai-responses:response_code_interpreter_tool_call.ResponseCodeInterpreterToolCall": {"code_interpreter_call"},
    "openai-responses:response_input_item.ImageGenerationCall": {"image_generation_call"},
    "google-genai:code_execution_result": {"executable_code", "code_execution_result"},
}
# entries that stay text with a loss even for their own API: a beta's block (advisor), a call with
# no recorded result (its synthesized error is no result block), an MCP server's tools, and
# citations the API takes in no request place (Chat) or only on an output message whose id and
# status the IR does not hold (Responses)
STAYS: dict[str, str] = {
    "anthropic-messages:advisor_tool_result": "server_tool_as_text",
    "anthropic-messages:server_tool_use": "server_tool_as_text",
    "anthropic-messages:mcp_tool_result": "server_tool_as_text",
    "google-genai:executable_code": "server_tool_as_text",
    "google-genai:tool_response": "server_tool_as_text",
    "openai-responses:response_input_item.McpCall": "server_tool_as_text",
    "openai-chat:message.annotations": "citations_dropped",
    "openai-responses:response_output_message.ResponseOutputMessage": "citations_dropped",
}
_KIND = {key: "citations_dropped" if want == {"citations"} else "server_tool_as_text" for key, want in NATIVE.items()}


def _keys(value: Any) -> set[str]:
    """Every block type and key a body holds, at any depth."""
    if isinstance(value, dict):
        return {*value, *(str(value["type"]) for _ in (0,) if isinstance(value.get("type"), str))} | {
            k for v in value.values() for k in _keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _keys(v)}
    return set()


def _checked(key: str, target: str) -> asif_convert.RequestResult:
    """A catalogue session rendered for ``target``, its body checked against the SDK's types and the API's rules."""
    result = _request(_opened(CATALOGUE[key]), target, pending="as-error")
    check_body(target, result.body)
    check_rules(target, result.body)
    return result


@pytest.mark.parametrize("key", sorted(NATIVE))
def test_server_tool_blocks_and_citations_go_back_natively_to_the_api_that_recorded_them(key):
    result = _checked(key, key.split(":")[0])
    assert NATIVE[key] <= _keys(result.body), sorted(_keys(result.body))
    kinds = {loss.kind for loss in result.losses}
    assert not kinds & {"server_tool_as_text", "citations_dropped"}, kinds
    assert "[result (" not in json.dumps(result.body)  # nothing of them as text


@pytest.mark.parametrize("key", sorted(NATIVE))
@pytest.mark.parametrize("target", TARGETS)
def test_another_api_gets_them_as_text_with_a_loss(key, target):
    if key.startswith(f"{target}:"):
        return
    result = _checked(key, target)
    assert _KIND[key] in {loss.kind for loss in result.losses}
    native = NATIVE[key] - {"citations"} if target != "anthropic-messages" else NATIVE[key]
    assert not native & _keys(result.body) - {"text"}, native & _keys(result.body)


@pytest.mark.parametrize("key", sorted(STAYS))
def test_what_no_request_block_holds_stays_text_with_a_loss_even_for_its_own_api(key):
    result = _checked(key, key.split(":")[0])
    assert STAYS[key] in {loss.kind for loss in result.losses}


@pytest.mark.parametrize("key", ["anthropic-messages:web_search_tool_result", "google-genai:code_execution_result"])
def test_the_asif_form_still_knows_which_api_recorded_them(key):
    """The dialect a message was read from travels in the ASIF document (the continuity reader's
    native data), so a request from the converted session maps them the same."""
    dialect = key.split(":")[0]
    asif = asif_convert.convert(json.dumps(_opened(CATALOGUE[key])).encode(), to="asif").document
    assert _request(asif, dialect, pending="as-error").body == _request(_opened(CATALOGUE[key]), dialect,
                                                                        pending="as-error").body


def test_a_server_result_not_right_after_its_call_stays_text():
    """Anthropic wants a server_tool_use answered in its turn; a history that moved the result
    away (an edit) is not put back together as blocks it never was."""
    use = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "q"}}
    found = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []}
    apart = sb.export(("assistant", [use]), ("assistant", [{"type": "text", "text": "searching"}]),
                      ("assistant", [found]))
    result = _request(apart, "anthropic-messages")
    assert "server_tool_as_text" in {loss.kind for loss in result.losses}
    check_rules("anthropic-messages", result.body)
    together = sb.export(("assistant", [use, found]), ("assistant", [{"type": "text", "text": "found"}]))
    body = _request(together, "anthropic-messages").body
    assert [b["type"] for b in body["messages"][0]["content"]] == ["server_tool_use", "web_search_tool_result", "text"]


def test_citations_of_another_api_are_a_loss_and_null_citations_none():
    cited = _opened(CATALOGUE["anthropic-messages:text"])
    for target in TARGETS[1:]:
        result = _request(cited, target)
        assert "char_location" not in json.dumps(result.body)
        assert [loss.kind for loss in result.losses] == ["citations_dropped"], target
    null = _opened(sb.export(("assistant", [{"type": "text", "text": "a", "citations": None}])))
    for target in TARGETS:
        result = _request(null, target)
        assert "citations" not in json.dumps(result.body) and not result.losses, target


@pytest.mark.parametrize("message", [
    {"role": "assistant", "content": [{"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {}}]},
    {"role": "assistant", "content": [{"type": "web_search_tool_result", "tool_use_id": "s1", "content": []},
                                      {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {}}]},
    {"role": "user", "content": [{"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {}},
                                 {"type": "web_search_tool_result", "tool_use_id": "s1", "content": []}]},
])
def test_the_rules_catch_a_server_tool_use_not_answered_in_its_turn(message):
    with pytest.raises(AssertionError):
        check_rules("anthropic-messages", {"messages": [{"role": "user", "content": [{"type": "text", "text": "q"}]},
                                                        message]})


# --- generated sessions in each dialect ----------------------------------------------------------

_WORDS = st.text(alphabet="abcdefgh xyz", min_size=1, max_size=12).filter(str.strip)
_ARGS = st.dictionaries(st.sampled_from(["a", "b", "city"]), st.integers(0, 9) | _WORDS, max_size=2)


@st.composite
def sessions(draw: Any, odd_ids: bool = False) -> list[tuple[Any, ...]]:
    """A conversation: ("user", text), ("assistant", text | None, calls), ("results", results),
    with calls (id, name, arguments) and results (id, text, error), each call answered."""
    turns: list[tuple[Any, ...]] = [("user", draw(_WORDS))]
    n = 0
    for _ in range(draw(st.integers(0, 3))):
        calls = []
        for _ in range(draw(st.integers(0, 2))):
            n += 1
            cid = f"call {n}.x" if odd_ids and draw(st.booleans()) else f"call_{n}"
            calls.append((cid, draw(st.sampled_from(["get_weather", "search"])), draw(_ARGS)))
        text = draw(_WORDS) if not calls or draw(st.booleans()) else None
        turns.append(("assistant", text, calls))
        if calls:
            turns.append(("results", [(c[0], draw(_WORDS), draw(st.booleans())) for c in calls]))
        turns.append(("user", draw(_WORDS)))
    return turns


def export_in(dialect: str, turns: list[tuple[Any, ...]]) -> dict[str, Any]:
    """The session recorded as a continuity export whose content_json is ``dialect``'s."""
    messages: list[tuple[str, Any]] = []
    names: dict[str, str] = {}
    for turn in turns:
        if turn[0] == "user":
            messages.append(("user", {
                "anthropic-messages": [{"type": "text", "text": turn[1]}],
                "openai-chat": {"role": "user", "content": turn[1]},
                "openai-responses": [{"type": "message", "role": "user",
                                      "content": [{"type": "input_text", "text": turn[1]}]}],
                "google-genai": {"role": "user", "parts": [{"text": turn[1]}]}}[dialect]))
        elif turn[0] == "assistant":
            _, text, calls = turn
            names |= {c[0]: c[1] for c in calls}
            if dialect == "anthropic-messages":
                content: Any = ([{"type": "text", "text": text}] if text else []) + [
                    {"type": "tool_use", "id": c[0], "name": c[1], "input": c[2]} for c in calls]
            elif dialect == "openai-chat":
                content = {"role": "assistant", "content": text}
                if calls:
                    content["tool_calls"] = [{"id": c[0], "type": "function", "function": {
                        "name": c[1], "arguments": json.dumps(c[2])}} for c in calls]
            elif dialect == "openai-responses":
                content = ([{"type": "message", "role": "assistant",
                             "content": [{"type": "output_text", "text": text, "annotations": []}]}] if text else []) \
                    + [{"type": "function_call", "call_id": c[0], "name": c[1], "arguments": json.dumps(c[2])}
                       for c in calls]
            else:
                content = {"role": "model", "parts": ([{"text": text}] if text else []) + [
                    {"function_call": {"id": c[0], "name": c[1], "args": c[2]}} for c in calls]}
            messages.append(("assistant", content))
        else:
            results = turn[1]
            if dialect == "anthropic-messages":
                messages.append(("user", [{"type": "tool_result", "tool_use_id": i, "content": t,
                                           **({"is_error": True} if e else {})} for i, t, e in results]))
            elif dialect == "openai-chat":
                messages += [("tool", {"role": "tool", "tool_call_id": i, "content": t}) for i, t, _ in results]
            elif dialect == "openai-responses":
                messages.append(("tool", [{"type": "function_call_output", "call_id": i, "output": t}
                                          for i, t, _ in results]))
            else:
                messages.append(("user", {"role": "user", "parts": [
                    {"function_response": {"id": i, "name": names[i], "response": {"output": t}}}
                    for i, t, _ in results]}))
    if dialect in ("anthropic-messages", "google-genai"):  # their turns alternate: results and text are one
        merged: list[tuple[str, Any]] = []
        for role, content in messages:
            if merged and merged[-1][0] == role == "user":
                if dialect == "google-genai":
                    content = {"role": "user", "parts": merged[-1][1]["parts"] + content["parts"]}
                else:
                    content = merged[-1][1] + content
                merged[-1] = (role, content)
            else:
                merged.append((role, content))
        messages = merged
    return sb.export(*messages)


def expected(dialect: str, turns: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """What the session says, as ``conversation`` reads a body (an error flag only where the
    dialect records one)."""
    out: list[tuple[Any, ...]] = []
    for turn in turns:
        if turn[0] == "user":
            out.append(("text", "user", turn[1]))
        elif turn[0] == "assistant":
            out += [("text", "assistant", turn[1])] if turn[1] else []
            out += [("call", c[0], c[1], c[2]) for c in turn[2]]
        else:
            out += [("result", i, e and dialect == "anthropic-messages", t) for i, t, e in turn[1]]
    return out


# kinds a session recorded in a dialect may lose rendered for that dialect: the tools it calls are
@pytest.mark.parametrize("target", TARGETS)
def test_a_gemini_session_without_ids_continues_with_every_call_answered(target):
    """Gen AI calls and responses with no ids (how the API usually writes them) pair by name and
    order, so the session continues on every provider (a call with no result would be refused)."""
    doc = _turns(["weather", "time", "weather"], [("time", "noon"), ("weather", "sunny"), ("weather", "rain")])
    result = _request(doc, target)
    check_body(target, result.body)
    check_rules(target, result.body)
    got = conversation(target, result.body)
    calls = {e[1]: (e[2], e[3]["k"]) for e in got if e[0] == "call"}
    answers = sorted((calls[e[1]], e[3]) for e in got if e[0] == "result")  # (in the order the target wants)
    assert answers == [(("time", 1), "noon"), (("weather", 0), "sunny"), (("weather", 2), "rain")]


# known only by their calls (no schema), nothing of the conversation
_IDENTITY_LOSSES = {"synthesized_tool", "unknown_mapping"}


@pytest.mark.parametrize("dialect", TARGETS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(turns=sessions())
def test_a_session_rendered_for_its_own_dialect_gives_back_the_conversation(dialect, turns):
    result = _request(export_in(dialect, turns), dialect)
    check_body(dialect, result.body)
    check_rules(dialect, result.body)
    assert conversation(dialect, result.body) == expected(dialect, turns)
    assert {loss.kind for loss in result.losses} <= _IDENTITY_LOSSES, [loss.id for loss in result.losses]


def _fit(target: str, entry: tuple[Any, ...], ids: dict[str, str]) -> tuple[Any, ...]:
    """An entry as the target can say it: no error flag where it has none; an id another API
    wrote, as the target rewrote it (consistently: the same id everywhere)."""
    if entry[0] in ("call", "result") and entry[1] in ids:
        entry = (entry[0], ids[entry[1]], *entry[2:])
    if entry[0] == "result" and target in ("openai-chat", "openai-responses"):
        entry = (*entry[:2], False, entry[3])
    return entry


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dialect", TARGETS)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(turns=sessions(odd_ids=True))
def test_every_text_call_and_result_arrives_in_another_target(dialect, target, turns):
    result = _request(export_in(dialect, turns), target)
    check_body(target, result.body)
    check_rules(target, result.body)
    got = conversation(target, result.body)
    rewritten = {loss.id.rsplit(":", 1)[-1]: loss for loss in result.losses if loss.kind == "id_rewritten"}
    ids = {}
    for entry in got:
        if entry[0] == "call" and entry[1].startswith("call_") and entry[1] not in {e[1] for e in expected(
                dialect, turns) if e[0] == "call"}:
            original = next(o for o, loss in rewritten.items() if f"'{entry[1]}'" in loss.explanation)
            ids[original] = entry[1]
    want = [_fit(target, e, ids) for e in expected(dialect, turns)]
    assert got == want
    kinds = {loss.kind for loss in result.losses}
    if any(e[0] == "result" and e[2] for e in expected(dialect, turns)) and target.startswith("openai"):
        assert "outcome_adapted" in kinds  # the error flag the target cannot say is a loss
    if ids:
        assert "id_rewritten" in kinds and target == "anthropic-messages"


# --- mapping details -------------------------------------------------------------------------------


def test_reasoning_travels_to_its_own_api_only():
    doc = sb.export(("user", [{"type": "text", "text": "q"}]),
                    ("assistant", [{"type": "thinking", "thinking": "hmm", "signature": "sig"},
                                   {"type": "text", "text": "a"}]))
    own = _request(doc, "anthropic-messages").body
    assert own["messages"][1]["content"][0] == {"type": "thinking", "thinking": "hmm", "signature": "sig"}
    for target in TARGETS[1:]:
        result = _request(doc, target)
        assert "hmm" not in json.dumps(result.body)
        assert [loss.kind for loss in result.losses] == ["reasoning_dropped"]


def test_a_reasoning_item_is_sent_with_the_members_the_api_takes_only():
    """Codex records its own metadata beside a reasoning item it was given; the API refuses an
    input item member it does not define."""
    result = asif_convert.request(CORPUS_ASIF.parent / "codex" / "failing-command.jsonl", provider="openai-responses")
    check_body("openai-responses", result.body)  # (the SDK's types declare every member sent)
    [item] = [i for i in result.body["input"] if i["type"] == "reasoning"]
    assert item.keys() <= {"type", "id", "summary", "content", "encrypted_content", "status"}
    assert item["encrypted_content"]  # (what the API needs to continue its own reasoning)
    [loss] = [x for x in result.losses if x.kind == "member_dropped"]
    assert "internal_chat_message_metadata_passthrough" in loss.id


def _selection(*inputs: Input) -> Selection:
    document = ir.Document(capture=ir.Capture(id="c", producer=ir.Producer(name="p", version="1"),
                                              consistency="unknown", boundary="b"), session=ir.Session(id="s"))
    return Selection(document=document, branch_id="main", context_id=None, instructions=(), tools=(),
                     inputs=inputs, losses=())


def _message(iid: str, role: Any, text: str) -> Input:
    return Input(id=iid, kind="message", role=role, parts=(ir.TextPart(text=text),), source_events=())


def test_a_system_message_in_the_history_keeps_its_place_or_becomes_a_loss():
    selection = _selection(_message("e1", "system", "Be brief."), _message("e2", "user", "q"),
                           _message("e3", "assistant", "a"), _message("e4", "developer", "Now be long."))
    chat, chat_losses = PROVIDERS["openai-chat"](selection)
    assert [m["role"] for m in chat["messages"]] == ["system", "user", "assistant", "developer"]
    assert chat_losses == []
    anthropic, losses = PROVIDERS["anthropic-messages"](selection)
    assert anthropic["system"] == [{"type": "text", "text": "Be brief."}]
    assert anthropic["messages"][-1] == {"role": "user", "content": [{"type": "text", "text": "Now be long."}]}
    assert {loss.kind for loss in losses} == {"role_adapted"}
    assert {r.id for loss in losses for r in loss.references} == {"e1", "e4"}
    google, _ = PROVIDERS["google-genai"](selection)
    assert google["config"] == {"system_instruction": {"parts": [{"text": "Be brief."}]}}
    for target in TARGETS:
        body, _ = PROVIDERS[target](selection)
        check_body(target, body)
        check_rules(target, body)


def _call(iid: str, call_id: str) -> Input:
    return Input(id=iid, kind="tool_call", role="assistant", parts=(), source_events=(), call_id=call_id,
                 tool_id="t", arguments={}, arguments_status="complete")


def _answer(iid: str, call_id: str) -> Input:
    return Input(id=iid, kind="tool_result", role="tool", parts=(ir.TextPart(text="ok"),), source_events=(),
                 call_id=call_id, result_index=0, terminal=True, outcome="success")


def test_a_result_recorded_after_other_inputs_is_moved_after_its_call_with_a_loss():
    selection = _selection(_message("m1", "user", "q"), _call("c1", "k"), _call("c2", "j"), _answer("r2", "j"),
                           _message("m2", "assistant", "meanwhile"), _answer("r1", "k"), _message("m3", "user", "go"))
    for target in TARGETS:
        body, losses = PROVIDERS[target](selection)
        moved = [loss for loss in losses if loss.kind == "result_moved"]
        assert [r.id for loss in moved for r in loss.references] == ["r1"], target  # r2 was in its place
        check_body(target, body)
        check_rules(target, body)
    chat, _ = PROVIDERS["openai-chat"](selection)
    assert [(m["role"], m.get("tool_call_id")) for m in chat["messages"]] == [
        ("user", None), ("assistant", None), ("tool", "j"), ("tool", "k"), ("assistant", None), ("user", None)]


def test_a_tool_name_and_id_outside_the_api_syntax_are_fitted_consistently():
    doc = sb.export(("user", {"role": "user", "content": "q"}),
                    ("assistant", {"role": "assistant", "content": None, "tool_calls": [
                        {"id": "call:1", "type": "function", "function": {"name": "ns.tool", "arguments": "{}"}}]}),
                    ("tool", {"role": "tool", "tool_call_id": "call:1", "content": "ok"}))
    result = _request(doc, "anthropic-messages")
    use, answer = result.body["messages"][1]["content"][0], result.body["messages"][2]["content"][0]
    assert use["id"] == answer["tool_use_id"] != "call:1"
    assert use["name"] == result.body["tools"][0]["name"] != "ns.tool"
    assert {"id_rewritten", "name_rewritten"} <= {loss.kind for loss in result.losses}
    assert _request(doc, "anthropic-messages").body == result.body  # deterministic


def test_media_goes_as_each_api_takes_it():
    png = sb.export(("user", [{"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                           "data": "iVBORw0KGgo="}},
                              {"type": "text", "text": "what is it?"}]))
    bodies = {t: _request(png, t).body for t in TARGETS}
    assert bodies["anthropic-messages"]["messages"][0]["content"][0]["source"]["data"] == "iVBORw0KGgo="
    assert bodies["openai-chat"]["messages"][0]["content"][0] == {
        "type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
    assert bodies["openai-responses"]["input"][0]["content"][0]["image_url"] == "data:image/png;base64,iVBORw0KGgo="
    assert bodies["google-genai"]["contents"][0]["parts"][0] == {
        "inline_data": {"mime_type": "image/png", "data": "iVBORw0KGgo="}}


FILE_IDS = {  # a provider's file id, recorded in that provider's dialect
    "openai-responses": ("user", [{"role": "user", "content": [{"type": "input_text", "text": "read it"},
                                                                {"type": "input_file", "file_id": "file-123"}]}]),
    "anthropic-messages": ("user", [{"type": "text", "text": "read it"},
                                    {"type": "document", "source": {"type": "file", "file_id": "file_011"}}]),
    "google-genai": ("user", {"role": "user", "parts": [{"text": "read it"},
                                                        {"file_data": {"file_uri": "files/abc",
                                                                       "mime_type": "application/pdf"}}]}),
}


@pytest.mark.parametrize("recorded", sorted(FILE_IDS))
@pytest.mark.parametrize("target", TARGETS)
def test_a_file_id_goes_only_to_the_api_that_issued_it(recorded, target):
    result = _request(sb.export(FILE_IDS[recorded]), target)
    check_body(target, result.body)
    check_rules(target, result.body)
    text = json.dumps(result.body)
    issued_here = {recorded, target} <= {"openai-chat", "openai-responses"} or recorded == target
    value = {"openai-responses": "file-123", "anthropic-messages": "file_011", "google-genai": "files/abc"}[recorded]
    # (Gemini reads a file by URI only: a bare id is never a file_uri, not even its own)
    assert (value in text) == (issued_here and target != "google-genai"), text
    dropped = [loss.explanation for loss in result.losses if loss.kind == "part_dropped"]
    if value not in text:
        assert len(dropped) == 1, dropped
        assert "valid only at the API that issued it" in dropped[0] or "bare file id" in dropped[0]


@pytest.mark.parametrize("arguments", ["[1, 2]", "null", '"text"', "3"])
@pytest.mark.parametrize("target", TARGETS)
def test_arguments_that_are_no_object_are_adapted_with_a_loss_everywhere(target, arguments):
    doc = sb.export(("user", {"role": "user", "content": "q"}),
                    ("assistant", {"role": "assistant", "content": None, "tool_calls": [
                        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": arguments}}]}),
                    ("tool", {"role": "tool", "tool_call_id": "c1", "content": "ok"}))
    result = _request(doc, target)
    check_body(target, result.body)
    call = next(e for e in conversation(target, result.body) if e[0] == "call")
    value = json.loads(arguments)
    assert call[3] == ({} if value is None else {"value": value})
    assert "arguments_adapted" in {loss.kind for loss in result.losses}


@pytest.mark.parametrize("target", TARGETS)
def test_what_only_the_recorded_blocks_say_is_a_loss(target):
    """A Responses developer item folded into a user message, an Anthropic document's title: the
    reader keeps them in its record of the message, which no request is made of."""
    developer = sb.export(("user", [{"type": "message", "role": "developer", "content": "be brief"},
                                    {"role": "user", "content": [{"type": "input_text", "text": "hi"}]}]))
    losses = _request(developer, target).losses
    assert any(loss.kind == "role_adapted" and "developer item" in loss.explanation for loss in losses)
    titled = sb.export(("user", [{"type": "text", "text": "read"}, {"type": "document", "title": "Terms", "source": {
        "type": "base64", "media_type": "application/pdf", "data": "JVBERi0xLjQK"}}]))
    made = _request(titled, target)
    # the title is the document's name: sent where the API takes one, else a loss
    sent = {"anthropic-messages": '"title": "Terms"', "openai-chat": '"filename": "Terms"',
            "openai-responses": '"filename": "Terms"'}.get(target)
    if sent is not None:
        assert sent in json.dumps(made.body)
    else:
        assert any(loss.kind == "media_adapted" and "title" in loss.explanation for loss in made.losses)


def test_the_output_is_deterministic_and_the_policy_applies():
    reasoning = _opened(sb.export(("assistant", [{"type": "thinking", "thinking": "hmm", "signature": "s"},
                                                 {"type": "text", "text": "a"}])))
    for target in TARGETS:
        assert _request(reasoning, target).body == _request(reasoning, target).body
    with pytest.raises(LossPolicyError):
        _request(reasoning, "openai-chat", options=Options(fail_on=frozenset({"reasoning_dropped"})))
    with pytest.raises(UsageError, match="known providers: anthropic-messages, openai-chat"):
        _request(reasoning, "openai")


# --- the command -------------------------------------------------------------------------------------


def _run(cli: Any, *args: str) -> Any:
    return cli.invoke(asif_convert._cli.app.app, list(args))  # type: ignore[attr-defined]


@pytest.fixture
def session(tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(sb.export(
        ("user", {"role": "user", "content": "q"}),
        ("assistant", {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}))))
    return path


def test_the_command_writes_the_body_and_the_report(session, tmp_path):
    from typer.testing import CliRunner

    import asif_convert._cli.app  # noqa: F401
    out, report = tmp_path / "r.json", tmp_path / "l.json"
    run = _run(CliRunner(), "request", str(session), "--for", "openai-responses", "--pending", "as-error",
               "-o", str(out), "--report", str(report))
    assert run.exit_code == 0, run.output
    body = json.loads(out.read_text())
    assert [i["type"] for i in body["input"]] == ["message", "function_call", "function_call_output"]
    assert out.read_bytes() == asif_convert._jsonio.encode(  # type: ignore[attr-defined]
        _request(json.loads(session.read_text()), "openai-responses", pending="as-error").body)
    assert json.loads(report.read_text())["loss_counts"]["synthesized_result"] == 1
    assert "synthesized_result 1" in run.stderr


@pytest.mark.parametrize(("args", "code", "says"), [
    (["--for", "openai"], 2, "known providers: anthropic-messages"),
    (["--for", "openai-chat"], 1, "request refused\n  /messages/1: tool call 'c1'"),  # the export's own path
    (["--for", "openai-chat", "--pending", "drop", "--branch", "nope"], 1, "no branch 'nope'; known branches"),
    (["--for", "openai-chat", "--pending", "drop", "--context", "nope"], 1, "no context 'nope'"),
    (["--for", "openai-chat", "--pending", "drop", "--fail-on", "pending_call_dropped"], 4, "pending_call_dropped"),
])
def test_the_command_refuses_bad_input_with_the_path_and_a_hint(session, tmp_path, args, code, says):
    from typer.testing import CliRunner

    import asif_convert._cli.app  # noqa: F401
    out = tmp_path / "r.json"
    run = _run(CliRunner(), "request", str(session), *args, "-o", str(out))
    assert run.exit_code == code, run.output
    assert says in run.stderr
    assert not out.exists()  # nothing written on failure


def test_an_empty_or_broken_history_is_refused(tmp_path):
    from typer.testing import CliRunner

    import asif_convert._cli.app  # noqa: F401
    empty = tmp_path / "e.json"
    empty.write_text(json.dumps(sb.export()))
    run = _run(CliRunner(), "request", str(empty), "--for", "google-genai")
    assert run.exit_code == 1 and "has no message, tool call or tool result" in run.stderr
    broken = tmp_path / "b.json"
    broken.write_text("{not json")
    run = _run(CliRunner(), "request", str(broken), "--for", "google-genai")
    assert run.exit_code == 1 and str(broken.name) in run.stderr


# --- inputs no one writes on purpose: each gives a body the API takes, or a refusal ----------------


def _calls(*calls: tuple[str, str], answered: bool = True) -> dict[str, Any]:
    """An OpenAI Chat session: one assistant message calling (id, name) for each call, answered."""
    tool_calls = [{"id": cid, "type": "function", "function": {"name": name, "arguments": "{}"}}
                  for cid, name in calls]
    answers = [("tool", {"role": "tool", "tool_call_id": cid, "content": "ok"}) for cid, _ in calls] if answered else []
    return sb.export(("user", "go"), ("assistant", {"role": "assistant", "content": None, "tool_calls": tool_calls}),
                     *answers)


def test_two_calls_of_one_id_are_refused_naming_both():
    """An edited session whose two calls share an id: to every API they would be one call."""
    session = asif_convert.convert(json.dumps(_calls(("c1", "f"))).encode(), to="asif").document
    call = next(e for e in session["events"] if e["kind"] == "tool_call")
    last = max(e["sequence"] for e in session["events"])
    session["events"].append({**call, "id": "again", "sequence": last + 1})
    session["branches"][0]["event_ids"].append("again")
    session["branches"][0]["head_event_id"] = "again"
    for checkpoint in session["checkpoints"]:
        checkpoint["at_event_id"] = "again"
    with pytest.raises(InvalidInput, match="share the call id 'c1'"):
        asif_convert.request(json.dumps(session).encode(), provider="anthropic-messages", pending="as-error")


def test_a_chat_call_id_longer_than_chat_takes_is_rewritten_the_same_at_its_answer():
    long_id = "c" * 300
    body = _request(_calls((long_id, "f")), "openai-chat")
    call = body.body["messages"][1]["tool_calls"][0]["id"]
    assert len(call) <= 40 and body.body["messages"][2]["tool_call_id"] == call
    assert "id_rewritten" in {loss.kind for loss in body.losses}
    check_body("openai-chat", body.body)


def test_a_rewritten_tool_name_never_meets_another_tools_name():
    selection = _selection(_message("e1", "user", "q"))
    tools = (ir.Tool(id="a", name="my tool", description="", input_schema={"type": "object"}),
             ir.Tool(id="b", name="my_tool", description="", input_schema={"type": "object"}),
             ir.Tool(id="c", name="my_tool", description="", input_schema={"type": "object"}))
    selection = Selection(document=ir.Document(session=ir.Session(id="s"), tools=list(tools)), branch_id="main",
                          context_id=None, instructions=(), tools=tools, inputs=selection.inputs, losses=())
    for target in TARGETS:
        body, losses = PROVIDERS[target](selection)
        text = json.dumps(body)
        assert text.count('"my_tool"') == 1, target  # the tool's own name, once
        names = re.findall(r'"(my_tool[^"]*)"', text)
        assert len(names) == 3 and len(set(names)) == 3, (target, names)  # every tool defined, no name twice
        assert "name_rewritten" in {loss.kind for loss in losses}, target
        assert "tool_not_offered" not in {loss.kind for loss in losses}, target


@pytest.mark.parametrize("target", TARGETS)
def test_two_tools_of_one_name_are_each_defined_and_called_by_a_name_of_their_own(target):
    doc = json.loads(EXAMPLE.read_text())
    twin = {**doc["tools"][0], "id": "summarize-v2", "description": "Another tool that shares the name."}
    doc["tools"].append(twin)
    doc["contexts"][0]["tool_ids"].append("summarize-v2")
    inputs = doc["contexts"][0]["inputs"]
    k = next(n for n, i in enumerate(inputs) if i["kind"] == "tool_call")
    second_call = {**inputs[k], "id": "call-2", "call_id": "call-2", "tool_id": "summarize-v2"}
    second_result = {**inputs[k + 1], "id": "result-2", "call_id": "call-2"}
    inputs[k + 2:k + 2] = [second_call, second_result]
    result = _request(doc, target, context="continue-context")
    check_body(target, result.body)
    check_rules(target, result.body)
    calls = [c for c in conversation(target, result.body) if c[0] == "call"]
    text = json.dumps(result.body)
    assert len(calls) == 2 and calls[0][2] != calls[1][2]  # each call names its own tool
    assert all(text.count(f'"{c[2]}"') >= 2 for c in calls)  # and that name is defined in the tool list
    assert any(loss.kind == "name_rewritten" and "summarize-v2" in loss.explanation for loss in result.losses)


def test_an_empty_message_takes_no_turn_and_a_loss_says_so():
    selection = _selection(_message("e1", "user", ""), _message("e2", "assistant", "a"),
                           _message("e3", "user", "q"))
    for target in ("anthropic-messages",):
        _, losses = PROVIDERS[target](selection)
        assert any(loss.kind == "part_dropped" and "e1" in json.dumps(msgspec_refs(loss)) for loss in losses), target


@pytest.mark.parametrize("target", TARGETS)
def test_an_empty_text_is_never_sent_nor_a_blank_one_where_the_api_refuses_it(target):
    selection = _selection(_message("e1", "user", "q"), _message("e2", "assistant", ""),
                           _message("e3", "user", "   "), _message("e4", "assistant", "a"),
                           _message("e5", "system", ""), _message("e6", "user", "r"),
                           Input(id="e7", kind="message", role="assistant", parts=(
                               ir.TextPart(text="b"), ir.TextPart(text=""), ir.TextPart(text="\n")), source_events=()))
    body, losses = PROVIDERS[target](selection)
    check_body(target, body)
    check_rules(target, body)
    texts = [t for _, _, t in conversation(target, body)]
    blank = target in ("anthropic-messages", "google-genai")
    assert texts == (["q", "a", "r", "b"] if blank else ["q", "   ", "a", "r", "b", "\n"])
    empty = [msgspec_refs(loss) for loss in losses if loss.kind == "part_dropped" and "empty message" in loss.id]
    assert empty == [["e2", "e5"]]  # (e3, for an API refusing blanks, has the loss of its text)
    dropped = [msgspec_refs(loss) for loss in losses if "whitespace" in loss.id]
    assert dropped == ([["e3", "e7"]] if blank else [])


def test_a_gemini_request_ends_with_no_empty_text():
    """The trial's repro: a message whose only text is empty is not sent as an empty part."""
    body = asif_convert.request(CORPUS_ASIF.parent / "continuity" / "11-message-statuses.json",
                                provider="google-genai").body
    check_rules("google-genai", body)
    assert all(p.get("text") != "" for c in body["contents"] for p in c["parts"])


def msgspec_refs(loss: ir.Loss) -> list[str]:
    return [r.id for r in loss.references] if isinstance(loss.references, list) else []


# --- tools, empty conversations and the command's choices ------------------------------------------

EXAMPLE = CORPUS_ASIF / "continuation-action-specific.session.json"  # one tool, one context calling it


def _example(**edits: Any) -> dict[str, Any]:
    doc = json.loads(EXAMPLE.read_text())
    for key, value in edits.items():
        if key == "schema":
            doc["tools"][0]["input_schema"] = value
        elif key == "tool_ids":
            doc["contexts"][0]["tool_ids"] = value
    return doc


def test_a_chat_tool_message_sends_its_text_documents_and_each_drop_says_why():
    result = asif_convert.request(EXAMPLE, provider="openai-chat", context="continue-context")
    tool = next(m for m in result.body["messages"] if m["role"] == "tool")
    assert "apples,2" in tool["content"] and "Inventory summary" in tool["content"]
    assert "media_adapted" in {loss.kind for loss in result.losses}
    dropped = [loss.explanation for loss in result.losses if loss.kind == "part_dropped"]
    assert all("not embedded nor referenced" not in d for d in dropped), dropped
    assert any("(unavailable) records neither its content nor a locator" in d for d in dropped), dropped


@pytest.mark.parametrize(("schema", "sent", "says"), [
    ({"type": "string"}, {"type": "object"}, 'of type "string"'),
    ({"properties": {"q": {"type": "string"}}}, {"properties": {"q": {"type": "string"}}, "type": "object"},
     "of type null"),
    ({"type": ["object", "null"]}, {"type": "object"}, 'of type ["object","null"]'),
    (True, {"type": "object"}, "no known input schema"),
])
@pytest.mark.parametrize("target", TARGETS)
def test_a_tool_schema_is_always_an_object_schema(target, schema, sent, says):
    """Every API takes an object schema (Anthropic's input_schema requires "type": "object")."""
    result = _request(_example(schema=schema), target, context="continue-context")
    check_body(target, result.body)
    check_rules(target, result.body)
    body = result.body
    tools = body.get("tools") or body.get("config", {}).get("tools")
    [tool] = tools
    offered = (tool.get("input_schema") or tool.get("parameters") or tool.get("function", {}).get("parameters")
               or tool["function_declarations"][0]["parameters_json_schema"])
    assert offered == sent
    assert any(loss.kind == "unknown_mapping" and says in loss.explanation for loss in result.losses)


@pytest.mark.parametrize("target", TARGETS)
def test_a_context_calling_a_tool_it_does_not_list_offers_the_sessions_definition(target):
    result = _request(_example(tool_ids=["ghost-tool"]), target, context="continue-context")
    check_rules(target, result.body)  # the tool list and the calls use one name
    said = " ".join(loss.explanation for loss in result.losses)
    assert "'ghost-tool', which the session does not define" in said
    assert "the session's definition of it is offered" in said
    assert "synthesized_tool" not in {loss.kind for loss in result.losses}


@pytest.mark.parametrize("target", TARGETS)
def test_a_conversation_with_nothing_left_is_refused_not_an_empty_body(target):
    only_calls = sb.export(("user", "go"), ("assistant", {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}))
    only_calls["messages"] = only_calls["messages"][1:]  # the call alone, and it has no result
    instructions_only = asif_convert.convert(json.dumps(sb.export(("user", "be brief"), ("assistant", "and kind")))
                                             .encode(), to="asif").document
    for event in instructions_only["events"]:
        if event["kind"] == "message":
            event["data"]["role"] = "system"
    cases = [(only_calls, {"pending": "drop"})]
    if target in ("anthropic-messages", "google-genai"):  # (OpenAI's APIs keep system messages among the turns)
        cases.append((instructions_only, {}))
    for doc, kw in cases:
        with pytest.raises(RequestRefused, match="nothing is left to continue from") as caught:
            _request(doc, target, **kw)
        # the document's own path: an export has no event_ids
        assert caught.value.problems[0].path == ("/messages" if doc is only_calls else "/branches/0/event_ids")


def test_the_library_names_the_file_it_was_given(tmp_path):
    path = tmp_path / "session.json"
    path.write_text(EXAMPLE.read_text())
    with pytest.raises(InvalidInput, match=r"session\.json: /contexts: there is no context 'nope'"):
        asif_convert.request(path, provider="openai-chat", context="nope")


def test_the_command_takes_one_of_context_and_branch_and_says_pending_refuse(tmp_path):
    from typer.testing import CliRunner

    import asif_convert._cli.app  # noqa: F401
    out = tmp_path / "r.json"
    both = _run(CliRunner(), "request", str(EXAMPLE), "--for", "openai-chat", "--context", "continue-context",
                "--branch", "main", "-o", str(out))
    assert both.exit_code == 2 and "--context and --branch" in both.stderr and not out.exists()
    with pytest.raises(UsageError, match="not both"):
        asif_convert.request(EXAMPLE, provider="openai-chat", context="continue-context", branch="main")
    refused = _run(CliRunner(), "request", str(EXAMPLE), "--for", "openai-chat", "--pending", "refuse")
    default = _run(CliRunner(), "request", str(EXAMPLE), "--for", "openai-chat")
    assert (refused.exit_code, refused.stdout) == (default.exit_code, default.stdout)


def test_the_command_warns_of_input_problems_as_convert_does(tmp_path):
    from typer.testing import CliRunner

    import asif_convert._cli.app  # noqa: F401
    doc = _example()
    doc["contexts"][0]["configuration_id"] = "no-such-configuration"  # a referential problem, not fatal
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    run = _run(CliRunner(), "request", str(path), "--for", "openai-chat", "--context", "continue-context")
    converted = _run(CliRunner(), "convert", str(path), "--to", "continuity", "-o", str(tmp_path / "c.json"))
    assert run.exit_code == 0 and converted.exit_code == 0
    warnings = [line for line in run.stderr.splitlines() if line.strip().startswith("warning:")]
    assert warnings and warnings == [line for line in converted.stderr.splitlines()
                                     if line.strip().startswith("warning:")]
    strict = _run(CliRunner(), "request", str(path), "--for", "openai-chat", "--context", "continue-context",
                  "--strict")
    assert strict.exit_code == 1


@pytest.mark.parametrize("target", TARGETS)
def test_a_result_recorded_before_its_call_is_moved_after_it_with_a_loss(target):
    doc = json.loads(EXAMPLE.read_text())
    inputs = doc["contexts"][0]["inputs"]
    k = next(n for n, i in enumerate(inputs) if i["kind"] == "tool_call")
    inputs[k], inputs[k + 1] = inputs[k + 1], inputs[k]  # the result first
    result = _request(doc, target, context="continue-context")
    check_rules(target, result.body)
    moved = [loss for loss in result.losses if loss.kind == "result_moved"]
    assert moved and "before its call" in moved[0].explanation
    assert [r.id for r in moved[0].references or ()] == [inputs[k]["id"]]


def test_gemini_contents_open_with_a_user_turn_and_what_came_before_is_a_loss():
    opening = sb.export(("assistant", {"role": "assistant", "content": "Hello, how can I help?", "tool_calls": [
        {"id": "c0", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}),
        ("tool", {"role": "tool", "tool_call_id": "c0", "content": "ready"}),
        ("user", "q"), ("assistant", "a"))
    result = _request(opening, "google-genai")
    check_rules("google-genai", result.body)
    assert [c[0] for c in conversation("google-genai", result.body)] == ["text", "text"]
    [loss] = [loss for loss in result.losses if "opening model turn" in loss.id]
    assert loss.kind == "part_dropped" and {r.id for r in loss.references or ()} == {"m1", "m1/call/0", "m2"}
    kept = _request(opening, "anthropic-messages")  # (the Messages API takes a history that opens so)
    assert kept.body["messages"][0]["role"] == "assistant"


def test_a_turn_of_several_server_calls_and_a_client_call_goes_back_natively():
    """A reader lists a message's calls before its results: pairs of one turn are not adjacent."""
    result_block = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": [
        {"type": "web_search_result", "url": "https://example.com", "title": "E", "encrypted_content": "enc"}]}
    turn = [{"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "a"}},
            result_block,
            {"type": "server_tool_use", "id": "srvtoolu_2", "name": "web_search", "input": {"query": "b"}},
            {**result_block, "tool_use_id": "srvtoolu_2"},
            {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}]
    doc = sb.export(("user", [{"type": "text", "text": "search twice, then my tool"}]), ("assistant", turn),
                    ("user", [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny"}]))
    result = _request(doc, "anthropic-messages")
    check_body("anthropic-messages", result.body)
    check_rules("anthropic-messages", result.body)
    kinds = [[b["type"] for b in m["content"]] for m in result.body["messages"]]
    assert kinds[1] == ["server_tool_use", "web_search_tool_result", "server_tool_use", "web_search_tool_result",
                        "tool_use"], kinds
    assert "server_tool_as_text" not in {loss.kind for loss in result.losses}


def test_a_recorded_gemini_error_response_goes_back_as_it_was():
    export = json.loads((CORPUS_ASIF.parent / "continuity" / "18-gemini-no-ids.json").read_text())
    recorded = [p["function_response"]["response"] for m in export["messages"]
                for p in (m.get("content_json") or {}).get("parts", ()) if "function_response" in p]
    assert any("error" in r for r in recorded)
    body = _request(export, "google-genai").body
    sent = [p["function_response"]["response"] for c in body["contents"] for p in c["parts"]
            if "function_response" in p]
    # (sent in the order of their calls; each one as recorded, the error one too)
    assert all(response in recorded for response in sent) and any("error" in response for response in sent)


def test_a_server_result_sent_as_text_names_the_media_it_leaves_out():
    result = _request(_opened(CATALOGUE["openai-responses:response_input_item.ImageGenerationCall"]),
                      "anthropic-messages", pending="as-error")
    check_rules("anthropic-messages", result.body)
    assert "server_tool_as_text" in {loss.kind for loss in result.losses}
    assert any(loss.kind == "part_dropped" and "server tool's result sent as text" in loss.explanation
               for loss in result.losses)
