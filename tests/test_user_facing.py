"""What a user sees: help texts, messages, hints and options that never surprise.

The help snapshots live in tests/snapshots/help/; after an intended change to a command's
options or texts, refresh them with
``ASIF_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest tests/test_user_facing.py -k help`` and
review the diff.
"""

from __future__ import annotations

import datetime
import json
import math
import os
import re
import subprocess
import sys
from collections import Counter

import pytest
from typer.testing import CliRunner

from asif_convert import InvalidInput, Limits, Options, UsageError, convert, ensure_valid, validate
from asif_convert._cli import app as cli
from asif_convert._cli.app import app
from asif_convert._registry import loss_kinds

from .conftest import ASIF_EXAMPLES, CONTINUITY_FILES, ROOT

runner = CliRunner()
EXPORT = CONTINUITY_FILES[1]  # a plain chat
SNAPSHOTS = ROOT / "tests" / "snapshots" / "help"

# Help and usage errors must not depend on the terminal they are printed in.
FIXED_TERMINAL = {"COLUMNS": "80", "LINES": "24", "TERMINAL_WIDTH": None, "FORCE_COLOR": None,
                  "NO_COLOR": "1", "TTY_COMPATIBLE": None, "TTY_INTERACTIVE": None,
                  "_TYPER_FORCE_DISABLE_TERMINAL": "1"}


_PLAIN = {k: v for k, v in FIXED_TERMINAL.items() if v is not None}


def invoke(*args, input=None, env=None):
    return runner.invoke(app, [str(a) for a in args], input=input, env={**FIXED_TERMINAL, **(env or {})})


# -- help snapshots ---------------------------------------------------------------------------

COMMANDS = [None, *sorted(cli.COMMANDS)]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c or "asif-convert")
def test_help_matches_its_snapshot(command):
    res = invoke(*([command] if command else []), "--help")
    assert res.exit_code == 0, res.output
    snapshot = SNAPSHOTS / f"{command or 'asif-convert'}.txt"
    if os.environ.get("ASIF_UPDATE_SNAPSHOTS"):
        snapshot.write_text(res.stdout)
    assert snapshot.exists(), f"no snapshot {snapshot.name}: run with ASIF_UPDATE_SNAPSHOTS=1 and review it"
    assert res.stdout == snapshot.read_text()


def test_every_command_has_a_snapshot():
    expected = {f"{c or 'asif-convert'}.txt" for c in COMMANDS}
    assert {p.name for p in SNAPSHOTS.glob("*.txt")} == expected


@pytest.mark.parametrize("command", COMMANDS[1:])
def test_help_never_shows_a_value_for_a_flag(command):
    """A flag takes no value (``--strict true`` is a usage error), so help must not show one."""
    assert "<bool>" not in invoke(command, "--help").stdout


def test_a_flag_given_a_value_is_a_usage_error(tmp_path):
    assert invoke("from-continuity", EXPORT, "-o", tmp_path / "o.json", "--strict", "true").exit_code == 2


def test_the_snapshots_hold_whatever_the_terminal_says(monkeypatch):
    monkeypatch.setenv("COLUMNS", "40")
    monkeypatch.setenv("TERMINAL_WIDTH", "200")
    assert invoke("convert", "--help").stdout == (SNAPSHOTS / "convert.txt").read_text()


# -- options that accept nonsense -------------------------------------------------------------

@pytest.mark.parametrize(("option", "value", "message"), [
    ("--max-depth", "401", "must be from 1 to 400 levels"),
    ("--max-depth", "0", "must be from 1 to 400 levels"),
    ("--max-depth", "deep", "'deep' is not a whole number"),
    ("--max-bytes", "0", "must be at least 1"),
    ("--max-string", "0", "must be at least 1"),
    ("--max-string", "12Q", "'12Q' is not a size"),
])
def test_a_limit_out_of_range_is_a_usage_error_in_our_words(tmp_path, option, value, message):
    res = invoke("from-continuity", EXPORT, "-o", tmp_path / "o.json", option, value)
    assert res.exit_code == 2 and f"Invalid value for '{option}': {message}" in res.stderr
    assert "Input should" not in res.stderr  # not a validation library's wording
    assert not (tmp_path / "o.json").exists()


