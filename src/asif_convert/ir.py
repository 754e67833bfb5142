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
    event_id: str
    session_id: str | Opt = UNSET
    capture_id: str | Opt = UNSET


class Locator(Node, kw_only=True):
    syntax: str
    value: Json | Opt = UNSET
    offset: int | Opt = UNSET
    length: int | Opt = UNSET


class SourceRef(Node, kw_only=True):
    resource_id: str
    locator: Locator | Opt = UNSET


class Provenance(Node, kw_only=True):
    mode: Literal["observed", "reported", "derived", "synthetic"]
    producer: str
    sources: list[SourceRef] | Opt = UNSET
    method: str | Opt = UNSET
    inputs: list[EventRef] | Opt = UNSET


class TextPart(Node, kw_only=True, tag_field="kind", tag="text"):
    text: str
    media_type: str | Opt = UNSET


class ResourcePart(Node, kw_only=True, tag_field="kind", tag="resource"):
    resource_id: str
    description: str | Opt = UNSET


class StructuredPart(Node, kw_only=True, tag_field="kind", tag="structured"):
    schema: str
    value: Json


class OpaquePart(Node, kw_only=True, tag_field="kind", tag="opaque"):
    resource_id: str
    semantic_type: str
    reason: str


Part = TextPart | ResourcePart | StructuredPart | OpaquePart


# --- event bodies: one struct per kind, tagged by the kind name -----------------------------


class Message(Node, kw_only=True):
    KIND: ClassVar[str] = "message"
    role: Literal["user", "assistant", "system", "developer", "tool", "unknown"]
    parts: list[Part]


class ToolCall(Node, kw_only=True):
    KIND: ClassVar[str] = "tool_call"
    call_id: str
    tool_id: str
    arguments: Json
    arguments_status: ArgumentsStatus
    retry_of: str | Opt = UNSET


class ToolResult(Node, kw_only=True):
    KIND: ClassVar[str] = "tool_result"
    call_id: str
    result_index: int
    terminal: bool
    outcome: ToolOutcome
    parts: list[Part]


class DecisionRequest(Node, kw_only=True):
    KIND: ClassVar[str] = "decision_request"
    request_id: str
    decision_kind: Literal["approval", "question", "plan_review"]
    prompt: list[Part]
    options: list[Json]
    call_id: str | Opt = UNSET
    task_id: str | Opt = UNSET
    task_revision: int | Opt = UNSET


class DecisionResolution(Node, kw_only=True):
    KIND: ClassVar[str] = "decision_resolution"
    request_id: str
    outcome: Literal["allowed", "denied", "answered", "cancelled", "expired", "unknown"]
    answer: list[Part]
    selected_option_id: str | Opt = UNSET


class TaskUpdate(Node, kw_only=True):
    KIND: ClassVar[str] = "task_update"
    task_id: str
    revision: int
    status: str
    parts: list[Part]
    previous_revision: int | Opt = UNSET
    dependencies: list[str] | Opt = UNSET
    reopen_reason: str | Opt = UNSET


class ContextCheckpoint(Node, kw_only=True):
    KIND: ClassVar[str] = "context_checkpoint"
    context_id: str
    reason: str
    replaced_context_id: str | Opt = UNSET


class ConfigurationChange(Node, kw_only=True):
    KIND: ClassVar[str] = "configuration_change"
    configuration_id: str


class ExecutionTransition(Node, kw_only=True):
    KIND: ClassVar[str] = "execution_transition"
    execution_id: str
    status: str
    error: Json | Opt = UNSET
    parts: list[Part] | Opt = UNSET


class ResourceChange(Node, kw_only=True):
    KIND: ClassVar[str] = "resource_change"
    resource_id: str
    operation: Literal["created", "modified", "deleted", "observed"]
    previous_resource_id: str | Opt = UNSET


class Note(Node, kw_only=True):
    KIND: ClassVar[str] = "note"
    parts: list[Part]
    category: str


class Extension(Node, kw_only=True):
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
    name: str
    version: str


class Capture(Node, kw_only=True):
    id: str
    producer: Producer
    consistency: Literal["consistent", "partial", "unknown"]
    boundary: str
    started_at: str | Opt = UNSET
    ended_at: str | Opt = UNSET


class NativeId(Node, kw_only=True):
    provider: str
    namespace: str
    value: str


class Lineage(Node, kw_only=True):
    relation: Literal["continuation", "fork", "translation", "copy"]
    session_id: str
    capture_id: str
    event_id: str | Opt = UNSET
    inclusive: bool | Opt = UNSET


class Session(Node, kw_only=True):
    id: str
    native_ids: list[NativeId] = []
    lineage: list[Lineage] = []
    title: str | Opt = UNSET
    objective: list[Part] | Opt = UNSET


class Participant(Node, kw_only=True):
    id: str
    kind: ParticipantKind
    name: str | Opt = UNSET
    provider: str | Opt = UNSET
    native_id: str | Opt = UNSET
    parent_participant_id: str | Opt = UNSET
    child_session: Json | Opt = UNSET


class Fork(Node, kw_only=True):
    session_id: str
    capture_id: str
    branch_id: str
    event_id: str | None
    inclusive: bool


class Branch(Node, kw_only=True):
    id: str
    event_ids: list[str]
    head_event_id: str | None
    fork: Fork | Opt = UNSET


class Execution(Node, kw_only=True):
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
    id: str
    name: str
    description: str
    input_schema: Json
    output_schema: Json | Opt = UNSET
    server_identity: str | Opt = UNSET
    revision: str | Opt = UNSET
    resource_ids: list[str] | Opt = UNSET


class Resource(Node, kw_only=True):
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
    scope: str
    status: CoverageStatus
    detail: str


class LossRef(Node, kw_only=True):
    type: str
    id: str


class Loss(Node, kw_only=True):
    id: str
    stage: LossStage
    kind: str
    explanation: str
    scope: str | Opt = UNSET
    references: list[LossRef] | Opt = UNSET


class Document(Node, kw_only=True):
    """One session. ``extras`` holds whole collections only ASIF knows (configurations, ...)."""

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
