"""Codex rollout lines -> IR.

Each ``response_item`` (what the model saw) becomes events through the OpenAI Responses dialect,
one line's item at a time; the smallest difference from the dialect's rendering of them, the
line's wrapper and the output string's encoding are kept on the line's first event
(``native["codex/1"]``), so the writer gives the line back equal in value. Every other line
(the header, turn settings, the UI's ``event_msg`` copies, compactions, unknown types) is kept
verbatim, with its place, in the document's ``native["codex/1"]``, with a loss.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import msgspec

from asif_convert import ir
from asif_convert._codec import codec_for
from asif_convert._dialects import difference, openai_responses
from asif_convert._dialects.common import Pieces, Split
from asif_convert._formats.codex import outputs
from asif_convert._formats.codex.state import State
from asif_convert._limits import NestedTooDeep, beyond_safe_integers
from asif_convert._version import __version__
from asif_convert.plugin import Context, Ledger, Lines, load_mapping

NAMESPACE = "codex/1"
TABLE_PATH = Path(__file__).with_name("codex-to-asif.toml")
_REPORTED = ir.Provenance(mode="reported", producer="codex")
# the actor of a message by its role; developer and system messages are what Codex injects
ACTORS = {"user": "user", "assistant": "assistant", "developer": "codex", "system": "codex", "tool": "tool"}
PARTICIPANTS: dict[str, ir.ParticipantKind] = {"user": "human", "assistant": "agent", "tool": "tool",
                                               "codex": "service", openai_responses.PROVIDER: "service"}
_CALL_ROLE = "assistant"
_WRAPPER = ("timestamp", "type", "payload")


def generation(first: Any) -> str | None:
    """``rollout`` (lines ``{timestamp, type, payload}``), ``legacy`` (a bare header
    ``{id, timestamp, ...}`` then bare items) or None (not a rollout)."""
    if not isinstance(first, dict):
        return None
    if first.get("type") == "session_meta" and isinstance(first.get("payload"), dict):
        return "rollout"
    if "type" not in first and "payload" not in first and isinstance(first.get("id"), str) \
            and isinstance(first.get("timestamp"), str):
        return "legacy"
    return None


def item_of(line: Any, gen: str) -> dict[str, Any] | None:
    """The Responses item a line carries, when it is a response item the dialect reads."""
    if gen == "rollout":
        if not (isinstance(line, dict) and line.get("type") == "response_item"):
            return None
        item = line.get("payload")
    else:
        item = line if isinstance(line, dict) and "record_type" not in line else None
    if not isinstance(item, dict) or not openai_responses.detect(item):
        return None
    return item if item.get("type", "message") in openai_responses.ITEM_TYPES else None


class Reader:
    def __init__(self, lines: Lines, ctx: Context) -> None:
        self.lines = lines
        self.ctx = ctx
        self.codec = codec_for(ctx.namespaces)
        self.ledger: Ledger = ctx.ledger(load_mapping(TABLE_PATH))
        self.gen = generation(lines.records[0][1]) or "rollout"
        self.events: list[ir.Event] = []
        self.resources: list[ir.Resource] = []
        self.kept: list[list[Any]] = []
        self.actors: dict[str, None] = {}
        self.tools: dict[str, str | None] = {}  # tool name -> who runs it (None: the client)
        self.called: set[str] = set()  # every call id so far
        self.open_calls: dict[str, None] = {}  # call ids with no result yet
        self.exit_codes = _exit_codes(lines, self.gen)
        meta = self._meta()
        self.sid = meta["id"] if isinstance(meta.get("id"), str) and meta["id"] else "codex-session"
        self.state = State(self._add_event, lambda: self.events[-1].id if self.events else None, self.sid)
        provider = meta.get("model_provider")
        self.provider = provider if isinstance(provider, str) else None

    def _meta(self) -> dict[str, Any]:
        first = self.lines.records[0][1]
        meta = first.get("payload") if self.gen == "rollout" else first
        return meta if isinstance(meta, dict) else {}

    def _add_event(self, eid: str, body: ir.Body, time: str | None) -> None:
        """An event of a line that is not a response item (a turn's start or end, new settings, a
        compaction): the client's own doing."""
        self.actors["codex"] = None
        self.events.append(ir.Event(id=eid, sequence=0, actor_id="codex", provenance=_REPORTED, body=body,
                                    time=time if time is not None else ir.UNSET,
                                    execution_id=body.execution_id if isinstance(body, ir.ExecutionTransition)
                                    else ir.UNSET))

    def read(self) -> ir.Document:
        records = self.lines.records
        for index, (number, line) in enumerate(records):
            item = item_of(line, self.gen)
            if item is None:
                self._keep(index, line)
                self.state.line(number, line, self.provider)
            else:
                self._item(index, number, line, item)
        self.state.finish()
        for problem in self.lines.problems:
            if problem.severity == "warning":
                self.ledger.add("+cut-line")
        return self._document()

    def _keep(self, index: int, line: Any) -> None:
        self.kept.append([index, line])
        kind = line.get("type") if isinstance(line, dict) else None
        if index == 0:
            self.ledger.add("session_meta")
        elif kind in ("turn_context", "compacted", "event_msg"):
            self.ledger.add(kind)
        elif kind == "response_item" and isinstance(line.get("payload"), dict):  # an item the dialect has no home for
            self.ledger.add("other", about=f"response_item/{line['payload'].get('type', '?')}")
        else:
            self.ledger.add("other", about=str(kind or line.get("record_type", "?")) if isinstance(line, dict) else "?")

    def _item(self, index: int, number: int, line: dict[str, Any], item: dict[str, Any]) -> None:
        eid = f"line-{number}"
        kind = item.get("type", "message")
        given = item.get("role")
        role: str = (given if isinstance(given, str) else "unknown") if kind == "message" \
            else "tool" if kind in openai_responses.OUTPUTS else _CALL_ROLE
        try:
            split = openai_responses.split(item, role, eid)
        except NestedTooDeep:
            split = None
        if split is None or any(map(beyond_safe_integers, (call.arguments for call in split.calls))):
            # (arguments parsed from their string, which the input's limits never looked into)
            self.kept.append([index, line])
            self.ledger.add("+unsafe-arguments", about=f"line {number}")
            return
        unpaired = self._unpaired(split)
        if unpaired is not None:  # ASIF pairs a result with one call, once: the line stays as it is
            self.kept.append([index, line])
            self.ledger.add("+unpaired", about=unpaired)
            return
        namespace = item.get("namespace") if kind == "function_call" else None
        if isinstance(namespace, str) and namespace and len(split.calls) == 1:
            # a tool of a namespace (Codex's multi-agent tools, an MCP server's): its id says both
            split.calls[0].name = f"{namespace}.{split.calls[0].name}"
        events = self._events(eid, role, split)
        native: dict[str, Any] = {}
        if self.gen == "rollout":
            stamp = line.get("timestamp")
            if isinstance(stamp, str) and stamp:
                events[0].time = stamp
            else:  # (the event's time holds a string one; ASIF has no empty time)
                native["t"] = stamp
            extra = {k: v for k, v in line.items() if k not in _WRAPPER}
            if extra or list(line)[:3] != list(_WRAPPER):
                native["w"] = {"keys": list(line), "extra": extra}
        if split.options:
            native["style"] = split.options
        if isinstance(namespace, str) and namespace and len(split.calls) == 1:
            native["ns"] = namespace
        encodings = self._outcomes(events)
        if encodings:
            native["enc"] = encodings
        # an exact split is its rendering key for key (the dialect vouches): nothing to keep
        diff = None if split.exact and not encodings and "ns" not in native else \
            difference.diff(render_item(self.codec, role, events, split.resources, native), item)
        if diff is not None:
            native["d"] = diff
        events[0].native = {NAMESPACE: native}
        if self.state.execution is not None:
            for ev in events:
                ev.execution_id = self.state.execution.id
        self.events += events
        self.resources += split.resources
        self.ledger.add("+dialects", "event", eid)
        for opaque_kind in split.opaque:
            self.ledger.add("+dialect-opaque-block", "event", eid, about=opaque_kind)

    def _unpaired(self, split: Split) -> str | None:
        """What makes an item's calls and results break ASIF's pairing, if anything: a call id
        used before, or a result of no earlier call (or of one already answered). Else the
        item's calls become open and its results close them."""
        calls = [c.call_id for c in split.calls]
        if len(set(calls)) != len(calls) or any(c in self.called for c in calls):
            return "repeated-call"
        open_calls = self.open_calls | dict.fromkeys(calls)
        answered = [r.call_id for r in split.results]
        if len(set(answered)) != len(answered) or any(r not in open_calls for r in answered):
            return "result-without-call"
        self.called.update(calls)
        self.open_calls = {c: None for c in open_calls if c not in answered}
        return None

    def _events(self, eid: str, role: str, split: Split) -> list[ir.Event]:
        out: list[ir.Event] = []

        def add(body: ir.Body, actor: str) -> None:
            self.actors[actor] = None
            out.append(ir.Event(id=eid if not out else f"{eid}/{len(out)}", sequence=0, actor_id=actor,
                                provenance=_REPORTED, body=body))

        if split.parts is not None:
            add(ir.Message(role=role if role in ACTORS else "unknown", parts=split.parts),  # type: ignore[arg-type]
                "codex" if _injected(split.parts) else ACTORS.get(role, "codex"))
        for call in split.calls:
            self.tools.setdefault(call.name, call.server)
            add(ir.ToolCall(call_id=call.call_id, tool_id=call.name, arguments=call.arguments,
                            arguments_status=call.status), call.server or "assistant")
        for result in split.results:
            add(ir.ToolResult(call_id=result.call_id, result_index=0, terminal=True, outcome=result.outcome,
                              parts=result.parts), result.server or "tool")
        return out

    def _outcomes(self, events: list[ir.Event]) -> dict[str, Any]:
        """Decode each result's output string: its text, its outcome; the JSON encoding's metadata
        (by result index) for the way back."""
        encodings: dict[str, Any] = {}
        k = -1
        for ev in events:
            if not isinstance(ev.body, ir.ToolResult):
                continue
            k += 1
            body = ev.body
            if len(body.parts) != 1 or not isinstance(body.parts[0], ir.TextPart) or body.outcome != "unknown":
                continue
            text, metadata, code = outputs.decode(body.parts[0].text)
            if metadata is not None:
                encodings[str(k)] = metadata
                body.parts = [ir.TextPart(text=text)]
            code = code if code is not None else self.exit_codes.get(body.call_id)
            if code is not None:
                body.outcome = outputs.outcome(code)
                self.ledger.add("+outcome", "event", ev.id)
        return encodings

    def _document(self) -> ir.Document:
        for sequence, ev in enumerate(self.events):
            ev.sequence = sequence
        sid = self.sid
        ids = [ev.id for ev in self.events]
        head = ids[-1] if ids else None
        if self.state.executions:
            self.actors.setdefault("assistant")  # who runs the turns
        self.ledger.add("+participants")
        self.ledger.add("+checkpoint", "checkpoint", "head:main")
        participants = [ir.Participant(id=a, kind=PARTICIPANTS.get(a, "unknown"), name=a) for a in self.actors]
        native = {"generation": self.gen, "lines": len(self.lines.records), "kept": self.kept}
        state = self.state
        extras = {"configurations": list(state.configurations.values()), "environments": state.environments,
                  **({"usage": state.usage} if state.usage else {})}
        for scope, key in (("executions", "+executions"), ("configuration", "+configurations"),
                           ("usage", "+usage"), ("contexts", "+compaction")):
            if scope in state.mapped:
                self.ledger.add(key)
        return ir.Document(
            executions=state.executions, contexts=state.contexts, extras=extras,
            capture=self._capture(sid),
            session=ir.Session(id=sid, native_ids=[ir.NativeId(provider="codex", namespace="session_id", value=sid)]),
            participants=participants, events=self.events, tools=self._tools(),
            branches=[ir.Branch(id="main", event_ids=ids, head_event_id=head)],
            resources=self.resources,
            checkpoints=[ir.Checkpoint(id="head:main", branch_id="main", at_event_id=head, knowledge="unknown",
                                       status="unknown")],
            coverage=_coverage(state.mapped),
            native={NAMESPACE: native},
        )

    def _tools(self) -> list[ir.Tool]:
        """The tools the calls name: a rollout records no contracts (input_schema true)."""
        if self.tools:
            self.ledger.add("+tools")
        return [ir.Tool(id=name, name=name, description="", input_schema=True,
                        server_identity=server if server is not None else ir.UNSET)
                for name, server in self.tools.items()]

    def _capture(self, sid: str) -> ir.Capture:
        digest = hashlib.sha256(msgspec.json.encode([line for _, line in self.lines.records])).hexdigest()
        producer = ir.Producer(name="asif-convert", version=__version__)
        return ir.Capture(id=f"asif-convert:{digest[:32]}", producer=producer, consistency="unknown",
                          boundary=f"Translation of one Codex CLI rollout of session {sid!r} "
                                   f"({len(self.lines.records)} lines, sha256 of their values {digest}). "
                                   "Only what the rollout holds is included.")


