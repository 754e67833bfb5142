"""agent-continuity export (parsed, schema-valid JSON) -> IR document.

What continuity cannot say but the IR (and ASIF) need is synthesized minimally and reported:
participants from roles, executions from run ids, one merged event order, head checkpoints,
branches that are referenced but not listed. Continuity-only fields ride along verbatim in
``native[NAMESPACE]`` and are reported as losses of meaning.
"""

from __future__ import annotations

import bisect
import hashlib
from functools import cache
from typing import Any

import msgspec

from asif_convert import _dialects as dialects
from asif_convert import ir
from asif_convert._artifacts import FileSource
from asif_convert._codec import Codec
from asif_convert._dialects import difference, usage
from asif_convert._formats.continuity import (
    ASIF_PARTS,
    CONTENT_SCHEMA,
    EVENT_TYPE,
    NAMESPACE,
    SOURCE_PRODUCER,
    artifacts,
    placeholders,
    pointers,
    state,
    text_content,
)
from asif_convert._formats.continuity.coverage import coverage
from asif_convert._formats.continuity.ordering import merge
from asif_convert._formats.continuity.residual import Carried
from asif_convert._ledger import Ledger
from asif_convert._limits import NestedTooDeep, beyond_safe_integers
from asif_convert._validation.schemas import is_asif
from asif_convert._version import __version__

# Synthesized participants: role -> (participant id, kind). "runtime" acts for continuity events.
ROLE_ACTORS: dict[str, tuple[str, ir.ParticipantKind]] = {
    "user": ("user", "human"), "assistant": ("assistant", "agent"), "tool": ("tool", "tool")}
RUNTIME: tuple[str, ir.ParticipantKind] = ("runtime", "service")

_REPORTED = ir.Provenance(mode="reported", producer=SOURCE_PRODUCER)


class _Ids:
    """Hands out ids unique within one target collection; a clash gets a deterministic new id."""

    def __init__(self) -> None:
        self.taken: set[str] = set()

    def claim(self, wanted: str, suffix: str) -> str:
        new, n = wanted, 1
        while new in self.taken:
            new = f"{wanted}~{suffix}" if n == 1 else f"{wanted}~{suffix}{n}"
            n += 1
        self.taken.add(new)
        return new


def read(raw: dict[str, Any], digest: str, ledger: Ledger, codec: Codec, *, files: FileSource | None = None,
         source_id: str | None = None, carried: Carried | None = None,
         first_release_forks: bool = False, release: bool = False) -> ir.Document:
    """``digest`` identifies the source (see ``canonical_digest``); ``codec`` reads the ASIF
    parts and event bodies that an ASIF-born export carries; ``files`` gives artifact files;
    with ``source_id`` every event points at its record in that resource (the export itself).
    ``first_release_forks`` infers fork points as the first release did (from messages and
    events alike), to recognize the forks of documents it wrote. With ``release`` the caller
    will not look at ``raw`` again: its messages and events are let go as they are read, so
    that the IR takes the memory the input held (their lists keep their length, as ``None``)."""
    reader = _Reader(raw, digest, ledger, codec, files, source_id)
    reader.release = release
    reader.first_release_forks = first_release_forks
    reader.listed = carried or Carried()
    return reader.document()


def canonical_digest(raw: dict[str, Any]) -> str:
    """SHA-256 of the export's JSON value in canonical form (sorted keys, compact), so that the
    capture id depends on what the export says, not on how the file was formatted."""
    return hashlib.sha256(msgspec.json.encode(raw, order="sorted")).hexdigest()


