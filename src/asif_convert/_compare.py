"""Structural, entity-aware differences between two documents of one format (``asif-convert diff``).

Records are matched by id, not by position, and key order is ignored; deepdiff does the
comparison on a view where each collection of records is keyed by its id.
"""

from __future__ import annotations

from typing import Any

from deepdiff import DeepDiff

from asif_convert._errors import InvalidInput, Problem
from asif_convert._lines import Lines

# collection -> the field that identifies its records, per format
RECORD_KEYS = {
    "asif": {"participants": "id", "events": "id", "branches": "id", "executions": "id", "contexts": "id",
             "configurations": "id", "tools": "id", "resources": "id", "environments": "id", "checkpoints": "id",
             "losses": "id", "coverage": "scope"},
    "continuity": {"branches": "branch_id", "messages": "message_id", "events": "event_id",
                   "checkpoints": "checkpoint_id", "native_states": "state_id", "artifacts": "artifact_id"},
}


def comparable(raw: Any) -> Any:
    """A decoded input as it is compared: a file of JSON Lines as its records by their number
    (1-based: blank lines, and lines that are no record, do not count, so that the same records
    spaced otherwise are equal; ``record_lines`` says where each is), a document as it is."""
    return {k: value for k, (_, value) in enumerate(raw.records, 1)} if isinstance(raw, Lines) else raw


def record_lines(raw: Any) -> dict[int, int]:
    """Of a file of JSON Lines, the line of each record by its number (``comparable``'s keys)."""
    return {k: line for k, (line, _) in enumerate(raw.records, 1)} if isinstance(raw, Lines) else {}


def _step(step: Any) -> tuple[int, int, str]:
    return (0, step, "") if isinstance(step, int) else (1, 0, str(step))  # (numbers in their order)


def keyed(doc: dict[str, Any], fmt: str) -> dict[str, Any]:
    """The document with each record collection turned into {id: record} (when ids are unique)."""
    out = dict(doc)
    for coll, key in RECORD_KEYS.get(fmt, {}).items():
        records = doc.get(coll)
        if isinstance(records, list) and all(isinstance(r, dict) and key in r for r in records):
            by_id = {str(r[key]): r for r in records}
            if len(by_id) == len(records):
                out[coll] = by_id
    return out


_CHANGES = {"dictionary_item_added": "added", "iterable_item_added": "added",
            "dictionary_item_removed": "removed", "iterable_item_removed": "removed",
            "values_changed": "changed", "type_changes": "type_changed"}


def differences(a: dict[str, Any], b: dict[str, Any], fmt: str) -> list[dict[str, Any]]:
    """Each difference as {path: [steps], change: added|removed|changed|type_changed, old?, new?}."""
    try:
        diff = DeepDiff(keyed(a, fmt), keyed(b, fmt), ignore_order=False, view="tree")
    except RecursionError:  # deepdiff recurses per level; our limits allow deeper documents than it can walk
        raise InvalidInput([Problem(rule="limit", path="", message=(
            "the documents differ somewhere nested too deeply for diff to walk (a few hundred levels); "
            "compare the parts that differ, or convert and validate instead"))], "<diff>") from None
    out = []
    for kind, items in diff.items():
        change = _CHANGES.get(kind, kind)
        for item in items:
            row: dict[str, Any] = {"path": item.path(output_format="list"), "change": change}
            if change != "added":
                row["old"] = item.t1
            if change != "removed":
                row["new"] = item.t2
            out.append(row)
    out.sort(key=lambda r: [_step(s) for s in r["path"]])
    return out
