"""The converter's own state, read back through declared types.

Everything the continuity plugin finds in its own namespaces was written by this converter, but
once written anyone may have edited it: an ASIF document's ``agent-continuity/1`` values and
the ``asif`` native states of an export are untrusted data like any other. Each is decoded here
into a declared type; a value that does not match is *foreign*: the caller leaves it where it
stands (the residual carries it), reports it, and goes on without it.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType, field

from asif_convert._dialects.common import Style
from asif_convert._dialects.difference import Difference
from asif_convert._mapping import load_table
from asif_convert._validation.schemas import is_asif

WRITE_TABLE = "asif-to-continuity"  # the table a conversion's own travelled losses are keyed by

NonEmpty = Annotated[str, Meta(min_length=1)]
# Integers as the continuity schema (draft-07) counts them: 3.0 is an integer too, and is kept as written.
Count = Annotated[int, Meta(ge=0)] | Annotated[float, Meta(ge=0, multiple_of=1)]
Positive = Annotated[int, Meta(ge=1)] | Annotated[float, Meta(ge=1, multiple_of=1)]


class _State(Struct, forbid_unknown_fields=True, omit_defaults=True):
    pass


class SessionState(_State):
    status: Literal["active", "paused", "completed", "archived"] | UnsetType = UNSET
    active_branch_id: NonEmpty | UnsetType = UNSET
    metadata: dict[str, Any] | UnsetType = UNSET


class BranchState(_State):
    session_id: NonEmpty | UnsetType = UNSET
    branch_id: NonEmpty | UnsetType = UNSET
    # a listed null, or a parent no fork can say (the branch itself, an empty id); a real one is the fork
    parent_branch_id: str | None | UnsetType = UNSET
    name: NonEmpty | UnsetType = UNSET
    status: Literal["active", "paused", "archived"] | UnsetType = UNSET
    metadata: dict[str, Any] | UnsetType = UNSET
    created_at: NonEmpty | UnsetType = UNSET
    updated_at: NonEmpty | UnsetType = UNSET
    synthesized: bool | UnsetType = UNSET


class Members(_State):
    msg: NonEmpty | None
    call: list[NonEmpty]
    result: list[NonEmpty]
    res: list[NonEmpty] | UnsetType = UNSET  # the first release's: resources named by the template


class EventState(_State):
    """A message or an event record's continuity-only fields."""

    id: NonEmpty | UnsetType = UNSET
    session_id: NonEmpty | UnsetType = UNSET
    sequence: Positive | UnsetType = UNSET
    status: Literal["pending", "streaming", "complete", "partial", "failed"] | UnsetType = UNSET
    provider_message_id: str | None | UnsetType = UNSET
    idempotency_key: str | None | UnsetType = UNSET
    sha256: NonEmpty | UnsetType = UNSET
    run_id: Literal[""] | None | UnsetType = UNSET  # a run_id naming no execution, kept as written
    branch_id_absent: Literal[True] | UnsetType = UNSET
    dialect: Literal["anthropic-messages", "openai-chat", "openai-responses", "google-genai"] | UnsetType = UNSET
    style: Style | UnsetType = UNSET
    diff: Difference | UnsetType = UNSET
    template: Any = UNSET  # the first release's form of a dialect message
    members: Members | UnsetType = UNSET
    role: Literal["user", "assistant", "tool"] | UnsetType = UNSET
    text_content: str | UnsetType = UNSET
    text_part: Annotated[int, Meta(ge=0)] | UnsetType = UNSET  # the message part that shows the record's text_content
    text_of: list[Annotated[int, Meta(ge=0)]] | UnsetType = UNSET  # the texts text_content joins ...
    text_sep: Literal["\n", "\n\n", " "] | UnsetType = UNSET  # ... and with what (default: nothing)


class ContextState(_State):
    """A checkpoint's continuity-only fields."""

    checkpoint_id: NonEmpty | UnsetType = UNSET
    session_id: NonEmpty | UnsetType = UNSET
    parent_event_id: str | None | UnsetType = UNSET
    summary: dict[str, Any] | UnsetType = UNSET
    token_estimate: Count | UnsetType = UNSET
    created_by: str | None | UnsetType = UNSET
    created_at: NonEmpty | UnsetType = UNSET


