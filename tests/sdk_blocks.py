"""Content blocks as the providers' official SDKs type them, for tests (the SDKs are test-only
dependencies).

* ``members(union)``: the member classes of an SDK union, read at run time (``typing.Union``,
  ``Annotated`` discriminated unions, nested unions), so a release that adds a block type adds a
  member here;
* ``tag(cls, key)``: the value of a member's discriminator field (``type``, or ``role``);
* ``uncovered(union, covered, key)``: the tags of a union no test covers (a test asserts it is
  empty, so that a new block type of an SDK release fails loudly instead of going unnoticed);
* ``instance(cls, value)``: ``value`` validated by the SDK's own type (a pydantic model, or a
  ``TypeAdapter`` for a TypedDict), with no key the type does not declare, returned as the JSON
  a runtime stores (a model's ``to_dict()``, a TypedDict's value as it is);
* ``export(content, role, ...)``: a schema-valid continuity export holding messages with these
  contents (``content_json``), ready to convert.
"""

from __future__ import annotations

import copy
import types
import typing
from typing import Any, Literal, NotRequired, Required, get_args, get_origin, get_type_hints

import pydantic

__all__ = ["export", "instance", "members", "tag", "uncovered"]


def members(union: Any) -> list[type]:
    """The classes of an SDK union, in declaration order, nested unions flattened."""
    origin = get_origin(union)
    if origin is typing.Annotated:
        return members(get_args(union)[0])
    if origin is typing.Union or origin is types.UnionType:
        out: list[type] = []
        for arg in get_args(union):
            out += [m for m in members(arg) if m not in out]
        return out
    return [union]


def _unwrap(annotation: Any) -> Any:
    while get_origin(annotation) in (typing.Annotated, Required, NotRequired):
        annotation = get_args(annotation)[0]
    return annotation


def _fields(cls: type) -> dict[str, Any]:
    if isinstance(cls, type) and issubclass(cls, pydantic.BaseModel):
        return {name: f.annotation for name, f in cls.model_fields.items()}
    return get_type_hints(cls, include_extras=True)


def tag(cls: type, key: str = "type") -> str:
    """The one value a member's ``key`` field may take (its Literal)."""
    annotation = _unwrap(_fields(cls)[key])
    if get_origin(annotation) is not Literal or len(get_args(annotation)) != 1:
        raise TypeError(f"{cls.__name__}.{key} is not a single Literal: {annotation!r}")
    return str(get_args(annotation)[0])


def uncovered(union: Any, covered: set[str] | dict[str, Any], key: str = "type") -> set[str]:
    """The tags of ``union``'s members that are not in ``covered``."""
    return {tag(m, key) for m in members(union)} - set(covered)


def instance(cls: type, value: dict[str, Any]) -> dict[str, Any]:
    """``value`` checked by the SDK's own type; fails (pydantic.ValidationError, or KeyError for
    a key the type does not declare) when it is not an instance of it."""
    if isinstance(cls, type) and issubclass(cls, pydantic.BaseModel):
        model = cls.model_validate(value)
        dumped = model.to_dict() if hasattr(model, "to_dict") else model.model_dump(mode="json", exclude_unset=True)
        extra = set(value) - {f.alias or name for name, f in cls.model_fields.items()}
        if extra:
            raise KeyError(f"{cls.__name__} does not declare {sorted(extra)}")
        return dumped
    pydantic.TypeAdapter(cls).validate_python(copy.deepcopy(value), strict=False)
    extra = set(value) - set(get_type_hints(cls))
    if extra:
        raise KeyError(f"{cls.__name__} does not declare {sorted(extra)}")
    return copy.deepcopy(value)


def export(*messages: tuple[str, Any], session_id: str = "s-sdk") -> dict[str, Any]:
    """A continuity export whose messages are ``(role, content_json)`` pairs, in order, ids
    ``m1``, ``m2``, ...; their text_content is empty (what a runtime that keeps only
    content_json writes)."""
    return {
        "format": "agent-continuity-export",
        "session": {"session_id": session_id, "title": "SDK blocks", "status": "active", "active_branch_id": "main"},
        "branches": [{"branch_id": "main", "session_id": session_id, "parent_branch_id": None, "name": "main",
                      "status": "active", "metadata": {}, "created_at": "2026-01-01T00:00:00Z",
                      "updated_at": "2026-01-01T00:00:00Z"}],
        "messages": [{"message_id": f"m{k}", "session_id": session_id, "branch_id": "main", "role": role,
                      "status": "complete", "content_json": copy.deepcopy(content), "text_content": "",
                      "sequence": k, "created_at": "2026-01-01T00:00:00Z"}
                     for k, (role, content) in enumerate(messages, start=1)],
        "events": [],
        "checkpoints": [],
    }
