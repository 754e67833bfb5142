"""What a user sees: help texts, messages, hints and options that never surprise.

The help snapshots live in tests/snapshots/help/; after an intended change to a command's
options or texts, refresh them with
``ASIF_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest tests/test_user_facing.py -k help`` and
review the diff.
"""

from __future__ import annotations

import os

import pytest
from typer.testing import CliRunner

from asif_convert._cli.app import app
from asif_convert._registry import loss_kinds

from .conftest import CONTINUITY_FILES, ROOT

runner = CliRunner()
EXPORT = CONTINUITY_FILES[1]  # a plain chat
SNAPSHOTS = ROOT / "tests" / "snapshots" / "help"

# Help and usage errors must not depend on the terminal they are printed in.
FIXED_TERMINAL = {"COLUMNS": "80", "LINES": "24", "TERMINAL_WIDTH": None, "FORCE_COLOR": None,
                  "NO_COLOR": "1", "TTY_COMPATIBLE": None, "TTY_INTERACTIVE": None,
                  "_TYPER_FORCE_DISABLE_TERMINAL": "1"}


def invoke(*args, input=None, env=None):
    return runner.invoke(app, [str(a) for a in args], input=input, env={**FIXED_TERMINAL, **(env or {})})


# -- help snapshots ---------------------------------------------------------------------------

COMMANDS = [None, *sorted(c.name for c in app.registered_commands)]


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

@pytest.mark.parametrize("command", ["from-continuity", "to-continuity", "convert"])
def test_an_unknown_loss_kind_is_refused_with_the_known_ones(tmp_path, command):
    out = tmp_path / "o.json"
    extra = ["--to", "asif"] if command == "convert" else []
    res = invoke(command, EXPORT, "-o", out, *extra, "--fail-on", "unmaped_field")
    assert res.exit_code == 2
    assert "unknown loss kind 'unmaped_field'" in res.stderr
    assert all(kind in res.stderr for kind in loss_kinds())
    assert not out.exists()


def test_a_known_loss_kind_is_accepted_and_fires(tmp_path):
    res = invoke("from-continuity", EXPORT, "-o", tmp_path / "o.json", "--fail-on", "unmapped_field")
    assert res.exit_code == 4 and "unmapped_field" in res.stderr


# -- debug mode keeps the exit code -------------------------------------------------------------

@pytest.mark.parametrize("debug", [None, "1"])
def test_an_internal_error_exits_3_with_or_without_debug(tmp_path, monkeypatch, debug):
    from asif_convert._formats.asif import AsifFormat

    def broken(self, doc, ctx):
        raise RuntimeError("boom")

    monkeypatch.setattr(AsifFormat, "write", broken)
    out = tmp_path / "o.json"
    res = invoke("from-continuity", EXPORT, "-o", out, env={"ASIF_CONVERT_DEBUG": debug})
    assert res.exit_code == 3
    assert "internal error: RuntimeError: boom" in res.stderr
    assert ("Traceback" in res.stderr) == bool(debug)
    assert not out.exists()
