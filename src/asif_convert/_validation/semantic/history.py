"""Selected-history semantics: one ordered walk per branch, and checkpoint state at its boundary.

A branch's ``event_ids`` is its selected history. Events superseded by another event of the
same branch are skipped, except tool calls: their amendments are folded in place, because
removing the original version could orphan a result recorded before the amendment was captured.

Checkpoints are evaluated during the same walk when they sit at a position. The one exception is
a checkpoint whose prefix contains an event superseded only later in the branch: in the prefix
that event is still effective, so that checkpoint gets its own prefix walk (rare in practice).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from typing import Any

import msgspec

from asif_convert._errors import pointer
from asif_convert._validation.semantic.index import Index, Report, as_dict, as_list, is_local, quote, whole

TERMINAL_EXECUTION = frozenset({"completed", "failed", "cancelled", "interrupted"})
FINISHED_TASK = frozenset({"completed", "failed", "cancelled", "superseded"})
ACTIVE_TASK = frozenset({"proposed", "pending", "in_progress"})
_NEVER = float("inf")


# Records of this module are msgspec Structs, not dataclasses: a dataclass takes about half a
# millisecond to create at import (its methods are generated and compiled), a Struct a hundredth.
class State(msgspec.Struct):
    """What a selected history has established so far."""

    calls: dict[str, str | None]  # call_id -> selected local version's event id (None: external binding)
    requests: dict[str, dict[str, Any]]  # request_id -> request data or external descriptor
    open_calls: set[str]
    open_requests: set[str]
    closed: set[str] = msgspec.field(default_factory=set)
    resolved: set[str] = msgspec.field(default_factory=set)
    last_index: dict[str, int] = msgspec.field(default_factory=dict)
    tasks: dict[str, dict[str, Any]] = msgspec.field(default_factory=dict)
    executions: dict[str, Any] = msgspec.field(default_factory=dict)

    @classmethod
    def initial(cls, ix: Index) -> State:
        # External bindings stand in for invocations and requests outside the included history.
        return cls(
            calls=dict.fromkeys(ix.ext_calls),
            requests=dict(ix.ext_requests),
            open_calls=set(ix.ext_calls),
            open_requests=set(ix.ext_requests),
        )


class Walk:
    """Applies the events of one branch, in order, to a State and reports what breaks."""

    def __init__(self, ix: Index, report: Report, branch_id: Any) -> None:
        self.ix, self.report, self.branch = ix, report, branch_id
        self.state = State.initial(ix)
        self.partial_tasks = ix.coverage.get("tasks") == "partial"

    def apply(self, i: int, event: dict[str, Any], kind: str) -> None:
        _HANDLERS[kind](self, i, event, as_dict(event.get("data")))

    def add(self, rule: int, i: int, where: tuple[str, ...], message: str) -> None:
        self.report.add(rule, pointer("events", i, *where), f"in branch '{self.branch}', {message}")

    def tool_call(self, i: int, event: dict, data: dict) -> None:
        call_id, eid, state = data.get("call_id"), event.get("id"), self.state
        if not isinstance(call_id, str):
            return
        if call_id in state.calls:
            selected, ref = state.calls[call_id], event.get("supersedes")
            if selected is None:
                message = (
                    f"tool_call '{eid}' selects call '{call_id}', which an external binding already names; "
                    "amend it only with its authentic predecessor"
                )
                self.add(39, i, ("data", "call_id"), message)
            elif not (is_local(ref) and ref.get("event_id") == selected):
                message = (
                    f"tool_call '{eid}' is a version of call '{call_id}' but does not directly supersede "
                    f"the version selected before it, '{selected}'"
                )
                self.add(39, i, ("supersedes",) if ref is not None else ("data", "call_id"), message)
        else:
            state.open_calls.add(call_id)
        state.calls[call_id] = eid

    def tool_result(self, i: int, event: dict, data: dict) -> None:
        call_id, eid, state = data.get("call_id"), event.get("id"), self.state
        if call_id not in state.calls:
            self.add(40, i, ("data", "call_id"), f"tool_result '{eid}' comes before any call '{call_id}'")
            return
        if call_id in state.closed:
            message = f"tool_result '{eid}' follows the terminal result of call '{call_id}'"
            self.add(42, i, ("data", "call_id"), message)
            return
        index, last = whole(data.get("result_index")), state.last_index.get(call_id)
        if index is not None:
            if last is not None and index <= last:
                message = f"tool_result '{eid}' has result_index {index}, not above {last} of call '{call_id}'"
                self.add(41, i, ("data", "result_index"), message)
            else:
                state.last_index[call_id] = index
        if data.get("terminal") is True:
            state.closed.add(call_id)
            state.open_calls.discard(call_id)

    def decision_request(self, i: int, event: dict, data: dict) -> None:
        request_id, eid, state = data.get("request_id"), event.get("id"), self.state
        if isinstance(request_id, str) and request_id not in state.requests:
            state.requests[request_id] = data  # a repeated request_id is rule 45's, document-wide
            state.open_requests.add(request_id)
        if "call_id" in data and data["call_id"] not in state.calls:
            message = f"decision_request '{eid}' concerns call '{data['call_id']}', which is not selected before it"
            self.add(49, i, ("data", "call_id"), message)
        if "task_id" in data:
            task = state.tasks.get(data["task_id"])
            current = None if task is None else task.get("revision")
            if task is None or current != data.get("task_revision"):
                message = (
                    f"decision_request '{eid}' concerns revision {data.get('task_revision')} of task "
                    f"'{data['task_id']}', but {_selected(current)}"
                )
                self.add(49, i, ("data", "task_revision"), message)

    def decision_resolution(self, i: int, event: dict, data: dict) -> None:
        request_id, eid, state = data.get("request_id"), event.get("id"), self.state
        if request_id not in state.requests:
            message = f"decision_resolution '{eid}' comes before its request '{request_id}'"
            self.add(46, i, ("data", "request_id"), message)
        elif request_id in state.resolved:
            message = (
                f"decision_resolution '{eid}' resolves request '{request_id}' a second time; "
                "correct the first resolution with supersedes instead"
            )
            self.add(47, i, ("data", "request_id"), message)
        else:
            state.resolved.add(request_id)
            state.open_requests.discard(request_id)

    def task_update(self, i: int, event: dict, data: dict) -> None:
        task_id, eid, state = data.get("task_id"), event.get("id"), self.state
        if not isinstance(task_id, str):
            return
        prior = state.tasks.get(task_id)
        revision, status = data.get("revision"), data.get("status")
        if prior is not None:
            before = prior.get("revision")
            if data.get("previous_revision") != before or not _greater(revision, before):
                where = ("data", "previous_revision") if "previous_revision" in data else ("data",)
                message = (
                    f"task_update '{eid}' (revision {revision}) must name the selected revision {before} "
                    f"of task '{task_id}' as previous_revision and exceed it"
                )
                self.add(52, i, where, message)
            if prior.get("status") in FINISHED_TASK and status in ACTIVE_TASK and not data.get("reopen_reason"):
                message = (
                    f"task_update '{eid}' reopens {prior.get('status')} task '{task_id}' as {status} "
                    "without a reopen_reason"
                )
                self.add(54, i, ("data", "status"), message)
        elif "previous_revision" in data and not self.partial_tasks:
            message = (
                f"task_update '{eid}' is the first selected update of task '{task_id}' but names "
                f"previous_revision {data['previous_revision']}; declare tasks coverage partial"
            )
            self.add(53, i, ("data", "previous_revision"), message)
        state.tasks[task_id] = data
        dependencies = data.get("dependencies")
        # Only changed outgoing edges can close a cycle, so unchanged lists need no search.
        if dependencies and (prior is None or prior.get("dependencies") != dependencies):
            if self._reaches(dependencies, task_id):
                message = f"task_update '{eid}' makes task '{task_id}' depend on itself through its dependencies"
                self.add(56, i, ("data", "dependencies"), message)

    def _reaches(self, start: list[Any], target: str) -> bool:
        pending, seen = list(start), set()
        while pending:
            task = pending.pop()
            if task == target:
                return True
            if isinstance(task, str) and task not in seen:
                seen.add(task)
                pending.extend(as_list(self.state.tasks.get(task, {}).get("dependencies")))
        return False

    def execution_transition(self, i: int, event: dict, data: dict) -> None:
        execution_id, state = data.get("execution_id"), self.state
        if not isinstance(execution_id, str):
            return
        before = state.executions.get(execution_id)
        if before in TERMINAL_EXECUTION:
            message = (
                f"execution_transition '{event.get('id')}' moves execution '{execution_id}' on after its "
                f"terminal status '{before}'"
            )
            self.add(19, i, ("data", "status"), message)
        state.executions[execution_id] = data.get("status")


def _selected(revision: Any) -> str:
    return "no revision of it is selected" if revision is None else f"the selected revision is {revision}"


def _greater(a: Any, b: Any) -> bool:
    return whole(a) is not None and whole(b) is not None and a > b


_HANDLERS = {
    "tool_call": Walk.tool_call,
    "tool_result": Walk.tool_result,
    "decision_request": Walk.decision_request,
    "decision_resolution": Walk.decision_resolution,
    "task_update": Walk.task_update,
    "execution_transition": Walk.execution_transition,
}


def check(ix: Index, report: Report) -> None:
    at_positions = _checkpoints_by_branch(ix)
    for b, branch in enumerate(as_list(ix.doc.get("branches"))):
        bid = as_dict(branch).get("id")
        # Checkpoints belong to the first branch record with their id (duplicates are rule 3's).
        checkpoints = at_positions.get(bid, []) if ix.positions["branches"].get(bid) == b else []
        walk_branch(ix, report, as_dict(branch), checkpoints)


def _checkpoints_by_branch(ix: Index) -> dict[Any, list[tuple[int, int]]]:
    """branch id -> [(checkpoint index, position of its boundary; -1 for an empty branch)]."""
    found: dict[Any, list[tuple[int, int]]] = {}
    for c, checkpoint in enumerate(as_list(ix.doc.get("checkpoints"))):
        checkpoint = as_dict(checkpoint)
        bid, at = checkpoint.get("branch_id"), checkpoint.get("at_event_id")
        if not ix.has("branches", bid):
            continue  # rule 61
        positions = ix.branch_positions(bid)
        if at is None and not positions:
            found.setdefault(bid, []).append((c, -1))
        elif at in positions:
            found.setdefault(bid, []).append((c, positions[at]))
    return found


def walk_branch(ix: Index, report: Report, branch: dict, checkpoints: list[tuple[int, int]]) -> None:
    bid = branch.get("id")
    steps = _Steps(ix, as_list(branch.get("event_ids")))
    superseded_at: dict[Any, int] = {}  # event id -> first branch position of an event superseding it
    for k, i in steps:
        ref = ix.events[i].get("supersedes")
        if is_local(ref):
            superseded_at.setdefault(ref.get("event_id"), k)

    clean, prefix_only = _split_checkpoints(ix, steps, superseded_at, checkpoints)
    walk = Walk(ix, report, bid)
    for c in clean.get(-1, []):
        evaluate_checkpoint(ix, report, walk.state, c)
    events = ix.events
    for k, i in steps:
        event = events[i]
        kind = event.get("kind")
        # Superseded events leave the selection; call versions fold in place (module docstring).
        if kind in _HANDLERS and (kind == "tool_call" or event.get("id") not in superseded_at):
            walk.apply(i, event, kind)
        if k in clean:
            for c in clean[k]:
                evaluate_checkpoint(ix, report, walk.state, c)
    for c, limit in prefix_only:
        walk = Walk(ix, report, bid)
        for k, i in steps:
            if k > limit:
                break
            event = events[i]
            kind = event.get("kind")
            if kind in _HANDLERS and (kind == "tool_call" or superseded_at.get(event.get("id"), _NEVER) > limit):
                walk.apply(i, event, kind)
        evaluate_checkpoint(ix, report, walk.state, c)


class _Steps:
    """(branch position, events index) of each resolved, first selection of a branch, kept as
    two arrays of machine integers: a record-dense session's main branch selects hundreds of
    thousands of events, and a tuple of two ints apiece (with a set of the ids seen) held
    about 40 MB for a 100 MB session, a tenth of its values, at the validation's peak."""

    def __init__(self, ix: Index, event_ids: list[Any]) -> None:
        self.positions, self.indices = array("q"), array("q")
        seen = bytearray(len(ix.events))  # by events index: an id resolves to one index
        for k, eid in enumerate(event_ids):
            i = ix.event_pos.get(eid) if isinstance(eid, str) else None
            if i is not None and not seen[i]:  # unresolved and repeated ids are rule 58's
                seen[i] = 1
                self.positions.append(k)
                self.indices.append(i)

    def __iter__(self) -> Iterator[tuple[int, int]]:
        return zip(self.positions, self.indices, strict=True)


