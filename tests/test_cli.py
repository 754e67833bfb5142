"""The command line: exit codes, messages people can act on, and no partial outputs."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from asif_convert._cli.app import app
from asif_convert._registry import get

from .conftest import CONTINUITY_FILES

runner = CliRunner()
EXPORT = CONTINUITY_FILES[1]  # a plain chat


def invoke(*args, input=None):
    return runner.invoke(app, [str(a) for a in args], input=input)


def test_converts_a_file(tmp_path):
    out = tmp_path / "s.asif.json"
    res = invoke("from-continuity", EXPORT, "-o", out)
    assert res.exit_code == 0, res.stderr
    assert get("asif").validate(json.loads(out.read_bytes())) == []
    assert "losses" in res.stderr and str(out) in res.stderr


def test_stdin_to_stdout():
    res = invoke("from-continuity", "-", "-o", "-", input=EXPORT.read_bytes())
    assert res.exit_code == 0, res.stderr
    assert json.loads(res.stdout)["asif_version"] == "0.4"


def test_report_lists_the_losses(tmp_path):
    report = tmp_path / "r.json"
    res = invoke("from-continuity", EXPORT, "-o", tmp_path / "o.json", "--report", report)
    assert res.exit_code == 0, res.stderr
    rep = json.loads(report.read_bytes())
    assert rep["source"] == EXPORT.name and rep["target_format"] == "asif"
    assert sum(rep["loss_counts"].values()) == len(rep["losses"]) > 0


def test_compact_output_is_one_line(tmp_path):
    out = tmp_path / "o.json"
    assert invoke("from-continuity", EXPORT, "-o", out, "--compact").exit_code == 0
    assert out.read_bytes().count(b"\n") == 1


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"", "the input is empty"),
        (b"{not json", "not valid JSON"),
        (b'{"format": "agent-continuity-export"', "not valid JSON"),
        (b"\xef\xbb\xbf{}", "byte-order mark"),
        (b"[1, 2]", "/: "),
        (b'{"format": "something-else"}', "/format"),
    ],
)
def test_bad_input_exits_1_with_file_and_reason(tmp_path, content, expected):
    src = tmp_path / "bad.json"
    src.write_bytes(content)
    out = tmp_path / "out.json"
    res = invoke("from-continuity", src, "-o", out)
    assert res.exit_code == 1
    assert str(src) in res.stderr and expected in res.stderr
    assert "Traceback" not in res.stderr + res.stdout
    assert not out.exists()


def test_schema_violation_names_the_json_path(tmp_path):
    doc = json.loads(EXPORT.read_bytes())
    doc["messages"][2]["role"] = "robot"
    src = tmp_path / "bad.json"
    src.write_text(json.dumps(doc))
    res = invoke("from-continuity", src, "-o", tmp_path / "o.json")
    assert res.exit_code == 1
    assert "/messages/2/role" in res.stderr and '"robot"' in res.stderr


def test_failure_leaves_an_existing_output_untouched(tmp_path):
    out = tmp_path / "out.json"
    out.write_text("previous")
    src = tmp_path / "bad.json"
    src.write_text("{}")
    assert invoke("from-continuity", src, "-o", out).exit_code == 1
    assert out.read_text() == "previous"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.json", "out.json"]  # no temp file left


def test_missing_file_exits_1(tmp_path):
    res = invoke("from-continuity", tmp_path / "nope.json", "-o", tmp_path / "o.json")
    assert res.exit_code == 1 and "nope.json" in res.stderr and "cannot read" in res.stderr


def _dangling(tmp_path):
    doc = json.loads(EXPORT.read_bytes())
    doc["messages"][0]["branch_id"] = "no-such-branch"
    src = tmp_path / "dangling.json"
    src.write_text(json.dumps(doc))
    return src


def test_referential_problems_become_losses(tmp_path):
    out = tmp_path / "o.json"
    res = invoke("from-continuity", _dangling(tmp_path), "-o", out)
    assert res.exit_code == 0, res.stderr
    assert "CONT-BRANCH" in res.stderr
    losses = json.loads(out.read_bytes())["losses"]
    ref = {"type": "branch", "id": "no-such-branch"}
    assert any(loss["kind"] == "synthesized_branch" and ref in loss["references"] for loss in losses)


def test_strict_refuses_referential_problems(tmp_path):
    out = tmp_path / "o.json"
    res = invoke("from-continuity", _dangling(tmp_path), "-o", out, "--strict")
    assert res.exit_code == 1
    assert "/messages/0/branch_id" in res.stderr and not out.exists()


def test_usage_error_exits_2():
    assert invoke("from-continuity").exit_code == 2
    assert invoke("no-such-command").exit_code == 2


def test_formats_lists_the_builtins():
    res = invoke("formats")
    assert res.exit_code == 0
    assert "continuity" in res.stdout and "asif" in res.stdout


def test_invalid_output_is_an_internal_error_and_is_not_written(tmp_path, monkeypatch):
    from asif_convert._formats.asif import AsifFormat

    def broken(self, doc, ctx):
        return {"asif_version": "0.4", "events": []}, "events", iter([{"id": "e1"}])

    monkeypatch.setattr(AsifFormat, "write_streamed", broken)
    out = tmp_path / "o.json"
    res = invoke("from-continuity", EXPORT, "-o", out)
    assert res.exit_code == 3
    assert "invalid asif document" in res.stderr and not out.exists()


def test_output_has_the_usual_permissions(tmp_path):
    """Atomic writes go through a private temp file; the output itself follows the umask."""
    import os

    out = tmp_path / "o.json"
    assert invoke("from-continuity", EXPORT, "-o", out).exit_code == 0
    mask = os.umask(0)
    os.umask(mask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~mask


# What every command's parameters take that is not a path: an empty value of any other parameter
# would name the current folder (``Path("")`` is ``.``), so every other one refuses it.
NOT_PATHS = {"to", "source", "fail_on", "pattern", "artifacts_each", "on_loss", "workers", "max_bytes",
             "max_depth", "max_string", "artifact_max_bytes", "artifacts_max_total", "storage_option", "scheduler",
             "connect_timeout", "no_worker_timeout", "stall_timeout", "provider", "context", "branch", "pending",
             "session_id"}


def _path_params():
    from asif_convert._cli.app import COMMANDS, command

    for name in COMMANDS:
        params = [p for p in command(name).params if not getattr(p, "is_flag", False)]
        for param in params:
            if param.name not in NOT_PATHS:
                yield name, param, params


@pytest.mark.parametrize(("name", "param", "params"), list(_path_params()),
                         ids=lambda v: v if isinstance(v, str) else getattr(v, "name", ""))
def test_an_empty_path_is_a_usage_error_naming_its_parameter(tmp_path, monkeypatch, name, param, params):
    """`--artifacts-out ""`, `--base-dir ""`, `-o ""` for batch... meant the current folder, silently."""
    monkeypatch.chdir(tmp_path)
    args: list[str] = [name]
    for p in params:
        if p is param:
            value = ""
        elif p.required:
            value = {"to": "asif", "provider": "openai-chat"}.get(p.name, "x")
        else:
            continue
        args += [value] if p.param_type_name == "argument" else [p.opts[-1], value]
    res = invoke(*args)
    assert res.exit_code == 2, (args, res.output)
    shown = param.human_readable_name if param.param_type_name == "argument" else param.opts[-1]
    assert f"Invalid value for '{shown}'" in res.stderr or f"/ '{shown}'" in res.stderr, res.stderr
    assert "is empty" in res.stderr
    assert list(tmp_path.iterdir()) == []  # nothing was written where the empty path pointed


def test_the_readme_first_command_and_every_named_output_can_be_run_twice(tmp_path, monkeypatch):
    """An output the user names is replaced (atomically), so a command run twice works and gives
    the same bytes (docs/cli.md; files a document names are another matter: test_artifacts)."""
    from .conftest import ROOT

    readme = (ROOT / "README.md").read_text()
    first = readme.split("```sh\n", 1)[1].split("\n", 1)[0]
    args = first.split(" && ")[-1].split()
    assert args[0] == ".venv/bin/asif-convert" and args[-1] == "session.asif.json", first
    monkeypatch.chdir(ROOT)
    out = tmp_path / args[-1]
    runs = []
    for _ in range(2):
        res = invoke(*args[1:-1], out)
        assert res.exit_code == 0, res.stderr
        runs.append(out.read_bytes())
    assert runs[0] == runs[1]
    page = tmp_path / "page.html"
    for _ in range(2):
        assert invoke("view", out, "-o", page).exit_code == 0
        res = invoke("to-continuity", out, "-o", tmp_path / "back.json", "--report", tmp_path / "r.json")
        assert res.exit_code == 0, res.stderr


@pytest.mark.parametrize(("args", "void", "can"), [
    (["from-continuity", EXPORT], "dropped", "it can record approximated_mapping, "),
    (["to-continuity", "{asif}"], "unmapped_field", "it can record dropped, residual"),
    (["convert", "{asif}", "--to", "asif"], "dropped", "a checked copy records none"),
])
def test_a_fail_on_kind_the_direction_cannot_record_is_accepted_with_a_note(tmp_path, args, void, can):
    """--fail-on dropped on a conversion to ASIF was accepted in silence: a guard that can never
    fire. It is accepted (the same flags serve both directions and mixed batches), with a note."""
    asif = tmp_path / "s.asif.json"
    assert invoke("from-continuity", EXPORT, "-o", asif).exit_code == 0
    args = [str(a).format(asif=asif) for a in args]
    res = invoke(*args, "-o", tmp_path / "out.json", "--fail-on", void)
    assert res.exit_code == 0, res.stderr
    assert f"note: --fail-on {void}: converting " in res.stderr and can in res.stderr, res.stderr
    res = invoke("from-continuity", EXPORT, "-o", tmp_path / "o2.json", "--fail-on", "unmapped_field")
    assert res.exit_code == 4 and "note:" not in res.stderr  # a kind that can occur: no note, and it fires


# -- one vocabulary across commands -------------------------------------------------------------

from asif_convert._cli import app as cli  # noqa: E402

# The commands whose printing is their output (a listing, a verdict per file, a difference).
PRINTING_IS_THE_OUTPUT = {"validate", "inspect", "diff", "formats"}


@pytest.mark.parametrize("command", [None, *cli.COMMANDS], ids=lambda c: c or "asif-convert")
def test_dash_h_is_help_everywhere(command):
    res = invoke(*([command] if command else []), "-h")
    assert res.exit_code == 0, res.output
    assert res.stdout.startswith("Usage: asif-convert") and "-h, --help" in res.stdout


@pytest.mark.parametrize("command", sorted(set(cli.COMMANDS) - PRINTING_IS_THE_OUTPUT))
def test_every_command_that_prints_besides_its_output_takes_quiet(command):
    assert "-q, --quiet" in invoke(command, "--help").stdout


def _package(tmp_path):
    pkg = tmp_path / "s.asif.zip"
    assert invoke("from-continuity", EXPORT, "-o", pkg).exit_code == 0
    return pkg


@pytest.mark.parametrize("command", ["from-continuity", "to-continuity", "convert", "request", "view-manifest",
                                     "sign", "verify"])
def test_quiet_prints_nothing_but_the_output(tmp_path, command):
    asif = tmp_path / "s.asif.json"
    assert invoke("from-continuity", EXPORT, "-o", asif).exit_code == 0
    out = tmp_path / "out"
    args = {
        "from-continuity": ["from-continuity", EXPORT, "-o", out],
        "to-continuity": ["to-continuity", asif, "-o", out],
        "convert": ["convert", EXPORT, "--to", "asif", "-o", out],
        "request": ["request", asif, "--for", "openai-chat", "-o", out],
    }.get(command)
    if command == "view-manifest":
        batch = invoke("batch", EXPORT, "-o", tmp_path / "b", "--to", "asif", "-j", "0", "-q")
        assert batch.exit_code == 0, batch.output
        args = ["view", tmp_path / "b" / "manifest.jsonl", "-o", out]
    if command in ("sign", "verify"):
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        key = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
        (tmp_path / "key").write_bytes(key.private_bytes_raw())
        (tmp_path / "pub").write_bytes(key.public_key().public_bytes_raw())
        pkg = _package(tmp_path)
        args = ["sign", pkg, "--key", tmp_path / "key", "-o", out]
        if command == "verify":
            assert invoke(*args).exit_code == 0
            args = ["verify", pkg, "--signature", out, "--public-key", tmp_path / "pub"]
    loud = invoke(*args)
    assert loud.exit_code == 0, loud.output
    assert loud.stderr or loud.stdout.strip() and command == "verify"  # something said besides the output
    res = invoke(*args, "-q")
    assert res.exit_code == 0, res.output
    assert res.stderr == "" and (command != "verify" or res.stdout == "")
    assert command == "verify" or out.exists()


def test_quiet_still_says_errors(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    res = invoke("from-continuity", bad, "-o", tmp_path / "o.json", "-q")
    assert res.exit_code == 1 and "error: " in res.stderr


@pytest.mark.parametrize("command", [["diff", "-", "-"], ["validate", "-", "-"], ["view", "-", "-", "-o", "p.html"],
                                     ["batch", "-", "-", "-o", "out", "--to", "asif"]], ids=lambda c: c[0])
def test_standard_input_named_twice_is_the_same_usage_error_everywhere(tmp_path, monkeypatch, command):
    monkeypatch.chdir(tmp_path)
    res = invoke(*command, input=EXPORT.read_bytes())
    assert res.exit_code == 2, res.output
    assert res.stderr == "error: <stdin> (-) is named 2 times; it can be read only once\n"
    assert not (tmp_path / "out").exists() and not (tmp_path / "p.html").exists()


def test_batch_says_it_does_not_read_standard_input(tmp_path):
    res = invoke("batch", "-", "-o", tmp_path / "out", "--to", "asif", input=EXPORT.read_bytes())
    assert res.exit_code == 2 and "<stdin> (-) is not one" in res.stderr


@pytest.mark.parametrize("command", [["from-continuity", "-"], ["convert", "-", "--to", "asif"], ["inspect", "-"],
                                     ["validate", "-"], ["diff", "-", str(EXPORT)],
                                     ["request", "-", "--for", "openai-chat"], ["view", "-", "-o", "p.html"]],
                         ids=lambda c: c[0])
def test_standard_input_has_one_name_in_every_message(tmp_path, monkeypatch, command):
    monkeypatch.chdir(tmp_path)
    res = invoke(*command, input=b"{")
    assert res.exit_code == 1, res.output
    assert "<stdin>" in res.output and "- (" not in res.output and "-: " not in res.output


def test_validate_and_diff_name_standard_input_like_the_rest():
    assert invoke("validate", "-", input=EXPORT.read_bytes()).stdout.startswith("<stdin> (continuity): valid")
    other = CONTINUITY_FILES[0]
    res = invoke("diff", "-", other, input=EXPORT.read_bytes())
    assert res.exit_code == 1 and res.stdout.startswith(f"<stdin> → {other}: ")


def test_inspect_lists_the_problems_validate_finds(tmp_path):
    doc = json.loads(CONTINUITY_FILES[4].read_bytes())
    doc["messages"][0]["branch_id"] = "nope"
    src = tmp_path / "ref.json"
    src.write_text(json.dumps(doc))
    validated = invoke("validate", src)
    assert validated.exit_code == 0
    warnings = [ln for ln in validated.stdout.splitlines() if ln.startswith("  warning: ")]
    assert warnings and "names no branch" in warnings[0]
    res = invoke("inspect", src)
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert f"Problems (as validate finds them): {len(warnings)}" in lines
    assert all(w in lines for w in warnings)
    as_json = json.loads(invoke("inspect", src, "--json").stdout)
    assert as_json["problems"] == json.loads(invoke("validate", src, "--json").stdout)[str(src)]["problems"]
    assert "Problems (as validate finds them): none" in invoke("inspect", EXPORT).stdout


def test_view_of_a_manifest_being_written_reads_its_complete_lines(tmp_path):
    out = tmp_path / "b"
    res = invoke("batch", *CONTINUITY_FILES[:3], "-o", out, "--to", "asif", "-j", "0", "-q")
    assert res.exit_code == 0, res.output
    manifest = out / "manifest.jsonl"
    lines = manifest.read_bytes().splitlines(keepends=True)
    manifest.write_bytes(b"".join(lines[:2]) + lines[2][:40])  # the third line half written
    page = tmp_path / "r.html"
    res = invoke("view", manifest, "-o", page)
    assert res.exit_code == 0, res.output
    assert res.stderr.startswith(f"{page}: 2 files, 0 failed")
    res = invoke("view", "-", "-o", page, input=manifest.read_bytes())
    assert res.exit_code == 0 and "2 files" in res.stderr
    manifest.write_bytes(lines[0] + lines[1][:40] + b"\n" + lines[2])  # a broken line that ended: an error
    res = invoke("view", manifest, "-o", page)
    assert res.exit_code == 1 and "line 2 is not a file record" in res.stderr