@pytest.mark.parametrize(("value", "message"), [("-1", "must be from 0 (converts in this process) to 256"),
                                               ("2147483647", "must be from 0 (converts in this process) to 256"),
                                               ("two", "'two' is not a whole number")])
def test_workers_out_of_range_is_a_usage_error_in_our_words(tmp_path, value, message):
    res = invoke("batch", tmp_path, "-o", tmp_path / "out", "--to", "asif", "--workers", value)
    assert res.exit_code == 2 and f"Invalid value for '--workers' / '-j': {message}" in res.stderr
    assert "x>=0" not in res.stderr


@pytest.mark.parametrize("command", [["from-continuity", EXPORT, "-o", "{out}", "--artifacts-root"],
                                     ["batch", EXPORT.parent, "-o", "{out}", "--to", "asif", "--artifacts-root"],
                                     ["validate", EXPORT, "--base-dir"]])
@pytest.mark.parametrize(("folder", "message"), [("missing", "there is no folder"), ("file.txt", "is not a folder")])
def test_a_folder_option_that_names_no_folder_is_a_usage_error(tmp_path, command, folder, message):
    """A misspelled folder would mean, silently, that no file in it is ever found."""
    (tmp_path / "file.txt").write_text("x")
    args = [str(a).replace("{out}", str(tmp_path / "out")) for a in command] + [str(tmp_path / folder)]
    res = invoke(*args)
    assert res.exit_code == 2 and message in res.stderr, res.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("option", ["--max-bytes", "--max-string", "--artifact-max-bytes"])
@pytest.mark.parametrize("value", ["99999999999999999999999G", "9223372036854775807", "4611686018427387905"])
def test_a_size_beyond_any_file_is_a_usage_error(tmp_path, option, value):
    res = invoke("from-continuity", EXPORT, "-o", tmp_path / "o.json", option, value, "--artifacts-root", tmp_path)
    assert res.exit_code == 2 and f"Invalid value for '{option}': '{value}' is more than 4 EiB" in res.stderr
    assert not (tmp_path / "o.json").exists()


@pytest.mark.parametrize("command", [["from-continuity", EXPORT, "-o", "{out}"], ["validate", EXPORT],
                                     ["inspect", EXPORT], ["diff", EXPORT, EXPORT]])
def test_a_limit_far_above_the_memory_reads_a_small_file(tmp_path, command):
    """A file is read for its size, not for the limit's: --max-bytes 100G set aside 100 GB."""
    args = [str(a).replace("{out}", str(tmp_path / "o.json")) for a in command]
    res = invoke(*args, "--max-bytes", "4294967296G")  # 4 EiB, the largest a limit may name
    assert res.exit_code == 0, res.stderr


def test_the_library_refuses_sizes_beyond_any_file():
    with pytest.raises(ValueError, match="4 EiB"):
        Limits(max_bytes=10**30)
    for name in ("artifact_max_bytes", "artifacts_max_total"):
        with pytest.raises(UsageError, match=name):
            Options(**{name: 10**30})
        with pytest.raises(UsageError, match=name):
            Options(**{name: 0})
    assert convert(EXPORT, to="asif", limits=Limits(max_bytes=1 << 62)).losses


def test_a_limit_in_range_binds(tmp_path):
    assert invoke("from-continuity", EXPORT, "-o", tmp_path / "o.json", "--max-depth", "400").exit_code == 0
    res = invoke("from-continuity", EXPORT, "-o", tmp_path / "o.json", "--force", "--max-depth", "3")
    assert res.exit_code == 1 and "--max-depth 3" in res.stderr


@pytest.mark.parametrize("command", ["from-continuity", "to-continuity", "convert"])
def test_an_unknown_loss_kind_is_refused_with_the_known_ones(tmp_path, command):
    out = tmp_path / "o.json"
    extra = ["--to", "asif"] if command == "convert" else []
    res = invoke(command, EXPORT, "-o", out, *extra, "--fail-on", "unmaped_field")
    assert res.exit_code == 2
    assert "Invalid value for '--fail-on': unknown loss kind 'unmaped_field'" in res.stderr
    assert all(kind in res.stderr for kind in loss_kinds())
    assert not out.exists()


