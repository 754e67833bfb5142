"""The shared, build-once view of a document that every rule family reads, and the problem sink."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator
from typing import Any, TypeGuard

from asif_convert._errors import Problem, pointer_segment

# Top-level collections whose records carry an ``id`` (rule 3).
COLLECTIONS = (
    "participants",
    "events",
    "branches",
    "executions",
    "contexts",
    "configurations",
    "tools",
    "resources",
    "environments",
    "checkpoints",
    "losses",
)

Path = tuple[str | int, ...]


def rule_id(rule: int | str) -> str:
    """Section 5 rules are numbers (``ASIF-Rnnn``); profile and beyond-the-digest rules carry their id."""
    return rule if isinstance(rule, str) else f"ASIF-R{rule:03d}"


def whole(value: Any) -> int | None:
    """A JSON integer as both schemas count one (``3``, ``3.0`` and ``3e0`` alike), else None.

    JSON Schema since draft 6 treats a number with a zero fractional part as an integer, so a
    schema-valid document may write a sequence, revision or index as ``88.0``; the rules compare
    such numbers by value. ``true`` is not a number here, although Python's bool is an int.
    """
    kind = type(value)  # exact types: bool is not int here, and this runs once per event and reference
    if kind is int:
        return value
    if kind is float and value.is_integer():
        return int(value)
    return None


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def as_dict(value: Any) -> Any:
    """A JSON object, or {} for anything else. Typed ``Any``: its values are untrusted JSON that
    every rule checks itself, and an ``Optional`` from each ``.get`` would say nothing more."""
    return value if isinstance(value, dict) else {}


def is_local(ref: Any) -> TypeGuard[dict[str, Any]]:
    """An event reference without session/capture names an event of this document."""
    return isinstance(ref, dict) and "session_id" not in ref and "capture_id" not in ref


def quote(values: Any, limit: int = 5) -> str:
    """Render a few ids for a message without flooding it."""
    items = sorted(str(v) for v in values)
    shown = ", ".join(f"'{v}'" for v in items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def resource_parts(parts: Any) -> Iterator[tuple[int, str]]:
    """(position, resource_id) of every resource/opaque part in a parts array."""
    for j, part in enumerate(as_list(parts)):
        if isinstance(part, dict) and part.get("kind") in ("resource", "opaque"):
            rid = part.get("resource_id")
            if isinstance(rid, str):
                yield j, rid


class Report:
    """Collects problems, once per (rule, location).

    Branch walks revisit shared prefixes, so the same fault would otherwise be reported per branch.
    """

    def __init__(self) -> None:
        self._problems: dict[tuple[str, str], Problem] = {}

    def add(self, rule: int | str, path: str, message: str, *, warning: bool = False) -> None:
        key = (rule_id(rule), path)
        if key not in self._problems:
            self._problems[key] = Problem(rule=key[0], path=path, message=message,
                                          severity="warning" if warning else "error")

    def problems(self) -> list[Problem]:
        return list(self._problems.values())


MISSING = object()  # what a lookup gives where nothing is
_BAD_ESCAPE = re.compile(r"~(?![01])")
_ARRAY_INDEX = re.compile(r"0|[1-9][0-9]*")


def resolve_pointer(value: Any, selector: str) -> Any:
    """The value the RFC 6901 pointer ``selector`` names inside ``value``; ``MISSING`` when
    there is none (or the pointer is malformed)."""
    if selector == "":
        return value
    if not selector.startswith("/"):
        return MISSING
    for token in selector[1:].split("/"):
        if _BAD_ESCAPE.search(token):
            return MISSING
        token = pointer_segment(token)
        if isinstance(value, list):
            if not _ARRAY_INDEX.fullmatch(token) or int(token) >= len(value):
                return MISSING
            value = value[int(token)]
        elif isinstance(value, dict) and token in value:
            value = value[token]
        else:
            return MISSING
    return value


class Index:
    """Id lookups and derived tables, each built in one pass so no rule scans per reference."""

    def __init__(self, doc: dict[str, Any]) -> None:
        self.doc = doc
        # collection -> id -> position of its first record; later repeats go to ``duplicates``.
        self.positions: dict[str, dict[Any, int]] = {}  # ids are untrusted JSON: keyed as found
        self.duplicates: list[tuple[str, int, str, int]] = []
        for name in COLLECTIONS:
            seen: dict[Any, int] = {}
            for i, item in enumerate(as_list(doc.get(name))):
                ident = item.get("id") if isinstance(item, dict) else None
                if not isinstance(ident, str):
                    continue
                first = seen.setdefault(ident, i)
                if first != i:
                    self.duplicates.append((name, i, ident, first))
            self.positions[name] = seen

        self.events: list[Any] = [e if isinstance(e, dict) else {} for e in as_list(doc.get("events"))]
        self.event_pos = self.positions["events"]
        self.by_kind: dict[Any, list[int]] = {}
        for i, event in enumerate(self.events):
            self.by_kind.setdefault(event.get("kind"), []).append(i)

        self.resources: dict[Any, dict[str, Any]] = {
            rid: as_dict(doc["resources"][i]) for rid, i in self.positions["resources"].items()
        }
        self.coverage: dict[Any, Any] = {}
        for entry in as_list(doc.get("coverage")):
            entry = as_dict(entry)
            self.coverage.setdefault(entry.get("scope"), entry.get("status"))

        # External bindings: first descriptor per (kind, id); duplicates are rule 84's business.
        self.ext_calls: dict[Any, dict[str, Any]] = {}
        self.ext_requests: dict[Any, dict[str, Any]] = {}
        for binding in as_list(doc.get("external_bindings")):
            binding = as_dict(binding)
            target = self.ext_calls if binding.get("kind") == "call" else self.ext_requests
            if isinstance(binding.get("id"), str):
                target.setdefault(binding["id"], as_dict(binding.get("descriptor")))

        self._branch_positions: dict[Any, dict[Any, int]] = {}
        self._bytes: dict[Any, bytes | None] = {}
        self._json: dict[Any, tuple[bool, Any]] = {}

    # -- lookups -------------------------------------------------------------------------------

    def has(self, collection: str, ident: Any) -> bool:
        return isinstance(ident, str) and ident in self.positions[collection]

    def record(self, collection: str, ident: Any) -> dict[str, Any]:
        return as_dict(self.doc[collection][self.positions[collection][ident]])

    def event(self, ident: Any) -> Any:
        i = self.event_pos.get(ident) if isinstance(ident, str) else None
        return None if i is None else self.events[i]

    def sequence(self, ident: Any) -> int | None:
        event = self.event(ident)
        return None if event is None else whole(event.get("sequence"))

    def branch_positions(self, branch_id: Any) -> dict[Any, int]:
        """event id -> first position in the branch's event_ids (cached per branch)."""
        cached = self._branch_positions.get(branch_id)
        if cached is None:
            cached = {}
            branch = self.record("branches", branch_id)
            for k, eid in enumerate(as_list(branch.get("event_ids"))):
                if isinstance(eid, str):
                    cached.setdefault(eid, k)
            self._branch_positions[branch_id] = cached
        return cached

    # -- embedded resource content ---------------------------------------------------------------

    def resource_bytes(self, rid: Any) -> bytes | None:
        """Decoded bytes of an embedded text/data resource; None when absent, path-based or undecodable."""
        if rid not in self._bytes:
            self._bytes[rid] = decode_embedded(self.resources.get(rid, {}))[0]
        return self._bytes[rid]

    def resource_json(self, rid: Any) -> tuple[bool, Any]:
        """(parsed, value) of an embedded resource read as UTF-8 JSON, parsed at most once."""
        if rid not in self._json:
            raw = self.resource_bytes(rid)
            self._json[rid] = (False, None) if raw is None else parse_json(raw)
        return self._json[rid]


def decode_embedded(resource: dict[str, Any]) -> tuple[bytes | None, str | None]:
    """(bytes, error) for an embedded text or data resource; (None, None) when there is nothing to decode."""
    if resource.get("availability") != "embedded":
        return None, None
    if isinstance(resource.get("text"), str):
        try:
            return resource["text"].encode("utf-8"), None
        except UnicodeEncodeError:
            return None, "text holds a lone surrogate and cannot be encoded as UTF-8"
    if isinstance(resource.get("data"), str):
        try:
            return base64.b64decode(resource["data"], validate=True), None
        except ValueError:  # binascii.Error and non-ASCII input are both ValueErrors
            return None, "data is not strict base64"
    return None, None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"non-JSON number {name}")


def parse_json(raw: bytes) -> tuple[bool, Any]:
    try:
        return True, json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
    except (ValueError, RecursionError):  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        return False, None


def json_equal(a: Any, b: Any) -> bool:
    """JSON value equality: unlike ``==``, true is not 1 and 1.0 equals 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b
