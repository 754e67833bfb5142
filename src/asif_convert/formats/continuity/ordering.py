"""One serialization order over an export's two separately numbered arrays."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ...ledger import Ledger


def merge(messages: list[dict], events: list[dict], ledger: Ledger) -> list[tuple[str, dict]]:
    """One serialization order over both arrays, keeping each array's own order.

    Continuity numbers messages and events separately, so interleaving them is an inference:
    by ``created_at`` when both records carry comparable timestamps, else by ``sequence``, else
    messages first. The merge is reported whenever both arrays are non-empty.
    """
    if messages and events:
        ledger.add("+event-order")
    out: list[tuple[str, dict]] = []
    i = j = 0
    while i < len(messages) and j < len(events):
        if _event_first(messages[i], events[j]):
            out.append(("events", events[j]))
            j += 1
        else:
            out.append(("messages", messages[i]))
            i += 1
    out += [("messages", m) for m in messages[i:]]
    out += [("events", e) for e in events[j:]]
    return out


def _event_first(msg: dict, ev: dict) -> bool:
    t_msg, t_ev = _timestamp(msg.get("created_at")), _timestamp(ev.get("created_at"))
    if t_msg is not None and t_ev is not None:
        try:
            if t_ev != t_msg:
                return t_ev < t_msg
        except TypeError:  # naive against aware: not comparable
            pass
    if "sequence" in ev:
        return ev["sequence"] < msg["sequence"]
    return False


def _timestamp(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None