def test_a_known_loss_kind_is_accepted_and_fires(tmp_path):
    res = invoke("from-continuity", EXPORT, "-o", tmp_path / "o.json", "--fail-on", "unmapped_field")
    assert res.exit_code == 4 and "unmapped_field" in res.stderr


def test_a_plugin_can_add_loss_kinds(tmp_path, monkeypatch):
    """The known kinds come from the installed formats' mapping tables, plugins included."""
    from asif_convert import _registry
    from asif_convert._mapping import MappingTable

    class Toy:
        name, description, extension, namespace = "toy", "a toy format", ".toy.json", None
        mapping_tables = (MappingTable(name="toy", meta={}, kinds={"toy_kind": "a toy loss"}, fields={},
                                       derived={}),)

    installed = _registry.registry()
    monkeypatch.setattr(_registry, "registry", lambda: {**installed, "toy": Toy()})
    res = invoke("from-continuity", EXPORT, "-o", tmp_path / "o.json", "--fail-on", "toy_kind")
    assert res.exit_code == 0, res.stderr  # known now, and this conversion records none
    assert "toy_kind" in invoke("formats").stdout
    res = invoke("from-continuity", EXPORT, "-o", tmp_path / "o.json", "--fail-on", "toy_knd")
    assert res.exit_code == 2 and "toy_kind" in res.stderr


# -- debug mode keeps the exit code -------------------------------------------------------------

@pytest.mark.parametrize("debug", [None, "1"])
def test_an_internal_error_exits_3_with_or_without_debug(tmp_path, monkeypatch, debug):
    from asif_convert._formats.asif import AsifFormat

    def broken(self, doc, ctx):
        raise RuntimeError("boom")

    monkeypatch.setattr(AsifFormat, "write_streamed", broken)
    out = tmp_path / "o.json"
    res = invoke("from-continuity", EXPORT, "-o", out, env={"ASIF_CONVERT_DEBUG": debug})
    assert res.exit_code == 3
    assert "internal error: RuntimeError: boom" in res.stderr
    assert ("Traceback" in res.stderr) == bool(debug)
    assert not out.exists()


@pytest.mark.parametrize("command", [["validate", EXPORT], ["formats"]])
def test_an_internal_error_in_a_listing_command_exits_3_without_a_traceback(monkeypatch, command):
    import asif_convert._cli.validate as module

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(module, "validate_as", broken)
    monkeypatch.setattr(module, "loss_kinds", broken)
    res = invoke(*command)
    assert res.exit_code == 3 and "internal error: RuntimeError: boom" in res.stderr
    assert "Traceback" not in res.stderr


@pytest.mark.parametrize("command", [["formats"], ["validate", EXPORT], ["inspect", EXPORT]])
def test_standard_output_closed_by_its_reader_ends_quietly(command):
    """``asif-convert formats | head -1``: the reader went away; exit 1 (an output that could
    not be written), and no internal error, traceback or complaint at exit."""
    proc = subprocess.Popen([sys.executable, "-c", "from asif_convert._cli.app import run; run()", *map(str, command)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, **_PLAIN})
    proc.stdout.close()  # before it writes a line
    stderr = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 1, stderr
    assert stderr == ""


# -- what asif-convert writes reads back with the same limits ------------------------------------

def test_an_output_string_longer_than_the_limit_is_refused_not_written(tmp_path):
    """A native state's payload becomes one JSON text in ASIF: two strings of 600 characters
    (within --max-string 1000) make one of 1,215, which could not be read back."""
    doc = json.loads((CONTINUITY_FILES[8]).read_bytes())
    doc["native_states"][0]["payload"] = {"a": "x" * 600, "b": "y" * 600}
    src, out = tmp_path / "in.json", tmp_path / "o.json"
    src.write_text(json.dumps(doc))
    res = invoke("from-continuity", src, "-o", out, "--max-string", "1000")
    assert res.exit_code == 1
    assert ("/resources/0/text: in the output: a string of 1,215 characters, more than the limit of 1,000 "
            "(--max-string), so it could not be read back with the same limits; raise --max-string to convert "
            "this input [limit]") in res.stderr
    assert not out.exists()
    assert invoke("from-continuity", src, "-o", out, "--max-string", "2000").exit_code == 0
    assert invoke("validate", out, "--max-string", "2000").exit_code == 0


