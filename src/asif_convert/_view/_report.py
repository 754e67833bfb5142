"""The migration report: a batch manifest at a glance, optionally with one page per converted file.

The manifest's records are read as they are (``batch.read_manifest``); a file converted again by
a later run has a later line, and the last line for a file is the one that counts. Paths in the
manifest are data: a file's page is written under the pages folder only, and its converted output
is read from OUTDIR only, never through a symlink or a ``..``."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote

from asif_convert import _jsonio as jsonio
from asif_convert._errors import ConversionError, InvalidInput, OutputError, Problem
from asif_convert._view._html import render
from asif_convert._view.pages import session_page
from asif_convert.batch import read_manifest

TOP = 20  # rows of the slowest and largest lists
# The manifest's outcomes that mean a file was not converted (as the batch module defines them).
FAILED = frozenset({"invalid", "internal", "refused", "policy", "unwritable"})
CHART_WIDTH = 420  # pixels of the longest bar


@dataclass
class PagesWritten:
    """What ``write_pages`` did: each file's page (href relative to the report) and what failed."""

    hrefs: dict[str, str] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)


def latest(records: Iterable[Any]) -> list[Any]:
    """One record per file (keyed as the manifest keys it), the last line winning, in first-seen order."""
    by_key: dict[str, Any] = {}
    for rec in records:
        by_key.pop(rec.key, None)
        by_key[rec.key] = rec
    return list(by_key.values())


def _seconds(rec: Any) -> float:
    value = rec.seconds.get("total", 0.0) if isinstance(rec.seconds, dict) else 0.0
    return float(value) if isinstance(value, int | float) else 0.0


def report_model(records: list[Any], *, title: str, pages: PagesWritten | None = None) -> dict[str, Any]:
    files = latest(records)
    hrefs = pages.hrefs if pages else {}
    page_errors = pages.errors if pages else {}
    statuses = Counter(rec.status for rec in files)
    loss_total: Counter[str] = Counter()
    loss_files: Counter[str] = Counter()
    for rec in files:
        if rec.status in FAILED:
            continue
        for kind, n in rec.losses.items():
            loss_total[kind] += n
            loss_files[kind] += 1
    biggest = max(loss_total.values(), default=0)
    chart = [{"kind": kind, "count": n, "files": loss_files[kind],
              "width": max(1, round(CHART_WIDTH * n / biggest)) if biggest else 0, "y": 22 * i}
             for i, (kind, n) in enumerate(sorted(loss_total.items(), key=lambda kv: (-kv[1], kv[0])))]

    def row(rec: Any) -> dict[str, Any]:
        return {"input": rec.input, "output": rec.output, "status": rec.status, "source": rec.source_format,
                "target": rec.target_format, "input_bytes": rec.input_bytes, "output_bytes": rec.output_bytes,
                "seconds": _seconds(rec), "losses": sum(rec.losses.values()), "warnings": rec.warnings,
                "error": rec.error, "problems": rec.problems[:5], "more_problems": max(len(rec.problems) - 5, 0),
                "href": hrefs.get(rec.key), "page_error": page_errors.get(rec.key)}

    return {
        "title": title, "files": len(files), "lines": len(records),
        "statuses": [(status, n, status in FAILED)
                     for status, n in sorted(statuses.items(), key=lambda kv: (-kv[1], kv[0]))],
        "failed": sum(n for s, n in statuses.items() if s in FAILED),
        "input_bytes": sum(rec.input_bytes or 0 for rec in files),
        "output_bytes": sum(rec.output_bytes or 0 for rec in files),
        "seconds": sum(_seconds(rec) for rec in files),
        "chart": chart, "chart_width": CHART_WIDTH, "chart_height": 22 * len(chart),
        "slowest": [row(r) for r in sorted(files, key=lambda r: -_seconds(r))[:TOP]],
        "largest": [row(r) for r in sorted(files, key=lambda r: -(r.input_bytes or 0))[:TOP]],
        "failures": [row(r) for r in files if r.status in FAILED],
        "rows": [row(r) for r in files], "pages": pages is not None,
    }


def report_page(records: list[Any], *, title: str, pages: PagesWritten | None = None) -> str:
    """The report's HTML for manifest records (``batch.FileResult``), linking to ``pages`` when given."""
    return render("report.html.j2", m=report_model(records, title=title, pages=pages))


