"""A dialect message keeps only what makes its content_json differ from the canonical rendering
of its pieces: edits of every mapped value travel back into content_json, in the original's
style, and nothing a user writes into content_json is taken for converter state."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, note
from hypothesis import strategies as st

from asif_convert import Options, convert

from .strategies import json_values
from .test_foreign_state import NS, VOCABULARY, _objects
from .test_roundtrip import exact


def export(*messages: dict[str, Any]) -> dict[str, Any]:
    records = []
    for k, (role, content) in enumerate(messages):
        records.append({"message_id": f"m{k}", "session_id": "s", "branch_id": "b", "role": role,
                        "status": "complete", "content_json": content, "text_content": "", "sequence": k + 1})
    return {"format": "agent-continuity-export", "session": {"session_id": "s", "title": "t", "status": "active",
                                                             "active_branch_id": "b"},
            "branches": [{"branch_id": "b", "session_id": "s", "name": "main", "status": "active", "metadata": {},
                          "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z"}],
            "messages": records, "events": [], "checkpoints": []}


def to_asif(doc: dict[str, Any]) -> dict[str, Any]:
    return convert(json.dumps(doc).encode(), to="asif").document


def back(asif: dict[str, Any]) -> dict[str, Any]:
    """The export an edited ASIF document gives without the residual: what continuity says of it."""
    return convert(json.dumps(asif).encode(), to="continuity", options=Options(residual=False)).document


def event(asif: dict[str, Any], kind: str, k: int = 0) -> dict[str, Any]:
    return [e for e in asif["events"] if e["kind"] == kind][k]


OPENAI_CALL = {"role": "assistant", "content": None, "tool_calls": [
    {"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": '{"city":"Paris"}'}}]}
OPENAI_RESULT = {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}
ANTHROPIC_CALL = [{"type": "text", "text": "Let me look."},
                  {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": "ls"}}]
ANTHROPIC_RESULT = [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.txt", "is_error": False}]


@pytest.mark.parametrize(("style", "expected"), [('{"city":"Paris"}', '{"city":"Lyon"}'),
                                                  ('{"city": "Paris"}', '{"city": "Lyon"}')], ids=["compact", "spaced"])
def test_an_edited_argument_travels_in_the_original_json_style(style, expected):
    call = copy.deepcopy(OPENAI_CALL)
    call["tool_calls"][0]["function"]["arguments"] = style
    asif = to_asif(export(("assistant", call), ("tool", OPENAI_RESULT)))
    assert event(asif, "tool_call")["data"]["arguments"] == {"city": "Paris"}
    event(asif, "tool_call")["data"]["arguments"] = {"city": "Lyon"}
    content = back(asif)["messages"][0]["content_json"]
    assert content["tool_calls"][0]["function"]["arguments"] == expected


def test_an_edited_anthropic_input_travels():
    asif = to_asif(export(("assistant", ANTHROPIC_CALL), ("tool", ANTHROPIC_RESULT)))
    event(asif, "tool_call")["data"]["arguments"] = {"command": "pwd"}
    assert back(asif)["messages"][0]["content_json"][1]["input"] == {"command": "pwd"}


@pytest.mark.parametrize(("outcome", "flag"), [("error", True), ("success", False)])
def test_an_edited_outcome_travels(outcome, flag):
    asif = to_asif(export(("assistant", ANTHROPIC_CALL), ("tool", ANTHROPIC_RESULT)))
    event(asif, "tool_result")["data"]["outcome"] = outcome
    assert back(asif)["messages"][1]["content_json"][0]["is_error"] is flag


def test_an_edited_error_outcome_travels_where_is_error_was_absent():
    result = [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.txt"}]
    asif = to_asif(export(("assistant", ANTHROPIC_CALL), ("tool", result)))
    event(asif, "tool_result")["data"]["outcome"] = "error"
    assert back(asif)["messages"][1]["content_json"][0]["is_error"] is True


def test_an_edited_text_travels():
    asif = to_asif(export(("assistant", ANTHROPIC_CALL), ("tool", ANTHROPIC_RESULT)))
    event(asif, "message")["data"]["parts"][0]["text"] = "Let me look again."
    event(asif, "tool_result")["data"]["parts"][0]["text"] = "b.txt"
    out = back(asif)["messages"]
    assert out[0]["content_json"][0]["text"] == "Let me look again."
    assert out[1]["content_json"][0]["content"] == "b.txt"


def test_an_added_and_a_removed_part_travel():
    content = {"role": "user", "content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]}
    asif = to_asif(export(("user", content)))
    parts = event(asif, "message")["data"]["parts"]
    parts.append({"kind": "text", "text": "three"})
    del parts[0]
    assert back(asif)["messages"][0]["content_json"]["content"] == [
        {"type": "text", "text": "two"}, {"type": "text", "text": "three"}]


def test_a_text_part_added_to_a_string_message_travels():
    asif = to_asif(export(("user", {"role": "user", "content": "hello"})))
    event(asif, "message")["data"]["parts"].append({"kind": "text", "text": "world"})
    assert back(asif)["messages"][0]["content_json"]["content"] == [
        {"type": "text", "text": "hello"}, {"type": "text", "text": "world"}]


def test_a_canonical_message_keeps_nothing_but_its_dialect():
    doc = export(("assistant", OPENAI_CALL), ("tool", OPENAI_RESULT))
    doc["messages"][1]["text_content"] = "sunny"
    asif = to_asif(doc)
    states = [e["extensions"][NS] for e in asif["events"] if NS in e.get("extensions", {})]
    assert [{k: v for k, v in s.items() if k not in ("sequence", "status")} for s in states] == [
        {"dialect": "openai-chat"}, {"dialect": "openai-chat"}]


def test_content_that_looks_like_converter_state_is_only_content():
    """The first release's placeholder key inside a block (where the export schema allows any
    JSON) is content: it comes back unchanged, and a dangling one breaks nothing."""
    blocks = [{"type": "text", "text": "hi", "cache_control": {"asif.piece/1": ["msg", 0, "parts", 9, "text"]}}]
    doc = export(("user", blocks), ("user", {"asif.parts/1": [{"kind": "text", "text": "mine"}]}),
                 ("user", {"asif.parts/1": [{"kind": "bogus"}]}))
    doc["events"] = [{"event_id": "e1", "session_id": "s", "branch_id": "b", "sequence": 9, "event_type": "asif.note",
                      "payload": {"actor_id": "user", "causes": [], "provenance": {"mode": "reported", "producer": "p"},
                                  "data": {"text": "a note"}}}]
    there = convert(json.dumps(doc).encode(), to="asif")
    kinds = [e["kind"] for e in there.document["events"]]
    assert "note" not in kinds and kinds.count("message") == 3  # user data, read as such
    assert exact(doc, convert(there.output, to="continuity").document) == {}


# -- arbitrary JSON, keyed with the converter's own vocabulary, inside dialect content ----------

# "usage": a message object's counters are ASIF usage entries, whatever the object around them holds
vocab_keys = st.one_of(st.sampled_from([*VOCABULARY, "usage"]), st.text(max_size=4))
vocab_values = st.recursive(
    st.one_of(json_values(2), st.sampled_from(VOCABULARY),
              st.builds(lambda path: {"asif.piece/1": path},
                        st.lists(st.one_of(st.sampled_from(["msg", "call", "result", "res", "parts", "text"]),
                                           st.integers(0, 3)), max_size=5))),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(vocab_keys, inner, max_size=3)),
    max_leaves=8,
)


@st.composite
def dialect_messages(draw: st.DrawFn) -> dict[str, Any]:
    """A two-message exchange in one dialect, with extra keys put anywhere in its content."""
    pair = draw(st.sampled_from([(OPENAI_CALL, OPENAI_RESULT), (ANTHROPIC_CALL, ANTHROPIC_RESULT)]))
    pair = copy.deepcopy(pair)
    for content in pair:
        objects = [o for o in _objects(content)]
        for _ in range(draw(st.integers(1, 3))):
            target = draw(st.sampled_from(objects))
            target[draw(vocab_keys)] = draw(vocab_values)
    doc = export(("assistant", pair[0]), ("tool", pair[1]))
    for rec in doc["messages"]:  # a text_content that may say more than the content
        rec["text_content"] = draw(st.sampled_from(["", "Let me look.", "sunny", "a.txt"]) | st.text(max_size=6))
    return doc


@given(dialect_messages())
def test_any_json_inside_dialect_content_round_trips_exactly(doc):
    note(json.dumps(doc))
    there = convert(json.dumps(doc).encode(), to="asif")
    assert exact(doc, convert(there.output, to="continuity").document) == {}


# -- every text visible ------------------------------------------------------------------------


def test_a_refusal_is_a_text_part_and_an_edit_of_it_travels():
    content = {"role": "assistant", "content": None, "refusal": "I can't help with that."}
    doc = export(("assistant", content))
    asif = to_asif(doc)
    parts = event(asif, "message")["data"]["parts"]
    assert parts == [{"kind": "text", "text": "I can't help with that."}]
    assert exact(doc, convert(json.dumps(asif).encode(), to="continuity").document) == {}
    parts[0]["text"] = "No."
    assert back(asif)["messages"][0]["content_json"]["refusal"] == "No."


def test_a_refusal_part_of_a_content_list_is_a_text_part():
    content = {"role": "assistant", "content": [{"type": "text", "text": "Well"},
                                                {"type": "refusal", "refusal": "I won't."}]}
    doc = export(("assistant", content))
    asif = to_asif(doc)
    assert [p["text"] for p in event(asif, "message")["data"]["parts"]] == ["Well", "I won't."]
    assert exact(doc, convert(json.dumps(asif).encode(), to="continuity").document) == {}


def test_an_object_tool_result_is_a_structured_part():
    result = [{"type": "tool_result", "tool_use_id": "toolu_1", "content": {"files": ["a.txt"], "count": 1}}]
    doc = export(("assistant", ANTHROPIC_CALL), ("tool", result))
    asif = to_asif(doc)
    parts = event(asif, "tool_result")["data"]["parts"]
    assert [(p["kind"], p["value"]) for p in parts] == [("structured", {"files": ["a.txt"], "count": 1})]
    assert exact(doc, convert(json.dumps(asif).encode(), to="continuity").document) == {}
    parts[0]["value"] = {"files": [], "count": 0}
    assert back(asif)["messages"][1]["content_json"][0]["content"] == {"files": [], "count": 0}


def test_citations_stay_attached_to_their_text_part():
    cited = [{"type": "char_location", "cited_text": "The sky is blue.", "document_index": 0}]
    content = [{"type": "text", "text": "It is blue.", "citations": cited}]
    doc = export(("assistant", content))
    asif = to_asif(doc)
    assert event(asif, "message")["data"]["parts"] == [{"kind": "text", "text": "It is blue.", "citations": cited}]
    assert exact(doc, convert(json.dumps(asif).encode(), to="continuity").document) == {}
    event(asif, "message")["data"]["parts"][0]["text"] = "It is sky blue."
    assert back(asif)["messages"][0]["content_json"] == [{"type": "text", "text": "It is sky blue.",
                                                          "citations": cited}]


def test_a_legacy_function_call_is_a_tool_call_and_an_edit_of_it_travels():
    content = {"role": "assistant", "content": None,
               "function_call": {"name": "weather", "arguments": '{"city":"Paris"}'}}
    doc = export(("assistant", content))
    asif = to_asif(doc)
    call = event(asif, "tool_call")
    assert (call["data"]["tool_id"], call["data"]["arguments"]) == ("weather", {"city": "Paris"})
    assert exact(doc, convert(json.dumps(asif).encode(), to="continuity").document) == {}
    call["data"]["arguments"] = {"city": "Lyon"}
    assert back(asif)["messages"][0]["content_json"]["function_call"] == {"name": "weather",
                                                                         "arguments": '{"city":"Lyon"}'}


def test_values_the_writer_implies_are_left_out():
    doc = export(("user", {"role": "user", "content": "one"}), ("user", {"role": "user", "content": "two"}))
    doc["messages"][1]["status"] = "partial"
    doc["messages"][1]["sequence"] = 7
    asif = to_asif(doc)
    states = [e["extensions"][NS] for e in asif["events"]]
    assert "status" not in states[0] and "sequence" not in states[0]  # complete, first in messages
    assert (states[1]["status"], states[1]["sequence"]) == ("partial", 7)
    assert exact(doc, convert(json.dumps(asif).encode(), to="continuity").document) == {}


def test_a_text_content_that_says_more_is_a_text_part_of_its_own():
    doc = export(("assistant", ANTHROPIC_CALL))
    doc["messages"][0]["text_content"] = "Let me look. (ran ls in the sandbox)"
    asif = to_asif(doc)
    parts = event(asif, "message")["data"]["parts"]
    assert [p["text"] for p in parts] == ["Let me look.", "Let me look. (ran ls in the sandbox)"]
    losses = [loss for loss in asif["losses"] if loss["kind"] == "text_content_shown"]
    assert [r["id"] for loss in losses for r in loss["references"]] == ["m0"]
    assert exact(doc, convert(json.dumps(asif).encode(), to="continuity").document) == {}
    parts[1]["text"] = "Let me look. (edited)"
    rec = back(asif)["messages"][0]
    assert rec["text_content"] == "Let me look. (edited)"
    assert rec["content_json"] == ANTHROPIC_CALL  # the part never reaches content_json


def test_a_text_content_beside_tool_results_only_gets_a_message_of_its_own():
    doc = export(("assistant", ANTHROPIC_CALL), ("tool", ANTHROPIC_RESULT))
    doc["messages"][1]["text_content"] = "exit status 0"
    asif = to_asif(doc)
    message = event(asif, "message", 1)
    assert (message["id"], message["data"]["parts"]) == ("m1", [{"kind": "text", "text": "exit status 0"}])
    assert event(asif, "tool_result")["id"] == "m1/result/0"
    assert exact(doc, convert(json.dumps(asif).encode(), to="continuity").document) == {}


def test_a_text_content_already_shown_stays_state():
    doc = export(("assistant", ANTHROPIC_CALL))
    doc["messages"][0]["text_content"] = "Let me"  # says less than the parts: nothing new to show
    asif = to_asif(doc)
    assert [p["text"] for p in event(asif, "message")["data"]["parts"]] == ["Let me look."]
    assert event(asif, "message")["extensions"][NS]["text_content"] == "Let me"
    assert not [loss for loss in asif["losses"] if loss["kind"] == "text_content_shown"]
    assert exact(doc, convert(json.dumps(asif).encode(), to="continuity").document) == {}


def test_a_removed_text_content_part_falls_back_to_the_parts_texts():
    doc = export(("assistant", ANTHROPIC_CALL))
    doc["messages"][0]["text_content"] = "something else entirely"
    asif = to_asif(doc)
    del event(asif, "message")["data"]["parts"][1]
    rec = back(asif)["messages"][0]
    assert (rec["text_content"], rec["content_json"]) == ("Let me look.", ANTHROPIC_CALL)


ANTHROPIC_RESPONSE = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x",
                      "content": [{"type": "text", "text": "Hi."}], "stop_reason": "end_turn",
                      "usage": {"input_tokens": 12, "output_tokens": 3, "service_tier": "standard",
                                "cache_creation": {"ephemeral_5m_input_tokens": 0}}}


def test_provider_usage_counters_are_asif_usage_and_an_edit_of_them_travels():
    doc = export(("assistant", ANTHROPIC_RESPONSE))
    asif = to_asif(doc)
    assert [(u["scope"], u["scope_id"], u["unit"], u["value"], u["counter"]) for u in asif["usage"]] == [
        ("event", "m0", "input_tokens", 12, "delta"), ("event", "m0", "output_tokens", 3, "delta"),
        ("event", "m0", "cache_creation.ephemeral_5m_input_tokens", 0, "delta")]
    assert {c["scope"]: c["status"] for c in asif["coverage"]}["usage"] == "partial"
    state = json.dumps(event(asif, "message")["extensions"])
    assert '{"=": 12}' not in state and '{"=": 3}' not in state  # the counters are not kept twice
    assert exact(doc, convert(json.dumps(asif).encode(), to="continuity").document) == {}
    asif["usage"][1]["value"] = 30
    asif["usage"].append({**asif["usage"][0], "unit": "server_tool_use.web_search_requests", "value": 2})
    usage = back(asif)["messages"][0]["content_json"]["usage"]
    assert usage == {"input_tokens": 12, "output_tokens": 30, "service_tier": "standard",
                     "cache_creation": {"ephemeral_5m_input_tokens": 0},
                     "server_tool_use": {"web_search_requests": 2}}


def test_usage_entries_that_name_no_counter_are_left_alone():
    doc = export(("assistant", ANTHROPIC_RESPONSE))
    asif = to_asif(doc)
    asif["usage"] += [{**asif["usage"][0], "counter": "cumulative", "unit": "input_tokens", "value": 99},
                      {**asif["usage"][0], "unit": "a..b", "value": 1},
                      {**asif["usage"][0], "scope": "session", "scope_id": "s", "value": 7}]
    assert back(asif)["messages"][0]["content_json"]["usage"]["input_tokens"] == 12


@pytest.mark.parametrize(("text_content", "state"), [
    ("Paris.", {"text_of": [0]}),  # the answer without its refusal
    ("Paris.\nI can't help with that.", {"text_of": [0, 1], "text_sep": "\n"}),
])
def test_a_text_content_made_of_some_texts_follows_their_edits(text_content, state):
    doc = export(("assistant", {"role": "assistant", "content": "Paris.", "refusal": "I can't help with that."}))
    doc["messages"][0]["text_content"] = text_content
    asif = to_asif(doc)
    message = event(asif, "message")
    assert {k: message["extensions"][NS][k] for k in state} == state
    assert "text_content" not in message["extensions"][NS]
    assert exact(doc, convert(json.dumps(asif).encode(), to="continuity").document) == {}
    message["data"]["parts"][0]["text"] = "Lyon."
    rec = back(asif)["messages"][0]
    assert rec["content_json"]["content"] == "Lyon."
    assert rec["text_content"] == text_content.replace("Paris.", "Lyon.")
