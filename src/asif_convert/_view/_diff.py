"""The side-by-side page's model: two documents' events aligned by id, and their differences."""

from __future__ import annotations

import json
from difflib import SequenceMatcher
from typing import Any

from asif_convert._view._session import build_index, events, losses, resources

CONTEXT = 3  # unchanged events kept visible around each change; longer runs are folded
MAX_CHANGES = 2000  # rows of the differences table; the count says how many there are
VALUE_CHARS = 2000


def side(doc: dict[str, Any], pre: str) -> list[dict[str, Any]]:
    """One document's events, ready for the timeline, with anchors that start with ``pre``."""
    index = build_index(doc, pre)
    losses(doc, index)  # fills the index: each event shows the losses that name it
    # This page draws events only: links to other records and to losses would lead nowhere.
    index.anchors = {key: anchor for key, anchor in index.anchors.items() if key[0] == "event"}
    for named in index.losses_of.values():
        for loss in named:
            loss["anchor"] = None
    return events(doc, index, resources(doc, index))


def _raw_events(doc: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for ev in doc.get("events") or ():
        if isinstance(ev, dict) and isinstance(ev.get("id"), str):
            out.setdefault(ev["id"], ev)
    return out


def align(doc_a: dict[str, Any], doc_b: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows of (A event, B event, state), in document order; runs of equal events become folds."""
    rows_a, rows_b = side(doc_a, "a-"), side(doc_b, "b-")
    raw_a, raw_b = _raw_events(doc_a), _raw_events(doc_b)
    ids_a, ids_b = [r["id"] for r in rows_a], [r["id"] for r in rows_b]
    rows: list[dict[str, Any]] = []
    for op, i1, i2, j1, j2 in SequenceMatcher(None, ids_a, ids_b, autojunk=False).get_opcodes():
        if op == "equal":
            for a, b in zip(rows_a[i1:i2], rows_b[j1:j2], strict=True):
                same = raw_a.get(a["id"]) == raw_b.get(b["id"])
                rows.append({"a": a, "b": b, "state": "same" if same else "changed"})
        else:
            rows += [{"a": a, "b": None, "state": "removed"} for a in rows_a[i1:i2]]
            rows += [{"a": None, "b": b, "state": "added"} for b in rows_b[j1:j2]]
    return _fold(rows)


def _fold(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Keep ``CONTEXT`` unchanged rows next to each change visible; fold the rest of each run."""
    near = [False] * len(rows)
    for i, row in enumerate(rows):
        if row["state"] != "same":
            for j in range(max(0, i - CONTEXT), min(len(rows), i + CONTEXT + 1)):
                near[j] = True
    out: list[dict[str, Any]] = []
    run: list[dict[str, Any]] = []
    for row, keep in zip(rows, near, strict=True):
        if keep or row["state"] != "same":
            if run:
                out.append({"state": "fold", "rows": run})
                run = []
            out.append(row)
        else:
            run.append(row)
    if run:
        out.append({"state": "fold", "rows": run})
    return out


def _value(value: Any) -> str:
    text = json.dumps(value, indent=1, ensure_ascii=False, default=str)
    if len(text) <= VALUE_CHARS:
        return text
    return text[:VALUE_CHARS] + f"\n… ({len(text) - VALUE_CHARS:,} more characters)"


def change_rows(changes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The differences table: a path, what happened, and the old and new values as JSON text."""
    return [{"path": "/".join(str(step) for step in c["path"]) or "/", "change": c["change"],
             "old": _value(c["old"]) if "old" in c else None, "new": _value(c["new"]) if "new" in c else None}
            for c in changes[:MAX_CHANGES]]


def header(doc: dict[str, Any], name: str, source_format: str) -> dict[str, Any]:
    session = doc.get("session")
    session = session if isinstance(session, dict) else {}
    count = {k: len(doc.get(k) or ()) for k in ("events", "branches", "resources", "losses")}
    return {"name": name, "format": source_format, "id": session.get("id"), "title": session.get("title"),
            "counts": count}