class _Reader:
    def __init__(self, raw: dict[str, Any], digest: str, ledger: Ledger, codec: Codec,
                 files: FileSource | None = None, source_id: str | None = None) -> None:
        self.raw = raw
        self.files = files
        self.pointers = pointers.Pointers(raw, source_id) if source_id else None
        self.ledger = ledger
        self.codec = codec
        self.digest = digest
        self.sid = raw["session"]["session_id"]
        self.active = raw["session"]["active_branch_id"]
        self.listed_branches = raw.get("branches")
        self.branch_ids: dict[str, str] = {}  # continuity branch id -> IR branch id
        self.branch_events: dict[str, list[str]] = {}  # IR branch id -> own event ids
        self.synth_branches: list[str] = []
        self.runs: dict[str, None] = {}
        self.roles: dict[str, None] = {}
        self.uses_runtime = False  # whether any record is acted by the synthesized runtime participant
        self.carried = False  # whether any record carries ASIF events or parts (which may reference more)
        self.calls: dict[str, str | None] = {}  # call id -> its branch, for dialect results (None: answered)
        self.kinds: dict[str, str] = {}  # the id and kind of every event read so far
        self.tasks: set[str] = set()  # the tasks of the task updates read so far
        self.call_tools: dict[str, str] = {}  # call id -> the tool it calls (its name), for results that name it
        # branch -> (call id, tool) of the last dialect call made on it, if a message may answer it
        # by the tool's name alone (an OpenAI Chat legacy function_call), else None
        self.last_calls: dict[str, tuple[str, str] | None] = {}
        # branch -> (call id, tool) of the calls of its last model turn that the responses after
        # it answer by name and order (Gen AI function calls without an id; dialects.Split.turn)
        self.turns: dict[str, list[tuple[str, str]]] = {}
        self.requests: set[str] = set()  # decision request ids carried as ASIF events
        self.tools: dict[str, str | None] = {}  # tool names seen in dialect content, in order -> server identity
        self.servers: dict[str, None] = {}  # who ran tools for the caller (dialects.common: server identities)
        self.resource_ids = _Ids()
        self.dialect_resources: list[ir.Resource] = []
        self.usage: list[dict[str, Any]] = []  # ASIF usage entries of provider message objects
        self.message_ids: set[str] = set()  # IR events that hold a message record's own fields
        # split messages' events, by first, and whether each has the id the writer looks for
        self.groups: dict[str, tuple[str | None, list[str], list[str], bool]] = {}
        self.dialects: dict[str, None] = {}  # the content dialects messages were split in
        self.first_release_forks = False
        self.release = False  # let go of each message and event record once read
        self.positions = {"messages": 0}  # records read so far
        self.record_seq: dict[str, Any] = {}  # IR event id -> its record's sequence
        self.listed = Carried()  # the records the writer listed as carrying ASIF data

    # -- helpers ---------------------------------------------------------------------------

    def _native(self, rec: dict[str, Any], ref: tuple[str, str], coll: str, keys: tuple[str, ...]) -> dict[str, Any]:
        """Copy continuity-only fields (those present) verbatim, reporting each as a loss of meaning.
        A value the writer implies is left out: a message's status ``complete`` and a message's
        ``sequence`` that is its position in the messages array (counting from 1). An event's
        sequence is optional in continuity: it is always kept, so that absent stays absent."""
        out = {}
        implied: dict[str, Any] = _NOTHING_IMPLIED
        if coll == "messages":
            self.positions[coll] += 1
            implied = {"status": "complete", "sequence": self.positions[coll]}
        if coll in ("messages", "events"):
            self.record_seq[ref[1]] = rec.get("sequence")
        add, (ref_type, ref_id) = self.ledger.add, ref
        for k, loss_key in _loss_keys(coll, keys):
            if k in rec:
                value = rec[k]
                if k not in implied or type(value) is not type(implied[k]) or value != implied[k]:
                    out[k] = value
                add(loss_key, ref_type, ref_id)
        if rec["session_id"] != self.sid:
            out["session_id"] = rec["session_id"]
            add(f"{coll}[].session_id", ref_type, ref_id)
        return out

    def _branch_of(self, rec: dict[str, Any], coll: str, ref: tuple[str, str], native: dict[str, Any]) -> str:
        bid = rec.get("branch_id")
        if bid is None:
            native["branch_id_absent"] = True
            self.ledger.add(f"+{coll}-without-branch", *ref)
            bid = self.active
        return self._ensure_branch(bid)

    def _ensure_branch(self, bid: str) -> str:
        if bid not in self.branch_ids:
            self.branch_ids[bid] = bid
            self.branch_events[bid] = []
            self.synth_branches.append(bid)
            if self.listed_branches is not None:  # else every branch is synthesized, and said so
                self.ledger.add("+unlisted-branch", "branch", bid)
        return self.branch_ids[bid]

    def _execution(self, rec: dict[str, Any]) -> str | ir.UnsetType:
        run = rec.get("run_id")
        if isinstance(run, str) and run:  # ASIF ids are never empty: an empty run_id names no execution
            self.runs[run] = None
            return run
        return ir.UNSET

    # -- the document ----------------------------------------------------------------------

    def document(self) -> ir.Document:
        raw = self.raw
        branches = self._listed_branches()
        self._ensure_branch(self.active)
        for b in branches:  # a parent that is not listed is synthesized like any unlisted branch
            if "parent" in b.native[NAMESPACE]:
                self._ensure_branch(b.native[NAMESPACE]["parent"])
        events = self._events()
        contexts = self._contexts(events)
        branches += [ir.Branch(id=b, event_ids=[], head_event_id=None, native={NAMESPACE: {"synthesized": True}})
                     for b in self.synth_branches]
        for b in branches:
            b.event_ids = self.branch_events[b.id]
            b.head_event_id = b.event_ids[-1] if b.event_ids else None
        self._forks(branches, events)
        resources = self._native_states() + self._artifacts() + self.dialect_resources
        tools = [ir.Tool(id=name, name=name, description="", input_schema=True,
                         server_identity=server if server is not None else ir.UNSET)
                 for name, server in self.tools.items()]
        for name in self.tools:
            self.ledger.add("+tools", "tool", name)
        participants = self._participants()
        executions = [
            ir.Execution(id=r, participant_id="assistant", status="unknown", context_ids=[]) for r in self.runs
        ]
        for r in self.runs:
            self.ledger.add("+executions", "execution", r)
        checkpoints = [
            ir.Checkpoint(id=f"head:{b.id}", branch_id=b.id, at_event_id=b.head_event_id,
                          knowledge="unknown", status="unknown")
            for b in branches
        ]
        for c in checkpoints:
            self.ledger.add("+head-checkpoints", "checkpoint", c.id)

        session = raw["session"]
        doc = ir.Document(
            capture=self._capture(),
            session=ir.Session(
                id=self.sid,
                title=session["title"],
                native_ids=[ir.NativeId(provider=SOURCE_PRODUCER, namespace="session_id", value=self.sid)],
                lineage=self._lineage(events),
                native={NAMESPACE: self._native_session(session)},
            ),
            participants=participants,
            events=events,
            branches=branches,
            executions=executions,
            contexts=contexts,
            resources=resources,
            tools=tools,
            checkpoints=checkpoints,
        )
        # A split message's members are stored only when the writer would not find them by id.
        # It would when each has the id it looks for and no event follows under the next one
        # (the usual case, told without a map of every event).
        taken, by_id = self.ids.taken, None
        for anchor, (msg, calls, results, as_wanted) in self.groups.items():
            if as_wanted and f"{anchor}/call/{len(calls)}" not in taken \
                    and f"{anchor}/result/{len(results)}" not in taken:
                continue
            by_id = by_id or {ev.id: ev for ev in events}
            members = {"msg": msg, "call": calls, "result": results}
            if dialects.members(anchor, by_id) != members:
                by_id[anchor].native[NAMESPACE]["members"] = members
        if self.carried:  # only ASIF records carried in the export can reference what it lacks
            placeholders.add_missing(doc, lambda ref_type, rid: self.ledger.add("+placeholders", ref_type, rid))
        if self.usage:
            doc.extras["usage"] = self.usage
        absent = [k for k in ("branches", "native_states", "artifacts") if k not in raw]
        if absent:
            doc.native = {NAMESPACE: {"absent": absent}}
        doc.coverage = coverage(doc, self.raw, self.dialects)
        return doc

    def _native_session(self, session: dict[str, Any]) -> dict[str, Any]:
        out = {"status": session["status"], "active_branch_id": session["active_branch_id"]}
        self.ledger.add("session.status")
        self.ledger.add("session.active_branch_id", "branch", self.branch_ids[self.active])
        if "metadata" in session:
            out["metadata"] = session["metadata"]
            self.ledger.add("session.metadata")
        return out

    def _listed_branches(self) -> list[ir.Branch]:
        out = []
        ids = _Ids()
        for rec in self.listed_branches or ():
            bid = ids.claim(rec["branch_id"], "branch")
            ref = ("branch", bid)
            native = self._native(rec, ref, "branches", ("name", "status", "metadata", "created_at", "updated_at"))
            if bid != rec["branch_id"]:
                native["branch_id"] = rec["branch_id"]
                self.ledger.add("branches[].branch_id", *ref)
            parent = rec.get("parent_branch_id")
            if parent == "":  # names no branch (ASIF ids are never empty): kept as written
                native["parent_branch_id"] = parent
                self.ledger.add("branches[].parent_branch_id", *ref)
            elif parent is not None:
                native["parent"] = parent  # becomes the fork once all branches exist
            elif "parent_branch_id" in rec:
                native["parent_branch_id"] = None
            self.branch_ids.setdefault(rec["branch_id"], bid)
            self.branch_events[bid] = []
            out.append(ir.Branch(id=bid, event_ids=[], head_event_id=None, native={NAMESPACE: native}))
        return out

    # -- messages and events, merged into one order -----------------------------------------

    def _events(self) -> list[ir.Event]:
        self.ids = _Ids()
        out: list[ir.Event] = []
        order: list[Any] = merge(self.raw["messages"], self.raw["events"], self.ledger)
        release = self.release and self.pointers is None
        if release:  # the records are read once, here: each one goes as soon as it is read
            for records in (self.raw["messages"], self.raw["events"]):
                records[:] = [None] * len(records)  # in place: a copy of the export may share the list
        for k, (coll, rec) in enumerate(order):
            if release:
                order[k] = None
            first = len(out)
            if coll == "messages":
                out += self._message(rec, self.ids.claim(rec["message_id"], "message"), len(out))
            else:
                out.append(self._event(rec, self.ids.claim(rec["event_id"], "event"), len(out)))
            self.kinds.update((ev.id, ev.kind) for ev in out[first:])
            if self.pointers is not None:
                self.pointers.point(out[first:], rec)
        return out

    def _common(self, ev: ir.Event, rec: dict[str, Any], coll: str, id_field: str, native: dict[str, Any]) -> str:
        """Fields every message and event record shares; returns the IR branch the record is on."""
        ref = ("event", ev.id)
        if ev.id != rec[id_field]:
            native["id"] = rec[id_field]
            self.ledger.add(f"{coll}[].{id_field}", *ref)
        if "run_id" in rec and not rec["run_id"]:  # null or "": no execution_id to carry it
            native["run_id"] = rec["run_id"]
        if "created_at" in rec:
            ev.time = rec["created_at"]
        branch = self._branch_of(rec, coll, ref, native)
        self.branch_events[branch].append(ev.id)
        ev.native = {NAMESPACE: native}
        return branch

    def _message(self, rec: dict[str, Any], eid: str, seq: int) -> list[ir.Event]:
        role = rec["role"]
        self.roles[role] = None
        split = self._split(rec, eid)
        if split is not None:
            return self._group(rec, eid, seq, split)
        return [self._plain_message(rec, eid, seq)]

    def _split(self, rec: dict[str, Any], eid: str) -> dialects.Split | None:
        """The message's content in a known dialect, when its tool calls are new and its results
        answer calls made earlier on the same branch (else it stays one message, reported)."""
        branch = rec.get("branch_id", self.active)
        awaiting = [c for c in self.turns.get(branch, ()) if self.calls.get(c[0]) == branch]  # unanswered
        if rec["role"] == "assistant":  # a later turn: what an earlier one called is no longer answered by name
            self.turns.pop(branch, None)
        if "content_json" not in rec:
            return None
        try:
            split = dialects.split(rec["content_json"], rec["role"], eid, awaiting)
        except NestedTooDeep:  # a tool call's argument text that no ASIF value can hold
            self.ledger.add("+dialect-deep-arguments", "event", eid)
            return None
        if split is None:
            return None
        if any(map(beyond_safe_integers, (call.arguments for call in split.calls))):
            # (arguments parsed from a string: the input's own limits never saw these numbers)
            self.ledger.add("+dialect-unsafe-integer", "event", eid)
            return None
        last = self.last_calls.get(branch)
        if split.answers is not None and last is not None and last[1] == split.answers \
                and self.calls.get(last[0]) == branch:
            dialects.answering(split, last[0])  # the unanswered call it names, made last on its branch
        seen: set[str] = set()
        for call in split.calls:
            if call.call_id in self.calls or call.call_id in seen:
                self.ledger.add("+dialect-duplicate-call", "event", eid)
                return None
            seen.add(call.call_id)
        answered: set[str] = set()
        for result in split.results:  # a second result for one call, even in this message, is not mapped
            # (a call of this very message counts: its event comes before every result's, as
            # for the tools a provider runs, whose calls and results share one message)
            if (self.calls.get(result.call_id) != branch and result.call_id not in seen) \
                    or result.call_id in answered:
                self.ledger.add("+dialect-orphan-result", "event", eid)
                return None
            answered.add(result.call_id)
        for call in split.calls:
            self.calls[call.call_id] = branch
            self.call_tools[call.call_id] = call.name
        if split.calls:  # the last call made on the branch, if a message may answer it by its tool's name
            last_call = split.calls[-1]
            self.last_calls[branch] = (last_call.call_id, last_call.name) if last_call.call_id == split.by_name \
                else None
        for result in split.results:
            self.calls[result.call_id] = None  # answered: a second result stays a message
        if split.turn:
            self.turns[branch] = split.turn
        return split

    def _group(self, rec: dict[str, Any], eid: str, seq: int, split: dialects.Split) -> list[ir.Event]:
        """One message as its events: the message (if it has parts of its own), then one event
        per tool call and per tool result; the first carries the message's fields and template."""
        shown, picked, text_part = self._shown_text(rec, split)
        events, members, as_wanted = self._member_events(rec, eid, seq, split)
        self._claim_resources(rec, split, events)
        anchor = events[0]
        native = self._group_state(rec, split, events, members, text_part)
        self.groups[anchor.id] = (members["msg"], members["call"], members["result"], as_wanted)
        _text_state(native, rec, shown, picked, text_part, self.ledger, anchor.id)
        anchor.execution_id = self._execution(rec)
        self.message_ids.add(anchor.id)
        branch = self._common(anchor, rec, "messages", "message_id", native)
        for ev in events[1:]:
            ev.time, ev.execution_id = anchor.time, anchor.execution_id
            self.branch_events[branch].append(ev.id)
        self.ledger.add("+dialects", "event", anchor.id)
        for kind in split.opaque:  # one loss per block type, naming every message that holds one
            self.ledger.add("+dialect-opaque-block", "event", anchor.id, about=f"{split.dialect}/{kind}")
        return events

    @staticmethod
    def _shown_text(rec: dict[str, Any], split: dialects.Split) -> tuple[str, tuple[list[int], str] | None, int | None]:
        """(the pieces' texts joined, how text_content picks among them, the index of the text
        part added to show it): text_content is the pieces' texts, some of them, or those joined
        otherwise (the state says which); failing that, what says something no piece shows is
        visible too: a text part of its own, after the message's parts, that the writer turns
        back into text_content."""
        texts = [p.text for p in (*(split.parts or ()), *(q for r in split.results for q in r.parts))
                 if isinstance(p, ir.TextPart)]
        shown = "".join(texts)
        picked = text_content.pick(texts, rec["text_content"]) if rec["text_content"] != shown else None
        text_part = None
        if picked is None and rec["text_content"] not in shown:
            split.parts = split.parts if split.parts is not None else []
            text_part = len(split.parts)
            split.parts.append(ir.TextPart(text=rec["text_content"]))
        return shown, picked, text_part

    def _member_events(self, rec: dict[str, Any], eid: str, seq: int,
                       split: dialects.Split) -> tuple[list[ir.Event], dict[str, Any], bool]:
        """(the message's events, their ids by member, whether every one has the id the writer
        looks for first): the message, its tool calls, its tool results, in that order."""
        role = rec["role"]
        actor = ROLE_ACTORS[role][0]
        members: dict[str, Any] = {"msg": None, "call": [], "result": []}
        events: list[ir.Event] = []
        as_wanted = True

        def member_id(key: str, k: int) -> str:
            nonlocal as_wanted
            if not events:
                return eid
            wanted = f"{eid}/{key}/{k}"
            claimed = self.ids.claim(wanted, key)
            as_wanted = as_wanted and claimed == wanted
            return claimed

        def add(event_id: str, body: ir.Body, actor_id: str) -> str:
            events.append(ir.Event(id=event_id, sequence=seq + len(events), actor_id=actor_id,
                                   provenance=_REPORTED, body=body))
            return event_id

        if split.parts is not None:
            members["msg"] = add(eid, ir.Message(role=role, parts=split.parts), actor)
        for k, call in enumerate(split.calls):
            self.tools.setdefault(call.name, call.server)
            body = ir.ToolCall(call_id=call.call_id, tool_id=call.name, arguments=call.arguments,
                               arguments_status=call.status)
            members["call"].append(add(member_id("call", k), body, actor))
            if call.status == "partial":  # the text received so far is not JSON: the state keeps it
                self.ledger.add("+partial-arguments", "event", members["call"][-1])
        for k, result in enumerate(split.results):
            if result.server is None:
                self.roles["tool"] = None
            answer = ir.ToolResult(call_id=result.call_id, result_index=0, terminal=True, outcome=result.outcome,
                                   parts=result.parts)
            rid = member_id("result", k)
            if result.server is not None:  # a tool the provider (or a server it called) ran
                self.servers[result.server] = None
            members["result"].append(add(rid, answer, result.server or ROLE_ACTORS["tool"][0]))
        return events, members, as_wanted

    def _claim_resources(self, rec: dict[str, Any], split: dialects.Split, events: list[ir.Event]) -> None:
        """The split's resources, under ids of their own (renamed on a collision, and the parts
        that name them with them)."""
        renamed = {}
        for res in split.resources:
            new_id = self.resource_ids.claim(res.id, "resource")
            renamed[res.id] = new_id
            res.id = new_id
            self.dialect_resources.append(res)
            if self.pointers is not None:
                self.pointers.point_resource(res, rec, _REPORTED)
        if any(old != new for old, new in renamed.items()):
            for ev in events:
                for part in ir.parts_of(ev.body):
                    if isinstance(part, ir.ResourcePart | ir.OpaquePart):
                        part.resource_id = renamed.get(part.resource_id, part.resource_id)

    def _group_state(self, rec: dict[str, Any], split: dialects.Split, events: list[ir.Event],
                     members: dict[str, Any], text_part: int | None) -> dict[str, Any]:
        """The continuity state of the message's first event: the record's fields, the dialect,
        its style, the provider's counters and the difference from the rendering."""
        role = rec["role"]
        anchor = events[0]
        native = self._native(rec, ("event", anchor.id), "messages",
                              ("sequence", "status", "provider_message_id", "idempotency_key", "sha256"))
        native["dialect"] = split.dialect
        self.dialects[split.dialect] = None
        if split.options:
            native["style"] = split.options
        counters = usage.extract(rec["content_json"])
        if counters:
            self.usage += usage.entries(counters, anchor.id, self.codec.dump(_REPORTED))
        diff = None if split.exact and not counters else \
            self._difference(rec, role, split, events, members, text_part, counters)
        if diff is not None:
            native["diff"] = diff
            if difference.says(diff):
                self.ledger.add("+dialect-unmapped-text", "event", anchor.id)
        if split.parts is None and role != ("assistant" if split.calls else "tool"):
            native["role"] = role  # the record's role, where the events do not imply it
        return native

    def _difference(self, rec: dict[str, Any], role: str, split: dialects.Split, events: list[ir.Event],
                    members: dict[str, Any], text_part: int | None,
                    counters: usage.Counters) -> dict[str, Any] | None:
        """What makes the record's content_json differ from the dialect's rendering of its pieces
        (the text part that shows text_content is not one of them)."""
        dump = self.codec.dump_body
        parts = split.parts if members["msg"] else None  # the message event's own parts
        pieces = dialects.Pieces(
            role=role,
            parts=[self.codec.dump_part(p) for k, p in enumerate(parts) if k != text_part] if parts else [],
            calls=[dump(ev.body) for ev in events if isinstance(ev.body, ir.ToolCall)],
            results=[dump(ev.body) for ev in events if isinstance(ev.body, ir.ToolResult)],
            resources={r.id: self.codec.dump(r) for r in split.resources},
            # the tool of the call each result answers, as the writer renders it from the tool's name
            names={r.call_id: self.call_tools[r.call_id] for r in split.results if r.call_id in self.call_tools},
        )
        rendered = usage.insert(dialects.render(split.dialect, pieces, split.options), counters)
        return difference.diff(rendered, rec["content_json"])

    def _plain_message(self, rec: dict[str, Any], eid: str, seq: int) -> ir.Event:
        role = rec["role"]
        content = rec.get("content_json")
        if self.listed.message(rec["message_id"]) and isinstance(content, dict) \
                and content.keys() == {ASIF_PARTS} and state.asif_parts(content[ASIF_PARTS]):
            # parts written by the continuity writer for an ASIF message with no continuity shape
            parts = [self.codec.load_part(p) for p in content[ASIF_PARTS]]
            self.carried = True
        else:
            parts = [ir.TextPart(text=rec["text_content"])]
            if "content_json" in rec:
                parts.append(ir.StructuredPart(schema=CONTENT_SCHEMA, value=content))
                self.ledger.add("messages[].content_json", "event", eid)
        native = self._native(rec, ("event", eid), "messages",
                              ("sequence", "status", "provider_message_id", "idempotency_key", "sha256"))
        ev = ir.Event(id=eid, sequence=seq, actor_id=ROLE_ACTORS[role][0], provenance=_REPORTED,
                      body=ir.Message(role=role, parts=parts), execution_id=self._execution(rec))
        self.message_ids.add(eid)
        self._common(ev, rec, "messages", "message_id", native)
        return ev

    def _event(self, rec: dict[str, Any], eid: str, seq: int) -> ir.Event:
        native = self._native(rec, ("event", eid), "events", ("sequence", "idempotency_key", "sha256"))
        ev = self._asif_event(rec, eid, seq)
        if ev is None:
            self.ledger.add("events[].payload", "event", eid)
            self.uses_runtime = True
            body = ir.Extension(type=EVENT_TYPE, value={"event_type": rec["event_type"], "payload": rec["payload"]},
                                interpretation_required=False)
            ev = ir.Event(id=eid, sequence=seq, actor_id=RUNTIME[0], provenance=_REPORTED, body=body)
        ev.execution_id = self._execution(rec)
        self._common(ev, rec, "events", "event_id", native)
        return ev

    def _asif_event(self, rec: dict[str, Any], eid: str, seq: int) -> ir.Event | None:
        """The ASIF event an ``asif.<kind>`` record carries whole in its payload (as the
        continuity writer puts it), when the payload really is one."""
        kind = rec["event_type"].removeprefix("asif.")
        if kind == rec["event_type"] or kind == "message" or not self.listed.event(rec["event_id"]):
            return None
        raw = {**rec["payload"], "id": eid, "sequence": seq, "kind": kind}
        if not is_asif("event", raw) or any(k in raw for k in ("time", "execution_id")) \
                or not self._resolves(raw) or not self._bound(raw):
            return None
        self.carried = True
        if kind == "task_update":
            self.tasks.add(raw["data"]["task_id"])
        return self.codec.load_event(raw)

    def _resolves(self, raw: dict[str, Any]) -> bool:
        """Whether a carried event's references to other events and tasks name records read
        before it, as ASIF requires of them (causes once each, a correction of the same kind,
        provenance inputs, task dependencies): an export written without a residual carries the
        record alone, so one that names what the export no longer holds (an edit removed it)
        stays an opaque continuity event, as an unbound result does (docs/decisions.md, 48)."""
        causes = [c["event_id"] for c in raw.get("causes") or () if _local(c)]
        if len(set(causes)) != len(causes) or any(c not in self.kinds for c in causes):
            return False
        prior = raw.get("supersedes")
        if isinstance(prior, dict) and _local(prior) and self.kinds.get(prior["event_id"]) != raw["kind"]:
            return False
        inputs = raw["provenance"].get("inputs") or ()
        if any(_local(i) and i["event_id"] not in self.kinds for i in inputs):
            return False
        data = raw["data"]
        deps = data.get("dependencies") or () if raw["kind"] == "task_update" else ()
        return len(set(deps)) == len(deps) and data.get("task_id") not in deps \
            and all(d in self.tasks for d in deps)

    def _bound(self, raw: dict[str, Any]) -> bool:
        """Whether a carried result, resolution or call-bound request answers something earlier in
        the export (it may have answered an external binding that did not travel): ASIF forbids
        unbound ones, so those stay opaque continuity events."""
        data, kind = raw["data"], raw["kind"]
        if kind == "tool_call":
            self.calls.setdefault(data["call_id"], None)
        elif kind == "decision_request":
            self.requests.add(data["request_id"])
        if kind == "tool_result" or (kind == "decision_request" and "call_id" in data):
            return data["call_id"] in self.calls
        if kind == "decision_resolution":
            return data["request_id"] in self.requests
        return True

    # -- checkpoints become summary contexts ------------------------------------------------

    def _contexts(self, events: list[ir.Event]) -> list[ir.Context]:
        if not self.raw["checkpoints"]:  # (the maps below are a walk over every event)
            return []
        # A continuity id may name a message and an event at once; the message wins, as it
        # claimed the original id first.
        by_source_id: dict[str, str] = {}
        for ev in events:
            if NAMESPACE in ev.native:  # records of the export (not events a dialect split out)
                by_source_id.setdefault(ev.native[NAMESPACE].get("id", ev.id), ev.id)
        on_branch = {eid: b for b, eids in self.branch_events.items() for eid in eids}
        ids = _Ids()
        out = []
        for rec in self.raw["checkpoints"]:
            cid = ids.claim(rec["checkpoint_id"], "checkpoint")
            ref = ("context", cid)
            native = self._native(rec, ref, "checkpoints", ("summary", "token_estimate", "created_by", "created_at"))
            if cid != rec["checkpoint_id"]:
                native["checkpoint_id"] = rec["checkpoint_id"]
                self.ledger.add("checkpoints[].checkpoint_id", *ref)
            branch = self._ensure_branch(rec["branch_id"])
            at = by_source_id.get(rec.get("parent_event_id"))
            if at is None or on_branch.get(at) != branch:
                at = None
                if "parent_event_id" in rec:
                    native["parent_event_id"] = rec["parent_event_id"]
                    self.ledger.add("checkpoints[].parent_event_id", *ref)
            self.ledger.add("+checkpoint-contexts", *ref)
            out.append(ir.Context(id=cid, branch_id=branch, at_event_id=at, purpose="summary",
                                  fidelity="unknown", native={NAMESPACE: native}))
        return out

    def _forks(self, branches: list[ir.Branch], events: list[ir.Event]) -> None:
        """Turn parent_branch_id into a fork; the divergence point is inferred from the sequences
        of messages only: events are numbered apart, so theirs say nothing about messages'."""
        seq_of = {ev.id: self.record_seq.get(ev.id) for ev in events
                  if ev.id in self.message_ids or (self.first_release_forks and NAMESPACE in ev.native)}
        latest: dict[str, tuple[list[int], list[str]]] = {}  # parent -> sorted seqs, last record up to each
        for b in branches:
            native = b.native.get(NAMESPACE, {})
            if "parent" not in native:
                continue
            if native["parent"] == b.id:  # its own parent: no fork can say that; kept as written
                native["parent_branch_id"] = native.pop("parent")
                self.ledger.add("branches[].parent_branch_id", "branch", b.id)
                continue
            parent = self._ensure_branch(native.pop("parent"))
            own = [s for s in map(seq_of.get, b.event_ids) if s is not None]
            point = None
            if own:
                if parent not in latest:
                    latest[parent] = _latest_by_sequence(self.branch_events[parent], seq_of)
                seqs, last = latest[parent]
                k = bisect.bisect_left(seqs, min(own))  # the parent's records numbered below the branch's first
                point = last[k - 1] if k else None
            self.ledger.add("+fork-point-inferred" if point else "+fork-point-unknown", "branch", b.id)
            b.fork = ir.Fork(session_id=self.sid, capture_id=self._capture_id(), branch_id=parent,
                             event_id=point, inclusive=point is not None)

    # -- resources --------------------------------------------------------------------------

    def _native_states(self) -> list[ir.Resource]:
        out = []
        for rec in self.raw.get("native_states") or ():
            rid = self.resource_ids.claim(rec["state_id"], "native-state")
            ref = ("resource", rid)
            native = self._native(rec, ref, "native_states", ("provider", "kind", "portable", "created_at"))
            if rid != rec["state_id"]:
                native["state_id"] = rec["state_id"]
                self.ledger.add("native_states[].state_id", *ref)
            res = ir.Resource(id=rid, media_type="application/json", purpose="native", availability="unavailable",
                              native={NAMESPACE: native})
            if "payload" in rec:
                text = _json_text(rec["payload"])
                res.availability = "embedded"
                res.text = text
                res.bytes, res.sha256 = _size_digest(text.encode())
            else:
                res.explanation = "The export lists this native state without its payload."
                self.ledger.add("+native-state-without-payload", *ref)
            if self.pointers is not None:
                self.pointers.point_resource(res, rec, _REPORTED)
            out.append(res)
        return out

    def _artifacts(self) -> list[ir.Resource]:
        out = []
        for rec in self.raw.get("artifacts") or ():
            rid = self.resource_ids.claim(rec["artifact_id"], "artifact")
            ref = ("resource", rid)
            native = self._native(rec, ref, "artifacts", ("kind", "metadata", "created_at", "branch_id"))
            if rid != rec["artifact_id"]:
                native["artifact_id"] = rec["artifact_id"]
                self.ledger.add("artifacts[].artifact_id", *ref)
            if "run_id" in rec:
                native["run_id"] = rec["run_id"]
                self.ledger.add("artifacts[].run_id", *ref)
            res = ir.Resource(
                id=rid, media_type="application/octet-stream", purpose="artifact", availability="unavailable",
                original_location=rec["path"],
                explanation="The export records this artifact's path and metadata only; its content was not exported.",
                native={NAMESPACE: native},
            )
            if not artifacts.embed(res, rec, self.files, self.ledger, ref):
                self.ledger.add("artifacts[].path", *ref)
            size, sha = rec.get("size_bytes"), rec.get("sha256")
            if isinstance(size, int):
                res.bytes = size
            elif "size_bytes" in rec:
                native["size_bytes"] = size
            if isinstance(sha, str) and _is_sha256(sha):
                res.sha256 = sha
            elif "sha256" in rec:
                native["sha256"] = sha
                self.ledger.add("artifacts[].sha256", *ref)
            if self.pointers is not None:
                self.pointers.point_resource(res, rec, _REPORTED)
            out.append(res)
        return out

    # -- participants, capture, lineage, coverage -------------------------------------------

    def _participants(self) -> list[ir.Participant]:
        wanted = [ROLE_ACTORS[r] for r in ("user", "assistant", "tool") if r in self.roles]
        if self.runs and "assistant" not in self.roles:
            wanted.append(ROLE_ACTORS["assistant"])
        if self.uses_runtime:
            wanted.append(RUNTIME)
        wanted.sort(key=lambda p: ("user", "assistant", "tool", "runtime").index(p[0]))
        out = []
        for pid, kind in wanted:
            self.ledger.add("+participants", "participant", pid)
            out.append(ir.Participant(id=pid, kind=kind))
        for server in self.servers:  # the provider's servers, or MCP servers it called, that ran tools
            self.ledger.add("+participants", "participant", server)
            out.append(ir.Participant(id=server, kind="service", name=server))
        return out

    def _capture_id(self) -> str:
        return f"asif-convert:{self.digest[:32]}"

    def _capture(self) -> ir.Capture:
        raw = self.raw
        counts = ", ".join(
            f"{len(raw.get(k) or ())} {k.replace('_', ' ')}"
            for k in ("messages", "events", "branches", "checkpoints", "native_states", "artifacts")
        )
        return ir.Capture(
            id=self._capture_id(),
            producer=ir.Producer(name="asif-convert", version=__version__),
            consistency="unknown",
            boundary=(
                f"Translation of one agent-continuity export of session {self.sid!r} "
                f"(sha256 {self.digest}): {counts}. Only what the export contains is included; "
                "the runtime's own state beyond the export was not observed."
            ),
        )

    def _lineage(self, events: list[ir.Event]) -> list[ir.Lineage]:
        # A translation entry must name the last source event included; an export with no
        # messages or events cannot name one, so it carries no lineage entry.
        records = [ev for ev in events if NAMESPACE in ev.native]
        if not records:
            return []
        last = records[-1]
        return [ir.Lineage(relation="translation", session_id=self.sid,
                           capture_id=f"agent-continuity-export:sha256:{self.digest}",
                           event_id=last.native[NAMESPACE].get("id", last.id), inclusive=True)]


