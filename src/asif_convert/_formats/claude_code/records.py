"""The records an IR session read from Claude Code stands for, rendered from its events.

Each event that holds records (its ``claude-code/1`` home lists them) is rendered into them:
the model response's blocks through the Anthropic dialect, cut into the records that held them;
the envelope taken from the record of the same type before it (records repeat their cwd, version,
session and client ids), the parent from the record before, the uuid and timestamp from the
event. The reader keeps, per record, only the difference between that rendering and the record
itself, so the rendering plus the difference is the record, value for value."""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator
from itertools import accumulate, pairwise
from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta

from asif_convert import ir
from asif_convert._dialects import anthropic
from asif_convert._dialects import usage as usage_counters
from asif_convert._dialects.common import CLIENT_RECORDS, Pieces, Style
from asif_convert._dialects.difference import Difference, apply
from asif_convert._formats.claude_code import NAMESPACE

TOOL_USE_RESULT = f"{NAMESPACE}:toolUseResult"  # structured-part schema of a result's toolUseResult
assert TOOL_USE_RESULT in CLIENT_RECORDS  # (never model input: request leaves it out)
RECORD_TYPE = f"{NAMESPACE}:"  # prefix of an extension event's type: the record type follows
SUMMARY_CATEGORY = "compaction_summary"  # the note that holds a compaction's summary
_Count = Annotated[int, Meta(ge=0)]
_convert = msgspec.convert


class Slot(msgspec.Struct, omit_defaults=True):
    """One record an event stands for: its position among the file's records (``n``), how many
    content blocks of the event's group it held (``b``), and the difference (``d``) between its
    rendering and the record."""

    n: _Count
    b: _Count = 1
    d: Any = None
    f: str | None = None  # the companion file it is in (a subagent's transcript), None for the session's own

    def json(self) -> dict[str, Any]:
        """``msgspec.to_builtins(self)``, holding the difference itself (JSON values already)
        instead of a copy."""
        out: dict[str, Any] = {"n": self.n}
        if self.b != 1:
            out["b"] = self.b
        if self.d is not None:
            out["d"] = self.d
        if self.f is not None:
            out["f"] = self.f
        return out


class Home(msgspec.Struct, omit_defaults=True):
    """An event's ``claude-code/1`` value: the records it stands for (``r``), how many events
    after it belong to its group (``g``: one model response's message, calls; one record's
    results), and the dialect's style options of the group's content (``o``)."""

    r: Annotated[list[Slot], Meta(min_length=1)]
    g: _Count = 0
    o: dict[str, Any] = msgspec.field(default_factory=dict)

    def json(self) -> dict[str, Any]:
        """``msgspec.to_builtins(self)``, holding the differences and options themselves (JSON
        values already, made for this home alone) instead of copies."""
        out: dict[str, Any] = {"r": [slot.json() for slot in self.r]}
        if self.g:
            out["g"] = self.g
        if self.o:
            out["o"] = self.o
        return out


class _Options(Style):
    """A home's options: the dialect's style, and ``str`` (a user's content written as a string)."""

    str: Literal[1] | msgspec.UnsetType = msgspec.UNSET


def home_of(event: ir.Event) -> Home | None:
    """The home an event's ``claude-code/1`` value says, when it has the shape the reader
    writes; else None: the value is foreign (edited, or another tool's), not ours to follow."""
    value = event.native.get(NAMESPACE) if event.native else None
    if not isinstance(value, dict):
        return None
    try:
        home = _convert(value, Home)
        _convert(home.o, _Options)
        for slot in home.r:
            if slot.d is not None:
                _convert(slot.d, Difference)
    except msgspec.ValidationError:
        return None
    return home


class Incoherent(Exception):
    """The records a session was read from no longer fit its events: the document was edited
    after it was read (an event removed, a home changed). ``event_id``: where it shows ("" for
    the session's own state). The records cannot be given back as they were."""

    def __init__(self, event_id: str, why: str) -> None:
        super().__init__(why)
        self.event_id, self.why = event_id, why


class _Recorded(msgspec.Struct):
    """The session's ``claude-code/1`` value: how many records its own file held."""

    records: _Count


