"""The portable-continuation profile's single-document rules (ASIF-Cnnn).

The public continuation examples pass; each violation case edits one of them (or the Git and
delta workspaces built here on top of one) and must be reported with exactly its rule id and
JSON pointer, while the edit keeps the document schema-valid. The cases follow the kinds of
source documents the reference validator rejects: stale contexts, incomplete accounting,
missing checkpoints, workspaces and dependencies, cycles, unsafe paths, unbound open calls.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable
from typing import Any

import pytest

from asif_convert import validate
from asif_convert._validation.semantic import PROFILE_RULES, check_semantics

from .conftest import CORPUS
from .test_semantic_rules import schema_errors

EXAMPLES = {
    name: json.loads((CORPUS / "asif" / f"continuation-{name}.session.json").read_bytes())
    for name in ("another-computer", "pending-remote-operation", "action-specific", "another-agent")
}


def example(name: str) -> Callable[[], dict[str, Any]]:
    return lambda: copy.deepcopy(EXAMPLES[name])


COMPUTER = example("another-computer")
PENDING = example("pending-remote-operation")
ACTIONS = example("action-specific")


def with_git() -> dict[str, Any]:
    """another-computer plus a Git-backed workspace of a second root and a delta on top of the first."""
    doc = COMPUTER()
    profile = doc["continuation"]
    csv = next(r for r in doc["resources"] if r["id"] == "source-csv")
    raw = csv["text"].encode("utf-8")
    blob = hashlib.sha1(b"blob %d\0" % len(raw) + raw).hexdigest()
    profile["dependencies"].append(
        {
            "id": "lfs",
            "kind": "executable",
            "identity": "git-lfs",
            "accepted_versions": [],
            "platform": {"os": [], "architectures": []},
            "required_for": ["continue"],
            "depends_on": [],
            "resource_ids": [],
            "binding": {"kind": "command", "reference": "git-lfs"},
        }
    )
    profile["workspaces"].append(
        {
            "id": "repo-head",
            "environment_id": "project-env",
            "root_id": "repo",
            "at_event_id": "e4",
            "source_root": "/src/repo",
            "mode": "refs",
            "selection": {"include": ["data/"], "exclude": ["build/"], "complete_for_selection": True},
            "entries": [
                {"path": "data", "kind": "directory", "mode": 493},
                {"path": "data/inventory.csv", "kind": "file", "mode": 420, "resource_id": "source-csv"},
            ],
            "deletions": [],
            "base_snapshot_id": None,
            "git": {
                "object_format": "sha1",
                "head": "a" * 40,
                "branch": "main",
                "bundle_resource_ids": [],
                "prerequisites": [{"object_id": "b" * 40, "availability": "unavailable"}],
                "index_entries": [
                    {
                        "path": "data/inventory.csv",
                        "stage": 0,
                        "mode": "100644",
                        "resource_id": "source-csv",
                        "object_id": blob,
                    }
                ],
                "submodules": [],
                "lfs_dependency_ids": ["lfs"],
            },
        }
    )
    profile["workspaces"].append(
        {
            "id": "project-later",
            "environment_id": "project-env",
            "root_id": "project",
            "at_event_id": "e4",
            "source_root": "/Users/example/project",
            "mode": "delta",
            "selection": {"include": ["summary.md"], "exclude": [".cache/"], "complete_for_selection": True},
            "entries": [],
            "deletions": ["summary.md"],
            "base_snapshot_id": "workspace-head",
        }
    )
    plan = profile["plans"][0]
    plan["workspace_ids"].append("repo-head")
    plan["dependency_ids"].append("lfs")
    return doc


Op = Callable[[dict[str, Any]], Any]
P = "/continuation"
PLAN = f"{P}/plans/0"


def _plan(d: dict) -> dict:
    return d["continuation"]["plans"][0]


def _input(d: dict, kind: str) -> dict:
    return next(i for i in d["contexts"][0]["inputs"] if i["kind"] == kind)


# (rule, case name, base document, edit, expected JSON pointer)
# fmt: off
CASES: list[tuple[int, str, Callable[[], dict], Op, str]] = [
    (1, "duplicate dependency", COMPUTER,
     lambda d: d["continuation"]["dependencies"].append(copy.deepcopy(d["continuation"]["dependencies"][0])),
     f"{P}/dependencies/3/id"),
    (1, "duplicate configuration binding", COMPUTER,
     lambda d: d["continuation"]["configuration_bindings"].append(
         copy.deepcopy(d["continuation"]["configuration_bindings"][0])),
     f"{P}/configuration_bindings/1/configuration_id"),
    (2, "missing skill resource", COMPUTER,
     lambda d: d["continuation"]["dependencies"][2]["resource_ids"].append("font-not-captured"),
     f"{P}/dependencies/2/resource_ids/1"),
    (2, "missing prerequisite", COMPUTER,
     lambda d: d["continuation"]["dependencies"][2]["depends_on"].append("ghost"),
     f"{P}/dependencies/2/depends_on/1"),
    (2, "missing dependency tool", COMPUTER,
     lambda d: d["continuation"]["dependencies"][1].update(tool_id="ghost"), f"{P}/dependencies/1/tool_id"),
    (3, "dependency cycle", COMPUTER,
     lambda d: d["continuation"]["dependencies"][1]["depends_on"].append("summary-skill"),
     f"{P}/dependencies/1/depends_on"),
    (4, "missing workspace environment", COMPUTER,
     lambda d: d["continuation"]["workspaces"][0].update(environment_id="ghost"),
     f"{P}/workspaces/0/environment_id"),
    (4, "missing base snapshot", with_git,
     lambda d: d["continuation"]["workspaces"][2].update(base_snapshot_id="ghost"),
     f"{P}/workspaces/2/base_snapshot_id"),
    (4, "base snapshot of another root", with_git,
     lambda d: d["continuation"]["workspaces"][2].update(base_snapshot_id="repo-head"),
     f"{P}/workspaces/2/base_snapshot_id"),
    (4, "base snapshot cycle", with_git,
     lambda d: d["continuation"]["workspaces"][0].update(mode="delta", base_snapshot_id="project-later"),
     f"{P}/workspaces/2/base_snapshot_id"),
    (5, "workspace traversal", COMPUTER,
     lambda d: d["continuation"]["workspaces"][0]["entries"][0].update(path="../file"),
     f"{P}/workspaces/0/entries/0/path"),
    (5, "workspace path twice", COMPUTER,
     lambda d: d["continuation"]["workspaces"][0]["entries"].append(
         copy.deepcopy(d["continuation"]["workspaces"][0]["entries"][0])),
     f"{P}/workspaces/0/entries/3/path"),
    (5, "file resource missing", COMPUTER,
     lambda d: d["continuation"]["workspaces"][0]["entries"][0].update(resource_id="ghost"),
     f"{P}/workspaces/0/entries/0/resource_id"),
    (5, "file under a file", COMPUTER,
     lambda d: d["continuation"]["workspaces"][0]["entries"].append(
         {"path": "summary.md/inner", "kind": "file", "mode": 420, "resource_id": "report"}),
     f"{P}/workspaces/0/entries"),
    (5, "deletion absent from base", with_git,
     lambda d: d["continuation"]["workspaces"][2].update(deletions=["nothing-here"]),
     f"{P}/workspaces/2/deletions/0"),
    (5, "deleting an excluded path", with_git,
     lambda d: d["continuation"]["workspaces"][2].update(deletions=[".cache/x"]),
     f"{P}/workspaces/2/deletions/0"),
    (6, "Git object format", with_git,
     lambda d: d["continuation"]["workspaces"][1]["git"].update(object_format="md5"),
     f"{P}/workspaces/1/git/object_format"),
    (6, "Git object id", with_git,
     lambda d: d["continuation"]["workspaces"][1]["git"].update(head="A" * 40), f"{P}/workspaces/1/git/head"),
    (6, "Git blob mismatch", with_git,
     lambda d: d["continuation"]["workspaces"][1]["git"]["index_entries"][0].update(object_id="c" * 40),
     f"{P}/workspaces/1/git/index_entries/0/object_id"),
    (6, "Git index stage twice", with_git,
     lambda d: d["continuation"]["workspaces"][1]["git"]["index_entries"].append(
         copy.deepcopy(d["continuation"]["workspaces"][1]["git"]["index_entries"][0])),
     f"{P}/workspaces/1/git/index_entries/1/stage"),
    (6, "Git index mode", with_git,
     lambda d: d["continuation"]["workspaces"][1]["git"]["index_entries"][0].update(mode="100600"),
     f"{P}/workspaces/1/git/index_entries/0/mode"),
    (6, "embedded prerequisite without resource", with_git,
     lambda d: d["continuation"]["workspaces"][1]["git"]["prerequisites"][0].update(availability="embedded"),
     f"{P}/workspaces/1/git/prerequisites/0"),
    (6, "missing LFS dependency", with_git,
     lambda d: d["continuation"]["workspaces"][1]["git"].update(lfs_dependency_ids=["ghost"]),
     f"{P}/workspaces/1/git/lfs_dependency_ids/0"),
    (7, "unsafe operation restart", PENDING,
     lambda d: d["continuation"]["operations"][0]["recovery"].update(strategy="restart"),
     f"{P}/operations/0/recovery/strategy"),
    (7, "missing recovery handler", PENDING,
     lambda d: d["continuation"]["operations"][0]["recovery"].update(handler_dependency_id="ghost"),
     f"{P}/operations/0/recovery/handler_dependency_id"),
    (7, "missing operation evidence", PENDING,
     lambda d: d["continuation"]["operations"][0]["evidence_resource_ids"].append("ghost"),
     f"{P}/operations/0/evidence_resource_ids/0"),
    (8, "missing checkpoint", COMPUTER, lambda d: _plan(d).update(checkpoint_id="ghost"), f"{PLAN}/checkpoint_id"),
    (8, "wrong checkpoint configuration", COMPUTER,
     lambda d: d["checkpoints"][0].update(configuration_id=None), f"{PLAN}/configuration_id"),
    (9, "stale context", COMPUTER,
     lambda d: (d["contexts"][0].update(at_event_id="e3"), d["contexts"][0]["inputs"].pop(),
                d["contexts"][0]["inputs"][-1]["source_events"].clear()),
     f"{PLAN}/context_id"),
    (9, "model request context", COMPUTER, lambda d: d["contexts"][0].update(purpose="model_request"),
     f"{PLAN}/context_id"),
    (10, "missing selected workspace", COMPUTER, lambda d: _plan(d)["workspace_ids"].append("ghost"),
     f"{PLAN}/workspace_ids/1"),
    (10, "missing selected dependency", COMPUTER, lambda d: _plan(d)["dependency_ids"].append("ghost"),
     f"{PLAN}/dependency_ids/3"),
    (10, "missing native import", COMPUTER,
     lambda d: (_plan(d).update(native_import_id="ghost"), _plan(d)["next_action"].update(native_import_id="ghost")),
     f"{PLAN}/native_import_id"),
    (11, "incomplete dependency closure", COMPUTER, lambda d: _plan(d)["dependency_ids"].remove("summary-tool"),
     f"{PLAN}/dependency_ids/1"),
    (11, "unselected Git dependency", with_git, lambda d: _plan(d)["dependency_ids"].remove("lfs"),
     f"{PLAN}/workspace_ids/1"),
    (11, "unselected recovery handler", PENDING,
     lambda d: (_plan(d).update(dependency_ids=[]), d["continuation"]["service_bindings"][0].update(dependency_ids=[])),
     f"{PLAN}/operation_ids/0"),
    (12, "mixed workspace boundary", COMPUTER,
     lambda d: d["continuation"]["workspaces"][0].update(at_event_id="e1"), f"{PLAN}/workspace_ids/0"),
    (12, "two states of one root", with_git, lambda d: _plan(d)["workspace_ids"].append("project-later"),
     f"{PLAN}/workspace_ids/2"),
    (13, "missing path selector", COMPUTER,
     lambda d: _plan(d)["path_references"][0].update(json_pointer="/absent"),
     f"{PLAN}/path_references/0/json_pointer"),
    (13, "path mapping entity missing", COMPUTER,
     lambda d: _plan(d)["path_references"][0].update(entity_id="ghost"), f"{PLAN}/path_references/0/entity_id"),
    (13, "cwd root not selected", COMPUTER, lambda d: _plan(d)["cwd"].update(root_id="elsewhere"),
     f"{PLAN}/cwd/root_id"),
    (13, "cwd escapes its root", COMPUTER, lambda d: _plan(d)["cwd"].update(relative_path="../up"),
     f"{PLAN}/cwd/relative_path"),
    (14, "incomplete context accounting", COMPUTER, lambda d: _plan(d)["context_accounting"].pop(),
     f"{PLAN}/context_accounting"),
    (14, "event accounted twice", COMPUTER,
     lambda d: _plan(d)["context_accounting"].append(copy.deepcopy(_plan(d)["context_accounting"][0])),
     f"{PLAN}/context_accounting/4/event_id"),
    (14, "accounted input missing", COMPUTER,
     lambda d: _plan(d)["context_accounting"][0].update(input_ids=["ghost"]),
     f"{PLAN}/context_accounting/0/input_ids/0"),
    (15, "changed tool result", COMPUTER, lambda d: _input(d, "tool_result").update(result_index=2),
     "/contexts/0/inputs/3/result_index"),
    (15, "tool correlation changed", COMPUTER,
     lambda d: _input(d, "tool_call")["source_events"][0].update(event_id="e3"),
     "/contexts/0/inputs/2/source_events/0/event_id"),
    (16, "unbound open call", PENDING, lambda d: _plan(d).update(operation_ids=[]), f"{PLAN}/operation_ids"),
    (16, "open call the context closed", COMPUTER,
     lambda d: d["checkpoints"][0]["open_calls"].append({"call_id": "call-1", "state": "outcome_unknown"}),
     f"{PLAN}/checkpoint_id"),
    (16, "operation call absent from context", PENDING,
     lambda d: d["continuation"]["operations"][0].update(call_id="call-elsewhere"), f"{PLAN}/operation_ids/0"),
    (17, "next operation not selected", PENDING,
     lambda d: _plan(d)["next_action"].update(operation_id="other"), f"{PLAN}/next_action/operation_id"),
    (17, "next decision not pending", ACTIONS,
     lambda d: d["continuation"]["plans"][1]["next_action"].update(request_id="ghost"),
     f"{P}/plans/1/next_action/request_id"),
    (17, "next native import mismatch", COMPUTER, lambda d: _plan(d).update(native_import_id=None),
     f"{PLAN}/next_action/native_import_id"),
    (18, "missing instruction rule", COMPUTER,
     lambda d: d["continuation"]["configuration_bindings"][0].update(instruction_rules=[]),
     f"{P}/configuration_bindings/0/instruction_rules"),
    (18, "missing policy binding", COMPUTER,
     lambda d: d["continuation"]["configuration_bindings"][0].update(policy_ids=[]),
     f"{P}/configuration_bindings/0/policy_ids"),
    (18, "missing configuration binding", COMPUTER,
     lambda d: d["continuation"]["configuration_bindings"][0].update(configuration_id="other"),
     f"{PLAN}/configuration_id"),
    (18, "instruction root not selected", COMPUTER,
     lambda d: d["continuation"]["configuration_bindings"][0]["instruction_rules"][0]["scope"].update(root_id="x"),
     f"{P}/configuration_bindings/0/instruction_rules/0/scope/root_id"),
    (19, "undeclared secret", PENDING,
     lambda d: d["continuation"]["service_bindings"][0].update(secret_handles=["other-login"]),
     f"{P}/service_bindings/0/secret_handles/0"),
    (20, "missing boundary evidence", COMPUTER,
     lambda d: _plan(d)["boundary"]["evidence_resource_ids"].append("ghost"),
     f"{PLAN}/boundary/evidence_resource_ids/0"),
    (20, "missing native import resource", COMPUTER,
     lambda d: d["continuation"]["native_imports"][0]["resource_ids"].append("ghost"),
     f"{P}/native_imports/0/resource_ids/1"),
    (20, "checkpoint requirement twice", ACTIONS,
     lambda d: d["checkpoints"][0]["requirements"].append(copy.deepcopy(d["checkpoints"][0]["requirements"][0])),
     "/checkpoints/0/requirements/2/id"),
    (20, "environment requirement twice", COMPUTER,
     lambda d: d["environments"][0]["requirements"].extend(
         [{"id": "env-req", "kind": "example.input", "description": "Input.", "required_for": ["continue"],
           "status": "available"}] * 2),
     "/environments/0/requirements/1/id"),
    (20, "requirement secret undeclared", COMPUTER,
     lambda d: d["checkpoints"][0]["requirements"].append(
         {"id": "login", "kind": "example.login", "description": "Sign in.", "required_for": ["continue"],
          "status": "unresolved", "secret_handle": "ghost"}),
     "/checkpoints/0/requirements/0/secret_handle"),
]
# fmt: on


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_public_continuation_examples_pass(name: str) -> None:
    assert check_semantics(copy.deepcopy(EXAMPLES[name])) == []


def test_own_git_and_delta_fixture_passes() -> None:
    doc = with_git()
    assert schema_errors(doc) == []
    assert check_semantics(doc) == []


@pytest.mark.parametrize(
    ("rule", "base", "edit", "path"),
    [pytest.param(f"ASIF-C{n:03d}", base, edit, path, id=f"C{n:03d}-{name}") for n, name, base, edit, path in CASES],
)
def test_profile_rule_catches_its_violation(rule: str, base: Callable[[], dict], edit: Op, path: str) -> None:
    doc = base()
    edit(doc)
    assert schema_errors(doc) == [], "the edit must keep the document schema-valid"
    problems = check_semantics(doc)
    found = {(p.rule, p.path) for p in problems}
    assert (rule, path) in found, "\n".join(p.render() for p in problems)
    problem = next(p for p in problems if (p.rule, p.path) == (rule, path))
    assert problem.severity == "error" and problem.message


def test_every_profile_rule_has_a_violation_case() -> None:
    assert set(PROFILE_RULES) == {f"ASIF-C{n:03d}" for n, *_ in CASES}


def test_a_broken_plan_makes_the_document_invalid_through_validate() -> None:
    doc = COMPUTER()
    _plan(doc)["context_accounting"].pop()
    problems = validate(doc)
    assert [(p.rule, p.severity) for p in problems] == [("ASIF-C014", "error")]
    assert "'e4'" in problems[0].message


def test_unresolved_checkpoint_is_reported_once_not_as_mismatches() -> None:
    doc = COMPUTER()
    _plan(doc).update(checkpoint_id="ghost")
    assert [(p.rule, p.path) for p in check_semantics(doc)] == [("ASIF-C008", f"{PLAN}/checkpoint_id")]


def test_deleting_a_folder_removes_its_subtree_only() -> None:
    doc = with_git()
    base, delta = doc["continuation"]["workspaces"][0], doc["continuation"]["workspaces"][2]
    base["entries"] += [
        {"path": "docs", "kind": "directory", "mode": 493},
        {"path": "docs/a.md", "kind": "file", "mode": 420, "resource_id": "report"},
        {"path": "docs/sub", "kind": "directory", "mode": 493},
        {"path": "docs/sub/b.md", "kind": "file", "mode": 420, "resource_id": "report"},
        {"path": "docs-old.md", "kind": "file", "mode": 420, "resource_id": "report"},
    ]
    delta["deletions"] = ["docs", "docs-old.md"]
    assert check_semantics(doc) == []
    delta["deletions"] = ["docs", "docs/a.md"]  # already gone with its folder
    assert [(p.rule, p.path) for p in check_semantics(doc)] == [("ASIF-C005", f"{P}/workspaces/2/deletions/1")]
    # a file re-added over a deleted folder is a file, so nothing may sit below it
    delta["deletions"] = ["docs"]
    delta["entries"] = [{"path": "docs", "kind": "file", "mode": 420, "resource_id": "report"},
                        {"path": "docs/c.md", "kind": "file", "mode": 420, "resource_id": "report"}]
    assert ("ASIF-C005", f"{P}/workspaces/2/entries") in {(p.rule, p.path) for p in check_semantics(doc)}
