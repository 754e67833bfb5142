"""Batch migration: discovery, safe output paths, the manifest, resume, interruption, exit codes,
and scale-out on any concurrent.futures executor (Dask included)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import pytest
from typer.testing import CliRunner

from asif_convert import Limits, Options, convert
from asif_convert import batch as core
from asif_convert._cli.app import app
from asif_convert._cli.common import sigterm_interrupts
from asif_convert.batch import Manifest, discover, migrate, output_path, read_manifest
from asif_convert.batch import _scheduler as scheduler_module
from asif_convert.batch import _worker as worker_module

from .conftest import CONTINUITY_FILES

runner = CliRunner()
BROKEN = {
    "broken/not-json.json": b"{ this is not json",
    "broken/unknown-format.json": b'{"hello": "world"}\n',
    "broken/empty.json": b"",
    "broken/bad-export.json": b'{"format": "agent-continuity-export", "session": 7}\n',
}


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def make_tree(root: Path, *, broken: bool = False, copies: int = 1) -> list[Path]:
    """The corpus exports under root/good (copies times, in sub folders), plus broken files."""
    files = []
    for c in range(copies):
        sub = root / "good" / (f"copy{c:02d}" if copies > 1 else "")
        sub.mkdir(parents=True, exist_ok=True)
        for src in CONTINUITY_FILES:
            dst = sub / src.name
            data = src.read_bytes()
            if c:  # a distinct document per copy: another session id
                doc = json.loads(data)
                sid = doc["session"]["session_id"]
                data = data.replace(json.dumps(sid).encode(), json.dumps(f"{sid}-copy{c}").encode())
            dst.write_bytes(data)
            files.append(dst)
    if broken:
        for rel, data in BROKEN.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_bytes(data)
    (root / "good" / "README.md").write_text("not an export, and not *.json: never picked up\n")
    return files


def tree_bytes(outdir: Path) -> dict[str, bytes]:
    """Every output under outdir (not the manifest), by relative path."""
    return {p.relative_to(outdir).as_posix(): p.read_bytes() for p in sorted(outdir.rglob("*"))
            if p.is_file() and p.name != core.MANIFEST_NAME}


def no_temp_files(outdir: Path) -> bool:
    return not [p for p in outdir.rglob("*") if p.name.endswith(".tmp")]


# ---------------------------------------------------------------------------------------------
# CLI: the acceptance scenario


def test_batch_converts_the_good_reports_the_broken_and_exits_1(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    good = make_tree(src, broken=True)
    res = invoke("batch", src, "-o", out, "--to", "asif", "--workers", "2")
    assert res.exit_code == 1, res.output

    # every good file converted, mirrored under OUTDIR, byte for byte what `convert` gives
    outputs = tree_bytes(out)
    assert set(outputs) == {f"good/{p.stem}.asif.json" for p in good}
    for p in good:
        assert outputs[f"good/{p.stem}.asif.json"] == convert(p.read_bytes(), to="asif").output

    # the manifest has one line per file, the broken ones with their reasons
    lines = read_manifest(out / core.MANIFEST_NAME)
    by_input = {Path(r.input).relative_to(src).as_posix(): r for r in lines}
    assert set(by_input) == {f"good/{p.name}" for p in good} | set(BROKEN)
    for rel in BROKEN:
        rec = by_input[rel]
        assert rec.status == "invalid" and rec.error and rec.problems, rec
        assert rec.output is not None and rec.output_bytes is None
    assert "not valid JSON" in by_input["broken/not-json.json"].error
    assert "not a document of any installed format" in by_input["broken/unknown-format.json"].error
    assert by_input["broken/empty.json"].problems[0]["rule"] == "json"
    assert by_input["broken/bad-export.json"].problems[0]["rule"] == "schema"
    ok = [r for r in lines if r.status == "ok"]
    for rec in ok:
        assert rec.source_format == "continuity" and rec.target_format == "asif"
        assert rec.input_bytes > 0 and rec.output_bytes == (out / rec.output).stat().st_size
        assert len(rec.input_sha256) == 64 and rec.losses and rec.seconds["total"] > 0
    # the summary: counts, top loss kinds, slowest files, failures
    assert "converted" in res.stdout and "invalid input" in res.stdout
    assert "Top loss kinds" in res.stdout and "Slowest files" in res.stdout and "Failures" in res.stdout
    assert "not-json.json" in res.stdout
    assert no_temp_files(out)


def test_all_good_exits_0_and_plain_progress(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    make_tree(src)
    res = invoke("batch", src / "good", "-o", out, "--to", "asif", "-j", "1")
    assert res.exit_code == 0, res.output
    assert f"batch: {len(CONTINUITY_FILES)} files" in res.stderr  # not a terminal: plain lines
    assert len(tree_bytes(out)) == len(CONTINUITY_FILES)


def test_quiet_prints_nothing(tmp_path):
    out = tmp_path / "out"
    res = invoke("batch", CONTINUITY_FILES[0], "-o", out, "--to", "asif", "--quiet", "-j", "0")
    assert res.exit_code == 0 and res.stdout == "" and res.stderr == ""
    assert (out / f"{CONTINUITY_FILES[0].stem}.asif.json").exists()


def test_no_resume_redoes_every_file_and_force_is_its_old_name(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    files = make_tree(src)
    assert invoke("batch", src, "-o", out, "--to", "asif", "-j", "0", "-q").exit_code == 0
    again = invoke("batch", src, "-o", out, "--to", "asif", "-j", "0", "-q", "--report", tmp_path / "r.json")
    assert json.loads((tmp_path / "r.json").read_bytes())["counts"]["unchanged"] == len(files)
    for flag, note in (("--no-resume", False), ("--force", True)):
        res = invoke("batch", src, "-o", out, "--to", "asif", "-j", "0", "-q", flag, "--report", tmp_path / "r.json")
        assert res.exit_code == 0, res.output
        assert json.loads((tmp_path / "r.json").read_bytes())["counts"]["ok"] == len(files)
        assert ("batch --force is now --no-resume" in res.stderr) is False  # (-q: nothing but errors)
        told = invoke("batch", src, "-o", out, "--to", "asif", "-j", "0", flag)
        assert ("batch --force is now --no-resume" in told.stderr) is note
    assert again.exit_code == 0
    assert "--no-resume" in invoke("batch", "--help").stdout and "--force" not in invoke("batch", "--help").stdout


def test_batch_report_is_a_json_of_the_run(tmp_path):
    src, out, report = tmp_path / "src", tmp_path / "out", tmp_path / "run.json"
    files = make_tree(src, broken=True)
    res = invoke("batch", src, "-o", out, "--to", "asif", "-j", "0", "--report", report)
    assert res.exit_code == 1
    run = json.loads(report.read_bytes())
    assert run["files"] == len(files) + len(BROKEN) and run["exit_code"] == 1 and run["interrupted"] is False
    assert run["counts"]["ok"] == len(files) and run["counts"]["invalid"] == run["failed"] == len(BROKEN)
    assert {Path(f["input"]).name for f in run["failures"]} == {Path(rel).name for rel in BROKEN}
    lines = read_manifest(out / core.MANIFEST_NAME)
    assert run["loss_counts"] == dict(sum((Counter(r.losses) for r in lines), Counter()))
    assert run["manifest"] == str(out / core.MANIFEST_NAME) and run["not_reached"] == 0
    assert "Batch summary" in res.stdout
    on_stdout = invoke("batch", src, "-o", out, "--to", "asif", "-j", "0", "--report", "-")
    assert json.loads(on_stdout.stdout)["counts"]["unchanged"] == len(files)  # the summary went to stderr
    assert "Batch summary" in on_stdout.stderr


@pytest.mark.parametrize("sources", [["empty"], ["empty", "docs"]])  # (a glob matching nothing: an error of its own)
def test_a_batch_that_matched_nothing_says_so_and_exits_1(tmp_path, monkeypatch, sources):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty").mkdir()
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "notes.md").write_text("not an export\n")
    res = invoke("batch", *sources, "-o", "out", "--to", "asif", "-j", "0", "-q")
    assert res.exit_code == 1, res.output
    assert res.stderr == f"error: no file matched {', '.join(sources)} (in folders: files named *.json or " \
                         "*.jsonl, see --pattern); nothing to do\n"


def test_the_failure_table_keeps_whole_names_when_not_on_a_terminal(tmp_path, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    deep = tmp_path / "src" / ("a-folder-with-a-name-long-enough-to-matter-" * 3) / "and-deeper-still"
    deep.mkdir(parents=True)
    bad = deep / "an-export-whose-name-is-long-as-well.json"
    bad.write_text('{"format": "agent-continuity-export", "session": 7}')
    shutil.copy(CONTINUITY_FILES[0], deep / "a-good-export-with-a-long-name-too.json")
    res = invoke("batch", tmp_path / "src", "-o", tmp_path / "out", "--to", "asif", "-j", "0")
    assert res.exit_code == 1
    assert len(str(bad)) > 160 and "…" not in res.stdout
    failure = next(ln for ln in res.stdout.splitlines() if bad.name in ln)
    assert str(bad) in failure and " invalid " in failure
    assert any(str(deep / "a-good-export-with-a-long-name-too.json") in ln for ln in res.stdout.splitlines())


def _record(size: int) -> core.FileResult:
    return core.FileResult(input="f.json", output="f.asif.json", status="ok", target_format="asif", input_bytes=size)


def test_terminal_progress_counts_files_with_the_bytes_beside_and_no_absurd_rate():
    """A small file, then a large one ending a millisecond later (converting since the start):
    rich's own rate, over the last instants, said a terabyte a second."""
    from io import StringIO

    from rich.console import Console

    from asif_convert._cli.batch import TerminalProgress

    clock = [0.0]
    screen = StringIO()
    console = Console(file=screen, force_terminal=True, width=200, color_system=None, get_time=lambda: clock[0])
    progress = TerminalProgress(console)
    progress.start(3, 10**9 + 1000, 2)
    clock[0] = 5.0
    progress.advance(_record(1000))
    clock[0] = 5.001
    progress.advance(_record(10**9))
    progress.bar.refresh()
    progress.stop()
    last = [ln for ln in screen.getvalue().splitlines() if "files" in ln][-1]
    assert "2/3 files" in last and "(1000.0 MB of 1000.0 MB read, 200.0 MB/s)" in last, last
    assert not re.search(r"[GT]B/s", screen.getvalue())