# user messages Codex writes itself at the start of turns: the environment, AGENTS.md and the user's
# configured instructions (they look like speech; the user did not say them)
_INJECTED = ("<environment_context>", "# AGENTS.md instructions", "<user_instructions>")


def _injected(parts: list[ir.Part]) -> bool:
    return bool(parts) and all(isinstance(p, ir.TextPart) and p.text.startswith(_INJECTED) for p in parts)


def _exit_codes(lines: Lines, gen: str) -> dict[str, int]:
    """Exit codes by call id, from ``exec_command_end`` and ``patch_apply_end`` lines."""
    found: dict[str, int] = {}
    if gen != "rollout":
        return found
    for _, line in lines.records:
        payload = line.get("payload") if isinstance(line, dict) and line.get("type") == "event_msg" else None
        if not isinstance(payload, dict) or not isinstance(payload.get("call_id"), str):
            continue
        if payload.get("type") == "exec_command_end" and type(payload.get("exit_code")) is int:
            found[payload["call_id"]] = payload["exit_code"]
        elif payload.get("type") == "patch_apply_end" and isinstance(payload.get("success"), bool):
            found[payload["call_id"]] = 0 if payload["success"] else 1
    return found


def line_of(event_id: str) -> int | None:
    """The line number an event's id says it was read from (``line-<n>``, ``line-<n>/...``,
    ``line-<n>#k``): the reader's own ids; None for an id of another form (an event added since)."""
    number = event_id.removeprefix("line-").partition("/")[0].partition("#")[0]
    return int(number) if event_id.startswith("line-") and number.isdigit() else None


