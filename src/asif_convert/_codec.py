"""ASIF 0.4 JSON <-> IR, generically, from the IR's type annotations.

IR field names follow ASIF's where the concept is the same, so one walk serves every object.
Properties ASIF does not define land in ``unknown``; a property named after a registered native
namespace (``agent-continuity/1``) lands in ``native``. Events are the one special shape: ASIF's
``kind`` + ``data`` become the tagged ``body``, and native homes live in ``extensions``.
"""

from __future__ import annotations

import sys
import types
import typing
from functools import cache
from itertools import pairwise
from operator import attrgetter
from typing import Any, ClassVar, Union

import msgspec
from msgspec import NODEFAULT

from asif_convert import ir
from asif_convert.ir import NO_EXTRAS

_encode = msgspec.json.Encoder().encode

UNSET = msgspec.UNSET
UnsetType = msgspec.UnsetType
_EVENT_KEYS = ("id", "sequence", "actor_id", "kind", "causes", "provenance", "data", "time",
               "execution_id", "supersedes", "extensions")
_EVENT_KEY_SET = frozenset(_EVENT_KEYS)
_REQUIRED_EVENT_KEYS = frozenset(_EVENT_KEYS[:7])
# Root properties that are whole ASIF-only collections, kept verbatim in ``Document.extras``.
EXTRA_COLLECTIONS = ("configurations", "environments", "usage", "continuation", "streams", "external_bindings")
REQUIRED_EXTRAS = ("configurations", "environments")
_IR_ONLY_DOCUMENT_FIELDS = ("ir_version", "extras")  # Document fields with no ASIF property


@cache
def codec_for(namespaces: frozenset[str]) -> Codec:
    """The codec for a set of native namespaces (one per installed set of formats)."""
    return Codec(namespaces)


