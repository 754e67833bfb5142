"""Model contexts: their anchors, input identity, source events and typed tool inputs."""

from __future__ import annotations

from typing import Any

from asif_convert._errors import pointer
from asif_convert._validation.semantic.index import Index, Report, as_dict, as_list, is_local, whole


def check(ix: Index, report: Report) -> None:
    for c, context in enumerate(as_list(ix.doc.get("contexts"))):
        context = as_dict(context)
        boundary_seq = anchors(ix, report, c, context)
        inputs(ix, report, c, context, boundary_seq)
        typed_inputs(ix, report, c, context)


def anchors(ix: Index, report: Report, c: int, context: dict) -> int | None:
    """Check branch, boundary, configuration and tools; return the boundary's sequence if known."""
    cid, bid, at = context.get("id"), context.get("branch_id"), context.get("at_event_id")
    if not ix.has("branches", bid):
        report.add(
            66, pointer("contexts", c, "branch_id"), f"context '{cid}' names branch '{bid}', which is not in branches"
        )
    elif at is not None and at not in ix.branch_positions(bid):
        report.add(
            66,
            pointer("contexts", c, "at_event_id"),
            f"context '{cid}' is anchored at '{at}', which is not an event of branch '{bid}'",
        )
    if "configuration_id" in context and not ix.has("configurations", context["configuration_id"]):
        report.add(
            66,
            pointer("contexts", c, "configuration_id"),
            f"context '{cid}' names configuration '{context['configuration_id']}', which is not in configurations",
        )
    for j, tool_id in enumerate(as_list(context.get("tool_ids"))):
        if not ix.has("tools", tool_id):
            report.add(
                66,
                pointer("contexts", c, "tool_ids", j),
                f"context '{cid}' offers tool '{tool_id}', which is not in tools",
            )
    return None if at is None else ix.sequence(at)


def inputs(ix: Index, report: Report, c: int, context: dict, boundary_seq: int | None) -> None:
    cid = context.get("id")
    seen: set[str] = set()
    for j, item in enumerate(as_list(context.get("inputs"))):
        item = as_dict(item)
        iid = item.get("id")
        if iid in seen:
            report.add(67, pointer("contexts", c, "inputs", j, "id"), f"context '{cid}' has two inputs with id '{iid}'")
        elif isinstance(iid, str):
            seen.add(iid)
        for k, ref in enumerate(as_list(item.get("source_events"))):
            if not is_local(ref):
                continue
            source = ref.get("event_id")
            where = ("contexts", c, "inputs", j, "source_events", k, "event_id")
            seq = ix.sequence(source)
            if seq is None:
                report.add(
                    68, pointer(*where), f"context '{cid}' input '{iid}' cites event '{source}', which is not in events"
                )
            elif boundary_seq is not None and seq > boundary_seq:
                report.add(
                    68,
                    pointer(*where),
                    f"context '{cid}' input '{iid}' cites event '{source}', which comes after the "
                    f"context boundary '{context.get('at_event_id')}'",
                )


def typed_inputs(ix: Index, report: Report, c: int, context: dict) -> None:
    """Tool inputs keep their correlation: one call input per invocation, results after it, in order."""
    cid = context.get("id")
    called: set[Any] = set()
    closed: set[Any] = set()
    last: dict[Any, int] = {}
    for j, item in enumerate(as_list(context.get("inputs"))):
        item = as_dict(item)
        kind, call_id = item.get("kind"), item.get("call_id")
        where = ("contexts", c, "inputs", j)
        if kind == "tool_call":
            if not ix.has("tools", item.get("tool_id")):
                report.add(
                    69,
                    pointer(*where, "tool_id"),
                    f"context '{cid}' call input names tool '{item.get('tool_id')}', which is not in tools",
                )
            if call_id in called:
                report.add(
                    69,
                    pointer(*where, "call_id"),
                    f"context '{cid}' has a second call input for call '{call_id}'; include one per invocation",
                )
            called.add(call_id)
        elif kind == "tool_result":
            index = whole(item.get("result_index"))
            owner = f"context '{cid}' result input '{item.get('id')}'"
            if call_id not in called:
                report.add(
                    69,
                    pointer(*where, "call_id"),
                    f"{owner} answers call '{call_id}' before (or without) its call input",
                )
            elif call_id in closed:
                report.add(69, pointer(*where, "call_id"), f"{owner} follows the terminal result of call '{call_id}'")
            elif index is not None and index <= last.get(call_id, -1):
                report.add(
                    69, pointer(*where, "result_index"), f"{owner} has result_index {index}, not above {last[call_id]}"
                )
            else:
                if index is not None:
                    last[call_id] = index
                if item.get("terminal") is True:
                    closed.add(call_id)
