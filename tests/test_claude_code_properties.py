"""Round trips of generated Claude Code transcripts (hypothesis; profiles as in test_properties.py):
claude-code -> ASIF -> claude-code gives every record back equal in value, and the ASIF written
passes the schema and the semantic rules (the pipeline validates every output)."""

from __future__ import annotations

import json
from typing import Any

import msgspec
from hypothesis import given
from hypothesis import strategies as st

from asif_convert import convert
from asif_convert._formats.claude_code import records

from .strategies import json_values

SESSION = "0f0e0d0c-0b0a-4909-8807-060504030201"
texts = st.text(min_size=0, max_size=12)
extra_keys = st.dictionaries(st.sampled_from(["slug", "requestId", "promptId", "entrypoint", "todos", "isMeta",
                                              "level", "x-new"]), json_values(3), max_size=2)


class _Writer:
    def __init__(self, draw: st.DrawFn) -> None:
        self.draw = draw
        self.records: list[dict[str, Any]] = []
        self.last: str | None = None
        self.n = 0
        self.calls = 0

    def envelope(self, kind: str, parent: str | None = None) -> dict[str, Any]:
        self.n += 1
        uuid = f"u-{self.n}"
        rec = {"parentUuid": parent if parent is not None else self.last, "isSidechain": False, "type": kind,
               "uuid": uuid, "timestamp": f"2026-01-01T00:00:{self.n % 60:02d}.000Z", "sessionId": SESSION,
               "cwd": self.draw(st.sampled_from(["/p", "/p", "/q"])), "version": "2.1.0"}
        rec.update(self.draw(extra_keys))
        self.last = uuid
        return rec

    def prompt(self, parent: str | None = None) -> None:
        content: Any = self.draw(st.one_of(texts, st.lists(st.fixed_dictionaries(
            {"type": st.just("text"), "text": texts}), min_size=1, max_size=2)))
        rec = self.envelope("user", parent)
        rec["message"] = {"role": "user", "content": content}
        self.records.append(rec)

    def response(self) -> None:
        mid = f"msg_{self.n}"
        blocks: list[dict[str, Any]] = []
        if self.draw(st.booleans()):
            blocks.append({"type": "thinking", "thinking": self.draw(texts), "signature": "sig"})
        if self.draw(st.booleans()):
            blocks.append({"type": "text", "text": self.draw(texts)})
        calls = []
        for _ in range(self.draw(st.integers(0, 2))):
            self.calls += 1
            calls.append(f"toolu_{self.calls}")
            blocks.append({"type": "tool_use", "id": calls[-1], "name": self.draw(st.sampled_from(["Bash", "Read"])),
                           "input": self.draw(st.dictionaries(st.sampled_from(["command", "file_path"]), texts))})
        usage = {"input_tokens": self.draw(st.integers(0, 99)), "output_tokens": 3, "service_tier": "standard"}
        for block in blocks or [{"type": "text", "text": "ok"}]:
            rec = self.envelope("assistant")
            rec["message"] = {"id": mid, "type": "message", "role": "assistant", "model": "claude-x",
                              "content": [block], "stop_reason": self.draw(st.sampled_from([None, "tool_use"])),
                              "stop_sequence": None, "usage": usage}
            self.records.append(rec)
        for call in calls:
            rec = self.envelope("user")
            result: dict[str, Any] = {"tool_use_id": call, "type": "tool_result", "content": self.draw(texts)}
            if self.draw(st.booleans()):
                result["is_error"] = self.draw(st.booleans())
            rec["message"] = {"role": "user", "content": [result]}
            if self.draw(st.booleans()):
                rec["toolUseResult"] = self.draw(json_values(4))
            self.records.append(rec)

    def other(self) -> None:
        kind = self.draw(st.sampled_from(["queue-operation", "progress", "system", "file-history-snapshot",
                                          "last-prompt", "from-the-future"]))
        if kind in ("progress", "system"):
            rec = self.envelope(kind)
            rec["data"] = self.draw(json_values(3))
        elif kind == "last-prompt":
            rec = {"type": kind, "lastPrompt": "p", "leafUuid": self.last, "sessionId": SESSION}
        else:
            rec = {"type": kind, "sessionId": SESSION, "value": self.draw(json_values(3))}
        self.records.append(rec)