class Codec:
    def __init__(self, namespaces: frozenset[str]) -> None:
        self.namespaces = namespaces

    # -- IR -> JSON -------------------------------------------------------------------------

    def dump_document(self, doc: ir.Document, events: bool = True) -> dict[str, Any]:
        """The document as ASIF JSON; without ``events``, its ``events`` member is an empty list
        (at its place in the key order), for a caller that dumps them one by one."""
        out: dict[str, Any] = {"asif_version": "0.4"}
        plan = _plan(ir.Document)
        for name, shape in plan.fields:
            if name in _IR_ONLY_DOCUMENT_FIELDS:
                continue
            value = getattr(doc, name)
            if name == "events":
                out[name] = [self.dump_event(e) for e in value] if events else []
            elif value is not UNSET:
                out[name] = value if shape is _JSON else self._dump_value(shape, value)
        for name in REQUIRED_EXTRAS:
            out[name] = doc.extras.get(name, [])
        for name in EXTRA_COLLECTIONS:
            if name not in REQUIRED_EXTRAS and name in doc.extras:
                out[name] = doc.extras[name]
        self._dump_extras(doc, out)
        return out

    def dump_event(self, ev: ir.Event) -> dict[str, Any]:
        body = ev.body
        out: dict[str, Any] = {
            "id": ev.id, "sequence": ev.sequence, "actor_id": ev.actor_id, "kind": body.KIND,
            "causes": [self._dump(c) for c in ev.causes] if ev.causes else [],
            "provenance": self._dump(ev.provenance), "data": self._dump(body, tagged=False),
        }
        if ev.time is not UNSET:
            out["time"] = ev.time
        if ev.execution_id is not UNSET:
            out["execution_id"] = ev.execution_id
        if ev.supersedes is not UNSET:
            out["supersedes"] = self._dump(ev.supersedes)
        if ev.annotations is not UNSET or ev.native:
            out["extensions"] = {**(ev.annotations or {}), **ev.native}
        out.update(ev.unknown)
        return out

    def wire_event(self, ev: ir.Event) -> Any:
        """What :meth:`dump_event` gives, for msgspec to encode: where no node of the event has
        extras, a struct holding the IR's own nodes, which msgspec writes as the dump would, in
        C and without building a dict per node; else the dump."""
        body, provenance, supersedes = ev.body, ev.provenance, ev.supersedes
        if ev.unknown is NO_EXTRAS and _bare(body) and _bare(provenance) and all(map(_bare, ev.causes)) \
                and (supersedes is UNSET or _bare(supersedes)):
            extensions = UNSET if ev.annotations is UNSET and not ev.native else {**(ev.annotations or {}), **ev.native}
            return _WireEvent(ev.id, ev.sequence, ev.actor_id, body.KIND, ev.causes, provenance, body, ev.time,
                              ev.execution_id, supersedes, extensions)
        return self.dump_event(ev)

    def dump_envelope(self, ev: ir.Event) -> dict[str, Any]:
        """An event as ASIF JSON without the fields a host record carries itself
        (id, sequence, kind, time, execution_id) or native homes of other formats."""
        out = self.dump_event(ir.Event(**{f: getattr(ev, f) for f in ev.__struct_fields__ if f != "native"}))
        for key in ("id", "sequence", "kind", "time", "execution_id"):
            out.pop(key, None)
        return out

    def dump(self, node: ir.Node) -> dict[str, Any]:
        """Any IR node (not an event) as ASIF JSON."""
        return self._dump(node)

    def dump_body(self, body: ir.Body) -> dict[str, Any]:
        """An event body as ASIF ``data``."""
        return self._dump(body, tagged=False)

    def dump_part(self, part: ir.Part) -> dict[str, Any]:
        return self._dump(part)

    def load_body(self, kind: str, data: dict[str, Any]) -> ir.Body:
        # ``data`` does not carry the tag (the event does): a "kind" in it is an additional property
        return self._load(ir.BODY_TYPES[kind], data, tagged=False)

    def load_part(self, raw: dict[str, Any]) -> ir.Part:
        return self._load(_PART_TYPES[raw["kind"]], raw)

    def load_loss(self, raw: dict[str, Any]) -> ir.Loss:
        return self._load(ir.Loss, raw)

    def _dump(self, node: ir.Node, tagged: bool = True) -> dict[str, Any]:
        plan = _PLANS.get(node.__class__) or _plan(node.__class__)
        if plan.flat and _no_extras(node, plan):  # msgspec writes exactly what the walk below would, in C
            built: dict[str, Any] = msgspec.to_builtins(node)
            if not tagged and plan.tag is not None:
                del built["kind"]
            return built
        out: dict[str, Any] = {"kind": plan.tag} if tagged and plan.tag is not None else {}
        for name, shape in plan.fields:
            v = getattr(node, name)
            if v is UNSET:
                continue
            out[name] = v if shape is _JSON or v is None else self._dump_value(shape, v)
        self._dump_extras(node, out)
        return out

    def _dump_value(self, shape: tuple[str, Any], value: Any) -> Any:
        if shape[0] == "list":
            return [self._dump_value(shape[1], v) for v in value]
        return self._dump(value)

    @staticmethod
    def _dump_extras(node: ir.Node, out: dict[str, Any]) -> None:
        out.update(node.native)
        out.update(node.unknown)

    # -- JSON -> IR -------------------------------------------------------------------------

    def load_document(self, raw: dict[str, Any], *, release: bool = False) -> ir.Document:
        """The IR of an ASIF document. With ``release`` (the caller never looks at ``raw``
        again) each event leaves ``raw`` as it is read, so the IR takes the memory the input
        held. Events with the same provenance, byte for byte, share one node: most of a
        session's events have one or two provenances, and a node per event is an eighth of the
        IR."""
        data = {k: v for k, v in raw.items() if k != "asif_version"}
        extras = {k: data.pop(k) for k in EXTRA_COLLECTIONS if k in data}
        raw_events = data.pop("events")
        events = []
        shared: tuple[bytes, ir.Provenance | None] = (b"", None)  # the last provenance: its JSON, its node
        for k, event in enumerate(raw_events):
            if release:
                raw_events[k] = None
            spelled = _encode(event["provenance"])  # (not ==, which takes 1 and 1.0 for one value)
            if spelled != shared[0]:
                shared = (spelled, self._load(ir.Provenance, event["provenance"]))
            events.append(self.load_event(event, shared[1]))
        if release:
            raw_events.clear()
        if any(a.sequence > b.sequence for a, b in pairwise(events)):
            # ASIF's order is `sequence`, not array position (an input out of order is reported as
            # such, ASIF-R021): the IR holds the events in the order the session gives them
            events.sort(key=attrgetter("sequence"))
        # IR-only field names are plain additional properties in ASIF
        clashes = {k: data.pop(k) for k in _IR_ONLY_DOCUMENT_FIELDS if k in data}
        doc = self._load(ir.Document, data)
        doc.events = events
        doc.extras = extras
        if clashes:
            doc.unknown = {**doc.unknown, **clashes}
        return doc

    def load_event(self, raw: dict[str, Any], provenance: ir.Provenance | None = None) -> ir.Event:
        """The IR of one ASIF event; ``provenance``: its provenance, already loaded."""
        ev = ir.Event(
            id=raw["id"], sequence=raw["sequence"], actor_id=raw["actor_id"],
            body=self.load_body(raw["kind"], raw["data"]),
            causes=[self._load(ir.EventRef, c) for c in raw["causes"]],
            provenance=self._load(ir.Provenance, raw["provenance"]) if provenance is None else provenance,
        )
        keys = raw.keys()
        if not keys <= _REQUIRED_EVENT_KEYS:  # (set operations on the keys: one C call per event)
            if "time" in raw:
                ev.time = raw["time"]
            if "execution_id" in raw:
                ev.execution_id = raw["execution_id"]
            if "supersedes" in raw:
                ev.supersedes = self._load(ir.EventRef, raw["supersedes"])
            if "extensions" in raw:
                ext = raw["extensions"]
                native = {k: v for k, v in ext.items() if k in self.namespaces}
                if native:
                    ev.native = native
                rest = {k: v for k, v in ext.items() if k not in self.namespaces}
                if rest or not native:  # an empty map is kept; one holding only native homes is implied
                    ev.annotations = rest
            if not keys <= _EVENT_KEY_SET:
                ev.unknown = {k: v for k, v in raw.items() if k not in _EVENT_KEY_SET}
        return ev

    def _load(self, cls: type, raw: Any, tagged: bool = True) -> Any:
        plan = _plan(cls)
        keys = raw.keys()
        if tagged and plan.tag is not None and "kind" in raw:
            raw = {k: v for k, v in raw.items() if k != "kind"}
            keys = raw.keys()
        if keys <= plan.plain:  # only JSON-valued fields: nothing to convert, nothing unknown
            return cls(**raw)
        nested = keys - plan.plain
        if nested <= plan.nested.keys():
            kwargs = dict(raw)
            for key in nested:
                if kwargs[key] is not None:
                    kwargs[key] = self._load_value(plan.nested[key], kwargs[key])
            return cls(**kwargs)
        return self._load_walk(cls, raw, tagged)

    def _load_walk(self, cls: type, raw: Any, tagged: bool = True) -> Any:
        """Key by key: what ``cls`` declares becomes a field, the rest lands in a verbatim home."""
        plan = _plan(cls)
        kwargs: dict[str, Any] = {}
        unknown: dict[str, Any] = {}
        native: dict[str, Any] = {}
        for key, value in raw.items():
            shape = plan.shapes.get(key)
            if shape is not None:
                kwargs[key] = value if shape is _JSON or value is None else self._load_value(shape, value)
            elif key == "kind" and tagged and plan.tag is not None:
                continue
            elif key in self.namespaces:
                native[key] = value
            else:
                unknown[key] = value
        node = cls(**kwargs)
        if unknown:
            node.unknown = unknown
        if native:
            node.native = native
        return node

    def _load_value(self, shape: tuple[str, Any], value: Any) -> Any:
        kind, arg = shape
        if kind == "node":
            return self._load(arg, value)
        if kind == "parts":
            return self.load_part(value)
        if kind == "list":
            return [self._load_value(arg, v) for v in value]
        return value