def render_item(codec: Any, role: str, events: list[ir.Event],
                resources: list[ir.Resource] | dict[str, dict[str, Any]], state: dict[str, Any]) -> Any:
    """The item the dialect renders for a line's events in the line's style, with the output
    string re-encoded as the line had it (``enc``: the JSON encoding's metadata by result index)
    and a namespaced call's name split back into ``namespace`` and ``name`` (``ns``)."""
    parts = next((ev.body.parts for ev in events if isinstance(ev.body, ir.Message)), [])
    pieces = Pieces(role=role, parts=[codec.dump_part(p) for p in parts],
                    calls=[codec.dump_body(ev.body) for ev in events if isinstance(ev.body, ir.ToolCall)],
                    results=[codec.dump_body(ev.body) for ev in events if isinstance(ev.body, ir.ToolResult)],
                    resources=resources if isinstance(resources, dict) else {r.id: codec.dump(r) for r in resources})
    item = openai_responses.render(pieces, state.get("style") or {})
    metadata = (state.get("enc") or {}).get("0")
    if metadata is not None and isinstance(item, dict) and isinstance(item.get("output"), str):
        item = {**item, "output": outputs.encode_json(item["output"], metadata)}
    namespace = state.get("ns")
    if isinstance(namespace, str) and isinstance(item, dict) and isinstance(item.get("name"), str):
        item = {**item, "namespace": namespace, "name": item["name"].removeprefix(f"{namespace}.")}
    return item