def test_validate_applies_the_limits_it_is_given_and_nothing_stricter(tmp_path):
    doc = json.loads(EXPORT.read_bytes())
    doc["messages"][0]["content_json"] = json.loads("[" * 280 + "]" * 280)
    src = tmp_path / "deep.json"
    src.write_text(json.dumps(doc))
    res = invoke("validate", src, "--max-depth", "300")
    assert res.exit_code == 0 and f"{src} (continuity): valid" in res.stdout, res.stdout
    res = invoke("validate", src)
    assert res.exit_code == 1 and f"{src} (not read): 1 problem" in res.stdout  # not an 'unknown format'
    assert "nested more than 256 levels" in res.stdout


# -- library inputs ---------------------------------------------------------------------------

def _inputs(path):
    data = path.read_bytes()
    return {"bytes": data, "bytearray": bytearray(data), "str": data.decode(), "path": path,
            "dict": json.loads(data)}


@pytest.mark.parametrize("kind", ["bytes", "bytearray", "str", "path", "dict"])
def test_convert_takes_every_documented_input(kind):
    expected = convert(EXPORT.read_bytes(), to="asif", name=str(EXPORT))
    result = convert(_inputs(EXPORT)[kind], to="asif", name=str(EXPORT))
    assert result.output == expected.output
    assert result.losses == expected.losses


@pytest.mark.parametrize("kind", ["bytes", "bytearray", "str", "path", "dict"])
def test_validate_takes_what_convert_takes(kind, tmp_path):
    assert validate(_inputs(EXPORT)[kind]) == []
    doc = json.loads(EXPORT.read_bytes())
    doc["messages"][0]["role"] = "robot"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    problems = validate(_inputs(bad)[kind])
    assert problems and problems == validate(bad.read_bytes())
    with pytest.raises(InvalidInput):
        convert(_inputs(bad)[kind], to="asif")


def test_a_path_names_the_file_in_errors(tmp_path):
    bad = tmp_path / "broken.json"
    bad.write_text("{")
    with pytest.raises(InvalidInput) as caught:
        convert(bad, to="asif")
    assert caught.value.source == str(bad) and str(bad) in str(caught.value)


@pytest.mark.parametrize("value", [None, 42, 1.5, ("a",), {"format"}, object()])
def test_anything_else_is_a_usage_error_that_says_what_is_accepted(value):
    for call in (lambda: convert(value, to="asif"), lambda: validate(value)):
        with pytest.raises(UsageError) as caught:
            call()
        message = str(caught.value)
        assert type(value).__name__ in message
        assert all(word in message for word in ("bytes", "str", "os.PathLike", "dict"))


def test_a_path_given_as_str_gets_a_hint():
    with pytest.raises(InvalidInput) as caught:
        convert(str(EXPORT), to="asif")
    assert "pass a pathlib.Path to read a file" in caught.value.problems[0].message


@pytest.mark.parametrize(("mutate", "path", "reason"), [
    (lambda d: d["messages"][0].__setitem__("content_json", {"when": datetime.date(2024, 1, 1)}),
     "/messages/0/content_json/when", "a Python date is not a JSON value"),
    (lambda d: d["messages"][0].__setitem__("content_json", ("a", "tuple")), "/messages/0/content_json",
     "a Python tuple is not a JSON value"),
    (lambda d: d["messages"][0].__setitem__("content_json", {"x": math.nan}), "/messages/0/content_json/x",
     "nan is not a JSON number"),
    (lambda d: d["messages"][0].__setitem__("content_json", {1: "one"}), "/messages/0/content_json",
     "the key 1 is not a string; JSON object keys are strings"),
])
def test_a_parsed_document_must_hold_json_values_only(mutate, path, reason):
    doc = json.loads(EXPORT.read_bytes())
    mutate(doc)
    for call in (lambda: convert(doc, to="asif"), lambda: ensure_valid(doc)):
        with pytest.raises(InvalidInput) as caught:
            call()
        [problem] = caught.value.problems
        assert problem.path == path and problem.message.startswith(reason)


