"""Structural patches between two JSON values, entity-aware for lists of records with ids.

A patch is what turns ``base`` into ``target``; it holds only what differs:

* ``{"=": value}``: replace with ``value``;
* ``{"{}": {key: patch}, "-": [key, ...]}``: edit an object (changed keys, removed keys);
* ``{"[]": {id: patch}, "order": [id, ...]}``: edit a list of records keyed by ``id`` (or
  ``scope``): changed or added records by key, and the new order when it differs.

The continuity writer uses it for the ASIF residual, and its paths for the loss report.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

_MISSING = object()


def diff(base: Any, target: Any) -> dict[str, Any] | None:
    """The patch from ``base`` to ``target``, or None when they are equal."""
    if base is not _MISSING and type(base) is type(target) and base == target:
        return None
    if isinstance(base, dict) and isinstance(target, dict):
        changed = {}
        for key, value in target.items():
            sub = diff(base.get(key, _MISSING), value)
            if sub is not None:
                changed[key] = sub
        out: dict[str, Any] = {"{}": changed} if changed else {}
        removed = [k for k in base if k not in target]
        if removed:
            out["-"] = removed
        return out
    if isinstance(base, list) and isinstance(target, list):
        key = _record_key(base, target)
        if key is not None:
            return _diff_records(base, target, key)
    return {"=": target}


def apply(base: Any, patch: dict[str, Any] | None) -> Any:
    if patch is None:
        return base
    if "=" in patch:
        return patch["="]
    if "[]" in patch:
        key = patch.get("key", "id")
        by_key = {r[key]: r for r in base}
        order = patch["order"] if "order" in patch else [r[key] for r in base]
        edits = patch["[]"]
        return [apply(by_key.get(k), edits.get(k)) for k in order]
    out = dict(base)
    for key, sub in patch.get("{}", {}).items():
        out[key] = apply(out.get(key), sub)
    for key in patch.get("-", ()):
        out.pop(key, None)
    return out


def changed_paths(patch: dict[str, Any] | None, path: tuple = ()) -> Iterator[tuple[tuple, tuple[str, ...]]]:
    """Yield (path, record keys) for each change: path is a tuple of property names, where a
    record-list step is ``"[]"``; record keys are the ids of the records passed through."""
    yield from _walk(patch, path, ())


def _walk(patch: dict[str, Any] | None, path: tuple, ids: tuple) -> Iterator[tuple[tuple, tuple]]:
    if not patch:
        return
    if "=" in patch:
        yield path, ids
        return
    if "[]" in patch:
        edits = patch["[]"]
        for rid, sub in edits.items():
            yield from _walk(sub, (*path, "[]"), (*ids, rid))
        if "order" in patch and not edits:
            yield path, ids
        return
    for key, sub in patch.get("{}", {}).items():
        yield from _walk(sub, (*path, key), ids)
    for key in patch.get("-", ()):
        yield (*path, key), ids


def _record_key(base: list, target: list) -> str | None:
    for key in ("id", "scope"):
        if all(_keyed(r, key) for r in base) and all(_keyed(r, key) for r in target):
            if len({r[key] for r in base}) == len(base) and len({r[key] for r in target}) == len(target):
                return key
    return None


def _keyed(record: Any, key: str) -> bool:
    return isinstance(record, dict) and isinstance(record.get(key), str)


def _diff_records(base: list, target: list, key: str) -> dict[str, Any]:
    by_key = {r[key]: r for r in base}
    edits = {}
    for record in target:
        sub = diff(by_key.get(record[key], _MISSING), record)
        if sub is not None:
            edits[record[key]] = sub
    out: dict[str, Any] = {"[]": edits}
    order = [r[key] for r in target]
    if order != [r[key] for r in base]:
        out["order"] = order
    if key == "scope":
        out["key"] = "scope"
    return out
