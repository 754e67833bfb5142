"""OpenAI Responses items and Google Gen AI parts, built and validated with the SDKs' own types,
map to ASIF as the dialects say and come back exactly; the SDKs' unions are enumerated at run
time, so a member no sample covers fails here instead of passing silently as opaque content."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from google.genai import types as gtypes
from hypothesis import given, note
from hypothesis import strategies as st
from openai.types import responses as R

from asif_convert import convert, ir
from asif_convert._dialects import REASONING, google_genai, openai_responses, split
from asif_convert._docs import load_dialects

from .sdk_blocks import instance, members
from .strategies import json_values
from .test_canonical_content import back, event, export, to_asif
from .test_foreign_state import VOCABULARY, _objects, vocab_json
from .test_roundtrip import exact
from .test_visibility import unseen

PNG = "iVBORw0KGgo="  # base64 of the PNG signature

# -- OpenAI Responses ------------------------------------------------------------------------------

_CALL = {"type": "function_call", "call_id": "call_f", "name": "weather", "arguments": '{"city":"Paris"}'}
_RESPONSES: dict[str, tuple[dict[str, Any], tuple[Any, ...], dict[str, Any] | None]] = {
    # key: the member's module and class; value: (item, expected mapping, the call an output answers)
    "easy_input_message.EasyInputMessage": ({"role": "user", "content": "hello"}, ("message", ["hello"]), None),
    "response_input_item.Message": (
        {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "look"},
            {"type": "input_image", "detail": "auto", "image_url": f"data:image/png;base64,{PNG}"},
            {"type": "input_file", "file_id": "file-abc", "filename": "a.pdf"},
            {"type": "input_image", "detail": "high", "image_url": "https://example.com/a.png"}]},
        ("message", ["look"], 3), None),
    "response_output_message.ResponseOutputMessage": (
        {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed", "content": [
            {"type": "output_text", "text": "Paris", "annotations": [
                {"type": "url_citation", "url": "https://example.com", "title": "e", "start_index": 0,
                 "end_index": 5}]},
            {"type": "refusal", "refusal": "I will not."}]},
        ("message", ["Paris", "I will not."]), None),
    "response_file_search_tool_call.ResponseFileSearchToolCall": (
        {"id": "fs_1", "type": "file_search_call", "status": "completed", "queries": ["q"],
         "results": [{"file_id": "file-1", "filename": "a.txt", "score": 0.5, "text": "found"}]},
        ("server", "file_search", "success"), None),
    "response_computer_tool_call.ResponseComputerToolCall": (
        {"id": "cu_1", "call_id": "call_cu", "type": "computer_call", "status": "completed",
         "pending_safety_checks": [], "action": {"type": "click", "button": "left", "x": 1, "y": 2}},
        ("call", "computer", "call_cu"), None),
    "response_input_item.ComputerCallOutput": (
        {"type": "computer_call_output", "call_id": "call_cu",
         "output": {"type": "computer_screenshot", "image_url": f"data:image/png;base64,{PNG}"}},
        ("result", "call_cu", "unknown"), "response_computer_tool_call.ResponseComputerToolCall"),
    "response_function_web_search.ResponseFunctionWebSearch": (
        {"id": "ws_1", "type": "web_search_call", "status": "completed", "action": {"type": "search", "query": "q"}},
        ("server", "web_search", "success"), None),
    "response_function_tool_call.ResponseFunctionToolCall": (_CALL, ("call", "weather", "call_f"), None),
    "response_input_item.FunctionCallOutput": (
        {"type": "function_call_output", "call_id": "call_f", "output": "sunny"},
        ("result", "call_f", "unknown"), "response_function_tool_call.ResponseFunctionToolCall"),
    "response_input_item.ToolSearchCall": (
        {"type": "tool_search_call", "call_id": "call_ts", "arguments": {"query": "maps"}, "execution": "client"},
        ("call", "tool_search", "call_ts"), None),
    "response_tool_search_output_item_param.ResponseToolSearchOutputItemParam": (
        {"type": "tool_search_output", "call_id": "call_ts", "execution": "client", "tools": []},
        ("result", "call_ts", "unknown"), "response_input_item.ToolSearchCall"),
    "response_input_item.AdditionalTools": (
        {"type": "additional_tools", "role": "developer", "tools": []}, ("opaque",), None),
    "response_configuration_update_item_param.ResponseConfigurationUpdateItemParam": (
        {"type": "configuration_update", "id": "cfg_1"}, ("opaque",), None),
    "response_reasoning_item.ResponseReasoningItem": (
        {"id": "rs_1", "type": "reasoning", "summary": [{"type": "summary_text", "text": "thinking"}],
         "encrypted_content": "ZW5j"}, ("reasoning",), None),
    "response_compaction_item_param.ResponseCompactionItemParam": (
        {"type": "compaction", "encrypted_content": "ZW5j"}, ("opaque",), None),
    "response_input_item.ImageGenerationCall": (
        {"id": "ig_1", "type": "image_generation_call", "status": "completed", "result": PNG,
         "revised_prompt": "a red square"},
        ("server", "image_generation", "success"), None),
    "response_code_interpreter_tool_call.ResponseCodeInterpreterToolCall": (
        {"id": "ci_1", "type": "code_interpreter_call", "status": "completed", "code": "print(1)",
         "container_id": "cntr_1", "outputs": [{"type": "logs", "logs": "1\n"},
                                               {"type": "image", "url": "https://example.com/plot.png"}]},
        ("server", "code_interpreter", "success"), None),
    "response_input_item.LocalShellCall": (
        {"id": "ls_1", "call_id": "call_ls", "type": "local_shell_call", "status": "completed",
         "action": {"type": "exec", "command": ["ls"], "env": {}}}, ("call", "local_shell", "call_ls"), None),
    "response_input_item.LocalShellCallOutput": (
        {"id": "call_ls", "type": "local_shell_call_output", "output": "a.txt"},
        ("result", "call_ls", "unknown"), "response_input_item.LocalShellCall"),
    "response_input_item.ShellCall": (
        {"type": "shell_call", "call_id": "call_sh", "action": {"commands": ["ls"]}},
        ("call", "shell", "call_sh"), None),
    "response_input_item.ShellCallOutput": (
        {"type": "shell_call_output", "call_id": "call_sh",
         "output": [{"stdout": "a.txt", "stderr": "", "outcome": {"type": "exit", "exit_code": 0}}]},
        ("result", "call_sh", "unknown"), "response_input_item.ShellCall"),
    "response_input_item.ApplyPatchCall": (
        {"type": "apply_patch_call", "call_id": "call_ap", "status": "completed",
         "operation": {"type": "create_file", "path": "a.txt", "diff": "+a"}},
        ("call", "apply_patch", "call_ap"), None),
    "response_input_item.ApplyPatchCallOutput": (
        {"type": "apply_patch_call_output", "call_id": "call_ap", "status": "failed", "output": "conflict"},
        ("result", "call_ap", "error"), "response_input_item.ApplyPatchCall"),
    "response_input_item.McpListTools": (
        {"id": "ml_1", "type": "mcp_list_tools", "server_label": "srv",
         "tools": [{"name": "t", "input_schema": {"type": "object"}}]}, ("server", "mcp_list_tools", "success"), None),
    "response_input_item.McpApprovalRequest": (
        {"id": "mr_1", "type": "mcp_approval_request", "arguments": "{}", "name": "t", "server_label": "srv"},
        ("opaque",), None),
    "response_input_item.McpApprovalResponse": (
        {"type": "mcp_approval_response", "approval_request_id": "mr_1", "approve": True}, ("opaque",), None),
    "response_input_item.McpCall": (
        {"id": "mc_1", "type": "mcp_call", "name": "t", "server_label": "srv", "arguments": '{"a":1}',
         "output": "done", "status": "completed"}, ("server", "t", "success"), None),
    "response_custom_tool_call_output.ResponseCustomToolCallOutput": (
        {"type": "custom_tool_call_output", "call_id": "call_ct", "output": [{"type": "input_text", "text": "ok"}]},
        ("result", "call_ct", "unknown"), "response_custom_tool_call.ResponseCustomToolCall"),
    "response_custom_tool_call.ResponseCustomToolCall": (
        {"type": "custom_tool_call", "call_id": "call_ct", "name": "grammar", "input": "SELECT 1"},
        ("call", "grammar", "call_ct"), None),
    "response_input_item.CompactionTrigger": ({"type": "compaction_trigger"}, ("opaque",), None),
    "response_input_item.ItemReference": ({"type": "item_reference", "id": "msg_0"}, ("opaque",), None),
    "response_input_item.Program": (
        {"id": "pg_1", "type": "program", "call_id": "call_pg", "code": "x()", "fingerprint": "f"},
        ("call", "program", "call_pg"), None),
    "response_input_item.ProgramOutput": (
        {"id": "po_1", "type": "program_output", "call_id": "call_pg", "result": "1", "status": "completed"},
        ("result", "call_pg", "unknown"), "response_input_item.Program"),
    # members of the output union only
    "response_function_tool_call_output_item.ResponseFunctionToolCallOutputItem": (
        {"id": "fco_1", "type": "function_call_output", "call_id": "call_f", "output": "sunny", "status": "completed"},
        ("result", "call_f", "unknown"), "response_function_tool_call.ResponseFunctionToolCall"),
    "response_computer_tool_call_output_item.ResponseComputerToolCallOutputItem": (
        {"id": "cco_1", "type": "computer_call_output", "call_id": "call_cu", "status": "completed",
         "output": {"type": "computer_screenshot", "file_id": "file-shot"}},
        ("result", "call_cu", "unknown"), "response_computer_tool_call.ResponseComputerToolCall"),
    "response_output_item.Program": (
        {"id": "pg_1", "type": "program", "call_id": "call_pg", "code": "x()", "fingerprint": "f"},
        ("call", "program", "call_pg"), None),
    "response_output_item.ProgramOutput": (
        {"id": "po_1", "type": "program_output", "call_id": "call_pg", "result": "1", "status": "completed"},
        ("result", "call_pg", "unknown"), "response_output_item.Program"),
    "response_tool_search_call.ResponseToolSearchCall": (
        {"id": "ts_1", "type": "tool_search_call", "arguments": {"query": "maps"}, "execution": "server",
         "status": "completed"}, ("call", "tool_search", "ts_1"), None),
    "response_tool_search_output_item.ResponseToolSearchOutputItem": (
        {"id": "tso_1", "type": "tool_search_output", "call_id": "call_ts", "execution": "client",
         "status": "completed", "tools": []}, ("result", "call_ts", "unknown"), "response_input_item.ToolSearchCall"),
    "response_output_item.AdditionalTools": (
        {"id": "at_1", "type": "additional_tools", "role": "developer", "tools": []}, ("opaque",), None),
    "response_compaction_item.ResponseCompactionItem": (
        {"id": "cp_1", "type": "compaction", "encrypted_content": "ZW5j"}, ("opaque",), None),
    "response_output_item.ImageGenerationCall": (
        {"id": "ig_2", "type": "image_generation_call", "status": "generating"},
        ("server", "image_generation", None), None),
    "response_output_item.LocalShellCall": (
        {"id": "ls_1", "call_id": "call_ls", "type": "local_shell_call", "status": "completed",
         "action": {"type": "exec", "command": ["ls"], "env": {}}}, ("call", "local_shell", "call_ls"), None),
    "response_output_item.LocalShellCallOutput": (
        {"id": "call_ls", "type": "local_shell_call_output", "output": "a.txt", "status": "completed"},
        ("result", "call_ls", "unknown"), "response_output_item.LocalShellCall"),
    "response_function_shell_tool_call.ResponseFunctionShellToolCall": (
        {"id": "sh_1", "type": "shell_call", "call_id": "call_sh", "status": "completed",
         "action": {"commands": ["ls"], "max_output_length": None, "timeout_ms": None}},
        ("call", "shell", "call_sh"), None),
    "response_function_shell_tool_call_output.ResponseFunctionShellToolCallOutput": (
        {"id": "sho_1", "type": "shell_call_output", "call_id": "call_sh", "status": "completed",
         "output": [{"stdout": "a.txt", "stderr": "", "outcome": {"type": "exit", "exit_code": 0}}]},
        ("result", "call_sh", "unknown"), "response_function_shell_tool_call.ResponseFunctionShellToolCall"),
    "response_apply_patch_tool_call.ResponseApplyPatchToolCall": (
        {"id": "ap_1", "type": "apply_patch_call", "call_id": "call_ap", "status": "completed",
         "operation": {"type": "delete_file", "path": "a.txt"}}, ("call", "apply_patch", "call_ap"), None),
    "response_apply_patch_tool_call_output.ResponseApplyPatchToolCallOutput": (
        {"id": "apo_1", "type": "apply_patch_call_output", "call_id": "call_ap", "status": "completed"},
        ("result", "call_ap", "success"), "response_apply_patch_tool_call.ResponseApplyPatchToolCall"),
    "response_output_item.McpCall": (
        {"id": "mc_2", "type": "mcp_call", "name": "t", "server_label": "srv", "arguments": "{}",
         "error": {"type": "mcp_tool_execution_error", "content": [{"type": "text", "text": "boom"}]},
         "status": "failed"}, ("server", "t", "error"), None),
    "response_output_item.McpListTools": (
        {"id": "ml_2", "type": "mcp_list_tools", "server_label": "srv", "tools": [], "error": "unreachable"},
        ("server", "mcp_list_tools", "error"), None),
    "response_output_item.McpApprovalRequest": (
        {"id": "mr_2", "type": "mcp_approval_request", "arguments": "{}", "name": "t", "server_label": "srv"},
        ("opaque",), None),
    "response_output_item.McpApprovalResponse": (
        {"id": "ma_1", "type": "mcp_approval_response", "approval_request_id": "mr_2", "approve": False},
        ("opaque",), None),
    "response_custom_tool_call_output_item.ResponseCustomToolCallOutputItem": (
        {"id": "cto_1", "type": "custom_tool_call_output", "call_id": "call_ct", "output": "ok",
         "status": "completed"}, ("result", "call_ct", "unknown"), "response_custom_tool_call.ResponseCustomToolCall"),
}


def _key(cls: type) -> str:
    return f"{cls.__module__.rsplit('.', 1)[-1]}.{cls.__name__}"


RESPONSE_MEMBERS = {_key(m): m for u in (R.ResponseInputItem, R.ResponseOutputItem) for m in members(u)}


def test_every_member_of_the_responses_item_unions_has_a_sample():
    assert set(RESPONSE_MEMBERS) - set(_RESPONSES) == set(), "an SDK item type no test covers"
    assert set(_RESPONSES) - set(RESPONSE_MEMBERS) == set()


def _validated(key: str, dump: str) -> dict[str, Any]:
    """The sample as the SDK's own model validates and dumps it: ``to_dict`` (what was set) or
    ``model_dump`` (every field, unset ones as null)."""
    cls = RESPONSE_MEMBERS[key]
    dumped = instance(cls, _RESPONSES[key][0])  # (which also refuses a key the type does not declare)
    if dump == "to_dict":
        return dumped
    return cls.model_validate(_RESPONSES[key][0]).model_dump(mode="json")  # type: ignore[attr-defined,no-any-return]


def _responses_export(key: str, dump: str, as_list: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    item = _validated(key, dump)
    answers = _RESPONSES[key][2]
    messages = []
    if answers is not None:  # an output answers a call made earlier
        messages.append(("assistant", [_validated(answers, dump)]))
    role = "tool" if _RESPONSES[key][1][0] == "result" else "user" if item.get("role") == "user" else "assistant"
    messages.append((role, [item] if as_list else item))
    return export(*messages), item


def _check_mapping(asif: dict[str, Any], expected: tuple[Any, ...], kind: str) -> None:
    last = asif["events"]
    what = expected[0]
    anchor = [e for e in last if not e["id"].startswith("m0")] or last
    if what == "message":
        texts = [p["text"] for e in anchor if e["kind"] == "message" for p in e["data"]["parts"] if p["kind"] == "text"]
        assert texts == expected[1]
        resources = [p for e in anchor if e["kind"] == "message" for p in e["data"]["parts"] if p["kind"] == "resource"]
        assert len(resources) == (expected[2] if len(expected) > 2 else 0)
        by_id = {r["id"]: r for r in asif["resources"]}
        for p in resources:
            res = by_id[p["resource_id"]]
            assert res["availability"] in ("embedded", "external")
            assert res["availability"] == "external" or len(res["sha256"]) == 64
    elif what == "reasoning":
        parts = [p for e in anchor if e["kind"] == "message" for p in e["data"]["parts"]]
        assert [p["kind"] for p in parts] == ["structured"] and parts[0]["schema"] == REASONING
        assert not any(p["kind"] == "text" for p in parts)  # never merged into visible text
    elif what == "opaque":
        parts = [p for e in anchor if e["kind"] == "message" for p in e["data"]["parts"]]
        assert [(p["kind"], p["semantic_type"]) for p in parts] == [("opaque", f"openai-responses/{kind}")]
        res = next(r for r in asif["resources"] if r["id"] == parts[0]["resource_id"])
        assert res["availability"] == "embedded" and res["media_type"] == "application/json"
        _assert_opaque_loss(asif, f"openai-responses/{kind}", anchor[0]["id"])
    elif what == "call":
        calls = [e["data"] for e in anchor if e["kind"] == "tool_call"]
        assert [(c["tool_id"], c["call_id"]) for c in calls] == [expected[1:3]]
    elif what == "result":
        results = [e["data"] for e in anchor if e["kind"] == "tool_result"]
        assert [(r["call_id"], r["outcome"]) for r in results] == [expected[1:3]]
    elif what == "server":
        calls = [e["data"] for e in anchor if e["kind"] == "tool_call"]
        results = [e for e in anchor if e["kind"] == "tool_result"]
        assert [c["tool_id"] for c in calls] == [expected[1]]
        # who ran it: the provider (or the MCP server it called), a participant of kind service
        server = "mcp:srv" if kind.startswith("mcp_") else "openai"
        assert _server_of(asif, calls[0]["tool_id"]) == server
        if expected[2] is None:
            assert results == []  # still running: no outcome is invented
        else:
            assert [(r["data"]["call_id"], r["data"]["outcome"], r["actor_id"]) for r in results] == [
                (calls[0]["call_id"], expected[2], server)]
            assert {"id": server, "kind": "service", "name": server} in asif["participants"]


def _assert_opaque_loss(asif: dict[str, Any], semantic_type: str, event_id: str) -> None:
    """A loss names the opaque block's type and the record that holds it."""
    losses = [loss for loss in asif["losses"] if semantic_type in loss["id"]]
    assert [loss["kind"] for loss in losses] == ["opaque_content"]
    assert {"type": "event", "id": event_id} in losses[0]["references"]


