"""What is in a document: counts, branches, coverage and losses, for ``asif-convert inspect``."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from asif_convert import ir
from asif_convert._errors import InvalidInput
from asif_convert._limits import Limits
from asif_convert._pipeline import load, new_context
from asif_convert.plugin import Options

_EXAMPLES = 3


def summarize(data: bytes, name: str = "<input>", limits: Limits | None = None) -> dict[str, Any]:
    """A JSON-ready summary of one document of any installed format."""
    raw, fmt = load(data, name=name, limits=limits)
    problems = fmt.validate(raw)
    if any(p.rule in ("json", "schema") for p in problems):
        raise InvalidInput(problems, name)
    ctx = new_context(Options())
    doc = fmt.read(raw, ctx)
    derived = {loss.id for loss in ctx.losses()}  # what reading it would record, not what it says
    out: dict[str, Any] = {
        "file": name,
        "format": fmt.name,
        "version": raw.get("asif_version") or raw.get("format"),
        "session": {"id": doc.session.id, "title": doc.session.title or None},
        "counts": _counts(doc, raw, fmt.name),
        "branches": [{"id": b.id, "events": len(b.event_ids), "head": b.head_event_id} for b in doc.branches],
        "resources_by_availability": dict(Counter(r.availability for r in doc.resources)),
        "losses": group_losses([loss for loss in doc.losses if loss.id not in derived]),
        "problems": len(problems),
    }
    if fmt.name == "asif":
        out["coverage"] = [{"scope": c.scope, "status": c.status, "detail": c.detail} for c in doc.coverage]
    return out


def _counts(doc: ir.Document, raw: dict[str, Any], fmt: str) -> dict[str, Any]:
    counts: dict[str, Any] = {
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
    }
    if fmt == "continuity":  # the export's own collections, before any mapping
        counts["records"] = {k: len(raw.get(k) or ()) for k in
                             ("messages", "events", "branches", "checkpoints", "native_states", "artifacts")}
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
