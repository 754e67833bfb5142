"""The claude-code format: every corpus transcript reads as a valid ASIF session and comes back
record for record; what each record type becomes; cut and broken files; sessions of other
formats written as transcripts the client resumes; goldens in both directions."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import msgspec
import pytest

import asif_convert
from asif_convert import InvalidInput, Limits, Options, convert
from asif_convert._registry import get

from .agents.claude import jsonl_values
from .conftest import ASIF_EXAMPLES, CONTINUITY_FILES, CORPUS, GOLDEN

TRANSCRIPTS = sorted((CORPUS / "claude-code").rglob("*.jsonl"))
SESSIONS = {p.parent.name if p.parent.parent.name == "claude-code" else p.stem: p for p in TRANSCRIPTS
            if not p.name.startswith("agent-") and p.parent.name != "subagents"}
CC_GOLDEN = GOLDEN / "claude-code"


records = jsonl_values  # the complete records of a transcript's bytes (a cut last line is none)


def to_asif(path: Path) -> dict:
    result = convert(path.read_bytes(), to="asif", name=path.name)
    doc = json.loads(result.output)
    assert get("asif").validate(doc) == []  # schema and semantic rules
    return doc


def back(doc: dict) -> bytes:
    return convert(json.dumps(doc).encode(), to="claude-code").output


def test_the_corpus_has_every_layout():
    assert {"tools", "image", "fork", "subagent", "compact", "older-inline-sidechain", "older-agent-file",
            "cut-last-line"} <= set(SESSIONS)


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=lambda p: str(p.relative_to(CORPUS / "claude-code")))
def test_a_transcript_comes_back_record_for_record(path):
    doc = to_asif(path)
    out = back(doc)
    assert records(out) == records(path.read_bytes())
    assert out.endswith(b"\n") and b"\n\n" not in out
    if b"\r" not in path.read_bytes() and path.read_bytes().endswith(b"\n"):  # what the client wrote itself
        assert out == path.read_bytes()


def test_a_document_written_before_result_key_orders_were_recorded_comes_back():
    """A session converted before the reader recorded a tool result's key order (style ``R``)
    holds the order in its differences instead: it still gives the transcript back exactly."""
    earlier = json.loads((Path(__file__).parent / "fixtures" / "claude-code-v1" / "tools.asif.json").read_bytes())
    assert not any("R" in e["extensions"]["claude-code/1"].get("o", {}) for e in earlier["events"]
                   if "claude-code/1" in e.get("extensions", {}))
    assert back(earlier) == SESSIONS["tools"].read_bytes()
    now = to_asif(SESSIONS["tools"])
    assert any("R" in e["extensions"]["claude-code/1"].get("o", {}) for e in now["events"]
               if "claude-code/1" in e.get("extensions", {}))


def _events(doc: dict, kind: str | None = None) -> list[dict]:
    return [e for e in doc["events"] if kind is None or e["kind"] == kind]


def test_a_split_response_is_one_message_with_its_calls():
    doc = to_asif(SESSIONS["tools"])
    source = records(SESSIONS["tools"].read_bytes())
    pieces = [r for r in source if r.get("type") == "assistant"]
    responses = {r["message"]["id"] for r in pieces}
    assert len(pieces) > len(responses)  # (the client split them)
    messages = [e for e in _events(doc, "message") if e["actor_id"] == "claude"]
    by_execution = {e.get("execution_id") for e in messages}
    assert len(messages) == len(by_execution)  # one message per response at most
    first = messages[0]
    kinds = [p["kind"] for p in first["data"]["parts"]]
    assert kinds[:2] == ["structured", "text"]  # thinking, then the text
    assert first["data"]["parts"][0]["value"]["type"] == "thinking"
    calls = [e for e in _events(doc, "tool_call") if e.get("execution_id") == first["execution_id"]]
    assert len(calls) == 2  # the two parallel calls of that response
    usage = [u for u in doc["usage"] if u["scope_id"] == first["id"]]
    assert usage and all(u["counter"] == "delta" for u in usage)
    assert len({u["scope_id"] for u in doc["usage"]}) == len(responses)  # usage once per response


def test_tool_use_result_is_the_results_structured_part():
    doc = to_asif(SESSIONS["tools"])
    results = _events(doc, "tool_result")
    assert results
    for result in results:
        kinds = [(p["kind"], p.get("schema")) for p in result["data"]["parts"]]
        assert kinds[-1] == ("structured", "claude-code/1:toolUseResult")
    failed = [r for r in results if r["data"]["outcome"] == "error"]
    assert failed and failed[0]["data"]["parts"][0]["kind"] == "text"


def test_every_other_record_is_an_extension_kept_verbatim_with_a_loss():
    doc = to_asif(SESSIONS["tools"])
    source = records(SESSIONS["tools"].read_bytes())
    kept = _events(doc, "extension")
    kinds = {r["type"] for r in source if r["type"] not in ("user", "assistant")}
    assert {e["data"]["type"].removeprefix("claude-code/1:") for e in kept} >= kinds
    assert all(e["data"]["value"] in source for e in kept)
    lost = {loss["id"] for loss in doc["losses"]}
    assert {f"translation:records[]:{k}" for k in kinds} <= lost


def test_a_fork_is_a_branch_and_the_active_one_is_what_resume_continues():
    doc = to_asif(SESSIONS["fork"])
    source = records(SESSIONS["fork"].read_bytes())
    branches = {b["id"]: b for b in doc["branches"]}
    assert "main" in branches and any(b.startswith("fork:") for b in branches)
    leaf = [r for r in source if r.get("type") == "last-prompt"][-1]["leafUuid"]
    assert branches["main"]["head_event_id"] == leaf
    prompts = [r for r in source if r.get("type") == "user" and isinstance(r["message"]["content"], str)]
    parents = [p["parentUuid"] for p in prompts]
    assert len(parents) > len(set(parents))  # two prompts under one parent
    assert len([c for c in doc["checkpoints"]]) == len(branches)


def test_a_compaction_is_a_context_whose_summary_stands_for_the_history():
    doc = to_asif(SESSIONS["compact"])
    notes = _events(doc, "note")
    assert len(notes) == 1 and notes[0]["data"]["category"] == "compaction_summary"
    assert not any(e["kind"] == "message" and e["id"] == notes[0]["id"] for e in doc["events"])
    [context] = doc["contexts"]
    assert context["at_event_id"] == notes[0]["id"] and context["inputs"][0]["transformation"] == "summary"
    main = next(b for b in doc["branches"] if b["id"] == "main")
    before = main["event_ids"][:main["event_ids"].index(notes[0]["id"])]
    assert [s["event_id"] for s in context["inputs"][0]["source_events"]] == before
    assert any(loss["kind"] == "summarization" for loss in doc["losses"])


def test_client_texts_in_user_turns_are_the_clients():
    doc = to_asif(SESSIONS["compact"])
    by_actor = {}
    for e in _events(doc, "message"):
        if e["data"]["role"] == "user":
            text = next((p["text"] for p in e["data"]["parts"] if p["kind"] == "text"), "")
            by_actor.setdefault(e["actor_id"], []).append(text)
    assert any(t.startswith("<local-command-stdout>") for t in by_actor["claude-code"])
    assert not any(t.startswith(("<local-command", "Caveat:")) for t in by_actor.get("user", []))


def test_an_inline_sidechain_is_a_subagent_with_its_own_branch():
    doc = to_asif(SESSIONS["older-inline-sidechain"])
    agents = [p for p in doc["participants"] if p["id"].startswith("subagent:")]
    assert agents and agents[0]["kind"] == "agent" and agents[0]["parent_participant_id"] == "claude"
    side = [b for b in doc["branches"] if b["id"].startswith("sidechain:")]
    assert side and all(e not in next(b for b in doc["branches"] if b["id"] == "main")["event_ids"]
                        for e in side[0]["event_ids"])


def test_environments_and_configurations_come_from_the_envelope():
    doc = to_asif(SESSIONS["tools"])
    source = records(SESSIONS["tools"].read_bytes())
    cwd = next(r["cwd"] for r in source if "cwd" in r)
    assert any(env["definition"]["value"].get("cwd") == cwd for env in doc["environments"])
    versions = {r["version"] for r in source if "version" in r}
    assert {c["capabilities"][0]["definition"]["version"] for c in doc["configurations"]} == versions


def test_an_envelope_member_that_is_no_string_names_no_environment():
    """A working directory or branch written as an array or object (an edited transcript) is
    no string: the records with it name none, the others theirs, in the order they come."""
    data = _lines(_record("u1", None, "user", "Hi", cwd=["/odd"], gitBranch={"b": 1}, version="2.0.1"),
                  _record("u2", "u1", "user", "Again", cwd="/p", gitBranch="main", version=["2.0.2"]),
                  _record("u3", "u2", "user", "More", cwd={"x": 1}, gitBranch="main"))
    doc = convert(data, to="asif", source="claude-code").document
    assert [env["definition"]["value"] for env in doc["environments"]] == [{"cwd": "/p", "gitBranch": "main"},
                                                                          {"gitBranch": "main"}]
    assert [c["capabilities"][0]["definition"] for c in doc["configurations"]] == [{"version": "2.0.1"}]


def test_a_cut_last_line_converts_what_is_complete_with_a_warning_and_a_loss():
    path = SESSIONS["cut-last-line"]
    result = convert(path.read_bytes(), to="asif", name=path.name)
    lines = path.read_bytes().split(b"\n")
    cut = len(lines)
    assert [(w.rule, w.line, w.severity) for w in result.warnings] == [("truncated", cut, "warning")]
    doc = json.loads(result.output)
    assert any(loss["id"] == f"translation:records[].cut:line {cut}" for loss in doc["losses"])
    assert doc["capture"]["consistency"] == "partial" and f"({cut})" in doc["capture"]["boundary"]


def test_the_capture_id_depends_on_the_records_values_only():
    """The id is the digest decoding made on the way (or made later, for trusted input, for a cut
    file): the same records give the same id, whatever their spacing or the blank lines."""
    path = SESSIONS["tools"]
    data = path.read_bytes()
    spaced = b"\n\n".join(json.dumps(json.loads(x), indent=None).encode() for x in data.splitlines()) + b"\n"
    ids = {convert(d, to="asif", name=path.name, limits=limits).document["capture"]["id"]
           for d in (data, spaced) for limits in (Limits(), Limits(trusted=True))}
    assert len(ids) == 1
    records = [json.loads(x) for x in data.splitlines()]
    expected = hashlib.sha256(b"".join(msgspec.json.encode(r) + b"\n" for r in records)).hexdigest()[:32]
    assert ids == {f"claude-code:{expected}"}
    cut = convert(data + data.splitlines()[-1][:20], to="asif", name=path.name).document["capture"]["id"]
    assert cut == ids.pop()  # (a cut last line is not a record)


def test_a_line_that_is_not_json_is_refused_naming_its_line():
    data = SESSIONS["tools"].read_bytes().replace(b"\n", b"\n# a comment\n", 1)
    with pytest.raises(InvalidInput) as caught:
        convert(data, to="asif", name="s.jsonl", source="claude-code")
    [problem] = caught.value.problems
    assert problem.line == 2 and problem.rule == "json"
    assert "line 2: /: not valid JSON" in str(caught.value)


def test_a_record_that_is_not_an_object_is_refused_naming_its_line():
    data = SESSIONS["tools"].read_bytes() + b"[1, 2]\n"
    with pytest.raises(InvalidInput) as caught:
        convert(data, to="asif", source="claude-code")
    assert caught.value.problems[0].line == data.count(b"\n")


def test_an_unknown_record_type_is_kept_and_comes_back():
    data = SESSIONS["tools"].read_bytes() + b'{"type":"from-the-future","uuid":"x-1","parentUuid":null,"w":[1]}\n'
    doc = json.loads(convert(data, to="asif").output)
    [kept] = [e for e in doc["events"] if e["data"].get("type") == "claude-code/1:from-the-future"]
    assert kept["data"]["value"]["w"] == [1]
    assert records(back(doc)) == records(data)


@pytest.mark.parametrize(("name", "agent"), [("subagent", "af0059d18e0803e9b"), ("older-agent-file", "5f3a9c1e")])
def test_a_subagents_own_file_is_read_with_its_session_and_linked_to_its_call(name, agent):
    path = SESSIONS[name]
    result = convert(path, to="asif")
    doc = json.loads(result.output)
    assert get("asif").validate(doc) == []
    branch = next(b for b in doc["branches"] if b["id"] == f"subagent:{agent}")
    by_id = {e["id"]: e for e in doc["events"]}
    first = by_id[branch["event_ids"][0]]
    [cause] = first["causes"]
    call = by_id[cause["event_id"]]
    assert call["kind"] == "tool_call" and call["data"]["tool_id"] in ("Task", "Agent")
    assert any(by_id[e]["actor_id"] == f"subagent:{agent}" for e in branch["event_ids"])
    back_out = convert(json.dumps(doc).encode(), to="claude-code")
    assert records(back_out.output) == records(path.read_bytes())  # the session's own file
    assert "companion_not_written" in back_out.loss_counts()


def test_an_inline_sidechain_is_linked_to_its_task_call():
    doc = to_asif(SESSIONS["older-inline-sidechain"])
    side = next(b for b in doc["branches"] if b["id"].startswith("sidechain:"))
    first = next(e for e in doc["events"] if e["id"] == side["event_ids"][0])
    assert [c["event_id"] for c in first["causes"]] == [
        e["id"] for e in doc["events"] if e["kind"] == "tool_call" and e["data"]["tool_id"] == "Task"]


def test_a_subagents_folder_reached_through_a_link_is_not_read(tmp_path):
    path = SESSIONS["subagent"]
    copy = tmp_path / path.name
    copy.write_bytes(path.read_bytes())
    (tmp_path / path.stem).symlink_to(path.parent / path.stem)  # the session's folder, elsewhere
    result = convert(copy, to="asif")
    doc = json.loads(result.output)
    assert not any(b["id"].startswith("subagent:") for b in doc["branches"])
    named = [x["explanation"] for x in doc["losses"] if x["kind"] == "subagent_not_read"]  # not silently skipped
    assert any(f"{path.stem}/subagents:" in x and "symbolic link" in x for x in named)


def test_a_subagent_file_that_is_a_link_is_named_and_not_read(tmp_path):
    path = SESSIONS["subagent"]
    copy = tmp_path / path.name
    copy.write_bytes(path.read_bytes())
    (tmp_path / path.stem / "subagents").mkdir(parents=True)
    [agent_file] = (path.parent / path.stem / "subagents").glob("agent-*.jsonl")
    (tmp_path / path.stem / "subagents" / agent_file.name).symlink_to(agent_file)
    doc = json.loads(convert(copy, to="asif").output)
    assert not any(b["id"].startswith("subagent:") for b in doc["branches"])
    [loss] = [x for x in doc["losses"] if x["kind"] == "subagent_not_read"]
    assert f"{path.stem}/subagents/{agent_file.name}" in loss["explanation"]


@pytest.mark.parametrize("name", ["subagent", "older-agent-file"])
def test_a_subagent_whose_transcript_is_missing_is_a_loss(tmp_path, name):
    path = SESSIONS[name]
    copy = tmp_path / path.name
    copy.write_bytes(path.read_bytes())  # without its subagent's file
    doc = json.loads(convert(copy, to="asif").output)
    [loss] = [x for x in doc["losses"] if x["kind"] == "subagent_not_read"]
    agent = {"subagent": "af0059d18e0803e9b", "older-agent-file": "5f3a9c1e"}[name]
    assert f"agent-{agent}.jsonl" in loss["explanation"]
    with_it = json.loads(convert(path, to="asif").output)  # with it: no such loss
    assert not [x for x in with_it["losses"] if x["kind"] == "subagent_not_read"]


def _with_subagent_file(tmp_path: Path, name: str, edit) -> Path:
    """A copy of corpus session ``name`` and its subagent's file, that file's bytes edited."""
    path = SESSIONS[name]
    [agent_file] = path.parent.rglob("agent-*.jsonl")  # (beside it, or in its subagents/ folder)
    rel = agent_file.relative_to(path.parent)
    (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / rel).write_bytes(edit(agent_file.read_bytes()))
    copy = tmp_path / path.name
    copy.write_bytes(path.read_bytes())
    return copy


@pytest.mark.parametrize("name", ["subagent", "older-agent-file"])
def test_a_line_of_a_subagent_file_that_is_not_json_refuses_the_session_naming_that_file(tmp_path, name):
    copy = _with_subagent_file(tmp_path, name, lambda data: data + b"# not a record\n")
    with pytest.raises(InvalidInput) as caught:
        convert(copy, to="asif")
    [problem] = caught.value.problems
    [agent_file] = tmp_path.rglob("agent-*.jsonl")
    assert problem.rule == "json" and problem.line == agent_file.read_bytes().count(b"\n")  # (the last line)
    assert str(agent_file.relative_to(tmp_path)) in problem.message


def test_a_cut_last_line_of_a_subagent_file_is_a_warning_naming_that_file(tmp_path):
    copy = _with_subagent_file(tmp_path, "subagent", lambda data: data[:-20])
    result = convert(copy, to="asif")
    [warning] = [w for w in result.warnings if w.rule == "truncated"]
    assert "/subagents/agent-" in warning.message
    assert any(x.kind == "truncated_input" for x in result.losses)


def test_a_response_of_server_results_alone_over_several_records_comes_back_whole():
    """Its records were rendered as one user record's: all but the first were lost on the way back."""
    envelope = {"isSidechain": False, "userType": "external", "cwd": "/p", "sessionId": "s1", "version": "2.1.0"}

    def piece(uuid: str, parent: str, mid: str, block: dict) -> dict:
        return {**envelope, "parentUuid": parent, "type": "assistant", "uuid": uuid, "timestamp": f"2026-01-01T{uuid}",
                "message": {"id": mid, "type": "message", "role": "assistant", "model": "claude", "content": [block],
                            "stop_reason": None, "stop_sequence": None}}

    search = [{"type": "server_tool_use", "id": f"srv{k}", "name": "web_search", "input": {}} for k in (1, 2)]
    found = [{"type": "web_search_tool_result", "tool_use_id": f"srv{k}", "content": []} for k in (1, 2)]
    recs = [{**envelope, "parentUuid": None, "type": "user", "uuid": "u1", "message": {"role": "user", "content": "q"}},
            piece("a1", "u1", "m1", search[0]), piece("a2", "a1", "m1", search[1]),
            piece("a3", "a2", "m2", found[0]), piece("a4", "a3", "m2", found[1])]
    doc = convert(b"".join(json.dumps(r).encode() + b"\n" for r in recs), to="asif").output
    assert get("asif").validate(json.loads(doc)) == []
    result = convert(doc, to="claude-code")
    assert records(result.output) == recs and not result.warnings