class UnsafePath(ValueError):
    """A manifest path that would leave its folder."""


def _confined(root: str, rel: str) -> str:
    """``root/rel`` for a relative POSIX path with no ``..``, refusing any symlink on the way."""
    parts = PurePosixPath(rel).parts
    if not parts or rel.startswith("/") or "\\" in rel or "\0" in rel or any(p in ("..", ".") for p in parts):
        raise UnsafePath(f"unsafe path {rel!r} in the manifest")
    root_real = os.path.realpath(root)
    target = os.path.join(root_real, *parts)
    if os.path.realpath(target) != target:
        raise UnsafePath(f"{rel!r} goes through a symlink")
    return target


def write_pages(records: list[Any], *, outdir: str | os.PathLike[str], pages_dir: str | os.PathLike[str],
                report: str | os.PathLike[str]) -> PagesWritten:
    """One session page per converted file (``pages_dir/<output>.html``), read from ``outdir``.

    A file whose output cannot be read or drawn gets no page; the report says why."""
    done = PagesWritten()
    report_dir = os.path.dirname(os.path.abspath(report))
    try:
        os.makedirs(pages_dir, exist_ok=True)
    except OSError as exc:  # a file in the way, or no permission: no page can be written
        raise OutputError(f"cannot make the pages folder {os.fspath(pages_dir)}: {exc.strerror or exc} "
                          "(nothing was written)") from None
    for rec in latest(records):
        if rec.status not in ("ok", "unchanged") or not rec.output:
            continue
        try:
            source = _confined(os.fspath(outdir), rec.output)
            page = _confined(os.fspath(pages_dir), rec.output + ".html")
            data, name = jsonio.read_input(source)
            html = session_page(data, rec.output)
            os.makedirs(os.path.dirname(page), exist_ok=True)
            _confined(os.fspath(pages_dir), rec.output + ".html")  # no symlink appeared on the way
            jsonio.write_output(page, html.encode("utf-8"))
        except (UnsafePath, ConversionError) as exc:
            done.errors[rec.key] = str(exc)
            continue
        except OSError as exc:
            done.errors[rec.key] = f"cannot write the page: {exc.strerror or exc}"
            continue
        # (the link goes by the names given, as a browser resolves it from the report's own name)
        named = os.path.join(os.path.abspath(pages_dir), *PurePosixPath(rec.output + ".html").parts)
        done.hrefs[rec.key] = quote(Path(os.path.relpath(named, report_dir)).as_posix())
    return done


def write_report(manifest: str | os.PathLike[str], report: str | os.PathLike[str], *,
                 outdir: str | os.PathLike[str] | None = None,
                 pages_dir: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """Read a batch manifest and write its report (and, with ``pages_dir``, each file's page).

    ``outdir`` is where the batch wrote its outputs (default: the manifest's folder)."""
    try:
        records = read_manifest(manifest)
    except OSError as exc:
        raise InvalidInput([Problem(rule="io", path="", message=f"cannot read: {exc.strerror or exc}")],
                           os.fspath(manifest)) from None
    base = outdir if outdir is not None else os.path.dirname(os.path.abspath(manifest))
    return write_report_records(records, report, title=Path(manifest).name, outdir=base, pages_dir=pages_dir)


def write_report_records(records: list[Any], report: str | os.PathLike[str], *, title: str,
                         outdir: str | os.PathLike[str], pages_dir: str | os.PathLike[str] | None = None
                         ) -> dict[str, Any]:
    """Write the report of manifest records (``batch.FileResult``), and each converted file's page
    under ``pages_dir`` (read from ``outdir``) when given. Returns counts for a summary line:
    files, failed, pages written, files without a page."""
    pages = write_pages(records, outdir=outdir, pages_dir=pages_dir, report=report) if pages_dir is not None else None
    html = report_page(records, title=title, pages=pages)
    jsonio.write_output(os.fspath(report), html.encode("utf-8"))
    files = latest(records)
    return {"files": len(files), "failed": sum(1 for r in files if r.status in FAILED),
            "pages": len(pages.hrefs) if pages else 0, "page_errors": len(pages.errors) if pages else 0}
