"""Structural validation against the two seed schemas.

jsonschema-rs answers "is it valid?" in milliseconds; only for an invalid document do we ask
python-jsonschema for the complete, readable error list (it is ~400x slower on large inputs).
Validators are built once per process; python-jsonschema is imported only then (importing it
takes about 0.1 s, a fifth of a small conversion). The same holds for a tool's own JSON Schema,
checked against the 2020-12 meta-schema (:func:`meta_schema_problem`).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from functools import cache
from typing import Any

import jsonschema_rs
import msgspec

from asif_convert._errors import Problem, pointer, shown
from asif_convert._resources import schema_path

ASIF_SCHEMA = "asif-0.4-session.schema.json"
CONTINUITY_SCHEMA = "agent-continuity-export.schema.json"

_MAX_MESSAGE = 300


@cache
def load_schema(name: str) -> dict[str, Any]:
    return json.loads(schema_path(name).read_text(encoding="utf-8"))


def _schema(name: str, definition: str | None) -> dict[str, Any]:
    """Schema ``name``, or one of its ``$defs`` as a schema of its own."""
    schema = load_schema(name)
    if definition is None:
        return schema
    return {"$schema": schema["$schema"], "$defs": _reached(schema["$defs"], definition),
            "$ref": f"#/$defs/{definition}"}


_LOCAL_REF = re.compile(r"#/\$defs/([A-Za-z0-9_-]+)")
# Keywords that give a part of a schema a base URI or a name of its own: references near them
# may mean something other than the document's own ``$defs``.
_OWN_BASE = frozenset({"$id", "$anchor", "$dynamicAnchor", "$dynamicRef", "$recursiveAnchor", "$recursiveRef"})


def _reached(defs: dict[str, Any], definition: str) -> dict[str, Any]:
    """The definitions ``definition`` reaches through its references, itself included.
    jsonschema-rs compiles every definition it is given (the ASIF schema's: about 0.5 ms for
    each definition checked on its own), and one that no reference reaches cannot change an
    answer. A reference of another form, or a definition with a base URI or anchors of its own,
    keeps them all. (A key spelled like a keyword in data, a ``const`` or a property's name,
    can only keep more.)"""
    kept, todo = {definition}, [defs[definition]]
    while todo:
        node = todo.pop()
        if isinstance(node, list):
            todo.extend(node)
        elif isinstance(node, dict):
            if not _OWN_BASE.isdisjoint(node):
                return defs
            ref = node.get("$ref")
            if ref is not None:
                found = _LOCAL_REF.fullmatch(ref) if isinstance(ref, str) else None
                if found is None or found[1] not in defs:
                    return defs
                if found[1] not in kept:
                    kept.add(found[1])
                    todo.append(defs[found[1]])
            todo.extend(node.values())
    return {name: value for name, value in defs.items() if name in kept}


@cache
def _fast(name: str, definition: str | None = None) -> Any:
    return jsonschema_rs.validator_for(_schema(name, definition))


@cache
def _full(name: str, definition: str | None = None) -> Any:
    import jsonschema  # (see the module's docstring)

    schema = _schema(name, definition)
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema, format_checker=None)


# JSON Schema 2020-12 itself: jsonschema-rs has the meta-schemas built in, nothing is fetched.
_META_2020_12 = "https://json-schema.org/draft/2020-12/schema"


@cache
def _fast_meta() -> Any:
    return jsonschema_rs.Draft202012Validator({"$ref": _META_2020_12}, validate_formats=True)


@cache
def _full_meta() -> Any:
    from jsonschema import Draft202012Validator  # (see the module's docstring)

    return Draft202012Validator(Draft202012Validator.META_SCHEMA, format_checker=Draft202012Validator.FORMAT_CHECKER)


def meta_schema_problem(schema: Any) -> Any:
    """The most relevant problem of ``schema`` as a JSON Schema 2020-12, as python-jsonschema's
    ``check_schema`` finds it (an error with ``message`` and ``absolute_path``), or None.

    jsonschema-rs answers "valid" for most schemas, and that answer is taken only where it
    cannot differ from python-jsonschema's: jsonschema-rs checks the meta-schema's formats at
    least as strictly (URIs by RFC 3986, which python-jsonschema checks only with an optional
    package), except regular expressions, which it reads as ECMA-262 and python-jsonschema
    with Python's ``re``; so every string a ``pattern`` or a ``patternProperties`` key could
    hold must compile with ``re`` too. Anything else (invalid, a regex ``re`` refuses, too
    deep for jsonschema-rs) is python-jsonschema's to answer, and to explain."""
    try:
        fast = _fast_meta().is_valid(schema)
    except ValueError:  # nested past jsonschema-rs's recursion limit
        fast = False
    if fast and all(_compiles(p) for p in _patterns(schema)):
        return None
    from jsonschema.exceptions import best_match  # (see the module's docstring)

    return best_match(_full_meta().iter_errors(schema))