@pytest.mark.parametrize("content", [[], [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]],
                         ids=["empty", "two-blocks"])
def test_a_subagents_prompt_of_any_number_of_blocks_comes_back_record_for_record(content):
    """A subagent's prompt is rendered as the agent's turn; its record's block count (a user
    record's, which says nothing) made the writer think the session edited: it was written anew."""
    lines = SESSIONS["older-inline-sidechain"].read_bytes().splitlines()
    k, rec = next((k, json.loads(x)) for k, x in enumerate(lines)
                  if json.loads(x).get("isSidechain") is True and json.loads(x).get("type") == "user")
    rec["message"]["content"] = content
    lines[k] = json.dumps(rec).encode()
    doc = convert(b"\n".join(lines) + b"\n", to="asif").output
    result = convert(doc, to="claude-code")
    assert not result.warnings and records(result.output) == [json.loads(x) for x in lines]


def test_a_transcript_given_as_one_json_array_is_refused_saying_what_it_is(tmp_path):
    records = [json.loads(x) for x in SESSIONS["tools"].read_bytes().splitlines()]
    path = tmp_path / "array.jsonl"
    path.write_text(json.dumps(records))
    with pytest.raises(InvalidInput) as caught:
        convert(path, to="asif")
    assert "claude-code, codex" in caught.value.problems[0].message  # (it named the document formats only)
    with pytest.raises(InvalidInput) as caught:
        convert(path, to="asif", source="claude-code")
    assert caught.value.problems[0].message.endswith("but the input is one JSON array")