def test_a_parsed_document_is_checked_against_the_limits():
    doc = json.loads(EXPORT.read_bytes())
    doc["messages"][0]["content_json"] = json.loads("[" * 20 + "]" * 20)
    problems = validate(doc, limits=Limits(max_depth=10))
    assert [p.rule for p in problems] == ["limit"] and "nested more than 10 levels" in problems[0].message
    with pytest.raises(InvalidInput):
        convert(doc, to="asif", limits=Limits(max_depth=10))


# -- same-format conversions: a checked copy --------------------------------------------------

@pytest.mark.parametrize("path", [CONTINUITY_FILES[13], ASIF_EXAMPLES[0]], ids=lambda p: p.stem)
def test_a_same_format_conversion_is_a_checked_copy_with_no_losses(path):
    fmt = "continuity" if path in CONTINUITY_FILES else "asif"
    result = convert(path.read_bytes(), to=fmt)
    assert result.losses == [] and result.source_format == result.target_format == fmt
    assert json.loads(result.output) == json.loads(path.read_bytes())


def test_the_copy_says_so_and_reports_no_losses(tmp_path):
    out, report = tmp_path / "o.json", tmp_path / "r.json"
    src = CONTINUITY_FILES[13]
    res = invoke("convert", src, "--to", "continuity", "-o", out, "--report", report, "--compact",
                 "--on-loss", "error")
    assert res.exit_code == 0, res.stderr
    assert "(continuity, a checked copy of the input)" in res.stderr and "0 losses" in res.stderr
    assert json.loads(out.read_bytes()) == json.loads(src.read_bytes()) and out.read_bytes().count(b"\n") == 1
    rep = json.loads(report.read_bytes())
    assert rep["losses"] == [] and rep["loss_counts"] == {}


def test_a_copy_that_would_repeat_an_error_is_refused(tmp_path):
    doc = json.loads(ASIF_EXAMPLES[0].read_bytes())
    doc["events"][0]["actor_id"] = "nobody"
    with pytest.raises(InvalidInput) as caught:
        convert(json.dumps(doc), to="asif")
    assert any(p.path == "/events/0/actor_id" for p in caught.value.problems)


# -- coverage detail ----------------------------------------------------------------------------

def _tools_coverage(doc):
    out = json.loads(convert(json.dumps(doc), to="asif").output)
    return next(c for c in out["coverage"] if c["scope"] == "tools")


def test_tools_coverage_says_dialect_content_was_interpreted_when_it_holds_no_calls():
    doc = json.loads(EXPORT.read_bytes())
    for m in doc["messages"]:
        m["content_json"] = [{"type": "text", "text": m["text_content"]}]  # Anthropic content blocks, no tools
    tools = _tools_coverage(doc)
    assert tools["status"] == "not_inspected"  # continuity events could still hold tool activity
    assert "was not interpreted" not in tools["detail"]
    assert tools["detail"].startswith("Message content in Anthropic Messages shape was interpreted and holds no "
                                      "tool calls")


def test_tools_coverage_without_any_dialect_content_is_unchanged():
    tools = _tools_coverage(json.loads(EXPORT.read_bytes()))
    assert tools["status"] == "not_inspected" and "was not interpreted" in tools["detail"]


# -- inspect: the input's own counts, and a conversion's apart ----------------------------------

MIXED = CONTINUITY_FILES[13]  # 25 messages, 10 events, no participants


