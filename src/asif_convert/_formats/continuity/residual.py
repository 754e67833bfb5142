"""What an agent-continuity export cannot express of an ASIF session, carried inside it.

Two ``native_states`` entries of provider ``asif`` (the design's designated place):

* ``losses/1``: the ASIF losses that continuity has no field for (the document's own and this
  conversion's); they come back as ASIF ``losses`` on the return trip;
* ``residual/1``: a structural patch (``asif_convert._patch``) from the ASIF document the return
  trip would produce without it to the original, so ASIF -> continuity -> ASIF is exact. It holds
  only differences: nothing continuity already carries is copied.
"""

from __future__ import annotations

from typing import Any

from asif_convert._formats.continuity import state

PROVIDER = "asif"
LOSSES = "losses/1"
RESIDUAL = "residual/1"
CARRIED = "carried/1"  # which records carry ASIF data (parts in content_json, whole events)
_STATE_IDS = {LOSSES: "asif:losses", RESIDUAL: "asif:residual", CARRIED: "asif:carried"}


class Carried:
    """The records of an export that carry ASIF data, as the continuity writer listed them: only
    these are read as ASIF, so nothing a user writes into a record is taken for it."""

    def __init__(self, payload: dict[str, Any] | None = None, first_release: bool = False) -> None:
        payload = payload or {}
        self.messages: set[str] = set(payload.get("messages", ()))
        self.events: set[str] = set(payload.get("events", ()))
        self.first_release = first_release  # its exports list nothing: every record may carry ASIF data

    def message(self, record_id: str) -> bool:
        return self.first_release or record_id in self.messages

    def event(self, record_id: str) -> bool:
        return self.first_release or record_id in self.events


def split(raw: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any] | None, Carried]:
    """Take the asif entries out of an export: (export without them, the losses payload, patch
    or None, the records that carry ASIF data)."""
    states = raw.get("native_states")
    if not states or not any(_ours(s) for s in states):
        return raw, {}, None, Carried()
    mine: dict[str, Any] = {}
    rest = []
    for s in states:
        if s["kind"] not in mine and _ours(s):  # a second entry of a kind is foreign
            mine[s["kind"]] = s["payload"]
        else:
            rest.append(s)
    out = dict(raw)
    if rest or not any(p.get("native_states_added") for p in mine.values()):
        out["native_states"] = rest
    else:
        del out["native_states"]
    # The first release wrote residual and losses entries but listed no carrying records.
    first_release = CARRIED not in mine and RESIDUAL in mine
    return out, mine.get(LOSSES, {}), mine.get(RESIDUAL, {}).get("patch"), \
        Carried(mine.get(CARRIED), first_release)


def attach(export: dict[str, Any], kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``export`` with one asif entry appended to native_states."""
    out = dict(export)
    states = out.get("native_states")
    if states is None:
        payload = {**payload, "native_states_added": True}
    taken = {s["state_id"] for s in states or ()}
    state_id = _STATE_IDS[kind]
    while state_id in taken:
        state_id += "~"
    entry = {"state_id": state_id, "session_id": export["session"]["session_id"], "provider": PROVIDER,
             "kind": kind, "payload": payload, "portable": True}
    out["native_states"] = [*(states or ()), entry]
    return out


def _ours(entry: dict[str, Any]) -> bool:
    """An entry this converter wrote, read back through its declared type: one of another shape
    is foreign data and stays an ordinary native state."""
    if entry.get("provider") != PROVIDER:
        return False
    kind = entry.get("kind")
    if kind == LOSSES:
        return state.losses_payload(entry.get("payload"))
    if kind == CARRIED:
        return state.carried_payload(entry.get("payload"))
    return kind == RESIDUAL and state.residual_payload(entry.get("payload"))
