"""The smallest typed difference between a dialect's canonical rendering of a message's pieces and
the content_json the export holds.

A difference is a JSON object of these steps (every one optional):

* ``{"=": value}``: the value, replaced whole (a scalar that differs, a list whose length did);
* ``{"{}": {key: difference}}``: an object's changed or added keys;
* ``{"-": [key, ...]}``: keys the original does not have;
* ``{"#": {index: difference}}``: a list's changed items, by position (same length);
* ``{"k": [key, ...]}``: the original's key order, when it is not the rendering's.

It lives in the converter's own namespace and is read back through :class:`Difference`, so
nothing a user writes into content_json is ever taken for converter state.
"""

from __future__ import annotations

from typing import Any

from msgspec import UNSET, Struct, UnsetType, field
from msgspec.json import Encoder


class Difference(Struct, forbid_unknown_fields=True, omit_defaults=True):
    replace: Any = field(default=UNSET, name="=")
    edit: dict[str, Difference] | UnsetType = field(default=UNSET, name="{}")
    removed: list[str] | UnsetType = field(default=UNSET, name="-")
    items: dict[str, Difference] | UnsetType = field(default=UNSET, name="#")
    keys: list[str] | UnsetType = field(default=UNSET, name="k")


_encode = Encoder().encode
# Types whose equal values are one JSON text (not float: 0.0 == -0.0; containers: key order)
_EQUAL_IS_SAME = frozenset((str, int, bool, type(None)))


def diff(base: Any, target: Any) -> dict[str, Any] | None:
    """The difference from ``base`` to ``target`` as JSON, or None when they are equal.

    Most messages are their rendering exactly: equal JSON texts (same values, types, key order)
    settle that in C, before any walk."""
    if _encode(base) == _encode(target):
        return None
    return _diff(base, target)


def diff_members(base: Any, target: Any, levels: int) -> dict[str, Any] | None:
    """``diff(base, target)`` for two objects that share most of their members: down ``levels``
    levels of objects, each member is told equal at C speed (one object, equal strings, equal
    JSON texts) and only the others are walked, in one pass with no copy of either side."""
    if base is target:
        return None
    if not (levels and type(base) is dict and type(target) is dict):
        return diff(base, target)
    changed = {}
    for key, value in target.items():
        if key not in base:
            changed[key] = {"=": value}
            continue
        b = base[key]
        if b is value:
            continue
        if levels > 1 and type(b) is dict and type(value) is dict:  # (walked, not encoded whole)
            sub = diff_members(b, value, levels - 1)
        elif type(b) is type(value) and (b == value if type(b) in _EQUAL_IS_SAME else _encode(b) == _encode(value)):
            continue
        else:
            sub = _diff(b, value)
        if sub is not None:
            changed[key] = sub
    return _object_steps(base, target, changed)


def _object_steps(base: dict[str, Any], target: dict[str, Any], changed: dict[str, Any]) -> dict[str, Any] | None:
    """The steps from object ``base`` to object ``target`` given the differences of their
    members (``changed``): those, the keys ``target`` lacks, and its key order if not the one
    the steps give."""
    out: dict[str, Any] = {}
    if changed:
        out["{}"] = changed
    if len(base) == len(target) and list(base) == list(target):  # (the same keys in the same order)
        return out or None
    removed = [k for k in base if k not in target]
    if removed:
        out["-"] = removed
    order = [k for k in base if k in target] + [k for k in target if k not in base]
    if order != list(target):
        out["k"] = list(target)
    return out or None


def _diff(base: Any, target: Any) -> dict[str, Any] | None:
    if isinstance(base, dict) and isinstance(target, dict):
        changed = {}
        for key, value in target.items():
            if key not in base:
                sub: dict[str, Any] | None = {"=": value}
            elif base[key] is value:  # (one object)
                continue
            else:
                sub = _diff(base[key], value)
            if sub is not None:
                changed[key] = sub
        return _object_steps(base, target, changed)
    if isinstance(base, list) and isinstance(target, list) and len(base) == len(target):
        items = {}
        for i, (a, b) in enumerate(zip(base, target, strict=True)):  # (a loop: one frame a level)
            sub = _diff(a, b)
            if sub is not None:
                items[str(i)] = sub
        return {"#": items} if items else None
    if type(base) is type(target) and base == target:  # (1 and 1.0, or true and 1, differ)
        return None
    return {"=": target}


def says(difference: dict[str, Any]) -> bool:
    """Whether ``difference`` holds a text of its own (a non-empty string added or replaced
    anywhere), something a reader would see in content_json but not in the pieces."""
    stack: list[Any] = [difference]
    while stack:
        step = stack.pop()
        if "=" in step and _has_text(step["="]):
            return True
        stack.extend(step.get("{}", {}).values())
        stack.extend(step.get("#", {}).values())
    return False


def _has_text(value: Any) -> bool:
    stack = [value]  # (a stack, not recursion: a value may nest as deep as the limits allow)
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if item.strip():
                return True
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def apply(base: Any, difference: dict[str, Any] | None) -> Any:
    """``base`` with ``difference`` applied. Steps that no longer fit (an edit removed the item
    they changed) are skipped: what the pieces say wins over how the original looked."""
    if not difference:
        return base
    if "=" in difference:
        return difference["="]
    if isinstance(base, dict):
        out = dict(base)
        for key, sub in difference.get("{}", {}).items():
            out[key] = apply(out[key], sub) if key in out else apply(None, sub)
        for key in difference.get("-", ()):
            out.pop(key, None)
        if "k" in difference:
            order = [k for k in difference["k"] if k in out]
            out = {k: out[k] for k in (*order, *(k for k in out if k not in order))}
        return out
    if isinstance(base, list):
        out_list = list(base)
        for index, sub in difference.get("#", {}).items():
            i = int(index) if index.isdigit() else -1
            if 0 <= i < len(out_list):
                out_list[i] = apply(out_list[i], sub)
        return out_list
    return base