def test_inspect_counts_what_a_continuity_export_holds():
    s = json.loads(invoke("inspect", MIXED, "--json").stdout)
    raw = json.loads(MIXED.read_bytes())
    assert s["counts"] == {
        "branches": 2, "messages": 25, "messages_by_role": {"user": 6, "assistant": 12, "tool": 7},
        "events": 10, "events_by_event_type": dict(Counter(e["event_type"] for e in raw["events"])),
        "checkpoints": 2, "native_states": 2, "artifacts": 2,
    }
    assert "participants" not in s["counts"]  # an ASIF notion: only in what a conversion would produce
    as_asif = s["as_asif"]
    expected = json.loads(convert(MIXED.read_bytes(), to="asif").output)
    assert as_asif["counts"]["events"] == len(expected["events"]) == 42
    assert as_asif["counts"]["participants"] == len(expected["participants"]) == 4
    assert [c["scope"] for c in as_asif["coverage"]] == [c["scope"] for c in expected["coverage"]]
    assert [b["id"] for b in as_asif["branches"]] == [b["id"] for b in expected["branches"]]


def test_inspect_labels_the_conversion_section():
    out = invoke("inspect", MIXED).stdout
    own, _, converted = out.partition("As an ASIF session (what converting this continuity document would produce; "
                                      "nothing is written):")
    assert converted, out
    assert "Contents of the continuity document" in own and "participants" not in own
    assert "participants" in converted and "Coverage" in converted


def test_inspect_of_an_asif_session_has_no_conversion_section():
    s = json.loads(invoke("inspect", ASIF_EXAMPLES[0], "--json").stdout)
    assert "as_asif" not in s and s["counts"]["events"] == len(json.loads(ASIF_EXAMPLES[0].read_bytes())["events"])


def test_inspect_prints_ids_as_they_are(tmp_path):
    """Names and ids are data: a '[tag]' in them is printed, not taken for markup."""
    doc = json.loads(EXPORT.read_bytes())
    old = doc["session"]["active_branch_id"]
    new = "main[bold]"
    text = json.dumps(doc).replace(json.dumps(old), json.dumps(new))
    src = tmp_path / "odd[x].json"
    src.write_text(text)
    res = invoke("inspect", src)
    assert res.exit_code == 0, res.stderr
    assert "main[bold]" in res.stdout and "odd[x].json" in res.stdout


# -- the README's exit codes and every quoted message, against the real output -----------------

DOCS = [ROOT / "README.md", ROOT / "docs" / "cli.md"]


def readme_exit_codes(page: str = "README.md") -> dict[int, str]:
    """The README's exit-code table: the markdown table whose header is ``code | meaning``."""
    rows: dict[int, str] = {}
    lines = (ROOT / page).read_text().splitlines()
    for i, line in enumerate(lines):
        if [c.strip().lower() for c in line.strip().strip("|").split("|")] == ["code", "meaning"]:
            for row in lines[i + 2:]:
                if not row.strip().startswith("|"):
                    break
                code, meaning = (c.strip() for c in row.strip().strip("|").split("|", 1))
                rows[int(code)] = meaning
            break
    return rows