def test_a_parent_that_names_no_record_is_a_warning_at_its_line():
    lines = SESSIONS["tools"].read_bytes().splitlines()
    k = next(k for k, x in enumerate(lines) if k > 3 and isinstance(json.loads(x).get("parentUuid"), str))
    rec = json.loads(lines[k])
    rec["parentUuid"] = "no-such-record"
    lines[k] = json.dumps(rec).encode()
    data = b"\n".join(lines) + b"\n"
    [warning] = [w for w in convert(data, to="asif").warnings if w.rule == "parent-chain"]
    assert warning.line == k + 1 and warning.severity == "warning" and "no-such-record" in warning.message
    with pytest.raises(InvalidInput):
        convert(data, to="asif", options=Options(strict=True))
    for path in SESSIONS.values():  # (the client's own transcripts, subagent files with them: none)
        assert not [w for w in convert(path, to="asif").warnings if w.rule == "parent-chain"]


def test_a_block_the_dialect_keeps_opaque_is_a_loss_naming_its_event():
    lines = SESSIONS["tools"].read_bytes().splitlines()
    k, rec = next((k, json.loads(x)) for k, x in enumerate(lines) if json.loads(x).get("type") == "assistant")
    rec["message"]["content"].append({"type": "hologram", "frames": 3})
    lines[k] = json.dumps(rec).encode()
    result = convert(b"\n".join(lines) + b"\n", to="asif")
    [loss] = [x for x in result.losses if x.kind == "dialect_opaque"]
    assert "hologram" in loss.explanation and [r.id for r in loss.references] == [rec["uuid"]]
    assert records(convert(result.output, to="claude-code").output)[k] == rec  # (still exact)


