"""Documents drawn from a JSON Schema (draft-07 or 2020-12), with edge values first.

A compact generator for the two seed schemas, not a general one: it knows the keywords they
use (``$ref`` with nested ``$id`` bases, ``allOf``/``anyOf``/``oneOf``, ``if``/``then``/``else``,
``type``, ``enum``, ``const``, ``properties``, ``required``, ``additionalProperties``,
``dependentRequired``, ``items``, ``contains``/``minContains``, ``minItems``/``maxItems``,
``uniqueItems``, ``minLength``/``maxLength``, ``pattern``, ``minimum``/``maximum``,
``contentEncoding``) and ignores ``not``. A draw aims at valid documents but need not always
reach one (a ``not``, a condition that flips after a redraw): the caller validates it.

Values are edge values of their type, most of the time: the empty string, the shortest string
a ``minLength`` allows, control characters, surrogate-free astral and right-to-left text, long
strings, timestamps that are and are not RFC 3339, ``minimum``/``maximum`` and their
neighbours, ±(2^53 − 1), zero and negative zero, empty arrays, every enum member, ids from a
small pool (so references resolve, collide and dangle), and every optional member on some draws.
``rng`` is anything with ``random()``, ``randrange()`` and ``choice()``: a ``random.Random``
for seeded runs, hypothesis's ``st.randoms()`` in property tests.
"""

from __future__ import annotations

import base64
import copy
import re
from functools import cache
from typing import Any

import jsonschema_rs
import msgspec

EDGE_STRINGS = ["", " ", "x", "\u0000", "\t\n", "\u00e9", "\U0001f600", "\u202eevil", "\ufeff", "a" * 300,
                "../../etc/passwd", "/dev/zero", "C:\\x", "null", "0", "-1", "true", "{}", "[]", '"',
                "\\", "%s%n", "<script>", "text/plain", "application/json", "image/png", "agent-continuity/1"]
EDGE_TIMES = ["2024-01-01T00:00:00Z", "2024-01-01T00:00:00.123456789+01:00", "1970-01-01T00:00:00Z",
              "9999-12-31T23:59:59Z", "0000-01-01T00:00:00Z", "2024-02-30T25:61:61Z", "2024-01-01",
              "2024-01-01t00:00:00z", "yesterday", "2024-01-01T00:00:00"]
EDGE_NUMBERS = [0.0, -0.0, 0.5, -1.5, 1e308, -1e308, 5e-324, 1e-7, 3.0]
BIG = 2**53 - 1
EDGE_KEYS = ["", "x", "type", "text", "id", "kind", "\u00e9", "\U0001f600", "agent-continuity/1", "$ref", "__proto__"]
_SHA256 = re.compile(r"^\^\[0-9a-f\]\{64\}")


def canonical(value: Any) -> bytes:
    """One encoding per JSON meaning: keys sorted, 1 and 1.0 and true all told apart."""
    return msgspec.json.encode(value, order="sorted")


