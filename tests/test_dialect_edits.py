"""Edits of what a dialect renders from ASIF data reach the provider's own fields.

For every SDK sample of every dialect (tests/test_sdk_*.py) and every field the dialects render
from ASIF data (a text, a call's arguments, its tool name, its call id, a result's outcome), an
edit of the ASIF document made without the residual shows in content_json, in the field the
provider keeps it in, and the export read back gives the edited value. Where a dialect has no
field for a value (a tool result's outcome in OpenAI Chat, a call id the reader derived, a
provider-run tool whose item names it), the edit cannot travel, and a loss names the record it
changed instead (design brief, decision 6).
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
from typing import Any

import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st

from asif_convert import Options, convert
from asif_convert._dialects import anthropic, openai_responses
from asif_convert._dialects.google_genai import camel

from . import sdk_blocks as sb
from . import test_sdk_anthropic_openai_chat as anthropic_chat
from . import test_sdk_responses_google as responses_google
from .test_roundtrip import _covered, exact


def _samples() -> list[tuple[str, str, dict[str, Any]]]:
    """(dialect, block type under test, export) of every sample of the SDK tests."""
    out = []
    for case in anthropic_chat.CASES:
        out.append((case.dialect, case.key.split("/")[0], sb.export(*case.messages)))
    for key, (item, _, _) in sorted(responses_google._RESPONSES.items()):
        doc, _ = responses_google._responses_export(key, "to_dict", True)
        out.append(("openai-responses", item.get("type", "message"), doc))
    for key in sorted(responses_google._GOOGLE):
        for camel_case in (False, True):
            out.append(("google-genai", key, responses_google._google_export(key, camel_case)))
    return out


SAMPLES = _samples()

# Where each dialect keeps a tool result's outcome, by block type: the outcomes it can say
# (Anthropic's is_error, Responses' status of a provider-run call or a patch's output, Gemini's
# "output" or "error" of a function response and its code execution outcome). The other result
# blocks have no outcome field of their own (OpenAI Chat's tool messages, Responses' other
# outputs, whose status says whether the output was delivered) or say it by their content's
# type (Anthropic's server tools' results: an error is a block of its own, with its error code).
OUTCOME_FIELDS = {
    ("anthropic-messages", "tool_result"), ("anthropic-messages", "mcp_tool_result"),
    ("openai-responses", "web_search_call"), ("openai-responses", "file_search_call"),
    ("openai-responses", "code_interpreter_call"), ("openai-responses", "image_generation_call"),
    ("openai-responses", "mcp_call"), ("openai-responses", "apply_patch_call_output"),
    ("google-genai", "function_response"), ("google-genai", "code_execution_result"),
}
# Calls whose block names the tool (the others are named by their block type: a provider-run
# tool, or a client tool of a fixed name such as Responses' computer or shell)
NAMED_CALLS = {
    ("anthropic-messages", "tool_use"), ("anthropic-messages", "server_tool_use"),
    ("anthropic-messages", "mcp_tool_use"), ("openai-chat", "function"), ("openai-chat", "custom"),
    ("openai-responses", "function_call"), ("openai-responses", "custom_tool_call"),
    ("openai-responses", "mcp_call"), ("google-genai", "function_call"),
}


def _asif(doc: dict[str, Any]) -> dict[str, Any]:
    return json.loads(convert(json.dumps(doc).encode(), to="asif").output)


def _there_and_back(asif: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the export of ``asif`` without the residual, that export read back as ASIF)."""
    there = convert(json.dumps(asif).encode(), to="continuity", options=Options(residual=False))
    return there.document, convert(there.output, to="asif").document


def _blocks(value: Any) -> list[tuple[Any, dict[str, Any]]]:
    """Every object of a content_json with the key that holds it (None in a list), depth first."""
    stack: list[tuple[Any, Any]] = [(None, value)]
    out = []
    while stack:
        key, item = stack.pop()
        if isinstance(item, dict):
            out.append((key, item))
            stack.extend(item.items())
        elif isinstance(item, list):
            stack.extend((None, v) for v in item)
    return out


# the block types (or Gemini's part keys) of calls and of results, in every dialect
CALL_KINDS = {"tool_use", "server_tool_use", "mcp_tool_use", "function", "custom", *openai_responses.CALLS,
              *openai_responses.SERVER_CALLS, "executable_code", "tool_call"}
RESULT_KINDS = {"tool_result", "mcp_tool_result", *anthropic.SERVER_RESULTS, *openai_responses.OUTPUTS,
                *openai_responses.SERVER_CALLS, "function_response", "code_execution_result", "tool_response"}
_SNAKE = {camel(k): k for k in CALL_KINDS | RESULT_KINDS}  # Gemini's part keys in the REST API's casing
_ID_KEYS = ("id", "call_id", "tool_use_id", "tool_call_id")