def test_plain_progress_counts_files_with_the_bytes_beside():
    from asif_convert._cli.batch import PlainProgress

    progress = PlainProgress()
    progress.start(2, 10**9 + 1000, 2)
    progress.advance(_record(10**9))
    assert progress.line(5.0) == ("batch: 1/2 files (50%), 0.2 files/s (1000.0 MB of 1000.0 MB read, 200.0 MB/s), "
                                  "ETA 00:00:05, 0 failed")
    assert progress.line(0.01) == "batch: 1/2 files (50%) (1000.0 MB of 1000.0 MB read), 0 failed"


def test_internal_error_exits_3(tmp_path, monkeypatch):
    real = worker_module.convert

    def flaky(data, **kw):
        if kw["name"].endswith(CONTINUITY_FILES[1].name):
            raise RuntimeError("boom")
        return real(data, **kw)

    monkeypatch.setattr(worker_module, "convert", flaky)
    src, out = tmp_path / "src", tmp_path / "out"
    make_tree(src, broken=True)
    res = invoke("batch", src, "-o", out, "--to", "asif", "--workers", "0")  # in process: the patch applies
    assert res.exit_code == 3, res.output
    rec = next(r for r in read_manifest(out / core.MANIFEST_NAME) if r.status == "internal")
    assert rec.error == "RuntimeError: boom" and rec.input.endswith(CONTINUITY_FILES[1].name)
    assert not (out / "good" / f"{CONTINUITY_FILES[1].stem}.asif.json").exists()