class SchemaDraw:
    """Draws instances of ``schema``; ``pool`` holds the ids records share (see the module doc)."""

    def __init__(self, schema: dict[str, Any], rng: Any, pool: list[str], *, optional: float = 0.5,
                 edge: float = 0.7, contents: list[Any] = ()) -> None:
        self.root, self.rng, self.pool = schema, rng, pool
        self.optional, self.edge, self.contents = optional, edge, list(contents)

    # -- the schema: references, combinators, conditions --------------------------------------

    def deref(self, node: Any, base: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """``node`` with its ``$ref`` followed (siblings kept), and the resource its refs resolve in."""
        if not isinstance(node, dict):
            return ({} if node is True else {"not": {}}), base
        if "$id" in node:
            base = node
        while "$ref" in node:
            target: Any = base
            for step in node["$ref"].lstrip("#/").split("/"):
                target = target[step]
            rest = {k: v for k, v in node.items() if k != "$ref"}
            if "$id" in target:
                base = target
            node = _merge(dict(target), rest) if rest else target
        return node, base

    def flat(self, node: Any, base: dict[str, Any], instance: Any = None, *, known: bool = False,
             conditions: list[tuple[dict[str, Any], dict[str, Any]]] | None = None) -> dict[str, Any]:
        """``node`` as one set of keywords: refs followed, ``allOf`` merged, one branch of each
        ``anyOf``/``oneOf`` (the first ``instance`` matches when ``known``, else a drawn one)
        and the conditions ``instance`` meets. Conditions are left in ``conditions`` (with their
        base) when the instance is not known yet."""
        node, base = self.deref(node, base)
        skip = ("allOf", "anyOf", "oneOf", "if", "then", "else", "$id", "contains", "minContains", "maxContains")
        out = _merge({}, {k: v for k, v in node.items() if k not in skip[:7]})  # (contains as "$contains")
        out = self._based({k: v for k, v in out.items() if k not in skip}, base)
        for sub in node.get("allOf", []):
            out = _merge(out, self.flat(sub, base, instance, known=known, conditions=conditions))
        for key in ("anyOf", "oneOf"):
            if key in node:
                branches = node[key]
                if known:
                    chosen = next((b for b in branches if self.matches(b, base, instance)), branches[0])
                else:
                    chosen = self.rng.choice(branches)
                    if key == "oneOf":  # only one: what the others alone require is left out
                        out = _merge(out, {"not": {"anyOf": [b for b in branches if b is not chosen]}})
                out = _merge(out, self.flat(chosen, base, instance, known=known, conditions=conditions))
        if "if" in node:
            if known:
                branch = node.get("then") if self.matches(node["if"], base, instance) else node.get("else")
                if branch is not None:
                    out = _merge(out, self.flat(branch, base, instance, known=True))
            elif conditions is not None:
                conditions.append((node, base))
        return out

    def _based(self, node: dict[str, Any], base: dict[str, Any]) -> dict[str, Any]:
        """Keep the base with the keywords whose subschemas are read later."""
        if base is not self.root:
            node["$base"] = base
        return node

    def matches(self, node: Any, base: dict[str, Any], instance: Any) -> bool:
        return _validator(id(base), _Held(base), id(node), _Held(node)).is_valid(instance)

    def at(self, doc: Any, path: tuple[Any, ...]) -> tuple[dict[str, Any], dict[str, Any]]:
        """The keywords that govern the value at ``path`` of ``doc`` (and their base), as it is."""
        node, base, value = self.root, self.root, doc
        for step in path:
            keywords = self.flat(node, base, value, known=True)
            base = keywords.get("$base", base)
            if isinstance(value, dict):
                node = keywords.get("properties", {}).get(step, keywords.get("additionalProperties", True))
            else:
                node = keywords.get("items", True)
            value = value[step]
        keywords = self.flat(node, base, value, known=True)
        return keywords, keywords.get("$base", base)

    # -- values ---------------------------------------------------------------------------------

    def value(self, node: Any, base: dict[str, Any] | None = None, key: str = "", depth: int = 0) -> Any:
        base = base if base is not None else self.root
        conditions: list[tuple[dict[str, Any], dict[str, Any]]] = []
        keywords = self.flat(node, base, conditions=conditions)
        base = keywords.get("$base", base)
        drawn = self._plain(keywords, base, key, depth)
        for _ in range(2):  # the conditions the draw meets add their keywords; redraw, keeping what they test
            extra: dict[str, Any] = {}
            for cond, cbase in conditions:
                branch = cond.get("then") if self.matches(cond["if"], cbase, drawn) else cond.get("else")
                if branch is not None:
                    extra = _merge(extra, self.flat(branch, cbase, drawn, known=True))
            if not extra:
                break
            if not isinstance(drawn, dict):
                break
            # what the conditions add constraints to is drawn again; the rest stays as it was
            fixed = {k: v for k, v in drawn.items() if k not in extra.get("properties", {})}
            drawn = self._plain(_merge(dict(keywords), extra), base, key, depth, fixed)
        return drawn

    def _plain(self, kw: dict[str, Any], base: dict[str, Any], key: str, depth: int,
               fixed: dict[str, Any] | None = None) -> Any:
        rng = self.rng
        if "const" in kw:
            return copy.deepcopy(kw["const"])
        if "enum" in kw:
            return copy.deepcopy(rng.choice(kw["enum"]))
        types = kw.get("type")
        if types is None:
            types = "object" if "properties" in kw or "required" in kw else None
        if types is None:
            return self.any_json(depth, key)
        kind = rng.choice(types) if isinstance(types, list) else types
        if kind == "object":
            return self._object(kw, base, depth, fixed or {})
        if kind == "array":
            return self._array(kw, base, key, depth)
        if kind == "string":
            return self.string(kw, key)
        if kind == "integer":
            return self.integer(kw)
        if kind == "number":
            return rng.choice([self.integer(kw), *([n for n in EDGE_NUMBERS if _in_range(n, kw)] or [0.5])])
        if kind == "boolean":
            return rng.random() < 0.5
        return None

    def _object(self, kw: dict[str, Any], base: dict[str, Any], depth: int, fixed: dict[str, Any]) -> dict[str, Any]:
        props: dict[str, Any] = kw.get("properties", {})
        required = kw.get("required", [])
        if not props and not required and kw.get("additionalProperties", True) is True:
            free = self.any_json(depth)  # a free-form object (metadata, payload, summary)
            return free if isinstance(free, dict) else {self.rng.choice(EDGE_KEYS): free}
        out: dict[str, Any] = {}
        forbidden = kw.get("$forbid", set())
        for name, sub in props.items():
            if name in forbidden and name not in required:
                continue
            if name in fixed:
                out[name] = fixed[name]
            elif name in required or (not fixed and depth < 12 and self.rng.random() < self.optional):
                out[name] = self.value(sub, base, name, depth + 1)
        out.update((k, v) for k, v in fixed.items() if k not in out and k not in forbidden)
        for name in required:
            if name not in out:
                out[name] = self.value(kw.get("additionalProperties", True), base, name, depth + 1)
        for name, needs in kw.get("dependentRequired", {}).items():
            if name in out:
                for other in needs:
                    if other not in out:
                        out[other] = self.value(props.get(other, True), base, other, depth + 1)
        extra = kw.get("additionalProperties", True)
        if extra is not False and not fixed and depth < 12 and self.rng.random() < 0.08:
            name = self.rng.choice(EDGE_KEYS)
            if name not in props:
                out[name] = self.value(extra, base, name, depth + 1)
        return out

    def _array(self, kw: dict[str, Any], base: dict[str, Any], key: str, depth: int) -> list[Any]:
        lo = kw.get("minItems", 0)
        hi = kw.get("maxItems", lo + 4 if depth < 12 else lo)
        if depth <= 1:  # a document's records: several, so that they meet
            size = min(hi, lo + self.rng.randrange(7))
        else:
            size = self.rng.choice(sorted({lo, min(hi, lo + 1), min(hi, lo + self.rng.randrange(5))}))
        item_key = key[:-1] if key.endswith("s") else key
        contains = kw.get("$contains", [])
        bounded = any(most is not None for _, _, most in contains)  # "exactly one of each": nothing else
        items = [] if bounded else [self.value(kw.get("items", True), base, item_key, depth + 1)
                                    for _ in range(size)]
        for sub, least, _ in contains:
            both = {"allOf": [kw.get("items", True), sub]}
            items += [self.value(both, base, item_key, depth + 1) for _ in range(least)]
        if contains and "maxItems" in kw:
            items = items[-kw["maxItems"]:]
        if kw.get("uniqueItems") or bounded:
            seen: set[bytes] = set()
            items = [v for v in items if not (canonical(v) in seen or seen.add(canonical(v)))]
        elif items and self.rng.random() < 0.1:  # a duplicate where the schema does not forbid one
            items.append(copy.deepcopy(self.rng.choice(items)))
        return items

    def string(self, kw: dict[str, Any], key: str = "") -> str:
        rng, lo, hi = self.rng, kw.get("minLength", 0), kw.get("maxLength")
        pattern = kw.get("pattern")
        if pattern is not None and _SHA256.match(pattern):
            return rng.choice(["0" * 64, "f" * 64, "0123456789abcdef" * 4])
        if kw.get("contentEncoding") == "base64":
            data = rng.choice([b"", b"\x00", b"hello", bytes(range(256))])
            text = base64.b64encode(data).decode()
            return rng.choice([text, text, "!!not base64!!", text.rstrip("=")]) or ("" if lo == 0 else "AA==")
        if key.endswith(("_id", "id")) or key in ("ids", "provider", "kind") and rng.random() < 0.7:
            choices = self.pool
        elif key.endswith(("_at", "time")) or key == "created_at":
            choices = EDGE_TIMES if rng.random() < self.edge else ["2024-01-01T00:00:00Z"]
        elif rng.random() < self.edge:
            choices = EDGE_STRINGS + ["x" * lo] + (["x" * hi] if hi is not None else [])
        else:
            choices = ["text", "t\u00e9xt \U0001f600", "second line\nthird", key or "v"]
        text = rng.choice(choices)
        if len(text) < lo:
            text += "x" * (lo - len(text))
        if hi is not None:
            text = text[:hi]
        if pattern is not None and not re.search(pattern, text):
            return text  # (no other pattern in these schemas: the validator says what the draw is)
        return text

    def integer(self, kw: dict[str, Any]) -> int:
        lo, hi = kw.get("minimum"), kw.get("maximum")
        edges = [0, 1, -1, 2, 7, BIG, -BIG, 2**31, 255]
        edges += [v for v in (lo, hi) if v is not None]
        edges += [v + d for v in (lo, hi) if v is not None for d in (-1, 1)]
        inside = [v for v in edges if _in_range(v, kw)]
        if self.rng.random() < 0.3:
            return self.rng.randrange(lo if lo is not None else 0, min(hi, 1000) + 1 if hi is not None else 1000)
        return self.rng.choice(inside or [lo if lo is not None else 0])

    def any_json(self, depth: int = 0, key: str = "") -> Any:
        """A free-form value: a known content shape with edge leaves, or JSON of any shape."""
        rng = self.rng
        if self.contents and depth < 5 and rng.random() < 0.6:
            return self.edged(copy.deepcopy(rng.choice(self.contents)))
        roll = rng.random()
        if depth >= 6 or roll < 0.45:
            return rng.choice([None, True, False, 0, -1, BIG, -BIG, 1.5, -0.0, 1e308,
                               *EDGE_STRINGS[:12], rng.choice(self.pool)])
        if roll < 0.7:
            return [self.any_json(depth + 1) for _ in range(rng.randrange(4))]
        return {rng.choice(EDGE_KEYS + self.pool): self.any_json(depth + 1) for _ in range(rng.randrange(4))}

    def edged(self, value: Any) -> Any:
        """``value`` with one to five of its members swapped for edge values of their type, or dropped."""
        places = list(_places(value))
        strings = [(c, k) for c, k in places if isinstance(c[k], str)]  # where most constraints are
        for _ in range(self.rng.randrange(1, 6) if places else 0):
            parent, key = self.rng.choice(strings if strings and self.rng.random() < 0.6 else places)
            if key not in (parent if isinstance(parent, dict) else range(len(parent))):
                continue
            old = parent[key]
            if isinstance(parent, dict) and self.rng.random() < 0.1:
                del parent[key]
            elif isinstance(old, str):
                parent[key] = "" if self.rng.random() < 0.3 else self.rng.choice(EDGE_STRINGS + self.pool)
            elif isinstance(old, bool) or old is None:
                parent[key] = self.rng.choice([None, True, False, "", 0])
            elif isinstance(old, int | float):
                parent[key] = self.rng.choice([0, -1, BIG, -BIG, 1.5, -0.0, 1e308])
            else:
                parent[key] = self.rng.choice([[], {}, None, "", copy.deepcopy(old)])
        return value


def _places(value: Any) -> Any:
    """(container, key) of every member of ``value``, at any depth."""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, member in items:
        yield value, key
        yield from _places(member)


class _Held:
    """A schema node as an ``lru_cache`` argument (looked up by identity, never hashed by value)."""

    def __init__(self, node: Any) -> None:
        self.node = node

    def __hash__(self) -> int:
        return id(self.node)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Held) and other.node is self.node