def _patterns(value: Any) -> Iterator[str]:
    """Every string that may be a regular expression of a schema: a ``pattern``'s value and a
    ``patternProperties``' key, at any depth (inside data too, which only costs a look)."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            pattern, keyed = node.get("pattern"), node.get("patternProperties")
            if isinstance(pattern, str):
                yield pattern
            if isinstance(keyed, dict):
                yield from keyed
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def _compiles(pattern: str) -> bool:
    try:
        re.compile(pattern)
    except (re.error, RecursionError, OverflowError):
        return False
    return True


def _fast_answer(name: str, definition: str | None, value: Any) -> bool | None:
    """jsonschema-rs's answer, or None when it gives none: it stops at a value nested about 255
    levels deep ("Recursion limit reached"), which ``--max-depth`` up to 400 and
    ``--trusted-input`` let through. python-jsonschema answers those."""
    try:
        return bool(_fast(name, definition).is_valid(value))
    except ValueError:
        return None


def schema_problems(name: str, doc: Any) -> list[Problem]:
    """Every structural error of ``doc`` against schema ``name``, or [] when valid."""
    valid = _fast_answer(name, None, doc)
    if valid:
        return []
    errors = sorted(_full(name).iter_errors(doc), key=lambda e: (list(map(str, e.absolute_path)), e.message))
    problems = [Problem(rule="schema", path=pointer(*e.absolute_path), message=_shorten(_message(e))) for e in errors]
    if not problems and valid is False:  # the two engines disagree; never report "invalid" without a reason
        problems = [Problem(rule="schema", path="", message="document does not match its schema")]
    return problems


def is_asif(definition: str, value: Any) -> bool:
    """Whether ``value`` is a structurally valid ASIF ``definition`` (``event``, ``loss``, ``part``:
    a name in the schema's ``$defs``)."""
    valid = _fast_answer(ASIF_SCHEMA, definition, value)
    return _full(ASIF_SCHEMA, definition).is_valid(value) if valid is None else valid


def _message(error: Any) -> str:
    """The error in JSON's spelling: python-jsonschema writes values as Python does (``True``,
    ``None``, ``'x'``), and a whole object or array where one is wrong. Validators not named
    here keep its message."""
    kind, expected, instance = error.validator, error.validator_value, error.instance
    if kind == "type":
        types = expected if isinstance(expected, list) else [expected]
        return f"{shown(instance)} is not of type {' or '.join(map(_json, types))}"
    if kind == "enum":
        return f"{shown(instance)} is not one of {', '.join(map(_json, expected))}"
    if kind == "const":
        return f"{_json(expected)} was expected"
    if kind in _SIZES:
        one, many = _SIZES[kind]
        if kind.startswith("min"):
            return f"{shown(instance)} should be non-empty" if expected == 1 else \
                f"{shown(instance)} has fewer than {expected} {many}"
        return f"{shown(instance)} has more than {expected} {one if expected == 1 else many}"
    if kind == "uniqueItems":
        return f"{shown(instance)} has non-unique elements"
    if kind in ("anyOf", "oneOf"):
        return f"{shown(instance)} is not valid under any of the given schemas"
    if kind == "not":
        return f"{shown(instance)} is not allowed here"
    if kind == "pattern":
        return f"{shown(instance)} does not match {_json(expected)}"
    if kind in ("contains", "minContains", "maxContains"):
        parent = error.schema if isinstance(error.schema, dict) else {}
        wanted = _wanted(parent.get("contains"))
        if kind == "maxContains":
            return f"{wanted} appears more than {_times(expected)}"
        if kind == "minContains" and expected != 1:
            return f"{wanted} appears fewer than {_times(expected)}"
        return f"{wanted} is missing"
    if kind == "dependentRequired":
        found = _DEPENDENCY.search(error.message)
        try:
            needed, given = (ast.literal_eval(found[1]), ast.literal_eval(found[2])) if found else (None, None)
        except (ValueError, SyntaxError):
            needed = given = None
        if isinstance(needed, str) and isinstance(given, str):
            return f"{_json(given)} requires {_json(needed)} beside it"
    if kind in ("required", "additionalProperties"):  # the names python-jsonschema quotes, quoted as JSON
        names = _quoted_names(error.message)
        if names is not None and kind == "required":
            return f"{_json(names[0])} is a required property"
        if names is not None:
            return f"additional properties are not allowed ({', '.join(map(_json, names))} " \
                   f"{'was' if len(names) == 1 else 'were'} unexpected)"
    return error.message


def _quoted_names(message: str) -> list[str] | None:
    """The property names in a required or additionalProperties message of python-jsonschema
    (written with repr), or None when it is not of that form."""
    found = _NAMES.search(message)
    try:
        names = ast.literal_eval(f"[{found[1] or found[2]}]") if found else None
    except (ValueError, SyntaxError):
        return None
    return names if isinstance(names, list) and names and all(isinstance(n, str) for n in names) else None


_CHARACTERS, _ITEMS, _PROPERTIES = ("character", "characters"), ("item", "items"), ("property", "properties")
_SIZES = {"minLength": _CHARACTERS, "maxLength": _CHARACTERS, "minItems": _ITEMS, "maxItems": _ITEMS,
          "minProperties": _PROPERTIES, "maxProperties": _PROPERTIES}


def _times(n: Any) -> str:
    return "once" if n == 1 else f"{n} times"


_DEPENDENCY = re.compile(r"^(.*) is a dependency of (.*)$", re.DOTALL)
_NAMES = re.compile(r"^(.*) is a required property$|\((.*) (?:was|were) unexpected\)$", re.DOTALL)


def _json(value: Any) -> str:
    return msgspec.json.encode(value).decode()


def _wanted(schema: Any) -> str:
    """What a ``contains`` subschema asks an array to hold, in words: a constant, an item with
    one constant property, or else an item matching it."""
    if isinstance(schema, dict) and "const" in schema:
        return _json(schema["const"])
    props = schema.get("properties") if isinstance(schema, dict) else None
    if isinstance(props, dict) and len(props) == 1:
        ((name, sub),) = props.items()
        if isinstance(sub, dict) and "const" in sub:
            return f"an item with {_json(name)}: {_json(sub['const'])}"
    return "an item matching the schema"


def _shorten(message: str) -> str:
    return message if len(message) <= _MAX_MESSAGE else message[: _MAX_MESSAGE - 1] + "…"