def _server_of(asif: dict[str, Any], tool_id: str) -> str | None:
    """The server identity of a tool: who runs it when not the caller's runtime."""
    return next(t for t in asif["tools"] if t["id"] == tool_id).get("server_identity")


@pytest.mark.parametrize("as_list", [True, False], ids=["list", "item"])
@pytest.mark.parametrize("dump", ["to_dict", "model_dump"])
@pytest.mark.parametrize("key", sorted(_RESPONSES))
def test_a_responses_item_maps_and_round_trips_exactly(key, dump, as_list):
    doc, item = _responses_export(key, dump, as_list)
    asif = to_asif(doc)
    _check_mapping(asif, _RESPONSES[key][1], item.get("type", "message"))
    again = convert(json.dumps(asif).encode(), to="continuity")
    assert exact(doc, again.document) == {}
    assert again.losses == []


_CONTENT_PARTS: dict[str, tuple[dict[str, Any], tuple[str, ...]]] = {
    # key: the content part class; value: (part, what it becomes: text, refusal, or a resource's availability)
    "ResponseInputText": ({"type": "input_text", "text": "a"}, ("text",)),
    "ResponseInputImage": ({"type": "input_image", "detail": "auto", "file_id": "file-1"}, ("external",)),
    "ResponseInputFile": ({"type": "input_file", "file_data": f"data:application/pdf;base64,{PNG}",
                           "filename": "a.pdf"}, ("embedded",)),
    "ResponseInputAudio": ({"type": "input_audio", "input_audio": {"data": PNG, "format": "wav"}}, ("embedded",)),
    "ResponseOutputText": ({"type": "output_text", "text": "b", "annotations": [
        {"type": "file_citation", "file_id": "file-1", "filename": "a.pdf", "index": 0}]}, ("text",)),
    "ResponseOutputRefusal": ({"type": "refusal", "refusal": "no"}, ("text",)),
}
_CONTENT_UNIONS = (R.ResponseInputContent, R.response_output_message.Content, R.ResponseInputAudio)


