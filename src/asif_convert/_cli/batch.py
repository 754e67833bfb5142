"""``asif-convert batch``: convert whole trees of documents in parallel (see :mod:`asif_convert.batch`)."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.console import Console
from rich.progress import (
    BarColumn,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
)
from rich.progress import Progress as RichProgress
from rich.table import Table
from rich.text import Text

from asif_convert import _jsonio as jsonio
from asif_convert import batch as core
from asif_convert._artifacts import MAX_ARTIFACT_BYTES, MAX_ARTIFACTS_TOTAL
from asif_convert._cli.common import (
    DEFAULT_LIMITS as LIM,
)
from asif_convert._cli.common import (
    CompactOpt,
    FailOnOpt,
    LossPolicy,
    MaxBytesOpt,
    MaxDepthOpt,
    MaxStringOpt,
    NoResidualOpt,
    NoValidateOpt,
    OnLossOpt,
    StrictOpt,
    build_limits,
    build_options,
    check_formats,
    err,
    existing_folder,
    guard,
    input_name,
    internal_error,
    path_option,
    path_text,
    sigterm_interrupts,
    stdin_once,
    usage_error,
    whole_number,
)
from asif_convert._cli.convert import ArtifactMaxOpt, ArtifactsTotalOpt
from asif_convert._cli.view import pages_told
from asif_convert._errors import (
    EXIT_INTERRUPTED,
    EXIT_INVALID_INPUT,
    EXIT_LOSS_POLICY,
    EXIT_OK,
    EXIT_USAGE,
    InvalidInput,
    UsageError,
    display_name,
)
from asif_convert._view import write_report
from asif_convert.batch import _storage as storage


def workers_option(text: str) -> int:
    value = whole_number(text)
    if not 0 <= value <= core.MAX_WORKERS:
        raise typer.BadParameter(f"must be from 0 (converts in this process) to {core.MAX_WORKERS}")
    return value


def _mb(n: float) -> str:
    return f"{n / 1e6:.1f} MB"


def _rate(n: float, seconds: float) -> float:
    return n / seconds if seconds > 0 else 0.0


# Rates are averages since the start, and shown only after this long: a rate over the last
# instants (rich's own) reads as terabytes a second when a large file ends just after a small one.
_RATE_AFTER = 1.0


def _average(n: float, seconds: float) -> float | None:
    return n / seconds if seconds >= _RATE_AFTER else None


def _files_per_second(rate: float) -> str:
    return f"{rate:.1f} files/s" if rate < 10 else f"{rate:.0f} files/s"


class _FilesColumn(ProgressColumn):
    """files done/total and files per second (the bar counts files)."""

    def render(self, task: Task) -> Text:
        rate = _average(task.completed, task.elapsed or 0.0)
        shown = f", {_files_per_second(rate)}" if rate is not None else ""
        return Text(f"{task.completed:.0f}/{task.fields['total_files']} files{shown}", style="progress.download")


class _BytesColumn(ProgressColumn):
    """The bytes read beside the files, labelled, with their average rate."""

    def render(self, task: Task) -> Text:
        done, total = task.fields["bytes"], task.fields["total_bytes"]
        rate = _average(done, task.elapsed or 0.0)
        shown = f", {_mb(rate)}/s" if rate is not None else ""
        return Text(f"({_mb(done)} of {_mb(total)} read{shown})", style="progress.data.speed")


class _FailedColumn(ProgressColumn):
    def render(self, task: Task) -> Text:
        failed = task.fields.get("failed", 0)
        return Text(f"{failed} failed" if failed else "", style="red")


class TerminalProgress:
    """A rich progress bar of files (files/s, ETA), the bytes read beside them, and failures."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.bar = RichProgress(TextColumn("[bold]batch"), BarColumn(), _FilesColumn(), _BytesColumn(),
                                TextColumn("ETA"), TimeRemainingColumn(), _FailedColumn(), console=console,
                                transient=False)
        self.task: TaskID | None = None
        self.bytes = self.failed = 0

    def start(self, total_files: int, total_bytes: int, workers: int | None) -> None:
        self.bar.start()
        self.task = self.bar.add_task("batch", total=max(total_files, 1), total_files=total_files, bytes=0,
                                      total_bytes=total_bytes, failed=0)

    def advance(self, rec: core.FileResult) -> None:
        self.bytes += rec.input_bytes or 0
        self.failed += rec.status in core.FAILED
        assert self.task is not None, "advance() before start()"
        self.bar.update(self.task, advance=1, bytes=self.bytes, failed=self.failed)

    def found(self, total_files: int, total_bytes: int) -> None:
        """The totals so far of a listing that streams (object storage)."""
        if self.task is not None:
            self.bar.update(self.task, total=max(total_files, 1), total_files=total_files, total_bytes=total_bytes)

    def stop(self) -> None:
        self.bar.stop()