class _WireEvent(msgspec.Struct):
    """An ASIF event as :meth:`Codec.dump_event` builds it (its members in that order), holding
    IR nodes without extras: msgspec leaves out what is UNSET, as the dump does."""

    # The IR gives most events of a session one provenance node and one empty list of causes:
    # as JSON values for output validation, one dict and one list too (``jsonio.json_values``).
    shared_members: ClassVar[tuple[str, ...]] = ("provenance", "causes")

    id: str
    sequence: int
    actor_id: str
    kind: str
    causes: list[ir.EventRef]
    provenance: ir.Provenance
    data: ir.Body
    time: str | UnsetType
    execution_id: str | UnsetType
    supersedes: ir.EventRef | UnsetType
    extensions: dict[str, Any] | UnsetType


def _bare(node: ir.Node) -> bool:
    """Whether msgspec writes ``node`` exactly as the codec's walk does (see ``_Plan.flat``)."""
    plan = _PLANS.get(node.__class__) or _plan(node.__class__)
    return plan.flat and _no_extras(node, plan)


_PART_TYPES = {c.__struct_config__.tag: c for c in typing.get_args(ir.Part)}
_JSON = ("json", None)


class _Plan(typing.NamedTuple):
    fields: tuple[tuple[str, tuple[str, Any]], ...]  # (name, shape), excluding the verbatim homes
    shapes: dict[str, tuple[str, Any]]
    plain: frozenset[str]  # fields holding JSON as is
    nested: dict[str, tuple[str, Any]]  # fields holding nodes (or lists of them)
    tag: str | None
    flat: bool  # msgspec.to_builtins writes such a node as the walk does, when no node in it has extras