def test_every_message_content_part_type_has_a_sample():
    assert {m.__name__ for u in _CONTENT_UNIONS for m in members(u)} == set(_CONTENT_PARTS)


@pytest.mark.parametrize("name", sorted(_CONTENT_PARTS))
def test_a_message_content_part_maps_and_round_trips_exactly(name):
    cls = next(m for u in _CONTENT_UNIONS for m in members(u) if m.__name__ == name)
    part = instance(cls, _CONTENT_PARTS[name][0])
    role = "assistant" if name.startswith("ResponseOutput") else "user"
    doc = export((role, {"type": "message", "role": role, "content": [part]}))
    asif = to_asif(doc)
    [mapped] = event(asif, "message")["data"]["parts"]
    expected = _CONTENT_PARTS[name][1][0]
    if expected == "text":
        assert mapped["text"] == part.get("text", part.get("refusal"))
        assert mapped.get("annotations", []) == part.get("annotations", [])  # attached to its text
    else:
        res = next(r for r in asif["resources"] if r["id"] == mapped["resource_id"])
        assert res["availability"] == expected
    assert exact(doc, convert(json.dumps(asif).encode(), to="continuity").document) == {}


def test_a_generated_image_and_its_revised_prompt_are_the_outcome():
    item = _validated("response_input_item.ImageGenerationCall", "to_dict")
    asif = to_asif(export(("assistant", item)))
    parts = event(asif, "tool_result")["data"]["parts"]
    assert [p["kind"] for p in parts] == ["resource", "text"] and parts[1]["text"] == "a red square"
    image = next(r for r in asif["resources"] if r["id"] == parts[0]["resource_id"])
    assert (image["availability"], image["media_type"]) == ("embedded", "image/png")