class ResourceState(_State):
    """A native state's or an artifact's continuity-only fields."""

    state_id: NonEmpty | UnsetType = UNSET
    artifact_id: NonEmpty | UnsetType = UNSET
    session_id: NonEmpty | UnsetType = UNSET
    provider: NonEmpty | UnsetType = UNSET
    kind: NonEmpty | UnsetType = UNSET
    portable: bool | UnsetType = UNSET
    run_id: str | None | UnsetType = UNSET
    branch_id: NonEmpty | UnsetType = UNSET
    metadata: dict[str, Any] | UnsetType = UNSET
    created_at: NonEmpty | UnsetType = UNSET
    sha256: str | None | UnsetType = UNSET
    size_bytes: Count | None | UnsetType = UNSET


class DocumentState(_State):
    absent: list[Literal["branches", "native_states", "artifacts"]] | UnsetType = UNSET


def decode(value: Any, kind: type[_State]) -> dict[str, Any] | None:
    """``value`` when it is a well-typed ``kind``, else None (foreign data)."""
    try:
        msgspec.convert(value, kind)
    except msgspec.ValidationError:
        return None
    return value  # checked above: a dict of exactly those fields


# -- the asif native states of an export ---------------------------------------------------------


class Patch(Struct, forbid_unknown_fields=True):
    """One step of a structural patch (see ``asif_convert._patch``)."""

    replace: Any = field(default=UNSET, name="=")
    edit: dict[str, Patch] | UnsetType = field(default=UNSET, name="{}")
    removed: list[str] | UnsetType = field(default=UNSET, name="-")
    records: dict[str, Patch] | UnsetType = field(default=UNSET, name="[]")
    order: list[str] | UnsetType = UNSET
    key: Literal["id", "scope"] | UnsetType = UNSET


class ResidualPayload(Struct, forbid_unknown_fields=True):
    patch: Patch
    native_states_added: bool | UnsetType = UNSET


class OwnLosses(Struct, forbid_unknown_fields=True):
    """A conversion's own losses, by mapping-table key (see ``Ledger.compact``)."""

    kind: Literal["residual", "dropped"]
    fields: dict[str, list[tuple[NonEmpty, NonEmpty]]]


class LossesPayload(Struct, forbid_unknown_fields=True):
    losses: list[dict[str, Any]] = []
    ours: OwnLosses | UnsetType = UNSET
    native_states_added: bool | UnsetType = UNSET


# What the writer writes is never empty: a payload that says nothing is an ordinary native state
# of the export, whatever its provider and kind say (it comes back as it was).

def residual_payload(value: Any) -> bool:
    try:
        msgspec.convert(value, ResidualPayload)
    except msgspec.ValidationError:
        return False
    return bool(value["patch"])


def losses_payload(value: Any) -> bool:
    try:
        payload = msgspec.convert(value, LossesPayload)
    except msgspec.ValidationError:
        return False
    if not payload.losses and payload.ours is UNSET:
        return False
    if payload.ours is not UNSET and not set(payload.ours.fields) <= set(load_table(WRITE_TABLE).fields):
        return False
    return all(is_asif("loss", loss) for loss in payload.losses)


class CarriedPayload(Struct, forbid_unknown_fields=True):
    messages: list[NonEmpty] | UnsetType = UNSET
    events: list[NonEmpty] | UnsetType = UNSET
    native_states_added: bool | UnsetType = UNSET


def carried_payload(value: Any) -> bool:
    try:
        payload = msgspec.convert(value, CarriedPayload)
    except msgspec.ValidationError:
        return False
    return payload.messages is not UNSET or payload.events is not UNSET  # (lists, empty beside a residual)


def asif_parts(value: Any) -> bool:
    """Whether ``value`` is a list of structurally valid ASIF parts."""
    return isinstance(value, list) and all(is_asif("part", p) for p in value)
