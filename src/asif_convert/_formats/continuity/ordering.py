"""One serialization order over an export's two separately numbered arrays."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from asif_convert._ledger import Ledger


def merge(messages: list[dict], events: list[dict], ledger: Ledger) -> list[tuple[str, dict]]:
    """One serialization order over both arrays, keeping each array's own order.

    Continuity numbers messages and events separately, so interleaving them is an inference.
    When every record is numbered and no number repeats across the two arrays, the export
    evidently uses one numbering (as exports written from ASIF do) and it decides. Otherwise
    ``created_at`` decides where both records carry comparable timestamps, then ``sequence``,
    then messages come first. The merge is reported whenever both arrays are non-empty.
    """
    if not (messages and events):
        return [("messages", m) for m in messages] + [("events", e) for e in events]
    ledger.add("+event-order")
    shared = all("sequence" in e for e in events) and \
        len({r["sequence"] for r in (*messages, *events)}) == len(messages) + len(events)
    keys_m = [_key(m, shared) for m in messages]
    keys_e = [_key(e, shared) for e in events]
    out: list[tuple[str, dict]] = []
    i = j = 0
    while i < len(messages) and j < len(events):
        if _event_first(keys_m[i], keys_e[j]):
            out.append(("events", events[j]))
            j += 1
        else:
            out.append(("messages", messages[i]))
            i += 1
    out += [("messages", m) for m in messages[i:]]
    out += [("events", e) for e in events[j:]]
    return out


def _key(record: dict, shared: bool) -> tuple[datetime | None, int | None]:
    """What a record is ordered by: its timestamp (parsed once) unless one numbering decides."""
    return (None if shared else _timestamp(record.get("created_at")), record.get("sequence"))


def _event_first(msg: tuple[datetime | None, int | None], ev: tuple[datetime | None, int | None]) -> bool:
    (t_msg, s_msg), (t_ev, s_ev) = msg, ev
    if t_msg is not None and t_ev is not None:
        try:
            if t_ev != t_msg:
                return t_ev < t_msg
        except TypeError:  # naive against aware: not comparable
            pass
    return s_ev is not None and s_msg is not None and s_ev < s_msg


def _timestamp(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None