_NOTHING_IMPLIED: dict[str, Any] = {}


def _local(ref: Any) -> bool:
    """An event reference that names an event of this document (no session or capture)."""
    return isinstance(ref, dict) and "session_id" not in ref and "capture_id" not in ref


@cache
def _loss_keys(coll: str, keys: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """Each continuity-only field of a collection with its ledger key."""
    return tuple((k, f"{coll}[].{k}") for k in keys)


def _latest_by_sequence(event_ids: list[str], seq_of: dict[str, Any]) -> tuple[list[int], list[str]]:
    """For a branch's records: their sequence numbers sorted, and for each prefix of that order the
    record that comes last in the branch, so "last record numbered below N" is one bisection."""
    numbered = sorted((seq, pos) for pos, e in enumerate(event_ids) if (seq := seq_of.get(e)))
    seqs, last, best = [], [], -1
    for seq, pos in numbered:
        best = max(best, pos)
        seqs.append(seq)
        last.append(event_ids[best])
    return seqs, last


def _json_text(value: Any) -> str:
    return msgspec.json.encode(value).decode()


def _size_digest(data: bytes) -> tuple[int, str]:
    return len(data), hashlib.sha256(data).hexdigest()


def _is_sha256(s: str) -> bool:
    return len(s) == 64 and all(c in "0123456789abcdef" for c in s)


def _text_state(native: dict[str, Any], rec: dict[str, Any], shown: str, picked: tuple[list[int], str] | None,
                text_part: int | None, ledger: Ledger, anchor_id: str) -> None:
    """How the message's state says its text_content: the text part that shows it, which of
    the pieces' texts it is and how they are joined, or the text itself."""
    if text_part is not None:
        native["text_part"] = text_part
        ledger.add("+text-content-part", "event", anchor_id)
    elif picked is not None:
        native["text_of"] = picked[0]
        if picked[1]:
            native["text_sep"] = picked[1]
    elif rec["text_content"] != shown:  # says less than the pieces, in no way they show
        native["text_content"] = rec["text_content"]
