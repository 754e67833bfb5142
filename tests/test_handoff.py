"""``asif-convert handoff``: a session from one agent (or any supported input) continued in
another. The real clients judge: every text, call and result of the selected history arrives in
the target client's first request after resuming, in order, or a loss names it."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from asif_convert import Options, ir
from asif_convert._cli.app import app
from asif_convert._handoff import Handoff, handoff, new_id
from asif_convert._pipeline import convert, load_session
from tests.agents import codex as codex_client
from tests.agents.judge import arrived
from tests.conftest import ASIF_EXAMPLES, CONTINUITY_FILES, CORPUS

CLAUDE_SESSIONS = sorted(p for p in (CORPUS / "claude-code").glob("*/*.jsonl") if not p.name.startswith("agent-"))
CODEX_ROLLOUTS = sorted((CORPUS / "codex").glob("*.jsonl"))
# a few of the others: a plain chat, tools of both providers, forks; ASIF with tools and images
OTHERS = [*CONTINUITY_FILES[1:5], *(p for p in ASIF_EXAMPLES if p.stem in (
    "tool-call-completed", "image-and-document", "multi-agent-review"))]


@pytest.mark.parametrize("path", [*CLAUDE_SESSIONS, *CODEX_ROLLOUTS, *OTHERS], ids=lambda p: p.stem[:24])
def test_codex_continues_a_handed_off_session(path: Path, tmp_path: Path):
    codex_client.require_codex()
    sandbox = codex_client.Sandbox(tmp_path).make()
    done = handoff(path, "codex", cwd=sandbox.project, env={"HOME": str(sandbox.home)})
    assert done.path.is_relative_to(sandbox.codex_home / "sessions") and done.path.exists()
    sent = codex_client.resume_placed(sandbox, done.session_id)
    doc = load_session(path)
    assert arrived(sent, ir.continued_history(doc), done.losses) == []


@pytest.mark.parametrize("path", [*CODEX_ROLLOUTS, *CLAUDE_SESSIONS[:2], *OTHERS], ids=lambda p: p.stem[:24])
def test_claude_code_continues_a_handed_off_session(path: Path, claude_code: Any):
    client = claude_code.client
    done = handoff(path, "claude-code", cwd=client.project.resolve(), env={"HOME": str(client.home)})
    assert done.path == client.session_file(done.session_id)
    client.resume(done.session_id, "Please continue.").check()
    sent = claude_code.script.conversation[0].body["messages"]
    doc = load_session(path)
    assert arrived(sent, ir.continued_history(doc), done.losses) == []


def test_the_store_follows_the_clients_environment_variables(tmp_path: Path):
    path = CORPUS / "codex" / "hello.jsonl"
    codex = handoff(path, "codex", cwd=tmp_path, env={"HOME": "/nowhere", "CODEX_HOME": str(tmp_path / "cx")},
                    dry_run=True)
    claude = handoff(path, "claude-code", cwd=tmp_path / "p q",
                     env={"HOME": "/nowhere", "CLAUDE_CONFIG_DIR": str(tmp_path / "cc")}, dry_run=True)
    assert codex.path.is_relative_to(tmp_path / "cx" / "sessions")
    assert codex.path.name.startswith("rollout-") and codex.path.name.endswith(f"-{codex.session_id}.jsonl")
    assert claude.path.parent.parent == tmp_path / "cc" / "projects"
    assert "'" in claude.command  # a folder with a space is quoted
    assert not (tmp_path / "cx").exists() and not (tmp_path / "cc").exists()  # a dry run writes nothing


def test_the_written_session_is_the_new_id_throughout(tmp_path: Path):
    path = CORPUS / "codex" / "parallel.jsonl"
    done = handoff(path, "codex", cwd=tmp_path, env={"HOME": str(tmp_path)})
    first = json.loads(done.path.read_text().splitlines()[0])
    assert first["payload"]["id"] == done.session_id == new_id(path.read_bytes(), "codex")
    assert first["payload"]["cwd"] == str(tmp_path)
    claude = handoff(path, "claude-code", cwd=tmp_path, env={"HOME": str(tmp_path)})
    records = [json.loads(line) for line in claude.path.read_text().splitlines()]
    assert {r["sessionId"] for r in records} == {claude.session_id}


def test_recorded_tool_names_are_kept(tmp_path: Path):
    """Both clients send calls to tools they lack as recorded: the history says what was called."""
    path = CORPUS / "codex" / "parallel.jsonl"
    claude = handoff(path, "claude-code", cwd=tmp_path, env={"HOME": str(tmp_path)})
    names = {b["name"] for line in claude.path.read_text().splitlines()
             for b in (json.loads(line)["message"].get("content") or []) if isinstance(b, dict)
             and b.get("type") == "tool_use"}
    assert names == {"exec_command"}


# -- bad input: one clear line, exit 1 or 2, never 3, nothing written --------------------------


def _cli(args: list[str], env: dict[str, str]) -> Any:
    return CliRunner().invoke(app, ["handoff", *args], env=env)


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


def _refused(result: Any, code: int, says: str, root: Path) -> None:
    assert result.exit_code == code, result.output
    assert result.stderr.startswith("error: ") and says in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1  # one clear line
    assert "Traceback" not in result.output


def test_an_unknown_target_is_a_usage_error(tmp_path: Path):
    result = _cli([str(CORPUS / "codex" / "hello.jsonl"), "--to", "gemini"], {"HOME": str(tmp_path)})
    _refused(result, 2, "unknown agent 'gemini'", tmp_path)
    assert _files(tmp_path) == []


@pytest.mark.skipif(os.geteuid() == 0 if hasattr(os, "geteuid") else False,
                    reason="root writes into a read-only folder; the store is made unwritable by a file instead")
def test_a_store_that_is_not_writable_is_refused(tmp_path: Path):
    store = tmp_path / "store"
    store.mkdir()
    store.chmod(stat.S_IRUSR | stat.S_IXUSR)
    result = _cli([str(CORPUS / "codex" / "hello.jsonl"), "--to", "codex", "--cwd", str(tmp_path)],
                  {"CODEX_HOME": str(store)})
    _refused(result, 1, "nothing was written", tmp_path)


def test_a_store_in_the_way_of_a_file_is_refused(tmp_path: Path):
    blocker = tmp_path / "home" / ".codex"
    blocker.parent.mkdir()
    blocker.write_text("not a folder")
    result = _cli([str(CORPUS / "codex" / "hello.jsonl"), "--to", "codex", "--cwd", str(tmp_path)],
                  {"HOME": str(tmp_path / "home")})
    _refused(result, 1, f"{blocker} is not a folder", tmp_path)
    assert "already exists" not in result.stderr  # (it said the session did)
    assert _files(tmp_path) == [blocker]


def test_an_existing_session_id_is_refused(tmp_path: Path):
    args = [str(CORPUS / "codex" / "hello.jsonl"), "--to", "claude-code", "--cwd", str(tmp_path)]
    assert _cli(args, {"HOME": str(tmp_path)}).exit_code == 0
    before = {p: p.read_bytes() for p in _files(tmp_path)}
    _refused(_cli(args, {"HOME": str(tmp_path)}), 1, "already exists", tmp_path)
    assert {p: p.read_bytes() for p in _files(tmp_path)} == before


def test_an_input_that_cannot_be_read_is_refused(tmp_path: Path):
    (tmp_path / "bad.jsonl").write_text("not json\nat all\n")
    for args in (["missing.jsonl"], [str(tmp_path / "bad.jsonl")], [str(tmp_path)]):
        result = _cli([*args, "--to", "codex", "--cwd", str(tmp_path)], {"HOME": str(tmp_path / "home")})
        assert result.exit_code in (1, 2), result.output
        assert result.stderr.startswith("error: ") and "Traceback" not in result.output
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert not (tmp_path / "home").exists()


def test_a_session_the_target_cannot_hold_is_refused_naming_the_file(tmp_path: Path):
    """It named the new session's id, a name the user never saw, instead of the input."""
    only_meta = tmp_path / "only-meta.jsonl"  # a rollout with no message at all
    only_meta.write_bytes((CORPUS / "codex" / "hello.jsonl").read_bytes().splitlines()[0] + b"\n")
    result = _cli([str(only_meta), "--to", "claude-code", "--cwd", str(tmp_path)], {"HOME": str(tmp_path / "home")})
    _refused(result, 1, f"error: {only_meta}: /events: nothing in this session", tmp_path)


