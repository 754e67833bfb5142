"""``asif-convert view``: a self-contained HTML page of one document, of two side by side, or of a
batch manifest."""

from __future__ import annotations

from itertools import islice
from pathlib import Path
from typing import Annotated

import msgspec
import typer

from asif_convert import _jsonio as jsonio
from asif_convert._cli.common import DEFAULT_LIMITS as LIM
from asif_convert._cli.common import (
    MaxBytesOpt,
    MaxDepthOpt,
    MaxStringOpt,
    QuietOpt,
    build_limits,
    err,
    guard,
    path_option,
    path_text,
    stdin_once,
    usage_error,
)
from asif_convert._errors import EXIT_INVALID_INPUT
from asif_convert._registry import detect_lines
from asif_convert._view import diff_page, session_page, write_report, write_report_records
from asif_convert.batch import FileResult
from asif_convert.batch._manifest import manifest_records

MANIFEST_SUFFIX = ".jsonl"  # a batch manifest; every other file is a document


def pages_told(done: dict[str, int], pages: Path | None) -> str:
    """What a report's summary line says of its pages (a page not written is an output that
    could not be written: the command then ends with exit 1)."""
    if pages is None:
        return ""
    told = f"; {done['pages']} pages in {pages}"
    if done["page_errors"]:
        missing = done["page_errors"]
        told += f", {missing} file{'' if missing == 1 else 's'} without a page (see the report)"
    return told


def view(files: Annotated[list[str], typer.Argument(
             metavar="FILE [B]", parser=path_text,
             help="A document (ASIF session or any format converted in memory), two documents "
                  "to show side by side, or a batch manifest (*.jsonl); - for standard input.")],
         output: Annotated[str, typer.Option("-o", "--output", metavar="OUT", parser=path_text,
                                             help="The HTML page to write, or - for standard output.")],
         pages: Annotated[Path | None, typer.Option(
             "--pages", metavar="DIR", parser=path_option,
             help="With a manifest: also write each converted file's page under DIR "
                  "(DIR/<output>.html) and link the report's rows to them.")] = None,
         outdir: Annotated[Path | None, typer.Option(
             "--outdir", metavar="OUTDIR", parser=path_option,
             help="With --pages: where the batch wrote its outputs (default: the manifest's folder).")] = None,
         max_bytes: MaxBytesOpt = LIM.max_bytes, max_depth: MaxDepthOpt = LIM.max_depth,
         max_string: MaxStringOpt = LIM.max_string, quiet: QuietOpt = False) -> None:
    """Write one self-contained HTML page (no network access, inline CSS and script) to look at a
    session, compare two documents, or see a whole batch at a glance."""
    if not 1 <= len(files) <= 2:
        usage_error(f"view takes one or two files, not {len(files)}")
    stdin_once(files)
    # a *.jsonl file is a manifest, unless it is a session of JSON Lines (a Claude Code transcript)
    manifest = len(files) == 1 and files[0].endswith(MANIFEST_SUFFIX) and not _a_session(files[0])
    if (pages is not None or outdir is not None) and not manifest and files != ["-"]:  # (stdin: once read)
        usage_error(PAGES_WITH_A_MANIFEST)
    if outdir is not None and pages is None:
        usage_error("--outdir says where to read outputs for --pages; give --pages DIR too")
    limits = build_limits(max_bytes, max_depth, max_string)

    def run() -> None:
        for path in files:  # never write the page over an input
            jsonio.check_paths(path, output)
        if manifest:
            _report(files[0], output, outdir, pages, quiet=quiet)
            return
        if len(files) == 1:
            data, name = jsonio.read_input(files[0], limits)
            if files == ["-"] and a_manifest(data):
                records = manifest_records(data.splitlines(keepends=True), name)
                _report(name, output, outdir, pages, records, quiet=quiet)
                return
            if pages is not None or outdir is not None:
                usage_error(PAGES_WITH_A_MANIFEST)
            html = session_page(data, name, limits)
        else:
            (data_a, name_a), (data_b, name_b) = (jsonio.read_input(f, limits) for f in files)
            html = diff_page(data_a, name_a, data_b, name_b, limits)
        jsonio.write_output(output, html.encode("utf-8"))

    guard(run)


PAGES_WITH_A_MANIFEST = "--pages and --outdir go with a batch manifest (*.jsonl, or one on standard input)"
_RECORD_KEYS = frozenset({"input", "status", "target_format"})  # what every manifest line has


def _a_session(path: str) -> bool:
    """Whether a *.jsonl file is a session of a format of JSON Lines rather than a batch manifest.
    A manifest's first line is a file record; otherwise the file is a session when a format claims
    its first records (as ``convert`` detects them), or when its first line is not JSON within
    the line limit, so that the session's reading names what is wrong with it."""
    try:
        with open(path, "rb") as fh:
            lines = [line for line in islice(iter(lambda: fh.readline(1 << 20), b""), 200) if line.strip()]
    except OSError:
        return False  # the manifest's reading says what is wrong
    if not lines or a_manifest(lines[0]):
        return False
    records = []
    for line in lines[:20]:
        try:
            records.append(msgspec.json.decode(line))
        except (msgspec.DecodeError, RecursionError):  # (the session's reading refuses it, at its line)
            break
    return not records or detect_lines(records) is not None


def a_manifest(data: bytes) -> bool:
    """Whether standard input holds a batch manifest: its first line is a file record. (No
    document's first line is one: a document's root has members of its own format.)"""
    first = next((line for line in data.splitlines() if line.strip()), b"")
    try:
        record = msgspec.json.decode(first)
    except (msgspec.DecodeError, RecursionError):
        return False
    return isinstance(record, dict) and _RECORD_KEYS <= record.keys()


def _report(manifest: str, output: str, outdir: Path | None, pages: Path | None,
            records: list[FileResult] | None = None, *, quiet: bool = False) -> None:
    """Write a manifest's report (``records``: those of a manifest read from standard input)."""
    if output == "-":
        usage_error("a manifest's report links to its pages: write it to a file (-o report.html)")
    if records is None:
        done = write_report(manifest, output, outdir=outdir, pages_dir=pages)
    else:
        if pages is not None and outdir is None:
            usage_error("a manifest on standard input is in no folder: give --outdir OUTDIR (where the batch "
                        "wrote its outputs) with --pages")
        done = write_report_records(records, output, title=manifest, outdir=outdir or ".", pages_dir=pages)
    if not quiet or done["page_errors"]:  # (a page not written is an error: said even with -q)
        err(f"{output}: {done['files']} files, {done['failed']} failed{pages_told(done, pages)}")
    if done["page_errors"]:
        raise typer.Exit(EXIT_INVALID_INPUT)
