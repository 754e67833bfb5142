"""Tool use, reasoning and media inside content_json map to ASIF semantics and back exactly."""

from __future__ import annotations

import base64
import copy
import hashlib
import json
from typing import Any
from unittest import mock

import pytest
from hypothesis import event, example, given
from hypothesis import strategies as st

from asif_convert import Options, convert
from asif_convert._dialects import REASONING, anthropic, openai, split
from asif_convert._dialects.common import json_text

from .conftest import CORPUS
from .sdk_blocks import export


def asif(name: str) -> dict:
    return json.loads(convert((CORPUS / "continuity" / name).read_bytes(), to="asif").output)


def by_kind(doc: dict, kind: str) -> list[dict]:
    return [e for e in doc["events"] if e["kind"] == kind]


def test_anthropic_tool_use_becomes_calls_results_and_tools():
    doc = asif("03-anthropic-tools.json")
    calls, results = by_kind(doc, "tool_call"), by_kind(doc, "tool_result")
    assert len(calls) == len(results) == 5
    assert {c["data"]["call_id"] for c in calls} == {r["data"]["call_id"] for r in results}
    assert {t["id"] for t in doc["tools"]} == {c["data"]["tool_id"] for c in calls}
    assert all(t["input_schema"] is True for t in doc["tools"])
    first = calls[0]
    assert first["id"].endswith("/call/0") and first["data"]["arguments_status"] == "complete"
    assert isinstance(first["data"]["arguments"], dict)
    # the is_error flag becomes the outcome; every result is terminal
    assert {r["data"]["outcome"] for r in results} == {"success", "error"}
    assert all(r["data"]["terminal"] and r["data"]["result_index"] == 0 for r in results)
    # a call comes before its result in the single order
    seq = {e["data"].get("call_id"): e["sequence"] for e in calls}
    assert all(seq[r["data"]["call_id"]] < r["sequence"] for r in results)
    assert next(c for c in doc["coverage"] if c["scope"] == "tools")["status"] == "partial"
    assert any(loss["kind"] == "tool_contract_unknown" for loss in doc["losses"])


def test_reasoning_is_a_separate_private_part_with_its_signature():
    doc = asif("03-anthropic-tools.json")
    parts = [p for e in by_kind(doc, "message") for p in e["data"]["parts"]]
    reasoning = [p for p in parts if p["kind"] == "structured" and p["schema"] == REASONING]
    assert reasoning and all("signature" in p["value"] for p in reasoning)
    texts = " ".join(p["text"] for p in parts if p["kind"] == "text")
    assert all(p["value"]["thinking"] not in texts for p in reasoning)


def test_openai_arguments_partial_json_is_never_guessed():
    doc = asif("04-openai-tools.json")
    calls = by_kind(doc, "tool_call")
    partial = [c for c in calls if c["data"]["arguments_status"] == "partial"]
    assert len(partial) == 1 and partial[0]["data"]["arguments"] is None
    complete = [c for c in calls if c["data"]["arguments_status"] == "complete"]
    assert complete and all(isinstance(c["data"]["arguments"], dict) for c in complete)
    # OpenAI results carry no error flag: the outcome is unknown, not invented
    assert {r["data"]["outcome"] for r in by_kind(doc, "tool_result")} == {"unknown"}


def test_inline_image_becomes_an_embedded_resource_in_place():
    doc = asif("04-openai-tools.json")
    (res,) = [r for r in doc["resources"] if r["availability"] == "embedded"]
    raw = base64.b64decode(res["data"], validate=True)
    assert res["bytes"] == len(raw) and res["sha256"] == hashlib.sha256(raw).hexdigest()
    assert res["media_type"] == "image/png"
    first = by_kind(doc, "message")[0]["data"]["parts"]
    assert [p["kind"] for p in first] == ["text", "resource"] and first[1]["resource_id"] == res["id"]


def test_result_without_its_call_stays_a_message_and_is_reported():
    doc = asif("15-mixed-dialects.json")
    orphan = next(e for e in doc["events"] if e["id"] == "m15-orphan")
    assert orphan["kind"] == "message"
    loss = next(loss for loss in doc["losses"] if loss["kind"] == "dialect_not_applied")
    assert {"type": "event", "id": "m15-orphan"} in loss["references"]


