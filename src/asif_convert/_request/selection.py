"""What goes into a request: a session's model inputs, provider-neutral.

``select`` picks either one recorded context's inputs exactly, or a branch's selected history
(the parent's events up to each fork point, then the branch's own) turned into inputs, and the
instructions and tools that apply. What the selection cannot carry is a ``translation`` loss.
The rules are written for readers in docs/request.md ("What goes in").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import msgspec

from asif_convert import ir
from asif_convert._codec import codec_for
from asif_convert._dialects.common import CLIENT_RECORDS
from asif_convert._errors import InvalidInput, Problem, RequestRefused, UsageError, pointer
from asif_convert._registry import namespaces

Role = Literal["user", "assistant", "system", "developer", "tool", "unknown"]
Pending = Literal["refuse", "drop", "as-error"]
PERMISSIVE_SCHEMA: dict[str, Any] = {"type": "object"}
# Event kinds with no model input of their own and no meaning a request loses: lifecycle,
# bookkeeping and explanation (a note "carries no execution meaning").
_SILENT = frozenset({"execution_transition", "configuration_change", "context_checkpoint", "note"})


@dataclass(frozen=True, slots=True)
class Input:
    """One model input, provider-neutral: the shape of an ASIF 0.4 `context_input`."""

    id: str
    kind: Literal["message", "tool_call", "tool_result"]
    role: Role
    parts: tuple[ir.Part, ...]
    source_events: tuple[ir.Event, ...]  # the IR events it stands for (annotations, native data, provenance)
    call_id: str | None = None  # tool_call / tool_result
    tool_id: str | None = None  # tool_call
    arguments: Any = None  # tool_call (parsed JSON; see arguments_status)
    arguments_status: str | None = None  # complete | partial | unknown
    result_index: int | None = None  # tool_result
    terminal: bool | None = None
    outcome: str | None = None  # success | error | cancelled | unknown
    transformation: str | None = None  # e.g. a compaction summary's transformation


@dataclass(frozen=True, slots=True)
class Selection:
    document: ir.Document  # the whole session (resources, tools, participants...)
    branch_id: str
    context_id: str | None
    instructions: tuple[ir.Part, ...]  # system instructions, in order
    tools: tuple[ir.Tool, ...]  # tool definitions offered
    inputs: tuple[Input, ...]  # the ordered inputs
    losses: tuple[ir.Loss, ...]  # stage "translation": what the selection could not carry
    path: str = ""  # the JSON pointer of what was selected: a context's inputs or a branch's event_ids


def select(document: ir.Document, *, context: str | None = None, branch: str | None = None,
           pending: Pending = "refuse", name: str = "<input>") -> Selection:
    """The inputs, instructions and tools that continue ``document``; raises ``InvalidInput``
    (a JSON pointer and a hint) for an unknown context or branch, a broken or empty history, and
    (``pending="refuse"``) a tool call with no terminal result."""
    return _Selector(document, name).run(context, branch, pending)


def _loss(lid: str, kind: str, explanation: str, refs: list[tuple[str, str]] | None = None,
          scope: str | None = None) -> ir.Loss:
    return ir.Loss(id=f"request:{lid}", stage="translation", kind=kind, explanation=explanation,
                   scope=scope if scope is not None else msgspec.UNSET,
                   references=[ir.LossRef(type=t, id=i) for t, i in refs] if refs else msgspec.UNSET)


class _Selector:
    def __init__(self, doc: ir.Document, name: str) -> None:
        self.doc, self.name = doc, name
        self.events = {e.id: e for e in doc.events}
        self.event_index = {e.id: i for i, e in enumerate(doc.events)}
        self.branches = {b.id: (i, b) for i, b in reversed(list(enumerate(doc.branches)))}
        self.contexts = {c.id: (i, c) for i, c in reversed(list(enumerate(doc.contexts)))}
        self.losses: list[ir.Loss] = []
        self.codec = codec_for(namespaces())

    def refuse(self, path: str, message: str) -> InvalidInput:
        return InvalidInput([Problem(rule="request", path=path, message=message)], self.name)

    # -- the whole selection ------------------------------------------------------------------

    def run(self, context: str | None, branch: str | None, pending: Pending) -> Selection:
        if context is not None and branch is not None:
            raise UsageError("give a context or a branch to continue from, not both (--context or --branch)")
        if context is not None:
            if context not in self.contexts:
                raise self.refuse("/contexts", f"there is no context '{context}'; "
                                  f"known contexts: {_listed(self.contexts)}")
            c, ctx = self.contexts[context]
            inputs = self.context_inputs(c, ctx)
            branch_id, configuration = ctx.branch_id, self.context_configuration(ctx)
            if any(i.kind == "message" and i.role in ("system", "developer") for i in inputs):
                configuration = None  # the instructions it was given are among its inputs: not twice
            tools = self.context_tools(c, ctx, inputs)
        else:
            branch_id = self.branch_id(branch)
            history = self.history(branch_id)
            inputs = self.history_inputs(history)
            configuration = self.branch_configuration(history)
            tools = self.offered_tools(inputs)
        where = pointer("contexts", self.contexts[context][0], "inputs") if context is not None else \
            pointer("branches", self.branches[branch_id][0], "event_ids")
        if not inputs:
            raise self.refuse(where, f"{'context' if context else 'branch'} '{context or branch_id}' has no "
                              "message, tool call or tool result to continue from")
        inputs = self.settle_pending(inputs, pending, context)
        self.one_call_per_id(inputs)
        return Selection(document=self.doc, branch_id=branch_id, context_id=context,
                         instructions=self.instructions(configuration), tools=tuple(tools),
                         inputs=tuple(inputs), losses=tuple(self.losses), path=where)

    def one_call_per_id(self, inputs: list[Input]) -> None:
        """Two calls of one id would be one call to every API (its results answer both): refused."""
        seen: dict[str, Input] = {}
        for item in inputs:
            if item.kind != "tool_call" or item.call_id is None:
                continue
            if item.call_id in seen:
                where = pointer("events", self.event_index.get(item.id, 0)) if item.id in self.event_index else ""
                raise self.refuse(where, f"tool calls '{seen[item.call_id].id}' and '{item.id}' share the call id "
                                  f"'{item.call_id}': a request cannot tell their results apart")
            seen[item.call_id] = item

    # -- which branch, and its history ----------------------------------------------------------

    def branch_id(self, branch: str | None) -> str:
        """The branch asked for; else the only one; else the one the source names active (a
        continuity export's ``active_branch_id``); else the only one whose head checkpoint is
        ``active``."""
        if branch is not None:
            if branch not in self.branches:
                raise self.refuse("/branches", f"there is no branch '{branch}'; known branches: "
                                  f"{_listed(self.branches)}")
            return branch
        active = ir.active_branch(self.doc)
        if active is not None:
            return active.id
        if not self.branches:
            raise self.refuse("/branches", "the session has no branch to continue")
        raise self.refuse("/branches", f"the session has {len(self.branches)} branches and none is the active one "
                          f"(no single head checkpoint with status active); choose one with --branch: "
                          f"{_listed(self.branches)}")

    def history(self, branch_id: str) -> list[str]:
        """The selected history of a branch: its parent's up to the fork point (recursively),
        then its own events; an event listed in both is taken once, where the parent has it."""
        chain: list[str] = []
        current: str | None = branch_id
        while current is not None:
            if current in chain:
                b = self.branches[current][0]
                raise self.refuse(pointer("branches", b, "fork", "branch_id"),
                                  f"branches fork from each other in a cycle: {' -> '.join([*chain, current])}")
            chain.append(current)
            current = self.local_parent(current)
        history: list[str] = []
        for k, bid in enumerate(reversed(chain)):  # from the root down to the branch asked for
            if k:
                history = self.cut_at_fork(bid, history)
            b, branch = self.branches[bid]
            for j, eid in enumerate(branch.event_ids):
                if eid not in self.events:
                    raise self.refuse(pointer("branches", b, "event_ids", j),
                                      f"branch '{bid}' selects event '{eid}', which is not in events")
            seen = set(history)
            history += [eid for eid in branch.event_ids if eid not in seen]
        return history

    def local_parent(self, bid: str) -> str | None:
        b, branch = self.branches[bid]
        fork = branch.fork
        if fork is msgspec.UNSET:
            return None
        capture_id = self.doc.capture.id if self.doc.capture is not msgspec.UNSET else None
        if fork.session_id != self.doc.session.id or fork.capture_id != capture_id:
            if fork.event_id is not None:
                self.losses.append(_loss(
                    f"fork-outside:{bid}", "history_outside_capture",
                    f"branch '{bid}' forks from branch '{fork.branch_id}' of another capture or session "
                    f"(at event '{fork.event_id}'); the history before the fork is not in this document, "
                    "so the request holds only the branch's own events", [("branch", bid)], "branches"))
            return None
        if fork.branch_id not in self.branches:
            raise self.refuse(pointer("branches", b, "fork", "branch_id"),
                              f"branch '{bid}' forks from branch '{fork.branch_id}', which is not in branches")
        return fork.branch_id

    def cut_at_fork(self, child: str, parent_history: list[str]) -> list[str]:
        b, branch = self.branches[child]
        fork = branch.fork
        assert fork is not msgspec.UNSET  # (a child in the chain has a local fork)
        if fork.event_id is None:
            return []
        if fork.event_id not in parent_history:
            raise self.refuse(pointer("branches", b, "fork", "event_id"),
                              f"branch '{child}' forks from branch '{fork.branch_id}' at event '{fork.event_id}', "
                              f"which is not in that branch's history")
        at = parent_history.index(fork.event_id)
        return parent_history[:at + 1 if fork.inclusive else at]

    # -- a history as inputs ----------------------------------------------------------------------

    def history_inputs(self, history: list[str]) -> list[Input]:
        selected = set(history)
        # A correction replaces what it supersedes; a call amendment takes its original's place.
        replaced_by: dict[str, str] = {}
        for eid in history:
            ref = self.events[eid].supersedes
            if ref is not msgspec.UNSET and ref.session_id is msgspec.UNSET and ref.event_id in selected:
                replaced_by[ref.event_id] = eid
        inputs: list[Input] = []
        omitted: dict[str, list[str]] = {}
        position = {eid: k for k, eid in enumerate(history)}
        for eid in history:
            event = self.events[eid]
            body = event.body
            if eid in replaced_by and not isinstance(body, ir.ToolCall):
                continue  # superseded: the correction stands in the history instead
            if isinstance(body, ir.ToolCall):
                if event.supersedes is not msgspec.UNSET and event.supersedes.event_id in selected:
                    continue  # an amendment: folded into its original's place
                versions = [event]
                while versions[-1].id in replaced_by:
                    versions.append(self.events[replaced_by[versions[-1].id]])
                inputs.append(self.call_input(versions))
            elif isinstance(body, ir.Message):
                inputs.append(Input(id=eid, kind="message", role=body.role, parts=tuple(body.parts),
                                    source_events=(event,)))
            elif isinstance(body, ir.ToolResult):
                shown = tuple(p for p in body.parts  # (not the client's own record of it: never model input)
                              if not (isinstance(p, ir.StructuredPart) and p.schema in CLIENT_RECORDS))
                inputs.append(Input(id=eid, kind="tool_result", role="tool", parts=shown,
                                    source_events=(event,), call_id=body.call_id, result_index=body.result_index,
                                    terminal=body.terminal, outcome=body.outcome))
            elif isinstance(body, ir.ContextCheckpoint) and body.reason == "compaction":
                inputs = self.compacted(event, body, inputs, position)
            elif event.kind not in _SILENT:
                omitted.setdefault(event.kind, []).append(eid)
        for kind, eids in omitted.items():
            self.losses.append(_loss(
                f"omitted:{kind}", "omitted_event",
                f"{len(eids)} {kind} event(s) of the selected history have no model input a request can "
                f"carry and are left out: {_listed(eids)}", [("event", e) for e in eids]))
        return inputs

    def call_input(self, versions: list[ir.Event]) -> Input:
        final = versions[-1].body
        assert isinstance(final, ir.ToolCall)
        return Input(id=versions[0].id, kind="tool_call", role="assistant", parts=(), source_events=tuple(versions),
                     call_id=final.call_id, tool_id=final.tool_id, arguments=final.arguments,
                     arguments_status=final.arguments_status)

    def compacted(self, event: ir.Event, body: ir.ContextCheckpoint, inputs: list[Input],
                  position: dict[str, int]) -> list[Input]:
        """After a compaction, the compacted context's inputs stand for the history up to its
        boundary; what came after that boundary follows them."""
        if body.context_id not in self.contexts:
            return inputs  # (an unresolved context is the validator's to report)
        c, ctx = self.contexts[body.context_id]
        boundary = position.get(ctx.at_event_id, -1) if ctx.at_event_id is not None else -1
        kept = [i for i in inputs if all(position.get(e.id, -1) > boundary for e in i.source_events)]
        summarized = len(inputs) - len(kept)
        self.losses.append(_loss(
            f"compaction:{event.id}", "summarization",
            f"the history was compacted at event '{event.id}': the inputs of context '{ctx.id}' stand for "
            f"{summarized} earlier input(s), which the request does not carry verbatim",
            [("event", event.id), ("context", ctx.id)]))
        return self.context_inputs(c, ctx) + kept

    # -- a recorded context --------------------------------------------------------------------

    def context_inputs(self, c: int, ctx: ir.Context) -> list[Input]:
        if ctx.fidelity != "exact":
            self.losses.append(_loss(
                f"fidelity:{ctx.id}", "context_fidelity",
                f"context '{ctx.id}' records its inputs with fidelity '{ctx.fidelity}', not 'exact': the model "
                "may have seen more or other inputs than the request carries", [("context", ctx.id)]))
        out = []
        for k, raw in enumerate(ctx.inputs):
            out.append(self.context_input(pointer("contexts", c, "inputs", k), raw))
        return out

    def context_input(self, where: str, raw: Any) -> Input:
        try:
            parts = tuple(self.codec.load_part(p) for p in raw.get("parts", ()))
            sources = tuple(self.events[r["event_id"]] for r in raw.get("source_events", ())
                            if "session_id" not in r and r.get("event_id") in self.events)
            return Input(id=raw["id"], kind=raw["kind"], role=raw["role"], parts=parts, source_events=sources,
                         call_id=raw.get("call_id"), tool_id=raw.get("tool_id"), arguments=raw.get("arguments"),
                         arguments_status=raw.get("arguments_status"), result_index=raw.get("result_index"),
                         terminal=raw.get("terminal"), outcome=raw.get("outcome"),
                         transformation=raw.get("transformation"))
        except (AttributeError, KeyError, TypeError, ValueError, msgspec.ValidationError) as exc:
            raise self.refuse(where, f"not a context input this request can read ({type(exc).__name__}: {exc}); "
                              "an input needs id, kind, role and parts") from None

    # -- configuration and tools ---------------------------------------------------------------

    def configurations(self) -> dict[str, tuple[int, dict[str, Any]]]:
        found = self.doc.extras.get("configurations")
        return {c["id"]: (i, c) for i, c in reversed(list(enumerate(found if isinstance(found, list) else [])))
                if isinstance(c, dict) and isinstance(c.get("id"), str)}

    def context_configuration(self, ctx: ir.Context) -> str | None:
        if isinstance(ctx.configuration_id, str):
            return ctx.configuration_id
        return self.only_configuration()

    def branch_configuration(self, history: list[str]) -> str | None:
        for eid in reversed(history):
            body = self.events[eid].body
            if isinstance(body, ir.ConfigurationChange):
                return body.configuration_id
        return self.only_configuration()

    def only_configuration(self) -> str | None:
        known = self.configurations()
        if len(known) > 1:
            self.losses.append(_loss(
                "configuration-unknown", "unknown_mapping",
                f"the session has {len(known)} configurations and none is named for this history; the request "
                "carries no system instructions", scope="configuration"))
        return next(iter(known)) if len(known) == 1 else None

    def instructions(self, configuration_id: str | None) -> tuple[ir.Part, ...]:
        known = self.configurations()
        if configuration_id is None or configuration_id not in known:
            return ()
        parts: list[ir.Part] = []
        for instruction in known[configuration_id][1].get("instructions") or ():
            if isinstance(instruction, dict):
                parts += (self.codec.load_part(p) for p in instruction.get("parts") or () if isinstance(p, dict))
        return tuple(parts)

    def context_tools(self, c: int, ctx: ir.Context, inputs: list[Input]) -> list[ir.Tool]:
        by_id = {t.id: t for t in self.doc.tools}
        missing = [t for t in ctx.tool_ids if t not in by_id]
        if missing:
            self.losses.append(_loss(
                f"context-tools:{ctx.id}", "unknown_mapping",
                f"context '{ctx.id}' offers tool(s) {_listed(missing)}, which the session does not define; "
                "they are not offered", [("context", ctx.id)]))
        tools = [self.usable(by_id[t]) for t in ctx.tool_ids if t in by_id]
        return tools + self.tools_known_by_calls(inputs, {t.id for t in tools}, by_id)

    def offered_tools(self, inputs: list[Input]) -> list[ir.Tool]:
        tools = [self.usable(t) for t in self.doc.tools]
        return tools + self.tools_known_by_calls(inputs, {t.id for t in tools})

    def usable(self, tool: ir.Tool) -> ir.Tool:
        """A tool as every API takes it: an input schema that describes an object (a call's
        arguments are one). An unknown contract (ASIF's ``true``), or one of another type, is
        offered with a permissive schema; an object schema that does not say its type says it."""
        schema = tool.input_schema
        if isinstance(schema, dict) and schema.get("type") == "object":
            return tool
        typed = schema.get("type") if isinstance(schema, dict) else None
        if isinstance(schema, dict) and (typed is None or isinstance(typed, list) and "object" in typed):
            fitted, said = {**schema, "type": "object"}, "its schema is sent with \"type\": \"object\""
        else:
            fitted, said = dict(PERMISSIVE_SCHEMA), "it is offered with the permissive {\"type\": \"object\"}"
        known = "no known input schema" if not isinstance(schema, dict) else \
            f"an input schema of type {msgspec.json.encode(typed).decode()}, not an object's"
        self.losses.append(_loss(f"tool-schema:{tool.id}", "unknown_mapping",
                                 f"tool '{tool.id}' has {known}; {said}", [("tool", tool.id)]))
        return msgspec.structs.replace(tool, input_schema=fitted)

    def tools_known_by_calls(self, inputs: list[Input], offered: set[str],
                             defined: dict[str, ir.Tool] | None = None) -> list[ir.Tool]:
        """The tools a history calls that are not offered: a context's calls of a tool the session
        defines but the context does not list get that definition; a tool known only by its calls,
        a permissive one."""
        out: list[ir.Tool] = []
        for i in inputs:
            if i.kind != "tool_call" or i.tool_id is None or i.tool_id in offered:
                continue
            offered.add(i.tool_id)
            if defined is not None and i.tool_id in defined:
                self.losses.append(_loss(
                    f"tool-by-call:{i.tool_id}", "unknown_mapping",
                    f"tool '{i.tool_id}' is called in the context but not among its tools; the session's "
                    "definition of it is offered, so that its calls can be sent", [("tool", i.tool_id)]))
                out.append(self.usable(defined[i.tool_id]))
                continue
            self.losses.append(_loss(
                f"tool-by-call:{i.tool_id}", "synthesized_tool",
                f"tool '{i.tool_id}' is known only by its calls; it is offered with the permissive "
                "{\"type\": \"object\"} and no description", scope="tools"))
            out.append(ir.Tool(id=i.tool_id, name=i.tool_id, description="", input_schema=dict(PERMISSIVE_SCHEMA)))
        return out

    # -- calls with no result --------------------------------------------------------------------

    def settle_pending(self, inputs: list[Input], pending: Pending, context: str | None) -> list[Input]:
        closed = {i.call_id for i in inputs if i.kind == "tool_result" and i.terminal}
        open_calls = [(k, i) for k, i in enumerate(inputs) if i.kind == "tool_call" and i.call_id not in closed]
        if not open_calls:
            return inputs
        if pending == "refuse":
            problems = [Problem(rule="request", path=self.input_path(context, k, i),
                                message=f"tool call '{i.call_id}' ({i.tool_id}) has no recorded result; a provider "
                                        "needs one: --pending drop leaves the call out, --pending as-error answers it "
                                        "with an error result") for k, i in open_calls]
            raise RequestRefused(problems, self.name)
        pending_ids = {i.call_id for _, i in open_calls}
        if pending == "drop":
            # Every event that leaves is named: each version of an amended call and any progress results.
            left = [e.id for i in inputs if i.call_id in pending_ids for e in i.source_events]
            self.losses.append(_loss(
                "pending:dropped", "pending_call_dropped",
                f"tool call(s) {_listed(sorted(pending_ids))} had no result; left out of the request, with any "
                "results that did not end them, as asked (--pending drop)",
                [("event", e) for e in dict.fromkeys(left)] or None, "tools"))
            return [i for i in inputs if i.call_id not in pending_ids]
        last: dict[str, int] = {}  # the last result index of each pending call
        last_input: dict[str | None, int] = {}  # the position of each pending call's last input
        for k, i in enumerate(inputs):
            if i.call_id in pending_ids:
                last_input[i.call_id] = k
                if i.call_id is not None and i.result_index is not None:
                    last[i.call_id] = i.result_index
        answers: dict[int, list[Input]] = {}
        for _, call in open_calls:  # each answered right after its call's last input and the calls beside it
            assert call.call_id is not None
            at = last_input[call.call_id]
            while at + 1 < len(inputs) and inputs[at + 1].kind == "tool_call":
                at += 1  # (calls issued together are answered together)
            answers.setdefault(at, []).append(Input(
                id=f"{call.id}~pending-error", kind="tool_result", role="tool",
                parts=(ir.TextPart(text="The tool call has no recorded result; it was not run again."),),
                source_events=call.source_events, call_id=call.call_id, result_index=last.get(call.call_id, -1) + 1,
                terminal=True, outcome="error"))
        out = [a for k, i in enumerate(inputs) for a in (i, *answers.get(k, ()))]
        self.losses.append(_loss(
            "pending:as-error", "synthesized_result",
            f"tool call(s) {_listed(sorted(pending_ids))} had no result; each is answered with an error result "
            "that was never recorded, as asked (--pending as-error)",
            [("event", e.id) for _, i in open_calls for e in i.source_events[:1]] or None, "tools"))
        return out

    def input_path(self, context: str | None, k: int, i: Input) -> str:
        if context is not None:
            return pointer("contexts", self.contexts[context][0], "inputs", k)
        return pointer("events", self.event_index[i.source_events[0].id])


def _listed(ids: Any) -> str:
    names = [f"'{i}'" for i in ids]
    return ", ".join(names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "") if names else "none"