def test_a_link_in_the_store_is_not_followed(tmp_path: Path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "home" / ".codex").mkdir(parents=True)
    (tmp_path / "home" / ".codex" / "sessions").symlink_to(outside)
    result = _cli([str(CORPUS / "codex" / "hello.jsonl"), "--to", "codex", "--cwd", str(tmp_path)],
                  {"HOME": str(tmp_path / "home")})
    _refused(result, 1, "is a link", tmp_path)
    assert list(outside.iterdir()) == []


def test_the_command_prints_where_how_to_resume_and_the_losses(tmp_path: Path):
    result = _cli([str(CORPUS / "codex" / "parallel.jsonl"), "--to", "claude-code", "--cwd", str(tmp_path)],
                  {"HOME": str(tmp_path)})
    assert result.exit_code == 0, result.output
    wrote, resume = result.stdout.splitlines()
    assert wrote.startswith("wrote ") and Path(wrote[6:]).exists()
    assert resume.startswith("continue it with: cd ") and "claude --resume " in resume
    assert " losses (" in result.stderr and "translation:event_msg" in result.stderr


def test_a_handoff_returns_what_it_did(tmp_path: Path):
    done = handoff(CORPUS / "codex" / "hello.jsonl", "codex", cwd=tmp_path, env={"HOME": str(tmp_path)},
                   dry_run=True)
    assert isinstance(done, Handoff) and not done.written and not done.path.exists()


