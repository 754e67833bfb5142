"""The real client is the judge: converted sessions resumed by Claude Code itself.

Each test writes a session as a Claude Code transcript with the command line, resumes it with
the pinned client (tests/agents/) against a mock model on 127.0.0.1, and reads the history the
client sent in its request (``Resumed.history``: the request's messages without the client's own
additions, each identified exactly).

- Every transcript of corpus/claude-code, converted to ASIF and back, resumes with the same
  history as the original file.
- Every continuity and ASIF corpus session with a conversation history, written as claude-code,
  resumes with every text, tool call and tool result of its selected history (the active
  branch, as ``request`` selects it) in the request, or the conversion's report has a loss that
  names the event it came from; and so does every corpus/claude-code transcript as ASIF without
  the claude-code namespace (real content, written by the writer from ASIF alone).

The suite runs one client at a time (a run takes 1-3 s, mostly the client starting); side by
side they would only compete for the cores a CI machine has.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import pytest
from typer.testing import CliRunner

import asif_convert
from asif_convert import ir
from asif_convert._cli.app import app
from asif_convert._dialects.common import REASONING
from asif_convert._errors import InvalidInput
from asif_convert._registry import registry
from asif_convert._request.selection import Input, Selection, select
from tests.agents.claude import CLIENT_TOOL_NAMES, normalized_message, session_folder

from .conftest import ASIF_EXAMPLES, CONTINUITY_FILES, CORPUS

CLAUDE_CODE_SESSIONS = sorted(p for p in (CORPUS / "claude-code").iterdir() if p.is_dir())
runner = CliRunner()


@pytest.fixture
def claude_code_format() -> None:
    """The claude-code format must be installed: a skip saying so, or under CI=true a failure."""
    if "claude-code" not in registry():
        message = "the claude-code format is not installed (asif-convert formats does not list it)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true and {message}")
        pytest.skip(message)


def convert(source: Path, target: Path, source_format: str, target_format: str) -> dict[str, Any]:
    """``asif-convert convert SOURCE --from F --to T -o TARGET``; its loss report."""
    report = target.with_name(target.name + ".report.json")
    res = runner.invoke(app, ["convert", str(source), "--from", source_format, "--to", target_format,
                              "-o", str(target), "--report", str(report), "--on-loss", "ignore"])
    assert res.exit_code == 0, f"{source.name} --from {source_format} --to {target_format}: {res.output}"
    return json.loads(report.read_bytes())


# -- claude-code -> ASIF -> claude-code: the same history -----------------------------------------


@pytest.mark.parametrize("folder", CLAUDE_CODE_SESSIONS, ids=lambda p: p.name)
def test_a_transcript_through_asif_resumes_with_the_same_history(folder, tmp_path, claude_code_format, claude_code):
    session, files = session_folder(folder)
    asif = tmp_path / "session.asif.json"
    back = tmp_path / "back.jsonl"
    convert(session, asif, "claude-code", "asif")
    convert(asif, back, "asif", "claude-code")
    original = claude_code.resume(session, session.stem, files)
    # The converted file alone: the client sends no sidechain, so subagent files cannot change
    # what it sends; a second session id, so nothing of the first run is in the way.
    converted = claude_code.resume(back)
    assert converted.history() == original.history()
    assert converted.history(), "the judge must see some history"


# -- continuity and ASIF sessions written as claude-code: nothing lost unnamed --------------------


def selection_of(path: Path, source_format: str) -> Selection | None:
    """The active branch's history as ``request`` selects it (calls without a result answered
    with an error, so they are checked too); None for a session with no conversation history."""
    document = asif_convert.load(path.read_bytes(), source=source_format, name=path.name)
    try:
        chosen = select(document, pending="as-error", name=path.name)
    except InvalidInput:
        return None
    return chosen if any(i.kind == "message" for i in chosen.inputs) else None


SOURCES = [(p, "continuity") for p in CONTINUITY_FILES] + [(p, "asif") for p in ASIF_EXAMPLES]
WITH_HISTORY = [(p, f) for p, f in SOURCES if selection_of(p, f) is not None]
# Known failures, each a bug the judge found; strict, so a fix shows as a pass to remove here.
KNOWN: dict[str, pytest.MarkDecorator] = {}  # none today


def test_most_corpus_sessions_have_a_history_to_judge():
    # Guards the filter above: a loader change must not silently leave the judge nothing to do.
    assert len(WITH_HISTORY) >= len(CONTINUITY_FILES) - 1 and len(WITH_HISTORY) >= len(SOURCES) // 2


CALLS = ("tool_use", "server_tool_use", "mcp_tool_use")  # blocks that call a tool
# (and every block named ``*_tool_result`` answers one, beside ``tool_result``)


@dataclass
class Sent:
    """What a resumed history holds, by kind."""

    texts: list[str] = field(default_factory=list)  # text blocks, and texts inside tool results
    calls: list[dict[str, Any]] = field(default_factory=list)  # blocks that call a tool
    results: dict[str, list[str]] = field(default_factory=dict)  # tool_use_id -> the result's texts
    images: list[dict[str, Any]] = field(default_factory=list)  # image sources, also inside results
    thinking: list[dict[str, Any]] = field(default_factory=list)  # thinking and redacted_thinking blocks


def sent(history: list[dict[str, Any]]) -> Sent:
    out = Sent()
    for message in history:
        for block in message["content"]:
            kind = block.get("type", "")
            if kind == "text":
                out.texts.append(block["text"])
            elif kind in CALLS:
                out.calls.append(block)
            elif kind in ("thinking", "redacted_thinking"):
                out.thinking.append(block)
            elif kind == "image":
                out.images.append(block.get("source", {}))
            elif kind.endswith("tool_result"):
                content = block.get("content")
                inner = [content] if isinstance(content, str) else [b for b in content or [] if isinstance(b, dict)]
                texts = [b if isinstance(b, str) else b["text"] for b in inner
                         if isinstance(b, str) or b.get("type") == "text"]
                out.images.extend(b.get("source", {}) for b in inner
                                  if isinstance(b, dict) and b.get("type") == "image")
                out.results.setdefault(block["tool_use_id"], []).extend(texts)
                out.texts.extend(texts)
    return out


def texts_of(item: Input) -> list[str]:
    return [p.text for p in item.parts if isinstance(p, ir.TextPart) and p.text.strip()]


class Judge:
    """Checks each input of a selection against what the client sent, or a loss naming it."""

    def __init__(self, selection: Selection, history: list[dict[str, Any]], report: dict[str, Any]):
        self.tools = {t.id: t.name for t in selection.document.tools}
        self.resources = {r.id: r for r in selection.document.resources}
        self.sent = sent(history)
        self.named = {ref["id"] for loss in report.get("losses", []) for ref in loss.get("references", [])}
        # a selected call id -> the ids of the tool_use blocks it may have arrived as: its own id
        # when one has it, else every call of the same tool with the same input (a writer may
        # give calls new ids; two such calls cannot be told apart, their results can)
        self.arrived: dict[str, list[str]] = {}
        self.missing: list[str] = []

    def check(self, item: Input) -> None:
        where = f"{item.kind} {item.id} (event {', '.join(e.id for e in item.source_events)})"
        if item.kind == "message":
            problems = [f"{where}: text {text[:80]!r}" for text in texts_of(item)
                        if not any(text in s for s in self.sent.texts)]
        elif item.kind == "tool_call":
            problems = self.check_call(item, where)
        else:
            problems = self.check_result(item, where)
        problems += self.check_images(item, where) + self.check_reasoning(item, where)
        if problems and not {e.id for e in item.source_events} & self.named:
            self.missing.extend(problems)

    def check_images(self, item: Input, where: str) -> list[str]:
        """An image arrives as an image block with its data (embedded) or its URL (elsewhere)."""
        problems = []
        for part in item.parts:
            resource = self.resources.get(part.resource_id) if isinstance(part, ir.ResourcePart) else None
            if resource is None or not resource.media_type.startswith("image/"):
                continue
            if not any(source.get("data") == resource.data or source.get("url") in (resource.locator,
                       resource.original_location) for source in self.sent.images if source):
                problems.append(f"{where}: image {resource.id!r} ({resource.availability})")
        return problems

    def check_reasoning(self, item: Input, where: str) -> list[str]:
        """Claude's own thinking arrives as recorded, signature and all; no other reasoning can
        (a model would refuse it), so it needs a loss."""
        problems = []
        for part in item.parts:
            if not (isinstance(part, ir.StructuredPart) and part.schema == REASONING and isinstance(part.value, dict)):
                continue
            block = part.value
            claudes = block.get("type") in ("thinking", "redacted_thinking") and \
                (block.get("signature") or block.get("data"))
            if not claudes or block not in self.sent.thinking:
                problems.append(f"{where}: reasoning {json.dumps(block)[:80]}")
        return problems

    def check_call(self, item: Input, where: str) -> list[str]:
        name = self.tools.get(item.tool_id or "", item.tool_id)
        complete = item.arguments_status in (None, "complete") and isinstance(item.arguments, dict)
        names = {name, CLIENT_TOOL_NAMES.get(name or "")}  # (what the client itself renames is no loss)
        same = [c["id"] for c in self.sent.calls
                if c["name"] in names and (not complete or c["input"] == item.arguments)]
        if item.call_id is not None:  # (a call sent under another name, with a loss, still has its results)
            by_id = [c["id"] for c in self.sent.calls if c["id"] == item.call_id]
            self.arrived[item.call_id] = [item.call_id] if item.call_id in same else same or by_id
        return [] if same else [f"{where}: call {name!r} with {json.dumps(item.arguments)[:80]}"]

    def check_result(self, item: Input, where: str) -> list[str]:
        answers = [self.sent.results[i] for i in self.arrived.get(item.call_id or "", []) if i in self.sent.results]
        if not answers:
            return [f"{where}: no result for call {item.call_id!r}"]
        if item.id.endswith("~pending-error"):  # answered by the selection, recorded by nobody
            return []
        return [f"{where}: result text {text[:80]!r}" for text in texts_of(item)
                if not any(text in s for texts in answers for s in texts)]


def api_problems(history: list[dict[str, Any]]) -> list[str]:
    """What the real Messages API would refuse in a history the mock took: each block (and each
    block inside a tool result) checked by the SDK's own types, and URL sources that name nothing."""
    import pydantic
    from anthropic.types import ContentBlockParam

    adapter = pydantic.TypeAdapter(ContentBlockParam)
    problems = []
    for k, message in enumerate(history):
        if message["role"] not in ("user", "assistant"):
            problems.append(f"message {k}: role {message['role']!r}")
        for block in message["content"]:
            inner = block.get("content") if block.get("type") == "tool_result" else None
            for one in [block, *(inner if isinstance(inner, list) else [])]:
                source = one.get("source")
                try:
                    adapter.validate_python(one)
                except pydantic.ValidationError as exc:
                    problems.append(f"message {k}: {json.dumps(one)[:100]}: {str(exc).splitlines()[0][:60]}")
                if isinstance(source, dict) and source.get("type") == "url" and not source.get("url"):
                    problems.append(f"message {k}: {one.get('type')} block with an empty URL")
    return problems


