"""Tool definitions, call identity and call amendments (document-level; selected-history checks live in history)."""

from __future__ import annotations

from typing import Any

from asif_convert._errors import pointer
from asif_convert._validation.schemas import meta_schema_problem
from asif_convert._validation.semantic.index import Index, Report, as_dict, as_list, is_local

_MISSING = object()


def check(ix: Index, report: Report) -> None:
    tools(ix, report)
    calls(ix, report)
    results(ix, report)


def tools(ix: Index, report: Report) -> None:
    for t, tool in enumerate(as_list(ix.doc.get("tools"))):
        tool = as_dict(tool)
        for field in ("input_schema", "output_schema"):
            if field in tool:
                error = meta_schema_problem(tool[field])
                if error is not None:
                    where = pointer("tools", t, field, *error.absolute_path)
                    report.add(
                        44,
                        where,
                        f"tool '{tool.get('id')}' {field} is not a valid JSON Schema 2020-12: {error.message}",
                    )
        for j, rid in enumerate(as_list(tool.get("resource_ids"))):
            if rid not in ix.resources:
                report.add(
                    44,
                    pointer("tools", t, "resource_ids", j),
                    f"tool '{tool.get('id')}' names resource '{rid}', which is not in resources",
                )


def calls(ix: Index, report: Report) -> None:
    seen: set[str] = set()
    for i in ix.by_kind.get("tool_call", []):
        event = ix.events[i]
        eid, data = event.get("id"), as_dict(event.get("data"))
        call_id = data.get("call_id")
        if not ix.has("tools", data.get("tool_id")):
            report.add(
                33,
                pointer("events", i, "data", "tool_id"),
                f"tool_call '{eid}' names tool '{data.get('tool_id')}', which is not in tools; "
                "declare the tool (input_schema true when its contract is unknown)",
            )
        if call_id in ix.ext_calls:
            report.add(
                34,
                pointer("events", i, "data", "call_id"),
                f"tool_call '{eid}' reuses call_id '{call_id}' of an external call binding",
            )
        if "retry_of" in data and data["retry_of"] == call_id:
            report.add(
                38,
                pointer("events", i, "data", "retry_of"),
                f"tool_call '{eid}' retries its own call_id '{call_id}'; a retry gets a new call_id",
            )
        if "supersedes" in event:
            amendment(ix, report, i)
        elif call_id in seen:
            report.add(
                34,
                pointer("events", i, "data", "call_id"),
                f"tool_call '{eid}' reuses call_id '{call_id}' without superseding the earlier "
                "version; a new invocation needs a new call_id",
            )
        if isinstance(call_id, str):
            seen.add(call_id)


def amendment(ix: Index, report: Report, i: int) -> None:
    event = ix.events[i]
    eid, data, ref = event.get("id"), as_dict(event.get("data")), as_dict(event.get("supersedes"))
    if not is_local(ref):
        report.add(
            37,
            pointer("events", i, "supersedes"),
            f"tool_call '{eid}' amends an external event; include the authentic predecessor "
            "locally or keep the external binding unchanged",
        )
        return
    prior = ix.event(ref.get("event_id"))
    if prior is None or prior.get("kind") != "tool_call":
        return  # rule 24 reports an unresolved or different-kind predecessor
    prior_data = as_dict(prior.get("data"))
    kept = (
        (("data", "call_id"), data.get("call_id", _MISSING), prior_data.get("call_id", _MISSING)),
        (("data", "tool_id"), data.get("tool_id", _MISSING), prior_data.get("tool_id", _MISSING)),
        (("data", "retry_of"), data.get("retry_of", _MISSING), prior_data.get("retry_of", _MISSING)),
        (("actor_id",), event.get("actor_id", _MISSING), prior.get("actor_id", _MISSING)),
        (("execution_id",), event.get("execution_id", _MISSING), prior.get("execution_id", _MISSING)),
    )
    for path, mine, theirs in kept:
        if mine != theirs:
            where = path if mine is not _MISSING else path[:-1]
            report.add(
                35,
                pointer("events", i, *where),
                f"tool_call '{eid}' amends '{prior.get('id')}' but changes {path[-1]} from "
                f"{_show(theirs)} to {_show(mine)}; an amendment keeps the invocation identical",
            )
    retry_of = data.get("retry_of")
    if retry_of is not None and prior_data.get("call_id") == retry_of:
        report.add(
            38,
            pointer("events", i, "supersedes"),
            f"tool_call '{eid}' retries call '{retry_of}' and also supersedes it; a retry must not "
            "supersede the invocation it retries",
        )
    status, prior_status = data.get("arguments_status"), prior_data.get("arguments_status")
    if prior_status == "complete":
        report.add(
            36,
            pointer("events", i, "supersedes"),
            f"tool_call '{eid}' amends '{prior.get('id')}', whose arguments are already complete",
        )
    elif prior_status == "partial" and status == "unknown":
        report.add(
            36,
            pointer("events", i, "data", "arguments_status"),
            f"tool_call '{eid}' regresses arguments_status from partial to unknown",
        )


def _show(value: Any) -> str:
    return "(absent)" if value is _MISSING else repr(value)


def results(ix: Index, report: Report) -> None:
    known = {as_dict(ix.events[i].get("data")).get("call_id") for i in ix.by_kind.get("tool_call", [])}
    for i in ix.by_kind.get("tool_result", []):
        event = ix.events[i]
        call_id = as_dict(event.get("data")).get("call_id")
        if call_id not in known and call_id not in ix.ext_calls:
            report.add(
                40,
                pointer("events", i, "data", "call_id"),
                f"tool_result '{event.get('id')}' answers call '{call_id}', which has no tool_call "
                "event and no external call binding",
            )