class PlainProgress:
    """Not a terminal: a line at the start, then one every ``interval`` seconds, on stderr."""

    def __init__(self, interval: float = 10.0) -> None:
        self.interval = interval
        self.total_files = self.total_bytes = 0
        self.files = self.bytes = self.failed = 0
        self.listing = False
        self.t0 = self.last = time.monotonic()

    def _say(self, line: str) -> None:
        typer.echo(line, err=True)

    def start(self, total_files: int, total_bytes: int, workers: int | None) -> None:
        self.total_files, self.total_bytes = total_files, total_bytes
        self.t0 = self.last = time.monotonic()
        on = f" on {workers} worker{'s' if workers > 1 else ''}" if workers else ""
        if self.listing:  # object storage: counted as the listing goes, which the files converting do not wait for
            self._say(f"batch: listing the sources{on}; files convert as they are found")
        else:
            self._say(f"batch: {total_files} files, {_mb(total_bytes)}{on}")

    def found(self, total_files: int, total_bytes: int) -> None:
        """The totals so far of a listing that streams (object storage); called first before start."""
        self.listing = True
        self.total_files, self.total_bytes = total_files, total_bytes

    def advance(self, rec: core.FileResult) -> None:
        self.files += 1
        self.bytes += rec.input_bytes or 0
        self.failed += rec.status in core.FAILED
        now = time.monotonic()
        if now - self.last >= self.interval:
            self.last = now
            self._say(self.line(now - self.t0))

    def line(self, elapsed: float) -> str:
        """Files done (and their share), the bytes read beside them, average rates, the ETA by files."""
        pct = 100 * self.files / self.total_files if self.total_files else 100.0
        files_rate, bytes_rate = _average(self.files, elapsed), _average(self.bytes, elapsed)
        rates = f", {_files_per_second(files_rate)}" if files_rate is not None else ""
        read = f"{_mb(self.bytes)} of {_mb(self.total_bytes)} read" + (
            f", {_mb(bytes_rate)}/s" if bytes_rate is not None else "")
        eta = ""
        if files_rate:
            left = (self.total_files - self.files) / files_rate
            eta = f", ETA {time.strftime('%H:%M:%S', time.gmtime(left))}"
        return f"batch: {self.files}/{self.total_files} files ({pct:.0f}%){rates} ({read}){eta}, {self.failed} failed"

    def stop(self) -> None:
        pass


def _tail(name: str, width: int) -> str:
    """A file name that fits ``width``: whole, or its end after an ellipsis, from a folder's
    start where one is in reach (the file's own name is what tells files apart)."""
    if len(name) <= width:
        return name
    end = name[len(name) - width + 1:]
    cut = end.find("/")
    return "…" + (end[cut:] if 0 <= cut < len(end) - 1 else end)


def _name_column(names: list[str], width: int) -> dict[str, Any]:
    """A table column of file names: never wrapped (a name broken mid-word reads as two), as wide
    as its longest name shortened to ``width`` (:func:`_tail`)."""
    return {"no_wrap": True, "overflow": "ellipsis",
            "min_width": max((len(_tail(n, width)) for n in names), default=4)}


