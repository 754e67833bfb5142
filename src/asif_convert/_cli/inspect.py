"""``asif-convert inspect`` and ``asif-convert diff``: what is in a file, what a conversion would
lose, and what changed between two documents."""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from asif_convert import _jsonio as jsonio
from asif_convert._cli.common import DEFAULT_LIMITS as LIM
from asif_convert._cli.common import (
    MaxBytesOpt,
    MaxDepthOpt,
    MaxStringOpt,
    build_limits,
    check_formats,
    guard,
    input_name,
    path_text,
    problem_lines,
    stdin_once,
)
from asif_convert._compare import RECORD_KEYS, comparable, differences, record_lines
from asif_convert._errors import EXIT_USAGE
from asif_convert._limits import Limits
from asif_convert._lines import Lines
from asif_convert._pipeline import convert, load
from asif_convert._summary import group_losses, summarize
from asif_convert.plugin import Options

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]
_out = Console(highlight=False, soft_wrap=True, markup=False)  # ids and names are data: no [markup] in them


def inspect(file: Annotated[str, typer.Argument(metavar="FILE", parser=path_text,
                                                help="A document, or - for standard input.")],
            to: Annotated[str | None, typer.Option(
                "--to", metavar="FORMAT", help="Dry run: also list the losses converting to this format would record "
                                               "(nothing is written).")] = None,
            as_json: JsonOpt = False, max_bytes: MaxBytesOpt = LIM.max_bytes, max_depth: MaxDepthOpt = LIM.max_depth,
            max_string: MaxStringOpt = LIM.max_string) -> None:
    """Show a document's format, counts, branches, coverage and losses."""
    check_formats(to)
    limits = build_limits(max_bytes, max_depth, max_string)

    def run() -> None:
        data, name = jsonio.read_input(file, limits)
        summary = summarize(data, name, limits)
        if to is not None:
            result = convert(data, to=to, name=name, options=Options(), limits=limits)
            summary["dry_run"] = {"to": to, "losses": group_losses(result.losses)}
        if as_json:
            sys.stdout.buffer.write(jsonio.encode(summary))
        else:
            _print_summary(summary)

    guard(run)


def diff(a: Annotated[str, typer.Argument(metavar="A", parser=path_text,
                                          help="The first document, or - for standard input.")],
         b: Annotated[str, typer.Argument(metavar="B", parser=path_text, help="The second, of the same format.")],
         as_json: JsonOpt = False, max_bytes: MaxBytesOpt = LIM.max_bytes, max_depth: MaxDepthOpt = LIM.max_depth,
         max_string: MaxStringOpt = LIM.max_string) -> None:
    """Show what differs between two documents of one format (records matched by id); exit 1 if any."""
    stdin_once([a, b])
    changes: list[dict[str, Any]] = []
    limits = build_limits(max_bytes, max_depth, max_string)
    name_a, name_b = input_name(a), input_name(b)

    def run() -> None:
        (raw_a, fmt_a, lines_a), (raw_b, fmt_b, lines_b) = (_load(p, limits) for p in (a, b))
        if fmt_a.name != fmt_b.name:
            typer.echo(f"error: {name_a} is {fmt_a.name} but {name_b} is {fmt_b.name}; diff compares documents of one "
                       "format (convert one first)", err=True)
            raise typer.Exit(EXIT_USAGE)
        if raw_a != raw_b:  # equal documents need no structural comparison (which recurses per level)
            changes.extend(differences(raw_a, raw_b, fmt_a.name))
        skipped = {name: lines.problems for name, lines in ((name_a, lines_a), (name_b, lines_b))
                   if lines is not None and lines.problems}
        if as_json:
            sys.stdout.buffer.write(jsonio.encode({"equal": not changes, "format": fmt_a.name, "changes": changes,
                                                   **({"not_compared": {name: [p.line for p in found] for name, found
                                                                        in skipped.items()}} if skipped else {})}))
        elif not changes:
            _out.print("no differences")
        else:
            where = (record_lines(lines_a), record_lines(lines_b))
            _print_tree(changes, fmt_a.name, f"{name_a} → {name_b}: {len(changes)} differences", where)
        for name, found in skipped.items():  # (what is no record is not compared: said, never silent)
            typer.echo(f"note: {name}: {len(found)} line(s) that are no record, not compared: "
                       + ", ".join(f"line {p.line}" for p in found), err=True)

    guard(run)
    if changes:
        raise typer.Exit(1)


def _load(path: str, limits: Limits) -> tuple[Any, Any, Lines | None]:
    data, name = jsonio.read_input(path, limits)
    raw, fmt = load(data, name=name, limits=limits)
    return comparable(raw), fmt, raw if isinstance(raw, Lines) else None