def test_the_judge_sees_what_went_missing():
    doc = load_session(CORPUS / "codex" / "parallel.jsonl")
    history = ir.continued_history(doc)
    assert arrived([], history, []) != []
    calls = [ev for ev in history if isinstance(ev.body, ir.ToolCall)]
    sent_without_last_call = [{"call_id": ev.body.call_id} for ev in calls[:-1]]
    missing = arrived(sent_without_last_call, calls, [])
    assert missing == [f"{calls[-1].id}: {json.dumps(calls[-1].body.call_id)!r}"]
    named = ir.Loss(id="x", stage="translation", kind="dropped", explanation="x",
                    references=[ir.LossRef(type="event", id=calls[-1].id)])
    assert arrived(sent_without_last_call, calls, [named]) == []


def _called(doc: ir.Document) -> set[str]:
    return {ev.body.tool_id for ev in doc.events if isinstance(ev.body, ir.ToolCall)}


def test_codex_sends_calls_to_tools_it_lacks_as_recorded(tmp_path: Path):
    """The evidence for keeping recorded names: Claude Code's Bash, Read, Edit reach Codex's model
    under those names, though Codex has no such tools."""
    codex_client.require_codex()
    path = CORPUS / "claude-code" / "tools" / "74065a23-6f82-500a-981f-470694a8a047.jsonl"
    sandbox = codex_client.Sandbox(tmp_path).make()
    done = handoff(path, "codex", cwd=sandbox.project, env={"HOME": str(sandbox.home)})
    sent = codex_client.resume_placed(sandbox, done.session_id)
    names = {item["name"] for item in sent if item.get("type") == "function_call"}
    assert names == _called(load_session(path)) and "Bash" in names


def test_claude_code_sends_calls_to_tools_it_lacks_as_recorded(claude_code: Any):
    path = CORPUS / "codex" / "patch.jsonl"
    client = claude_code.client
    done = handoff(path, "claude-code", cwd=client.project.resolve(), env={"HOME": str(client.home)})
    client.resume(done.session_id, "Please continue.").check()
    sent = claude_code.script.conversation[0].body["messages"]
    names = {b["name"] for m in sent if isinstance(m["content"], list) for b in m["content"]
             if b.get("type") == "tool_use"}
    assert names == _called(load_session(path)) == {"exec_command", "apply_patch"}


def test_a_session_id_that_is_not_a_uuid_is_a_usage_error(tmp_path: Path):
    result = _cli([str(CORPUS / "codex" / "hello.jsonl"), "--to", "codex", "--session-id", "../../etc",
                   "--cwd", str(tmp_path)], {"HOME": str(tmp_path / "home")})
    _refused(result, 2, "not a lowercase UUID", tmp_path)
    assert not (tmp_path / "home").exists()