def test_mixed_dialects_round_trip_exactly():
    src = (CORPUS / "continuity" / "15-mixed-dialects.json").read_bytes()
    first = convert(src, to="asif")
    assert {"tool_call", "tool_result", "message"} <= {e["kind"] for e in first.document["events"]}
    assert convert(first.output, to="continuity").document == json.loads(src)


def test_edited_arguments_travel_back_into_content_json():
    doc = asif("04-openai-tools.json")
    call = next(c for c in by_kind(doc, "tool_call") if c["data"]["arguments_status"] == "complete")
    call["data"]["arguments"] = {"query": "edited"}
    export = convert(json.dumps(doc).encode(), to="continuity").document
    encoded = [tc["function"]["arguments"] for m in export["messages"]
               for tc in (m.get("content_json") or {}).get("tool_calls") or ()
               if isinstance(m.get("content_json"), dict)]
    assert '{"query": "edited"}' in encoded


def _export(*messages: tuple[str, object]) -> dict:
    from .sdk_blocks import export
    return export(*messages)


def test_an_unknown_block_stays_opaque_in_its_place_and_the_rest_is_mapped():
    """Block by block: a block type the dialect does not know is an opaque part (its JSON an
    embedded resource) where it stood, the tool call beside it is still a call, one loss per
    block type names the records, and the export comes back exactly."""
    src = _export(("user", [{"type": "text", "text": "go"}]),
                  ("assistant", [{"type": "text", "text": "a"}, {"type": "future_block", "x": [1, 2.5]},
                                 {"type": "tool_use", "id": "t1", "name": "bash", "input": {"c": "ls"}}]),
                  ("user", [{"type": "future_block", "y": None}, {"type": "text", "text": "b"},
                            {"type": "other_new", "z": "q"}]))
    out = convert(json.dumps(src).encode(), to="asif")
    doc = out.document
    m2 = next(e for e in doc["events"] if e["id"] == "m2")["data"]["parts"]
    assert [p["kind"] for p in m2] == ["text", "opaque"]
    assert m2[1]["semantic_type"] == "anthropic-messages/future_block"
    res = next(r for r in doc["resources"] if r["id"] == m2[1]["resource_id"])
    assert res["availability"] == "embedded" and json.loads(res["text"]) == {"type": "future_block", "x": [1, 2.5]}
    assert res["sha256"] == hashlib.sha256(res["text"].encode()).hexdigest()
    assert [c["data"]["call_id"] for c in by_kind(doc, "tool_call")] == ["t1"]
    losses = {loss["id"]: loss for loss in doc["losses"] if loss["id"].startswith("translation:dialect-opaque")}
    assert set(losses) == {"translation:dialect-opaque-block:anthropic-messages/future_block",
                           "translation:dialect-opaque-block:anthropic-messages/other_new"}
    future = losses["translation:dialect-opaque-block:anthropic-messages/future_block"]
    assert future["references"] == [{"type": "event", "id": "m2"}, {"type": "event", "id": "m3"}]
    assert "anthropic-messages/future_block" in future["explanation"]
    assert losses["translation:dialect-opaque-block:anthropic-messages/other_new"]["references"] == [
        {"type": "event", "id": "m3"}]
    assert convert(out.output, to="continuity").document == src


def test_a_list_of_blocks_none_of_them_known_is_no_dialect_content():
    src = _export(("user", [{"type": "future_block", "y": None}]))
    doc = convert(json.dumps(src).encode(), to="asif").document
    (part,) = [p for p in doc["events"][0]["data"]["parts"] if p["kind"] == "structured"]
    assert part["schema"] == "agent-continuity.content-json/1"