def parse_storage_options(pairs: list[str]) -> dict[str, Any]:
    """``KEY=VALUE`` pairs: a VALUE that parses as JSON is that value (``true``, ``3``,
    ``{"endpoint_url": ...}``), any other is the string itself."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, eq, value = pair.partition("=")
        if not eq or not key.strip():
            raise typer.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint="'--storage-option'")
        try:
            out[key.strip()] = json.loads(value)
        except ValueError:
            out[key.strip()] = value
    return out


def _connect(address: str, timeout: float, quiet: bool, watch: dict[str, float]) -> Any:
    """The cluster, or one line and exit 2 (1 without the dask extra)."""
    try:
        from asif_convert.batch import _cluster  # the dask extra, loaded only for a cluster
    except ImportError:
        typer.echo("error: --scheduler needs Dask: pip install 'asif-convert[dask]'", err=True)
        raise typer.Exit(EXIT_USAGE) from None
    try:
        cluster = _cluster.Cluster(address, timeout, **watch)
    except UsageError as exc:
        typer.echo(f"error: {exc}", err=True)
        sys.stderr.flush()
        # a half-made client's finalizer would print a traceback as the interpreter exits
        os._exit(EXIT_USAGE)
    if not quiet:
        typer.echo(f"batch: the Dask cluster at {address}: {cluster.workers} workers, {cluster.threads} threads",
                   err=True)
    return cluster


def print_summary(summary: core.Summary, manifest: Path | str | None, console: Console, *,
                  losses: bool = True) -> None:
    """Counts, throughput, top loss kinds, slowest files and failures."""
    s = summary
    title = "Batch interrupted" if s.interrupted else "Batch summary"
    counts = Table(title=title, box=box.SIMPLE, show_header=False, title_justify="left")
    counts.add_column("what")
    counts.add_column("count", justify="right")
    for status, label in ((core.OK, "converted"), (core.UNCHANGED, "unchanged (resumed)"),
                          (core.INVALID, "invalid input"), (core.INTERNAL, "internal error"),
                          (core.REFUSED, "refused"), (core.POLICY, "refused by the loss policy"),
                          (core.UNWRITABLE, "output not writable")):
        if s.counts[status] or status == core.OK:
            counts.add_row(label, str(s.counts[status]))
    if s.interrupted and s.remaining:
        counts.add_row("not reached", str(s.remaining))
    counts.add_row("files/s", f"{_rate(s.done, s.elapsed):.1f}")
    counts.add_row("input", f"{_mb(s.input_bytes)} ({_mb(_rate(s.input_bytes, s.elapsed))}/s)")
    counts.add_row("output", _mb(s.output_bytes))
    counts.add_row("time", f"{s.elapsed:.2f} s")
    console.print(counts)

    if losses and s.loss_counts:
        table = Table(title="Top loss kinds", box=box.SIMPLE, title_justify="left")
        table.add_column("kind", no_wrap=True)
        table.add_column("losses", justify="right")
        table.add_column("files", justify="right")
        for kind, n in s.loss_counts.most_common(s.top):
            table.add_row(Text(kind), str(n), str(s.loss_files[kind]))
        console.print(table)

    if s.slowest:
        slow = Table(title="Slowest files", box=box.SIMPLE, title_justify="left")
        names = [display_name(path) for _, path in s.slowest_files()[:5]]
        slow.add_column("file", **_name_column(names, console.width - 16))
        slow.add_column("seconds", justify="right", no_wrap=True)
        for (seconds, _), name in zip(s.slowest_files()[:5], names, strict=True):
            slow.add_row(Text(_tail(name, console.width - 16)), f"{seconds:.3f}")
        console.print(slow)

    if s.failures:
        fails = Table(title="Failures", box=box.SIMPLE, title_justify="left")
        shown = s.failures[: s.top * 2]
        width = max(16, (console.width - 24) * 2 // 5)  # the rest for the reason
        fails.add_column("file", **_name_column([display_name(rec.input) for rec in shown], width))
        fails.add_column("status", no_wrap=True)
        fails.add_column("reason", overflow="fold")  # (wrapped between words; a word longer than it, folded)
        for rec in shown:
            # Text, not markup: a reason ends in its rule id in brackets, which markup would eat
            reason = display_name(rec.error.splitlines()[0] if rec.error else "")
            name = display_name(rec.input)
            fails.add_row(Text(_tail(name, width)), rec.status, Text(reason.removeprefix(f"{name}: ")))
        console.print(fails)
        if s.failed > s.top * 2:
            console.print(f"... and {s.failed - s.top * 2} more failures (see the manifest)")
    if manifest is not None:
        console.print(Text(f"manifest: {manifest}"), soft_wrap=True)
    if s.interrupted:
        console.print(interrupted_line(s))


def interrupted_line(summary: core.Summary) -> str:
    """What an interrupted run left, truly: a signal that came after the last file leaves none."""
    left = summary.remaining
    if left is None:
        return "interrupted while counting the files: run the same command again to convert them"
    if not left:
        return "interrupted after the last file: every file was reached, none remains to convert"
    return f"interrupted: {left} file{'s' if left > 1 else ''} not reached; run the same command again to " \
           "convert the remaining files"


# The options of batch alone (the rest are shared with the single-file commands).
ReportHtmlOpt = Annotated[Path | None, typer.Option(
    "--report-html", metavar="PATH", parser=path_option,
    help="Also write the migration at a glance as one self-contained HTML page.")]
PagesOpt = Annotated[Path | None, typer.Option(
    "--pages", metavar="DIR", parser=path_option,
    help="With --report-html: also write one page per converted file here, linked from the report.")]
ArtifactsRootOpt = Annotated[Path | None, typer.Option(
    "--artifacts-root", metavar="DIR", parser=path_option, callback=existing_folder,
    help="Embed artifact files found by their paths inside DIR only (one folder for every export).")]
ArtifactsEachOpt = Annotated[str | None, typer.Option(
    "--artifacts-each", metavar="TEMPLATE", help="Embed artifact files from each export's own folder: TEMPLATE, "
    "relative to the export's folder; {stem} is its name without the extension ('{stem}': a.json's files are "
    "in a/; '{stem}.artifacts', 'files/{stem}', '.').")]
StorageOptionOpt = Annotated[list[str] | None, typer.Option(
    "--storage-option", metavar="KEY=VALUE", help="For URLs: an option of their fsspec file system (repeatable; "
    "VALUE is a JSON literal if it parses as one, else a string).")]
SchedulerOpt = Annotated[str | None, typer.Option(
    "--scheduler", metavar="ADDRESS", envvar="DASK_SCHEDULER_ADDRESS", show_envvar=False,
    help="Run on the Dask cluster of this scheduler (tcp://host:8786; default: $DASK_SCHEDULER_ADDRESS).")]
ConnectTimeoutOpt = Annotated[float, typer.Option(
    "--connect-timeout", metavar="SECONDS", min=0.1, help="How long to wait for the scheduler.")]
NoWorkerTimeoutOpt = Annotated[float, typer.Option(
    "--no-worker-timeout", metavar="SECONDS", min=1.0, help="With --scheduler: stop (exit 5, resumable) when the "
    "cluster has had no worker this long.")]
StallTimeoutOpt = Annotated[float, typer.Option(
    "--stall-timeout", metavar="SECONDS", min=0.0, help="With --scheduler: stop (exit 5, resumable) when no file "
    "has finished this long while the cluster has workers (0: never).")]
NoResumeOpt = Annotated[bool, typer.Option("--no-resume", help="Redo every file, even those a previous run "
                                                               "converted.")]
# (--force of the conversions replaces existing files; batch's meant redo every file, now --no-resume)
OldForceOpt = Annotated[bool, typer.Option("--force", hidden=True, help="The former name of --no-resume.")]
RunReportOpt = Annotated[str | None, typer.Option(
    "--report", metavar="PATH", parser=path_text,
    help="Also write the run as JSON here (counts by status, files not reached, losses by kind, failures, "
         "exit code); - for standard output (the summary then goes to standard error).")]
BreakLockOpt = Annotated[bool, typer.Option(
    "--break-lock", help="Take a remote OUTDIR's lock even if it looks held (its run is known to be gone).")]


def batch(
    sources: Annotated[list[str], typer.Argument(metavar="SRC...", parser=path_text,
                                                 help="Files, folders (walked recursively) or glob patterns "
                                                      "(quote them; ** recurses).")],
    outdir: Annotated[str, typer.Option("-o", "--output", metavar="OUTDIR", parser=path_text,
                                        help="Folder (or fsspec URL: s3://, gs://, az://) for the outputs; the "
                                             "input tree is mirrored under it.")],
    to: Annotated[str, typer.Option("--to", metavar="FORMAT", help="Target format (see 'formats').")],
    source: Annotated[str | None, typer.Option("--from", metavar="FORMAT", help="Force the input format (default: "
                                               "detected per file).")] = None,
    workers: Annotated[int | None, typer.Option("--workers", "-j", metavar="N", parser=workers_option,
                                                help="Worker processes (default: the CPU count; 0 converts in "
                                                     "this process).")] = None,
    manifest: Annotated[str | None, typer.Option("--manifest", metavar="PATH", parser=path_text,
                                                 help="The JSONL manifest (default: OUTDIR/manifest.jsonl).")] = None,
    no_resume: NoResumeOpt = False,
    force: OldForceOpt = False,
    report: RunReportOpt = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress and no summary.")] = False,
    pattern: Annotated[str, typer.Option("--pattern", metavar="GLOB",
                                         help="Names to take when walking folders (globs separated by "
                                              "commas).")] = "*.json,*.jsonl",
    strict: StrictOpt = False,
    compact: CompactOpt = False,
    no_validate: NoValidateOpt = False,
    no_residual: NoResidualOpt = False,
    on_loss: OnLossOpt = LossPolicy.warn,
    fail_on: FailOnOpt = None,
    max_bytes: MaxBytesOpt = LIM.max_bytes,
    max_depth: MaxDepthOpt = LIM.max_depth,
    max_string: MaxStringOpt = LIM.max_string,
    report_html: ReportHtmlOpt = None,
    pages: PagesOpt = None,
    package: Annotated[bool, typer.Option("--package", help="Write ASIF packages (.asif.zip): each session with "
                                          "the files it embeds.")] = False,
    artifacts_root: ArtifactsRootOpt = None,
    artifacts_each: ArtifactsEachOpt = None,
    artifact_max_bytes: ArtifactMaxOpt = MAX_ARTIFACT_BYTES,
    artifacts_max_total: ArtifactsTotalOpt = MAX_ARTIFACTS_TOTAL,
    storage_option: StorageOptionOpt = None,
    scheduler: SchedulerOpt = None, connect_timeout: ConnectTimeoutOpt = 10.0,
    no_worker_timeout: NoWorkerTimeoutOpt = 60.0, stall_timeout: StallTimeoutOpt = 900.0,
    break_lock: BreakLockOpt = False,
    source_pointers: Annotated[bool, typer.Option(
        "--source-pointers", help="To ASIF: carry each export as a resource and point every event at its record. "
                                  "To continuity: point every record back at the ASIF records it came from.")] = False,
) -> None:
    """Convert many files in parallel into OUTDIR; resumable, with a JSONL manifest.

    Exit 0 when every file converted; 1 when any input was invalid or refused (or an output could not
    be written); 3 on internal errors; 4 when only the loss policy refused files; 5 when the cluster
    stopped converting (no worker, or no progress); 130 when interrupted (rerun to resume).
    """
    _check_sources(sources, force, quiet)
    check_formats(to, source)
    storage_options = parse_storage_options(storage_option or [])
    if pages is not None and report_html is None:
        raise typer.BadParameter("--pages needs --report-html (the report links to the pages)", param_hint="'--pages'")
    options = replace(build_options(strict=strict, no_validate=no_validate, on_loss=on_loss, fail_on=fail_on,
                                    no_residual=no_residual), artifacts_root=artifacts_root,
                      artifact_max_bytes=artifact_max_bytes, artifacts_max_total=artifacts_max_total,
                      source_pointers=source_pointers)
    err_console = Console(stderr=True)
    progress: core.Progress | None = None
    if not quiet:
        progress = TerminalProgress(err_console) if err_console.is_terminal else PlainProgress()
    summary = core.Summary()  # filled as results arrive, so an interrupted run can still be summarized
    manifest_path = _manifest_path(manifest, outdir, report_html)
    losses = on_loss is not LossPolicy.ignore
    with _runs_on(scheduler, connect_timeout, workers, quiet,
                  {"no_worker_timeout": no_worker_timeout, "stall_timeout": stall_timeout}) as where:
        lost = _migrate(sources, outdir, summary, manifest_path, to=to, source=source,
                 options=options, compact=compact, limits=build_limits(max_bytes, max_depth, max_string),
                 force=no_resume or force, pattern=pattern, progress=progress, package=package,
                 artifacts_each=artifacts_each, storage_options=storage_options, break_lock=break_lock, **where)
    code = _tell(summary, manifest_path, sources, pattern, quiet=quiet, losses=losses, report=report, lost=lost)
    if report_html is not None and not summary.interrupted:
        code = _write_report_html(Path(manifest_path), report_html, Path(outdir), pages, code, quiet=quiet)
    sys.stdout.flush()
    raise typer.Exit(code)


def _check_sources(sources: list[str], force: bool, quiet: bool) -> None:
    """Standard input is no source (named twice, the usage error of every command); the old
    spelling of --no-resume still works, with a note (not under -q: it is no error)."""
    stdin_once(sources)
    if "-" in sources:
        usage_error(f"batch converts files and folders; {input_name('-')} (-) is not one (convert reads it)")
    if force and not quiet:
        err("note: batch --force is now --no-resume (redo every file); --force will be removed")


def _tell(summary: core.Summary, manifest: Path | str, sources: list[str], pattern: str, *, quiet: bool,
          losses: bool, report: str | None, lost: core.ClusterLost | None = None) -> int:
    """Say how the run went (the summary, or one line for an interrupted run with -q, or an error
    when no file matched; the one line of a lost cluster), write the --report, and return the
    exit code."""
    code = lost.exit_code if lost is not None else EXIT_INTERRUPTED if summary.interrupted else summary.exit_code
    if summary.counted and not summary.total_files:
        names = ", ".join(input_name(s) for s in sources)
        named = " or ".join(pattern.split(","))  # (several globs, separated by commas)
        err(f"error: no file matched {names} (in folders: files named {named}, see --pattern); nothing to do")
        code = EXIT_INVALID_INPUT
    elif not quiet:
        to_stderr = report == "-"  # (standard output holds the report)
        print_summary(summary, manifest, Console(stderr=to_stderr, **_whole_names(to_stderr)), losses=losses)
    elif summary.interrupted and lost is None:
        err(interrupted_line(summary))
    if lost is not None:
        err(f"error: {lost}")
    if report is not None:
        run = summary.report()
        run.update(manifest=str(manifest), exit_code=code)
        guard(lambda: jsonio.write_output(report, jsonio.encode(run)))
    return code


def _whole_names(to_stderr: bool) -> dict[str, Any]:
    """Where the summary goes to no terminal (a log, a pipe), it is as wide as its lines: a file
    name is never cut to the width of a terminal that is not there (unless COLUMNS asks for one)."""
    stream = sys.stderr if to_stderr else sys.stdout
    return {} if stream.isatty() or "COLUMNS" in os.environ else {"width": 100_000}


def _manifest_path(manifest: str | None, outdir: str, report_html: Path | None) -> Path | str:
    """The manifest's path (a URL stays a string), the default OUTDIR/manifest.jsonl."""
    manifest_path = storage.manifest_at(manifest if manifest is not None else True, outdir)
    assert manifest_path is not None, "a named or default manifest is never None"
    if report_html is not None and (storage.is_url(storage.local_form(outdir)) or isinstance(manifest_path, str)):
        raise typer.BadParameter("the report reads a local OUTDIR and manifest", param_hint="'--report-html'")
    return manifest_path


