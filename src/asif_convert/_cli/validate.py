"""``validate`` and ``formats``: check documents, list what is installed."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import msgspec
import typer

from asif_convert import _jsonio as jsonio
from asif_convert._cli.common import DEFAULT_LIMITS as LIM
from asif_convert._cli.common import (
    MaxBytesOpt,
    MaxDepthOpt,
    MaxStringOpt,
    build_limits,
    existing_folder,
    guard,
    input_name,
    path_option,
    path_text,
    problem_lines,
    stdin_once,
)
from asif_convert._errors import EXIT_INVALID_INPUT, ConversionError
from asif_convert._limits import Limits
from asif_convert._pipeline import validate_as
from asif_convert._registry import loss_kinds, registry


def formats() -> None:
    """List the installed formats (built-in and plugins) and the loss kinds they record."""
    guard(_formats)


def _formats() -> None:
    formats = registry().values()
    name_w, ext_w = max(len(f.name) for f in formats), max(len(f.extension) for f in formats)
    for fmt in formats:
        typer.echo(f"{fmt.name:<{name_w}}  {fmt.extension:<{ext_w}}  {fmt.description}")
    typer.echo("\nloss kinds (for --fail-on):")
    kinds = loss_kinds()
    width = max(map(len, kinds), default=0)
    for kind, meaning in kinds.items():
        typer.echo(f"  {kind:<{width}}  {meaning}")


def validate(files: Annotated[list[str], typer.Argument(metavar="FILE...", parser=path_text, help="Files to check.")],
             as_json: Annotated[bool, typer.Option("--json", help="Print the problems as JSON.")] = False,
             base_dir: Annotated[Path | None, typer.Option(
                 "--base-dir", metavar="DIR", parser=path_option, callback=existing_folder,
                 help="Also check ASIF resources embedded by path, inside this directory only (paths in documents "
                      "are never opened otherwise).")] = None,
             max_bytes: MaxBytesOpt = LIM.max_bytes, max_depth: MaxDepthOpt = LIM.max_depth,
             max_string: MaxStringOpt = LIM.max_string) -> None:
    """Validate documents against their format's schema and rules; exit 1 when any is invalid."""
    stdin_once(files)
    guard(lambda: _validate(files, as_json, base_dir, build_limits(max_bytes, max_depth, max_string)))


def _validate(files: list[str], as_json: bool, base_dir: Path | None, limits: Limits) -> None:
    results: dict[str, dict[str, Any]] = {}
    for path in files:
        fmt_name: str | None
        try:
            data, name = jsonio.read_input(path, limits)
            fmt_name, problems = validate_as(data, base_dir=base_dir, name=name, limits=limits)
        except ConversionError as exc:
            problems, fmt_name = getattr(exc, "problems", []), None
        valid = not any(p.severity == "error" for p in problems)
        results[input_name(path)] = {"format": fmt_name, "valid": valid, "problems": msgspec.to_builtins(problems)}
    if as_json:
        sys.stdout.buffer.write(jsonio.encode(results))
    else:
        for path, r in results.items():
            count = len(r["problems"])
            status = "valid" if r["valid"] else f"{count} problem{'' if count == 1 else 's'}"
            typer.echo(f"{path} ({r['format'] or _unread(r['problems'])}): {status}")
            for line in problem_lines(r["problems"]):
                typer.echo(line)
        typer.echo(f"{sum(r['valid'] for r in results.values())} valid, "
                   f"{sum(not r['valid'] for r in results.values())} invalid")
    if not all(r["valid"] for r in results.values()):
        raise typer.Exit(EXIT_INVALID_INPUT)


def _unread(problems: list[dict[str, Any]]) -> str:
    """What to call a file no format could be given to: unknown only when it was read."""
    return "unknown format" if any(p["rule"] == "format" for p in problems) else "not read"
