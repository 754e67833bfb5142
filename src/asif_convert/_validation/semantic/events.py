"""Event ordering and the causal and supersession graphs.

Both graphs are acyclic exactly when every local edge points to a smaller sequence, so checking
the edges (rules 22 and 24) is the cycle check; no separate graph walk is needed.
"""

from __future__ import annotations

from typing import Any

from asif_convert._errors import pointer
from asif_convert._validation.semantic.index import Index, Report, as_dict, is_local, whole


def check(ix: Index, report: Report) -> None:
    sequences(ix, report)
    causes(ix, report)
    supersedes(ix, report)


def sequences(ix: Index, report: Report) -> None:
    # Strictly ascending sequences (the usual case) are unique and in order: no map needed.
    known = [seq for event in ix.events if (seq := whole(event.get("sequence"))) is not None]
    if not all(map(int.__lt__, known, known[1:])):
        sequence_problems(ix, report)


def sequence_problems(ix: Index, report: Report) -> None:
    """Rules 20 and 21 event by event, naming the event each repeat or step back meets."""
    seen: dict[int, str] = {}
    previous = None
    for i, event in enumerate(ix.events):
        seq = whole(event.get("sequence"))
        if seq is None:
            continue
        if seq in seen:
            report.add(
                20,
                pointer("events", i, "sequence"),
                f"event '{event.get('id')}' reuses sequence {seq} of event '{seen[seq]}'; "
                "sequence values must be unique",
            )
        else:
            seen[seq] = event.get("id")
        if previous is not None and seq < previous:
            report.add(
                21,
                pointer("events", i, "sequence"),
                f"event '{event.get('id')}' has sequence {seq} after sequence {previous}; "
                "serialize events in ascending sequence order",
            )
        previous = seq


def causes(ix: Index, report: Report) -> None:
    for i, event in enumerate(ix.events):
        refs = event.get("causes")
        if not refs or not isinstance(refs, list):
            continue
        seq = whole(event.get("sequence"))
        seen: set[Any] = set()
        for j, ref in enumerate(refs):
            if not is_local(ref):
                continue  # external causes are never resolved locally
            cause = ref.get("event_id")
            target = ix.event(cause)
            if target is None:
                problem = "which is not in events"
            elif cause in seen:
                problem = "more than once"
            elif not _before(whole(target.get("sequence")), seq):
                problem = f"whose sequence {target.get('sequence')} is not smaller than {seq}"
            else:
                seen.add(cause)
                continue
            seen.add(cause)
            report.add(
                22,
                pointer("events", i, "causes", j, "event_id"),
                f"event '{event.get('id')}' lists cause '{cause}' {problem}",
            )


def supersedes(ix: Index, report: Report) -> None:
    for i, event in enumerate(ix.events):
        if "supersedes" not in event:
            continue
        ref = event["supersedes"]
        if not is_local(ref):
            continue
        eid, prior_id = event.get("id"), ref.get("event_id")
        prior = ix.event(prior_id)
        where = pointer("events", i, "supersedes", "event_id")
        if prior is None:
            report.add(24, where, f"event '{eid}' supersedes '{prior_id}', which is not in events")
            continue
        seq, prior_seq = whole(event.get("sequence")), whole(prior.get("sequence"))
        if not _before(prior_seq, seq):
            report.add(
                24,
                where,
                f"event '{eid}' (sequence {seq}) supersedes '{prior_id}' (sequence {prior_seq}); "
                "a correction must come after the event it corrects",
            )
        if prior.get("kind") != event.get("kind"):
            report.add(
                24,
                where,
                f"{event.get('kind')} event '{eid}' supersedes {prior.get('kind')} event "
                f"'{prior_id}'; a correction keeps the kind of the original",
            )
        elif event.get("kind") == "decision_resolution":
            request, prior_request = (as_dict(e.get("data")).get("request_id") for e in (event, prior))
            if request != prior_request:
                report.add(
                    25,
                    pointer("events", i, "data", "request_id"),
                    f"decision_resolution '{eid}' corrects '{prior_id}' but changes request_id "
                    f"from '{prior_request}' to '{request}'",
                )


def _before(earlier: int | None, later: int | None) -> bool:
    return earlier is not None and later is not None and earlier < later