def test_a_subagent_file_read_alone_continues_its_own_history():
    """A transcript of sidechain records alone has an empty main line: its one history is the
    active branch, which another agent's format writes (a Codex rollout of it was its header
    alone) and request continues (it refused: two branches, none active)."""
    agent_file = CORPUS / "claude-code" / "older-agent-file" / "agent-5f3a9c1e.jsonl"
    doc = to_asif(agent_file)
    [active] = [c["branch_id"] for c in doc["checkpoints"] if c["status"] == "active"]
    assert active.startswith("sidechain:")
    texts = [p["text"] for e in doc["events"] if e["kind"] == "message" for p in e["data"]["parts"]
             if p["kind"] == "text"]
    rollout = convert(agent_file, to="codex").output.decode()
    assert texts and all(json.dumps(t)[1:-1] in rollout for t in texts)
    assert asif_convert.request(agent_file, provider="anthropic-messages").body["messages"]


# -- sessions of other formats, written for Claude Code --------------------------------------------

FOREIGN = [*CONTINUITY_FILES, *ASIF_EXAMPLES]


def _resumable(out: list[dict]) -> None:
    """What `claude --resume` needs (agent-sessions.md): one uuid chain, a timestamp on the leaf,
    a model on assistant records, content as lists, every call answered."""
    parent = None
    for rec in out:
        assert rec["parentUuid"] == parent and rec["type"] in ("user", "assistant")
        parent = rec["uuid"]
        assert isinstance(rec["message"]["content"], list) and rec["message"]["content"]
        if rec["type"] == "assistant":
            assert isinstance(rec["message"]["model"], str) and rec["message"]["model"]
    assert "timestamp" in out[-1]
    calls = {b["id"] for r in out for b in r["message"]["content"] if b["type"] == "tool_use"}
    results = {b["tool_use_id"] for r in out for b in r["message"]["content"] if b["type"] == "tool_result"}
    assert calls == results


