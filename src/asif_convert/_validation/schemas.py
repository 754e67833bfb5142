"""Structural validation against the two seed schemas.

jsonschema-rs answers "is it valid?" in milliseconds; only for an invalid document do we ask
python-jsonschema for the complete, readable error list (it is ~400x slower on large inputs).
Validators are built once per process; python-jsonschema is imported only then (importing it
takes about 0.1 s, a fifth of a small conversion).
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import jsonschema_rs

from asif_convert._errors import Problem, pointer
from asif_convert._resources import schema_path

ASIF_SCHEMA = "asif-0.4-session.schema.json"
CONTINUITY_SCHEMA = "agent-continuity-export.schema.json"

_MAX_MESSAGE = 300


@cache
def load_schema(name: str) -> dict[str, Any]:
    return json.loads(schema_path(name).read_text(encoding="utf-8"))


@cache
def _fast(name: str) -> Any:
    return jsonschema_rs.validator_for(load_schema(name))


@cache
def _full(name: str) -> Any:
    import jsonschema  # (see the module's docstring)

    schema = load_schema(name)
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema, format_checker=None)


def schema_problems(name: str, doc: Any) -> list[Problem]:
    """Every structural error of ``doc`` against schema ``name``, or [] when valid."""
    if _fast(name).is_valid(doc):
        return []
    errors = sorted(_full(name).iter_errors(doc), key=lambda e: (list(map(str, e.absolute_path)), e.message))
    problems = [Problem(rule="schema", path=pointer(*e.absolute_path), message=_shorten(e.message)) for e in errors]
    if not problems:  # the two engines disagree; never report "invalid" without a reason
        problems = [Problem(rule="schema", path="", message="document does not match its schema")]
    return problems


def _shorten(message: str) -> str:
    return message if len(message) <= _MAX_MESSAGE else message[: _MAX_MESSAGE - 1] + "…"


@cache
def _asif_event() -> Any:
    schema = load_schema(ASIF_SCHEMA)
    event = {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": "#/$defs/event"}
    return jsonschema_rs.validator_for(event)


def is_asif_event(value: Any) -> bool:
    """Whether ``value`` is a structurally valid ASIF event object."""
    return _asif_event().is_valid(value)