def test_loss_policy_refusals_exit_4_and_are_redone_without_it(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    files = make_tree(src)
    res = invoke("batch", src, "-o", out, "--to", "asif", "-j", "0", "--on-loss", "error")
    assert res.exit_code == 4, res.output
    recs = read_manifest(out / core.MANIFEST_NAME)
    refused = [r for r in recs if r.status == "policy"]
    assert refused and all("refused by the loss policy" in r.error for r in refused)
    assert not any((out / r.output).exists() for r in refused)
    assert "refused by the loss policy" in res.stdout
    res = invoke("batch", src, "-o", out, "--to", "asif", "-j", "0")  # other settings: all redone
    assert res.exit_code == 0, res.output
    assert {r.status for r in read_manifest(out / core.MANIFEST_NAME)} == {"ok"}
    assert len(tree_bytes(out)) == len(files)


def test_an_unwritable_output_is_reported_and_the_rest_converted(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    files = make_tree(src)
    (out / "good" / f"{files[0].stem}.asif.json").mkdir(parents=True)  # a folder in the way
    report = migrate([src], out, to="asif", workers=0)
    bad = [r for r in report.results if r.status != "ok"]
    assert [(Path(r.input).name, r.status) for r in bad] == [(files[0].name, "unwritable")]
    assert "cannot write" in bad[0].error and report.exit_code == 1
    assert report.summary.counts["ok"] == len(files) - 1 and no_temp_files(out)


def test_usage_and_missing_sources(tmp_path):
    out = tmp_path / "out"
    res = invoke("batch", CONTINUITY_FILES[0], "-o", out, "--to", "nope")
    assert res.exit_code == 2 and "unknown format" in res.stderr
    res = invoke("batch", tmp_path / "missing.json", "-o", out, "--to", "asif")
    assert res.exit_code == 1 and "no such file" in res.stderr
    res = invoke("batch", str(tmp_path / "nothing-*.json"), "-o", out, "--to", "asif")
    assert res.exit_code == 1 and "no file matches" in res.stderr
    src = tmp_path / "out" / "src"  # a source inside OUTDIR would mix inputs and outputs
    make_tree(src)
    res = invoke("batch", src, "-o", out, "--to", "asif")
    assert res.exit_code == 2 and "inside OUTDIR" in res.stderr
    assert not list(out.rglob("*.asif.json"))


def _obstacle(path: Path, kind: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "folder":
        path.mkdir()
    elif kind == "link":
        (path.parent / "elsewhere").write_bytes(b"")
        path.symlink_to(path.parent / "elsewhere")
    else:
        os.mkfifo(path)


@pytest.mark.parametrize("kind", ["folder", "link", "pipe"])
@pytest.mark.parametrize("which", ["manifest", "lock"])
def test_a_manifest_or_lock_that_is_not_a_regular_file_stops_the_batch_before_it_starts(tmp_path, which, kind):
    """Planted at OUTDIR/manifest.jsonl or OUTDIR/.asif-convert.lock (they were exit 3, and a
    planted link made the manifest be written outside OUTDIR): exit 2, the path, nothing written."""
    out = tmp_path / "out"
    _obstacle(out / (core.MANIFEST_NAME if which == "manifest" else ".asif-convert.lock"), kind)
    res = invoke("batch", CONTINUITY_FILES[0], "-o", out, "--to", "asif")
    assert res.exit_code == 2 and str(out) in res.stderr, res.stderr
    assert not list(out.rglob("*.asif.json"))
    if kind == "link":
        assert (out / "elsewhere").read_bytes() == b""  # never written through the link


@pytest.mark.parametrize("manifest", ["{out}", "{tmp}/missing/m.jsonl", "/dev/zero"])
def test_a_manifest_path_a_batch_cannot_use_is_a_usage_error(tmp_path, manifest):
    """A folder, a path in no folder, a device (read to its end on resume): exit 2 naming it."""
    out = tmp_path / "out"
    out.mkdir()
    path = manifest.format(out=out, tmp=tmp_path)
    res = invoke("batch", CONTINUITY_FILES[0], "-o", out, "--to", "asif", "--manifest", path)
    assert res.exit_code == 2 and path in res.stderr, res.stderr


@pytest.mark.parametrize("package", [False, True])
def test_a_manifest_an_output_would_replace_is_refused_before_anything_is_written(tmp_path, package):
    """--manifest naming OUTDIR/x.asif.json while src/x.json converts there: the conversion
    replaced the manifest with its output, and the next run refused the manifest. Exit 2 naming
    both, nothing written; a manifest beside the outputs under a name none takes works."""
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(CONTINUITY_FILES[0], src / "a.json")
    out = tmp_path / "out"
    taken = out / ("a.asif.zip" if package else "a.asif.json")
    flags = ["--package"] if package else []
    res = invoke("batch", src, "-o", out, "--to", "asif", "-j", "0", "--manifest", taken, *flags)
    assert res.exit_code == 2 and str(taken) in res.stderr and str(src / "a.json") in res.stderr, res.stderr
    assert not out.exists()  # not even OUTDIR was made
    free = out / ("b.asif.zip" if package else "b.asif.json")
    res = invoke("batch", src, "-o", out, "--to", "asif", "-j", "0", "--manifest", free, *flags)
    assert res.exit_code == 0, res.stderr
    assert [rec.status for rec in read_manifest(free)] == ["ok"]


def test_workers_are_bounded(tmp_path):
    """(2^31 workers were exit 3: the operating system's semaphore cannot count them.)"""
    res = invoke("batch", CONTINUITY_FILES[0], "-o", tmp_path / "out", "--to", "asif", "-j", "2147483647")
    assert res.exit_code == 2 and f"to {core.MAX_WORKERS}" in res.stderr
    with pytest.raises(core.UsageError, match=f"to {core.MAX_WORKERS}"):
        migrate(CONTINUITY_FILES[0], tmp_path / "out", workers=core.MAX_WORKERS + 1)


def test_to_continuity_and_back(tmp_path):
    src = tmp_path / "src"
    make_tree(src)
    res = invoke("batch", src / "good", "-o", tmp_path / "asif", "--to", "asif", "-j", "1", "-q")
    assert res.exit_code == 0
    res = invoke("batch", tmp_path / "asif", "-o", tmp_path / "back", "--to", "continuity", "-j", "1", "-q")
    assert res.exit_code == 0, res.output
    for p in CONTINUITY_FILES:  # x.json -> x.asif.json -> x.continuity.json, the export exactly
        back = json.loads((tmp_path / "back" / f"{p.stem}.continuity.json").read_bytes())
        assert back == json.loads(p.read_bytes())


# ---------------------------------------------------------------------------------------------
# Resume and interruption


def test_rerun_skips_unchanged_and_redoes_changed(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    files = make_tree(src)
    first = migrate([src], out, to="asif", workers=0)
    assert first.summary.counts["ok"] == len(files)
    manifest = (out / core.MANIFEST_NAME).read_bytes()

    again = migrate([src], out, to="asif", workers=0)
    assert again.summary.counts == {"unchanged": len(files)}
    assert (out / core.MANIFEST_NAME).read_bytes() == manifest  # nothing to record

    # a changed input, a deleted output and a truncated output are redone; nothing else
    files[0].write_bytes(files[0].read_bytes() + b"\n")  # same document, other bytes
    (out / "good" / f"{files[1].stem}.asif.json").unlink()
    (out / "good" / f"{files[2].stem}.asif.json").write_bytes(b"{")
    third = migrate([src], out, to="asif", workers=0)
    redone = {Path(r.input).name for r in third.results if r.status == "ok"}
    assert redone == {files[0].name, files[1].name, files[2].name}
    assert third.summary.counts["unchanged"] == len(files) - 3
    lines = read_manifest(out / core.MANIFEST_NAME)
    assert len(lines) == len(files) and len({r.output for r in lines}) == len(files)  # compacted

    # other settings redo all; --force too
    assert migrate([src], out, to="asif", workers=0, compact=True).summary.counts["ok"] == len(files)
    assert migrate([src], out, to="asif", workers=0, compact=True, force=True).summary.counts["ok"] == len(files)


class StopAfter(Executor):
    """Runs tasks in this process and raises KeyboardInterrupt (a simulated Ctrl-C) at the
    ``n``-th submission; tasks already submitted complete, as they would in worker processes."""

    def __init__(self, n: int) -> None:
        self.n, self.submitted = n, 0

    def submit(self, fn, /, *args, **kwargs):
        self.submitted += 1
        if self.submitted > self.n:
            raise KeyboardInterrupt
        fut: Future = Future()
        fut.set_result(fn(*args, **kwargs))
        return fut


def test_interrupted_run_resumes_to_a_clean_runs_bytes(tmp_path):
    src = tmp_path / "src"
    files = make_tree(src, broken=True, copies=3)
    n_inputs = len(files) + len(BROKEN)
    clean = tmp_path / "clean"
    assert migrate([src], clean, to="asif", workers=0).exit_code == 1

    out = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt):
        migrate([src], out, to="asif", executor=StopAfter(10), chunk_size=1)
    lines = read_manifest(out / core.MANIFEST_NAME)  # valid JSON lines, one per finished file
    assert len(lines) == 10 and no_temp_files(out)
    assert set(tree_bytes(out)) == {r.output for r in lines if r.status == "ok"}

    seen = []
    rerun = migrate([src], out, to="asif", executor=ThreadPoolExecutor(2), on_result=seen.append)
    done_before = sum(r.status == "ok" for r in lines)
    assert rerun.summary.counts["unchanged"] == done_before
    # only the remaining files were converted (failed ones are always retried)
    assert rerun.summary.counts["ok"] + rerun.summary.counts["invalid"] == n_inputs - done_before
    assert tree_bytes(out) == tree_bytes(clean)
    assert {r.output: r.status for r in read_manifest(out / core.MANIFEST_NAME)} == \
           {r.output: r.status for r in read_manifest(clean / core.MANIFEST_NAME)}


def test_cli_ctrl_c_stops_cleanly_with_exit_130(tmp_path, monkeypatch):
    monkeypatch.setattr(scheduler_module, "local_executor", lambda workers, stop=None: StopAfter(3))
    src, out = tmp_path / "src", tmp_path / "out"
    make_tree(src)
    res = invoke("batch", src, "-o", out, "--to", "asif", "-j", "2")
    assert res.exit_code == 130
    assert "Batch interrupted" in res.stdout and "run the same command again" in res.stdout
    assert "not reached" in res.stdout
    assert len(read_manifest(out / core.MANIFEST_NAME)) == 3  # one file per task for so few files


class StopAtShutdown(ThreadPoolExecutor):
    """Every file converted, then Ctrl-C as the pool shuts down: after the last file."""

    def shutdown(self, wait=True, *, cancel_futures=False):
        super().shutdown(wait=wait, cancel_futures=cancel_futures)
        raise KeyboardInterrupt


@pytest.mark.parametrize("quiet", [False, True])
def test_an_interrupt_after_the_last_file_does_not_say_files_remain(tmp_path, monkeypatch, quiet):
    monkeypatch.setattr(scheduler_module, "local_executor", lambda workers, stop=None: StopAtShutdown(2))
    src, out = tmp_path / "src", tmp_path / "out"
    files = make_tree(src)
    res = invoke("batch", src, "-o", out, "--to", "asif", "-j", "2", "--report", tmp_path / "run.json",
                 *(["-q"] if quiet else []))
    assert res.exit_code == 130
    assert len(read_manifest(out / core.MANIFEST_NAME)) == len(files)
    run = json.loads((tmp_path / "run.json").read_bytes())
    assert run["interrupted"] is True and run["not_reached"] == 0 and run["exit_code"] == 130
    said = res.stderr if quiet else res.stdout
    assert "interrupted after the last file: every file was reached, none remains to convert" in said
    assert "run the same command again" not in said and "not reached" not in said


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="POSIX only")
def test_killed_batch_resumes_only_the_remaining_files(tmp_path):
    """A real `kill -9` of the CLI midway: no half-written outputs, a valid manifest, and a rerun
    that converts only what is left and ends with the same bytes as a clean run."""
    src = tmp_path / "src"
    files = make_tree(src, copies=20)  # a few hundred files: long enough to be killed midway
    clean = tmp_path / "clean"
    assert migrate([src], clean, to="asif", workers=2).exit_code == 0

    out = tmp_path / "out"
    manifest = out / core.MANIFEST_NAME
    cmd = [sys.executable, "-c", "from asif_convert._cli.app import run; run()", "batch", str(src), "-o", str(out),
           "--to", "asif", "-j", "1", "-q"]
    proc = subprocess.Popen(cmd, start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if manifest.exists() and manifest.read_bytes().count(b"\n") >= 20:
            break
        time.sleep(0.005)
    assert proc.poll() is None, "the batch finished before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)  # the CLI, its fork server and its worker: the group it leads
    proc.wait()

    after_kill = read_manifest(manifest)
    done = sum(r.status == "ok" for r in after_kill)
    assert 20 <= done < len(files)
    rerun = migrate([src], out, to="asif", workers=1)
    assert rerun.summary.counts["unchanged"] == done
    assert rerun.summary.counts["ok"] == len(files) - done
    assert tree_bytes(out) == tree_bytes(clean)
    assert no_temp_files(out)
    assert len(read_manifest(manifest)) == len(files)


def test_torn_manifest_line_is_ignored(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    files = make_tree(src)
    migrate([src], out, to="asif", workers=0)
    manifest = out / core.MANIFEST_NAME
    lines = manifest.read_bytes().splitlines(keepends=True)
    manifest.write_bytes(b"".join(lines[:-1]) + lines[-1][:40])  # a crash mid-line
    rerun = migrate([src], out, to="asif", workers=0)
    assert rerun.summary.counts == {"unchanged": len(files) - 1, "ok": 1}
    assert len(read_manifest(manifest)) == len(files)


def test_a_file_that_is_not_a_manifest_is_left_alone(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    with pytest.raises(ValueError, match="not an asif-convert manifest"):
        Manifest(notes)
    assert notes.read_text() == "my notes\n"


def test_stale_temp_files_are_cleaned(tmp_path):
    out = tmp_path / "out"
    (out / "sub").mkdir(parents=True)
    stale = out / "sub" / ".x.asif.json.ab12cd34.tmp"
    stale.write_bytes(b"{half")
    keep = out / "sub" / ".notes.tmp"
    keep.write_bytes(b"mine")
    migrate([CONTINUITY_FILES[0]], out, to="asif", workers=0)
    assert not stale.exists() and keep.exists()


# ---------------------------------------------------------------------------------------------
# Discovery and output paths: documents are data


def test_output_paths_mirror_and_cannot_escape():
    assert output_path(("a", "b", "x.json"), "asif") == "a/b/x.asif.json"
    assert output_path(("x.asif.json",), "continuity") == "x.continuity.json"
    assert output_path(("x.continuity.json",), "asif") == "x.asif.json"
    assert output_path(("noext",), "asif") == "noext.asif.json"
    for bad in (("..", "x.json"), ("a", "..", "..", "x.json"), (".", "x.json"), ("a/b.json",), ("a\\..\\b",),
                ("", "x.json"), ("x\x00.json",), ()):
        with pytest.raises(ValueError):
            output_path(bad, "asif")


def test_symlinks_out_of_the_roots_are_refused(tmp_path):
    src, out, outside = tmp_path / "src", tmp_path / "out", tmp_path / "secret"
    make_tree(src)
    outside.mkdir()
    (outside / "private.json").write_bytes(CONTINUITY_FILES[0].read_bytes())
    (src / "good" / "leak.json").symlink_to(outside / "private.json")
    (src / "good" / "leakdir").symlink_to(outside, target_is_directory=True)
    (src / "good" / "alias.json").symlink_to(src / "good" / CONTINUITY_FILES[0].name)  # inside: fine
    (src / "good" / "dangling.json").symlink_to(tmp_path / "gone.json")
    (src / "good" / "loop").symlink_to(src / "good", target_is_directory=True)

    res = invoke("batch", src, "-o", out, "--to", "asif", "-j", "0")
    assert res.exit_code == 1, res.output
    recs = {Path(r.input).name: r for r in read_manifest(out / core.MANIFEST_NAME)}
    assert recs["leak.json"].status == "refused" and "outside the source roots" in recs["leak.json"].error
    assert recs["leakdir"].status == "refused" and "outside the source roots" in recs["leakdir"].error
    assert recs["dangling.json"].status == "refused" and "broken symlink" in recs["dangling.json"].error
    assert recs["loop"].status == "refused" and "loop" in recs["loop"].error
    assert recs["alias.json"].status == "ok"
    assert not (out / "good" / "leak.asif.json").exists() and not (out / "good" / "leakdir").exists()
    assert "refused" in res.stdout


def test_a_named_symlink_is_taken_as_given(tmp_path):
    link = tmp_path / "named.json"
    link.symlink_to(CONTINUITY_FILES[0])
    report = migrate([link], tmp_path / "out", to="asif", workers=0)
    assert [r.status for r in report.results] == ["ok"]


def test_never_writes_through_a_symlink_out_of_outdir(tmp_path):
    src, out, elsewhere = tmp_path / "src", tmp_path / "out", tmp_path / "elsewhere"
    make_tree(src)
    out.mkdir()
    elsewhere.mkdir()
    (out / "good").symlink_to(elsewhere, target_is_directory=True)  # planted in OUTDIR
    report = migrate([src], out, to="asif", workers=0)
    assert report.exit_code == 1
    assert {r.status for r in report.results} == {"refused"}
    assert "outside OUTDIR" in report.results[0].error
    assert list(elsewhere.iterdir()) == []


def test_globs_hidden_files_and_patterns(tmp_path):
    src = tmp_path / "src"
    make_tree(src, copies=2)
    (src / "good" / ".hidden.json").write_bytes(CONTINUITY_FILES[0].read_bytes())
    items = list(discover([str(src / "good" / "*")]))  # matched folders are walked; matched files taken as given
    assert {i.rel for i in items} == {(f"copy{c:02d}", p.name) for c in range(2) for p in CONTINUITY_FILES} | \
           {("README.md",)}
    items = list(discover([str(src / "**" / "0*.json")]))
    assert items and all(i.rel[-1].startswith("0") and i.rel[0] == "good" for i in items)
    rels = [i.rel for i in discover([src])]
    assert rels == sorted(rels) and not any(".hidden.json" in r for r in rels)
    assert not any(r[-1] == "README.md" for r in rels)
    assert any(r[-1] == "README.md" for r in (i.rel for i in discover([src], pattern="*")))


def test_two_inputs_for_one_output_are_refused(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.json").write_bytes(CONTINUITY_FILES[0].read_bytes())
    (src / "a.continuity.json").write_bytes(CONTINUITY_FILES[1].read_bytes())
    report = migrate([src], tmp_path / "out", to="asif", workers=0)
    by_name = {Path(r.input).name: r for r in report.results}
    assert by_name["a.continuity.json"].status == "ok"  # sorted first
    assert by_name["a.json"].status == "refused" and "already the output of" in by_name["a.json"].error
    assert report.exit_code == 1
    twice = migrate([src / "a.json", src / "a.json"], tmp_path / "twice", to="asif", workers=0)
    assert [r.status for r in twice.results] == ["ok"]  # the same file named twice is converted once


# ---------------------------------------------------------------------------------------------
# Library: any executor, bounded submission


class Counting(Executor):
    """Wraps an executor and records the most tasks ever in flight at once."""

    def __init__(self, inner: Executor) -> None:
        self.inner, self.in_flight, self.peak, self.tasks = inner, 0, 0, 0

    def submit(self, fn, /, *args, **kwargs):
        self.in_flight += 1
        self.tasks += 1
        self.peak = max(self.peak, self.in_flight)
        fut = self.inner.submit(fn, *args, **kwargs)
        fut.add_done_callback(lambda _: setattr(self, "in_flight", self.in_flight - 1))
        return fut


def test_submission_window_is_bounded(tmp_path):
    src = tmp_path / "src"
    files = make_tree(src, copies=6)
    with ThreadPoolExecutor(2) as pool:
        ex = Counting(pool)
        report = migrate([src], tmp_path / "out", to="asif", executor=ex, max_in_flight=3, chunk_size=2,
                         keep_results=False)
    assert report.summary.counts["ok"] == len(files) and report.results == []
    assert ex.tasks == len(files) // 2 and ex.peak <= 3


def test_a_dying_worker_fails_only_the_file_that_killed_it(tmp_path, monkeypatch):
    """A worker process that dies (killed, out of memory) breaks the pool and every task on it: a
    new pool takes over, each of their files gets one more try on its own, and only the files
    that kill a worker by themselves are recorded as failed. A rerun redoes just those."""
    real = worker_module.convert

    def dying(data, **kw):
        if kw["name"].endswith(CONTINUITY_FILES[3].name):
            os._exit(9)
        return real(data, **kw)

    monkeypatch.setattr(worker_module, "convert", dying)  # workers are forked: they inherit the patch
    src, out = tmp_path / "src", tmp_path / "out"
    files = make_tree(src, copies=2)
    report = migrate([src], out, to="asif", workers=2, chunk_size=4)
    dead = [r for r in report.results if r.status == "internal"]
    assert report.exit_code == 3
    assert all("worker process died while converting this file" in r.error for r in dead)
    assert sorted(r.output.replace(".asif", "") for r in dead) == [
        f"good/copy{c:02d}/{CONTINUITY_FILES[3].name}" for c in range(2)]
    assert report.summary.counts["ok"] == len(files) - 2
    monkeypatch.setattr(worker_module, "convert", real)
    rerun = migrate([src], out, to="asif", workers=2)
    assert rerun.summary.counts == {"ok": 2, "unchanged": len(files) - 2}


def test_process_pool_matches_in_process(tmp_path):
    src = tmp_path / "src"
    make_tree(src, copies=2)
    a = migrate([src], tmp_path / "a", to="asif", workers=2, options=Options(strict=False))
    b = migrate([src], tmp_path / "b", to="asif", workers=0)
    assert a.exit_code == b.exit_code == 0
    assert tree_bytes(tmp_path / "a") == tree_bytes(tmp_path / "b")
    assert len({r.worker for r in a.results}) >= 1


def test_dask_local_cluster_runs_a_batch(tmp_path):
    """Scale-out: the same call on a Dask cluster, through Client.get_executor()."""
    distributed = pytest.importorskip("distributed")
    src = tmp_path / "src"
    files = make_tree(src, broken=True)
    migrate([src], tmp_path / "local", to="asif", workers=0)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) \
            as cluster, distributed.Client(cluster) as client:
        report = migrate([src], tmp_path / "dask", to="asif", executor=client.get_executor(), chunk_size=4)
    assert report.summary.counts == {"ok": len(files), "invalid": len(BROKEN)}
    assert report.exit_code == 1
    assert tree_bytes(tmp_path / "dask") == tree_bytes(tmp_path / "local")


def test_can_run_from_a_copied_tree_elsewhere(tmp_path):
    """Manifest keys are output paths: a rerun from another working directory still resumes."""
    src = tmp_path / "src"
    make_tree(src)
    out = tmp_path / "out"
    migrate([src], out, to="asif", workers=0)
    moved = tmp_path / "moved"
    shutil.copytree(src, moved)
    cwd = os.getcwd()
    try:
        os.chdir(tmp_path)
        again = migrate(["moved"], out, to="asif", workers=0)
    finally:
        os.chdir(cwd)
    assert set(again.summary.counts) == {"unchanged"}


def test_oversized_input_is_refused_from_its_size(tmp_path, monkeypatch):
    """Workers read through the same size check as the single-file commands."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.json").write_bytes(CONTINUITY_FILES[1].read_bytes())
    report = migrate([src], tmp_path / "out", to="asif", workers=0, limits=Limits(max_bytes=10))
    (result,) = report.results
    assert result.status == "invalid" and "--max-bytes" in result.error
    res = invoke("batch", src, "-o", tmp_path / "cli", "--to", "asif", "-j", "0", "--max-bytes", "10")
    assert res.exit_code == 1
    (line,) = read_manifest(tmp_path / "cli" / core.MANIFEST_NAME)
    assert line.status == "invalid" and "more than the limit of 10 (--max-bytes)" in line.error


# ---------------------------------------------------------------------------------------------
# Killed, terminated and concurrent runs


def _children(pid: int) -> set[int]:
    """The live processes whose parent is ``pid`` (Linux /proc)."""
    out = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                out.add(int(entry.name))
    return out


def _alive(pid: int) -> bool:
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _start_batch(src: Path, out: Path, workers: int = 2) -> subprocess.Popen:
    cmd = [sys.executable, "-c", "from asif_convert._cli.app import run; run()", "batch", str(src), "-o", str(out),
           "--to", "asif", "-j", str(workers), "-q"]
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _wait_for_lines(proc: subprocess.Popen, manifest: Path, lines: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        done = manifest.read_bytes().count(b"\n") if manifest.exists() else 0
        if done >= lines and len(_children(proc.pid)) >= 1:
            return
        time.sleep(0.005)
    raise AssertionError("the batch finished (or never started) before it could be stopped")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc to find the workers")
@pytest.mark.parametrize("after_lines", [0, 15, 60])
def test_kill_9_of_the_parent_leaves_no_worker_and_resume_matches_a_clean_run(tmp_path, after_lines):
    src = tmp_path / "src"
    files = make_tree(src, copies=10)
    clean = tmp_path / "clean"
    assert migrate([src], clean, to="asif", workers=2).exit_code == 0

    out = tmp_path / "out"
    proc = _start_batch(src, out)
    _wait_for_lines(proc, out / core.MANIFEST_NAME, after_lines)
    workers = _children(proc.pid)
    os.kill(proc.pid, signal.SIGKILL)  # the parent alone, as an OOM killer or `kill -9 PID` would
    proc.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_alive(w) for w in workers):
        time.sleep(0.05)
    assert workers and not [w for w in workers if _alive(w)], "workers outlived their parent"

    rerun = migrate([src], out, to="asif", workers=2)
    assert rerun.exit_code == 0
    assert rerun.summary.counts["ok"] + rerun.summary.counts["unchanged"] == len(files)
    assert tree_bytes(out) == tree_bytes(clean)
    assert no_temp_files(out) and not (out / ".asif-convert.lock").exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc to find the workers")
def test_sigterm_stops_a_batch_like_ctrl_c(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    files = make_tree(src, copies=10)
    proc = _start_batch(src, out)
    _wait_for_lines(proc, out / core.MANIFEST_NAME, 10)
    os.kill(proc.pid, signal.SIGTERM)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert b"run the same command again" in stderr and b"Traceback" not in stderr
    lines = read_manifest(out / core.MANIFEST_NAME)
    assert 10 <= len(lines) < len(files) and no_temp_files(out)
    assert migrate([src], out, to="asif", workers=0).summary.counts["unchanged"] == len(lines)


def _signal_pending(pid: int) -> bool:
    """Whether a signal sent to the process ``pid`` still waits for one of its threads to take it."""
    status = (Path("/proc") / str(pid) / "status").read_text()
    return any(int(line.split()[1], 16) for line in status.splitlines() if line.startswith(("ShdPnd:", "SigPnd:")))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc to find the workers")
@pytest.mark.parametrize("stop", ["SIGINT", "SIGTERM"])
def test_no_file_starts_after_the_signal_and_the_summary_counts_what_is_left(tmp_path, stop):
    """A real Ctrl-C (to the process group, as a terminal sends it) or SIGTERM to a real batch on
    its process pool, frozen at the signal so that what had finished can be counted: afterwards
    each worker finishes at most the one file it had in progress, though tasks of several files
    each were queued to the workers; exit 130; the summary counts what is left; a rerun ends
    with the clean run's bytes."""
    src = tmp_path / "src"
    files = make_tree(src, copies=20)  # enough for tasks of several files each
    clean = tmp_path / "clean"
    assert migrate([src], clean, to="asif", workers=2).exit_code == 0
    out = tmp_path / "out"
    manifest = out / core.MANIFEST_NAME
    cmd = [sys.executable, "-c", "from asif_convert._cli.app import run; run()", "batch", str(src), "-o", str(out),
           "--to", "asif", "-j", "2"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    _wait_for_lines(proc, manifest, 10)
    workers = _children(proc.pid)
    os.killpg(proc.pid, signal.SIGSTOP)  # the batch and its workers stand still
    finished = len(list(out.rglob("*.asif.json")))  # outputs are put in place whole: finished files
    if stop == "SIGINT":
        os.killpg(proc.pid, signal.SIGINT)
    else:
        os.kill(proc.pid, signal.SIGTERM)
    os.kill(proc.pid, signal.SIGCONT)  # the batch alone first: it takes the signal while its workers wait
    while _signal_pending(proc.pid):
        time.sleep(0.01)
    time.sleep(0.2)  # (ordering only: the batch's handler runs as soon as its main thread is scheduled)
    os.killpg(proc.pid, signal.SIGCONT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr

    after = len(list(out.rglob("*.asif.json")))
    assert len(workers) == 2 and after - finished <= len(workers), (finished, after)  # nothing new started
    lines = read_manifest(manifest)
    assert len(lines) == after and all(r.status == "ok" for r in lines) and no_temp_files(out)
    text = stdout.decode()
    left = len(files) - after
    assert f"interrupted: {left} files not reached; run the same command again" in text
    assert re.search(rf"not reached\s+{left}\b", text) and b"Traceback" not in stderr
    rerun = migrate([src], out, to="asif", workers=2)
    assert rerun.summary.counts["unchanged"] == after and rerun.summary.counts["ok"] == left
    assert tree_bytes(out) == tree_bytes(clean)


@contextmanager
def stop_handlers():
    """The handlers the command line runs a batch with: Python's own for Ctrl-C (it raises
    KeyboardInterrupt), and one that makes SIGTERM do the same."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with sigterm_interrupts():
            yield
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.fixture
def other_thread():
    """A thread of this process that blocks no signal (as fsspec's, a Dask client's or a
    caller's may), waiting until the test ends."""
    done = threading.Event()
    thread = threading.Thread(target=done.wait, name="takes-signals", daemon=True)
    thread.start()
    yield thread
    done.set()
    thread.join()


def send(sig: int, how: str, other: threading.Thread) -> None:
    """A stop, right here. ``handler``: the handler now installed runs, as Python runs it in the
    main thread at its next bytecode once any thread of the process has taken the signal,
    whatever the main thread blocks. ``signal``: a real signal, to this thread. ``thread``: a real
    signal, taken by ``other``; back here once its C handler has run there (it writes to the
    wakeup fd), so that Python owes this thread the handler from its next bytecode on."""
    if how == "handler":
        handler = signal.getsignal(sig)
        assert callable(handler)
        handler(sig, None)
    elif how == "signal":
        signal.raise_signal(sig)
    else:
        taken, wakeup = os.pipe()
        os.set_blocking(wakeup, False)
        previous = signal.set_wakeup_fd(wakeup)
        try:
            assert other.ident is not None
            signal.pthread_kill(other.ident, sig)
            os.read(taken, 1)
        finally:
            signal.set_wakeup_fd(previous)
            os.close(taken)
            os.close(wakeup)


def assert_every_output_is_recorded(out: Path, summary: core.Summary) -> list[core.FileResult]:
    outputs = set(tree_bytes(out))
    lines = read_manifest(out / core.MANIFEST_NAME)
    assert summary.interrupted and no_temp_files(out)
    assert {r.output for r in lines} == outputs and all(r.status == "ok" for r in lines)
    assert len(lines) == len(outputs) == summary.done  # none lost, none counted twice
    return lines


HOW = ["handler", "signal", pytest.param("thread", marks=pytest.mark.skipif(
    not hasattr(signal, "pthread_kill"), reason="a signal to one thread is POSIX"))]


@pytest.mark.parametrize("workers", [0, 2])
@pytest.mark.parametrize("how", HOW)
@pytest.mark.parametrize("stop", ["SIGINT", "SIGTERM"])
def test_a_stop_while_a_task_is_recorded_loses_none_of_its_files(tmp_path, other_thread, workers, how, stop):
    """Ctrl-C or SIGTERM at the moment the first of a task's four files is recorded: every output
    in OUTDIR has its manifest line and is counted (the task's other three too), the run stops,
    and a rerun converts exactly the files that have no output."""
    src, out = tmp_path / "src", tmp_path / "out"
    files = make_tree(src, copies=2)
    sig = getattr(signal, stop)
    sent = []

    def stop_at_first_result(rec):
        if not sent:
            sent.append(rec)
            send(sig, how, other_thread)

    summary = core.Summary()
    with stop_handlers(), pytest.raises(KeyboardInterrupt):
        migrate([src], out, to="asif", workers=workers, chunk_size=4, on_result=stop_at_first_result,
                summary=summary)
    lines = assert_every_output_is_recorded(out, summary)
    assert 4 <= len(lines) < len(files)
    if workers == 0:  # the two tasks converted as they were submitted, before the first was recorded
        assert len(lines) == 8
    rerun = migrate([src], out, to="asif", workers=workers)
    assert rerun.summary.counts == {"unchanged": len(lines), "ok": len(files) - len(lines)}


@pytest.mark.parametrize("how", HOW)
def test_in_this_process_a_stop_lets_the_file_in_progress_finish_and_starts_no_other(tmp_path, monkeypatch,
                                                                                    other_thread, how):
    """``workers=0`` converts in the batch's own process: Ctrl-C while the third file converts
    lets it finish and be recorded, and no other file starts."""
    src, out = tmp_path / "src", tmp_path / "out"
    make_tree(src, copies=2)
    converted = []

    def convert_then_stop(spec, task):
        converted.append(task)
        if len(converted) == 3:
            send(signal.SIGINT, how, other_thread)
        return real(spec, task)

    real = worker_module.convert_file
    monkeypatch.setattr(worker_module, "convert_file", convert_then_stop)
    summary = core.Summary()
    with stop_handlers(), pytest.raises(KeyboardInterrupt):
        migrate([src], out, to="asif", workers=0, summary=summary)
    assert len(converted) == 3 and len(assert_every_output_is_recorded(out, summary)) == 3


@pytest.mark.parametrize("workers", [0, 2])
def test_a_signal_whose_handler_does_not_stop_the_run_skips_no_file(tmp_path, other_thread, workers):
    """A caller's Ctrl-C handler that only takes note: held while a task is recorded, it runs
    once, and the run, which it did not stop, converts every file."""
    src, out = tmp_path / "src", tmp_path / "out"
    files = make_tree(src, copies=2)
    sent, noted = [], []

    def stop_at_first_result(rec):
        if not sent:
            sent.append(rec)
            send(signal.SIGINT, "signal", other_thread)
            assert not noted  # held: the task is being recorded

    previous = signal.signal(signal.SIGINT, lambda sig, frame: noted.append(sig))
    try:
        report = migrate([src], out, to="asif", workers=workers, chunk_size=4, on_result=stop_at_first_result)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert noted == [signal.SIGINT] and not report.summary.interrupted
    assert report.summary.counts == {"ok": len(files)} and len(read_manifest(out / core.MANIFEST_NAME)) == len(files)


def test_a_second_stop_does_not_wait_for_the_bookkeeping(tmp_path, other_thread):
    """While a first Ctrl-C waits for the run's bookkeeping, a second one acts at once, wherever
    the run is (a run held up in a caller's callback can still be stopped); the run ends
    interrupted, and what the manifest says is true."""
    src, out = tmp_path / "src", tmp_path / "out"
    make_tree(src, copies=2)
    at_once = []

    def stop_twice(rec):
        if not at_once:
            send(signal.SIGINT, "handler", other_thread)  # held: the run is recording
            try:
                send(signal.SIGINT, "handler", other_thread)
            except KeyboardInterrupt:
                at_once.append(True)
                raise
            at_once.append(False)

    summary = core.Summary()
    with stop_handlers(), pytest.raises(KeyboardInterrupt):
        migrate([src], out, to="asif", workers=0, chunk_size=4, on_result=stop_twice, summary=summary)
    assert at_once == [True] and summary.interrupted
    lines = read_manifest(out / core.MANIFEST_NAME)
    assert {r.output for r in lines} <= set(tree_bytes(out)) and all(r.status == "ok" for r in lines)


def test_a_second_run_into_a_busy_outdir_is_refused(tmp_path):
    from asif_convert.batch._lock import OutdirLock

    src, out = tmp_path / "src", tmp_path / "out"
    make_tree(src)
    out.mkdir()
    with OutdirLock(out):
        res = invoke("batch", src, "-o", out, "--to", "asif", "-j", "0")
        assert res.exit_code == 2
        assert f"{out} is in use by another asif-convert batch (pid {os.getpid()})" in res.stderr
        assert not list(out.rglob("*.asif.json"))
    assert invoke("batch", src, "-o", out, "--to", "asif", "-j", "0").exit_code == 0


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc to find the workers")
def test_sigterm_to_one_worker_costs_at_most_its_files(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    files = make_tree(src, copies=10)
    proc = _start_batch(src, out)
    _wait_for_lines(proc, out / core.MANIFEST_NAME, 5)
    os.kill(min(_children(proc.pid)), signal.SIGTERM)  # a worker, not the batch
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode in (0, 3), stderr  # not 130: the batch was not interrupted
    lines = read_manifest(out / core.MANIFEST_NAME)
    assert len(lines) == len(files)
    assert sum(r.status == "internal" for r in lines) <= 1


def test_a_source_named_twice_is_one_input(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    files = make_tree(src)
    report = migrate([src, src], out, to="asif", workers=0)
    assert report.summary.total_files == report.summary.done == len(files)  # counted as converted
    assert report.summary.counts == {"ok": len(files)}


def test_migrate_takes_one_path_and_raises_its_own_usage_error(tmp_path):
    src = tmp_path / "src"
    files = make_tree(src)
    assert migrate(src, tmp_path / "out", to="asif", workers=0).summary.counts["ok"] == len(files)
    assert migrate(str(src), tmp_path / "out2", to="asif", workers=0).summary.counts["ok"] == len(files)
    with pytest.raises(core.UsageError, match="unknown format 'nope'"):
        migrate(src, tmp_path / "out3", to="nope")
    with pytest.raises(core.UsageError, match="lies inside OUTDIR"):
        migrate(src / "good", src, to="asif")


def test_failure_reasons_keep_their_rule_id_in_the_summary(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    doc = json.loads(CONTINUITY_FILES[0].read_text())
    doc["session"]["session_id"] = ""
    (src / "bad.json").write_text(json.dumps(doc))
    res = runner.invoke(app, ["batch", str(src), "-o", str(out), "--to", "asif", "-j", "0"],
                        env={"COLUMNS": "400"})
    assert res.exit_code == 1
    assert "[schema]" in res.stdout


@pytest.mark.parametrize("columns", ["60", "100"])
def test_the_summary_never_breaks_a_file_name(tmp_path, columns):
    """Names were folded mid-word ("another-leve" / "l/03-anthropic-tools.json"); now each is on
    one line, whole or with its start cut off, and a failure's reason does not repeat it."""
    src = tmp_path / "src" / "some-rather-long-folder-name" / "another-level"
    src.mkdir(parents=True)
    for path in CONTINUITY_FILES[:3]:
        shutil.copy(path, src / path.name)
    (src / "broken-export-with-a-long-name.json").write_text('{"format": "agent-continuity-export", "session": 7}')
    res = runner.invoke(app, ["batch", str(tmp_path / "src"), "-o", str(tmp_path / "out"), "--to", "asif", "-j", "0"],
                        env={"COLUMNS": columns})
    assert res.exit_code == 1, res.output
    lines = res.stdout.splitlines()
    slowest = lines[lines.index(next(ln for ln in lines if ln.startswith("Slowest files"))):]
    for path in CONTINUITY_FILES[:3]:
        assert any(path.name in ln and ln.rstrip().endswith(tuple("0123456789")) for ln in slowest), res.stdout
    failure = next(ln for ln in lines if " invalid " in ln and "invalid input" not in ln)
    assert "long-name.json" in failure and "broken-export" not in failure.split(" invalid ", 1)[1], failure
    tables = [ln for ln in lines if not ln.startswith("manifest: ")]  # (a path on a line of its own: whole)
    assert all(len(ln) <= int(columns) for ln in tables), res.stdout


def test_batch_writes_an_html_report_with_pages(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    files = make_tree(src, broken=True)
    report, pages = tmp_path / "report.html", tmp_path / "pages"
    res = invoke("batch", src, "-o", out, "--to", "asif", "-j", "0", "--report-html", report, "--pages", pages)
    assert res.exit_code == 1, res.output  # the broken files; the report is written all the same
    html = report.read_text()
    assert "<html" in html and all(p.name.removesuffix(".json") in html for p in files)
    assert len(list(pages.rglob("*.html"))) == len(files)
    assert invoke("batch", src, "-o", tmp_path / "o2", "--to", "asif", "--pages", pages).exit_code == 2


def test_pages_that_cannot_be_written_are_told_and_exit_1(tmp_path):
    """Every page failed (here: a folder in the way of each) and the batch said "report: ..." and
    exit 0; a --pages that is a file was exit 3."""
    src, out, pages = tmp_path / "src", tmp_path / "out", tmp_path / "pages"
    src.mkdir()
    for path in CONTINUITY_FILES[:2]:
        shutil.copy(path, src / path.name)
        (pages / output_path([path.name], "asif")).with_suffix(".json.html").mkdir(parents=True)
    report = tmp_path / "report.html"
    res = invoke("batch", src, "-o", out, "--to", "asif", "-j", "0", "--report-html", report, "--pages", pages)
    assert res.exit_code == 1, res.output
    assert f"report: {report}; 0 pages in {pages}, 2 files without a page (see the report)" in res.stdout
    assert report.read_text().count(">no page</span>") == 2
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    res = invoke("batch", src, "-o", out, "--to", "asif", "-j", "0", "--report-html", report, "--pages", blocked)
    assert res.exit_code == 1 and f"cannot make the pages folder {blocked}" in res.stderr, res.output


def test_a_file_name_that_is_not_utf8_is_converted_and_reported_with_its_odd_bytes_spelled(tmp_path):
    """Old archives hold Latin-1 names. They were exit 3 wherever a name goes into JSON (the
    manifest, --report, --json, source pointers): the name's odd bytes are written as \\xNN."""
    src = tmp_path / "src"
    src.mkdir()
    name = os.fsdecode(b"caf\xe9.json")  # (Python's str for such a name holds a lone surrogate)
    (src / name).write_bytes(CONTINUITY_FILES[0].read_bytes())
    shown = "caf\\xe9"
    out = tmp_path / "out"
    res = invoke("batch", src, "-o", out, "--to", "asif")
    assert res.exit_code == 0, res.output
    (line,) = read_manifest(out / core.MANIFEST_NAME)
    assert line.status == core.OK and shown in line.input and shown in line.output
    for args in (["inspect", "--json", src / name], ["validate", "--json", src / name],
                 ["from-continuity", src / name, "-o", tmp_path / "o.json", "--report", tmp_path / "r.json"],
                 ["from-continuity", src / name, "-o", tmp_path / "p.json", "--source-pointers"]):
        res = invoke(*args)
        assert res.exit_code == 0, res.output
    assert shown in json.loads((tmp_path / "r.json").read_bytes())["source"]
    assert json.dumps(shown)[1:-1] in (tmp_path / "p.json").read_text()  # (its backslash escaped)


def test_a_file_replaced_by_a_pipe_after_the_walk_is_refused_not_waited_on(tmp_path):
    """Workers read files the walk found regular; one replaced by a FIFO since would block its
    worker (and the batch) forever in open(), waiting for a writer. (In a process of its own, so
    that a hang fails the test instead of stopping the suite.)"""
    fifo = tmp_path / "swapped.json"
    os.mkfifo(fifo)
    code = ("import sys; from asif_convert import _jsonio, InvalidInput\n"
            "try:\n    _jsonio.read_input(sys.argv[1], regular=True)\n"
            "except InvalidInput as exc:\n    print(exc)\n")
    proc = subprocess.run([sys.executable, "-c", code, str(fifo)], capture_output=True, text=True, timeout=60)
    assert "is no longer a regular file" in proc.stdout, proc.stdout + proc.stderr
