"""Properties of the codex format on generated rollouts: the round trip through ASIF is exact,
every ASIF document written is valid, and a session written as a new rollout (the hand-off)
keeps every text, call and result of its history or names it in a loss."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from asif_convert import ConversionError, convert, ir
from asif_convert._errors import InternalError
from asif_convert._formats.asif import FORMAT as ASIF
from asif_convert._formats.codex import FORMAT as CODEX
from asif_convert._formats.codex import fresh
from asif_convert._pipeline import new_context
from asif_convert.plugin import Lines, Options
from tests.agents.judge import arrived
from tests.conftest import CORPUS

texts = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30)
ids = st.text("abcdefghij0123456789_", min_size=1, max_size=8)
stamps = st.sampled_from(["2025-10-03T09:00:00.000Z", "2026-01-02T03:04:05.678Z"])


@st.composite
def outputs(draw: Any) -> str:
    text, code = draw(texts), draw(st.integers(-1, 3))
    return draw(st.sampled_from([
        text,
        json.dumps({"output": text, "metadata": {"exit_code": code, "duration_seconds": 0.5}},
                   ensure_ascii=False, separators=(",", ":")),
        f"Exit code: {code}\nWall time: 0.1 seconds\nOutput:\n{text}",
        f"Chunk ID: ab12\nWall time: 0.0 seconds\nProcess exited with code {code}\nOutput:\n{text}",
    ]))


def message(draw: Any) -> dict[str, Any]:
    role = draw(st.sampled_from(["user", "assistant", "developer"]))
    kind = "output_text" if role == "assistant" else "input_text"
    content = [{"type": kind, "text": t} for t in draw(st.lists(texts, min_size=1, max_size=2))]
    item: dict[str, Any] = {"type": "message", "role": role, "content": content}
    if draw(st.booleans()):
        item["id"] = f"msg_{draw(ids)}"
    return item


@st.composite
def items(draw: Any, call_id: str) -> list[dict[str, Any]]:
    """One item, or a call with its output (a custom or local shell call, a function call)."""
    shape = draw(st.sampled_from(["message", "reasoning", "function", "custom", "shell", "web", "unknown"]))
    if shape == "message":
        return [message(draw)]
    if shape == "reasoning":
        return [{"type": "reasoning", "summary": [{"type": "summary_text", "text": draw(texts)}],
                 "encrypted_content": f"gAAA{draw(ids)}"}]
    if shape == "web":
        return [{"type": "web_search_call", "status": "completed", "action": {"type": "search", "query": draw(texts)}}]
    if shape == "unknown":
        return [{"type": "future_item", "value": draw(texts)}]
    if shape == "custom":
        call = {"type": "custom_tool_call", "call_id": call_id, "name": "apply_patch", "input": draw(texts)}
        return [call, {"type": "custom_tool_call_output", "call_id": call_id, "output": draw(outputs())}]
    if shape == "shell":
        call = {"type": "local_shell_call", "call_id": call_id, "status": "completed",
                "action": {"type": "exec", "command": ["ls", draw(texts)]}}
        return [call, {"type": "function_call_output", "call_id": call_id, "output": draw(outputs())}]
    arguments = draw(st.sampled_from([json.dumps({"cmd": draw(texts)}), '{"cmd": "cut', "{}"]))
    call = {"type": "function_call", "name": draw(st.sampled_from(["exec_command", "shell", "Bash"])),
            "arguments": arguments, "call_id": call_id}
    if draw(st.booleans()):
        call["namespace"] = draw(st.sampled_from(["multi_agent_v1", "mcp__files", ""]))
    return [call, {"type": "function_call_output", "call_id": call_id, "output": draw(outputs())}][
        :draw(st.sampled_from([1, 2, 2]))]


@st.composite
def other_lines(draw: Any, turn: int) -> dict[str, Any]:
    kind = draw(st.sampled_from(["task_started", "task_complete", "token_count", "exec", "turn_context",
                                 "compacted", "strange"]))
    if kind == "turn_context":
        return {"type": "turn_context", "payload": {"cwd": "/w", "approval_policy": draw(st.sampled_from(
            ["never", "on-request"])), "sandbox_policy": {"type": "read-only"}, "model": "gpt-5-codex"}}
    if kind == "compacted":
        history = [message(draw) for _ in range(draw(st.integers(0, 2)))]
        return {"type": "compacted", "payload": {"message": draw(texts), "replacement_history": history}}
    if kind == "strange":
        return {"type": "world_state", "payload": {"x": draw(texts)}}
    payload: dict[str, Any] = {"type": kind, "turn_id": f"turn-{turn}"}
    if kind == "token_count":
        payload = {"type": kind, "info": {"last_token_usage": {"input_tokens": draw(st.integers(0, 99))}}}
    if kind == "exec":
        payload = {"type": "exec_command_end", "call_id": "c0", "exit_code": draw(st.integers(0, 2))}
    return {"type": "event_msg", "payload": payload}


@st.composite
def rollouts(draw: Any) -> list[Any]:
    sid = "0199a213-81c0-7800-8aa1-bbab2a035a53"
    legacy = draw(st.booleans())
    lines: list[Any] = [{"id": sid, "timestamp": "2025-05-07T17:24:21.123Z", "instructions": draw(texts)}] if legacy \
        else [{"timestamp": "2025-10-03T09:00:00.000Z", "type": "session_meta",
               "payload": {"id": sid, "timestamp": "2025-10-03T09:00:00.000Z", "cwd": "/w", "originator": "x",
                           "cli_version": "0.44.0", "model_provider": "openai"}}]
    for k in range(draw(st.integers(0, 8))):
        for item in draw(items(f"c{k}")):
            if legacy:
                lines.append(item)
            else:
                line = {"timestamp": draw(stamps), "type": "response_item", "payload": item}
                if draw(st.booleans()):
                    line["ordinal"] = len(lines)
                lines.append(line)
        if legacy and draw(st.booleans()):
            lines.append({"record_type": "state"})
        elif not legacy and draw(st.booleans()):
            lines.append({"timestamp": draw(stamps), **draw(other_lines(k))})
    return lines


def _lines(values: list[Any]) -> Lines:
    return Lines(records=list(enumerate(values, 1)), problems=[])


@given(rollouts())
def test_a_rollout_through_asif_is_the_same_lines_and_the_asif_is_valid(values):
    ctx = new_context(Options())
    doc = ASIF.write(CODEX.read(_lines(values), ctx), ctx)
    assert [p for p in ASIF.validate(doc) if p.severity == "error"] == []
    back_ctx = new_context(Options())
    assert CODEX.write(ASIF.read(doc, back_ctx), back_ctx) == values


@given(rollouts())
def test_a_new_rollout_keeps_the_history_or_names_what_it_lost(values):
    ctx = new_context(Options())
    doc = CODEX.read(_lines(values), ctx)
    lines = fresh.write(doc, ctx, session_id="0199a213-0000-7000-8000-000000000001", cwd="/w")
    meta = lines[0]["payload"]
    assert lines[0]["type"] == "session_meta" and meta["id"] == "0199a213-0000-7000-8000-000000000001"
    assert all(isinstance(line["timestamp"], str) for line in lines)
    assert all(isinstance(line["payload"]["output"], str) for line in lines[1:]
               if line["payload"]["type"] == "function_call_output")
    assert arrived([line["payload"] for line in lines[1:]], ir.continued_history(doc), ctx.losses()) == []


# -- damaged rollouts: a conversion or a refusal, never an internal error ----------------------

CORPUS_ROLLOUTS = [p for p in sorted((CORPUS / "codex").glob("*.jsonl")) if not p.name.startswith("cut-")]
odd_values = st.sampled_from([None, True, 0, -1, 1.5, "", "x", [], {}, [1], {"a": 1}, {"type": "message"},
                              {"type": "function_call_output", "call_id": "c", "output": {}}])


def _damaged(value: Any, draw: Any) -> Any:
    """``value`` with one place inside it replaced, removed or itself damaged."""
    if isinstance(value, dict) and value and draw(st.booleans()):
        key = draw(st.sampled_from(sorted(value)))
        out = dict(value)
        match draw(st.sampled_from(["drop", "replace", "deeper"])):
            case "drop":
                del out[key]
            case "replace":
                out[key] = draw(odd_values)
            case _:
                out[key] = _damaged(value[key], draw)
        return out
    if isinstance(value, list) and value and draw(st.booleans()):
        k = draw(st.integers(0, len(value) - 1))
        return [*value[:k], _damaged(value[k], draw), *value[k + 1:]]
    return draw(odd_values)


@given(st.sampled_from(CORPUS_ROLLOUTS), st.data(), st.sampled_from(["asif", "codex", "claude-code"]))
def test_a_damaged_rollout_converts_or_is_refused_never_an_internal_error(path, data, to):
    values = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    for _ in range(data.draw(st.integers(1, 3))):
        k = data.draw(st.integers(0, len(values) - 1))
        values[k] = _damaged(values[k], data.draw)
    raw = b"".join(json.dumps(v).encode() + b"\n" for v in values)
    try:
        convert(raw, to=to, source="codex")
    except InternalError as exc:
        raise AssertionError(f"an internal error from input: {exc}") from None
    except ConversionError:
        pass  # refused with a reason: fine