def test_content_that_fits_two_dialects_goes_to_the_one_with_fewer_opaque_blocks():
    """An OpenAI Chat user message with an image_url part is also an Anthropic message object
    whose image_url block Anthropic does not know: it is read as OpenAI Chat (no opaque block).
    One that both read whole is read as Anthropic (the first dialect), and renders the same."""
    image = {"role": "user", "content": [{"type": "text", "text": "see"},
                                         {"type": "image_url", "image_url": {"url": "https://e.x/a.png"}}]}
    plain = {"role": "user", "content": [{"type": "text", "text": "see"}]}
    src = _export(("user", image), ("user", plain))
    out = convert(json.dumps(src).encode(), to="asif")
    dialect = {e["id"]: e["extensions"]["agent-continuity/1"]["dialect"] for e in out.document["events"]}
    assert dialect == {"m1": "openai-chat", "m2": "anthropic-messages"}
    assert convert(out.output, to="continuity").document == src


def test_tools_the_provider_runs_are_called_by_the_model_and_answered_by_the_provider():
    """A server tool's call is the assistant's, its result the provider's (a service participant),
    its tool has the provider as server identity; an error object is an error outcome."""
    use = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "q"}}
    failed = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1",
              "content": {"type": "web_search_tool_result_error", "error_code": "unavailable"}}
    mcp = {"type": "mcp_tool_use", "id": "mcp_1", "name": "echo", "server_name": "kit", "input": {}}
    mcp_result = {"type": "mcp_tool_result", "tool_use_id": "mcp_1", "content": "echoed"}
    src = _export(("user", [{"type": "text", "text": "search"}]),
                  ("assistant", [use, failed, {"type": "text", "text": "No luck."}, mcp, mcp_result]))
    out = convert(json.dumps(src).encode(), to="asif")
    doc = out.document
    calls, results = by_kind(doc, "tool_call"), by_kind(doc, "tool_result")
    assert [c["actor_id"] for c in calls] == ["assistant", "assistant"]
    assert [(r["actor_id"], r["data"]["outcome"]) for r in results] == [("anthropic", "error"), ("mcp:kit", "success")]
    participants = {p["id"]: p["kind"] for p in doc["participants"]}
    assert participants["anthropic"] == participants["mcp:kit"] == "service" and "tool" not in participants
    assert {t["id"]: t.get("server_identity") for t in doc["tools"]} == {"web_search": "anthropic", "echo": "mcp:kit"}
    assert convert(out.output, to="continuity").document == src


def test_edited_outcomes_and_added_or_removed_parts_travel():
    src = _export(("assistant", [{"type": "text", "text": "a"}, {"type": "tool_use", "id": "t1", "name": "f",
                                                                  "input": {}}]),
                  ("user", [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]),
                  ("user", {"role": "user", "name": "ann", "content": [{"type": "text", "text": "x"},
                                                                       {"type": "text", "text": "y"}]}))
    doc = json.loads(convert(json.dumps(src).encode(), to="asif").output)
    events = {e["id"]: e for e in doc["events"]}
    events["m2"]["data"]["outcome"] = "error"
    events["m1"]["data"]["parts"].append({"kind": "text", "text": "added"})
    del events["m3"]["data"]["parts"][0]
    back = convert(json.dumps(doc).encode(), to="continuity").document
    contents = [m["content_json"] for m in back["messages"]]
    assert contents[0][:2] == [{"type": "text", "text": "a"}, {"type": "text", "text": "added"}]
    assert contents[1] == [{"type": "tool_result", "tool_use_id": "t1", "content": "ok", "is_error": True}]
    # one text part left: the canonical rendering, a string (the list had no style of its own)
    assert contents[2] == {"role": "user", "name": "ann", "content": "y"}


def test_an_openai_message_with_text_parts_and_tool_calls_is_not_taken_for_anthropic():
    """Text parts alone fit both dialects; tool_calls (or a tool_call_id) are OpenAI Chat's: read
    as Anthropic, the calls would only be kept in the difference, invisible to ASIF readers."""
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    src = _export(("assistant", {"role": "assistant", "content": [{"type": "text", "text": "x"}],
                                 "tool_calls": [call]}),
                  ("tool", {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "done"}]}))
    out = convert(json.dumps(src).encode(), to="asif")
    assert [e["kind"] for e in out.document["events"]] == ["message", "tool_call", "tool_result"]
    assert by_kind(out.document, "tool_result")[0]["data"]["parts"] == [{"kind": "text", "text": "done"}]
    assert convert(out.output, to="continuity").document == src


