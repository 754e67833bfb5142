"""Referential checks on an agent-continuity export that its (structural) schema cannot make.

Runs on a document that already passed the schema. Every finding is a warning-severity
``Problem``: the export is still convertible (the reader turns each into a loss, and a round trip
reproduces it faithfully), unless ``--strict`` refuses it.
"""

from __future__ import annotations

from typing import Any

from asif_convert._errors import Problem, pointer

# collection -> its id field
ID_FIELDS = {
    "branches": "branch_id",
    "messages": "message_id",
    "events": "event_id",
    "checkpoints": "checkpoint_id",
    "native_states": "state_id",
    "artifacts": "artifact_id",
}

RULES = {
    "CONT-SESSION": "every record's session_id equals session.session_id",
    "CONT-DUPLICATE": "ids are unique within their collection",
    "CONT-BRANCH": "branch_id names a branch listed in branches",
    "CONT-ACTIVE-BRANCH": "session.active_branch_id names a listed branch",
    "CONT-PARENT-BRANCH": "parent_branch_id names another listed branch, or is null",
    "CONT-CHECKPOINT-PARENT": "checkpoint parent_event_id names an event or a message, or is null",
    "CONT-PARENT-CYCLE": "following parent_branch_id from a branch never leads back to it",
}


def referential_problems(doc: dict[str, Any]) -> list[Problem]:
    problems: list[Problem] = []
    sid = doc["session"]["session_id"]
    branches = doc.get("branches")
    branch_ids = {b["branch_id"] for b in branches} if branches is not None else None

    for coll, id_field in ID_FIELDS.items():
        seen: set[str] = set()
        for i, rec in enumerate(doc.get(coll) or ()):
            rid = rec[id_field]
            if rid in seen:
                problems.append(_warning(rule="CONT-DUPLICATE", path=pointer(coll, i, id_field),
                                        message=f"{id_field} {rid!r} is used twice in {coll}"))
            seen.add(rid)
            if rec["session_id"] != sid:
                problems.append(_warning(rule="CONT-SESSION", path=pointer(coll, i, "session_id"),
                                        message=f"session_id {rec['session_id']!r} differs from "
                                                f"session.session_id {sid!r}"))
            if branch_ids is None:
                continue
            bid = rec.get("branch_id")
            if coll != "branches" and bid is not None and bid not in branch_ids:
                problems.append(_warning(rule="CONT-BRANCH", path=pointer(coll, i, "branch_id"),
                                        message=f"branch_id {bid!r} names no branch in branches"))
            parent = rec.get("parent_branch_id")
            if coll == "branches" and parent is not None and (parent not in branch_ids or parent == rid):
                problems.append(_warning(rule="CONT-PARENT-BRANCH", path=pointer(coll, i, "parent_branch_id"),
                                        message=f"parent_branch_id {parent!r} names no other branch in branches"))

    if branches is not None:
        problems += _cycles(branches)

    active = doc["session"]["active_branch_id"]
    if branch_ids is not None and active not in branch_ids:
        problems.append(_warning(rule="CONT-ACTIVE-BRANCH", path=pointer("session", "active_branch_id"),
                                message=f"active_branch_id {active!r} names no branch in branches"))

    item_ids = {m["message_id"] for m in doc["messages"]} | {e["event_id"] for e in doc["events"]}
    for i, cp in enumerate(doc["checkpoints"]):
        parent = cp.get("parent_event_id")
        if parent is not None and parent not in item_ids:
            problems.append(_warning(rule="CONT-CHECKPOINT-PARENT", path=pointer("checkpoints", i, "parent_event_id"),
                                    message=f"parent_event_id {parent!r} names no event or message"))
    return problems


def _cycles(branches: list[dict[str, Any]]) -> list[Problem]:
    """A branch on a cycle of two or more parents (its own parent is CONT-PARENT-BRANCH)."""
    parent: dict[str, str | None] = {}
    for b in branches:
        parent.setdefault(b["branch_id"], b.get("parent_branch_id"))
    on_cycle: set[str] = set()
    done: set[str] = set()
    for start in parent:
        path: dict[str, None] = {}
        bid: str | None = start
        while bid is not None and bid in parent and bid not in done and bid not in path:
            path[bid] = None
            bid = parent[bid]
        if bid is not None and bid in path:  # the walk closed a loop: from bid on, it is the cycle
            loop = list(path)[list(path).index(bid):]
            if len(loop) > 1:
                on_cycle.update(loop)
        done.update(path)
    return [_warning(rule="CONT-PARENT-CYCLE", path=pointer("branches", i, "parent_branch_id"),
                     message=f"branch {b['branch_id']!r} is its own ancestor through parent_branch_id")
            for i, b in enumerate(branches) if b["branch_id"] in on_cycle]


def _warning(*, rule: str, path: str, message: str) -> Problem:
    return Problem(severity="warning", rule=rule, path=path, message=message)