def _split_checkpoints(
    ix: Index, steps: _Steps, superseded_at: dict[Any, int], checkpoints: list[tuple[int, int]]
) -> tuple[dict[int, list[int]], list[tuple[int, int]]]:
    """Checkpoints the full walk can evaluate (by position), and those needing a prefix walk.

    A boundary k needs its own walk when an event at position p <= k is superseded only at a
    position s > k: the full walk skips that event, the prefix must not.
    """
    opened: dict[int, int] = {}  # difference array over positions of [p, s) intervals
    if checkpoints and superseded_at:
        for k, i in steps:
            s = superseded_at.get(ix.events[i].get("id"))
            if s is not None and s > k and ix.events[i].get("kind") != "tool_call":
                opened[k] = opened.get(k, 0) + 1
                opened[s] = opened.get(s, 0) - 1
    dirty: set[int] = set()
    if opened:
        depth, changes = 0, sorted(opened.items())
        boundaries = sorted({k for _, k in checkpoints})
        j = 0
        for k in boundaries:
            while j < len(changes) and changes[j][0] <= k:
                depth += changes[j][1]
                j += 1
            if depth > 0:
                dirty.add(k)
    clean: dict[int, list[int]] = {}
    prefix_only: list[tuple[int, int]] = []
    for c, k in checkpoints:
        if k in dirty:
            prefix_only.append((c, k))
        else:
            clean.setdefault(k, []).append(c)
    return clean, prefix_only


