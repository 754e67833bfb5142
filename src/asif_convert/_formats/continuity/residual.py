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

PROVIDER = "asif"
LOSSES = "losses/1"
RESIDUAL = "residual/1"
_STATE_IDS = {LOSSES: "asif:losses", RESIDUAL: "asif:residual"}


def split(raw: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any] | None]:
    """Take the asif entries out of an export: (export without them, losses, patch or None)."""
    states = raw.get("native_states")
    if not states or not any(_ours(s) for s in states):
        return raw, [], None
    mine = {s["kind"]: s["payload"] for s in states if _ours(s)}
    rest = [s for s in states if not _ours(s)]
    out = dict(raw)
    if rest or not any(p.get("native_states_added") for p in mine.values()):
        out["native_states"] = rest
    else:
        del out["native_states"]
    return out, mine.get(LOSSES, {}).get("losses", []), mine.get(RESIDUAL, {}).get("patch")


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


def _ours(state: dict[str, Any]) -> bool:
    return (state.get("provider") == PROVIDER and state.get("kind") in (LOSSES, RESIDUAL)
            and isinstance(state.get("payload"), dict))
