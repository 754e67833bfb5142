"""Provider usage counters: the ``usage`` object of a provider message (what an API response
such as Anthropic's ``Message`` or an OpenAI completion message carries) as ASIF usage entries.

Each numeric counter, at any depth of ``usage``, is one entry of scope ``event`` (the message's
first event) whose unit is the counter's key path joined with dots (``input_tokens``,
``prompt_tokens_details.cached_tokens``), counter ``delta`` (a response's own counts). The
rendering of a message puts the entries of its event back into ``usage``, so an edited or added
counter travels; what else ``usage`` holds (strings, nulls) stays in the message's difference.
"""

from __future__ import annotations

from typing import Any

Counters = list[tuple[str, int | float]]  # (unit, value), in the order of the provider's keys


def _counter(value: Any) -> bool:
    # (a bool is not a count; past 2**53 a number is not exact in every JSON reader)
    return type(value) in (int, float) and 0 <= value <= 2**53 - 1


def extract(content: Any) -> Counters:
    """The counters of ``content["usage"]`` when content_json is a message object holding one."""
    usage = content.get("usage") if isinstance(content, dict) else None
    out: Counters = []
    if isinstance(usage, dict):
        _walk(usage, "", out)
    return out


def _walk(node: dict[str, Any], prefix: str, out: Counters) -> None:
    for key, value in node.items():
        if not key or "." in key:
            continue  # not a unit a path can name back
        if _counter(value):
            out.append((prefix + key, value))
        elif isinstance(value, dict):
            _walk(value, f"{prefix}{key}.", out)


def insert(rendered: Any, counters: Counters, fresh: bool = False) -> Any:
    """``rendered`` (a message object) with ``counters`` placed under ``usage``; ``fresh``: the
    caller made ``rendered`` for this, so it is changed instead of copied."""
    if not counters or not isinstance(rendered, dict):
        return rendered
    out = rendered if fresh else dict(rendered)
    usage = out["usage"] = dict(out["usage"]) if isinstance(out.get("usage"), dict) else {}
    for unit, value in counters:
        if "." not in unit:  # (most counters: a key of usage itself)
            usage[unit] = value
            continue
        *path, last = unit.split(".")
        node = usage
        for step in path:
            node[step] = dict(node[step]) if isinstance(node.get(step), dict) else {}
            node = node[step]
        node[last] = value
    return out


def entries(counters: Counters, event_id: str, provenance: dict[str, Any]) -> list[dict[str, Any]]:
    """ASIF usage entries of one message's counters."""
    return [{"scope": "event", "scope_id": event_id, "unit": unit, "value": value, "counter": "delta",
             "provenance": provenance} for unit, value in counters]


def by_event(usage: Any) -> dict[str, Counters]:
    """The delta counters of each event among ASIF root ``usage`` entries (anything else is left
    to the residual). A unit with an empty step names no key and is skipped."""
    out: dict[str, Counters] = {}
    for entry in usage if isinstance(usage, list) else ():
        if (isinstance(entry, dict) and entry.get("scope") == "event" and entry.get("counter") == "delta"
                and isinstance(entry.get("scope_id"), str) and isinstance(entry.get("unit"), str)
                and all(entry["unit"].split(".")) and _counter(entry.get("value"))):
            out.setdefault(entry["scope_id"], []).append((entry["unit"], entry["value"]))
    return out
