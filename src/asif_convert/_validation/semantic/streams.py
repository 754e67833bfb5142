"""Optional features: stream assembly (asif.streams/0.1) and external bindings (asif.external-bindings/0.1)."""

from __future__ import annotations

from typing import Any

from asif_convert._errors import pointer
from asif_convert._validation.semantic.decisions import unique_options
from asif_convert._validation.semantic.index import Index, Report, as_dict, as_list, json_equal, parse_json, whole


def check(ix: Index, report: Report) -> None:
    seen: set[str] = set()
    for s, stream in enumerate(as_list(ix.doc.get("streams"))):
        stream = as_dict(stream)
        sid = stream.get("id")
        if sid in seen:
            report.add(79, pointer("streams", s, "id"), f"stream id '{sid}' is used twice")
        elif isinstance(sid, str):
            seen.add(sid)
        event = binding(ix, report, s, stream)
        complete, raw = assemble(ix, report, s, stream)
        status = "complete" if complete else "partial"
        if stream.get("status") != status:
            report.add(
                81,
                pointer("streams", s, "status"),
                f"stream '{sid}' says {stream.get('status')} but its segments make it {status}: complete means "
                "indexes 0, 1, 2, ... without gaps, ending in a terminal segment",
            )
        elif event is not None:  # a wrong status is fixed first; judging content by it would only add noise
            content(report, s, stream, event, complete, raw)
    external_bindings(ix, report)


def binding(ix: Index, report: Report, s: int, stream: dict) -> dict[str, Any] | None:
    """The bound event when it exists; checks call_id and result_index agree with it."""
    sid, eid = stream.get("id"), stream.get("event_id")
    event = ix.event(eid)
    if event is None:
        report.add(79, pointer("streams", s, "event_id"), f"stream '{sid}' binds event '{eid}', which is not in events")
        return None
    data = as_dict(event.get("data"))
    if data.get("call_id") != stream.get("call_id"):
        report.add(
            79,
            pointer("streams", s, "call_id"),
            f"stream '{sid}' names call '{stream.get('call_id')}' but its event '{eid}' has call "
            f"'{data.get('call_id')}'",
        )
    if stream.get("kind") == "tool_result_text" and (
        event.get("kind") != "tool_result" or data.get("result_index") != stream.get("result_index")
    ):
        report.add(
            79,
            pointer("streams", s, "result_index"),
            f"result-text stream '{sid}' must bind a tool_result with result_index "
            f"{stream.get('result_index')}; event '{eid}' does not match",
        )
    return event


def assemble(ix: Index, report: Report, s: int, stream: dict) -> tuple[bool, bytes | None]:
    """(complete, assembled bytes of the contiguous prefix or None when some bytes are not inline)."""
    sid = stream.get("id")
    segments = [as_dict(x) for x in as_list(stream.get("segments"))]
    raw, inline = bytearray(), True
    expected, gap, previous, terminals = 0, False, None, 0
    for k, segment in enumerate(segments):
        where = ("streams", s, "segments", k)
        index = whole(segment.get("index"))
        if previous is not None and index is not None and index <= previous:
            report.add(80, pointer(*where, "index"), f"stream '{sid}' segment index {index} is not above {previous}")
        previous = index if index is not None else previous
        if segment.get("terminal") is True:
            terminals += 1
            if terminals > 1 or k != len(segments) - 1:
                report.add(
                    80,
                    pointer(*where, "terminal"),
                    f"stream '{sid}' has a terminal segment that is not its only, last one",
                )
        piece = span(ix, report, where, sid, segment)
        # Only the prefix of indexes 0, 1, 2, ... is assembled; a gap leaves the rest unknown.
        gap = gap or index != expected
        if not gap:
            expected += 1
            if piece is None:
                inline = False
            elif inline:
                raw += piece
    complete = not gap and bool(segments) and segments[-1].get("terminal") is True
    return complete, bytes(raw) if inline else None


def span(ix: Index, report: Report, where: tuple, sid: Any, segment: dict) -> bytes | None:
    """The segment's bytes when its resource is inline; checks the span lies within the resource."""
    rid, offset, length = segment.get("resource_id"), whole(segment.get("offset")), whole(segment.get("length"))
    resource = ix.resources.get(rid)
    if resource is None or resource.get("availability") != "embedded":
        report.add(
            80,
            pointer(*where, "resource_id"),
            f"stream '{sid}' segment reads resource '{rid}', which is not a declared embedded resource",
        )
        return None
    content = ix.resource_bytes(rid)
    size = len(content) if content is not None else whole(resource.get("bytes"))
    if offset is None or length is None or size is None:
        return None
    if offset + length > size:
        report.add(
            80,
            pointer(*where),
            f"stream '{sid}' segment spans bytes {offset}..{offset + length} of resource '{rid}', which has {size}",
        )
        return None
    return None if content is None else content[offset : offset + length]


def content(report: Report, s: int, stream: dict, event: dict, complete: bool, raw: bytes | None) -> None:
    """Argument and result-text streams must agree with the event they bind."""
    sid, eid, data = stream.get("id"), event.get("id"), as_dict(event.get("data"))
    if stream.get("kind") == "tool_arguments":
        wanted = "complete" if complete else "partial"
        if event.get("kind") != "tool_call" or data.get("arguments_status") != wanted:
            report.add(
                82,
                pointer("streams", s, "event_id"),
                f"{wanted} argument stream '{sid}' must bind a tool_call whose arguments_status is "
                f"{wanted}; event '{eid}' does not",
            )
        elif complete and raw is not None:
            parsed, value = parse_json(raw)
            if not parsed or not json_equal(value, data.get("arguments")):
                report.add(
                    82,
                    pointer("streams", s, "segments"),
                    f"argument stream '{sid}' assembles to something other than the arguments of call event '{eid}'",
                )
    elif stream.get("kind") == "tool_result_text" and complete and raw is not None:
        parts = as_list(data.get("parts"))
        try:
            text: str | None = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        if (
            text is None
            or len(parts) != 1
            or as_dict(parts[0]).get("kind") != "text"
            or as_dict(parts[0]).get("text") != text
        ):
            report.add(
                83,
                pointer("streams", s, "segments"),
                f"result-text stream '{sid}' must assemble to UTF-8 text equal to the single text part "
                f"of result '{eid}'",
            )


def external_bindings(ix: Index, report: Report) -> None:
    seen: set[tuple[Any, Any]] = set()
    for k, item in enumerate(as_list(ix.doc.get("external_bindings"))):
        item = as_dict(item)
        key = (item.get("kind"), item.get("id"))
        if key in seen:
            report.add(84, pointer("external_bindings", k, "id"), f"external {key[0]} binding '{key[1]}' appears twice")
        seen.add(key)
        descriptor = as_dict(item.get("descriptor"))
        if item.get("kind") == "call" and not ix.has("tools", descriptor.get("tool_id")):
            report.add(
                84,
                pointer("external_bindings", k, "descriptor", "tool_id"),
                f"external call binding '{item.get('id')}' names tool '{descriptor.get('tool_id')}', "
                "which must be declared in tools",
            )
        if item.get("kind") == "request":
            unique_options(report, descriptor.get("options"), ("external_bindings", k, "descriptor", "options"), 84)