def test_a_known_block_in_a_shape_that_cannot_be_mapped_is_opaque_under_its_own_type():
    """A tool_use without an id (ASIF ids are never empty), an image whose base64 does not
    decode, an OpenAI part of a type it does not know: each an opaque part in its place."""
    src = _export(("assistant", [{"type": "text", "text": "a"}, {"type": "tool_use", "id": "", "name": "f",
                                                                  "input": {}}]),
                  ("user", [{"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                         "data": "not base64!"}}, {"type": "text", "text": "b"}]),
                  ("user", {"role": "user", "name": "n", "content": [{"type": "text", "text": "c"},
                                                                     {"type": "video_url", "video_url": "v"}]}))
    out = convert(json.dumps(src).encode(), to="asif")
    parts = {e["id"]: [p.get("semantic_type", p["kind"]) for p in e["data"]["parts"]] for e in out.document["events"]}
    assert parts == {"m1": ["text", "anthropic-messages/tool_use"], "m2": ["anthropic-messages/image", "text"],
                     "m3": ["text", "openai-chat/video_url"]}
    ids = {loss["id"] for loss in out.document["losses"]}
    assert {"translation:dialect-opaque-block:anthropic-messages/tool_use",
            "translation:dialect-opaque-block:anthropic-messages/image",
            "translation:dialect-opaque-block:openai-chat/video_url"} <= ids
    assert convert(out.output, to="continuity").document == src


def test_edited_resources_travel_back_into_their_blocks():
    """A URL, a file id and a document's text are the resource's own fields: edits of them are
    written back into the block they came from, in the source type the edit implies."""
    text_source = {"type": "text", "media_type": "text/plain", "data": "v1"}
    src = _export(("user", [{"type": "text", "text": "see"},
                            {"type": "image", "source": {"type": "url", "url": "https://e.x/a.png"}},
                            {"type": "document", "source": text_source}]),
                  ("user", {"role": "user", "name": "n", "content": [{"type": "file", "file": {"file_id": "file-1"}}]}))
    doc = json.loads(convert(json.dumps(src).encode(), to="asif").output)
    res = {r["id"]: r for r in doc["resources"]}
    res["m1/image/0"]["locator"] = "file_011C"  # now a Files API id, not a URL
    res["m1/document/1"]["text"] = "v2"
    res["m2/file/0"]["locator"] = "file-2"
    back = convert(json.dumps(doc).encode(), to="continuity").document
    first, second = (m["content_json"] for m in back["messages"])
    assert first[1] == {"type": "image", "source": {"type": "file", "file_id": "file_011C"}}
    assert first[2] == {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "v2"}}
    assert second["content"] == [{"type": "file", "file": {"file_id": "file-2"}}]


# -- messages the rendering gives back exactly are not rendered to find that out ---------------

_TEXTS = st.sampled_from(["", "ok", "Done.\n", "é ☃", "a \"quoted\" text"])
_ARGUMENTS = st.one_of(st.dictionaries(st.sampled_from(["q", "n", "é"]), st.one_of(st.integers(-3, 3), _TEXTS,
                                                                                   st.booleans(), st.none()),
                                       max_size=3), st.lists(st.integers(0, 2), max_size=2), st.none())


def _objects(value: Any) -> list[dict]:
    """Every JSON object in ``value``, outermost first."""
    if isinstance(value, dict):
        return [value, *(o for v in value.values() for o in _objects(v))]
    if isinstance(value, list):
        return [o for v in value for o in _objects(v)]
    return []


def _off_shape(draw: st.DrawFn, messages: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """The messages as they are, or with one object off the rendering's shape by one step: its
    keys reordered, a key added or dropped, or a value of another type."""
    messages = copy.deepcopy(messages)  # (the drawn blocks may be shared constants)
    how = draw(st.sampled_from(["as is", "reorder", "extra", "drop", "retype"]))
    objects = _objects([content for _, content in messages])
    if how == "as is" or not objects:
        return messages
    obj = draw(st.sampled_from(objects))
    keys = list(obj)
    if how == "reorder" and len(keys) > 1:
        items = list(obj.items())
        obj.clear()
        obj.update(reversed(items))
    elif how == "extra":
        obj[draw(st.sampled_from(["extra", "cache_control", "name", "usage"]))] = draw(_ARGUMENTS)
    elif how == "drop" and keys:
        del obj[draw(st.sampled_from(keys))]
    elif how == "retype" and keys:
        obj[draw(st.sampled_from(keys))] = draw(st.sampled_from([None, 1, True, "", "x", [], {}]))
    return messages


_PART_BLOCKS = [{"type": "text", "text": "r"}, {"type": "thinking", "thinking": "hm", "signature": "s"},
                {"type": "redacted_thinking", "data": "x"},
                {"type": "search_result", "source": "s", "title": "t", "content": [{"type": "text", "text": "r"}]},
                {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}}]


@st.composite
def _anthropic(draw: st.DrawFn) -> list[tuple[str, Any]]:
    ids = draw(st.lists(st.sampled_from(["toolu_1", "toolu_2", "t"]), min_size=1, max_size=2, unique=True))
    blocks = [{"type": "text", "text": draw(_TEXTS)} for _ in range(draw(st.integers(0, 2)))]
    if draw(st.booleans()):
        blocks.append({"type": "text", "text": "see", "citations": draw(_ARGUMENTS)})
    if draw(st.booleans()):
        blocks.append(draw(st.sampled_from(_PART_BLOCKS[1:])))
    blocks += [{"type": "tool_use", "id": i, "name": "bash", "input": draw(_ARGUMENTS)} for i in ids]
    blocks = draw(st.permutations(blocks)) if draw(st.booleans()) else blocks
    results = []
    for i in ids:
        result: dict[str, Any] = {"type": "tool_result", "tool_use_id": i}
        result["content"] = draw(st.one_of(_TEXTS, st.lists(st.sampled_from(_PART_BLOCKS), max_size=3),
                                           st.just({"a": 1})))
        if draw(st.booleans()):
            result["is_error"] = draw(st.sampled_from([True, False, "yes", None]))
        results.append(result)
    if draw(st.booleans()):
        results.append({"type": "text", "text": draw(_TEXTS)})
    return _off_shape(draw, [("assistant", blocks or [{"type": "text", "text": "x"}]), ("user", results)])


@st.composite
def _openai(draw: st.DrawFn) -> list[tuple[str, Any]]:
    ids = draw(st.lists(st.sampled_from(["call_1", "call_2"]), min_size=0, max_size=2, unique=True))
    spaced = draw(st.booleans())
    calls = [{"id": i, "type": "function", "function": {"name": "f", "arguments": draw(st.one_of(
        _ARGUMENTS.map(lambda a: json_text(a, spaced)),
        st.sampled_from(['{"q":1}', '{"q": 1}', '{ "q":1 }', '{"q":', "1", "[]"])))}} for i in ids]
    message: dict[str, Any] = {"role": draw(st.sampled_from(["assistant", "assistant", "user"])),
                               "content": draw(st.one_of(_TEXTS, st.none()))}
    if calls or draw(st.booleans()):
        message["tool_calls"] = calls
    tools = [("tool", {"role": "tool", "tool_call_id": i, "content": draw(_TEXTS)}) for i in ids]
    return _off_shape(draw, [("assistant", message), *tools])


_UNUSUAL_SPACING = [("assistant", {"role": "assistant", "content": "x", "tool_calls": [
    {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": '{ "q":1 }'}}]}),
    ("tool", {"role": "tool", "tool_call_id": "call_1", "content": "ok"})]
_UNUSUAL_ORDER = [("assistant", [{"text": "hi", "type": "text"}, {"type": "tool_use", "id": "t", "name": "b",
                                                                    "input": {}}]),
                  ("user", [{"type": "tool_result", "content": "ok", "tool_use_id": "t"}])]

_NESTED_EXTRA = [("assistant", [{"type": "tool_use", "id": "t", "name": "b", "input": {}}]),
                 ("user", [{"type": "tool_result", "tool_use_id": "t",
                            "content": [{"type": "text", "text": "r", "cache_control": {"type": "ephemeral"}}]}])]

# the order Claude Code writes a result in (an error's too): recorded, so the split is exact
_CLIENT_ORDER = [("assistant", [{"type": "tool_use", "id": "t", "name": "b", "input": {}},
                                {"type": "tool_use", "id": "u", "name": "b", "input": {}}]),
                 ("user", [{"tool_use_id": "t", "type": "tool_result", "content": "ok"},
                           {"type": "tool_result", "content": "no", "is_error": True, "tool_use_id": "u"}])]


@given(st.one_of(_anthropic(), _openai()))
@example(_UNUSUAL_SPACING)
@example(_UNUSUAL_ORDER)
@example(_CLIENT_ORDER)
@example(_NESTED_EXTRA)
def test_a_message_said_exact_has_no_difference_from_its_rendering(messages):
    """A split that says its rendering is the content itself spares the reader rendering it: a
    conversion with every split rendered and compared must come out the same, byte for byte."""
    for role, content in messages:
        found = split(content, role, "m")
        event("exact" if found is not None and found.exact else "rendered" if found is not None else "no dialect")
    doc = export(*messages)
    fast = convert(doc, to="asif", options=Options(validate=False)).output
    never = mock.Mock(return_value=False)
    with mock.patch.object(anthropic, "_exact", never), mock.patch.object(openai, "_exact", never):
        rendered = convert(doc, to="asif", options=Options(validate=False)).output
    assert fast == rendered
    back = convert(fast, to="continuity").output
    assert json.loads(back)["messages"] == export(*messages)["messages"]


@pytest.mark.parametrize("content", [
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a": 12345678901234567890}'}}]},
    [{"type": "function_call", "call_id": "c1", "name": "f", "arguments": '{"a": [-9007199254740992]}'}],
])
def test_a_call_whose_argument_string_holds_an_unsafe_integer_stays_a_message(content):
    """The number is inside a string, so the input's limits never saw it; mapped, it would be an
    ASIF number beyond ±(2^53 − 1), which the output check refuses. It stays the text it is."""
    doc = export(("assistant", content))
    result = convert(doc, to="asif")
    events = json.loads(result.output)["events"]
    assert [e["kind"] for e in events] == ["message"]
    assert any(loss.id == "translation:dialect-unsafe-integer" and loss.kind == "dialect_not_applied"
               for loss in result.losses)
    assert json.loads(convert(result.output, to="continuity").output)["messages"] == doc["messages"]


def _tool_turn(call_id: str, *, text: str | None = "hi") -> list[tuple[str, Any]]:
    use = {"type": "tool_use", "id": call_id, "name": "b", "input": {}}
    said = [{"type": "text", "text": text}, use] if text is not None else [use]
    return [("assistant", said), ("user", [{"type": "tool_result", "tool_use_id": call_id, "content": "ok"}])]


@pytest.mark.parametrize(("ids", "stored"), [
    # no record is named like a split event: nothing stored
    (["m1", "m2", "m3", "m4", "m5", "m6"], set()),
    # a later record holds the id of m1's next call: the writer would take its call for m1's
    (["m1", "m2", "m1/call/1", "m4", "m5", "m6"], {"m1"}),
    # a later record holds the id of m2's next result (m2 is a result itself)
    (["m1", "m2", "m3", "m2/result/1", "m5", "m6"], {"m2"}),
    # an earlier record holds the id of m5's first call: m5's call is renamed
    (["m1", "m2", "m5/call/0", "m4", "m5", "m6"], {"m5"}),
])
def test_a_split_message_stores_its_members_only_where_ids_would_mislead_the_writer(ids, stored):
    """The writer finds a split message's events under ``<id>/call/<k>`` and ``<id>/result/<k>``;
    where another record holds such an id (before or after), the members are written out, and
    only there. Either way the export comes back exactly."""
    doc = export(*_tool_turn("t1"), *_tool_turn("t2", text=None), *_tool_turn("t3"))
    for message, new_id in zip(doc["messages"], ids, strict=True):
        message["message_id"] = new_id
    out = convert(doc, to="asif")
    states = {e["id"]: e["extensions"]["agent-continuity/1"] for e in json.loads(out.output)["events"]
              if "agent-continuity/1" in e.get("extensions", {})}
    assert {eid for eid, state in states.items() if "members" in state} == stored
    assert json.loads(convert(out.output, to="continuity").output) == doc