_PLANS: dict[type, _Plan] = {}  # _plan's results, for the hot paths (a dict lookup, no call)


def _plan(cls: type[msgspec.Struct]) -> _Plan:
    found = _PLANS.get(cls)
    if found is None:
        found = _PLANS[cls] = _make_plan(cls)
    return found


def _make_plan(cls: type[msgspec.Struct]) -> _Plan:
    hints = field_types(cls)
    # (defaults: of the last fields; NODEFAULT where a keyword-only field after them has none)
    all_fields, defaults = cls.__struct_fields__, cls.__struct_defaults__
    default = dict(zip(all_fields[len(all_fields) - len(defaults):], defaults, strict=True))
    names = [f for f in all_fields if f not in ("unknown", "native")]
    tag = str(cls.__struct_config__.tag) if cls.__struct_config__.tag_field else None
    fields = tuple((n, _shape(hints[n])) for n in names)
    nested = {n: shape for n, shape in fields if shape is not _JSON}
    # omit_defaults would drop a default that is not UNSET (an empty list, a null) the walk writes
    flat = all(default.get(n, NODEFAULT) is NODEFAULT or default[n] is UNSET for n in names) and all(
        all(_plan(t).flat for t in _node_types(shape)) for shape in nested.values())
    return _Plan(fields=fields, shapes=dict(fields), plain=frozenset(n for n, s in fields if s is _JSON),
                 nested=nested, tag=tag, flat=flat)


def field_types(cls: type[msgspec.Struct]) -> dict[str, Any]:
    """The types of a struct's fields, as ``typing.get_type_hints`` gives them, each annotation's
    text evaluated once however many classes spell it (``get_type_hints`` compiles every one of
    every class and its bases again: a tenth of a small conversion's time). The IR uses no
    ``Annotated``, which ``get_type_hints`` would strip."""
    hints: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        for name, text in vars(klass).get("__annotations__", {}).items():
            hints[name] = _evaluated(text, klass.__module__) if isinstance(text, str) else text
    return {name: hints[name] for name in cls.__struct_fields__}


@cache
def _evaluated(text: str, module: str) -> Any:
    # what typing.get_type_hints does with a string annotation (our own source), once per text
    return eval(text, vars(sys.modules[module]))


def _node_types(shape: tuple[str, Any]) -> tuple[type, ...]:
    kind, arg = shape
    if kind == "list":
        return _node_types(arg)
    return tuple(_PART_TYPES.values()) if kind == "parts" else (arg,)


def _no_extras(node: ir.Node, plan: _Plan) -> bool:
    """Whether no node in this one's tree has extras (``unknown`` or ``native``): each holds
    the shared empty value, which msgspec leaves out (a dict of its own, even empty, it writes)."""
    if node.unknown is not NO_EXTRAS or node.native is not NO_EXTRAS:
        return False
    for name in plan.nested:
        value = getattr(node, name)
        if value is UNSET or value is None:
            continue
        for child in (value if value.__class__ is list else (value,)):
            if child.__class__ is list:
                return False
            child_plan = _PLANS.get(child.__class__) or _plan(child.__class__)
            if child.unknown is not NO_EXTRAS or child.native is not NO_EXTRAS or (
                    child_plan.nested and not _no_extras(child, child_plan)):
                return False
    return True


def _shape(hint: Any) -> tuple[str, Any]:
    """Classify an annotation once: a node, a part union, a list of something, or plain JSON."""
    origin = typing.get_origin(hint)
    if origin is Union or origin is types.UnionType:
        args = [a for a in typing.get_args(hint) if a not in (type(None), msgspec.UnsetType)]
        if len(args) == 1:
            return _shape(args[0])
        if all(isinstance(a, type) and issubclass(a, ir.Node) for a in args):
            return ("parts", None)
        return _JSON
    if origin is list:
        (arg,) = typing.get_args(hint)
        inner = _shape(arg)
        return ("list", inner) if inner is not _JSON else _JSON
    if isinstance(hint, type) and issubclass(hint, ir.Node):
        return ("node", hint)
    return _JSON
