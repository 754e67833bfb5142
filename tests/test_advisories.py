"""Warnings beyond the rules digest and the reference validator (ASIF-Wnnn): they never change a
document's validity, but each names its fault."""

from __future__ import annotations

import json

import pytest

from asif_convert import validate
from asif_convert._errors import pointer
from asif_convert._validation.semantic import WARNING_RULES, check_semantics

from .conftest import ASIF_EXAMPLES
from .test_semantic_rules import minimal_valid, rich_valid, schema_errors


def forked(**fork: object) -> dict:
    doc = rich_valid()
    doc["branches"][1]["fork"] = {"session_id": "session-test", "capture_id": "capture-test", "branch_id": "main",
                                  "event_id": "e-user", "inclusive": True, **fork}
    return doc


def found(doc: dict) -> list[tuple[str, str, str]]:
    return [(p.rule, p.path, p.severity) for p in check_semantics(doc)]


def test_a_local_fork_on_its_parent_branch_is_quiet() -> None:
    assert schema_errors(forked()) == []
    assert found(forked()) == []
    assert found(forked(event_id=None, inclusive=False)) == []


@pytest.mark.parametrize(
    ("fork", "rule", "path"),
    [
        ({"branch_id": "gone"}, "ASIF-W001", "/branches/1/fork/branch_id"),
        ({"branch_id": "alt"}, "ASIF-W001", "/branches/1/fork/branch_id"),  # itself
        ({"event_id": "not-an-event"}, "ASIF-W002", "/branches/1/fork/event_id"),
    ],
    ids=["missing parent", "own branch", "point not in events"],
)
def test_local_fork_faults_are_warnings(fork: dict, rule: str, path: str) -> None:
    doc = forked(**fork)
    assert schema_errors(doc) == []
    assert found(doc) == [(rule, path, "warning")]


def test_fork_point_on_another_branch_is_a_warning() -> None:
    doc = forked()
    doc["branches"][0]["fork"] = {"session_id": "session-test", "capture_id": "capture-test", "branch_id": "alt",
                                  "event_id": "e-note", "inclusive": True}
    assert found(doc) == [("ASIF-W002", "/branches/0/fork/event_id", "warning")]


@pytest.mark.parametrize("where", [{"session_id": "other-session"}, {"capture_id": "earlier-capture"}])
def test_a_fork_bound_to_another_capture_is_not_resolved(where: dict) -> None:
    assert found(forked(branch_id="gone", event_id="x", **where)) == []


@pytest.mark.parametrize(
    ("key", "namespaced"),
    [
        ("example.annotation/1", True),
        ("vendor.flag", True),
        ("agent-continuity/1", True),
        ("label", False),
        ("x-vendor", False),
        ("example. annotation/1", False),
        ("example./1", False),
        ("", False),
    ],
)
def test_extension_keys_must_be_namespaced(key: str, namespaced: bool) -> None:
    doc = minimal_valid()
    doc["events"][0]["extensions"] = {key: {"label": "reviewed"}}
    expected = [] if namespaced else [("ASIF-W003", pointer("events", 0, "extensions", key), "warning")]
    assert found(doc) == expected


def test_warnings_keep_the_document_valid() -> None:
    doc = forked(branch_id="gone")
    doc["events"][0]["extensions"] = {"label": 1}
    problems = validate(json.dumps(doc).encode())
    assert {p.rule for p in problems} == {"ASIF-W001", "ASIF-W003"}
    assert all(p.severity == "warning" for p in problems)


def test_every_warning_rule_is_exercised() -> None:
    assert set(WARNING_RULES) == {"ASIF-W001", "ASIF-W002", "ASIF-W003"}


@pytest.mark.parametrize("path", ASIF_EXAMPLES, ids=lambda p: p.stem)
def test_public_examples_raise_no_warning(path) -> None:
    assert check_semantics(json.loads(path.read_bytes())) == []