@pytest.mark.parametrize(("source", "source_format"), [
    pytest.param(p, f, marks=KNOWN.get(p.name, ()), id=f"{p.stem}-{f}") for p, f in WITH_HISTORY])
def test_a_session_written_as_claude_code_resumes_with_its_history_or_names_what_it_lost(
        source, source_format, tmp_path, claude_code_format, claude_code):
    selection = selection_of(source, source_format)
    assert selection is not None
    judge_written(selection, source, source_format, tmp_path, claude_code)


def judge_written(selection: Selection, source: Path, source_format: str, tmp_path: Path, claude_code) -> None:
    """Write ``source`` as claude-code, resume it, and judge the request against ``selection``."""
    transcript = tmp_path / "session.jsonl"
    report = convert(source, transcript, source_format, "claude-code")
    resumed = claude_code.resume(transcript)
    judge = Judge(selection, resumed.history(), report)
    for item in selection.inputs:
        judge.check(item)
    assert not judge.missing, "\n".join(["not in the client's request, and no loss names it:", *judge.missing])
    refused = api_problems(resumed.history())
    assert not refused, "\n".join(["the client sent what the Messages API refuses:", *refused])


def without_namespace(value: Any, namespace: str) -> Any:
    if isinstance(value, dict):
        return {k: without_namespace(v, namespace) for k, v in value.items() if k != namespace}
    if isinstance(value, list):
        return [without_namespace(v, namespace) for v in value]
    return value


