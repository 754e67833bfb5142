"""The real-client test harness itself: the mock model server, and what Claude Code resumes."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.agents.claude import (
    CLIENT_TOOL_NAMES,
    USER_CONTEXT,
    ClaudeCode,
    ClientMissing,
    encode_cwd,
    find_claude,
    kill_group,
    read_jsonl,
    session_folder,
)
from tests.agents.fixtures import require_client
from tests.agents.make_claude_corpus import SCENARIOS, make
from tests.agents.mock_server import (
    AnthropicScript,
    MockModelServer,
    Reply,
    anthropic_routes,
    text,
    tool_use,
)

from .conftest import CORPUS


def post(url: str, body: object) -> tuple[int, str, bytes]:
    request = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers["Content-Type"], response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers["Content-Type"], exc.read()


def sse_events(payload: bytes) -> list[tuple[str, dict]]:
    events = []
    for chunk in payload.decode().split("\n\n"):
        if chunk.strip():
            name, data = chunk.split("\n")
            events.append((name.removeprefix("event: "), json.loads(data.removeprefix("data: "))))
    return events


def test_the_server_records_every_request_and_routes_by_path(mock_servers):
    server = mock_servers({"/v1/responses": lambda r: Reply(json_body={"echo": r.body})})
    assert server.base_url.startswith("http://127.0.0.1:") and server.port > 0
    assert post(server.base_url + "/v1/responses?x=1", {"a": 1})[2] == b'{"echo": {"a": 1}}'
    assert post(server.base_url + "/elsewhere", {"b": 2})[0] == 404
    assert [(r.path, r.body) for r in server.requests] == [("/v1/responses", {"a": 1}), ("/elsewhere", {"b": 2})]


def test_a_failing_handler_is_a_500_and_is_recorded(mock_servers):
    server = mock_servers({"/v1/messages": lambda r: 1 / 0})
    assert post(server.base_url + "/v1/messages", {})[0] == 500
    assert server.errors == ["/v1/messages: ZeroDivisionError: division by zero"]


def test_the_server_stops_and_frees_its_port():
    server = MockModelServer().start()
    url = server.base_url
    server.stop()
    with pytest.raises(OSError):
        urllib.request.urlopen(url, timeout=2)


def test_the_anthropic_script_streams_its_turns_in_order_and_answers_side_requests(mock_servers):
    script = AnthropicScript([[text("one"), tool_use("toolu_1", "Read", {"file_path": "a"})]])
    server = mock_servers(anthropic_routes(script))
    url = server.base_url + "/v1/messages"
    status, kind, payload = post(url, {"stream": True, "tools": [{"name": "Read"}], "messages": []})
    assert (status, kind) == (200, "text/event-stream")
    events = sse_events(payload)
    assert [name for name, _ in events] == [
        "message_start", "content_block_start", "content_block_delta", "content_block_stop",
        "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"]
    assert json.loads(events[5][1]["delta"]["partial_json"]) == {"file_path": "a"}
    assert events[7][1]["delta"]["stop_reason"] == "tool_use"
    side = json.loads(post(url, {"messages": []})[2])  # no tools: a title request, not the conversation
    assert side["content"] == [text("Mock title")]
    after = json.loads(post(url, {"tools": [{"name": "Read"}], "messages": []})[2])
    assert after["content"] == [text("Done.")] and len(script.conversation) == 2


def test_sessions_live_under_the_encoded_working_directory(tmp_path):
    assert encode_cwd("/tmp/pytest-1/a_b.c d") == "-tmp-pytest-1-a-b-c-d"
    client = ClaudeCode(tmp_path / "home", tmp_path / "p", "http://127.0.0.1:9", binary=tmp_path / "none")
    assert client.session_file("s").parent == tmp_path / "home" / ".claude" / "projects" / encode_cwd(
        (tmp_path / "p").resolve())


def test_the_client_never_runs_against_the_real_home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(AssertionError, match="real home"):
        ClaudeCode(tmp_path, tmp_path / "p", "http://127.0.0.1:9", binary=tmp_path / "none")


def test_killing_a_finished_group_is_harmless():
    kill_group(2**22 + 12345)  # no such process


def record(kind, uuid, parent, content, **extra):
    message = {"role": kind, "content": content}
    if kind == "assistant":
        message.update(id=f"msg_{uuid}", model="claude-sonnet-4-5-20250929")
    return {"type": kind, "uuid": uuid, "parentUuid": parent, "timestamp": "2026-01-02T03:04:05.000Z",
            "message": message, **extra}


def lines(*records) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


def test_the_real_client_sends_the_resumed_history(claude_code):
    call = tool_use("toolu_01", "Bash", {"command": "false"})
    result = {"type": "tool_result", "tool_use_id": "toolu_01", "content": "Exit code 1", "is_error": True}
    resumed = claude_code.resume(lines(
        record("user", "u1", None, "run false"),
        record("assistant", "a1", "u1", [call]),
        record("user", "u2", "a1", [result]),
        record("assistant", "a2", "u2", [text("It failed.")])))
    first = resumed.request["messages"][0]["content"][0]
    assert USER_CONTEXT.fullmatch(first["text"])  # the client's own addition, identified exactly
    assert resumed.history() == [
        {"role": "user", "content": [text("run false")]},
        {"role": "assistant", "content": [call]},
        {"role": "user", "content": [result]},
        {"role": "assistant", "content": [text("It failed.")]}]


def test_the_clients_answer_to_a_trailing_user_turn_is_not_history(claude_code):
    resumed = claude_code.resume(lines(
        record("user", "u1", None, "hello"),
        record("assistant", "a1", "u1", [text("hi")]),
        record("user", "u2", "a1", "second")))
    assert resumed.history() == [
        {"role": "user", "content": [text("hello")]},
        {"role": "assistant", "content": [text("hi")]},
        {"role": "user", "content": [text("second")]}]


def test_a_broken_parent_chain_cuts_the_history_the_client_sends(claude_code):
    # What the judge relies on: the request shows what the file holds, so a wrong link shows.
    resumed = claude_code.resume(lines(
        record("user", "u1", None, "lost"),
        record("assistant", "a1", "u1", [text("lost too")]),
        record("user", "u2", None, "kept"),
        record("assistant", "a2", "u2", [text("kept too")])))
    assert resumed.history() == [{"role": "user", "content": [text("kept")]},
                                 {"role": "assistant", "content": [text("kept too")]}]


def missing():
    raise ClientMissing("not installed here")


def test_a_missing_client_skips_with_its_reason(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="not installed here"):
        require_client(missing)


def test_a_missing_client_fails_under_ci(monkeypatch):
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true and not installed here"):
        require_client(missing)


# -- the corpus the real client wrote can be written again -------------------------------------


def shape(path: Path) -> tuple[list[tuple], list[tuple]]:
    """What a transcript is made of, without what changes from run to run (uuids, times, paths):
    its records of the tree (those with a uuid) in order, and its bookkeeping records (queue
    operations, modes, last prompts) as a sorted list, since the client writes those as it goes
    and their place among the others varies with timing."""
    tree, bookkeeping = [], []
    for record in read_jsonl(path):
        message = record.get("message") or {}
        content = message.get("content")
        blocks = [(b.get("type"), b.get("id") or b.get("tool_use_id")) for b in content if isinstance(b, dict)] \
            if isinstance(content, list) else [("string", None)]
        one = (record.get("type"), record.get("subtype"), (record.get("attachment") or {}).get("type"),
               message.get("role"), tuple(blocks) if message else (), tuple(sorted(record)))
        (tree if "uuid" in record else bookkeeping).append(one)
    return tree, sorted(bookkeeping, key=repr)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_the_corpus_script_writes_the_committed_transcripts_again(name, tmp_path):
    committed, files = session_folder(CORPUS / "claude-code" / name)
    made = make(name, tmp_path / "out", require_client(find_claude), root=tmp_path / "run")
    assert made.name == committed.name
    assert shape(made) == shape(committed)
    again = session_folder(made.parent)[1]
    assert [Path(f).name.startswith("agent-") for f in again] == [Path(f).name.startswith("agent-") for f in files]
    for sub in (f for f in files if f.endswith(".jsonl")):
        [twin] = [made.parent / f for f in again if f.endswith(".jsonl")]
        assert shape(twin) == shape(CORPUS / "claude-code" / name / sub)


def test_what_the_client_appends_after_a_compaction_is_not_history(claude_code):
    # The compaction transcript cut where the client had just compacted: resuming it, the client
    # appends "Continue from where you left off." and "No response requested.", and sends the
    # file's own attachment (a file read before the compaction) between the two.
    session, _ = session_folder(CORPUS / "claude-code" / "compact")
    lines = session.read_bytes().splitlines(keepends=True)
    cut = next(k for k, line in enumerate(lines) if b"Continue from where you left off." in line)
    resumed = claude_code.resume(b"".join(lines[:cut]))
    added = [r["message"]["content"] for r in resumed.after[len(resumed.before):]
             if r.get("type") in ("user", "assistant")]
    assert added[:2] == [[text("Continue from where you left off.")], [text("No response requested.")]]
    history = resumed.history()
    said = [b.get("text", "") for m in history for b in m["content"]]
    assert "Continue from where you left off." not in said and "No response requested." not in said
    assert history[-1]["role"] == "system" and said[-1].startswith("Called the Read tool")
    assert said[0].startswith("This session is being continued from a previous conversation")


def test_the_client_sends_a_recorded_task_call_as_agent(claude_code):
    # What CLIENT_TOOL_NAMES says, measured: the judge does not count this renaming as a loss.
    call = tool_use("toolu_01Task", "Task", {"description": "d", "prompt": "p"})
    result = {"type": "tool_result", "tool_use_id": "toolu_01Task", "content": [text("done")]}
    resumed = claude_code.resume(lines(
        record("user", "u1", None, "delegate"), record("assistant", "a1", "u1", [call]),
        record("user", "u2", "a1", [result]), record("assistant", "a2", "u2", [text("ok")])))
    sent = resumed.history()[1]["content"][0]
    assert (sent["name"], CLIENT_TOOL_NAMES["Task"]) == ("Agent", "Agent")
    assert sent == dict(call, name="Agent")