def test_a_function_response_part_that_is_not_an_object_stays_opaque_in_place():
    call = {"role": "model", "parts": [_GOOGLE["function_call"][0]]}
    response = {"role": "user", "parts": [{"function_response": {"id": "fc1", "name": "weather",
                                                                 "response": {"output": "sunny"}, "parts": [None]}}]}
    doc = export(("assistant", call), ("tool", response))
    asif = to_asif(doc)
    assert [p["kind"] for p in event(asif, "tool_result")["data"]["parts"]] == ["structured", "opaque"]
    assert exact(doc, convert(json.dumps(asif).encode(), to="continuity").document) == {}


def test_a_provider_run_call_whose_status_is_not_a_string_has_no_outcome():
    search = {**_RESPONSES["response_function_web_search.ResponseFunctionWebSearch"][0], "status": []}
    doc = export(("assistant", [search]))
    asif = to_asif(doc)
    assert [e["kind"] for e in asif["events"]] == ["tool_call"]
    assert exact(doc, convert(json.dumps(asif).encode(), to="continuity").document) == {}


# -- Google Gen AI ---------------------------------------------------------------------------------

_GOOGLE: dict[str, tuple[dict[str, Any], tuple[Any, ...]]] = {
    # key: the Part field the sample is about; value: (part, expected mapping)
    "text": ({"text": "hello"}, ("text", "hello")),
    "thought": ({"text": "pondering", "thought": True}, ("reasoning",)),
    "thought_signature": ({"text": "hello", "thought_signature": "c2ln"}, ("text", "hello", "signed")),
    "inline_data": ({"inline_data": {"data": PNG, "mime_type": "image/png"}}, ("resource", "embedded")),
    "file_data": ({"file_data": {"file_uri": "gs://bucket/a.pdf", "mime_type": "application/pdf"}},
                  ("resource", "external")),
    "function_call": ({"function_call": {"id": "fc1", "name": "weather", "args": {"city": "Paris"}}},
                      ("call", "weather", "fc1")),
    "function_response": ({"function_response": {"id": "fc1", "name": "weather", "response": {"output": "sunny"},
                                                  "parts": [{"inline_data": {"data": PNG, "mime_type": "image/png"}}]}},
                          ("result", "fc1", "success")),
    "executable_code": ({"executable_code": {"code": "print(1)", "language": "PYTHON"}},
                        ("call", "code_execution", None)),
    "code_execution_result": ({"code_execution_result": {"outcome": "OUTCOME_OK", "output": "1\n"}},
                              ("result", None, "success")),
    "tool_call": ({"tool_call": {"id": "tc1", "tool_type": "GOOGLE_SEARCH_WEB", "args": {"q": "x"}}},
                  ("call", "google_search_web", "tc1")),
    "tool_response": ({"tool_response": {"id": "tc1", "tool_type": "GOOGLE_SEARCH_WEB", "response": {"r": 1}}},
                      ("result", "tc1", "unknown")),
    "video_metadata": ({"inline_data": {"data": PNG, "mime_type": "video/mp4"},
                        "video_metadata": {"start_offset": "1s"}}, ("resource", "embedded")),
    "media_resolution": ({"inline_data": {"data": PNG, "mime_type": "image/png"},
                          "media_resolution": {"level": "MEDIA_RESOLUTION_LOW"}}, ("resource", "embedded")),
    "part_metadata": ({"text": "hello", "part_metadata": {"k": "v"}}, ("text", "hello")),
    # a part whose datum this dialect has no ASIF home for: kept whole, opaque
    "audio_transcription": ({"audio_transcription": {"text": "hi", "finished": True}}, ("opaque",)),
    "media_processing": ({"inline_data": {"data": PNG, "mime_type": "image/png"}, "media_processing": "STATIC"},
                         ("resource", "embedded")),
    "speech_metadata": ({"inline_data": {"data": PNG, "mime_type": "audio/wav"}, "speech_metadata": {"speaker": "a"}},
                        ("resource", "embedded")),
    "document_metadata": ({"inline_data": {"data": PNG, "mime_type": "application/pdf"},
                           "document_metadata": {"start_page": 1}}, ("resource", "embedded")),
    "spreadsheet_metadata": ({"inline_data": {"data": PNG, "mime_type": "text/csv"},
                              "spreadsheet_metadata": {"sheet_index": 0}}, ("resource", "embedded")),
    "audio_metadata": ({"inline_data": {"data": PNG, "mime_type": "audio/wav"},
                        "audio_metadata": {"start_offset": "1s"}}, ("resource", "embedded")),
}
# what a result answers: the call made just before it
_GOOGLE_CALLS = {"function_response": "function_call", "tool_response": "tool_call"}