def coherent_groups(doc: ir.Document) -> list[tuple[Home, list[ir.Event]]]:
    """Each event with records and the events of its group (as ``groups``), once it is sure
    they still fit: raise :class:`Incoherent` unless every home has the shape the reader writes,
    each group's events are its own (none has a home of its own), and the homes give every
    record of the session's file, and of each companion file, exactly once: a record derives
    its envelope and parent from the one before it, so one that is gone changes every record
    after it. (An event without a home, added since, is no record: it is not written, and said.)"""
    try:
        count = _convert(doc.native.get(NAMESPACE), _Recorded).records
    except msgspec.ValidationError:
        raise Incoherent("", "its record count is not a count") from None
    owners: dict[str | None, dict[int, str]] = {None: {}}  # file -> record -> the event holding it
    out: list[tuple[Home, list[ir.Event]]] = []
    events, i = doc.events, 0
    while i < len(events):
        ev = events[i]
        if not ev.native or NAMESPACE not in ev.native:
            i += 1
            continue
        home = home_of(ev)
        if home is None:
            raise Incoherent(ev.id, "its home is not of the shape asif-convert writes")
        group = events[i + 1:i + 1 + home.g]
        if len(group) < home.g or any(m.native and NAMESPACE in m.native for m in group):
            raise Incoherent(ev.id, f"the {home.g} event(s) of its group are no longer the ones after it")
        for slot in home.r:
            held = owners.setdefault(slot.f, {})
            if slot.n in held:
                raise Incoherent(ev.id, f"record {slot.n} is given twice")
            held[slot.n] = ev.id
        out.append((home, events[i:i + 1 + home.g]))
        i += 1 + home.g
    for f, held in owners.items():
        expected = count if f is None else max(held) + 1
        missing = next((n for n in range(expected) if n not in held), None)
        if missing is not None or len(held) != expected:
            after = [n for n in held if missing is None or n > missing]
            where = held[min(after)] if after else ""
            what = f"record {missing}" if missing is not None else f"a record past the {expected} it held"
            raise Incoherent(where, f"{what} of {f or 'the transcript'} is no longer in the session")
    return out


class Partial(msgspec.Struct):
    """A record as its events say it, before the envelope: what ``finish`` completes."""

    n: int
    f: str | None
    kind: str  # the record's type
    message: dict[str, Any] | None  # the message (None: an extension record, ``verbatim`` is it)
    uuid: str | None
    time: str | None
    tool_use_result: Any = msgspec.UNSET
    verbatim: Any = None
    diff: Any = None
    source: str | None = None  # a result's record: the uuid of the record holding its call
    counters: Any = None  # an assistant record's usage counters (the response's)


class Index:
    """What rendering needs of the whole session: resources by id, usage by event, executions."""

    def __init__(self, doc: ir.Document | None = None) -> None:
        """Of a whole document; or, with none, empty, for a reader to fill as it goes."""
        doc = doc or ir.Document(session=ir.Session(id="-"))
        self.resources = {r.id: msgspec.to_builtins(r) for r in doc.resources}
        self.usage = usage_counters.by_event(doc.extras.get("usage"))
        self.executions = {x.id: x for x in doc.executions}
        self.calls = {ev.body.call_id: ev.id for ev in doc.events if isinstance(ev.body, ir.ToolCall)}


def groups(events: list[ir.Event]) -> Iterator[tuple[Home, list[ir.Event]]]:
    """Each event with records, and the events of its group."""
    i = 0
    while i < len(events):
        home = home_of(events[i])
        if home is None:
            i += 1
            continue
        yield home, events[i:i + 1 + home.g]
        i += 1 + home.g


def partials(home: Home, members: list[ir.Event], index: Index, contents: list[Any] | None = None,
             check: bool = False) -> list[Partial]:
    """The records of one group, as its events say them. ``contents``, when the dialect vouches
    that rendering the group's pieces gives back its records' contents as they were (an exact
    split), are those contents, one per record: taken as the rendering instead of making it.
    ``check`` (a document to write): raise :class:`Incoherent` when the group's records no
    longer fit its events (a response's blocks not as many as its records held: a part removed
    or added since; several records for a record kept as it is)."""
    first = members[0]
    body = first.body
    if check and len(home.r) > 1 and isinstance(body, ir.Extension):
        raise Incoherent(first.id, "a record's events hold more than one record")
    if isinstance(body, ir.Extension):
        return [Partial(n=home.r[0].n, f=home.r[0].f, kind=_record_type(body), message=None, uuid=None, time=None,
                        verbatim=body.value, diff=home.r[0].d)]
    said, role = _said(first), _role(first, home)
    results = [ev.body for ev in members if isinstance(ev.body, ir.ToolResult)]
    if contents is None or role != said:
        blocks = _rendered(role, members, index, home.o)
        content: Any = blocks
        if role == "user" and home.o.get("str") and len(blocks) == 1 and blocks[0].get("type") == "text":
            content = blocks[0]["text"]
        starts = [0, *accumulate(slot.b for slot in home.r)]  # each record's first block among the group's
        # (a response's records held its blocks by count; a user record's count says nothing)
        if check and (said == "assistant" or len(home.r) > 1) and starts[-1] != len(blocks):
            raise Incoherent(first.id, f"its records held {starts[-1]} blocks, its events give {len(blocks)}")
        contents = [content] if role == "user" else [blocks[a:b] for a, b in pairwise(starts)]
    if role == "user":
        message = {"role": "user", "content": contents[0]}
        tur = next((p.value for r in results for p in r.parts
                    if isinstance(p, ir.StructuredPart) and p.schema == TOOL_USE_RESULT), msgspec.UNSET)
        slot = home.r[0]
        return [Partial(n=slot.n, f=slot.f, kind="user:result" if results else "user", message=message, uuid=first.id,
                        time=_time(first), tool_use_result=tur, diff=slot.d,
                        source=index.calls.get(results[0].call_id) if results else None)]
    return _assistant(home, members, contents, index)