def _edit(doc: dict, edit: str) -> None:
    """``doc`` (a session read from Claude Code) edited so that its records no longer fit its events."""
    events = doc["events"]
    if edit == "a prompt removed":  # every record after it took its envelope and parent from it
        k = next(i for i, e in enumerate(events) if e["kind"] == "message" and e["data"]["role"] == "user")
        gone = events.pop(k)["id"]
        for b in doc["branches"]:
            b["event_ids"] = [x for x in b["event_ids"] if x != gone]
    elif edit == "a part removed":  # the response's blocks were cut into its records by count
        ev = next(e for e in events if len(e.get("extensions", {}).get("claude-code/1", {}).get("r", [])) > 1
                  and e["kind"] == "message" and len(e["data"]["parts"]) > 1)
        ev["data"]["parts"].pop(0)
    else:  # a home of another shape than the reader writes
        ev = next(e for e in events if "claude-code/1" in e.get("extensions", {}))
        ev["extensions"]["claude-code/1"]["r"][0]["n"] = "first"


@pytest.mark.parametrize("edit", ["a prompt removed", "a part removed", "a home of another shape"])
def test_a_session_whose_records_no_longer_fit_its_events_is_written_from_its_events(edit):
    doc = to_asif(SESSIONS["tools"])
    as_read = convert(json.dumps(doc).encode(), to="claude-code")
    assert not [w for w in as_read.warnings if w.rule == "native-state"]
    _edit(doc, edit)
    result = convert(json.dumps(doc).encode(), to="claude-code")
    [warning] = [w for w in result.warnings if w.rule == "native-state"]
    at = int(warning.path.split("/")[2])
    assert warning.path == f"/events/{at}/extensions/claude-code~11" and doc["events"][at]["id"] in warning.message
    out = records(result.output)
    _resumable(out)  # one chain, every record with its uuid, every call with its result
    written = json.dumps(out)
    main = next(b for b in doc["branches"] if b["id"] == "main")
    on_main = [e for e in doc["events"] if e["id"] in main["event_ids"]]
    for text in (p["text"] for e in on_main if e["kind"] == "message" for p in e["data"]["parts"] if p["kind"] == "text"
                 and p["text"].strip()):
        assert json.dumps(text)[1:-1] in written  # the session's content, as it now is
    assert {e["data"]["call_id"] for e in on_main if e["kind"] == "tool_call"} <= {
        b["id"] for r in out for b in r["message"]["content"] if b["type"] == "tool_use"}


def test_strict_refuses_a_session_whose_records_no_longer_fit_its_events():
    doc = to_asif(SESSIONS["tools"])
    _edit(doc, "a part removed")
    with pytest.raises(InvalidInput) as refused:
        convert(json.dumps(doc).encode(), to="claude-code", options=Options(strict=True))
    assert [p.rule for p in refused.value.problems] == ["native-state"]


def test_a_write_back_the_client_cannot_resume_is_said():
    """An edit that took away the events' times and executions is followed (the records are
    what the document says), and a warning says the client cannot resume the result: it hangs
    on an assistant record with no model, and finds no conversation without the leaf's time."""
    doc = to_asif(SESSIONS["tools"])
    assert not [w for w in convert(json.dumps(doc).encode(), to="claude-code").warnings if w.rule == "resume"]
    for ev in doc["events"]:
        ev.pop("time", None)
        ev.pop("execution_id", None)
    result = convert(json.dumps(doc).encode(), to="claude-code")
    said = {w.message.partition(", ")[2].partition(":")[0]: w for w in result.warnings if w.rule == "resume"}
    assert set(said) == {"the last message record has no timestamp", "an assistant record with no model (and 9 more)"}
    out = records(result.output)
    leaf = next(r for r in reversed(out) if r["type"] in ("user", "assistant"))
    assert "timestamp" not in leaf  # (given back as the document says it)
    at = int(said["the last message record has no timestamp"].path.split("/")[2])
    assert doc["events"][at]["id"].startswith(leaf["uuid"])
    with pytest.raises(InvalidInput):
        convert(json.dumps(doc).encode(), to="claude-code", options=Options(strict=True))