def _kind_of(src: dict[str, Any], event: dict[str, Any], sample_kind: str) -> str:
    """The block type (Gemini: the part's key) of the source block a call or result event came
    from: the one that names its call id; the sample's own where none does (an id the reader
    derived)."""
    call_id = event["data"]["call_id"]
    kinds = CALL_KINDS if event["kind"] == "tool_call" else RESULT_KINDS
    for key, block in _blocks(_content(src)):
        if event["kind"] == "tool_result" and block.get("role") == "tool" and block.get("tool_call_id") == call_id:
            return "tool message"
        kind = block["type"] if isinstance(block.get("type"), str) else _SNAKE.get(key, key)
        if kind in kinds and any(block.get(k) == call_id for k in _ID_KEYS):
            return str(kind)
    return sample_kind


def _content(export: dict[str, Any]) -> list[Any]:
    return [m["content_json"] for m in export["messages"]]


def _said_outcome(block: dict[str, Any]) -> str | None:
    """The outcome a result block of any dialect says in its own field, or None."""
    if "is_error" in block:
        return "error" if block["is_error"] is True else "success"
    if block.get("status") in ("completed", "failed"):
        return "error" if block["status"] == "failed" else "success"
    response = block.get("response")
    if isinstance(response, dict) and ("output" in response) != ("error" in response):
        return "error" if "error" in response else "success"
    if block.get("outcome") in ("OUTCOME_OK", "OUTCOME_FAILED"):
        return "success" if block["outcome"] == "OUTCOME_OK" else "error"
    return None


def _answering(export: dict[str, Any], call_id: str) -> list[dict[str, Any]]:
    """The blocks of an export that name ``call_id`` (its call and its result)."""
    keys = ("tool_use_id", "call_id", "id", "tool_call_id")
    return [b for _, b in _blocks(_content(export)) if any(b.get(k) == call_id for k in keys)]


def _result_block(export: dict[str, Any], kind: str, call_id: str) -> dict[str, Any]:
    """The block of type (or Gemini part key) ``kind`` that holds the result for ``call_id``: the
    one that names it, or the only one when the reader tied it to its call by position (Gemini's
    part keys in either casing)."""
    blocks = [b for key, b in _blocks(_content(export)) if b.get("type") == kind or key in (kind, camel(kind))]
    named = [b for b in blocks if any(b.get(k) == call_id for k in _ID_KEYS)]
    (block,) = named or blocks
    return block


def _fails_to_travel(original: dict[str, Any], back: dict[str, Any], event_id: str) -> None:
    """An edit that cannot travel: a loss names every difference it left."""
    for path in exact(original, back).affected_paths:
        assert _covered(path, original, back, back["losses"]), f"{path} differs and no loss names it ({event_id})"


EDITS = ("outcome", "text", "arguments", "tool_id", "call_id")