def _said(first: ir.Event) -> str:
    body = first.body
    return "assistant" if isinstance(body, ir.Message) and body.role == "assistant" or isinstance(body, ir.ToolCall) \
        else "user"


def _role(first: ir.Event, home: Home) -> str:
    """The role of the records a group's first event stands for: a model response's over
    several records (one of server results alone too: its first event is a result); a
    subagent's prompt, said by the main agent, too (the differences stored with earlier
    sessions were taken from that rendering)."""
    if len(home.r) > 1 or first.actor_id == "claude" and not isinstance(first.body, ir.Note):
        return "assistant"
    return _said(first)


def _rendered(role: str, members: list[ir.Event], index: Index, options: dict[str, Any]) -> list[Any]:
    """The blocks of a group's content, rendered from its events through the dialect."""
    pieces = _pieces(role, members, index)
    if isinstance(members[0].body, ir.Note):  # a compaction summary: the user record that holds it
        pieces.parts = [msgspec.to_builtins(p) for p in members[0].body.parts]
    return anthropic.render(pieces, options)


def _record_type(body: ir.Extension) -> str:
    return body.type.removeprefix(RECORD_TYPE) if body.type.startswith(RECORD_TYPE) else body.type


def _time(event: ir.Event) -> str | None:
    return event.time if isinstance(event.time, str) else None


def _pieces(role: str, members: list[ir.Event], index: Index) -> Pieces:
    parts: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    for ev in members:
        body = ev.body
        if isinstance(body, ir.Message):
            parts += [msgspec.to_builtins(p) for p in body.parts]
        elif isinstance(body, ir.ToolCall):
            calls.append({"call_id": body.call_id, "tool_id": body.tool_id, "arguments": body.arguments})
        elif isinstance(body, ir.ToolResult):
            shown = [p for p in body.parts if not (isinstance(p, ir.StructuredPart) and p.schema == TOOL_USE_RESULT)]
            results.append({"call_id": body.call_id, "outcome": body.outcome,
                            "parts": [msgspec.to_builtins(p) for p in shown]})
    return Pieces(role=role, parts=parts, calls=calls, results=results, resources=index.resources)


def _assistant(home: Home, members: list[ir.Event], contents: list[Any], index: Index) -> list[Partial]:
    """A model response's records: its blocks as cut into the records that held them
    (``contents``), each with the message's id, model and usage (the client repeats them on
    every piece)."""
    first = members[0]
    execution = index.executions.get(first.execution_id) if isinstance(first.execution_id, str) else None
    model = execution.model.get("name") if execution is not None and isinstance(execution.model, dict) else None
    native_id = execution.id.removeprefix("response:") if execution is not None else None
    counters = index.usage.get(first.id, [])
    calls = {ev.body.call_id: ev for ev in members if isinstance(ev.body, ir.ToolCall)}
    out = []
    for k, (slot, held) in enumerate(zip(home.r, contents, strict=True)):
        anchor = next((calls[b["id"]] for b in held[:1]
                       if b.get("type") == "tool_use" and isinstance(b.get("id"), str) and b["id"] in calls),
                      first if k == 0 else None)
        message: dict[str, Any] = {"id": native_id, "type": "message", "role": "assistant", "model": model,
                                   "content": held, "stop_reason": None, "stop_sequence": None}
        out.append(Partial(n=slot.n, f=slot.f, kind="assistant", message=message,
                           uuid=anchor.id if anchor is not None else None,
                           time=_time(anchor) if anchor is not None else _time(first), diff=slot.d,
                           counters=counters))
    return out