def test_arguments_that_are_not_an_object_reach_the_transcript_with_a_loss():
    """A Codex freeform tool's text (apply_patch) was written as ``input: {}``, with no loss."""
    result = convert(CORPUS / "codex" / "wrapped-2025-10.jsonl", to="claude-code")
    patch = next(json.loads(line) for line in result.output.splitlines() if b'"apply_patch"' in line)
    [block] = patch["message"]["content"]
    assert block["input"]["input"].startswith("*** Begin Patch")
    [loss] = [x for x in result.losses if x.kind == "arguments_adapted"]
    assert len(loss.references) == 1


def test_a_session_with_nothing_to_resume_is_refused_naming_the_input():
    only_meta = (CORPUS / "codex" / "hello.jsonl").read_bytes().splitlines()[0] + b"\n"
    with pytest.raises(InvalidInput) as exc:
        convert(only_meta, to="claude-code", name="only-meta.jsonl")
    assert exc.value.source == "only-meta.jsonl"  # not the session's id, which the user may never have seen


@pytest.mark.parametrize("path", FOREIGN, ids=lambda p: p.stem)
def test_any_session_is_written_as_a_transcript_the_client_resumes(path):
    try:
        result = convert(path.read_bytes(), to="claude-code", name=path.name)
    except InvalidInput as exc:  # nothing to resume: refused, saying so
        assert "nothing in this session can be a Claude Code transcript" in str(exc)
        return
    out = records(result.output)
    _resumable(out)
    kinds = result.loss_counts()
    assert "identity_change" in kinds  # record uuids were made
    if any(r["type"] == "assistant" and r["message"]["model"] == "<synthetic>" for r in out):
        assert kinds["model_unknown"] >= 1


def test_thinking_travels_only_from_claude_with_its_signature():
    doc = to_asif(SESSIONS["tools"])
    out = records(back_foreign(doc))
    thinking = [b for r in out for b in r["message"]["content"] if b["type"] == "thinking"]
    assert thinking and all(b["signature"] for b in thinking)
    for e in doc["events"]:
        for p in e["data"].get("parts", []):
            if p.get("kind") == "structured" and isinstance(p["value"], dict) and p["value"].get("type") == "thinking":
                del p["value"]["signature"]
    doc.pop("claude-code/1")  # (as from another format)
    result = convert(json.dumps(doc).encode(), to="claude-code")
    assert "reasoning_dropped" in result.loss_counts()


def back_foreign(doc: dict) -> bytes:
    """Written as a session of another origin would be: without what says it came from Claude Code."""
    doc = json.loads(json.dumps(doc))
    doc.pop("claude-code/1")
    return convert(json.dumps(doc).encode(), to="claude-code").output


def test_a_session_read_from_claude_code_written_as_foreign_keeps_the_active_history():
    doc = to_asif(SESSIONS["tools"])
    out = records(back_foreign(doc))
    _resumable(out)
    source = records(SESSIONS["tools"].read_bytes())
    said = [r["message"]["content"] for r in source if r.get("type") == "user" and isinstance(
        r["message"]["content"], str)]
    written = [b["text"] for r in out if r["type"] == "user" for b in r["message"]["content"] if b["type"] == "text"]
    assert said == written


def test_a_timestamp_is_never_presented_as_recorded():
    session = json.loads(ASIF_EXAMPLES[0].read_bytes())
    for e in session["events"]:
        e.pop("time", None)
    result = convert(json.dumps(session).encode(), to="claude-code")
    out = records(result.output)
    if out:
        assert [r for r in out if "timestamp" in r] == [out[-1]]
        assert result.loss_counts()["synthesized_timestamp"] == 1


# -- goldens ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(SESSIONS))
def test_matches_golden_to_asif(name):
    """Regenerate with ASIF_UPDATE_GOLDEN=1 after an intended change, and review the diff."""
    out = convert(SESSIONS[name], to="asif", name=SESSIONS[name].name).output  # (with its subagents' files)
    _golden(CC_GOLDEN / f"{name}.asif.json", out)


GOLDEN_FOREIGN = [p for p in FOREIGN if p.stem in ("03-anthropic-tools", "14-mixed-everything")]


@pytest.mark.parametrize("path", GOLDEN_FOREIGN, ids=lambda p: p.stem)
def test_matches_golden_to_claude_code(path):
    out = convert(path.read_bytes(), to="claude-code").output
    _golden(CC_GOLDEN / f"{path.stem}.jsonl", out)


def _golden(path: Path, out: bytes) -> None:
    if os.environ.get("ASIF_UPDATE_GOLDEN"):
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(out)
    assert path.read_bytes() == out


def test_no_golden_without_source():
    names = {p.name.removesuffix(".asif.json") for p in CC_GOLDEN.glob("*.asif.json")}
    assert names == set(SESSIONS)
    assert {p.stem for p in CC_GOLDEN.glob("*.jsonl")} == {p.stem for p in GOLDEN_FOREIGN}


# -- archives of sessions --------------------------------------------------------------------------