@cache
def _validator(base_id: int, base: _Held, node_id: int, node: _Held) -> Any:
    schema = node.node if isinstance(node.node, dict) else {"not": {}} if node.node is False else {}
    dialect = base.node.get("$schema", "https://json-schema.org/draft/2020-12/schema")
    whole = {"$schema": dialect, **{k: v for k, v in base.node.items() if k in ("$defs", "definitions")}, **schema}
    return jsonschema_rs.validator_for(whole)


def _required_in(node: Any) -> set[str]:
    """The members ``node`` (a ``not``) names as required, alone or in an ``anyOf``."""
    if not isinstance(node, dict) or set(node) - {"required", "anyOf"}:
        return set()
    names = set(node.get("required", []))
    for sub in node.get("anyOf", []):
        if isinstance(sub, dict) and set(sub) == {"required"}:
            names.update(sub["required"])
    return names


def _in_range(value: float, kw: dict[str, Any]) -> bool:
    return (kw.get("minimum") is None or value >= kw["minimum"]) and (kw.get("maximum") is None
                                                                    or value <= kw["maximum"])


def _merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Both sets of keywords at once (what ``allOf: [a, b]`` asks), as far as a draw needs."""
    out = dict(a)
    if "contains" in b or "$contains" in b:  # each contains of an allOf is a requirement of its own
        own = [(b["contains"], b.get("minContains", 1), b.get("maxContains"))] if "contains" in b else []
        out["$contains"] = [*a.get("$contains", []), *b.get("$contains", []), *own]
    if "not" in b or "$forbid" in b:  # members a "not" of "required" forms rules out
        out["$forbid"] = {*a.get("$forbid", ()), *b.get("$forbid", ()), *_required_in(b.get("not"))}
    for key, value in b.items():
        if key in ("not", "$forbid"):
            continue
        if key not in out:
            out[key] = value
        elif key == "properties":
            props = dict(out[key])
            for name, sub in value.items():
                props[name] = {"allOf": [props[name], sub]} if name in props else sub
            out[key] = props
        elif key == "required":
            out[key] = list(dict.fromkeys([*out[key], *value]))
        elif key in ("contains", "minContains", "maxContains", "$contains"):
            continue
        elif key in ("minItems", "minLength", "minimum"):
            out[key] = max(out[key], value)
        elif key in ("maxItems", "maxLength", "maximum"):
            out[key] = min(out[key], value)
        elif key == "type" and isinstance(out[key], list):
            common = [t for t in out[key] if t in (value if isinstance(value, list) else [value])]
            out[key] = common or value
        elif key in ("items", "additionalProperties") and isinstance(value, dict):
            out[key] = {"allOf": [out[key], value]}
        else:
            out[key] = value
    return out
