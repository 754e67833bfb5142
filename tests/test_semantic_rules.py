"""ASIF 0.4 semantic rules: valid documents pass, and each rule catches its minimal violation.

Every violation case edits a valid document with a few JSON-Patch-like operations, checks the
result still passes the JSON schema (so the rule, not the schema, is what is tested) and asserts
that a problem with exactly the rule id and JSON pointer is reported.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from asif_convert._errors import pointer
from asif_convert._validation import semantic
from asif_convert._validation.semantic import RULES, check_semantics
from asif_convert.ir import SCOPES

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = Draft202012Validator(json.loads((ROOT / "schemas" / "asif-0.4-session.schema.json").read_text("utf-8")))
EXAMPLES = sorted((ROOT / "corpus" / "asif").glob("*.json"))


# -- builders ----------------------------------------------------------------------------------


def text(value: str) -> dict[str, Any]:
    return {"kind": "text", "text": value}


def prov(**extra: Any) -> dict[str, Any]:
    return {"mode": "observed", "producer": "tests", **extra}


def embedded_text(rid: str, content: str, purpose: str = "input", **extra: Any) -> dict[str, Any]:
    raw = content.encode("utf-8")
    return {
        "id": rid,
        "media_type": "text/plain",
        "availability": "embedded",
        "purpose": purpose,
        "bytes": len(raw),
        "sha256": hashlib.sha256(raw).hexdigest(),
        "text": content,
        **extra,
    }


def embedded_data(rid: str, raw: bytes) -> dict[str, Any]:
    return {
        "id": rid,
        "media_type": "application/octet-stream",
        "availability": "embedded",
        "purpose": "input",
        "bytes": len(raw),
        "sha256": hashlib.sha256(raw).hexdigest(),
        "data": base64.b64encode(raw).decode("ascii"),
    }


def event(eid: str, kind: str, data: dict, actor: str = "agent", causes: tuple[str, ...] = (), **extra: Any) -> dict:
    return {
        "id": eid,
        "sequence": -1,  # assigned from the array position by sequenced()
        "actor_id": actor,
        "kind": kind,
        "causes": [{"event_id": c} for c in causes],
        "provenance": prov(),
        "data": data,
        **extra,
    }


def sequenced(events: list[dict]) -> list[dict]:
    for i, e in enumerate(events):
        e["sequence"] = i
    return events


def coverage(**status: str) -> list[dict[str, str]]:
    return [
        {"scope": s, "status": status.get(s, "not_inspected"), "detail": f"{s} as declared by the test"} for s in SCOPES
    ]


def checkpoint(cid: str, branch: str, at: str | None, **extra: Any) -> dict[str, Any]:
    return {
        "id": cid,
        "branch_id": branch,
        "at_event_id": at,
        "knowledge": "unknown",
        "status": "unknown",
        "context_id": None,
        "configuration_id": None,
        "open_calls": [],
        "open_decisions": [],
        "tasks": [],
        "requirements": [],
        **extra,
    }


def skeleton() -> dict[str, Any]:
    return {
        "asif_version": "0.4",
        "capture": {
            "id": "capture-test",
            "producer": {"name": "tests", "version": "1"},
            "consistency": "unknown",
            "boundary": "Documents built by the semantic rule tests.",
        },
        "session": {"id": "session-test", "native_ids": [], "lineage": []},
        "participants": [],
        "events": [],
        "branches": [],
        "executions": [],
        "contexts": [],
        "configurations": [],
        "tools": [],
        "resources": [],
        "environments": [],
        "checkpoints": [],
        "coverage": coverage(),
        "losses": [],
        "required_features": [],
    }


def minimal_valid() -> dict[str, Any]:
    doc = skeleton()
    doc["participants"] = [{"id": "user", "kind": "human"}]
    doc["events"] = sequenced(
        [
            event("m1", "message", {"role": "user", "parts": [text("Hello")]}, actor="user"),
            event("m2", "message", {"role": "assistant", "parts": [text("Hi")]}, actor="user", causes=("m1",)),
        ]
    )
    doc["branches"] = [{"id": "main", "event_ids": ["m1", "m2"], "head_event_id": "m2"}]
    doc["checkpoints"] = [checkpoint("cp-main", "main", "m2")]
    doc["coverage"] = coverage(participants="complete", conversation="complete", branches="complete")
    return doc


# Event order of the rich document; E maps an event id to its position (and sequence).
ORDER = [
    "e-user",
    "e-task1",
    "e-task2",
    "e-call1",
    "e-res1a",
    "e-res1b",
    "e-req1",
    "e-dec1",
    "e-dec1b",
    "e-task1b",
    "e-call2a",
    "e-call2b",
    "e-req2",
    "e-ctx",
    "e-cfg",
    "e-rc",
    "e-xt1",
    "e-note",
    "e-ext",
    "e-xt2",
    "e-res-ext",
    "e-dec-ext",
]
E = {eid: i for i, eid in enumerate(ORDER)}
R = {
    rid: i
    for i, rid in enumerate(
        ["notes", "blob", "native-export", "memory", "args-prefix", "args-suffix", "result-text", "file", "gone"]
    )
}
ARGS_PREFIX, ARGS_SUFFIX = '{"path":', '"b"}'


def rich_valid() -> dict[str, Any]:
    """Every core family plus streams and external bindings, with no problem anywhere."""
    doc = skeleton()
    doc["session"]["lineage"] = [
        {
            "relation": "translation",
            "session_id": "source-session",
            "capture_id": "source-capture",
            "event_id": "source-last",
            "inclusive": True,
        },
        {
            "relation": "fork",
            "session_id": "parent-session",
            "capture_id": "parent-capture",
            "event_id": "parent-e9",
            "inclusive": True,
        },
    ]
    doc["session"]["objective"] = [text("Read the notes"), {"kind": "resource", "resource_id": "notes"}]
    doc["participants"] = [
        {"id": "user", "kind": "human"},
        {"id": "agent", "kind": "agent"},
        {"id": "tool-runner", "kind": "tool", "parent_participant_id": "agent"},
    ]
    call1 = {"call_id": "c1", "tool_id": "read", "arguments": {"path": "a"}, "arguments_status": "complete"}
    options = [{"id": "allow", "label": "Allow"}, {"id": "deny", "label": "Deny"}]
    doc["events"] = sequenced(
        [
            event(
                "e-user",
                "message",
                {"role": "user", "parts": [text("Read"), {"kind": "resource", "resource_id": "notes"}]},
                actor="user",
            ),
            event(
                "e-task1",
                "task_update",
                {"task_id": "t1", "revision": 1, "status": "pending", "parts": [], "dependencies": []},
                execution_id="x1",
            ),
            event("e-task2", "task_update", {"task_id": "t2", "revision": 1, "status": "pending", "parts": []}),
            event("e-call1", "tool_call", call1, causes=("e-user",), execution_id="x1"),
            event(
                "e-res1a",
                "tool_result",
                {
                    "call_id": "c1",
                    "result_index": 0,
                    "terminal": False,
                    "outcome": "unknown",
                    "parts": [text("working")],
                },
                actor="tool-runner",
                causes=("e-call1",),
            ),
            event(
                "e-res1b",
                "tool_result",
                {"call_id": "c1", "result_index": 1, "terminal": True, "outcome": "success", "parts": [text("done")]},
                actor="tool-runner",
                causes=("e-res1a",),
            ),
            event(
                "e-req1",
                "decision_request",
                {
                    "request_id": "r1",
                    "decision_kind": "approval",
                    "prompt": [text("Allow?")],
                    "options": options,
                    "call_id": "c1",
                    "task_id": "t1",
                    "task_revision": 1,
                },
            ),
            event(
                "e-dec1",
                "decision_resolution",
                {"request_id": "r1", "outcome": "denied", "answer": [], "selected_option_id": "deny"},
                actor="user",
            ),
            event(
                "e-dec1b",
                "decision_resolution",
                {"request_id": "r1", "outcome": "allowed", "answer": [], "selected_option_id": "allow"},
                actor="user",
                supersedes={"event_id": "e-dec1"},
            ),
            event(
                "e-task1b",
                "task_update",
                {
                    "task_id": "t1",
                    "revision": 2,
                    "status": "in_progress",
                    "parts": [],
                    "previous_revision": 1,
                    "dependencies": ["t2"],
                },
            ),
            event(
                "e-call2a",
                "tool_call",
                {"call_id": "c2", "tool_id": "read", "arguments": {}, "arguments_status": "partial"},
                execution_id="x1",
            ),
            event(
                "e-call2b",
                "tool_call",
                {"call_id": "c2", "tool_id": "read", "arguments": {"path": "b"}, "arguments_status": "complete"},
                execution_id="x1",
                supersedes={"event_id": "e-call2a"},
            ),
            event(
                "e-req2",
                "decision_request",
                {"request_id": "r2", "decision_kind": "question", "prompt": [text("Which file next?")], "options": []},
            ),
            event("e-ctx", "context_checkpoint", {"context_id": "ctx1", "reason": "request"}),
            event("e-cfg", "configuration_change", {"configuration_id": "cfg"}),
            event(
                "e-rc",
                "resource_change",
                {"resource_id": "memory", "operation": "created", "previous_resource_id": "notes"},
            ),
            event("e-xt1", "execution_transition", {"execution_id": "x1", "status": "running"}),
            event("e-note", "note", {"category": "test", "parts": [text("derived")]}),
            event("e-ext", "extension", {"type": "example.ext/1", "value": {}, "interpretation_required": False}),
            event("e-xt2", "execution_transition", {"execution_id": "x1", "status": "completed"}),
            event(
                "e-res-ext",
                "tool_result",
                {"call_id": "c-ext", "result_index": 0, "terminal": True, "outcome": "success", "parts": []},
                actor="tool-runner",
            ),
            event(
                "e-dec-ext",
                "decision_resolution",
                {"request_id": "r-ext", "outcome": "allowed", "answer": [], "selected_option_id": "ok"},
                actor="user",
            ),
        ]
    )
    doc["events"][E["e-note"]]["provenance"] = prov(
        mode="derived",
        method="test derivation",
        inputs=[{"event_id": "e-user"}, {"event_id": "x", "session_id": "elsewhere", "capture_id": "old"}],
        sources=[
            {"resource_id": "native-export", "locator": {"syntax": "json_pointer", "value": "/messages/0"}},
            {"resource_id": "notes", "locator": {"syntax": "bytes", "offset": 0, "length": 5}},
        ],
    )
    doc["branches"] = [
        {"id": "main", "event_ids": list(ORDER), "head_event_id": ORDER[-1]},
        {"id": "alt", "event_ids": ["e-user", "e-task1"], "head_event_id": "e-task1"},
    ]
    doc["executions"] = [
        {
            "id": "x1",
            "participant_id": "agent",
            "status": "completed",
            "context_ids": ["ctx1"],
            "usage": [
                {
                    "scope": "execution",
                    "scope_id": "x1",
                    "unit": "tokens",
                    "value": 7,
                    "counter": "delta",
                    "provenance": prov(),
                }
            ],
        },
    ]
    doc["usage"] = [
        {"scope": "event", "scope_id": "e-user", "unit": "tokens", "value": 3, "counter": "delta", "provenance": prov()}
    ]
    doc["contexts"] = [
        {
            "id": "ctx1",
            "branch_id": "main",
            "at_event_id": "e-res1b",
            "purpose": "model_request",
            "fidelity": "reconstructed",
            "configuration_id": "cfg",
            "tool_ids": ["read"],
            "inputs": [
                {
                    "id": "in-user",
                    "kind": "message",
                    "role": "user",
                    "source_events": [{"event_id": "e-user"}],
                    "parts": [text("Read"), {"kind": "resource", "resource_id": "notes"}],
                },
                {
                    "id": "in-call",
                    "kind": "tool_call",
                    "role": "assistant",
                    "parts": [],
                    "source_events": [{"event_id": "e-call1"}],
                    **call1,
                },
                {
                    "id": "in-res-a",
                    "kind": "tool_result",
                    "role": "tool",
                    "parts": [text("working")],
                    "source_events": [{"event_id": "e-res1a"}],
                    "call_id": "c1",
                    "result_index": 0,
                    "terminal": False,
                    "outcome": "unknown",
                },
                {
                    "id": "in-res-b",
                    "kind": "tool_result",
                    "role": "tool",
                    "parts": [text("done")],
                    "source_events": [{"event_id": "e-res1b"}],
                    "call_id": "c1",
                    "result_index": 1,
                    "terminal": True,
                    "outcome": "success",
                },
            ],
        }
    ]
    doc["configurations"] = [
        {
            "id": "cfg",
            "knowledge": "declared",
            "environment_ids": ["env"],
            "instructions": [
                {
                    "id": "i1",
                    "parts": [text("Be brief"), {"kind": "resource", "resource_id": "notes"}],
                    "scope": {"dialect": "example.scope/1", "value": "global"},
                    "activation": {"dialect": "example.activation/1", "value": "always"},
                    "provenance": prov(inputs=[{"event_id": "e-user"}]),
                },
            ],
            "capabilities": [
                {"id": "cap1", "type": "example.cap/1", "definition": {}, "resource_ids": ["notes"], "required": True}
            ],
            "policies": [{"id": "p1", "type": "example.policy/1", "definition": {}, "enforcing": False}],
            "secret_requirements": [{"handle": "h1", "purpose": "Sign in to the notes service."}],
        }
    ]
    doc["tools"] = [
        {
            "id": "read",
            "name": "example.read",
            "description": "Read a file.",
            "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
            "output_schema": {"type": "string"},
            "resource_ids": ["notes"],
        }
    ]
    doc["resources"] = [
        embedded_text("notes", "hello notes\n"),
        embedded_data("blob", b"\x00\x01\xffbinary"),
        {
            **embedded_text("native-export", '{"messages":[{"id":"m1"}]}', purpose="native"),
            "media_type": "application/json",
        },
        embedded_text("memory", "Remember: brief.\n", purpose="session_memory", provenance=prov()),
        embedded_text("args-prefix", ARGS_PREFIX, purpose="native"),
        embedded_text("args-suffix", ARGS_SUFFIX, purpose="native"),
        embedded_text("result-text", "done", purpose="native"),
        {
            "id": "file",
            "media_type": "text/plain",
            "availability": "embedded",
            "purpose": "input",
            "bytes": 3,
            "sha256": "0" * 64,
            "path": "assets/file.txt",
        },
        {
            "id": "gone",
            "media_type": "image/png",
            "availability": "unavailable",
            "purpose": "input",
            "explanation": "Never captured.",
        },
    ]
    requirement = {
        "id": "req-notes",
        "kind": "asif.resource",
        "description": "The notes must be readable.",
        "required_for": ["continue"],
        "status": "available",
        "resource_id": "notes",
        "environment_id": "env",
        "capability_id": "cap1",
        "secret_handle": "h1",
    }
    doc["environments"] = [
        {
            "id": "env",
            "kind": "workspace",
            "description": "Test workspace.",
            "resource_ids": ["notes"],
            "requirements": [requirement],
        },
    ]
    doc["checkpoints"] = [
        checkpoint(
            "cp-main",
            "main",
            ORDER[-1],
            knowledge="observed",
            status="waiting",
            context_id="ctx1",
            configuration_id="cfg",
            open_calls=[{"call_id": "c2", "state": "outcome_unknown"}],
            open_decisions=[{"request_id": "r2", "state": "outcome_unknown"}],
            tasks=[{"task_id": "t1", "revision": 2}, {"task_id": "t2", "revision": 1}],
        ),
        checkpoint("cp-alt", "alt", "e-task1"),
    ]
    doc["coverage"] = coverage(
        participants="complete",
        conversation="complete",
        branches="complete",
        tools="complete",
        decisions="complete",
        tasks="complete",
        resources="partial",
    )
    doc["losses"] = [
        {
            "id": "l1",
            "stage": "capture",
            "kind": "unavailable",
            "scope": "resources",
            "references": [{"type": "resource", "id": "gone"}, {"type": "example.thing", "id": "opaque"}],
            "explanation": "The image was not captured.",
        },
    ]
    doc["required_features"] = ["asif.streams/0.1", "asif.external-bindings/0.1"]
    segment = {"offset": 0, "terminal": False}
    doc["streams"] = [
        {
            "id": "s-args",
            "kind": "tool_arguments",
            "event_id": "e-call2b",
            "call_id": "c2",
            "status": "complete",
            "segments": [
                {**segment, "index": 0, "resource_id": "args-prefix", "length": len(ARGS_PREFIX)},
                {**segment, "index": 1, "resource_id": "args-suffix", "length": len(ARGS_SUFFIX), "terminal": True},
            ],
        },
        {
            "id": "s-args-partial",
            "kind": "tool_arguments",
            "event_id": "e-call2a",
            "call_id": "c2",
            "status": "partial",
            "segments": [{**segment, "index": 0, "resource_id": "args-prefix", "length": len(ARGS_PREFIX)}],
        },
        {
            "id": "s-text",
            "kind": "tool_result_text",
            "event_id": "e-res1b",
            "call_id": "c1",
            "result_index": 1,
            "status": "complete",
            "segments": [{**segment, "index": 0, "resource_id": "result-text", "length": 4, "terminal": True}],
        },
    ]
    source = {"session_id": "earlier-session", "capture_id": "earlier-capture", "event_id": "old-1"}
    doc["external_bindings"] = [
        {
            "kind": "call",
            "id": "c-ext",
            "source": source,
            "descriptor": {"tool_id": "read", "arguments": {"path": "z"}, "arguments_status": "complete"},
        },
        {
            "kind": "request",
            "id": "r-ext",
            "source": source,
            "descriptor": {
                "decision_kind": "approval",
                "prompt": [text("OK?"), {"kind": "resource", "resource_id": "notes"}],
                "options": [{"id": "ok", "label": "OK"}],
            },
        },
    ]
    return doc


# -- a tiny JSON-Patch-like editor for the violation cases --------------------------------------

Op = tuple[Any, ...]


def _walk(doc: Any, path: str) -> tuple[Any, str]:
    parts = [p.replace("~1", "/").replace("~0", "~") for p in path.split("/")[1:]]
    target = doc
    for part in parts[:-1]:
        target = target[int(part)] if isinstance(target, list) else target[part]
    return target, parts[-1]


def apply(doc: dict, ops: list[Op]) -> dict:
    for op in ops:
        name, path = op[0], op[1]
        parent, key = _walk(doc, path)
        if name == "replace":
            parent[int(key) if isinstance(parent, list) else key] = op[2]
        elif name == "add":
            if isinstance(parent, list):
                parent.insert(len(parent) if key == "-" else int(key), op[2])
            else:
                parent[key] = op[2]
        elif name == "remove":
            del parent[int(key) if isinstance(parent, list) else key]
        elif name == "copy":  # ("copy", to, from): append/insert a deep copy of another value
            source_parent, source_key = _walk(doc, op[2])
            value = source_parent[int(source_key) if isinstance(source_parent, list) else source_key]
            apply(doc, [("add", path, copy.deepcopy(value))])
        else:
            raise ValueError(name)
    return doc


def ev(eid: str, *rest: str | int) -> str:
    return pointer("events", E[eid], *rest)


def res(rid: str, *rest: str | int) -> str:
    return pointer("resources", R[rid], *rest)


GHOST = "ghost"
EXTERNAL = {"event_id": "x", "session_id": "other-session", "capture_id": "other-capture"}
EXTRA_CALL = {
    **event(
        "e-call2c",
        "tool_call",
        {"call_id": "c2", "tool_id": "read", "arguments": {"path": "c"}, "arguments_status": "complete"},
        execution_id="x1",
        supersedes={"event_id": "e-call2a"},
    ),
    "sequence": len(ORDER),
}

Base = Callable[[], dict[str, Any]]

# (rule number, case name, base document, edits, expected JSON pointer)
# fmt: off
CASES: list[tuple[int, str, Base, list[Op], str]] = [
    (3, "duplicate participant", minimal_valid, [("add", "/participants/-", {"id": "user", "kind": "agent"})],
     "/participants/1/id"),
    (3, "duplicate event", rich_valid, [("replace", ev("e-ext", "id"), "e-note")], ev("e-ext", "id")),
    (5, "requirement resource", rich_valid, [("replace", "/environments/0/requirements/0/resource_id", GHOST)],
     "/environments/0/requirements/0/resource_id"),
    (5, "requirement capability", rich_valid, [("replace", "/environments/0/requirements/0/capability_id", GHOST)],
     "/environments/0/requirements/0/capability_id"),
    (5, "usage scope id", rich_valid, [("replace", "/executions/0/usage/0/scope_id", GHOST)],
     "/executions/0/usage/0/scope_id"),
    (8, "ungated extension", rich_valid, [("replace", ev("e-ext", "data", "interpretation_required"), True)],
     ev("e-ext", "data", "type")),
    (9, "unknown feature", rich_valid, [("add", "/required_features/-", "example.unknown/1")],
     "/required_features/2"),
    (10, "known_empty with data", rich_valid, [("replace", "/coverage/6/status", "known_empty")],
     "/coverage/6/status"),
    (10, "known_empty branches", minimal_valid, [("replace", "/coverage/2/status", "known_empty")],
     "/coverage/2/status"),
    (12, "loss reference", rich_valid, [("replace", "/losses/0/references/0/id", GHOST)],
     "/losses/0/references/0/id"),
    (13, "fork keeps session id", rich_valid, [("replace", "/session/lineage/1/session_id", "session-test")],
     "/session/lineage/1/session_id"),
    (14, "unknown actor", minimal_valid, [("replace", "/events/1/actor_id", GHOST)], "/events/1/actor_id"),
    (15, "unknown parent", rich_valid, [("replace", "/participants/2/parent_participant_id", GHOST)],
     "/participants/2/parent_participant_id"),
    (15, "parent cycle", rich_valid, [("add", "/participants/1/parent_participant_id", "tool-runner")],
     "/participants/2/parent_participant_id"),
    (16, "execution participant", rich_valid, [("replace", "/executions/0/participant_id", GHOST)],
     "/executions/0/participant_id"),
    (16, "execution context", rich_valid, [("replace", "/executions/0/context_ids/0", GHOST)],
     "/executions/0/context_ids/0"),
    (17, "event execution", rich_valid, [("replace", ev("e-task1", "execution_id"), GHOST)],
     ev("e-task1", "execution_id")),
    (19, "transition after terminal", rich_valid, [("replace", ev("e-xt1", "data", "status"), "failed")],
     ev("e-xt2", "data", "status")),
    (20, "repeated sequence", rich_valid, [("replace", ev("e-note", "sequence"), E["e-xt1"])],
     ev("e-note", "sequence")),
    (21, "descending sequence", rich_valid, [("replace", ev("e-note", "sequence"), 100)],
     ev("e-ext", "sequence")),
    (22, "unknown cause", rich_valid, [("replace", ev("e-res1a", "causes", 0, "event_id"), GHOST)],
     ev("e-res1a", "causes", 0, "event_id")),
    (22, "later cause", rich_valid, [("replace", ev("e-res1a", "causes", 0, "event_id"), "e-res1b")],
     ev("e-res1a", "causes", 0, "event_id")),
    (22, "repeated cause", rich_valid, [("add", ev("e-res1a", "causes", "-"), {"event_id": "e-call1"})],
     ev("e-res1a", "causes", 1, "event_id")),
    (23, "cause after effect in branch", rich_valid,
     [("replace", "/branches/0/event_ids/3", "e-res1a"), ("replace", "/branches/0/event_ids/4", "e-call1")],
     "/branches/0/event_ids/3"),
    (24, "unknown predecessor", rich_valid, [("replace", ev("e-dec1b", "supersedes", "event_id"), GHOST)],
     ev("e-dec1b", "supersedes", "event_id")),
    (24, "different kind", rich_valid, [("add", ev("e-note", "supersedes"), {"event_id": "e-user"})],
     ev("e-note", "supersedes", "event_id")),
    (24, "later predecessor", rich_valid, [("add", ev("e-dec1", "supersedes"), {"event_id": "e-dec-ext"})],
     ev("e-dec1", "supersedes", "event_id")),
    (25, "correction changes request", rich_valid,
     [("replace", ev("e-dec1b", "data", "request_id"), "r2"), ("remove", ev("e-dec1b", "data", "selected_option_id"))],
     ev("e-dec1b", "data", "request_id")),
    (28, "provenance input", rich_valid, [("replace", ev("e-note", "provenance", "inputs", 0, "event_id"), GHOST)],
     ev("e-note", "provenance", "inputs", 0, "event_id")),
    (28, "instruction provenance input", rich_valid,
     [("replace", "/configurations/0/instructions/0/provenance/inputs/0/event_id", GHOST)],
     "/configurations/0/instructions/0/provenance/inputs/0/event_id"),
    (29, "provenance source", rich_valid,
     [("replace", ev("e-note", "provenance", "sources", 0, "resource_id"), GHOST)],
     ev("e-note", "provenance", "sources", 0, "resource_id")),
    (30, "span past the end", rich_valid,
     [("replace", ev("e-note", "provenance", "sources", 1, "locator", "length"), 99)],
     ev("e-note", "provenance", "sources", 1, "locator")),
    (30, "missing offset", rich_valid, [("remove", ev("e-note", "provenance", "sources", 1, "locator", "offset"))],
     ev("e-note", "provenance", "sources", 1, "locator")),
    (31, "unresolved pointer", rich_valid,
     [("replace", ev("e-note", "provenance", "sources", 0, "locator", "value"), "/messages/4")],
     ev("e-note", "provenance", "sources", 0, "locator", "value")),
    (31, "pointer not a string", rich_valid,
     [("replace", ev("e-note", "provenance", "sources", 0, "locator", "value"), 3)],
     ev("e-note", "provenance", "sources", 0, "locator", "value")),
    (31, "pointer into non-JSON", rich_valid,
     [("replace", ev("e-note", "provenance", "sources", 0, "resource_id"), "notes")],
     ev("e-note", "provenance", "sources", 0, "locator", "value")),
    (32, "message part", rich_valid, [("replace", ev("e-user", "data", "parts", 1, "resource_id"), GHOST)],
     ev("e-user", "data", "parts", 1, "resource_id")),
    (32, "instruction part", rich_valid,
     [("replace", "/configurations/0/instructions/0/parts/1/resource_id", GHOST)],
     "/configurations/0/instructions/0/parts/1/resource_id"),
    (32, "external prompt part", rich_valid,
     [("replace", "/external_bindings/1/descriptor/prompt/1/resource_id", GHOST)],
     "/external_bindings/1/descriptor/prompt/1/resource_id"),
    (32, "objective part", rich_valid, [("replace", "/session/objective/1/resource_id", GHOST)],
     "/session/objective/1/resource_id"),
    (33, "unknown tool", rich_valid, [("replace", ev("e-call1", "data", "tool_id"), GHOST)],
     ev("e-call1", "data", "tool_id")),
    (34, "call id reused", rich_valid, [("remove", ev("e-call2b", "supersedes"))], ev("e-call2b", "data", "call_id")),
    (34, "call id of external binding", rich_valid, [("replace", "/external_bindings/0/id", "c1")],
     ev("e-call1", "data", "call_id")),
    (35, "amendment changes actor", rich_valid, [("replace", ev("e-call2b", "actor_id"), "user")],
     ev("e-call2b", "actor_id")),
    (35, "amendment drops execution", rich_valid, [("remove", ev("e-call2b", "execution_id"))], ev("e-call2b")),
    (36, "complete call amended", rich_valid, [("replace", ev("e-call2a", "data", "arguments_status"), "complete")],
     ev("e-call2b", "supersedes")),
    (36, "status regresses", rich_valid, [("replace", ev("e-call2b", "data", "arguments_status"), "unknown")],
     ev("e-call2b", "data", "arguments_status")),
    (37, "external predecessor", rich_valid, [("replace", ev("e-call2b", "supersedes"), EXTERNAL)],
     ev("e-call2b", "supersedes")),
    (38, "retry of itself", rich_valid, [("add", ev("e-call1", "data", "retry_of"), "c1")],
     ev("e-call1", "data", "retry_of")),
    (38, "retry supersedes the retried call", rich_valid,
     [("replace", ev("e-call2b", "supersedes", "event_id"), "e-call1"),
      ("add", ev("e-call2b", "data", "retry_of"), "c1"), ("add", ev("e-call2a", "data", "retry_of"), "c1")],
     ev("e-call2b", "supersedes")),
    (39, "conflicting successors", rich_valid,
     [("add", "/events/-", EXTRA_CALL), ("add", "/branches/0/event_ids/12", "e-call2c")],
     pointer("events", len(ORDER), "supersedes")),
    (40, "result without call", rich_valid, [("replace", ev("e-res1a", "data", "call_id"), GHOST)],
     ev("e-res1a", "data", "call_id")),
    (40, "result before call in branch", rich_valid,
     [("replace", "/branches/0/event_ids/3", "e-res1a"), ("replace", "/branches/0/event_ids/4", "e-call1")],
     ev("e-res1a", "data", "call_id")),
    (41, "result index not increasing", rich_valid, [("replace", ev("e-res1b", "data", "result_index"), 0)],
     ev("e-res1b", "data", "result_index")),
    (42, "result after terminal", rich_valid,
     [("replace", ev("e-res1a", "data", "terminal"), True), ("replace", ev("e-res1a", "data", "outcome"), "success")],
     ev("e-res1b", "data", "call_id")),
    (44, "invalid input schema", rich_valid, [("replace", "/tools/0/input_schema", {"type": 5})],
     "/tools/0/input_schema/type"),
    (44, "invalid output schema", rich_valid, [("replace", "/tools/0/output_schema", {"minLength": -1})],
     "/tools/0/output_schema/minLength"),
    (44, "tool resource", rich_valid, [("replace", "/tools/0/resource_ids/0", GHOST)], "/tools/0/resource_ids/0"),
    (45, "request id reused", rich_valid, [("replace", ev("e-req2", "data", "request_id"), "r1")],
     ev("e-req2", "data", "request_id")),
    (45, "request id of external binding", rich_valid, [("replace", "/external_bindings/1/id", "r2")],
     ev("e-req2", "data", "request_id")),
    (46, "resolution without request", rich_valid, [("replace", ev("e-dec-ext", "data", "request_id"), GHOST)],
     ev("e-dec-ext", "data", "request_id")),
    (46, "resolution before request in branch", rich_valid,
     [("replace", "/branches/0/event_ids/6", "e-dec1b"), ("replace", "/branches/0/event_ids/8", "e-req1")],
     ev("e-dec1b", "data", "request_id")),
    (47, "two effective resolutions", rich_valid, [("remove", ev("e-dec1b", "supersedes"))],
     ev("e-dec1b", "data", "request_id")),
    (48, "unknown option", rich_valid, [("replace", ev("e-dec1b", "data", "selected_option_id"), "maybe")],
     ev("e-dec1b", "data", "selected_option_id")),
    (48, "repeated option id", rich_valid, [("replace", ev("e-req1", "data", "options", 1, "id"), "allow")],
     ev("e-req1", "data", "options", 1, "id")),
    (49, "task revision not selected", rich_valid, [("replace", ev("e-req1", "data", "task_revision"), 2)],
     ev("e-req1", "data", "task_revision")),
    (49, "call not selected yet", rich_valid, [("replace", ev("e-req1", "data", "call_id"), "c2")],
     ev("e-req1", "data", "call_id")),
    (50, "repeated task revision", rich_valid, [("replace", ev("e-task2", "data", "task_id"), "t1")],
     ev("e-task2", "data", "revision")),
    (51, "previous not smaller", rich_valid, [("replace", ev("e-task1b", "data", "previous_revision"), 2)],
     ev("e-task1b", "data", "previous_revision")),
    (52, "no previous revision", rich_valid, [("remove", ev("e-task1b", "data", "previous_revision"))],
     ev("e-task1b", "data")),
    (52, "revision goes down", rich_valid,
     [("replace", ev("e-task1", "data", "revision"), 5), ("replace", ev("e-task1b", "data", "previous_revision"), 5),
      ("replace", ev("e-req1", "data", "task_revision"), 5)],
     ev("e-task1b", "data", "previous_revision")),
    (53, "predecessor missing", rich_valid, [("add", ev("e-task2", "data", "previous_revision"), 0)],
     ev("e-task2", "data", "previous_revision")),
    (54, "reopen without reason", rich_valid, [("replace", ev("e-task1", "data", "status"), "completed")],
     ev("e-task1b", "data", "status")),
    (55, "self dependency", rich_valid, [("replace", ev("e-task1b", "data", "dependencies", 0), "t1")],
     ev("e-task1b", "data", "dependencies", 0)),
    (55, "unknown task", rich_valid, [("replace", ev("e-task1b", "data", "dependencies", 0), "t9")],
     ev("e-task1b", "data", "dependencies", 0)),
    (56, "dependency cycle", rich_valid, [("add", ev("e-task2", "data", "dependencies"), ["t1"])],
     ev("e-task1b", "data", "dependencies")),
    (57, "unknown context", rich_valid, [("replace", ev("e-ctx", "data", "context_id"), GHOST)],
     ev("e-ctx", "data", "context_id")),
    (57, "unknown previous resource", rich_valid, [("replace", ev("e-rc", "data", "previous_resource_id"), GHOST)],
     ev("e-rc", "data", "previous_resource_id")),
    (57, "unknown configuration", rich_valid, [("replace", ev("e-cfg", "data", "configuration_id"), GHOST)],
     ev("e-cfg", "data", "configuration_id")),
    (58, "unknown branch event", rich_valid, [("add", "/branches/1/event_ids/1", GHOST)], "/branches/1/event_ids/1"),
    (59, "wrong head", rich_valid, [("replace", "/branches/1/head_event_id", "e-user")], "/branches/1/head_event_id"),
    (59, "null head of non-empty branch", minimal_valid, [("replace", "/branches/0/head_event_id", None)],
     "/branches/0/head_event_id"),
    (60, "no head checkpoint", rich_valid, [("remove", "/checkpoints/1")], "/branches/1"),
    (60, "two head checkpoints", rich_valid,
     [("copy", "/checkpoints/-", "/checkpoints/1"), ("replace", "/checkpoints/2/id", "cp-alt-2")],
     "/checkpoints/2/at_event_id"),
    (61, "unknown branch", rich_valid, [("replace", "/checkpoints/1/branch_id", GHOST)], "/checkpoints/1/branch_id"),
    (61, "boundary outside branch", rich_valid, [("replace", "/checkpoints/1/at_event_id", "e-call1")],
     "/checkpoints/1/at_event_id"),
    (62, "context of another branch", rich_valid, [("replace", "/checkpoints/1/context_id", "ctx1")],
     "/checkpoints/1/context_id"),
    (62, "unknown configuration", rich_valid, [("replace", "/checkpoints/0/configuration_id", GHOST)],
     "/checkpoints/0/configuration_id"),
    (62, "context later than boundary", rich_valid,
     [("add", "/checkpoints/-", checkpoint("cp-early", "main", "e-call1", context_id="ctx1"))],
     "/checkpoints/2/context_id"),
    (63, "closed call listed open", rich_valid,
     [("add", "/checkpoints/0/open_calls/-", {"call_id": "c1", "state": "outcome_unknown"})],
     "/checkpoints/0/open_calls/1/call_id"),
    (63, "resolved decision listed open", rich_valid,
     [("add", "/checkpoints/0/open_decisions/-", {"request_id": "r1", "state": "pending"})],
     "/checkpoints/0/open_decisions/1/request_id"),
    (63, "stale task revision", rich_valid, [("replace", "/checkpoints/0/tasks/0/revision", 1)],
     "/checkpoints/0/tasks/0/revision"),
    (63, "repeated task", rich_valid, [("add", "/checkpoints/0/tasks/-", {"task_id": "t1", "revision": 2})],
     "/checkpoints/0/tasks/2/task_id"),
    (64, "open call not listed", rich_valid, [("replace", "/checkpoints/0/open_calls", [])],
     "/checkpoints/0/open_calls"),
    (64, "open decision not listed", rich_valid, [("remove", "/checkpoints/0/open_decisions/0")],
     "/checkpoints/0/open_decisions"),
    (66, "unknown context branch", rich_valid, [("replace", "/contexts/0/branch_id", GHOST)], "/contexts/0/branch_id"),
    (66, "boundary outside branch", rich_valid, [("replace", "/contexts/0/at_event_id", GHOST)],
     "/contexts/0/at_event_id"),
    (66, "unknown tool", rich_valid, [("replace", "/contexts/0/tool_ids/0", GHOST)], "/contexts/0/tool_ids/0"),
    (66, "unknown configuration", rich_valid, [("replace", "/contexts/0/configuration_id", GHOST)],
     "/contexts/0/configuration_id"),
    (67, "repeated input id", rich_valid, [("replace", "/contexts/0/inputs/1/id", "in-user")],
     "/contexts/0/inputs/1/id"),
    (68, "unknown source event", rich_valid,
     [("replace", "/contexts/0/inputs/0/source_events/0/event_id", GHOST)],
     "/contexts/0/inputs/0/source_events/0/event_id"),
    (68, "source after boundary", rich_valid,
     [("replace", "/contexts/0/inputs/0/source_events/0/event_id", "e-note")],
     "/contexts/0/inputs/0/source_events/0/event_id"),
    (69, "result input without call input", rich_valid, [("remove", "/contexts/0/inputs/1")],
     "/contexts/0/inputs/1/call_id"),
    (69, "call input with unknown tool", rich_valid, [("replace", "/contexts/0/inputs/1/tool_id", GHOST)],
     "/contexts/0/inputs/1/tool_id"),
    (69, "result input after terminal", rich_valid,
     [("replace", "/contexts/0/inputs/2/terminal", True), ("replace", "/contexts/0/inputs/2/outcome", "success")],
     "/contexts/0/inputs/3/call_id"),
    (69, "result input index not increasing", rich_valid, [("replace", "/contexts/0/inputs/3/result_index", 0)],
     "/contexts/0/inputs/3/result_index"),
    (69, "second call input", rich_valid, [("copy", "/contexts/0/inputs/2", "/contexts/0/inputs/1"),
                                           ("replace", "/contexts/0/inputs/2/id", "in-call-again")],
     "/contexts/0/inputs/2/call_id"),
    (72, "repeated policy id", rich_valid, [("copy", "/configurations/0/policies/-", "/configurations/0/policies/0")],
     "/configurations/0/policies/1/id"),
    (72, "repeated secret handle", rich_valid,
     [("copy", "/configurations/0/secret_requirements/-", "/configurations/0/secret_requirements/0")],
     "/configurations/0/secret_requirements/1/handle"),
    (72, "unknown environment", rich_valid, [("replace", "/configurations/0/environment_ids/0", GHOST)],
     "/configurations/0/environment_ids/0"),
    (72, "capability resource", rich_valid, [("replace", "/configurations/0/capabilities/0/resource_ids/0", GHOST)],
     "/configurations/0/capabilities/0/resource_ids/0"),
    (73, "environment resource", rich_valid, [("replace", "/environments/0/resource_ids/0", GHOST)],
     "/environments/0/resource_ids/0"),
    (75, "wrong digest", rich_valid, [("replace", res("notes", "sha256"), "0" * 64)], res("notes", "sha256")),
    (75, "wrong size", rich_valid, [("replace", res("notes", "bytes"), 11)], res("notes", "bytes")),
    (75, "wrong size of data", rich_valid, [("replace", res("blob", "bytes"), 1)], res("blob", "bytes")),
    (75, "not base64", rich_valid, [("replace", res("blob", "data"), "not base64!")], res("blob", "data")),
    (75, "lone surrogate", rich_valid, [("replace", res("notes", "text"), "\ud800")], res("notes", "text")),
    (76, "parent segment", rich_valid, [("replace", res("file", "path"), "../file.txt")], res("file", "path")),
    (76, "absolute", rich_valid, [("replace", res("file", "path"), "/etc/passwd")], res("file", "path")),
    (76, "drive letter", rich_valid, [("replace", res("file", "path"), "C:/file.txt")], res("file", "path")),
    (76, "backslash", rich_valid, [("replace", res("file", "path"), "assets\\file.txt")], res("file", "path")),
    (76, "device name", rich_valid, [("replace", res("file", "path"), "assets/con.txt")], res("file", "path")),
    (76, "case collision", rich_valid,
     [("add", "/resources/-", {"id": "file2", "media_type": "text/plain", "availability": "embedded",
                               "purpose": "input", "bytes": 3, "sha256": "0" * 64, "path": "Assets/File.txt"})],
     "/resources/9/path"),
    (77, "memory without provenance", rich_valid, [("remove", res("memory", "provenance"))], res("memory")),
    (79, "repeated stream id", rich_valid, [("replace", "/streams/1/id", "s-args")], "/streams/1/id"),
    (79, "unknown stream event", rich_valid, [("replace", "/streams/2/event_id", GHOST)], "/streams/2/event_id"),
    (79, "stream call mismatch", rich_valid, [("replace", "/streams/2/call_id", "c2")], "/streams/2/call_id"),
    (79, "result index mismatch", rich_valid, [("replace", "/streams/2/result_index", 0)],
     "/streams/2/result_index"),
    (80, "segment index repeated", rich_valid, [("replace", "/streams/0/segments/1/index", 0)],
     "/streams/0/segments/1/index"),
    (80, "terminal not last", rich_valid, [("replace", "/streams/0/segments/0/terminal", True)],
     "/streams/0/segments/0/terminal"),
    (80, "span outside resource", rich_valid, [("replace", "/streams/2/segments/0/length", 40)],
     "/streams/2/segments/0"),
    (80, "segment of unavailable resource", rich_valid, [("replace", "/streams/2/segments/0/resource_id", "gone")],
     "/streams/2/segments/0/resource_id"),
    (81, "partial stream called complete", rich_valid, [("replace", "/streams/1/status", "complete")],
     "/streams/1/status"),
    (81, "gap in a complete stream", rich_valid, [("replace", "/streams/0/segments/1/index", 2)], "/streams/0/status"),
    (81, "empty stream called complete", rich_valid, [("replace", "/streams/2/segments", [])], "/streams/2/status"),
    (82, "arguments differ", rich_valid, [("replace", ev("e-call2b", "data", "arguments"), {"path": "c"})],
     "/streams/0/segments"),
    (82, "partial stream binds complete call", rich_valid, [("replace", "/streams/1/event_id", "e-call2b")],
     "/streams/1/event_id"),
    (83, "result text differs", rich_valid, [("replace", ev("e-res1b", "data", "parts", 0, "text"), "DONE")],
     "/streams/2/segments"),
    (84, "repeated binding", rich_valid, [("copy", "/external_bindings/-", "/external_bindings/0")],
     "/external_bindings/2/id"),
    (84, "binding tool unknown", rich_valid, [("replace", "/external_bindings/0/descriptor/tool_id", GHOST)],
     "/external_bindings/0/descriptor/tool_id"),
    (84, "binding options repeated", rich_valid,
     [("copy", "/external_bindings/1/descriptor/options/-", "/external_bindings/1/descriptor/options/0")],
     "/external_bindings/1/descriptor/options/1/id"),
]
# fmt: on


def schema_errors(doc: dict) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in SCHEMA.iter_errors(doc)]


# -- tests ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("build", [minimal_valid, rich_valid], ids=["minimal", "rich"])
def test_valid_documents_have_no_problems(build: Base) -> None:
    doc = build()
    assert schema_errors(doc) == []
    assert check_semantics(doc) == []


@pytest.mark.parametrize(
    ("rule", "base", "ops", "path"),
    [pytest.param(f"ASIF-R{n:03d}", base, ops, path, id=f"R{n:03d}-{name}") for n, name, base, ops, path in CASES],
)
def test_rule_catches_its_violation(rule: str, base: Base, ops: list[Op], path: str) -> None:
    doc = apply(base(), ops)
    assert schema_errors(doc) == [], "the edit must keep the document schema-valid"
    problems = check_semantics(doc)
    found = {(p.rule, p.path) for p in problems}
    assert (rule, path) in found, "\n".join(p.render() for p in problems)
    problem = next(p for p in problems if (p.rule, p.path) == (rule, path))
    assert problem.message and problem.severity == ("warning" if rule == "ASIF-R009" else "error")


def test_every_rule_has_a_violation_case() -> None:
    assert set(RULES) == {f"ASIF-R{n:03d}" for n, *_ in CASES}


def test_every_rule_of_section_5_is_checked_or_listed_as_skipped() -> None:
    skipped = {int(m) for m in re.findall(r"^(\d+) {2,}\S", semantic.__doc__ or "", re.MULTILINE)}
    checked = {int(rule[len("ASIF-R") :]) for rule in RULES}
    assert not skipped & checked
    assert skipped | checked == set(range(1, 86))


def test_all_problems_are_reported_not_only_the_first() -> None:
    doc = apply(
        rich_valid(),
        [
            ("replace", ev("e-user", "actor_id"), GHOST),
            ("replace", ev("e-call1", "data", "tool_id"), GHOST),
            ("replace", res("notes", "sha256"), "0" * 64),
        ],
    )
    rules = {p.rule for p in check_semantics(doc)}
    assert {"ASIF-R014", "ASIF-R033", "ASIF-R075"} <= rules


def test_shared_branch_prefix_reports_once() -> None:
    doc = apply(
        rich_valid(),
        [
            ("replace", ev("e-task1", "data", "status"), "completed"),
            ("replace", ev("e-task1b", "data", "status"), "pending"),
        ],
    )
    doc["branches"][1]["event_ids"] = list(ORDER[: E["e-task1b"] + 1])
    doc["branches"][1]["head_event_id"] = "e-task1b"
    doc["checkpoints"][1]["at_event_id"] = "e-task1b"
    problems = [p for p in check_semantics(doc) if p.rule == "ASIF-R054"]
    assert len(problems) == 1


def test_checkpoint_before_a_correction_judges_its_own_prefix() -> None:
    """At e-dec1 the resolution still counts; the whole branch replaces it later with e-dec1b."""
    doc = rich_valid()
    mid = checkpoint(
        "cp-mid",
        "main",
        "e-dec1",
        knowledge="observed",
        open_calls=[{"call_id": "c-ext", "state": "outcome_unknown"}],
        open_decisions=[{"request_id": "r-ext", "state": "outcome_unknown"}],
        tasks=[{"task_id": "t1", "revision": 1}, {"task_id": "t2", "revision": 1}],
    )
    doc["checkpoints"].append(mid)
    assert check_semantics(doc) == []
    mid["open_decisions"].append({"request_id": "r1", "state": "pending"})
    problems = [(p.rule, p.path) for p in check_semantics(doc)]
    assert problems == [("ASIF-R063", "/checkpoints/2/open_decisions/1/request_id")]


def test_empty_branch_with_null_head_is_valid() -> None:
    doc = minimal_valid()
    doc["branches"].append({"id": "empty", "event_ids": [], "head_event_id": None})
    doc["checkpoints"].append(checkpoint("cp-empty", "empty", None))
    assert check_semantics(doc) == []


def test_problem_paths_resolve_in_the_document() -> None:
    """Every reported pointer names a real location (or a member's parent when the member is missing)."""
    for n, _name, base, ops, _path in CASES:
        doc = apply(base(), ops)
        for problem in check_semantics(doc):
            parent, key = _walk(doc, problem.path) if problem.path else (None, "")
            if parent is not None:
                assert key in parent if isinstance(parent, dict) else int(key) < len(parent), (n, problem.render())


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_public_examples_pass_schema_and_semantics(path: Path) -> None:
    doc = json.loads(path.read_bytes())
    assert doc["asif_version"] == "0.4"
    assert schema_errors(doc) == []
    assert check_semantics(doc) == []


def test_corpus_has_examples() -> None:
    assert len(EXAMPLES) >= 10


@pytest.mark.parametrize(
    "extra",
    [{"media_type": "text/plain"}, {"example.lang/1": "en"}],
    ids=["media_type", "namespaced property"],
)
def test_result_text_stream_binds_the_text_not_the_whole_part(extra: dict) -> None:
    """STREAMING.md binds the stream to the result's text; other members of the text part (its
    media_type, an extension property) are not streamed and do not make the binding fail. The
    reference validator compares the whole part object and rejects these; docs/validator.md
    records the difference."""
    doc = rich_valid()
    doc["events"][E["e-res1b"]]["data"]["parts"][0].update(extra)
    assert schema_errors(doc) == []
    assert check_semantics(doc) == []
    doc["events"][E["e-res1b"]]["data"]["parts"][0]["text"] = "DONE"
    assert ("ASIF-R083", "/streams/2/segments") in {(p.rule, p.path) for p in check_semantics(doc)}


def test_validator_doc_gives_every_rule_a_status() -> None:
    """docs/validator.md lists each rule id once, with a status, and no rule the code lacks."""
    from asif_convert._validation.semantic import PROFILE_RULES, WARNING_RULES

    doc = (ROOT / "docs" / "validator.md").read_text("utf-8")
    listed = re.findall(r"^\| (ASIF-[RCW]\d{3}) \| ([^|]+) \|", doc, re.MULTILINE)
    ids = [rule for rule, _ in listed]
    assert len(ids) == len(set(ids))
    expected = {f"ASIF-R{n:03d}" for n in range(1, 86)} | set(PROFILE_RULES) | set(WARNING_RULES)
    assert set(ids) == expected
    implemented = {rule for rule, status in listed if status.startswith("implemented")}
    assert implemented == set(RULES) | set(PROFILE_RULES) | set(WARNING_RULES)


_SEQUENCE_VALUES = st.one_of(st.integers(-3, 12), st.integers(-3, 12).map(float), st.booleans(), st.none(),
                             st.just("7"), st.just(2.5), st.just(-0.0))


@given(st.lists(st.one_of(_SEQUENCE_VALUES.map(lambda s: {"id": "e", "sequence": s}), st.just({"id": "e"})),
                max_size=12))
def test_ascending_sequences_take_the_short_way_to_the_same_verdict(events: list[dict[str, Any]]) -> None:
    """Strictly ascending sequences are accepted without the map of every sequence; whatever
    the values (whole floats count, true does not, null and strings are skipped), the short way
    and the event-by-event rules report the same problems."""
    from asif_convert._validation.semantic import events as rules
    from asif_convert._validation.semantic.index import Index, Report

    for k, event in enumerate(events):
        event["id"] = f"e{k}"
    ix = Index({"events": events})
    short, general = Report(), Report()
    rules.sequences(ix, short)
    rules.sequence_problems(ix, general)
    assert short.problems() == general.problems()
