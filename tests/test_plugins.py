"""Third-party formats through the entry-point group, as an installed distribution provides them:
a working plugin with its own mapping table converts; a broken one is reported once and skipped;
a name taken twice is an error naming both."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from .conftest import CONTINUITY_FILES

TINY = '''
"""A tiny format: {"format": "tiny", "session": ID, "lines": [[role, text], ...]}."""
from pathlib import Path

from asif_convert import ir
from asif_convert.plugin import Problem, load_mapping

TABLE = load_mapping(Path(__file__).with_name("asif-to-tiny.toml"))


class Tiny:
    name = "tiny"
    description = "a session as role/text lines"
    extension = ".tiny.json"
    namespace = None
    mapping_tables = (TABLE,)

    def detect(self, doc):
        return isinstance(doc, dict) and doc.get("format") == "tiny"

    def validate(self, doc):
        if not isinstance(doc.get("lines"), list):
            return [Problem(rule="tiny", path="/lines", message="expected an array of [role, text] pairs")]
        return []

    def read(self, doc, ctx):
        raise NotImplementedError  # this plugin only writes

    def write(self, doc, ctx):
        ledger = ctx.ledger(TABLE)
        lines = []
        for event in doc.events:
            if isinstance(event.body, ir.Message):
                lines.append([event.body.role, " ".join(p.text for p in event.body.parts
                                                         if isinstance(p, ir.TextPart))])
            else:
                ledger.add("events", "event", event.id)
        return {"format": "tiny", "session": doc.session.id, "lines": lines}


FORMAT = Tiny()
'''

TABLE = '''
[meta]
from = "asif-0.4"
to = "tiny"
loss = "not_a_line"

[kinds]
not_a_line = "An event that is not a message has no line in the tiny format: it is dropped."

[fields.events]
target = "lines"
rule = "mapped"
explanation = "only messages become lines; other events are dropped."
'''


def _distribution(site: Path, name: str, entry_points: dict[str, str], files: dict[str, str]) -> None:
    for rel, text in files.items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_text(textwrap.dedent(text))
    info = site / f"{name}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    eps = "".join(f"{k} = {v}\n" for k, v in entry_points.items())
    (info / "entry_points.txt").write_text(f"[asif_convert.formats]\n{eps}")


def _cli(site: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    # the site first, then the path the tests run with (a checkout's sources, say)
    path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH", "")) if p)
    environ = {**os.environ, "PYTHONPATH": path, "COLUMNS": "200", **env}
    environ.pop("ASIF_CONVERT_NO_PLUGINS", None)
    return subprocess.run([sys.executable, "-c", "from asif_convert._cli.app import run; run()", *args],
                          capture_output=True, text=True, env={**environ, **env}, timeout=120)


@pytest.fixture
def site(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    site.mkdir()
    _distribution(site, "tiny_format", {"tiny": "tiny_format:FORMAT"},
                  {"tiny_format/__init__.py": TINY, "tiny_format/asif-to-tiny.toml": TABLE})
    return site


def test_a_plugin_converts_with_its_own_loss_table(site, tmp_path):
    listed = _cli(site, "formats")
    assert listed.returncode == 0, listed.stderr
    assert "tiny" in listed.stdout and "not_a_line" in listed.stdout  # its kinds are known

    src = next(p for p in CONTINUITY_FILES if "tools" in p.name)
    out, report = tmp_path / "out.tiny.json", tmp_path / "report.json"
    res = _cli(site, "convert", str(src), "--to", "tiny", "-o", str(out), "--report", str(report))
    assert res.returncode == 0, res.stderr
    doc = json.loads(out.read_text())
    export = json.loads(src.read_text())
    assert doc["session"] == export["session"]["session_id"] and doc["lines"]
    kinds = json.loads(report.read_text())["loss_counts"]
    assert kinds.get("not_a_line", 0) >= 1

    refused = _cli(site, "convert", str(src), "--to", "tiny", "-o", str(out), "--fail-on", "not_a_line")
    assert refused.returncode == 4, refused.stderr


def test_a_broken_plugin_is_reported_once_and_skipped(site, tmp_path):
    _distribution(site, "broken_format", {"broken": "broken_format:FORMAT"},
                  {"broken_format/__init__.py": "raise ImportError('needs a library that is not installed')\n"})
    listed = _cli(site, "formats")
    assert listed.returncode == 0
    assert listed.stderr.count("skipped format plugin 'broken'") == 1
    assert "needs a library that is not installed" in listed.stderr
    assert "tiny" in listed.stdout and "continuity" in listed.stdout

    out = tmp_path / "s.asif.json"
    res = _cli(site, "from-continuity", str(CONTINUITY_FILES[0]), "-o", str(out))
    assert res.returncode == 0, res.stderr
    assert out.exists() and "Traceback" not in res.stderr


def test_a_duplicate_format_name_is_an_error_naming_both(site):
    _distribution(site, "dup_format", {"dup": "dup_format:FORMAT"},
                  {"dup_format/__init__.py": TINY.replace('name = "tiny"', 'name = "asif"'),
                   "dup_format/asif-to-tiny.toml": TABLE})
    res = _cli(site, "formats")
    assert res.returncode == 2
    assert "two formats are named 'asif'" in res.stderr and "built-in" in res.stderr
    assert "dup_format:FORMAT" in res.stderr and "Traceback" not in res.stderr


def test_plugins_can_be_turned_off(site):
    res = _cli(site, "formats", ASIF_CONVERT_NO_PLUGINS="1")
    assert res.returncode == 0 and "tiny" not in res.stdout


# A format of JSON Lines: {"tinylog": 1, "role": ..., "text": ...} on each line.
TINYLOG = '''
from asif_convert import ir
from asif_convert.plugin import Problem

SCOPES = ("participants", "conversation", "branches", "executions", "contexts", "configuration", "tools",
          "decisions", "tasks", "resources", "environment", "native", "usage")


class TinyLog:
    name = "tinylog"
    description = "a tiny log (JSON Lines)"
    extension = ".tiny.jsonl"
    namespace = None
    shape = "lines"

    def detect(self, first):
        return bool(first) and all(isinstance(v, dict) and v.get("tinylog") == 1 for v in first)

    def validate(self, lines):
        return [Problem(rule="tinylog", path="/text", line=n, message="expected a string")
                for n, v in lines.records if not isinstance(v.get("text"), str)]

    def read(self, lines, ctx):
        made = ir.Provenance(mode="observed", producer="tinylog")
        events = [ir.Event(id=f"line-{n}", sequence=i, actor_id=v["role"], provenance=made,
                           body=ir.Message(role=v["role"], parts=[ir.TextPart(text=v["text"])]))
                  for i, (n, v) in enumerate(lines.records)]
        roles = sorted({e.actor_id for e in events})
        head = events[-1].id if events else None
        return ir.Document(
            capture=ir.Capture(id="tinylog-capture", producer=ir.Producer(name="tinylog", version="1"),
                               consistency="unknown", boundary="the whole log"),
            session=ir.Session(id="tinylog-session"),
            participants=[ir.Participant(id=r, kind="human" if r == "user" else "agent") for r in roles],
            events=events, branches=[ir.Branch(id="main", event_ids=[e.id for e in events], head_event_id=head)],
            checkpoints=[ir.Checkpoint(id="cp", branch_id="main", at_event_id=head, knowledge="derived",
                                       status="unknown")],
            coverage=[ir.Coverage(scope=s, status="complete" if s in ("conversation", "participants", "branches")
                                  else "not_inspected", detail="tinylog") for s in SCOPES])

    def write(self, doc, ctx):
        return [{"tinylog": 1, "role": e.body.role, "text": " ".join(p.text for p in e.body.parts)}
                for e in doc.events if isinstance(e.body, ir.Message)]


FORMAT = TinyLog()
'''


@pytest.fixture
def lines_site(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    site.mkdir()
    _distribution(site, "tinylog_format", {"tinylog": "tinylog_format:FORMAT"}, {"tinylog_format/__init__.py": TINYLOG})
    return site


def test_a_plugin_of_json_lines_works_with_every_command(lines_site, tmp_path):
    log = tmp_path / "chat.tiny.jsonl"
    log.write_text('{"tinylog": 1, "role": "user", "text": "hi"}\n\n'
                   '{"tinylog": 1, "role": "assistant", "text": "hello"}\n')
    listed = _cli(lines_site, "formats")
    assert "tinylog" in listed.stdout and ".tiny.jsonl" in listed.stdout

    out = tmp_path / "chat.asif.json"
    res = _cli(lines_site, "convert", str(log), "--to", "asif", "-o", str(out))  # detected by content
    assert res.returncode == 0, res.stderr
    doc = json.loads(out.read_text())
    assert [e["data"]["parts"][0]["text"] for e in doc["events"]] == ["hi", "hello"]
    assert [e["id"] for e in doc["events"]] == ["line-1", "line-3"]  # (the blank line is no record)

    back = tmp_path / "back.tiny.jsonl"
    res = _cli(lines_site, "convert", str(out), "--to", "tinylog", "-o", str(back))
    assert res.returncode == 0, res.stderr
    assert [json.loads(x) for x in back.read_text().splitlines()] == [
        {"tinylog": 1, "role": "user", "text": "hi"}, {"tinylog": 1, "role": "assistant", "text": "hello"}]
    assert back.read_bytes().endswith(b"}\n") and back.read_text().count("\n") == 2

    for command in (["validate"], ["inspect"], ["view", "-o", str(tmp_path / "v.html")]):
        res = _cli(lines_site, *command, str(log))
        assert res.returncode == 0, (command, res.stderr)


def test_a_line_plugin_problem_names_file_line_and_path(lines_site, tmp_path):
    log = tmp_path / "bad.tiny.jsonl"
    log.write_text('{"tinylog": 1, "role": "user", "text": "hi"}\n# a comment\n'
                   '{"tinylog": 1, "role": "user", "text": 3}\n')
    res = _cli(lines_site, "validate", str(log))
    assert res.returncode == 1
    assert "line 2: /: not valid JSON" in res.stdout + res.stderr
    assert "line 3: /text: expected a string [tinylog]" in res.stdout + res.stderr

    cut = tmp_path / "live.tiny.jsonl"
    cut.write_text('{"tinylog": 1, "role": "user", "text": "hi"}\n{"tinylog": 1, "role": "assis')
    out = tmp_path / "live.asif.json"
    res = _cli(lines_site, "convert", str(cut), "--to", "asif", "-o", str(out))
    assert res.returncode == 0, res.stderr
    assert "line 2" in res.stderr and "cut" in res.stderr  # a warning naming the line
    assert len(json.loads(out.read_text())["events"]) == 1