def test_batch_finds_sessions_in_the_clients_layout_and_resumes(tmp_path):
    import shutil

    from asif_convert.batch import migrate

    projects = tmp_path / "projects"
    for name in ("tools", "subagent", "older-agent-file", "cut-last-line"):
        shutil.copytree(SESSIONS[name].parent, projects / f"-tmp-{name}")
    out = tmp_path / "out"
    summary = migrate([projects], out, to="asif", workers=0).summary
    written = sorted(str(p.relative_to(out)) for p in out.rglob("*.asif.json"))
    assert written == sorted(f"-tmp-{name}/{SESSIONS[name].stem}.asif.json"
                             for name in ("tools", "subagent", "older-agent-file", "cut-last-line"))
    assert summary.counts.get("ok") == 4  # a session with its subagent files is one input
    doc = json.loads((out / f"-tmp-subagent/{SESSIONS['subagent'].stem}.asif.json").read_text())
    assert any(b["id"].startswith("subagent:") for b in doc["branches"])
    again = migrate([projects], out, to="asif", workers=0).summary
    assert again.counts == {"unchanged": 4}


@pytest.mark.parametrize("change", ["grown", "removed", "added", "linked"])
def test_batch_converts_a_session_again_when_only_its_subagents_changed(tmp_path, change):
    """The session's own file stays the same while a subagent's transcript grows (the client
    still writing it), goes, arrives late (copied in after the session), or becomes a link."""
    import shutil

    from asif_convert.batch import migrate

    projects, out = tmp_path / "projects", tmp_path / "out"
    shutil.copytree(SESSIONS["subagent"].parent, projects / "-tmp-subagent")
    shutil.copytree(SESSIONS["tools"].parent, projects / "-tmp-tools")
    [agent_file] = projects.rglob("subagents/agent-*.jsonl")
    agent_data = agent_file.read_bytes()
    if change == "added":
        agent_file.unlink()
    assert migrate([projects], out, to="asif", workers=0).summary.counts == {"ok": 2}
    if change == "grown":
        last = json.loads(agent_data.splitlines()[-1])
        agent_file.write_bytes(agent_data + json.dumps({**last, "uuid": "later"}).encode() + b"\n")
    elif change == "removed":
        agent_file.unlink()
    elif change == "added":
        agent_file.write_bytes(agent_data)
    else:
        elsewhere = tmp_path / agent_file.name
        agent_file.rename(elsewhere)
        agent_file.symlink_to(elsewhere)
    again = migrate([projects], out, to="asif", workers=0).summary
    assert again.counts == {"ok": 1, "unchanged": 1}
    doc = json.loads((out / f"-tmp-subagent/{SESSIONS['subagent'].stem}.asif.json").read_text())
    has_branch = any(b["id"].startswith("subagent:") for b in doc["branches"])
    assert has_branch is (change in ("grown", "added"))
    assert migrate([projects], out, to="asif", workers=0).summary.counts == {"unchanged": 2}


# -- the request that continues a transcript -------------------------------------------------------

def test_request_refusing_a_call_names_its_line_of_the_transcript(tmp_path):
    from typer.testing import CliRunner

    from asif_convert._cli.app import app

    lines = SESSIONS["tools"].read_bytes().splitlines(keepends=True)
    first_call = next(n for n, line in enumerate(lines) if b'"content":[{"type":"tool_use"' in line)
    cut = tmp_path / "pending.jsonl"
    cut.write_bytes(b"".join(lines[:first_call + 1]))
    result = CliRunner().invoke(app, ["request", str(cut), "--for", "anthropic-messages", "-o", str(tmp_path / "r")])
    assert result.exit_code == 1
    assert f"line {first_call + 1}: /: tool call " in result.stderr and "/events/" not in result.stderr


@pytest.mark.parametrize("name", ["tools", "fork", "image", "subagent"])
def test_request_continues_what_the_client_would(name):
    """The active branch holds every parallel call's result (the client gives each result its own
    call's record as parent), and the request carries what the model saw: each tool_result's
    content, never the client's toolUseResult copy."""
    from asif_convert import request

    path = SESSIONS[name]
    body = request(path.read_bytes(), provider="anthropic-messages").body
    sent = [b for m in body["messages"] for b in (m["content"] if isinstance(m["content"], list) else [])]
    source = records(path.read_bytes())
    leaf = [r for r in source if r.get("type") == "last-prompt"][-1]["leafUuid"]
    by_uuid = {r["uuid"]: r for r in source if "uuid" in r}
    chain, at = [], leaf
    while at in by_uuid:
        chain.append(by_uuid[at])
        at = by_uuid[at].get("parentUuid")
    calls = {b["id"] for r in chain if r["type"] == "assistant" for b in r["message"]["content"]
             if b["type"] == "tool_use"}
    recorded = {b["tool_use_id"]: b for r in source if r.get("type") == "user" and isinstance(
        r["message"]["content"], list) for b in r["message"]["content"] if b.get("type") == "tool_result"}
    results = {b["tool_use_id"]: b for b in sent if b["type"] == "tool_result"}
    assert set(results) == calls  # every call of the resumed history, answered
    for call_id, block in results.items():
        assert block["content"] == recorded[call_id]["content"]


# -- inputs an outside sweep found ending in exit 3 --------------------------------------------

def _record(uuid: str, parent: str | None, kind: str, content: object, sidechain: bool = False,
            **rest: object) -> dict:
    message = {"role": kind, "content": content}
    if kind == "assistant":
        message = {"id": f"msg_{uuid}", "type": "message", "role": "assistant", "model": "m", "content": content}
    return {"parentUuid": parent, "isSidechain": sidechain, "type": kind, "uuid": uuid,
            "timestamp": "2026-12-06T07:20:05.187Z", "sessionId": "74065a23-6f82-500a-981f-470694a8a047",
            "message": message, **rest}


