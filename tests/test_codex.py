"""The codex format: Codex CLI rollouts in and out (corpus/codex/, docs/codex.md).

The real Codex CLI (tests/agents/) is the judge: a rollout converted to ASIF and back resumes
with the same history as the original; a session from elsewhere written as a rollout resumes
with every text, call and result of its history in Codex's first request, or a loss names it.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from asif_convert import InvalidInput, convert, ir, load
from asif_convert._formats.asif import FORMAT as ASIF
from asif_convert._formats.codex import FORMAT as CODEX
from asif_convert._formats.codex import fresh
from asif_convert._formats.continuity.plugin import FORMAT as CONTINUITY
from asif_convert._lines import decode_lines
from asif_convert._pipeline import new_context
from asif_convert.plugin import Lines, Options
from tests.agents import codex as client
from tests.agents.judge import arrived
from tests.conftest import ASIF_EXAMPLES, CONTINUITY_FILES, CORPUS, GOLDEN

ROLLOUTS = sorted((CORPUS / "codex").glob("*.jsonl"))
# what the current Codex resumes: the legacy generation has no session_meta line (Codex refuses
# it as empty) and a cut file is what Codex itself is still writing
PASSTHROUGH = "internal_chat_message_metadata_passthrough"
RESUMABLE = [p for p in ROLLOUTS if not p.name.startswith(("legacy-", "cut-"))]


def lines_of(data: bytes, name: str = "<input>") -> Lines:
    return decode_lines(data, name)


def to_asif(path: Path) -> tuple[dict[str, Any], Lines]:
    lines = lines_of(path.read_bytes(), path.name)
    ctx = new_context(Options())
    return ASIF.write(CODEX.read(lines, ctx), ctx), lines


def codex_lines(doc: dict[str, Any]) -> list[Any]:
    ctx = new_context(Options())
    return CODEX.write(ASIF.read(doc, ctx), ctx)


def encode(lines: list[Any]) -> bytes:
    return b"".join(json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode() + b"\n" for line in lines)


@pytest.mark.parametrize("path", ROLLOUTS, ids=lambda p: p.stem)
def test_a_rollout_to_asif_and_back_is_the_same_lines(path: Path):
    doc, lines = to_asif(path)
    assert [p for p in ASIF.validate(doc) if p.severity == "error"] == []
    assert codex_lines(doc) == [value for _, value in lines.records]


def _results(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["data"]["call_id"]: e["data"] for e in doc["events"] if e["kind"] == "tool_result"}


def test_outcomes_come_from_the_exit_codes_the_strings_report():
    parallel = _results(to_asif(CORPUS / "codex" / "parallel.jsonl")[0])
    assert [parallel[c]["outcome"] for c in ("call_p1", "call_p2", "call_p3")] == ["success", "success", "error"]
    wrapped = _results(to_asif(CORPUS / "codex" / "wrapped-2025-10.jsonl")[0])
    assert wrapped["call_w1"]["outcome"] == "error"  # "Exit code: 1"
    assert wrapped["call_w2"]["outcome"] == "success"  # "Process exited with code 0"
    # the JSON encoding: the text is the output inside it
    assert wrapped["call_w3"] == {**wrapped["call_w3"], "outcome": "error",
                                  "parts": [{"kind": "text", "text": "app.py: hunk did not apply\n"}]}
    legacy = _results(to_asif(CORPUS / "codex" / "legacy-2025-05.jsonl")[0])
    assert legacy["call_legacy_1"]["parts"] == [{"kind": "text", "text": "42 setup.py\n"}]
    assert [legacy[c]["outcome"] for c in ("call_legacy_1", "call_legacy_2")] == ["success", "error"]


def test_an_outcome_from_patch_apply_end_where_the_string_says_none(tmp_path: Path):
    lines = [json.loads(line) for line in (CORPUS / "codex" / "wrapped-2025-10.jsonl").read_text().splitlines()]
    for line in lines:  # the output as plain text, no exit code in it: patch_apply_end decides
        if line["payload"].get("call_id") == "call_w3" and line["payload"]["type"] == "custom_tool_call_output":
            line["payload"]["output"] = "app.py: hunk did not apply\n"
    path = tmp_path / "r.jsonl"
    path.write_bytes(encode(lines))
    doc, _ = to_asif(path)
    assert _results(doc)["call_w3"]["outcome"] == "error"
    assert codex_lines(doc) == lines


def test_the_ui_copies_are_not_a_second_conversation():
    doc, lines = to_asif(CORPUS / "codex" / "wrapped-2025-10.jsonl")
    texts = [p["text"] for e in doc["events"] if e["kind"] == "message" for p in e["data"]["parts"] if "text" in p]
    assert texts.count("Run the tests.") == 1  # the response item, not its event_msg copy
    assert any(loss["id"] == "translation:event_msg" for loss in doc["losses"])


def test_a_cut_last_line_converts_what_is_complete_with_a_loss():
    doc, lines = to_asif(CORPUS / "codex" / "cut-last-line.jsonl")
    assert [p.line for p in lines.problems] == [12] and lines.problems[0].severity == "warning"
    assert any(loss["id"] == "translation:cut-line" for loss in doc["losses"])
    assert "call_w1" not in _results(doc)  # its output is on the cut line


def test_unknown_lines_and_items_are_kept_with_a_loss():
    doc, _ = to_asif(CORPUS / "codex" / "wrapped-2025-10.jsonl")
    ids = {loss["id"] for loss in doc["losses"]}
    assert {"translation:other:future_line_type", "translation:other:response_item/future_item",
            "translation:other:response_item/ghost_snapshot"} <= ids


def test_reasoning_keeps_its_encrypted_content():
    doc, _ = to_asif(CORPUS / "codex" / "failing-command.jsonl")
    reasoning = [p["value"] for e in doc["events"] if e["kind"] == "message" for p in e["data"]["parts"]
                 if p["kind"] == "structured"]
    assert reasoning and reasoning[0]["encrypted_content"] == "gAAAAB-opaque-rs_1"


def test_detection_takes_both_generations_and_nothing_else():
    assert CODEX.detect([json.loads((CORPUS / "codex" / "hello.jsonl").read_text().splitlines()[0])])
    assert CODEX.detect([json.loads((CORPUS / "codex" / "legacy-2025-05.jsonl").read_text().splitlines()[0])])
    assert not CODEX.detect([{"type": "user", "message": {}}])
    assert not CODEX.detect({"asif_version": "0.4"})


def test_a_rollout_without_a_session_id_is_refused_with_its_line():
    problems = CODEX.validate(lines_of(b'{"timestamp":"t","type":"session_meta","payload":{"cwd":"/"}}\n'))
    assert [(p.line, p.path) for p in problems] == [(1, "/payload/id")] and "is missing" in problems[0].message
    for value, said in ((7, "a number"), ([], "an array"), (True, "a boolean"), ("", "empty")):
        meta = {"timestamp": "t", "type": "session_meta", "payload": {"id": value, "cwd": "/"}}
        [problem] = CODEX.validate(lines_of(json.dumps(meta).encode() + b"\n"))
        assert f"the session id is {said}" in problem.message  # (it said "missing")


def test_each_broken_line_of_a_rollout_is_reported_once():
    from asif_convert import validate
    first = (CORPUS / "codex" / "hello.jsonl").read_bytes().splitlines()[0]
    problems = validate(first + b"\nnot json\n" + first[:40], format="codex")
    assert [(p.line, p.severity) for p in problems] == [(2, "error"), (3, "warning")]


# -- from any other session ---------------------------------------------------------------


def _fresh(doc: ir.Document, ctx: Any) -> list[Any]:
    return fresh.write(doc, ctx, cwd="/work/project")


def test_a_new_rollout_keeps_a_freeform_call_and_names_the_lines_it_does_not_write():
    """A rollout handed off to a new one (written from its events): the freeform apply_patch
    call was a function_call of a JSON string, and the lines kept outside the events went
    unsaid (the reading's loss said they were kept)."""
    ctx = new_context(Options())
    doc = CODEX.read(lines_of((CORPUS / "codex" / "wrapped-2025-10.jsonl").read_bytes()), ctx)
    items = [line["payload"] for line in _fresh(doc, ctx)[1:]]
    [call] = [i for i in items if i.get("name") == "apply_patch"]
    assert call["type"] == "custom_tool_call" and call["input"].startswith("*** Begin Patch")
    assert [i["type"] for i in items if i.get("call_id") == call["call_id"]] == ["custom_tool_call",
                                                                                "custom_tool_call_output"]
    [kept] = [x for x in ctx.losses() if x.id.startswith("translation:kept-lines")]
    assert kept.kind == "dropped" and str(len(doc.native["codex/1"]["kept"])) in kept.id


@pytest.mark.parametrize("path", CONTINUITY_FILES, ids=lambda p: p.stem)
def test_a_continuity_session_becomes_a_rollout_codex_accepts(path: Path):
    ctx = new_context(Options())
    lines = _fresh(CONTINUITY.read(json.loads(path.read_bytes()), ctx), ctx)
    meta = lines[0]
    assert meta["type"] == "session_meta"
    assert {"id", "timestamp", "cwd", "originator", "cli_version"} <= meta["payload"].keys()
    assert all(isinstance(line["timestamp"], str) for line in lines)
    assert all(isinstance(line["payload"]["output"], str) for line in lines
               if line["payload"].get("type") == "function_call_output")


def test_an_error_outcome_is_said_in_the_output_with_a_loss():
    ctx = new_context(Options())
    doc = ir.Document(session=ir.Session(id="s"), participants=[], events=[
        ir.Event(id="c", sequence=0, actor_id="a", provenance=ir.Provenance(mode="reported", producer="x"),
                 body=ir.ToolCall(call_id="k", tool_id="Bash", arguments={"command": "false"},
                                  arguments_status="complete")),
        ir.Event(id="r", sequence=1, actor_id="t", provenance=ir.Provenance(mode="reported", producer="x"),
                 body=ir.ToolResult(call_id="k", result_index=0, terminal=True, outcome="error",
                                    parts=[ir.TextPart(text="exit 1")]))])
    lines = _fresh(doc, ctx)
    assert lines[-1]["payload"] == {"type": "function_call_output", "call_id": "k",
                                    "output": f"{fresh.ERROR_LINE}\nexit 1"}
    assert "translation:error-outcome" in {loss.id for loss in ctx.losses()}
    assert lines[0]["payload"]["id"] == fresh.session_uuid("s") != "s"


# -- the real client as the judge ----------------------------------------------------------


def _history(tmp: Path, data: bytes) -> list[dict[str, Any]]:
    """What Codex sends after resuming ``data``, in one folder every run shares (so that its
    environment context is the same), without what differs from run to run: the ids Codex gives
    the messages it injects, and the new turn's id and time."""
    run = tmp / "run"
    shutil.rmtree(run, ignore_errors=True)
    sent = client.resume(run, data)
    out = []
    for item in sent:
        item = {k: v for k, v in item.items() if k != "id"}
        meta = item.get(PASSTHROUGH)
        if isinstance(meta, dict):
            item[PASSTHROUGH] = {k: v for k, v in meta.items() if k not in ("turn_id", "create_time")}
        out.append(item)
    return out


@pytest.mark.parametrize("path", RESUMABLE, ids=lambda p: p.stem)
def test_codex_resumes_a_round_tripped_rollout_with_the_same_history(path: Path, tmp_path: Path):
    client.require_codex()
    doc, _ = to_asif(path)
    assert _history(tmp_path, encode(codex_lines(doc))) == _history(tmp_path, path.read_bytes())


@pytest.mark.parametrize("path", [*CONTINUITY_FILES, *ASIF_EXAMPLES], ids=lambda p: p.stem)
def test_codex_resumes_a_session_from_elsewhere_with_its_history(path: Path, tmp_path: Path):
    client.require_codex()
    ctx = new_context(Options())
    raw = json.loads(path.read_bytes())
    doc = (ASIF if "asif_version" in raw else CONTINUITY).read(raw, ctx)
    lines = _fresh(doc, ctx)
    sent = client.resume(tmp_path, encode(lines))
    assert arrived(sent, ir.continued_history(doc), ctx.losses()) == []


# -- what the other lines say, as ASIF ------------------------------------------------------------


def test_turns_are_executions_with_their_transitions():
    doc, _ = to_asif(CORPUS / "codex" / "wrapped-2025-10.jsonl")
    assert [x["status"] for x in doc["executions"]] == ["completed", "interrupted"]
    transitions = [(e["data"]["execution_id"], e["data"]["status"]) for e in doc["events"]
                   if e["kind"] == "execution_transition"]
    first, second = (x["id"] for x in doc["executions"])
    assert transitions == [(first, "running"), (first, "completed"), (second, "running"), (second, "interrupted")]
    call = next(e for e in doc["events"] if e["kind"] == "tool_call")
    assert call["execution_id"] == first


def test_turn_settings_are_a_configuration_changed_only_when_they_change():
    doc, lines = to_asif(CORPUS / "codex" / "wrapped-2025-10.jsonl")
    assert sum(1 for _, line in lines.records if line.get("type") == "turn_context") == 2  # the same settings twice
    [config] = doc["configurations"]
    assert config["model"] == {"model": "gpt-5-codex", "effort": "medium", "summary": "auto", "provider": "openai"}
    assert {p["id"]: p["definition"] for p in config["policies"]}["approval_policy"] == "on-request"
    assert [e["data"]["configuration_id"] for e in doc["events"] if e["kind"] == "configuration_change"] \
        == [config["id"]]


def test_token_counts_are_the_turns_usage():
    doc, _ = to_asif(CORPUS / "codex" / "wrapped-2025-10.jsonl")
    turn = doc["executions"][0]["id"]
    assert {(u["unit"], u["value"]) for u in doc["usage"] if u["scope_id"] == turn} >= {
        ("input_tokens", 2600), ("output_tokens", 150), ("reasoning_output_tokens", 64)}
    assert {u["counter"] for u in doc["usage"]} == {"delta"}


def test_a_compaction_is_a_summary_context_with_its_replacement_history():
    doc, lines = to_asif(CORPUS / "codex" / "compaction.jsonl")
    compacted = next(line["payload"] for _, line in lines.records if line.get("type") == "compacted")
    [context] = doc["contexts"]
    assert context["purpose"] == "summary" and len(context["inputs"]) == len(compacted["replacement_history"])
    marker = next(e for e in doc["events"] if e["kind"] == "context_checkpoint")
    assert marker["data"] == {"context_id": context["id"], "reason": "compaction"}
    assert any(loss["kind"] == "summarization" for loss in doc["losses"])


def test_the_context_codex_injects_is_the_clients_not_the_users():
    doc, _ = to_asif(CORPUS / "codex" / "wrapped-2025-10.jsonl")
    actors = {e["data"]["parts"][0]["text"][:21]: e["actor_id"] for e in doc["events"] if e["kind"] == "message"
              and e["data"]["parts"][0]["kind"] == "text"}
    assert actors["<environment_context>"] == "codex" and actors["Run the tests."] == "user"


# -- goldens, both ways ----------------------------------------------------------------------------

CODEX_GOLDEN = GOLDEN / "codex"
INTO_CODEX = [*CONTINUITY_FILES, *sorted(p for p in (CORPUS / "claude-code").glob("*/*.jsonl")
                                         if not p.name.startswith("agent-"))]


def _golden(path: Path, out: bytes) -> None:
    """Regenerate with ASIF_UPDATE_GOLDEN=1 after an intended change, and review the diff."""
    if os.environ.get("ASIF_UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(out)
    assert path.read_bytes() == out


@pytest.mark.parametrize("path", ROLLOUTS, ids=lambda p: p.stem)
def test_a_rollout_as_asif_matches_its_golden(path: Path):
    _golden(CODEX_GOLDEN / f"{path.stem}.asif.json", convert(path.read_bytes(), to="asif", name=path.name).output)


@pytest.mark.parametrize("path", INTO_CODEX, ids=lambda p: f"{p.parent.name}-{p.stem}"[:40])
def test_a_session_as_a_rollout_matches_its_golden(path: Path):
    out = convert(path.read_bytes(), to="codex", name=path.name).output
    _golden(CODEX_GOLDEN / f"from-{path.parent.name}-{path.stem[:16]}.jsonl", out)


def test_no_codex_golden_without_its_source():
    wanted = {f"{p.stem}.asif.json" for p in ROLLOUTS} | {f"from-{p.parent.name}-{p.stem[:16]}.jsonl"
                                                          for p in INTO_CODEX}
    assert {p.name for p in CODEX_GOLDEN.iterdir()} == wanted


# -- the other commands take rollouts like any input -------------------------------------------


def _cli(*args: str) -> Any:
    from typer.testing import CliRunner

    from asif_convert._cli.app import app

    return CliRunner().invoke(app, list(args))


def test_request_continues_a_rollout_on_a_provider(tmp_path: Path):
    out = tmp_path / "request.json"
    result = _cli("request", str(CORPUS / "codex" / "parallel.jsonl"), "--for", "openai-responses", "-o", str(out))
    assert result.exit_code == 0, result.output
    body = json.loads(out.read_text())
    calls = [i["call_id"] for i in body["input"] if i.get("type") == "function_call"]
    outputs = [i["call_id"] for i in body["input"] if i.get("type") == "function_call_output"]
    assert calls == outputs == ["call_p1", "call_p2", "call_p3"]


def test_request_refusing_a_call_names_its_line_of_the_rollout(tmp_path: Path):
    lines = (CORPUS / "codex" / "parallel.jsonl").read_bytes().splitlines(keepends=True)
    first_call = next(n for n, line in enumerate(lines) if b'"function_call"' in line)
    cut = tmp_path / "pending.jsonl"
    cut.write_bytes(b"".join(lines[:first_call + 1]))
    result = _cli("request", str(cut), "--for", "openai-responses", "-o", str(tmp_path / "r.json"))
    assert result.exit_code == 1
    assert f"line {first_call + 1}: /: tool call 'call_p1'" in result.stderr  # not the ASIF form's /events/k


def test_view_and_inspect_show_a_rollout(tmp_path: Path):
    page = tmp_path / "page.html"
    result = _cli("view", str(CORPUS / "codex" / "failing-command.jsonl"), "-o", str(page))
    assert result.exit_code == 0, result.output
    assert "missing-folder" in page.read_text()
    shown = _cli("inspect", str(CORPUS / "codex" / "failing-command.jsonl"))
    assert shown.exit_code == 0 and "codex" in shown.stdout


def test_batch_converts_a_folder_of_rollouts(tmp_path: Path):
    result = _cli("batch", str(CORPUS / "codex"), "-o", str(tmp_path / "out"), "--to", "asif", "-q")
    assert result.exit_code == 0, result.output
    assert {p.name for p in (tmp_path / "out").glob("*.asif.json")} == {f"{p.stem}.asif.json" for p in ROLLOUTS}


# -- lines ASIF cannot take as they are ------------------------------------------------------------


def _rollout(tmp_path: Path, *payloads: dict[str, Any], stamp: str = "2025-10-03T09:00:01.000Z") -> Path:
    head = json.loads((CORPUS / "codex" / "wrapped-2025-10.jsonl").read_text().splitlines()[0])
    lines = [head, *({"timestamp": stamp, "type": t, "payload": p} for t, p in
                     ((p.pop("_line", "response_item"), p) for p in map(dict, payloads)))]
    path = tmp_path / "r.jsonl"
    path.write_bytes(encode(lines))
    return path


def _call(call_id: str) -> dict[str, Any]:
    return {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": call_id}


def _output(call_id: str) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": "Exit code: 0\nOutput:\nok"}


@pytest.mark.parametrize("payloads", [
    [_output("nobody")],  # an output of no call
    [_call("a"), _output("a"), _output("a")],  # answered twice
    [_call("a"), _call("a")],  # one call id twice
], ids=["orphan-output", "answered-twice", "repeated-call"])
def test_unpaired_calls_and_outputs_stay_as_they_are_with_a_loss(tmp_path: Path, payloads: list[dict[str, Any]]):
    path = _rollout(tmp_path, *payloads)
    doc, lines = to_asif(path)
    assert [p for p in ASIF.validate(doc) if p.severity == "error"] == []
    assert any(loss["id"].startswith("translation:unpaired:") for loss in doc["losses"])
    assert codex_lines(doc) == [value for _, value in lines.records]


def test_an_empty_timestamp_and_odd_event_types_are_kept(tmp_path: Path):
    path = _rollout(tmp_path, {"_line": "event_msg", "type": "task_started"}, {"_line": "event_msg", "type": {}},
                    {"type": "message", "content": [{"type": "input_text", "text": "no role"}]}, stamp="")
    doc, lines = to_asif(path)
    assert [p for p in ASIF.validate(doc) if p.severity == "error"] == []
    assert "assistant" in {p["id"] for p in doc["participants"]}  # who runs the turn, with no answer in it
    assert codex_lines(doc) == [value for _, value in lines.records]


def test_a_namespaced_call_names_its_tool_with_its_namespace(tmp_path: Path):
    call = {"type": "function_call", "namespace": "multi_agent_v1", "name": "spawn_agent",
            "arguments": '{"task":"x"}', "call_id": "n1"}
    path = _rollout(tmp_path, call, _output("n1"))
    doc, lines = to_asif(path)
    assert [e["data"]["tool_id"] for e in doc["events"] if e["kind"] == "tool_call"] == ["multi_agent_v1.spawn_agent"]
    assert {t["id"] for t in doc["tools"]} == {"multi_agent_v1.spawn_agent"}
    assert codex_lines(doc) == [value for _, value in lines.records]


_DEEP = "[" * 1000 + "]" * 1000  # deeper than any value the converter carries (docs/hostile-input.md)


@pytest.mark.parametrize("arguments", ['{"a":' + _DEEP + "}", '{"n":12345678901234567890}'],
                         ids=["nested-1000-deep", "integer-beyond-2^53"])
def test_arguments_no_asif_value_holds_keep_their_line_as_it_is_with_a_loss(tmp_path: Path, arguments: str):
    """An outside sweep found a call whose argument string nests 1000 deep ending in exit 3,
    and one holding an integer beyond 2^53 refused for its output."""
    path = _rollout(tmp_path, {**_call("a"), "arguments": arguments}, _output("a"))
    result = convert(path, to="asif")
    doc = json.loads(result.output)
    [loss] = [x for x in result.losses if x.id.startswith("translation:unsafe-arguments")]
    assert loss.kind == "dialect_not_applied" and "line 2" in loss.explanation
    assert not [e for e in doc["events"] if e["kind"] == "tool_call"]
    back = convert(result.output, to="codex").output
    assert [json.loads(x) for x in back.splitlines()] == [json.loads(x) for x in path.read_bytes().splitlines()]


def test_an_output_line_beyond_the_limits_is_named_as_the_outputs_not_as_an_input_line(tmp_path: Path):
    """It said "line 4: ...: in the output: ...", which reads as line 4 of the input."""
    path = _rollout(tmp_path, {**_call("a"), "arguments": '{"a":' + "[" * 300 + "]" * 300 + "}"}, _output("a"))
    with pytest.raises(InvalidInput) as caught:
        convert(path, to="claude-code")
    [problem] = caught.value.problems
    assert problem.line is None and "in the output's line " in problem.message and "--max-depth" in problem.message


def test_an_output_in_the_json_encoding_nested_too_deep_is_its_text(tmp_path: Path):
    deep = '{"output":"ok","metadata":{"exit_code":0,"x":' + _DEEP + "}}"
    path = _rollout(tmp_path, _call("a"), {**_output("a"), "output": deep})
    result = convert(path, to="asif")
    [shown] = [e["data"]["parts"][0]["text"] for e in json.loads(result.output)["events"] if e["kind"] == "tool_result"]
    assert shown == deep
    back = convert(result.output, to="codex").output
    assert [json.loads(x) for x in back.splitlines()] == [json.loads(x) for x in path.read_bytes().splitlines()]


def test_a_line_without_a_timestamp_comes_back_without_one(tmp_path: Path):
    path = _rollout(tmp_path, _call("a"), _output("a"))
    lines = [json.loads(x) for x in path.read_bytes().splitlines()]
    del lines[1]["timestamp"]
    path.write_bytes(encode(lines))
    back = convert(convert(path, to="asif").output, to="codex").output
    assert [json.loads(x) for x in back.splitlines()] == lines


def test_the_codex_loss_kinds_are_known_to_fail_on(tmp_path: Path):
    out = tmp_path / "s.asif.json"
    result = _cli("convert", str(CORPUS / "codex" / "parallel.jsonl"), "--to", "asif", "-o", str(out),
                  "--fail-on", "ui_copy")
    assert result.exit_code == 4 and "ui_copy" in result.stderr and not out.exists()


def test_a_repeated_session_meta_line_is_one_workspace():
    """An outside sweep found a rollout whose session_meta line came twice ending in exit 3 (two
    environments of one id): the same workspace is one environment, another one a second."""
    meta = {"timestamp": "2026-12-06T07:22:40.886Z", "type": "session_meta",
            "payload": {"id": "01a24a3b-c55e-7141-9762-7b8e367cb937", "timestamp": "2026-12-06T07:22:40.865Z",
                        "cwd": "/p", "originator": "codex_exec", "cli_version": "0.171.0"}}
    moved = {**meta, "payload": {**meta["payload"], "cwd": "/q"}}
    data = b"".join(json.dumps(line).encode() + b"\n" for line in (meta, meta, moved))
    doc = json.loads(convert(data, to="asif").output)
    assert ASIF.validate(doc) == []
    assert [e["id"] for e in doc["environments"]] == ["workspace", "workspace-2"]
    back = convert(json.dumps(doc).encode(), to="codex").output
    assert [json.loads(line) for line in back.splitlines()] == [meta, meta, moved]


def test_an_amended_call_is_written_once_as_its_last_version():
    """A call recorded twice under one id (partial arguments, then complete) was written as two
    function calls, the first with ``{}``; read back, the empty arguments stood for the call."""
    source = CORPUS / "asif" / "tool-call-completed.session.json"
    doc = load(source)
    calls = [ev for ev in doc.events if isinstance(ev.body, ir.ToolCall)]
    assert len(calls) == 2 and calls[0].body.call_id == calls[1].body.call_id
    result = convert(source, to="codex")
    items = [json.loads(line)["payload"] for line in result.output.splitlines()[1:]]
    [call] = [i for i in items if i["type"] == "function_call"]
    assert json.loads(call["arguments"]) == calls[1].body.arguments
    [loss] = [x for x in result.losses if x.id.endswith("superseded-call")]
    assert [ref.id for ref in loss.references] == [calls[0].id]


def test_a_rollout_given_back_names_what_it_leaves_out():
    """Written back line for line, a rollout has no line for an event added since, nor room for
    a vendor's annotations, on a response item's event or on one read from a kept line."""
    doc = json.loads(convert(CORPUS / "codex" / "hello.jsonl", to="asif").output)
    by_id = {ev["id"]: ev for ev in doc["events"]}
    for eid in ("line-2", "line-3"):  # a task start (kept line), a message (response item)
        by_id[eid]["extensions"] = {**by_id[eid].get("extensions", {}), "x-vendor/1": {"note": "mine"}}
    _add_events(doc, by_id["line-3"]["actor_id"])
    result = convert(json.dumps(doc).encode(), to="codex")
    losses = {x.id.rpartition(":")[2]: [ref.id for ref in x.references] for x in result.losses}
    assert losses == {"unwritten": ["added", "noted"], "x-vendor/1": ["line-2", "line-3"]}
    assert b"one more thing" not in result.output


def _add_events(doc: dict, actor: str) -> None:
    """A message and a note (with a vendor's extension) added at the end of a session."""
    prov = {"mode": "synthetic", "producer": "an editor", "method": "by hand", "inputs": []}
    doc["events"].append({"id": "added", "sequence": len(doc["events"]), "actor_id": actor, "kind": "message",
                          "causes": [], "provenance": prov,
                          "data": {"role": "user", "parts": [{"kind": "text", "text": "one more thing"}]}})
    doc["events"].append({"id": "noted", "sequence": len(doc["events"]), "actor_id": actor, "kind": "note",
                          "causes": [], "provenance": prov, "extensions": {"x-vendor/1": {}},
                          "data": {"category": "remark", "parts": [{"kind": "text", "text": "a remark"}]}})
    for b in doc["branches"]:
        b["event_ids"] += ["added", "noted"]
        b["head_event_id"] = "noted"
    for c in doc["checkpoints"]:
        c["at_event_id"] = "noted"


def test_a_rollout_that_cannot_be_given_back_says_only_what_its_new_lines_leave():
    """When the kept lines no longer open a rollout (its header's id edited away), the session
    is written anew: the losses of giving it back (an event left unwritten) are not said."""
    doc = json.loads(convert(CORPUS / "codex" / "hello.jsonl", to="asif").output)
    _add_events(doc, doc["events"][1]["actor_id"])
    doc["codex/1"]["kept"][0][1]["payload"]["id"] = ""
    result = convert(json.dumps(doc).encode(), to="codex")
    assert b"one more thing" in result.output
    assert not [x for x in result.losses if x.id.endswith(":unwritten")]


def test_a_rollout_written_anew_names_the_state_it_leaves_behind():
    """A new session (a hand-off) is written from the events: what codex/1 held of the lines
    (item ids, an image output's detail) is not in it, and a loss says so."""
    doc = load(CORPUS / "codex" / "image.jsonl")
    ctx = new_context(Options())
    fresh.write(doc, ctx, session_id="0199a213-0000-7000-8000-0000000000ab", cwd="/w")
    [loss] = [x for x in ctx.losses() if x.id.endswith("extensions:codex/1")]
    named = {ref.id for ref in loss.references}
    [output] = [ev for ev in doc.events if isinstance(ev.body, ir.ToolResult) and ev.body.call_id == "call_img"]
    assert output.id in named and named <= {ev.id for ev in doc.events if "codex/1" in ev.native}


def test_an_assistant_message_is_written_with_text_only():
    """The Responses API takes an assistant message's text alone: its image is a loss, as in
    ``request``; the user's image is written."""
    result = convert(CORPUS / "asif" / "image-and-document.session.json", to="codex",
                     options=Options(artifacts_root=CORPUS / "asif"))
    items = [json.loads(line)["payload"] for line in result.output.splitlines()[1:]]
    kinds = {i["role"]: [c["type"] for c in i["content"]] for i in items if i["type"] == "message"}
    assert kinds["assistant"] == ["output_text"] and "input_image" in kinds["user"]
    [loss] = [x for x in result.losses if x.id.endswith("content:ResourcePart")]
    assert "e2" in [ref.id for ref in loss.references]