class Envelope:
    """Completes rendered records in file order: each takes its envelope from the last record of
    its type, and its parent from the last record with a uuid."""

    def __init__(self) -> None:
        self.last_uuid: Any = None
        self.template: dict[str, dict[str, Any]] = {}

    def canonical(self, p: Partial) -> dict[str, Any]:
        if p.message is None:
            return p.verbatim if isinstance(p.verbatim, dict) else {"type": p.kind}
        template = self.template.get(p.kind) or self.template.get(p.kind.partition(":")[0]) or \
            self.template.get("*") or {}
        # in the order of the record before (records of one type share their key order), the
        # members its events say where it had them and after its other ones where it did not
        # (in this order), and not those of them this one lacks
        record = template.copy()
        record["parentUuid"] = self.last_uuid
        record["type"] = p.kind.partition(":")[0]
        record["message"] = self._message(p, template.get("message"))
        for key, value in (("uuid", p.uuid), ("timestamp", p.time), ("toolUseResult", p.tool_use_result),
                           ("sourceToolAssistantUUID", p.source)):
            if value is not msgspec.UNSET and (value is not None or key == "toolUseResult"):  # (a null one is one)
                record[key] = value
            elif key in record:
                del record[key]
        return record

    @staticmethod
    def _message(p: Partial, like: Any) -> dict[str, Any]:
        """An assistant message takes the keys of the one before (stop reasons, usage details),
        with its own id, model, content and counters."""
        message = p.message or {}
        if p.kind != "assistant" or not isinstance(like, dict):
            return usage_counters.insert(message, p.counters) if p.counters else message
        out = like.copy()
        out["id"], out["model"], out["content"] = message["id"], message["model"], message["content"]
        for k in ("type", "role"):
            out.setdefault(k, message[k])
        if not p.counters:
            out.pop("usage", None)
            return out
        return usage_counters.insert(out, p.counters, fresh=True)

    def seen(self, record: Any, kind: str) -> None:
        """The record as it is in the file (after its difference): what the next ones derive from."""
        if not isinstance(record, dict):
            return
        if isinstance(record.get("uuid"), str):
            self.last_uuid = record["uuid"]
        if kind.partition(":")[0] in ("user", "assistant") and isinstance(record.get("message"), dict):
            self.template[kind] = self.template[kind.partition(":")[0]] = self.template["*"] = record


class FileOrder:
    """The records of groups given in the order of their first record, put back in file order
    (the session's own file, then each companion's): each as soon as those before it are, so
    only the records a response's later pieces are waiting for are held at once."""

    def __init__(self) -> None:
        self.heap: list[tuple[str, int, int, Partial]] = []
        self.expected, self.tie = ("", 0), 0

    def push(self, batch: list[Partial]) -> Iterator[Partial]:
        for p in batch:
            if self.passes(p.f, p.n):  # (the usual case: the next in the file)
                yield p
                continue
            self.tie += 1
            heapq.heappush(self.heap, (p.f or "", p.n, self.tie, p))
        while self.heap and self.heap[0][:2] == self.expected:
            self.expected = (self.expected[0], self.expected[1] + 1)
            yield heapq.heappop(self.heap)[3]

    def passes(self, f: str | None, n: int) -> bool:
        """Whether record ``n`` of file ``f`` is the next in file order with none waiting before
        it; if so it counts as given (the caller takes it at once)."""
        if self.heap or self.expected != (f or "", n):
            return False
        self.expected = (self.expected[0], n + 1)
        return True

    def rest(self) -> Iterator[Partial]:
        """What is still held (a companion's records, records an edit left without neighbours)."""
        while self.heap:
            yield heapq.heappop(self.heap)[3]


def in_file_order(batches: Iterable[list[Partial]]) -> Iterator[Partial]:
    order = FileOrder()
    for batch in batches:
        yield from order.push(batch)
    yield from order.rest()


def render(doc: ir.Document, grouped: list[tuple[Home, list[ir.Event]]]) -> list[tuple[int, Any]]:
    """Every record of the session's own file its events stand for (``grouped``: its
    ``coherent_groups``), with its position, in file order (the records of its companion files
    are not part of it)."""
    index = Index(doc)
    batches = (partials(home, members, index, check=True) for home, members in grouped if home.r[0].f is None)
    envelope = Envelope()
    out = []
    for p in in_file_order(batches):
        record = apply(envelope.canonical(p), p.diff)
        envelope.seen(record, p.kind)
        out.append((p.n, record))
    return out
