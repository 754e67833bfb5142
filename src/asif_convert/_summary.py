"""What is in a document: counts, branches, coverage and losses, for ``asif-convert inspect``."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

import msgspec

from asif_convert import ir
from asif_convert._errors import InvalidInput
from asif_convert._limits import Limits
from asif_convert._lines import Lines
from asif_convert._pipeline import load, new_context, problems_of
from asif_convert.plugin import Options

_EXAMPLES = 3


def summarize(data: bytes, name: str = "<input>", limits: Limits | None = None) -> dict[str, Any]:
    """A JSON-ready summary of one document of any installed format.

    ``counts`` are always the document's own. For a format other than ASIF, ``as_asif`` is a
    separate section: what converting it to ASIF would produce (counts, branches with their
    heads, resources, coverage), read through the IR as a conversion would."""
    raw, fmt = load(data, name=name, limits=limits)
    problems = problems_of(fmt, raw)
    if any(p.rule in ("json", "schema") for p in problems):
        raise InvalidInput(problems, name)
    ctx = new_context(Options())
    doc = fmt.read(raw, ctx)
    derived = {loss.id for loss in ctx.losses()}  # what reading it would record, not what it says
    out: dict[str, Any] = {
        "file": name,
        "format": fmt.name,
        "version": None if isinstance(raw, Lines) else raw.get("asif_version") or raw.get("format"),
        "session": {"id": doc.session.id, "title": doc.session.title or None},
    }
    if fmt.name == "asif":
        out.update(_asif_shape(doc))
    else:
        out["counts"] = _own_counts(raw)
    out["losses"] = group_losses([loss for loss in doc.losses if loss.id not in derived])
    out["problems"] = msgspec.to_builtins(problems)  # what `validate` finds (without --base-dir)
    if fmt.name != "asif":
        out["as_asif"] = _asif_shape(doc)
    return out


def _asif_shape(doc: ir.Document) -> dict[str, Any]:
    """Counts, branches, resources and coverage of a document as ASIF holds it."""
    return {
        "counts": {
            "events": len(doc.events),
            "events_by_kind": dict(Counter(e.kind for e in doc.events)),
            "messages_by_role": dict(Counter(e.body.role for e in doc.events if isinstance(e.body, ir.Message))),
            "participants": len(doc.participants),
            "branches": len(doc.branches),
            "tools": len(doc.tools),
            "resources": len(doc.resources),
            "checkpoints": len(doc.checkpoints),
            "contexts": len(doc.contexts),
            "executions": len(doc.executions),
        },
        "branches": [{"id": b.id, "events": len(b.event_ids), "head": b.head_event_id} for b in doc.branches],
        "resources_by_availability": dict(Counter(r.availability for r in doc.resources)),
        "usage": _usage(doc.extras.get("usage")),
        "coverage": [{"scope": c.scope, "status": c.status, "detail": c.detail} for c in doc.coverage],
    }


def _usage(entries: Any) -> dict[str, Any]:
    """How many usage entries, and the total of the delta counters by unit (cumulative
    counters are never summed: ASIF says they must not be)."""
    totals: dict[str, int | float] = {}
    listed = entries if isinstance(entries, list) else []
    for entry in listed:
        if not isinstance(entry, dict) or entry.get("counter") != "delta" or not isinstance(entry.get("unit"), str):
            continue
        value = entry.get("value")
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            totals[entry["unit"]] = totals.get(entry["unit"], 0) + value
    return {"entries": len(listed), "delta_totals": totals}


# Record fields worth a breakdown, by collection (an agent-continuity export's; any format's
# collections of the same name get the same treatment).
_BREAKDOWNS = {"messages": "role", "events": "event_type"}


def _own_counts(raw: dict[str, Any] | Lines) -> dict[str, Any]:
    """The document's own collections (its top-level arrays), as it holds them, before any mapping;
    JSON Lines: its records, by their ``type`` where they have one."""
    if isinstance(raw, Lines):
        return {"records": len(raw.records), "records_by_type": dict(Counter(
            str(v.get("type")) for _, v in raw.records if isinstance(v, dict) and "type" in v))}
    counts: dict[str, Any] = {}
    for key, value in raw.items():
        if not isinstance(value, list):
            continue
        counts[key] = len(value)
        field = _BREAKDOWNS.get(key)
        if field is not None:
            counts[f"{key}_by_{field}"] = dict(Counter(str(r.get(field)) for r in value if isinstance(r, dict)))
    return counts


def group_losses(losses: list[ir.Loss]) -> dict[str, Any]:
    """Losses by (kind, stage): how many, and a few example references or fields."""
    groups: dict[tuple[str, str], dict[str, Any]] = defaultdict(lambda: {"count": 0, "examples": []})
    for loss in losses:
        g = groups[(loss.kind, loss.stage)]
        g["count"] += 1
        refs = [f"{r.type} {r.id}" for r in loss.references or ()] or [loss.scope or loss.id]
        for ref in refs:
            if len(g["examples"]) < _EXAMPLES and ref not in g["examples"]:
                g["examples"].append(ref)
    rows = [{"kind": k, "stage": s, **g} for (k, s), g in groups.items()]
    rows.sort(key=lambda r: (-r["count"], r["kind"]))
    return {"total": len(losses), "by_kind": rows}