def _lines(*records: dict) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


_CALL = {"type": "tool_use", "id": "toolu_1", "name": "Task", "input": {"description": "d", "prompt": "Search."}}


@pytest.mark.parametrize("data", [
    # a tool_use block whose id is not a string (an opaque part, not a call)
    _lines(_record("a1", None, "assistant", [{"type": "tool_use", "id": [], "name": "Write", "input": {}}])),
    # only a subagent's inline records: the agent it belongs to is a participant too
    _lines(_record("b4", "b3", "assistant", [{"type": "text", "text": "hi"}], sidechain=True)),
    # an inline sidechain before the Task call whose prompt it holds: not caused by a later event
    _lines(_record("b1", None, "user", "Search.", sidechain=True), _record("a3", None, "assistant", [_CALL])),
    # a result that is its own parent: its branch still holds its call, before it
    _lines(_record("u1", None, "user", "count"), _record("a1", "u1", "assistant", [{**_CALL, "name": "Bash"}]),
           _record("u2", "u2", "user", [{"tool_use_id": "toolu_1", "type": "tool_result", "content": "3"}])),
], ids=["call-id-not-a-string", "sidechain-alone", "sidechain-before-its-call", "self-parented-result"])
def test_odd_transcripts_convert_to_valid_asif_and_back(data):
    doc = json.loads(convert(data, to="asif").output)
    assert get("asif").validate(doc) == []
    assert records(back(doc)) == records(data)


def test_a_self_parented_result_in_a_subagent_file_keeps_its_call(tmp_path):
    session = tmp_path / "16f570dc-3cbc-5f42-80a5-21dc1e5c6739.jsonl"
    session.write_text('{"type":"last-prompt","lastPrompt":"x","leafUuid":"zz","sessionId":"s"}\n')
    agent = tmp_path / session.stem / "subagents" / "agent-af01.jsonl"
    agent.parent.mkdir(parents=True)
    agent.write_bytes(_lines(
        _record("u1", None, "user", "count", sidechain=True, agentId="af01"),
        _record("a1", "u1", "assistant", [{**_CALL, "name": "Bash"}], sidechain=True, agentId="af01"),
        _record("u2", "u2", "user", [{"tool_use_id": "toolu_1", "type": "tool_result", "content": "3"}],
                sidechain=True, agentId="af01")))
    doc = json.loads(convert(session, to="asif").output)
    assert get("asif").validate(doc) == []
    branch = next(b for b in doc["branches"] if b["id"] == "subagent:af01")
    assert branch["event_ids"][-2:] == ["a1", "u2"]


def test_a_fork_is_written_with_the_history_it_inherits():
    """The active branch of a forked session begins in the branch it forked from: its transcript
    holds that history up to the fork point, as a Codex rollout and a request do."""
    source = GOLDEN / "05-forks.asif.json"
    doc = asif_convert.load(source)
    history = [ev.id for ev in asif_convert.ir.continued_history(doc)]
    assert history[:3] == ["msg-05-main-1", "msg-05-main-2", "msg-05-main-3"]
    result = convert(source, to="claude-code")
    written = json.dumps(records(result.output))
    texts = [p.text for ev in doc.events if ev.id in history and isinstance(ev.body, asif_convert.ir.Message)
             for p in ev.body.parts if isinstance(p, asif_convert.ir.TextPart) and p.text.strip()]
    assert texts and all(json.dumps(t)[1:-1] in written for t in texts)
    assert not {ref.id for x in result.losses if x.kind == "branch_not_written" for ref in x.references} & set(history)


def test_a_long_chain_of_forks_is_written_without_exhausting_the_stack():
    """Each of 1,500 branches forks from the one before: the history each inherits is walked in
    a loop (forks are data, as deep as a document holds them)."""
    doc = json.loads((GOLDEN / "05-forks.asif.json").read_text())
    session, capture = doc["session"]["id"], doc["capture"]["id"]
    first = doc["branches"][0]
    chain = [{"id": f"chain-{k}", "event_ids": [], "head_event_id": None,
              "fork": {"session_id": session, "capture_id": capture,
                       "branch_id": f"chain-{k - 1}" if k else first["id"], "event_id": "msg-05-main-3",
                       "inclusive": True}} for k in range(1500)]
    doc["branches"] += chain
    for c in doc["checkpoints"]:
        c["status"] = "unknown"
    del doc["session"]["agent-continuity/1"]["active_branch_id"]  # (the export's own choice)
    doc["checkpoints"].append({**doc["checkpoints"][0], "id": "head:chain", "branch_id": "chain-1499",
                               "at_event_id": None, "status": "active"})
    result = convert(json.dumps(doc).encode(), to="claude-code", options=Options(validate=False))
    texts = {e["id"]: e["data"]["parts"][0]["text"] for e in doc["events"] if e["kind"] == "message"}
    assert [r["message"]["content"][0]["text"] for r in records(result.output)] == [
        texts[f"msg-05-main-{k}"] for k in (1, 2, 3)]  # (what each inherits, up to the fork point)


def test_a_fork_at_no_event_inherits_nothing():
    doc = json.loads((GOLDEN / "05-forks.asif.json").read_text())
    fork = next(b for b in doc["branches"] if "fork" in b and b["fork"])
    fork["fork"]["event_id"] = None
    session = asif_convert.load(json.dumps(doc).encode())
    branch = asif_convert.ir.continued_branch(session)
    assert branch.id == fork["id"]
    assert [ev.id for ev in asif_convert.ir.continued_history(session)] == [
        e for e in fork["event_ids"] if e in {ev.id for ev in session.events}]