@pytest.mark.parametrize("edit", EDITS)
@pytest.mark.parametrize("sample", SAMPLES, ids=[f"{d}:{k}:{n}" for n, (d, k, _) in enumerate(SAMPLES)])
@settings(max_examples=3)  # per sample and edit: the edited values vary, the fields are all tried
@given(data=st.data())
def test_an_edit_reaches_the_providers_field_or_a_loss_names_it(sample, edit, data):
    dialect, kind, src = sample
    asif = _asif(src)
    events = [e for e in asif["events"] if e["kind"] in ("message", "tool_call", "tool_result")]
    wanted = {"outcome": "tool_result", "arguments": "tool_call", "tool_id": "tool_call", "call_id": "tool_call"}
    targets = [e for e in events if e["kind"] == wanted.get(edit, e["kind"])
               and (edit != "text" or any(p["kind"] == "text" for p in e["data"].get("parts", ())))]
    if not targets:
        return
    # the event of the block under test: the last one of its kind (a sample puts it last)
    ev = targets[-1] if edit != "text" else data.draw(st.sampled_from(targets))
    edited = copy.deepcopy(asif)
    target = next(e for e in edited["events"] if e["id"] == ev["id"])
    body = target["data"]
    if ev["kind"] != "message":
        kind = _kind_of(src, ev, kind)
    note(f"{dialect} {kind}: {edit} of {ev['id']}")
    if edit == "outcome":
        body["outcome"] = "error" if body["outcome"] != "error" else "success"
        new = body["outcome"]
        travels = (dialect, kind) in OUTCOME_FIELDS and not _error_part(body)
    elif edit == "text":
        k = data.draw(st.sampled_from([i for i, p in enumerate(body["parts"]) if p["kind"] == "text"]))
        new = body["parts"][k]["text"] + data.draw(st.text(min_size=1, max_size=8).filter(str.strip))
        body["parts"][k]["text"] = new
        travels = True
    elif edit == "arguments":
        new = {"edited": data.draw(st.integers(0, 9)), **(body["arguments"] if isinstance(body["arguments"], dict)
                                                        else {})}
        body["arguments"] = new
        body["arguments_status"] = "complete"
        travels = _free_arguments(dialect, kind)
    elif edit == "tool_id":
        new = body["tool_id"] + "_v2"
        body["tool_id"] = new
        travels = (dialect, kind) in NAMED_CALLS
    else:
        old = body["call_id"]
        new = old + "-v2"
        for e in edited["events"]:
            if e["kind"] in ("tool_call", "tool_result") and e["data"]["call_id"] == old:
                e["data"]["call_id"] = new
        travels = not old.startswith(f"{ev['id'].split('/')[0]}/")  # an id the reader derived from the message's
    export, back = _there_and_back(edited)
    again = next((e for e in back["events"] if e["id"] == ev["id"]), None)
    if not travels:
        _fails_to_travel(edited, back, ev["id"])
        return
    assert again is not None, "the edited event came back"
    if edit == "outcome":
        assert again["data"]["outcome"] == new
        block = _result_block(export, kind, body["call_id"])
        assert _said_outcome(block) == new, block  # in the provider's own field
    elif edit == "text":
        assert new in [p.get("text") for p in again["data"]["parts"]]
        assert json.dumps(new, ensure_ascii=False)[1:-1] in json.dumps(_content(export), ensure_ascii=False)
    elif edit == "arguments":
        assert again["data"]["arguments"] == new
    elif edit == "tool_id":
        assert again["data"]["tool_id"] == new
        assert any(b.get("name") == new for _, b in _blocks(_content(export)))
    else:
        assert again["data"]["call_id"] == new
        assert _answering(export, new), "the call id in the provider's field"


def _error_part(body: dict[str, Any]) -> bool:
    """Whether a result holds an error the provider wrote apart from its status (an MCP call's
    error object): its outcome cannot become a success while the part says the error."""
    return any(p["kind"] == "structured" and p["schema"].endswith(".error") for p in body.get("parts", ()))


def _free_arguments(dialect: str, kind: str) -> bool:
    """Whether a call's block holds any JSON object as its arguments (the others hold fixed
    keys: a computer action, a shell command, code and its language)."""
    return (dialect, kind) in NAMED_CALLS - {("openai-chat", "custom"), ("openai-responses", "custom_tool_call")} \
        or (dialect, kind) == ("openai-responses", "tool_search_call")


def _media(asif: dict[str, Any]) -> list[dict[str, Any]]:
    """The resources the resource parts of an ASIF document's events name (a medium a block held)."""
    named = {p["resource_id"] for e in asif["events"] for p in _all_parts(e["data"]) if p["kind"] == "resource"}
    return [r for r in asif["resources"] if r["id"] in named and r.get("media_type") != "application/json"]


def _all_parts(data: dict[str, Any]) -> list[dict[str, Any]]:
    return list(data.get("parts", ()))


MEDIA_SAMPLES = [s for s in SAMPLES if _media(_asif(s[2]))]


@pytest.mark.parametrize("sample", MEDIA_SAMPLES, ids=[f"{d}:{k}" for d, k, _ in MEDIA_SAMPLES])
@settings(max_examples=3)
@given(data=st.data())
def test_an_edited_medium_reaches_its_block(sample, data):
    """A medium's bytes, URL, file id or text, edited, are what the block holds and reads back."""
    dialect, kind, src = sample
    edited = _asif(src)
    res = data.draw(st.sampled_from(_media(edited)))
    note(f"{dialect} {kind}: {res['id']}")
    if "data" in res:
        raw = data.draw(st.binary(min_size=1, max_size=16))
        field, new = "data", base64.b64encode(raw).decode()
        res.update(data=new, bytes=len(raw), sha256=hashlib.sha256(raw).hexdigest())
    elif "text" in res:
        field, new = "text", res["text"] + data.draw(st.text(min_size=1, max_size=8).filter(str.strip))
        raw = new.encode()
        res.update(text=new, bytes=len(raw), sha256=hashlib.sha256(raw).hexdigest())
    else:  # a URL or a provider's file id, kept as one or the other
        field, new = "locator", res["locator"] + data.draw(st.sampled_from(["2", "-v2", "/b"]))
        res["locator"] = new
    export, back = _there_and_back(edited)
    assert json.dumps(new, ensure_ascii=False)[1:-1] in json.dumps(_content(export), ensure_ascii=False)
    again = next(r for r in back["resources"] if r["id"] == res["id"])
    assert again[field] == new