def _scenario(tmp_path, monkeypatch, name):
    """Run one scenario of the catalogue; returns the CliRunner result."""
    src = tmp_path / "in.json"
    src.write_bytes(EXPORT.read_bytes())
    out = tmp_path / "o.json"
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    if name == "internal-crash":
        from asif_convert._formats.asif import AsifFormat
        monkeypatch.setattr(AsifFormat, "write_streamed", lambda self, doc, ctx: 1 / 0)
    if name == "interrupted":  # Ctrl-C in the middle of a conversion
        from asif_convert._formats.asif import AsifFormat
        monkeypatch.setattr(AsifFormat, "write_streamed",
                            lambda self, doc, ctx: (_ for _ in ()).throw(KeyboardInterrupt))
    if name == "internal-invalid-output":
        from asif_convert._formats.asif import AsifFormat
        monkeypatch.setattr(AsifFormat, "write_streamed",
                            lambda self, doc, ctx: ({"asif_version": "0.4", "events": []}, "events", iter(())))
    args = {
        "converted": ["from-continuity", src, "-o", out],
        "converted-copy": ["convert", src, "--to", "continuity", "-o", out],
        "all-valid": ["validate", src],
        "invalid-json": ["from-continuity", bad, "-o", out],
        "invalid-other-format": ["to-continuity", src, "-o", out],
        "invalid-validate": ["validate", bad],
        "invalid-unwritable": ["from-continuity", src, "-o", tmp_path / "missing" / "o.json"],
        "usage-unknown-option": ["from-continuity", src, "--bogus"],
        "usage-unknown-command": ["valdate", src],
        "usage-missing-argument": ["from-continuity"],
        "usage-flag-with-value": ["from-continuity", src, "-o", out, "--strict", "true"],
        "usage-unknown-kind": ["from-continuity", src, "-o", out, "--fail-on", "unmaped_field"],
        "usage-unknown-format": ["convert", src, "--to", "nope", "-o", out],
        "usage-over-input": ["from-continuity", src, "-o", src],
        "usage-bad-limit": ["from-continuity", src, "-o", out, "--max-depth", "0"],
        "usage-stdin-twice": ["diff", "-", "-"],
        "usage-no-folder": ["from-continuity", src, "-o", out, "--artifacts-root", tmp_path / "missing"],
        "internal-crash": ["from-continuity", src, "-o", out],
        "internal-invalid-output": ["from-continuity", src, "-o", out],
        "loss-policy-on-loss": ["from-continuity", src, "-o", out, "--on-loss", "error"],
        "loss-policy-fail-on": ["from-continuity", src, "-o", out, "--fail-on", "unmapped_field"],
        "interrupted": ["from-continuity", src, "-o", out],
        # a valid session whose tool call has no result: the request is refused
        "invalid-request-refused": ["request", ROOT / "corpus" / "asif" / "tool-call-partial.session.json",
                                    "--for", "openai-chat", "-o", out],
    }[name]
    return invoke(*args)


# scenario prefix -> words of the README's meaning for its exit code
MEANINGS = {"converted": "converted", "all-valid": "all files valid", "invalid": "invalid input",
            "usage": "usage error", "internal": "internal error", "loss-policy": "loss policy",
            "interrupted": "interrupted"}
SCENARIOS = ["converted", "converted-copy", "all-valid", "invalid-json", "invalid-other-format", "invalid-validate",
             "invalid-unwritable", "usage-unknown-option", "usage-unknown-command", "usage-missing-argument",
             "usage-flag-with-value", "usage-unknown-kind", "usage-unknown-format", "usage-over-input",
             "usage-bad-limit", "usage-stdin-twice", "usage-no-folder", "internal-crash", "internal-invalid-output",
             "loss-policy-on-loss", "loss-policy-fail-on", "interrupted", "invalid-request-refused"]


def _meaning_code(name: str) -> int:
    prefix = max((p for p in MEANINGS if name.startswith(p)), key=len)
    words = MEANINGS[prefix]
    codes = [code for code, meaning in readme_exit_codes().items() if words in meaning.lower()]
    assert len(codes) == 1, f"the README's exit-code table has {len(codes)} rows meaning {words!r}"
    return codes[0]


def test_the_readme_exit_code_table_is_the_one_the_code_uses():
    from asif_convert import _errors

    table = readme_exit_codes()
    assert table, "README.md has no exit-code table (a markdown table with columns 'code | meaning')"
    constants = {v for k, v in vars(_errors).items() if k.startswith("EXIT_")}
    assert set(table) == constants


def test_the_cli_reference_has_the_readme_exit_codes_and_every_command():
    cli_md = readme_exit_codes("docs/cli.md")
    assert set(cli_md) == set(readme_exit_codes())
    assert all("OUTDIR in use" in table[2] for table in (cli_md, readme_exit_codes()))
    text = (ROOT / "docs" / "cli.md").read_text()
    block = re.search(r"## Commands and options\n+```sh\n(.+?)\n```", text, re.S)
    assert block, "docs/cli.md lists the commands in a sh block under 'Commands and options'"
    listed = set(re.findall(r"^asif-convert ([a-z-]+)", block.group(1), re.M))
    assert listed == set(cli.COMMANDS)


