"""Edits reach every field: an edited tool name reaches every call and result the dialects write
(Anthropic tool_use, Chat tool_calls, Gen AI function calls and responses), a document an earlier
release wrote renders its edits from the ASIF records, an edit that leaves the residual unable
to restore a valid session is said (a warning and a loss) with the converter's records kept
private, and a --no-residual export always converts back."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from asif_convert import Options, convert, validate

from .conftest import ASIF_EXAMPLES, GOLDEN, ROOT

FIRST_RELEASE = sorted((ROOT / "tests" / "fixtures" / "golden-v1").glob("*.asif.json"))
WITH_TOOLS = [p for p in [*sorted(GOLDEN.glob("*.asif.json")), *FIRST_RELEASE] if json.loads(p.read_bytes())["tools"]]


def _renamed(path: Path) -> tuple[dict, dict[str, str]]:
    doc = json.loads(path.read_bytes())
    names = {}
    for tool in doc["tools"]:
        names[tool["name"]] = tool["name"] = f"{tool['name']}_v2"
    return doc, names


def _written_names(messages: list[dict]) -> list[str]:
    """Every tool name a dialect wrote into content_json: Anthropic tool_use, Chat function and
    custom calls, Responses function_call items, Gen AI function calls and responses."""
    text = json.dumps([m.get("content_json") for m in messages])
    return re.findall(r'"name": "([^"]*)"', text)


@pytest.mark.parametrize("path", WITH_TOOLS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_an_edited_tool_name_reaches_the_content(path):
    doc, names = _renamed(path)
    calls = {e["data"]["tool_id"] for e in doc["events"] if e["kind"] == "tool_call"}
    called = {t["id"]: t["name"] for t in doc["tools"] if t["id"] in calls and not t.get("server_identity")}
    before = _written_names(convert(path.read_bytes(), to="continuity").document["messages"])
    result = convert(json.dumps(doc).encode(), to="continuity")
    written = _written_names(result.document["messages"])
    for old, new in names.items():
        if new in called.values() and old in before:
            assert old not in written, f"{old} is still written ({new} expected)"
            assert new in written
    back = convert(result.output, to="asif")
    assert not back.warnings
    if path not in FIRST_RELEASE:  # (a first release's document comes back in today's form)
        assert back.document == doc  # the residual restores the edited session exactly
    assert [t["name"] for t in back.document["tools"]] == [t["name"] for t in doc["tools"]]
    lossy = convert(json.dumps(doc).encode(), to="continuity", options=Options(residual=False))
    assert validate(convert(lossy.output, to="asif").output) == []


@pytest.mark.parametrize("path", [p for p in FIRST_RELEASE if "anthropic" in p.name or "mixed" in p.name],
                         ids=lambda p: p.stem)
def test_a_first_release_document_edited_to_an_error_sets_is_error(path):
    doc = json.loads(path.read_bytes())
    results = [e for e in doc["events"] if e["kind"] == "tool_result"
               and e.get("extensions", {}).get("agent-continuity/1", {}).get("dialect") == "anthropic-messages"]
    assert results
    for event in results:
        event["data"]["outcome"] = "error"
    export = convert(json.dumps(doc).encode(), to="continuity").document
    blocks = [b for m in export["messages"] if isinstance(m.get("content_json"), list) for b in m["content_json"]
              if isinstance(b, dict) and b.get("type") == "tool_result"]
    edited = {e["data"]["call_id"] for e in results}
    assert {b["tool_use_id"] for b in blocks if b.get("is_error") is True} >= edited


def test_an_edit_that_leaves_a_referential_warning_is_said_and_private_records_stay_private():
    example = next(p for p in ASIF_EXAMPLES if "multi-agent-review" in p.name)
    export = convert(example.read_bytes(), to="continuity").document
    export["messages"][0]["branch_id"] = "no-such-branch"  # a referential warning, not a refusal
    back = convert(json.dumps(export).encode(), to="asif")
    assert [w.rule for w in back.warnings if w.rule == "residual"] == ["residual"]
    assert "translation:residual-set-aside" in {loss.id for loss in back.losses}
    assert [r["id"] for r in back.document["resources"] if r["id"].startswith("asif:")] == []
    assert validate(back.output) == [] or all(p.severity == "warning" for p in validate(back.output))


@pytest.mark.parametrize("path", [*ASIF_EXAMPLES, *sorted(GOLDEN.glob("*.asif.json")), *FIRST_RELEASE],
                         ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_a_no_residual_export_always_converts_back(path):
    for doc in (json.loads(path.read_bytes()), _renamed(path)[0]):
        middle = convert(json.dumps(doc).encode(), to="continuity", options=Options(residual=False))
        back = convert(middle.output, to="asif")
        assert [p for p in validate(back.output) if p.severity == "error"] == []


def _without_event(doc: dict, index: int) -> dict:
    """``doc`` with one event removed (from its branches too), as a hand edit would: what named
    it (a cause, a correction, a provenance input, a task dependency) now names nothing."""
    doc = json.loads(json.dumps(doc))
    gone = doc["events"].pop(index)["id"]
    for k, event in enumerate(doc["events"]):
        event["sequence"] = k
    for branch in doc["branches"]:
        branch["event_ids"] = [e for e in branch["event_ids"] if e != gone]
        if branch.get("head_event_id") == gone:
            branch["head_event_id"] = branch["event_ids"][-1] if branch["event_ids"] else None
    return doc


@pytest.mark.parametrize("residual", [False, True], ids=["no-residual", "residual"])
@pytest.mark.parametrize("path", ASIF_EXAMPLES, ids=lambda p: p.stem)
def test_an_export_of_an_edited_session_converts_back(path, residual):
    """The records an export carries are valid on their own: one that names what the session
    no longer holds stays an opaque continuity event, so the export always converts back."""
    doc = json.loads(path.read_bytes())
    for index in range(len(doc["events"])):
        middle = convert(json.dumps(_without_event(doc, index)).encode(), to="continuity",
                         options=Options(residual=residual))
        back = convert(middle.output, to="asif")
        assert [p for p in validate(back.output) if p.severity == "error"] == []