@st.composite
def transcripts(draw: st.DrawFn) -> bytes:
    w = _Writer(draw)
    for _ in range(draw(st.integers(1, 5))):
        step = draw(st.sampled_from(["turn", "turn", "other", "fork"]))
        if step == "fork" and w.records:
            parents = [r["parentUuid"] for r in w.records if r.get("type") == "user"]
            w.prompt(parent=draw(st.sampled_from(parents)) if parents else None)
            w.response()
        elif step == "other":
            w.other()
        else:
            w.prompt()
            w.response()
    return b"".join(json.dumps(r, ensure_ascii=False).encode() + b"\n" for r in w.records)


@given(transcripts())
def test_claude_code_to_asif_and_back_is_exact(data):
    asif = convert(data, to="asif", source="claude-code")
    back = convert(asif.output, to="claude-code")
    assert [json.loads(x) for x in back.output.splitlines()] == [json.loads(x) for x in data.splitlines()]
    again = convert(back.output, to="asif", source="claude-code")
    assert again.output == asif.output  # the same records, the same session


def _neighbour(draw: st.DrawFn, value: Any, depth: int) -> Any:
    """``value`` with some members kept as they are (the same objects), some replaced, removed,
    reordered or added: what a record looks like beside its rendering."""
    if depth and isinstance(value, dict) and draw(st.booleans()):
        out = {k: _neighbour(draw, v, depth - 1) for k, v in value.items() if draw(st.integers(0, 5))}
        for k, v in draw(st.dictionaries(st.text(max_size=3), json_values(3), max_size=2)).items():
            out[k] = v
        keys = list(out)
        return {k: out[k] for k in (keys[::-1] if draw(st.booleans()) else keys)}
    return value if draw(st.booleans()) else draw(json_values(3))


@given(st.data(), st.dictionaries(st.text(max_size=3), st.one_of(json_values(4), st.dictionaries(
    st.text(max_size=3), json_values(3), max_size=4)), max_size=6))
def test_a_record_difference_is_the_whole_difference(data, rendering):
    from asif_convert._dialects.difference import apply, diff, diff_members

    record = _neighbour(data.draw, rendering, 2)
    assert diff_members(rendering, record, 2) == diff(rendering, record)
    assert json.dumps(apply(rendering, diff_members(rendering, record, 2))) == json.dumps(record)


@given(st.lists(st.builds(records.Slot, n=st.integers(0, 9), b=st.integers(0, 3), d=st.none() | json_values(2),
                          f=st.none() | texts), min_size=1, max_size=3),
       st.integers(0, 3), st.dictionaries(texts, json_values(1), max_size=2))
def test_a_home_as_json_is_what_msgspec_makes_of_it(slots: list[records.Slot], g: int, o: dict[str, Any]) -> None:
    """The reader writes its homes with ``Home.json`` (no copy of the differences); it must say
    what msgspec says of the struct, key for key and in order."""
    home = records.Home(r=slots, g=g, o=o)
    assert json.dumps(home.json()) == json.dumps(msgspec.to_builtins(home))


_OWN = ("parentUuid", "uuid", "timestamp", "message", "type", "toolUseResult", "sourceToolAssistantUUID")


@given(st.lists(st.sampled_from([*_OWN, "cwd", "version", "slug"]), unique=True),
       st.sampled_from(["user", "user:result", "assistant"]), st.none() | texts, st.none() | texts,
       st.none() | texts, st.just(msgspec.UNSET) | json_values(1))
def test_a_rendering_takes_the_members_and_order_of_the_record_before(keys, kind, uuid, time, source, tur):
    """The differences kept in documents were taken against this rendering: it must stay the
    record before, its members overwritten by the ones the events say (in place, else after
    it, in the order below), without the ones of them this record lacks."""
    message = {"id": "m", "type": "message", "role": "assistant", "model": "x", "content": []} \
        if kind == "assistant" else {"role": "user", "content": "y"}
    before = {k: f"before-{k}" for k in keys} | {"message": dict(message, model="before")}
    partial = records.Partial(n=0, f=None, kind=kind, message=message, uuid=uuid, time=time, tool_use_result=tur,
                              source=source)
    envelope = records.Envelope()
    envelope.last_uuid = "parent"
    envelope.template = {kind: before}
    said = {"parentUuid": "parent", "type": kind.partition(":")[0],
            "message": envelope._message(partial, before["message"])}
    said |= {k: v for k, v in (("uuid", uuid), ("timestamp", time)) if v is not None}
    said |= {"toolUseResult": tur} if tur is not msgspec.UNSET else {}
    said |= {"sourceToolAssistantUUID": source} if source is not None else {}
    expected = {**before, **said}
    for k in set(before) & set(_OWN) - set(said):
        del expected[k]
    assert json.dumps(envelope.canonical(partial)) == json.dumps(expected)