def test_every_field_of_the_google_part_has_a_sample():
    fields = set(gtypes.Part.model_fields)
    assert fields - set(_GOOGLE) == set(), "a Part field no test covers"
    assert set(_GOOGLE) - fields == set()


def _part(key: str, camel: bool, nulls: bool = False) -> dict[str, Any]:
    """The sample validated by the SDK's Part and dumped as the SDK does (with ``nulls``, every
    field spelled out), or as the REST API writes it."""
    part = gtypes.Part.model_validate(_GOOGLE[key][0])  # (the Gen AI models refuse undeclared keys)
    return part.model_dump(mode="json", exclude_none=not nulls, by_alias=camel)


def _google_export(key: str, camel: bool, nulls: bool = False) -> dict[str, Any]:
    part = _part(key, camel, nulls)
    messages = []
    if key in _GOOGLE_CALLS:
        messages.append(("assistant", {"role": "model", "parts": [_part(_GOOGLE_CALLS[key], camel, nulls)]}))
        return export(*messages, ("user", {"role": "user", "parts": [part]}))
    if key == "code_execution_result":  # the result follows its code, in one content
        return export(("assistant", {"role": "model", "parts": [_part("executable_code", camel, nulls), part]}))
    if _GOOGLE[key][1][0] == "opaque":  # beside a part that is mapped, which it does not keep from mapping
        return export(("assistant", {"role": "model", "parts": [{"text": "x"}, part]}))
    return export(("assistant", {"role": "model", "parts": [part]}))


@pytest.mark.parametrize(("camel", "nulls"), [(False, False), (True, False), (False, True)],
                         ids=["snake", "camel", "model_dump"])
@pytest.mark.parametrize("key", sorted(_GOOGLE))
def test_a_google_part_maps_and_round_trips_exactly(key, camel, nulls):
    doc = _google_export(key, camel, nulls)
    asif = to_asif(doc)
    last = [e for e in asif["events"] if e["id"].startswith(doc["messages"][-1]["message_id"])]
    parts = [p for e in last if e["kind"] == "message" for p in e["data"]["parts"]]
    expected = _GOOGLE[key][1]
    if expected[0] == "text":
        assert [p["text"] for p in parts if p["kind"] == "text"] == [expected[1]]
        if key in google_genai.QUALIFIERS:  # a property of the text part it qualifies
            assert [p for p in parts if p["kind"] == "text"][0][google_genai.camel(key) if camel else key]
        signatures = [p for p in parts if p["kind"] == "structured"]
        assert len(signatures) == (1 if len(expected) > 2 else 0)
        assert all(p["schema"] == REASONING for p in signatures)
    elif expected[0] == "reasoning":
        assert [(p["kind"], p["schema"]) for p in parts] == [("structured", REASONING)]
    elif expected[0] == "resource":
        assert [p["kind"] for p in parts] == ["resource"]
        if key in google_genai.QUALIFIERS:  # a property of the part of the medium it qualifies
            assert parts[0][google_genai.camel(key) if camel else key] == _part(key, camel, nulls)[
                google_genai.camel(key) if camel else key]
        res = next(r for r in asif["resources"] if r["id"] == parts[0]["resource_id"])
        assert res["availability"] == expected[1]
    elif expected[0] == "opaque":
        assert [(p["kind"], p.get("semantic_type", p.get("text"))) for p in parts] == [
            ("text", "x"), ("opaque", f"google-genai/{key}")]
        _assert_opaque_loss(asif, f"google-genai/{key}", last[0]["id"])
    elif expected[0] == "call":
        calls = [e["data"] for e in last if e["kind"] == "tool_call"]
        assert [c["tool_id"] for c in calls] == [expected[1]]
        assert expected[2] is None or calls[0]["call_id"] == expected[2]
        assert _server_of(asif, calls[0]["tool_id"]) == (None if key == "function_call" else "google")
    elif expected[0] == "result":
        calls = {e["data"]["call_id"] for e in asif["events"] if e["kind"] == "tool_call"}
        results = [e["data"] for e in last if e["kind"] == "tool_result"]
        assert [r["outcome"] for r in results] == [expected[2]] and results[0]["call_id"] in calls
        if key == "function_response":  # the media it returned are resources of the result
            assert [p["kind"] for p in results[0]["parts"]] == ["structured", "resource"]
    again = convert(json.dumps(asif).encode(), to="continuity")
    assert exact(doc, again.document) == {}
    assert again.losses == []