def test_a_chosen_session_id_names_the_file(tmp_path: Path):
    sid = "0199a213-0000-7000-8000-0000000000aa"
    done = handoff(CORPUS / "claude-code" / "tools" / "74065a23-6f82-500a-981f-470694a8a047.jsonl", "codex",
                   cwd=tmp_path, env={"HOME": str(tmp_path)}, session_id=sid)
    assert done.session_id == sid and done.path.name.endswith(f"-{sid}.jsonl")


@pytest.mark.parametrize(("path", "to", "namespace"), [
    (CORPUS / "codex" / "image.jsonl", "claude-code", "codex/1"),
    (CORPUS / "claude-code" / "tools" / "74065a23-6f82-500a-981f-470694a8a047.jsonl", "codex", "claude-code/1"),
])
def test_the_other_agents_state_left_behind_is_a_loss_naming_its_events(path: Path, to: str, namespace: str):
    """What one agent's format kept of its lines (Codex's item ids and an image's ``detail``,
    Claude Code's record envelopes) has no place in the other's: each event written without it
    is named, under its namespace."""
    doc = load_session(path)
    result = convert(path, to=to)
    [loss] = [x for x in result.losses if x.id.endswith(f":{namespace}")]
    assert loss.scope == "native" and namespace in loss.explanation
    named = [ref.id for ref in loss.references]
    holding = {ev.id for ev in doc.events if namespace in ev.native}
    assert named and set(named) <= holding
    if namespace == "codex/1":  # the image output whose detail only codex/1 held
        [output] = [ev for ev in doc.events if isinstance(ev.body, ir.ToolResult) and ev.body.call_id == "call_img"]
        assert "detail" in json.dumps(output.native) and output.id in named


def test_an_asif_session_with_a_vendors_extensions_names_them_when_written_for_an_agent():
    doc = json.loads((CORPUS / "asif" / "tool-call-completed.session.json").read_text())
    doc["events"][0].setdefault("extensions", {})["x-vendor/1"] = {"note": "kept by a vendor"}
    for to in ("claude-code", "codex"):
        result = convert(json.dumps(doc).encode(), to=to)
        [loss] = [x for x in result.losses if x.id.endswith(":x-vendor/1")]
        assert [ref.id for ref in loss.references] == [doc["events"][0]["id"]]


def test_a_handoff_carries_the_files_named_by_path_from_the_folder_given(tmp_path: Path):
    """The image an ASIF session names by path reaches the client's store inline with
    ``--artifacts-root``; without it, the loss names each file."""
    source = CORPUS / "asif" / "image-and-document.session.json"
    bare = handoff(source, "claude-code", cwd=tmp_path, env={"HOME": str(tmp_path / "a")}, dry_run=True)
    assert sorted(ref.id for x in bare.losses if x.kind == "file_not_carried" for ref in x.references) == [
        "document", "image"]
    done = handoff(source, "claude-code", cwd=tmp_path, env={"HOME": str(tmp_path / "b")},
                   artifacts_root=CORPUS / "asif")
    assert not [x for x in done.losses if x.kind == "file_not_carried"]
    written = [json.loads(line) for line in done.path.read_text().splitlines()]
    assert [b["type"] for r in written for b in r["message"]["content"] if b["type"] in ("image", "document")] == [
        "image", "document", "image"]
    result = _cli([str(source), "--to", "codex", "--cwd", str(tmp_path), "--artifacts-root", str(CORPUS / "asif")],
                  {"HOME": str(tmp_path / "c")})
    assert result.exit_code == 0 and "file_not_carried" not in result.output


def test_a_handoff_of_a_package_carries_its_files(tmp_path: Path):
    package = convert(CORPUS / "asif" / "image-and-document.session.json", to="asif", package=True,
                      options=Options(artifacts_root=CORPUS / "asif")).output
    (tmp_path / "s.asif.zip").write_bytes(package)
    done = handoff(tmp_path / "s.asif.zip", "claude-code", cwd=tmp_path, env={"HOME": str(tmp_path)}, dry_run=True)
    assert not [x for x in done.losses if x.kind == "file_not_carried"]