@pytest.mark.parametrize("folder", CLAUDE_CODE_SESSIONS, ids=lambda p: p.name)
def test_a_transcript_as_plain_asif_written_back_resumes_with_its_history_or_names_what_it_lost(
        folder, tmp_path, claude_code_format, claude_code):
    # The transcript's ASIF without what only the claude-code format reads (its namespace): what
    # another ASIF producer would give, so the writer works from ASIF alone, on real content.
    session, _ = session_folder(folder)
    convert(session, tmp_path / "native.asif.json", "claude-code", "asif")
    plain = without_namespace(json.loads((tmp_path / "native.asif.json").read_bytes()), "claude-code/1")
    source = tmp_path / "plain.asif.json"
    source.write_text(json.dumps(plain))
    document = asif_convert.load(source.read_bytes(), source="asif", name=source.name)
    try:
        selection = select(document, pending="as-error", name=source.name)
    except InvalidInput as exc:
        pytest.fail(f"request cannot select this session's history: {exc}")
    judge_written(selection, source, "asif", tmp_path, claude_code)


# -- the judge itself, on the project's own Anthropic requests (no client needed) ---------------


def anthropic_history(source: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """``request --provider anthropic-messages`` for ``source``: its messages and losses."""
    result = asif_convert.request(source.read_bytes(), provider="anthropic-messages", pending="as-error",
                                  name=source.name)
    return ([normalized_message(m) for m in result.body["messages"]],
            {"losses": [msgspec.to_builtins(loss) for loss in result.losses]})


def judged(source: Path, source_format: str, history: list[dict[str, Any]], report: dict[str, Any]) -> list[str]:
    selection = selection_of(source, source_format)
    assert selection is not None
    judge = Judge(selection, history, report)
    for item in selection.inputs:
        judge.check(item)
    return judge.missing


def test_the_judge_names_a_lost_image():
    source = CORPUS / "continuity" / "04-openai-tools.json"
    history, report = anthropic_history(source)
    assert judged(source, "continuity", history, report) == []
    for message in history:
        message["content"] = [b for b in message["content"] if b["type"] != "image"]
    missing = judged(source, "continuity", history, report)
    assert [m.split(": ")[1] for m in missing] == ["image 'msg-04-01/image/0' (embedded)"], missing


def test_the_judge_accepts_every_history_the_request_command_renders():
    for source, source_format in WITH_HISTORY:
        history, report = anthropic_history(source)
        assert judged(source, source_format, history, report) == [], source.name
        assert api_problems(history) == [], source.name


def test_the_api_check_finds_blocks_the_messages_api_refuses():
    csv = {"type": "image", "source": {"type": "text", "media_type": "text/csv", "data": "a,b\n"}}
    history = [{"role": "user", "content": [csv, {"type": "image", "source": {"type": "url", "url": ""}}]},
               {"role": "system", "content": [{"type": "text", "text": "hi"}]},
               {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": [csv]}]}]
    found = api_problems(history)
    assert [p.split(":")[0] for p in found] == ["message 0", "message 0", "message 1", "message 2"], found
    assert "empty URL" in found[1] and "role 'system'" in found[2]


def test_the_judge_names_a_lost_text_call_result_and_thinking_unless_a_loss_names_them():
    source = CORPUS / "continuity" / "03-anthropic-tools.json"
    history, report = anthropic_history(source)
    first_text = next(b for m in history for b in m["content"] if b["type"] == "text")
    first_text["text"] = "something else"
    call = next(b for m in history for b in m["content"] if b["type"] == "tool_use")
    call["input"] = {"changed": True}
    for message in history:
        message["content"] = [b for b in message["content"]
                              if b.get("tool_use_id") != call["id"] and b["type"] != "thinking"]
    missing = judged(source, "continuity", history, report)
    assert sorted({m.split(": ")[1].split(" ")[0] for m in missing}) == ["call", "no", "reasoning", "text"], missing
    events = [m.split("(event ")[1].split(")")[0] for m in missing]
    named = {"losses": report["losses"] + [{"references": [{"type": "event", "id": e} for e in events]}]}
    assert judged(source, "continuity", history, named) == []