def evaluate_checkpoint(ix: Index, report: Report, state: State, c: int) -> None:
    checkpoint = as_dict(ix.doc["checkpoints"][c])
    cid = checkpoint.get("id")
    for field_name, key, open_now, what in (
        ("open_calls", "call_id", state.open_calls, "call"),
        ("open_decisions", "request_id", state.open_requests, "decision request"),
    ):
        listed = set()
        for j, entry in enumerate(as_list(checkpoint.get(field_name))):
            value = as_dict(entry).get(key)
            listed.add(value)
            if value not in open_now:
                report.add(
                    63,
                    pointer("checkpoints", c, field_name, j, key),
                    f"checkpoint '{cid}' lists {what} '{value}' as open, but at its boundary it is "
                    "not open (never started, or already answered)",
                )
        scope = "tools" if what == "call" else "decisions"
        missing = open_now - listed
        if checkpoint.get("knowledge") != "unknown" and ix.coverage.get(scope) == "complete" and missing:
            report.add(
                64,
                pointer("checkpoints", c, field_name),
                f"checkpoint '{cid}' knows its state and {scope} coverage is complete, so "
                f"{field_name} must also list the open {what} {quote(missing)}",
            )
    for j, entry in enumerate(as_list(checkpoint.get("tasks"))):
        entry = as_dict(entry)
        task = state.tasks.get(entry.get("task_id"))
        current = None if task is None else task.get("revision")
        if task is None or current != entry.get("revision"):
            report.add(
                63,
                pointer("checkpoints", c, "tasks", j, "revision"),
                f"checkpoint '{cid}' lists task '{entry.get('task_id')}' at revision "
                f"{entry.get('revision')}, but at its boundary {_selected(current)}",
            )