def _print_summary(s: dict[str, Any]) -> None:
    # (a transcript of JSON Lines has no format version: its header names the format alone)
    version = f" ({s['version']})" if s["version"] is not None else ""
    _out.print(Text.assemble((s["file"], "bold"), f": {s['format']}{version}, session {s['session']['id']!r}"
                             + (f" — {s['session']['title']}" if s["session"]["title"] else "")))
    if "as_asif" in s:
        _print_counts(f"Contents of the {s['format']} document", s["counts"])
    else:
        _print_shape(s)
    _print_losses("Losses recorded in the document", s["losses"])
    if "as_asif" in s:
        _out.print(f"\nAs an ASIF session (what converting this {s['format']} document would produce; "
                   "nothing is written):", style="bold")
        _print_shape(s["as_asif"])
    if "dry_run" in s:
        _print_losses(f"Losses converting to {s['dry_run']['to']} would record", s["dry_run"]["losses"])
    _print_problems(s["problems"])


def _print_problems(problems: list[dict[str, Any]]) -> None:
    """The problems `validate` finds in the document (those that do not stop it being read)."""
    if not problems:
        _out.print("Problems (as validate finds them): none")
        return
    _out.print(f"Problems (as validate finds them): {len(problems)}")
    for line in problem_lines(problems):
        _out.print(line)


def _print_counts(title: str, values: dict[str, Any], extra: dict[str, str] | None = None) -> None:
    counts = Table("what", "count", title=title, title_justify="left")
    for key, value in values.items():
        if isinstance(value, dict):
            value = ", ".join(f"{k} {v}" for k, v in value.items()) or "—"
        counts.add_row(key.replace("_", " "), str(value))
    for key, value in (extra or {}).items():
        counts.add_row(key, value)
    _out.print(counts)


def _print_shape(s: dict[str, Any]) -> None:
    """An ASIF document's counts, branches and coverage (the document's own, or a conversion's)."""
    _print_counts("Contents", s["counts"], {
        "resources by availability": ", ".join(f"{k} {v}" for k, v in s["resources_by_availability"].items()) or "—",
        "usage (delta totals)": ", ".join(f"{k} {v:,}" for k, v in s["usage"]["delta_totals"].items()) or "—",
    })
    branches = Table("branch", "events", "head", title="Branches", title_justify="left")
    for br in s["branches"]:
        branches.add_row(br["id"], str(br["events"]), br["head"] or "—")
    _out.print(branches)
    coverage = Table("scope", "status", "detail", title="Coverage", title_justify="left")
    for c in s["coverage"]:
        coverage.add_row(c["scope"], c["status"], c["detail"])
    _out.print(coverage)


def _print_losses(title: str, losses: dict[str, Any]) -> None:
    if not losses["total"]:
        _out.print(f"{title}: none")
        return
    table = Table("kind", "stage", "count", "examples", title=f"{title}: {losses['total']}", title_justify="left")
    for row in losses["by_kind"]:
        table.add_row(row["kind"], row["stage"], str(row["count"]), ", ".join(row["examples"]))
    _out.print(table)


def _print_tree(changes: list[dict[str, Any]], fmt: str, title: str,
                where: tuple[dict[int, int], dict[int, int]] = ({}, {})) -> None:
    """Differences grouped by collection and record: a record collection's path starts with the
    collection and the record id; a file of JSON Lines', with the record's number and its line
    in each file."""
    typer.echo(title)
    records = RECORD_KEYS.get(fmt, {})
    shown: set[tuple] = set()
    for change in changes:
        path = change["path"]
        if path and isinstance(path[0], int):
            path = [_record(path[0], *where), *path[1:]]
        head = path[:2] if path and path[0] in records and len(path) > 2 else path[:1] if len(path) > 1 else []
        for depth in range(1, len(head) + 1):
            if tuple(head[:depth]) not in shown:
                shown.add(tuple(head[:depth]))
                typer.echo("  " * depth + str(head[depth - 1]))
        rest = "/".join(map(str, path[len(head):]))
        typer.echo("  " * (len(head) + 1) + f"{rest}: {_describe(change)}")


def _record(k: int, lines_a: dict[int, int], lines_b: dict[int, int]) -> str:
    """Record ``k`` of two files of JSON Lines, with its line in each (one, where they agree)."""
    a, b = lines_a.get(k), lines_b.get(k)
    return f"record {k} (line {a})" if a == b or b is None else f"record {k} (line {b} of B)" if a is None \
        else f"record {k} (line {a}; {b} in B)"


def _describe(change: dict[str, Any]) -> str:
    def short(v: Any) -> str:
        text = repr(v)
        return text if len(text) <= 80 else text[:77] + "..."

    match change["change"]:
        case "added":
            return f"added {short(change['new'])}"
        case "removed":
            return f"removed {short(change['old'])}"
        case _:
            return f"{short(change['old'])} → {short(change['new'])}"
