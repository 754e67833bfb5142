"""The neutral intermediate representation every reader produces and every writer consumes.

The IR holds the concepts both formats share: a session, participants, one ordered list of
events whose bodies are a tagged union by kind, branches, checkpoints, contexts, executions,
tools, resources, coverage and losses. Two verbatim homes on every node keep what has no shared
meaning, so nothing is silently dropped:

* ``unknown``: additional properties found on the source object, kept as they were;
* ``native``: format-specific fields, keyed by format namespace (``native["agent-continuity"]``).

Optional fields default to ``UNSET`` so that "absent" and ``null`` stay different states.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping
from itertools import pairwise
from typing import Any, ClassVar, Literal

import msgspec
from msgspec import UNSET, UnsetType

IR_VERSION = "1"

Json = Any
Opt = UnsetType  # shorthand in annotations: ``str | Opt`` means "may be absent"
LossStage = Literal["capture", "normalization", "redaction", "translation"]
ArgumentsStatus = Literal["complete", "partial", "unknown"]
ToolOutcome = Literal["success", "error", "cancelled", "unknown"]
ParticipantKind = Literal["human", "agent", "tool", "service", "unknown"]
CoverageStatus = Literal["complete", "partial", "known_empty", "unavailable", "excluded", "not_inspected",
                         "not_applicable"]


class _NoExtras(dict[str, Any]):
    """The one empty ``unknown`` and ``native`` of every node that has none: two fresh empty
    dicts per node would cost about the input's size again on a record-dense session. Writing
    to it is a bug (it is shared): give the node a dict of its own instead."""

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("a node's empty unknown/native is shared: assign a new dict instead")

    __setitem__ = __delitem__ = __ior__ = setdefault = update = pop = popitem = clear = _refuse


NO_EXTRAS: dict[str, Any] = _NoExtras()


class _NoCauses(list[Any]):
    """The one empty ``causes`` of every event that has none (most events: a fresh empty list
    each is about a tenth of a record-dense input's size). Shared, so it refuses writes."""

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("an event's empty causes are shared: assign a new list instead")

    __setitem__ = __delitem__ = __iadd__ = __imul__ = append = extend = insert = remove = pop = clear = sort = \
        reverse = _refuse


NO_CAUSES: list[Any] = _NoCauses()


class Node(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Every IR record. ``unknown``: properties the source object had that its format does not
    define, kept as they were; ``native``: format-specific fields, by format namespace
    (``native["agent-continuity/1"]``), which that format's writer reads back."""

    unknown: dict[str, Json] = NO_EXTRAS
    native: dict[str, dict[str, Json]] = NO_EXTRAS

    def __post_init__(self) -> None:
        # An empty dict given for either is the shared one: what omit_defaults leaves out, so
        # msgspec writes a node without extras as ASIF does.
        if not self.unknown and self.unknown is not NO_EXTRAS:
            self.unknown = NO_EXTRAS
        if not self.native and self.native is not NO_EXTRAS:
            self.native = NO_EXTRAS


# --- references, provenance, content parts -------------------------------------------------


class EventRef(Node, kw_only=True):
    """A reference to an event: ``event_id``, in this session unless ``session_id`` (and the
    capture it was recorded in, ``capture_id``) name another."""

    event_id: str
    session_id: str | Opt = UNSET
    capture_id: str | Opt = UNSET


class Locator(Node, kw_only=True):
    """Where in a source resource something was found: ``syntax`` (``json-pointer``,
    ``text-range``...), its ``value``, or a byte ``offset`` and ``length``."""

    syntax: str
    value: Json | Opt = UNSET
    offset: int | Opt = UNSET
    length: int | Opt = UNSET


class SourceRef(Node, kw_only=True):
    """A source an event was taken from: the resource (``resource_id``) and, optionally, the
    ``locator`` of the part of it."""

    resource_id: str
    locator: Locator | Opt = UNSET


class Provenance(Node, kw_only=True):
    """How an event came to be recorded. ``mode``: ``observed`` (seen happening), ``reported``
    (a source said so), ``derived`` (computed from other records, listed in ``inputs``) or
    ``synthetic`` (made up to satisfy a rule, ``method`` says how); ``producer``: who recorded
    it; ``sources``: the source resources it was read from."""

    mode: Literal["observed", "reported", "derived", "synthetic"]
    producer: str
    sources: list[SourceRef] | Opt = UNSET
    method: str | Opt = UNSET
    inputs: list[EventRef] | Opt = UNSET


class TextPart(Node, kw_only=True, tag_field="kind", tag="text"):
    """Text content: ``text``, and its ``media_type`` when not plain text."""

    text: str
    media_type: str | Opt = UNSET


class ResourcePart(Node, kw_only=True, tag_field="kind", tag="resource"):
    """Content held by a resource (an image, a document): ``resource_id``, and a
    ``description`` of it."""

    resource_id: str
    description: str | Opt = UNSET


class StructuredPart(Node, kw_only=True, tag_field="kind", tag="structured"):
    """JSON content of a declared shape: ``schema`` names it, ``value`` is the JSON."""

    schema: str
    value: Json


class OpaquePart(Node, kw_only=True, tag_field="kind", tag="opaque"):
    """Content carried but not interpreted: the resource that holds it (``resource_id``),
    what kind of thing it is (``semantic_type``) and why it is opaque (``reason``)."""

    resource_id: str
    semantic_type: str
    reason: str


Part = TextPart | ResourcePart | StructuredPart | OpaquePart


# --- event bodies: one struct per kind, tagged by the kind name -----------------------------


class Message(Node, kw_only=True):
    """An event body: something said. ``role``: who said it (``user``, ``assistant``,
    ``system``, ``developer``, ``tool``, ``unknown``); ``parts``: what was said, in order."""

    KIND: ClassVar[str] = "message"
    role: Literal["user", "assistant", "system", "developer", "tool", "unknown"]
    parts: list[Part]


class ToolCall(Node, kw_only=True):
    """An event body: a tool called. ``call_id`` pairs it with its results; ``tool_id`` names
    the tool (``Document.tools``); ``arguments``: the JSON it was called with, as complete as
    ``arguments_status`` says (``complete``, ``partial``, ``unknown``); ``retry_of``: the
    ``call_id`` of the call it repeats."""

    KIND: ClassVar[str] = "tool_call"
    call_id: str
    tool_id: str
    arguments: Json
    arguments_status: ArgumentsStatus
    retry_of: str | Opt = UNSET


class ToolResult(Node, kw_only=True):
    """An event body: what a tool call gave back. ``call_id``: the call it answers;
    ``result_index``: its place among that call's results (0 first); ``terminal``: whether it
    is the last; ``outcome``: ``success``, ``error``, ``cancelled`` or ``unknown``; ``parts``:
    the content."""

    KIND: ClassVar[str] = "tool_result"
    call_id: str
    result_index: int
    terminal: bool
    outcome: ToolOutcome
    parts: list[Part]


class DecisionRequest(Node, kw_only=True):
    """An event body: a question put to a person (``decision_kind``: ``approval``,
    ``question``, ``plan_review``). ``request_id`` pairs it with its resolution; ``prompt``:
    what was asked; ``options``: the answers offered; ``call_id``, ``task_id`` and
    ``task_revision``: the call or task it is about."""

    KIND: ClassVar[str] = "decision_request"
    request_id: str
    decision_kind: Literal["approval", "question", "plan_review"]
    prompt: list[Part]
    options: list[Json]
    call_id: str | Opt = UNSET
    task_id: str | Opt = UNSET
    task_revision: int | Opt = UNSET


class DecisionResolution(Node, kw_only=True):
    """An event body: how a decision request ended. ``request_id``: the request;
    ``outcome``: ``allowed``, ``denied``, ``answered``, ``cancelled``, ``expired``, ``unknown``;
    ``answer``: what was said; ``selected_option_id``: the option chosen."""

    KIND: ClassVar[str] = "decision_resolution"
    request_id: str
    outcome: Literal["allowed", "denied", "answered", "cancelled", "expired", "unknown"]
    answer: list[Part]
    selected_option_id: str | Opt = UNSET


class TaskUpdate(Node, kw_only=True):
    """An event body: a revision of a task. ``task_id`` and ``revision`` identify it,
    ``previous_revision`` the one it follows; ``status``: the task's state; ``parts``: what it
    says; ``dependencies``: the task ids it waits on; ``reopen_reason``: why a done task opened
    again."""

    KIND: ClassVar[str] = "task_update"
    task_id: str
    revision: int
    status: str
    parts: list[Part]
    previous_revision: int | Opt = UNSET
    dependencies: list[str] | Opt = UNSET
    reopen_reason: str | Opt = UNSET


class ContextCheckpoint(Node, kw_only=True):
    """An event body: a model context was recorded (``context_id``, in
    ``Document.contexts``), for ``reason``; ``replaced_context_id``: the context it replaces
    (compaction)."""

    KIND: ClassVar[str] = "context_checkpoint"
    context_id: str
    reason: str
    replaced_context_id: str | Opt = UNSET


class ConfigurationChange(Node, kw_only=True):
    """An event body: the configuration in force changed to ``configuration_id``."""

    KIND: ClassVar[str] = "configuration_change"
    configuration_id: str


class ExecutionTransition(Node, kw_only=True):
    """An event body: an execution (``execution_id``, a run) moved to ``status``;
    ``error`` and ``parts`` say why."""

    KIND: ClassVar[str] = "execution_transition"
    execution_id: str
    status: str
    error: Json | Opt = UNSET
    parts: list[Part] | Opt = UNSET


class ResourceChange(Node, kw_only=True):
    """An event body: a resource (``resource_id``) was ``created``, ``modified``,
    ``deleted`` or ``observed`` (``operation``); ``previous_resource_id``: its earlier version."""

    KIND: ClassVar[str] = "resource_change"
    resource_id: str
    operation: Literal["created", "modified", "deleted", "observed"]
    previous_resource_id: str | Opt = UNSET


class Note(Node, kw_only=True):
    """An event body: a remark that is not part of the conversation: ``parts``, of a ``category``."""

    KIND: ClassVar[str] = "note"
    parts: list[Part]
    category: str


class Extension(Node, kw_only=True):
    """An event body of a kind ASIF does not define: ``type`` names it, ``value`` is its JSON,
    and ``interpretation_required`` says whether a reader that does not know the type must
    refuse the session."""

    KIND: ClassVar[str] = "extension"
    type: str
    value: Json
    interpretation_required: bool


Body = (
    Message
    | ToolCall
    | ToolResult
    | DecisionRequest
    | DecisionResolution
    | TaskUpdate
    | ContextCheckpoint
    | ConfigurationChange
    | ExecutionTransition
    | ResourceChange
    | Note
    | Extension
)

def parts_of(body: Body) -> list[Part]:
    """Every content part of an event body, in order (parts, decision prompts and answers)."""
    return [p for name in ("parts", "prompt", "answer") for p in getattr(body, name, None) or ()]


BODY_TYPES: dict[str, type] = {cls.KIND: cls for cls in Body.__args__}


class Event(Node, kw_only=True):
    """One thing that happened in the session. ``id``: unique in the session; ``sequence``: its
    place in the one order of all events (0, 1, ...); ``actor_id``: the participant who did it;
    ``body``: what happened (``Message``, ``ToolCall``, ``ToolResult``... one struct per kind;
    ``kind`` names it); ``provenance``: how it came to be recorded; ``causes``: the events it
    answers or follows from; ``time``: when (RFC 3339), if known; ``execution_id``: the run it
    belongs to; ``supersedes``: the event it corrects; ``annotations``: namespaced extensions
    (ASIF ``extensions``) other than the formats' native homes."""

    id: str
    sequence: int
    actor_id: str
    body: Body
    provenance: Provenance
    causes: list[EventRef] = NO_CAUSES
    time: str | Opt = UNSET
    execution_id: str | Opt = UNSET
    supersedes: EventRef | Opt = UNSET
    # Namespaced annotations (ASIF ``extensions``), other than the native homes.
    annotations: dict[str, Json] | Opt = UNSET

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.causes and self.causes is not NO_CAUSES:
            self.causes = NO_CAUSES

    @property
    def kind(self) -> str:
        return self.body.KIND


# --- session-level entities ---------------------------------------------------------------


class Producer(Node, kw_only=True):
    """The software that recorded a capture: ``name`` and ``version``."""

    name: str
    version: str


class Capture(Node, kw_only=True):
    """This recording of the session: ``id``; ``producer``; ``consistency`` (``consistent``,
    ``partial``, ``unknown``: whether it is one coherent snapshot); ``boundary``: in words, what
    it includes and what it does not; ``started_at`` and ``ended_at``: when it was taken."""

    id: str
    producer: Producer
    consistency: Literal["consistent", "partial", "unknown"]
    boundary: str
    started_at: str | Opt = UNSET
    ended_at: str | Opt = UNSET


class NativeId(Node, kw_only=True):
    """An id the session has in another system: ``value``, in ``namespace`` of ``provider``."""

    provider: str
    namespace: str
    value: str


class Lineage(Node, kw_only=True):
    """Another session this one comes from: ``relation`` (``continuation``, ``fork``,
    ``translation``, ``copy``), the ``session_id`` and ``capture_id`` it came from, and the last
    ``event_id`` taken (``inclusive``: whether that event is included)."""

    relation: Literal["continuation", "fork", "translation", "copy"]
    session_id: str
    capture_id: str
    event_id: str | Opt = UNSET
    inclusive: bool | Opt = UNSET


class Session(Node, kw_only=True):
    """The session: ``id``, ``title``, ``objective`` (what it is for, as parts), ``native_ids``
    (its ids elsewhere) and ``lineage`` (the sessions it comes from)."""

    id: str
    native_ids: list[NativeId] = []
    lineage: list[Lineage] = []
    title: str | Opt = UNSET
    objective: list[Part] | Opt = UNSET


class Participant(Node, kw_only=True):
    """Who acts in the session: ``id``, ``kind`` (``human``, ``agent``, ``tool``, ``service``,
    ``unknown``), ``name``, ``provider``, ``native_id``, ``parent_participant_id`` (a sub-agent's
    parent) and ``child_session`` (the session a sub-agent ran in)."""

    id: str
    kind: ParticipantKind
    name: str | Opt = UNSET
    provider: str | Opt = UNSET
    native_id: str | Opt = UNSET
    parent_participant_id: str | Opt = UNSET
    child_session: Json | Opt = UNSET


class Fork(Node, kw_only=True):
    """Where a branch left its parent: the parent's ``session_id``, ``capture_id`` and
    ``branch_id``, and the ``event_id`` it diverged at (``inclusive``: whether that event is
    shared; ``None``: before the first)."""

    session_id: str
    capture_id: str
    branch_id: str
    event_id: str | None
    inclusive: bool


class Branch(Node, kw_only=True):
    """One line of history: ``id``; ``event_ids``: its events in order (those it shares with
    its parent first); ``head_event_id``: its last event (``None`` when empty); ``fork``: where
    it left its parent."""

    id: str
    event_ids: list[str]
    head_event_id: str | None
    fork: Fork | Opt = UNSET


class Execution(Node, kw_only=True):
    """A run of a participant (``participant_id``): ``id``, ``status``, the ``context_ids`` it
    used, ``started_at``/``ended_at``, the ``model``, its ``usage`` and ``error``."""

    id: str
    participant_id: str
    status: str
    context_ids: list[str] = []
    started_at: str | Opt = UNSET
    ended_at: str | Opt = UNSET
    model: Json | Opt = UNSET
    usage: Json | Opt = UNSET
    error: Json | Opt = UNSET


class Tool(Node, kw_only=True):
    """A tool the session can call: ``id`` (what calls name), ``name`` (what the model calls it),
    ``description``, ``input_schema`` (JSON Schema of its arguments; ``True``: anything),
    ``output_schema``, ``server_identity`` (the server that runs it), ``revision`` and
    ``resource_ids`` (resources that define it)."""

    id: str
    name: str
    description: str
    input_schema: Json
    output_schema: Json | Opt = UNSET
    server_identity: str | Opt = UNSET
    revision: str | Opt = UNSET
    resource_ids: list[str] | Opt = UNSET


class Resource(Node, kw_only=True):
    """A file or blob the session refers to: ``id``, ``media_type``, ``purpose``;
    ``availability`` says whether its bytes are here (``embedded``: in ``text``, ``data``
    (base64) or a file at ``path``), elsewhere (``external``: at ``locator``) or not
    (``unavailable``, ``excluded``, ``redacted``, ``unknown``; ``explanation`` says why);
    ``name``, ``original_location`` (where it was found), ``bytes`` and ``sha256`` (of its
    content) and ``provenance``."""

    id: str
    media_type: str
    availability: Literal["embedded", "external", "unavailable", "excluded", "redacted", "unknown"]
    purpose: str
    name: str | Opt = UNSET
    original_location: str | Opt = UNSET
    bytes: int | Opt = UNSET
    sha256: str | Opt = UNSET
    text: str | Opt = UNSET
    data: str | Opt = UNSET
    path: str | Opt = UNSET
    locator: str | Opt = UNSET
    explanation: str | Opt = UNSET
    provenance: Provenance | Opt = UNSET


class Context(Node, kw_only=True):
    """What a model saw for one request: ``id``, on ``branch_id`` after ``at_event_id``;
    ``purpose`` (``model_request``, ``continuation``, ``summary``); ``fidelity`` (``exact``,
    ``reconstructed``, ``partial``, ``unknown``); ``inputs`` (the ASIF context inputs),
    ``tool_ids`` offered, ``configuration_id``, ``model`` and ``request_parameters``."""

    id: str
    branch_id: str
    at_event_id: str | None
    purpose: Literal["model_request", "continuation", "summary"]
    fidelity: Literal["exact", "reconstructed", "partial", "unknown"]
    inputs: list[Json] = []
    tool_ids: list[str] = []
    configuration_id: str | Opt = UNSET
    model: Json | Opt = UNSET
    request_parameters: Json | Opt = UNSET


class Checkpoint(Node, kw_only=True):
    """The state at a point of a branch (``branch_id``, after ``at_event_id``): ``id``;
    ``knowledge`` (``observed``, ``derived``, ``unknown``: how the state is known); ``status``
    of the agent (``idle``, ``active``, ``waiting``, ``stopped``, ``ended``, ``unknown``);
    ``context_id`` and ``configuration_id`` in force; what is still open (``open_calls``,
    ``open_decisions``, ``tasks``) and ``requirements`` to continue. ASIF wants one at each
    branch head."""

    id: str
    branch_id: str
    at_event_id: str | None
    knowledge: Literal["observed", "derived", "unknown"]
    status: Literal["idle", "active", "waiting", "stopped", "ended", "unknown"]
    context_id: str | None = None
    configuration_id: str | None = None
    open_calls: list[Json] = []
    open_decisions: list[Json] = []
    tasks: list[Json] = []
    requirements: list[Json] = []


SCOPES = (
    "participants",
    "conversation",
    "branches",
    "executions",
    "contexts",
    "configuration",
    "tools",
    "decisions",
    "tasks",
    "resources",
    "environment",
    "native",
    "usage",
)


class Coverage(Node, kw_only=True):
    """How complete the session is in one ``scope`` (one of ``SCOPES``): ``status``
    (``complete``, ``partial``, ``known_empty``, ``unavailable``, ``excluded``,
    ``not_inspected``, ``not_applicable``) and ``detail``, in words."""

    scope: str
    status: CoverageStatus
    detail: str


class LossRef(Node, kw_only=True):
    """A record a loss affects: its collection (``type``: ``event``, ``resource``...) and ``id``."""

    type: str
    id: str


class Loss(Node, kw_only=True):
    """Something dropped or changed on the way: ``id``; ``stage`` (``capture``, ``normalization``,
    ``redaction``, ``translation``); ``kind`` (docs/losses.md); ``explanation``; ``scope`` (a
    coverage scope) and ``references`` (the records affected)."""

    id: str
    stage: LossStage
    kind: str
    explanation: str
    scope: str | Opt = UNSET
    references: list[LossRef] | Opt = UNSET


class Document(Node, kw_only=True):
    """One session, as every reader produces it and every writer takes it: ``capture`` (this
    recording), ``session``, ``participants``, ``events`` (in ``sequence`` order),
    ``branches``, ``executions``, ``contexts``, ``tools``, ``resources``, ``checkpoints``,
    ``coverage`` (13 records, one per scope), ``losses``, ``required_features`` (features a
    reader must support), ``ir_version`` (``IR_VERSION``), and ``extras``: whole collections only
    ASIF knows (configurations, environments, usage, continuation, streams, external
    bindings), as JSON. ``SessionBuilder`` builds one from messages and tool calls."""

    ir_version: str = IR_VERSION
    capture: Capture | Opt = UNSET
    session: Session
    participants: list[Participant] = []
    events: list[Event] = []
    branches: list[Branch] = []
    executions: list[Execution] = []
    contexts: list[Context] = []
    tools: list[Tool] = []
    resources: list[Resource] = []
    checkpoints: list[Checkpoint] = []
    coverage: list[Coverage] = []
    losses: list[Loss] = []
    required_features: list[str] = []
    # ASIF-only collections kept verbatim: configurations, environments, usage, continuation,
    # streams, external_bindings.
    extras: dict[str, Json] = {}


# --- which branch a continuation takes ---------------------------------------------------------

# Where the continuity format's reader keeps the export's own session fields (its active branch)
CONTINUITY_NAMESPACE = "agent-continuity/1"


def active_branch(doc: Document) -> Branch | None:
    """The branch the session says a continuation takes: the only one; else the one its source
    names active (a continuity export's ``active_branch_id``); else the only one whose head
    checkpoint is ``active``. None when it says none of several: the caller chooses (the agent
    formats' writers take ``continued_branch``, ``request`` asks for one)."""
    by_id: dict[str, Branch] = {}
    for b in doc.branches:
        by_id.setdefault(b.id, b)
    if len(by_id) <= 1:
        return next(iter(by_id.values()), None)
    state = doc.session.native.get(CONTINUITY_NAMESPACE) if doc.session.native else None
    named = state.get("active_branch_id") if isinstance(state, dict) else None  # (any JSON value: data)
    if isinstance(named, str) and named in by_id:
        return by_id[named]
    active = {c.branch_id for c in doc.checkpoints if c.status == "active" and c.branch_id in by_id
              and c.at_event_id == by_id[c.branch_id].head_event_id}
    return by_id[active.pop()] if len(active) == 1 else None


def continued_branch(doc: Document) -> Branch | None:
    """The branch a session written for an agent continues: the active one, else ``main``, else
    the first (None for a session without branches)."""
    return active_branch(doc) or next((b for b in doc.branches if b.id == "main"), None) or \
        next(iter(doc.branches), None)


def continued_history(doc: Document) -> list[Event]:
    """The events a session written for an agent continues: its ``continued_branch``'s, after
    what that branch inherits from the branch it forked from, up to the fork point (and so on up
    the chain; a fork from a branch this document does not hold, or in a cycle, inherits
    nothing; one at no event, ``None``, is before the parent's first). Every event without
    branches when the session has none."""
    by_id = {ev.id: ev for ev in doc.events}
    selected = continued_branch(doc)
    if selected is None:
        return list(doc.events)
    branches = {b.id: b for b in doc.branches}
    lineage, seen = [selected], {selected.id}  # the branch, the one it forked from, ... (a loop: chains are data)
    while isinstance(fork := lineage[-1].fork, Fork) and fork.branch_id in branches and fork.branch_id not in seen:
        lineage.append(branches[fork.branch_id])
        seen.add(fork.branch_id)
    history = list(lineage[-1].event_ids)
    for parent, child in pairwise(reversed(lineage)):
        fork = child.fork
        assert isinstance(fork, Fork) and fork.branch_id == parent.id
        if fork.event_id is None:  # (it left before the parent's first event: it inherits nothing)
            history = []
        elif fork.event_id in history:
            history = history[:history.index(fork.event_id) + (1 if fork.inclusive else 0)]
        held = set(history)
        history += [e for e in child.event_ids if e not in held]
    return [by_id[e] for e in history if e in by_id]


def superseded_calls(events: Iterable[Event]) -> set[str]:
    """The ids of the tool calls a later call of the same ``call_id`` stands for (an amended
    call: its arguments completed, say): an agent takes one call per id, its last version."""
    latest: dict[str, str] = {}
    calls = []
    for ev in events:
        if isinstance(ev.body, ToolCall):
            latest[ev.body.call_id] = ev.id
            calls.append((ev.body.call_id, ev.id))
    return {event_id for call_id, event_id in calls if latest[call_id] != event_id}


def resources_used(events: Iterable[Event]) -> set[str]:
    """The ids of the resources the parts of the events' messages and tool results show."""
    return {p.resource_id for ev in events if isinstance(ev.body, Message | ToolResult) for p in ev.body.parts
            if isinstance(p, ResourcePart)}


def with_bytes(res: Resource, files: Mapping[str, bytes]) -> Resource:
    """``res``, when it embeds a file by path whose bytes are in ``files`` (what the folder the
    user named gave), with those bytes inline: a text type's as its ``text`` (when they are
    UTF-8), any other as base64 ``data``. For a format whose output is one file and carries no
    other beside it (an agent's transcript). ``res`` itself otherwise."""
    if res.availability != "embedded" or not isinstance(res.path, str) or res.path not in files \
            or isinstance(res.data, str) or isinstance(res.text, str):
        return res
    content = files[res.path]
    if res.media_type.startswith("text/"):
        try:
            return msgspec.structs.replace(res, text=content.decode("utf-8"))
        except UnicodeDecodeError:
            pass  # (not text after all: its bytes)
    return msgspec.structs.replace(res, data=base64.b64encode(content).decode("ascii"))


def extensions_held(events: Iterable[Event], own: str | None = None) -> dict[str, list[str]]:
    """The namespaces of the extensions ``events`` hold besides ``own`` (a format's native state,
    a vendor's annotations), each with the ids of the events that hold it, in order: what a
    writer has no place for (``own``: the state of the format it writes back line for line)."""
    held: dict[str, list[str]] = {}
    for ev in events:
        for namespace in (*ev.native, *(ev.annotations or ())):
            if namespace != own:
                held.setdefault(namespace, []).append(ev.id)
    return held


# --- building a session -----------------------------------------------------------------------

# The participant each role's events are attributed to, and its kind, when an importer names none.
ROLE_PARTICIPANTS: dict[str, ParticipantKind] = {"user": "human", "assistant": "agent", "tool": "tool",
                                                 "system": "service", "developer": "human", "unknown": "unknown"}
_IMPORTED = "The importer did not say whether the source holds more in this scope than the records present."


class SessionBuilder:
    """Builds a valid session from messages and tool calls, in a few lines::

        b = ir.SessionBuilder("session-1", producer="my-importer", version="1.0")
        b.message("user", "What is 2 + 2?")
        call = b.tool_call("calculator", {"expression": "2 + 2"})
        b.tool_result(call, "4")
        b.message("assistant", "2 + 2 = 4.")
        document = b.build()           # then asif_convert.dump(document, to="asif")

    Events are numbered in the order added, on one branch (``main``), each ``reported`` by the
    producer. ``build`` adds the minimum the ASIF rules require that the importer did not
    give, each marked as made up: a capture of consistency ``unknown`` (its boundary says it is
    an import); one participant per role (kind from ``ROLE_PARTICIPANTS``); each tool named by
    a call, declared with an unknown input contract (``input_schema`` true); the checkpoint at
    the branch head (knowledge and status ``unknown``); the 13 coverage records
    (``not_inspected`` unless ``coverage`` says otherwise); and a ``translation`` loss for each
    kind of record synthesized (participants, tools, the head checkpoint)."""

    def __init__(self, session_id: str, *, producer: str, version: str, title: str | Opt = UNSET,
                 mode: Literal["observed", "reported", "derived", "synthetic"] = "reported") -> None:
        self.session = Session(id=session_id, title=title)
        self.producer = Producer(name=producer, version=version)
        self.provenance = Provenance(mode=mode, producer=producer)
        self.events: list[Event] = []
        self.tools: dict[str, Tool] = {}
        self.coverage: dict[str, tuple[CoverageStatus, str]] = {}
        self._calls = 0

    def _add(self, body: Body, actor_id: str, event_id: str | None, time: str | Opt) -> Event:
        event = Event(id=event_id or f"e{len(self.events) + 1}", sequence=len(self.events), actor_id=actor_id,
                      body=body, provenance=msgspec.structs.replace(self.provenance), time=time)
        self.events.append(event)
        return event

    def message(self, role: Literal["user", "assistant", "system", "developer", "tool", "unknown"], text: str, *,
                event_id: str | None = None, actor_id: str | None = None, time: str | Opt = UNSET) -> Event:
        """A message of one text part (``actor_id``: the role's participant unless given)."""
        return self._add(Message(role=role, parts=[TextPart(text=text)]), actor_id or role, event_id, time)

    def tool_call(self, tool: str | Tool, arguments: Json, *, call_id: str | None = None, event_id: str | None = None,
                  actor_id: str = "assistant", time: str | Opt = UNSET) -> Event:
        """A call of ``tool`` (its name, or a declared ``Tool``) with complete ``arguments``."""
        declared = tool if isinstance(tool, Tool) else self.tools.get(tool) or Tool(
            id=tool, name=tool, description="", input_schema=True)
        self.tools.setdefault(declared.id, declared)
        self._calls += 1
        body = ToolCall(call_id=call_id or f"call-{self._calls}", tool_id=declared.id, arguments=arguments,
                        arguments_status="complete")
        return self._add(body, actor_id, event_id, time)

    def tool_result(self, call: Event, text: str, *, outcome: ToolOutcome = "success", event_id: str | None = None,
                    actor_id: str = "tool", time: str | Opt = UNSET) -> Event:
        """The one (terminal) result of the call event ``call``, of one text part."""
        if not isinstance(call.body, ToolCall):
            raise TypeError("tool_result answers the event tool_call returned")
        body = ToolResult(call_id=call.body.call_id, result_index=0, terminal=True, outcome=outcome,
                          parts=[TextPart(text=text)])
        return self._add(body, actor_id, event_id, time)

    def build(self) -> Document:
        """The session: the events added, and the records ASIF requires around them."""
        ids = [e.id for e in self.events]
        head = ids[-1] if ids else None
        actors = list(dict.fromkeys(e.actor_id for e in self.events))
        losses = [Loss(id="translation:participants", stage="translation", kind="synthesized_participant",
                       scope="participants", explanation="participants: one per role or actor id, synthesized by "
                       "SessionBuilder; the source named no participant identities.")] if actors else []
        if any(t.input_schema is True for t in self.tools.values()):
            losses.append(Loss(id="translation:tools", stage="translation", kind="tool_contract_unknown",
                               scope="tools", explanation="tools: declared from the calls made to them; their "
                               "input contract is unknown (input_schema true)."))
        losses.append(Loss(id="translation:head-checkpoint", stage="translation", kind="synthesized_checkpoint",
                           scope="branches", explanation="head checkpoint: synthesized by SessionBuilder at the "
                           "branch head; what the agent knew there is unknown."))
        return Document(
            capture=Capture(id=f"{self.producer.name}:{self.session.id}", producer=self.producer,
                            consistency="unknown",
                            boundary=f"Imported by {self.producer.name} {self.producer.version}: {len(ids)} events "
                                     f"of session {self.session.id!r}, as the importer gave them."),
            session=self.session,
            participants=[Participant(id=a, kind=ROLE_PARTICIPANTS.get(a, "unknown")) for a in actors],
            events=list(self.events),
            branches=[Branch(id="main", event_ids=ids, head_event_id=head)],
            tools=list(self.tools.values()),
            checkpoints=[Checkpoint(id="head:main", branch_id="main", at_event_id=head, knowledge="unknown",
                                    status="unknown")],
            coverage=[Coverage(scope=s, status=self.coverage.get(s, ("not_inspected", _IMPORTED))[0],
                               detail=self.coverage.get(s, ("not_inspected", _IMPORTED))[1]) for s in SCOPES],
            losses=losses)