def _coverage(mapped: set[str]) -> list[ir.Coverage]:
    said: dict[str, tuple[ir.CoverageStatus, str]] = {
        "participants": ("partial", "Participants synthesized from the roles of the response items."),
        "conversation": ("complete", "Every response item of the rollout (what the model saw)."),
        "branches": ("complete", "A rollout holds one history: one branch."),
        "resources": ("partial", "The images and opaque items of the response items; files the tools touched are not."),
        "native": ("complete", "Every other line kept verbatim under codex/1."),
        "tools": ("partial", "The tools the calls name; the rollout records no tool contracts."),
        "executions": ("partial", "One execution per turn the task_started lines open."),
        "configuration": ("partial", "The turn settings of turn_context lines, without instructions."),
        "contexts": ("partial", "The replacement history of each compaction; model requests are not recorded."),
        "usage": ("partial", "The token counts of each model request (token_count lines)."),
        "environment": ("partial", "The working folder and git state of the session header."),
    }
    other: tuple[ir.CoverageStatus, str] = ("not_inspected", "Not read from a Codex rollout.")
    return [ir.Coverage(scope=s, status=said[s][0] if s in said and (s in mapped or s not in _MAPPED) else other[0],
                        detail=said[s][1] if s in said and (s in mapped or s not in _MAPPED) else other[1])
            for s in ir.SCOPES]


_MAPPED = ("executions", "configuration", "contexts", "usage", "environment")  # partial only when the rollout has them
