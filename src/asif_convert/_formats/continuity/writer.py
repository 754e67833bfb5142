"""IR document -> agent-continuity export (JSON values).

Maps what continuity can express. Records that came from a continuity export get their
continuity-only fields back from ``native[NAMESPACE]``; anything else continuity cannot hold is
left to the residual (see ``residual.py``), which is computed from the difference.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from asif_convert import _dialects as dialects
from asif_convert import ir
from asif_convert._codec import Codec
from asif_convert._dialects import difference, usage
from asif_convert._formats.continuity import (
    ASIF_PARTS,
    CONTENT_SCHEMA,
    EVENT_TYPE,
    NAMESPACE,
    state,
    text_content,
)
from asif_convert._limits import json_in_text

ROLES = ("user", "assistant", "tool")
# A branch's created_at and updated_at when the session gives no time for it (both are required):
# the Unix epoch, documented as "no time known", each use a time_unknown loss (docs/decisions.md, 49)
NO_TIME = "1970-01-01T00:00:00Z"
# the continuity-only fields a resource read from a native state or an artifact always carries
_STATE_FIELDS = {"provider", "kind", "portable"}
_ARTIFACT_FIELDS = {"branch_id", "kind", "metadata", "created_at"}


def write(doc: ir.Document, codec: Codec, foreign: Callable[[str | None, str | None], None],
          origins: dict[str, list[list[str]]] | None = None,
          untimed: list[str] | None = None) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """(the export, the records that carry ASIF data: ``{"messages": ids, "events": ids}``).
    ``foreign(ref_type, ref_id)`` is told of each node whose continuity state is not of the
    declared shape: it is written as if it had none (the residual carries it verbatim).
    ``origins``, when given, gets for each collection written the JSON Pointers of the ASIF
    records each of its records came from, in order (for source pointers). ``untimed``, when
    given, gets the ids of the branches written with ``NO_TIME`` (no time known)."""
    writer = _Writer(doc, codec, foreign, origins)
    writer.untimed = untimed if untimed is not None else []
    export = writer.export()
    return export, {k: v for k, v in writer.carried.items() if v}


# the type each node's continuity state is read back through, and how a loss names the node
_STATES: dict[type, tuple[type[state._State], str | None]] = {
    ir.Document: (state.DocumentState, None), ir.Session: (state.SessionState, None),
    ir.Branch: (state.BranchState, "branch"), ir.Event: (state.EventState, "event"),
    ir.Context: (state.ContextState, "context"), ir.Resource: (state.ResourceState, "resource"),
}
# the keys of a message's state that tie it to the events a dialect split it into
GROUP_KEYS = ("dialect", "style", "diff", "template", "members", "role", "text_content", "text_part",
               "text_of", "text_sep")


class _Writer:
    def __init__(self, doc: ir.Document, codec: Codec, foreign: Callable[[str | None, str | None], None],
                 origins: dict[str, list[list[str]]] | None = None) -> None:
        self.doc = doc
        self.origins = origins
        self.members: dict[str, list[str]] = {}  # anchor event id -> the ids of its group's events
        self.codec = codec
        self.foreign = foreign
        self.sid = doc.session.id
        self.states: dict[int, dict[str, Any] | None] = {}  # id(node) -> its well-typed state
        self.carried: dict[str, list[str]] = {"messages": [], "events": []}  # records holding ASIF data
        self.written = {"messages": 0}  # records written so far
        self.untimed: list[str] = []  # branches written with NO_TIME
        self.events_by_id = {e.id: e for e in doc.events}
        self.resources_by_id = {r.id: r for r in doc.resources}
        self.groups: dict[str, tuple[str, str, Any]] = {}  # anchor event id -> (role, text, content_json)
        self.grouped: set[str] = set()  # events a dialect split out of one message, but its anchor
        self.usage = usage.by_event(doc.extras.get("usage"))  # provider counters, by message anchor
        self.calls_by_id: dict[str, str] | None = None  # call id -> tool id, made when first needed
        self.tool_names: dict[str, str] | None = None  # tool id -> its name, made when first needed
        for e in doc.events:
            self._claim_group(e)
        # IR id -> continuity id, where a collision renamed it on the way in
        self.branch_ids = {b.id: (self._nat(b) or {}).get("branch_id", b.id) for b in doc.branches}
        self.event_ids = {e.id: (self._nat(e) or {}).get("id", e.id) for e in doc.events}
        self.home: dict[str, str] = {}  # event id -> the first branch listing it
        for b in doc.branches:
            for eid in b.event_ids:
                self.home.setdefault(eid, b.id)

    def export(self) -> dict[str, Any]:
        doc = self.doc
        absent = set((self._nat(doc) or {}).get("absent", ()))
        out: dict[str, Any] = {"format": "agent-continuity-export", "session": self.session()}
        # with origins: where each record written came from in the ASIF document, by collection
        came: dict[str, list[list[str]]] = {k: [] for k in ("branches", "messages", "events", "checkpoints",
                                                                 "native_states", "artifacts")}
        track = self.origins is not None
        if "branches" not in absent:
            kept = [(i, b) for i, b in enumerate(doc.branches) if not (self._nat(b) or {}).get("synthesized")]
            out["branches"] = [self.branch(b) for _, b in kept]
            came["branches"] = [[f"/branches/{i}"] for i, _ in kept] if track else []
        messages, events = [], []
        at = {e.id: i for i, e in reversed(list(enumerate(doc.events)))} if track else {}  # an id's first event
        for i, e in enumerate(doc.events):
            if e.id in self.grouped:
                continue
            if isinstance(e.body, ir.Message) or e.id in self.groups:
                messages.append(self.message(e))
                if track:
                    came["messages"].append([f"/events/{at[m]}" for m in self.members.get(e.id, [e.id])])
            else:
                events.append(self.event(e))
                if track:
                    came["events"].append([f"/events/{i}"])
        out["messages"], out["events"] = messages, events
        out["checkpoints"] = [self.checkpoint(c) for c in doc.contexts]
        came["checkpoints"] = [[f"/contexts/{i}"] for i in range(len(doc.contexts))] if track else []
        states, artifacts = [], []
        for i, r in enumerate(doc.resources):  # only resources that came from the export have a continuity home
            n = self._nat(r) or {}
            if r.purpose == "native" and _STATE_FIELDS <= n.keys() and (state := self.native_state(r, n)):
                states.append(state)
                came["native_states"].append([f"/resources/{i}"])
            # (an artifact's path is never empty in continuity: a resource whose location is stays residual)
            elif r.purpose == "artifact" and r.original_location and _ARTIFACT_FIELDS <= n.keys():
                artifacts.append(self.artifact(r, n))
                came["artifacts"].append([f"/resources/{i}"])
        for key, records in (("native_states", states), ("artifacts", artifacts)):
            if key not in absent:
                out[key] = records
        if self.origins is not None:
            self.origins.update((k, v) for k, v in came.items() if k in out)
        return out

    # -- records ----------------------------------------------------------------------------

    def session(self) -> dict[str, Any]:
        s = self.doc.session
        n = self._nat(s) or {}
        first_branch = next(iter(self.branch_ids.values()), "main")
        out = {
            "session_id": s.id,
            "title": s.title if s.title is not ir.UNSET else "",
            "status": n.get("status", "active"),
            "active_branch_id": n.get("active_branch_id", first_branch),
        }
        if "metadata" in n:
            out["metadata"] = n["metadata"]
        return out

    def branch(self, b: ir.Branch) -> dict[str, Any]:
        n = self._nat(b) or {}
        out: dict[str, Any] = {"branch_id": self.branch_ids[b.id], "session_id": n.get("session_id", self.sid)}
        if b.fork is not ir.UNSET:
            out["parent_branch_id"] = self.branch_ids.get(b.fork.branch_id, b.fork.branch_id)
        elif "parent_branch_id" in n:
            out["parent_branch_id"] = n["parent_branch_id"]
        times = [t for t in (self._time(e) for e in b.event_ids) if t]
        out["name"] = n.get("name", b.id)
        out["status"] = n.get("status", "active")
        out["metadata"] = n.get("metadata", {})
        # Continuity requires both timestamps; without a source value the branch's own event
        # times are the closest evidence, and NO_TIME (a timestamp a consumer can parse, that
        # docs/mapping-asif-to-continuity.md documents as "no time known") says there is none.
        out["created_at"] = n.get("created_at", times[0] if times else NO_TIME)
        out["updated_at"] = n.get("updated_at", times[-1] if times else NO_TIME)
        if NO_TIME in (out["created_at"], out["updated_at"]) and not times:
            self.untimed.append(out["branch_id"])
        return out

    def message(self, ev: ir.Event) -> dict[str, Any]:
        n = self._nat(ev)
        out = self._common(ev, n, "message_id")
        group = self.groups.get(ev.id)  # a split message is written from its group, whatever event leads it
        if group:
            role, text, content, carried = (*group, False)
        else:
            body = ev.body
            assert isinstance(body, ir.Message), "an event outside a group is written as a message only if it is one"
            role = body.role
            text, content, carried = self._parts(body.parts)
        out["role"] = role if role in ROLES else "user"
        out["status"] = (n or {}).get("status", "complete")
        if content is not _NONE:
            out["content_json"] = content
        if carried:
            self.carried["messages"].append(out["message_id"])
        out["text_content"] = text
        for key in ("provider_message_id", "idempotency_key"):
            if n and key in n:
                out[key] = n[key]
        self.written["messages"] += 1
        # a record's own sequence; left out when it is its position; none for an ASIF message
        out["sequence"] = n.get("sequence", self.written["messages"]) if n is not None else ev.sequence + 1
        return self._tail(ev, n, out)

    def event(self, ev: ir.Event) -> dict[str, Any]:
        n = self._nat(ev)
        out = self._common(ev, n, "event_id")
        if n is None:
            out["sequence"] = ev.sequence + 1
        elif "sequence" in n:
            out["sequence"] = n["sequence"]
        body = ev.body
        value = getattr(body, "value", None)
        if (isinstance(body, ir.Extension) and body.type == EVENT_TYPE and not body.interpretation_required
                and isinstance(value, dict) and value.keys() == {"event_type", "payload"}
                and isinstance(value["event_type"], str) and value["event_type"]
                and isinstance(value["payload"], dict) and not body.unknown):
            out["event_type"], out["payload"] = value["event_type"], value["payload"]
        else:
            # An ASIF event continuity has no kind for: carried whole, less what the record holds.
            out["event_type"] = f"asif.{ev.kind}"
            out["payload"] = self.codec.dump_envelope(ev)
            self.carried["events"].append(out["event_id"])
        if n and "idempotency_key" in n:
            out["idempotency_key"] = n["idempotency_key"]
        return self._tail(ev, n, out)

    def checkpoint(self, ctx: ir.Context) -> dict[str, Any]:
        n = self._nat(ctx) or {}
        out: dict[str, Any] = {
            "checkpoint_id": n.get("checkpoint_id", ctx.id),
            "session_id": n.get("session_id", self.sid),
            "branch_id": self.branch_ids.get(ctx.branch_id, ctx.branch_id),
        }
        if "parent_event_id" in n:
            out["parent_event_id"] = n["parent_event_id"]
        elif ctx.at_event_id is not None:
            out["parent_event_id"] = self.event_ids.get(ctx.at_event_id, ctx.at_event_id)
        out["summary"] = n.get("summary", {})
        for key in ("token_estimate", "created_by", "created_at"):
            if key in n:
                out[key] = n[key]
        return out

    def native_state(self, r: ir.Resource, n: dict[str, Any]) -> dict[str, Any] | None:
        """The native state a resource came from; None when its text is no longer JSON (an edit),
        which leaves the resource to the residual."""
        out: dict[str, Any] = {"state_id": n.get("state_id", r.id), "session_id": n.get("session_id", self.sid),
                               "provider": n["provider"], "kind": n["kind"]}
        if r.text is not ir.UNSET:
            try:
                out["payload"] = json_in_text(r.text)
            except ValueError:
                return None
        out["portable"] = n["portable"]
        if "created_at" in n:
            out["created_at"] = n["created_at"]
        return out

    def artifact(self, r: ir.Resource, n: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {"artifact_id": n.get("artifact_id", r.id), "session_id": n.get("session_id", self.sid)}
        if "run_id" in n:
            out["run_id"] = n["run_id"]
        out.update(branch_id=n["branch_id"], kind=n["kind"], path=r.original_location)
        for key, value in (("sha256", r.sha256), ("size_bytes", r.bytes)):
            if key in n:  # what the export said when ASIF could not hold it (null, not a digest)
                out[key] = n[key]
            elif value is not ir.UNSET:
                out[key] = value
        out.update(metadata=n["metadata"], created_at=n["created_at"])
        return out

    # -- the converter's own state, read back -----------------------------------------------

    def _nat(self, node: ir.Node) -> dict[str, Any] | None:
        """The node's continuity state when it is of the declared shape; None (and reported)
        when it is foreign."""
        key = id(node)
        if key not in self.states:
            value = node.native.get(NAMESPACE)
            typed = None
            if value is not None:
                kind, ref_type = _STATES.get(type(node), (None, None))
                typed = state.decode(value, kind) if kind is not None else None
                if typed is None and kind is not None:
                    self.foreign(ref_type, getattr(node, "id", None) if ref_type else None)
            self.states[key] = typed
        return self.states[key]

    def _claim_group(self, ev: ir.Event) -> None:
        """Check the message a dialect split into events: every member present, of its kind,
        claimed once, and its content rendered; else its group keys are foreign."""
        n = self._nat(ev)
        if n is None or "dialect" not in n:
            return
        members = n.get("members") or (None if "template" in n else dialects.members(ev.id, self.events_by_id))
        group = None
        if members is not None:
            ids = _member_ids(members)
            if (ev.id in ids and len(set(ids)) == len(ids) and not self.grouped.intersection(ids)
                    and not any(i in self.groups for i in ids)):
                group = self._group(n, members, ev.id)
        if group is None:
            self.states[id(ev)] = {k: v for k, v in n.items() if k not in GROUP_KEYS}
            self.foreign("event", ev.id)
            return
        self.groups[ev.id] = group
        self.members[ev.id] = ids
        self.grouped.update(i for i in ids if i != ev.id)

    # -- helpers ----------------------------------------------------------------------------

    def _group(self, n: dict[str, Any], members: dict[str, Any], anchor: str) -> tuple[str, str, Any] | None:
        """(role, text_content, content_json) of a message a dialect split into events, rebuilt
        from those events; None when they no longer fit its state (an edit removed one)."""
        try:
            events = {k: [self.events_by_id[i] for i in members[k]] for k in ("call", "result")}
            message = self.events_by_id[members["msg"]] if members["msg"] else None
        except KeyError:
            return None
        if (message is not None and not isinstance(message.body, ir.Message)) \
                or not all(isinstance(e.body, ir.ToolCall) for e in events["call"]) \
                or not all(isinstance(e.body, ir.ToolResult) for e in events["result"]):
            return None
        group = ([message] if message else []) + events["call"] + events["result"]
        texts = text_content.join([p.text for e in group for p in ir.parts_of(e.body) if isinstance(p, ir.TextPart)],
                                  n.get("text_of"), n.get("text_sep", ""))
        calls = [self._named(self.codec.dump_body(e.body)) for e in events["call"]]
        role = n.get("role") or (message.body.role if message else "assistant" if calls else "tool")  # type: ignore[union-attr]
        results = [self.codec.dump_body(e.body) for e in events["result"]]
        body = self.codec.dump_body(message.body) if message else None
        parts = body["parts"] if body else []
        shown = n.get("text_part")
        if shown is not None and shown < len(parts) and parts[shown].get("kind") == "text":
            # the part that shows text_content: written back as text_content, not as content
            texts = parts[shown]["text"]
            n = {k: v for k, v in n.items() if k != "text_content"}
            parts = parts[:shown] + parts[shown + 1:]
        if "template" in n:  # written by the first release: a template with placeholders
            return self._first_release_group(n, members, role, texts, body, calls, results)
        named = {p["resource_id"] for body in (*([{"parts": parts}] if parts else []), *results)
                 for p in _all_parts(body) if p.get("kind") in ("resource", "opaque")}
        resources = {r: self.codec.dump(self.resources_by_id[r]) for r in named if r in self.resources_by_id}
        names = self._tool_names(results)
        pieces = dialects.Pieces(role=role, parts=parts, calls=calls, results=results, resources=resources,
                                 names=names)
        rendered = usage.insert(dialects.render(n["dialect"], pieces, n.get("style", {})), self.usage.get(anchor, []))
        content = difference.apply(rendered, n.get("diff"))
        return role, n.get("text_content", texts), content

    def _tool_names(self, results: list[dict[str, Any]]) -> dict[str, str]:
        """The names of the tools of the calls these results answer, by call id (the first call
        of an id)."""
        if self.calls_by_id is None:
            self.calls_by_id = {}
            for e in self.doc.events:
                if isinstance(e.body, ir.ToolCall):
                    self.calls_by_id.setdefault(e.body.call_id, e.body.tool_id)
        return {r["call_id"]: self._name_of(self.calls_by_id[r["call_id"]]) for r in results
                if r["call_id"] in self.calls_by_id}

    def _name_of(self, tool_id: str) -> str:
        """What the provider calls a tool: its declared ``name`` (an edit of it reaches every
        call and result the dialects write), else its id."""
        if self.tool_names is None:
            self.tool_names = {}
            for t in self.doc.tools:
                if isinstance(t.name, str) and t.name:
                    self.tool_names.setdefault(t.id, t.name)
        return self.tool_names.get(tool_id, tool_id)

    def _named(self, call: dict[str, Any]) -> dict[str, Any]:
        """A dumped call whose ``tool_id`` is the tool's name, which the dialects write."""
        name = self._name_of(call["tool_id"]) if isinstance(call.get("tool_id"), str) else None
        return call if name is None or name == call["tool_id"] else {**call, "tool_id": name}

    def _first_release_group(self, n: dict[str, Any], members: dict[str, Any], role: str, texts: str,
                             body: Any, calls: list[Any], results: list[Any]) -> tuple[str, str, Any] | None:
        try:
            resources = [self.codec.dump(self.resources_by_id[r]) for r in members.get("res", ())]
            pieces = {"msg": [body] if body else [], "call": calls, "result": results, "res": resources}
            filled = dialects.fill(n["template"], pieces)
            now = dialects.Pieces(role=role, parts=[], calls=calls, results=results, resources={})
            return role, n.get("text_content", texts), dialects.restate(n["dialect"], filled, now)
        except (KeyError, IndexError, TypeError, ValueError):
            return None  # a placeholder that names no piece

    def _time(self, event_id: str) -> str | None:
        ev = self.events_by_id.get(event_id)
        return ev.time if ev is not None and ev.time is not ir.UNSET else None

    def _common(self, ev: ir.Event, n: dict[str, Any] | None, id_field: str) -> dict[str, Any]:
        n = n or {}
        out: dict[str, Any] = {id_field: self.event_ids[ev.id], "session_id": n.get("session_id", self.sid)}
        if ev.execution_id is not ir.UNSET:
            out["run_id"] = ev.execution_id
        elif "run_id" in n:
            out["run_id"] = n["run_id"]
        home = self.home.get(ev.id)
        if home is not None and not n.get("branch_id_absent"):
            out["branch_id"] = self.branch_ids[home]
        return out

    @staticmethod
    def _tail(ev: ir.Event, n: dict[str, Any] | None, out: dict[str, Any]) -> dict[str, Any]:
        if n and "sha256" in n:
            out["sha256"] = n["sha256"]
        if ev.time is not ir.UNSET:
            out["created_at"] = ev.time
        return out

    def _parts(self, parts: list[ir.Part]) -> tuple[str, Any, bool]:
        """(text_content, content_json, whether it carries ASIF parts): the continuity shape when
        the parts have it, else the ASIF parts verbatim in content_json under ``asif.parts/1``
        (the record is then listed in the export's ``carried/1`` entry)."""
        first = parts[0] if parts else None
        if isinstance(first, ir.TextPart) and _plain(first) and first.media_type is ir.UNSET:
            rest = parts[1:]
            if not rest:
                return first.text, _NONE, False
            if (len(rest) == 1 and isinstance(rest[0], ir.StructuredPart) and rest[0].schema == CONTENT_SCHEMA
                    and _plain(rest[0])):
                return first.text, rest[0].value, False
        text = "\n".join(p.text for p in parts if isinstance(p, ir.TextPart))
        return text, {ASIF_PARTS: [self.codec.dump_part(p) for p in parts]}, True


_NONE = object()


def _all_parts(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for p in body.get("parts", ()) if isinstance(p, dict)]


def _member_ids(members: dict[str, Any]) -> list[str]:
    return [i for i in (members["msg"], *members["call"], *members["result"]) if i]


def _plain(node: ir.Node) -> bool:
    return not node.unknown and not node.native