# -- detection -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("content", "dialect"), [
    ({"role": "user", "content": "hi"}, "openai-chat"),  # fits Chat and an untyped Responses message
    ({"role": "user", "content": [{"type": "input_audio", "input_audio": {"data": PNG, "format": "wav"}}]},
     "openai-chat"),  # a part type both APIs share
    ({"role": "user", "content": [{"type": "input_text", "text": "hi"}]}, "openai-responses"),
    ({"type": "message", "role": "user", "content": "hi"}, "openai-responses"),  # Chat messages have no type
    ([{"type": "text", "text": "hi"}], "anthropic-messages"),
    ({"role": "model", "parts": [{"text": "hi"}]}, "google-genai"),
    ({"role": "user", "parts": [{"text": "hi"}], "content": "x"}, None),  # fits none
    ([{"type": "future_item"}], None),  # no known item at all
    ({"parts": [{"unknown_field": 1}]}, None),
])
def test_detection_is_resolved_by_the_documented_precedence(content, dialect):
    found = split(content, "user", "m")
    assert (found.dialect if found else None) == dialect


def test_an_unknown_item_stays_opaque_in_place_and_its_neighbours_are_mapped():
    found = split([{"type": "future_item", "x": 1}, _CALL], "assistant", "m")
    assert found is not None and found.opaque == ["future_item"]
    assert [c.call_id for c in found.calls] == ["call_f"]
    assert isinstance(found.parts, list) and isinstance(found.parts[0], ir.OpaquePart)


# -- travelling edits ------------------------------------------------------------------------------


@pytest.mark.parametrize(("style", "expected"), [('{"city":"Paris"}', '{"city":"Lyon"}'),
                                                  ('{"city": "Paris"}', '{"city": "Lyon"}')], ids=["compact", "spaced"])
def test_an_edited_responses_argument_travels_in_its_json_style(style, expected):
    call = {**_CALL, "arguments": style}
    asif = to_asif(export(("assistant", [call])))
    assert event(asif, "tool_call")["data"]["arguments"] == {"city": "Paris"}
    event(asif, "tool_call")["data"]["arguments"] = {"city": "Lyon"}
    assert back(asif)["messages"][0]["content_json"][0]["arguments"] == expected


def test_edited_texts_and_outcomes_travel_into_responses_items():
    message = _RESPONSES["response_output_message.ResponseOutputMessage"][0]
    search = _RESPONSES["response_function_web_search.ResponseFunctionWebSearch"][0]
    asif = to_asif(export(("assistant", [search, message])))
    event(asif, "message")["data"]["parts"][0]["text"] = "Lyon"
    event(asif, "message")["data"]["parts"][1]["text"] = "No."
    event(asif, "tool_result")["data"]["outcome"] = "error"
    items = back(asif)["messages"][0]["content_json"]
    assert items[0]["status"] == "failed"
    assert [c.get("text", c.get("refusal")) for c in items[1]["content"]] == ["Lyon", "No."]
    assert items[1]["content"][1]["type"] == "refusal"  # still a refusal
    assert items[1]["content"][0]["annotations"] == message["content"][0]["annotations"]


def test_added_and_removed_parts_travel_into_a_responses_message():
    message = _RESPONSES["response_output_message.ResponseOutputMessage"][0]
    asif = to_asif(export(("assistant", [message])))
    removed = copy.deepcopy(asif)
    event(removed, "message")["data"]["parts"].pop(1)
    content = back(removed)["messages"][0]["content_json"][0]["content"]
    assert [(c["type"], c["text"]) for c in content] == [("output_text", "Paris")]
    event(asif, "message")["data"]["parts"].append({"kind": "text", "text": "More."})
    content = back(asif)["messages"][0]["content_json"][0]["content"]
    assert [(c["type"], c.get("text", c.get("refusal"))) for c in content] == [
        ("output_text", "Paris"), ("refusal", "I will not."), ("output_text", "More.")]


def test_an_edited_string_output_travels():
    asif = to_asif(export(("assistant", [_CALL]), ("tool", {"type": "function_call_output", "call_id": "call_f",
                                                             "output": "sunny"})))
    event(asif, "tool_result")["data"]["parts"][0]["text"] = "rain"
    assert back(asif)["messages"][1]["content_json"] == {"type": "function_call_output", "call_id": "call_f",
                                                         "output": "rain"}


@pytest.mark.parametrize("camel", [False, True], ids=["snake", "camel"])
def test_edits_travel_into_google_parts_in_their_casing(camel):
    call = _part("function_call", camel)
    code = [_part("executable_code", camel), _part("code_execution_result", camel)]
    signed = {**_part("text", camel), ("thoughtSignature" if camel else "thought_signature"): "c2ln"}
    asif = to_asif(export(("assistant", {"role": "model", "parts": [signed, call, *code]})))
    event(asif, "message")["data"]["parts"][1]["text"] = "bye"
    event(asif, "tool_call", 0)["data"]["arguments"] = {"city": "Lyon"}
    event(asif, "tool_result")["data"]["outcome"] = "error"
    event(asif, "tool_result")["data"]["parts"][0]["text"] = "Traceback"
    parts = back(asif)["messages"][0]["content_json"]["parts"]
    key = (lambda k: k) if not camel else (lambda k: "".join(w if i == 0 else w.title()
                                                              for i, w in enumerate(k.split("_"))))
    assert parts[0] == {"text": "bye", key("thought_signature"): "c2ln"}  # the signature stays on its part
    assert parts[1][key("function_call")]["args"] == {"city": "Lyon"}
    assert parts[3][key("code_execution_result")] == {"outcome": "OUTCOME_FAILED", "output": "Traceback"}


