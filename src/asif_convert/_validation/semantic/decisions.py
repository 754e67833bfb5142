"""Decision request identity, resolution targets and options (document-level)."""

from __future__ import annotations

from typing import Any

from asif_convert._errors import pointer
from asif_convert._validation.semantic.index import Index, Path, Report, as_dict, as_list


def check(ix: Index, report: Report) -> None:
    requests: dict[str, dict[str, Any]] = {}  # request_id -> first request's data
    for i in ix.by_kind.get("decision_request", []):
        event = ix.events[i]
        data = as_dict(event.get("data"))
        request_id = data.get("request_id")
        if request_id in requests or request_id in ix.ext_requests:
            other = "an external request binding" if request_id in ix.ext_requests else "an earlier request"
            report.add(
                45,
                pointer("events", i, "data", "request_id"),
                f"decision_request '{event.get('id')}' reuses request_id '{request_id}' of {other}; "
                "each request needs its own id",
            )
        elif isinstance(request_id, str):
            requests[request_id] = data
        unique_options(report, data.get("options"), ("events", i, "data", "options"), 48)
    for i in ix.by_kind.get("decision_resolution", []):
        event = ix.events[i]
        data = as_dict(event.get("data"))
        request_id = data.get("request_id")
        request = requests.get(request_id) if request_id in requests else ix.ext_requests.get(request_id)
        if request is None:
            report.add(
                46,
                pointer("events", i, "data", "request_id"),
                f"decision_resolution '{event.get('id')}' resolves request '{request_id}', which has "
                "no decision_request event and no external request binding",
            )
            continue
        option = data.get("selected_option_id")
        options = {as_dict(o).get("id") for o in as_list(request.get("options"))}
        if "selected_option_id" in data and option not in options:
            report.add(
                48,
                pointer("events", i, "data", "selected_option_id"),
                f"decision_resolution '{event.get('id')}' selects option '{option}', which request "
                f"'{request_id}' does not offer",
            )


def unique_options(report: Report, options: Any, base: Path, rule: int) -> None:
    seen: set[str] = set()
    for j, option in enumerate(as_list(options)):
        oid = as_dict(option).get("id")
        if oid in seen:
            report.add(rule, pointer(*base, j, "id"), f"option id '{oid}' appears twice in one request")
        elif isinstance(oid, str):
            seen.add(oid)
