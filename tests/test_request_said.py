"""``request``: what a recorded message says arrives, or a loss names it; items that hold their own
output are answered; refusals speak of the document as the user has it."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

import asif_convert
from asif_convert import InvalidInput, RequestRefused
from tests import sdk_blocks as sb
from tests.request_rules import TARGETS, check_body, check_rules

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(16)).decode()


def _request(doc: dict[str, Any], target: str, **kw: Any) -> asif_convert.RequestResult:
    result = asif_convert.request(json.dumps(doc).encode(), provider=target, **kw)
    check_body(target, result.body)
    check_rules(target, result.body)
    return result


def _kinds(result: asif_convert.RequestResult) -> set[str]:
    return {loss.kind for loss in result.losses}


# --- what a recorded message says --------------------------------------------------------------------

REFUSALS = {
    "openai-chat": sb.export(("user", {"role": "user", "content": "q"}),
                             ("assistant", {"role": "assistant", "content": None, "refusal": "I can't"}),
                             ("user", {"role": "user", "content": "ok"})),
    "openai-responses": sb.export(
        ("user", [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "q"}]}]),
        ("assistant", [{"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
                        "content": [{"type": "refusal", "refusal": "I can't"}]}]),
        ("user", [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "ok"}]}])),
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("recorded", sorted(REFUSALS))
def test_a_refusal_keeps_its_marker_or_a_loss_says_it_is_lost(recorded, target):
    result = _request(REFUSALS[recorded], target)
    said = json.dumps(result.body)
    assert "I can't" in said
    if target == "openai-chat":  # Chat's own refusal part
        assert result.body["messages"][1] == {"role": "assistant",
                                              "content": [{"type": "refusal", "refusal": "I can't"}]}
        assert "refusal_as_text" not in _kinds(result)
    else:
        assert "refusal_as_text" in _kinds(result)


@pytest.mark.parametrize("target", TARGETS)
def test_a_chat_participant_name_goes_to_chat_and_is_a_loss_elsewhere(target):
    doc = sb.export(("user", {"role": "user", "content": "hi", "name": "bob"}),
                    ("assistant", {"role": "assistant", "content": "hello", "name": "helper"}),
                    ("user", {"role": "user", "content": "ok"}))
    result = _request(doc, target)
    if target == "openai-chat":
        assert [m.get("name") for m in result.body["messages"]] == ["bob", "helper", None]
        assert "speaker_dropped" not in _kinds(result)
    else:
        dropped = [loss for loss in result.losses if loss.kind == "speaker_dropped"]
        assert sorted(r.id for loss in dropped for r in loss.references) == ["m1", "m2"]


def test_a_base64_text_document_goes_to_anthropic_as_a_text_source():
    data = base64.b64encode("notes: é".encode()).decode()
    doc = sb.export(("user", [{"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": "read"},
        {"type": "input_file", "filename": "n.md", "file_data": f"data:text/markdown;base64,{data}"}]}]))
    result = _request(doc, "anthropic-messages")
    assert result.body["messages"][0]["content"][1] == {  # (its file name, the document's title)
        "type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "notes: é"},
        "title": "n.md"}
    assert "part_dropped" not in _kinds(result) and "media_adapted" in _kinds(result)  # (text/markdown)


def test_a_tool_result_image_goes_to_gemini_in_its_function_response():
    doc = sb.export(("user", [{"type": "text", "text": "look"}]),
                    ("assistant", [{"type": "tool_use", "id": "t1", "name": "shot", "input": {}}]),
                    ("user", [{"type": "tool_result", "tool_use_id": "t1", "content": [
                        {"type": "text", "text": "the screen"},
                        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}]}]))
    result = _request(doc, "google-genai")
    response = result.body["contents"][2]["parts"][0]["function_response"]
    assert response["response"] == {"output": "the screen"}
    assert response["parts"] == [{"inline_data": {"mime_type": "image/png", "data": PNG}}]
    assert "part_dropped" not in _kinds(result)


def test_a_url_image_goes_to_gemini_with_a_known_type_or_not_at_all():
    doc = sb.export(("user", [{"type": "text", "text": "look"},
                              {"type": "image", "source": {"type": "url", "url": "https://example.com/a.PNG?x=1"}},
                              {"type": "image", "source": {"type": "url", "url": "https://example.com/image"}}]))
    result = _request(doc, "google-genai")
    parts = result.body["contents"][0]["parts"]
    assert parts[1:] == [{"file_data": {"file_uri": "https://example.com/a.PNG?x=1", "mime_type": "image/png"}}]
    assert "application/octet-stream" not in json.dumps(result.body)
    assert any(loss.kind == "part_dropped" and "media type" in loss.explanation for loss in result.losses)


# --- items that hold their own output ------------------------------------------------------------


def test_an_mcp_call_holding_its_output_without_a_status_is_answered():
    doc = sb.export(
        ("user", [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}]),
        ("assistant", [{"type": "mcp_call", "id": "mcp_1", "name": "lookup", "server_label": "srv",
                        "arguments": "{}", "output": "42"},
                       {"type": "mcp_call", "id": "mcp_2", "name": "lookup", "server_label": "srv",
                        "arguments": "{}", "error": {"type": "mcp_protocol_error", "code": 1, "message": "no"}}]))
    for target in TARGETS:
        result = _request(doc, target)  # (no pending call to refuse)
        assert "42" in json.dumps(result.body)
    document = asif_convert.load(json.dumps(doc).encode())
    outcomes = [e.body.outcome for e in document.events if e.kind == "tool_result"]
    assert outcomes == ["success", "error"]
    back = asif_convert.convert(asif_convert.convert(json.dumps(doc).encode(), to="asif").output, to="continuity")
    assert json.loads(back.output)["messages"][1]["content_json"] == doc["messages"][1]["content_json"]


def test_an_mcp_call_still_running_stays_pending():
    doc = sb.export(("assistant", [{"type": "mcp_call", "id": "mcp_1", "name": "lookup", "server_label": "srv",
                                    "arguments": "{}", "status": "calling"}]))
    with pytest.raises(RequestRefused, match="has no recorded result"):
        asif_convert.request(json.dumps(doc).encode(), provider="openai-responses")


# --- refusals ----------------------------------------------------------------------------------------


def _pending() -> dict[str, Any]:
    return sb.export(("user", {"role": "user", "content": "go"}),
                     ("assistant", {"role": "assistant", "content": "ok"}),
                     ("assistant", {"role": "assistant", "content": None, "tool_calls": [
                         {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}))


def test_a_pending_call_is_a_refused_request_pointed_at_the_export():
    with pytest.raises(RequestRefused) as caught:
        asif_convert.request(json.dumps(_pending()).encode(), provider="openai-chat")
    assert not isinstance(caught.value, InvalidInput)  # the document is valid
    [problem] = caught.value.problems
    assert problem.path == "/messages/2" and "'c1'" in problem.message
    asif = asif_convert.convert(json.dumps(_pending()).encode(), to="asif").output
    with pytest.raises(RequestRefused) as caught:  # the ASIF form's own path for an ASIF document
        asif_convert.request(asif, provider="openai-chat")
    assert caught.value.problems[0].path.startswith("/events/")


def test_the_command_reports_the_refusal_the_library_raises(tmp_path):
    from typer.testing import CliRunner

    from asif_convert._cli.app import app
    path = tmp_path / "s.json"
    path.write_text(json.dumps(_pending()))
    run = CliRunner().invoke(app, ["request", str(path), "--for", "openai-chat"])
    assert run.exit_code == RequestRefused.exit_code == 1
    assert "request refused" in run.stderr and "invalid input" not in run.stderr
    assert "/messages/2: tool call 'c1'" in run.stderr


def test_an_edited_style_is_data_never_a_crash():
    """The recorded order and refusal marks are read from the document, which anyone may edit:
    the reader takes a style through its declared types, so values of another type never reach
    the request, which is made."""
    asif = json.loads(asif_convert.convert(json.dumps(REFUSALS["openai-responses"]).encode(), to="asif").output)
    for style in ({"i": 3, "j": ["x"], "q": [0, "y"], "t": 1}, {"o": ["p"], "r": "0"}, {"i": "mzz", "j": [-1]}):
        for event in asif["events"]:
            state = event.get("extensions", {}).get("agent-continuity/1") or event.get("native", {})
            if isinstance(state, dict) and "dialect" in state:
                state["style"] = style
        for target in TARGETS:
            result = _request(asif, target)
            assert "I can't" in json.dumps(result.body)