def test_a_google_response_without_an_id_is_kept_as_structured_data():
    response = {"function_response": {"name": "weather", "response": {"output": "sunny"}}}
    asif = to_asif(export(("user", {"role": "user", "parts": [response]})))
    assert not [e for e in asif["events"] if e["kind"] == "tool_result"]  # no call to correlate it with
    assert event(asif, "message")["data"]["parts"] == [
        {"kind": "structured", "schema": "google-genai/function_response", "value": response}]


def _turns(calls: list[str], responses: list[tuple[str, str]], *between: tuple[str, Any]) -> dict[str, Any]:
    """A model turn of id-less calls (of the tools ``calls``), then any messages ``between``, then
    a user turn of id-less responses ((tool, output)), as the API writes them without ids."""
    model = {"role": "model", "parts": [{"function_call": {"name": n, "args": {"k": k}}} for k, n in enumerate(calls)]}
    user = {"role": "user", "parts": [{"function_response": {"name": n, "response": {"output": out}}}
                                      for n, out in responses]}
    return export(("user", {"role": "user", "parts": [{"text": "go"}]}), ("assistant", model), *between,
                  ("tool", user))


def _by_id(asif: dict[str, Any], event_id: str) -> dict[str, Any]:
    return next(e for e in asif["events"] if e["id"] == event_id)