def test_the_readme_says_sign_and_verify_need_their_extra_and_stays_short():
    readme = (ROOT / "README.md").read_text()
    line = next(ln for ln in readme.splitlines() if ln.startswith("asif-convert sign"))
    assert "verify" in line and "'asif-convert[sign]'" in line
    assert len(readme.encode()) <= 7 * 1024


@pytest.mark.parametrize("name", SCENARIOS)
def test_every_scenario_exits_with_the_readme_code_for_its_meaning(tmp_path, monkeypatch, name):
    res = _scenario(tmp_path, monkeypatch, name)
    assert res.exit_code == _meaning_code(name), (name, res.output)
    assert "Traceback" not in res.output


def _quoted_messages() -> list[tuple[str, str]]:
    """Every backtick-quoted error message in the README and docs/cli.md."""
    found = []
    for doc in DOCS:
        for quoted in re.findall(r"`((?:internal )?[Ee]rror: [^`]+)`", doc.read_text()):
            found.append((doc.name, quoted))
    return found


# Words in quoted messages that stand for a value; '…' and '...' stand for anything.
PLACEHOLDERS = ("FILE", "IN", "OUT", "PATH", "DIR", "KIND", "N", "FORMAT", "SIZE", "OUTDIR")


def _pattern(quoted: str) -> re.Pattern[str]:
    parts = re.split(r"(…|\.\.\.|\b(?:" + "|".join(PLACEHOLDERS) + r")\b)", quoted)
    regex = "".join(".*" if p in ("…", "...") else ".+?" if p in PLACEHOLDERS else re.escape(p) for p in parts)
    return re.compile(regex)


@pytest.fixture(scope="module")
def printed_lines(tmp_path_factory):
    lines: list[str] = []
    for name in SCENARIOS:
        with pytest.MonkeyPatch.context() as mp:
            res = _scenario(tmp_path_factory.mktemp(name), mp, name)
        lines += res.output.splitlines()
    return lines


def test_the_docs_quote_messages():
    """The parametrized check below runs over what the docs quote: make sure it finds them."""
    assert sum(doc == "cli.md" for doc, _ in _quoted_messages()) >= 5


@pytest.mark.parametrize(("doc", "quoted"), _quoted_messages())
def test_every_quoted_message_is_what_asif_convert_prints(printed_lines, doc, quoted):
    pattern = _pattern(quoted)
    assert any(pattern.fullmatch(line.strip()) for line in printed_lines), (
        f"{doc} quotes {quoted!r}, which no scenario prints; fix the quote, or add the scenario that prints it "
        "to SCENARIOS in tests/test_user_facing.py")


# -- docs that match the tool -----------------------------------------------------------------


@pytest.mark.parametrize(("args", "quoted"), [
    (["from-continuity"], "/: this is an ASIF 0.4 session document (urn:asif:0.4:session), not an agent-continuity "
                          "export (format: agent-continuity-export); to convert it, run: asif-convert to-continuity "
                          "FILE"),
    (["convert", "--from", "continuity", "--to", "continuity"], "…; leave out --from to read it as asif"),
], ids=["from-continuity", "convert"])
def test_hostile_input_quotes_the_message_for_the_other_format(tmp_path, args, quoted):
    session = ASIF_EXAMPLES[0]
    res = invoke(args[0], session, *args[1:], "-o", tmp_path / "o.json")
    assert res.exit_code == 1
    said = res.stderr.splitlines()[1].strip().removesuffix(" [format]").replace(str(session), "FILE")
    assert said.endswith(quoted.removeprefix("…")), said
    assert f"`{quoted}`" in (ROOT / "docs" / "hostile-input.md").read_text()


def test_request_md_says_where_the_providers_are_listed():
    from asif_convert._request.api import PROVIDERS

    text = " ".join((ROOT / "docs" / "request.md").read_text().split())
    assert "`asif-convert request --help` lists them" in text and "`asif-convert formats` lists" not in text
    shown = " ".join(invoke("request", "--help").stdout.split())
    assert all(p in shown for p in PROVIDERS)