@contextmanager
def _runs_on(scheduler: str | None, timeout: float, workers: int | None, quiet: bool,
             watch: dict[str, float]) -> Iterator[dict[str, Any]]:
    """Where the tasks run, as migrate's settings: local worker processes, or the threads of the
    cluster of ``scheduler``, which is closed at the end."""
    if not scheduler:
        yield {"workers": workers}
        return
    if workers is not None:
        raise typer.BadParameter("a cluster runs as many tasks as it has threads; --workers is for local processes",
                                 param_hint="'--workers'")
    cluster = _connect(scheduler, timeout, quiet, watch)
    try:
        # a bounded window: a few tasks per thread in the scheduler, whatever the archive's size
        yield {"workers": min(cluster.threads, core.MAX_WORKERS), "executor": cluster.executor,
               "max_in_flight": 2 * cluster.threads, "watchdog": cluster.watchdog}
    finally:
        cluster.close()  # the scheduler cancels what this run left (after Ctrl-C)


def _migrate(sources: list[str], outdir: str, summary: core.Summary, manifest: Path | str,
             **settings: Any) -> core.ClusterLost | None:
    """Run the migration; what stops it before its end becomes its message and exit code (an
    interrupt: marked in the summary, which the caller tells with exit 130; a lost cluster: the
    same, and returned for the caller to say, exit 5)."""
    try:
        with sigterm_interrupts():  # `kill` stops a batch as Ctrl-C does
            core.migrate(sources, outdir, manifest=manifest, keep_results=False, summary=summary, **settings)
    except InvalidInput as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(EXIT_INVALID_INPUT) from None
    except UsageError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(EXIT_USAGE) from None
    except core.ClusterLost as exc:  # (said by the caller, after the summary so far)
        summary.interrupted = True
        return exc
    except KeyboardInterrupt:
        summary.interrupted = True  # (said by the caller, with the summary so far)
    except Exception as exc:  # a bug outside any one file
        raise internal_error(exc) from None
    return None


def _write_report_html(manifest: Path, report: Path, outdir: Path, pages: Path | None, code: int, *,
                       quiet: bool) -> int:
    """Write the report (and pages); the run's exit code, 1 when a page could not be written."""
    done: dict[str, int] = {}
    guard(lambda: done.update(write_report(manifest, report, outdir=outdir, pages_dir=pages)))
    if not quiet:
        Console().print(Text(f"report: {report}{pages_told(done, pages)}"), soft_wrap=True)
    if done["page_errors"] and code in (EXIT_OK, EXIT_LOSS_POLICY):
        return EXIT_INVALID_INPUT  # a page not written is an output not written
    return code