def _answers(asif: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(call id, the called tool, what its result says) of every tool result, in order."""
    tools = {e["data"]["call_id"]: e["data"]["tool_id"] for e in asif["events"] if e["kind"] == "tool_call"}
    return [(e["data"]["call_id"], tools[e["data"]["call_id"]], e["data"]["parts"][0]["value"]["output"])
            for e in asif["events"] if e["kind"] == "tool_result"]


@pytest.mark.parametrize(("calls", "responses", "expected"), [
    # different tools, answered in another order: each response answers the call of its name
    (["weather", "time"], [("time", "noon"), ("weather", "sunny")],
     [("m1/function_call/1", "time", "noon"), ("m1/function_call/0", "weather", "sunny")]),
    # two calls of one tool: the responses answer them in order, as the API pairs them
    (["weather", "weather"], [("weather", "sunny"), ("weather", "rain")],
     [("m1/function_call/0", "weather", "sunny"), ("m1/function_call/1", "weather", "rain")]),
    # both at once: the first unanswered call of the name, whatever comes between
    (["weather", "time", "weather"], [("weather", "sunny"), ("weather", "rain"), ("time", "noon")],
     [("m1/function_call/0", "weather", "sunny"), ("m1/function_call/2", "weather", "rain"),
      ("m1/function_call/1", "time", "noon")]),
])
def test_id_less_responses_answer_the_id_less_calls_of_the_model_turn_before_them(calls, responses, expected):
    doc = _turns(calls, responses)
    asif = to_asif(doc)
    assert _answers(asif) == expected
    assert not [e for e in asif["events"] if e["kind"] == "message" and e["id"] == "m2"]  # all of it answers
    there = convert(json.dumps(doc).encode(), to="asif")
    again = convert(there.output, to="continuity")
    assert again.output == convert(json.dumps(doc).encode(), to="continuity").output  # byte for byte
    assert exact(doc, again.document) == {}
    assert "id" not in again.document["messages"][2]["content_json"]["parts"][0]["function_response"]
    assert exact(asif, to_asif(again.document)) == {}  # and back again


def test_an_answered_id_less_call_is_answered_once_and_edits_of_its_result_travel():
    doc = _turns(["weather"], [("weather", "sunny")])
    doc["messages"].append({**copy.deepcopy(doc["messages"][2]), "message_id": "m3", "sequence": 4})
    asif = to_asif(doc)
    assert _answers(asif) == [("m1/function_call/0", "weather", "sunny")]  # the second has no call left
    assert _by_id(asif, "m3")["data"]["parts"][0]["schema"] == "google-genai/function_response"
    result = event(asif, "tool_result")["data"]
    result["outcome"] = "error"
    assert back(asif)["messages"][2]["content_json"]["parts"] == [
        {"function_response": {"name": "weather", "response": {"error": "sunny"}}}]  # still no id


@pytest.mark.parametrize("doc", [
    _turns(["weather"], [("time", "noon")]),  # no call of its name
    _turns([], [("weather", "sunny")]),  # a model turn without calls
    export(("tool", {"role": "user", "parts": [{"function_response": {"name": "weather", "response": {}}}]})),
    _turns(["weather"], [("weather", "sunny")], ("assistant", {"role": "model", "parts": [{"text": "hm"}]})),
    _turns(["weather"], [("weather", "sunny")], ("assistant", None)),  # a later model turn, whatever it holds
], ids=["other-name", "no-calls", "no-model-turn", "later-turn", "later-plain-turn"])
def test_an_id_less_response_with_no_id_less_call_to_answer_stays_structured_data(doc):
    for rec in doc["messages"]:
        if rec["content_json"] is None:  # a message of text only
            del rec["content_json"]
            rec["text_content"] = "a note"
    asif = to_asif(doc)
    assert not [e for e in asif["events"] if e["kind"] == "tool_result"]
    response = doc["messages"][-1]["content_json"]["parts"][0]
    assert _by_id(asif, doc["messages"][-1]["message_id"])["data"]["parts"] == [
        {"kind": "structured", "schema": "google-genai/function_response", "value": response}]
    assert exact(doc, convert(json.dumps(asif).encode(), to="continuity").document) == {}


def test_an_id_less_response_does_not_answer_a_call_with_an_id():
    doc = _turns(["weather"], [("weather", "sunny")])
    doc["messages"][1]["content_json"]["parts"][0]["function_call"]["id"] = "fc1"
    assert not [e for e in to_asif(doc)["events"] if e["kind"] == "tool_result"]


def test_an_edited_copy_of_every_sample_round_trips_through_the_residual():
    """ASIF -> continuity -> ASIF is exact for documents made from every sample, edits included."""
    for key in sorted(_RESPONSES):
        doc, _ = _responses_export(key, "to_dict", True)
        asif = to_asif(doc)
        edited = copy.deepcopy(asif)
        for ev in edited["events"]:
            for p in ev["data"].get("parts", []):
                if p["kind"] == "text":
                    p["text"] += "!"
        again = to_asif(convert(json.dumps(edited).encode(), to="continuity").document)
        assert exact(edited, again) == {}, key


# -- properties ------------------------------------------------------------------------------------

_EXCHANGES = [
    # (the message with the calls, the message with their outcomes)
    ([_RESPONSES["response_reasoning_item.ResponseReasoningItem"][0],
      _RESPONSES["response_function_web_search.ResponseFunctionWebSearch"][0],
      _RESPONSES["response_output_message.ResponseOutputMessage"][0], _CALL],
     _RESPONSES["response_input_item.FunctionCallOutput"][0]),
    ([_RESPONSES["response_input_item.ApplyPatchCall"][0], _RESPONSES["response_input_item.McpCall"][0]],
     [_RESPONSES["response_input_item.ApplyPatchCallOutput"][0]]),
    ({"role": "model", "parts": [_GOOGLE["thought"][0], _GOOGLE["thought_signature"][0], _GOOGLE["function_call"][0],
                                 _GOOGLE["executable_code"][0], _GOOGLE["code_execution_result"][0]]},
     {"role": "user", "parts": [_GOOGLE["function_response"][0], _GOOGLE["inline_data"][0]]}),
    ({"role": "model", "parts": [{"functionCall": {"id": "fc1", "name": "f", "args": {}}, "thoughtSignature": "c2ln"},
                                 {"fileData": {"fileUri": "gs://b/a", "mimeType": "text/plain"}}]},
     {"role": "user", "parts": [{"functionResponse": {"id": "fc1", "name": "f", "response": {"error": "x"}}}]}),
    ({"role": "model", "parts": [{"function_call": {"name": "f", "args": {}}}, {"function_call": {"name": "g"}},
                                 {"function_call": {"name": "f", "args": {"a": 1}}}]},
     {"role": "user", "parts": [{"function_response": {"name": "g", "response": {"output": 1}}},
                                {"function_response": {"name": "f", "response": {"error": "x"}}},
                                {"function_response": {"name": "f", "response": {}}}]}),
]


vocab_keys = st.one_of(st.sampled_from(VOCABULARY), st.text(max_size=4))


@st.composite
def exchanges(draw: st.DrawFn) -> dict[str, Any]:
    """An exchange of one of the dialects with any JSON put anywhere in its content: new keys,
    replaced values (converter vocabulary among them), removed keys."""
    pair = copy.deepcopy(draw(st.sampled_from(_EXCHANGES)))
    for content in pair:
        objects = list(_objects(content))
        for _ in range(draw(st.integers(1, 3))):
            target = draw(st.sampled_from(objects))
            action = draw(st.sampled_from(["add", "replace", "remove"]))
            if action == "add" or not target:
                target[draw(vocab_keys)] = draw(vocab_json)
            elif action == "replace":
                target[draw(st.sampled_from(sorted(target)))] = draw(st.one_of(vocab_json, json_values(3)))
            else:
                del target[draw(st.sampled_from(sorted(target)))]
    return export(("assistant", pair[0]), ("tool", pair[1]))


@given(exchanges())
def test_any_json_inside_responses_and_google_content_round_trips_exactly(doc):
    note(json.dumps(doc))
    there = convert(json.dumps(doc).encode(), to="asif")
    assert exact(doc, convert(there.output, to="continuity").document) == {}


@given(exchanges(), st.data())
def test_edited_asif_of_these_dialects_comes_back_exactly(doc, data):
    """ASIF -> continuity -> ASIF is exact after edits of mapped values: texts, arguments, outcomes."""
    asif = to_asif(doc)
    for ev in asif["events"]:
        body = ev["data"]
        if ev["kind"] == "tool_call" and data.draw(st.booleans()):
            body["arguments"] = data.draw(json_values(2))
        if ev["kind"] == "tool_result" and data.draw(st.booleans()):
            body["outcome"] = data.draw(st.sampled_from(["success", "error", "unknown", "cancelled"]))
        for p in body.get("parts", []):
            if p["kind"] == "text" and data.draw(st.booleans()):
                p["text"] = data.draw(st.text(max_size=5))
    note(json.dumps(asif))
    again = to_asif(convert(json.dumps(asif).encode(), to="continuity").document)
    assert exact(asif, again) == {}


def test_the_mapping_table_names_every_block_type_the_dialects_know():
    table = load_dialects()
    content_parts = {f"message/{_CONTENT_PARTS[name][0]['type']}" for name in _CONTENT_PARTS}
    assert set(table["openai-responses"]["blocks"]) == set(openai_responses.ITEM_TYPES) | content_parts
    assert set(table["google-genai"]["blocks"]) == set(gtypes.Part.model_fields)
    # and each entry says what the samples show: opaque exactly where the samples are opaque
    opaque = {k for k, v in table["openai-responses"]["blocks"].items() if v["maps"] == "opaque"}
    assert opaque == {item["type"] for item, expected, _ in _RESPONSES.values() if expected[0] == "opaque"}
    opaque = {k for k, v in table["google-genai"]["blocks"].items() if v["maps"] == "opaque"}
    assert opaque == {k for k, (_, expected) in _GOOGLE.items() if expected[0] == "opaque"}


def _unseen(doc: dict[str, Any]) -> list[tuple[str, str]]:
    """The texts of ``doc`` no ASIF reader sees, but for the strings that shape what is seen
    elsewhere: a resource's bytes or locator (as a data URL too), a tool type named by its tool."""
    asif = to_asif(doc)
    shapes = {t["id"].upper() for t in asif["tools"]}
    for r in asif["resources"]:
        shapes |= {r.get("locator"), r.get("data"), f"data:{r['media_type']};base64,{r.get('data')}"}
    return [u for u in unseen(doc, asif) if u[1] not in shapes]


def test_no_text_of_any_sample_is_silent():
    """Every text a sample holds is in ASIF message, tool_call or tool_result data, or a loss
    references its record."""
    silent = []
    for key in sorted(_RESPONSES):
        for dump in ("to_dict", "model_dump"):
            doc, _ = _responses_export(key, dump, True)
            silent += [(key, dump, *u) for u in _unseen(doc)]
    for key in sorted(_GOOGLE):
        for camel in (False, True):
            silent += [(key, camel, *u) for u in _unseen(_google_export(key, camel))]
    assert silent == []
