"""Branch structure and the static side of checkpoints (state at a boundary is checked in history)."""

from __future__ import annotations

from typing import Any

from asif_convert._errors import pointer
from asif_convert._validation.semantic.index import Index, Report, as_dict, as_list, is_local


def check(ix: Index, report: Report) -> None:
    for b, branch in enumerate(as_list(ix.doc.get("branches"))):
        structure(ix, report, b, as_dict(branch))
    head_checkpoints(ix, report)
    for c, checkpoint in enumerate(as_list(ix.doc.get("checkpoints"))):
        checkpoint_links(ix, report, c, as_dict(checkpoint))
        checkpoint_entries(report, c, as_dict(checkpoint))


def structure(ix: Index, report: Report, b: int, branch: dict) -> None:
    bid = branch.get("id")
    event_ids = as_list(branch.get("event_ids"))
    positions: dict[Any, int] = {}
    events = ix.event_pos
    for k, eid in enumerate(event_ids):
        if not (isinstance(eid, str) and eid in events):  # (Index.has, once per selected event)
            report.add(
                58,
                pointer("branches", b, "event_ids", k),
                f"branch '{bid}' selects event '{eid}', which is not in events",
            )
        elif eid in positions:
            report.add(58, pointer("branches", b, "event_ids", k), f"branch '{bid}' selects event '{eid}' twice")
        else:
            positions[eid] = k
    for eid, k in positions.items():
        for ref in as_list(ix.events[events[eid]].get("causes")):
            cause = ref.get("event_id") if is_local(ref) else None
            if positions.get(cause, -1) >= k:
                report.add(
                    23,
                    pointer("branches", b, "event_ids", k),
                    f"branch '{bid}' selects event '{eid}' before its cause '{cause}'; "
                    "a selected cause must come earlier in the branch",
                )
    head = event_ids[-1] if event_ids else None
    if branch.get("head_event_id") != head:
        report.add(
            59,
            pointer("branches", b, "head_event_id"),
            f"branch '{bid}' has head_event_id {_show(branch.get('head_event_id'))} but its last "
            f"event is {_show(head)}",
        )


def _show(value: object) -> str:
    return "null" if value is None else f"'{value}'"


def head_checkpoints(ix: Index, report: Report) -> None:
    at_head: dict[Any, list[int]] = {}
    branches = ix.positions["branches"]
    for c, checkpoint in enumerate(as_list(ix.doc.get("checkpoints"))):
        checkpoint = as_dict(checkpoint)
        bid = checkpoint.get("branch_id")
        if bid in branches and checkpoint.get("at_event_id") == _head(ix, bid):
            at_head.setdefault(bid, []).append(c)
    for bid, b in branches.items():
        found = at_head.get(bid, [])
        if not found:
            report.add(
                60,
                pointer("branches", b),
                f"branch '{bid}' has no checkpoint at its head {_show(_head(ix, bid))}; add one",
            )
        for c in found[1:]:
            report.add(
                60,
                pointer("checkpoints", c, "at_event_id"),
                f"branch '{bid}' already has a head checkpoint (/checkpoints/{found[0]}); keep exactly one",
            )


def _head(ix: Index, bid: str) -> str | None:
    event_ids = as_list(ix.record("branches", bid).get("event_ids"))
    return event_ids[-1] if event_ids else None


def checkpoint_links(ix: Index, report: Report, c: int, checkpoint: dict) -> None:
    cid, bid, at = checkpoint.get("id"), checkpoint.get("branch_id"), checkpoint.get("at_event_id")
    if not ix.has("branches", bid):
        report.add(
            61,
            pointer("checkpoints", c, "branch_id"),
            f"checkpoint '{cid}' names branch '{bid}', which is not in branches",
        )
    else:
        empty = not as_list(ix.record("branches", bid).get("event_ids"))
        if (at is None and not empty) or (at is not None and at not in ix.branch_positions(bid)):
            report.add(
                61,
                pointer("checkpoints", c, "at_event_id"),
                f"checkpoint '{cid}' is at {_show(at)}, which is not an event of branch '{bid}' "
                "(null only for an empty branch)",
            )
    context_id = checkpoint.get("context_id")
    if context_id is not None:
        where = pointer("checkpoints", c, "context_id")
        if not ix.has("contexts", context_id):
            report.add(62, where, f"checkpoint '{cid}' names context '{context_id}', which is not in contexts")
        else:
            context = ix.record("contexts", context_id)
            boundary = context.get("at_event_id")
            if context.get("branch_id") != bid:
                report.add(
                    62,
                    where,
                    f"checkpoint '{cid}' on branch '{bid}' uses context '{context_id}' of branch "
                    f"'{context.get('branch_id')}'",
                )
            elif boundary is not None and not _not_later(ix, boundary, at):
                report.add(
                    62,
                    where,
                    f"checkpoint '{cid}' at {_show(at)} uses context '{context_id}', whose "
                    f"boundary '{boundary}' is later",
                )
    configuration_id = checkpoint.get("configuration_id")
    if configuration_id is not None and not ix.has("configurations", configuration_id):
        report.add(
            62,
            pointer("checkpoints", c, "configuration_id"),
            f"checkpoint '{cid}' names configuration '{configuration_id}', which is not in configurations",
        )


def _not_later(ix: Index, boundary: str, at: str | None) -> bool:
    """True when event ``boundary`` is not later (by sequence) than checkpoint event ``at``."""
    if at is None:
        return False
    mine, theirs = ix.sequence(boundary), ix.sequence(at)
    if mine is None or theirs is None:
        return True  # an unresolved boundary is reported by rules 61 and 66
    return mine <= theirs


def checkpoint_entries(report: Report, c: int, checkpoint: dict) -> None:
    for field, key in (("open_calls", "call_id"), ("open_decisions", "request_id"), ("tasks", "task_id")):
        seen: set[str] = set()
        for j, entry in enumerate(as_list(checkpoint.get(field))):
            value = as_dict(entry).get(key)
            if value in seen:
                report.add(
                    63,
                    pointer("checkpoints", c, field, j, key),
                    f"checkpoint '{checkpoint.get('id')}' lists {key} '{value}' twice in {field}",
                )
            elif isinstance(value, str):
                seen.add(value)
