"""The ``asif-convert`` command line.

Exit codes: 0 done (losses are normal), 1 invalid input or refused conversion, 2 usage error,
3 internal error (asif-convert produced something invalid: a bug).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import msgspec
import typer

from . import __version__, batch_cli, inspect_cli, jsonio
from .convert import Result, convert, load
from .errors import EXIT_INTERNAL, EXIT_INVALID_INPUT, EXIT_USAGE, ConversionError, InvalidInput, Problem
from .formats.base import Options, registry
from .limits import DEPTH_CEILING, Limits, parse_size

app = typer.Typer(
    name="asif-convert",
    help="Convert AI-agent sessions between agent-continuity exports and ASIF 0.4 session documents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

InPath = Annotated[str, typer.Argument(metavar="IN", help="Input file, or - for standard input.")]
OutPath = Annotated[str, typer.Option("-o", "--output", metavar="OUT", help="Output file, or - for standard output.")]
ReportOpt = Annotated[Path | None, typer.Option("--report", help="Also write the losses as a JSON report here.")]
StrictOpt = Annotated[bool, typer.Option("--strict", help="Refuse inputs with referential problems instead of "
                                                         "recording them as losses.")]
CompactOpt = Annotated[bool, typer.Option("--compact", help="Write compact JSON instead of indented JSON.")]
NoValidateOpt = Annotated[bool, typer.Option("--no-validate", help="Skip validating the output (trusted batch runs).")]
OnLossOpt = Annotated[str, typer.Option(
    "--on-loss", help="ignore: say nothing of losses; warn: one summary line with counts by kind; "
                      "error: refuse (exit 4, nothing written) when any loss would be recorded.")]
FailOnOpt = Annotated[list[str] | None, typer.Option(
    "--fail-on", metavar="KIND", help="Refuse (exit 4, nothing written) when a loss of this kind would be "
                                      "recorded; repeatable.")]
NoResidualOpt = Annotated[bool, typer.Option(
    "--no-residual", help="When writing continuity: leave out what it cannot express (each part is then a 'dropped' "
                          "loss) instead of carrying it for an exact return trip.")]
_DEFAULT = Limits()


def _size(text: str) -> int:
    try:
        value = parse_size(text)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    if value < 1:
        raise typer.BadParameter("must be at least 1 byte")
    return value


MaxBytesOpt = Annotated[int, typer.Option(
    "--max-bytes", metavar="SIZE", parser=_size, show_default=f"{_DEFAULT.max_bytes >> 20}M",
    help="Refuse inputs larger than this many bytes (K, M, G: KiB, MiB, GiB).")]
MaxDepthOpt = Annotated[int, typer.Option(
    "--max-depth", min=1, max=DEPTH_CEILING,
    help=f"Refuse inputs whose arrays and objects nest deeper than this (at most {DEPTH_CEILING}).")]
MaxStringOpt = Annotated[int, typer.Option(
    "--max-string", metavar="SIZE", parser=_size, show_default=f"{_DEFAULT.max_string >> 20}M",
    help="Refuse inputs with a string (or key) longer than this many characters.")]


def _err(message: str) -> None:
    typer.echo(message, err=True)


def _fail(exc: ConversionError) -> typer.Exit:
    problems: list[Problem] = getattr(exc, "problems", [])
    _err(f"error: {exc.source}: invalid input" if isinstance(exc, InvalidInput) else f"error: {exc}")
    for p in problems[:50]:
        _err(f"  {p.render()}")
    if len(problems) > 50:
        _err(f"  ... and {len(problems) - 50} more")
    return typer.Exit(exc.exit_code)


def _run(input_path: str, output: str, to: str, *, source: str | None, report: Path | None,
         options: Options, compact: bool, limits: Limits | None = None) -> None:
    jsonio.check_paths(input_path, output, report)
    data, name = jsonio.read_input(input_path, limits)
    result = convert(data, to=to, source=source, options=options, name=name, compact=compact, limits=limits)
    if report is not None:
        jsonio.write_output(str(report), jsonio.encode(_report(result, name)))
    jsonio.write_output(output, result.output)
    _summary(result, name, output, options.on_loss)


def _report(result: Result, name: str) -> dict:
    return {
        "source": Path(name).name,
        "source_format": result.source_format,
        "target_format": result.target_format,
        "loss_counts": dict(sorted(result.loss_counts().items())),
        "losses": msgspec.to_builtins(result.losses),
        "warnings": msgspec.to_builtins(result.warnings),
    }


def _options(strict: bool, no_validate: bool, on_loss: str, fail_on: list[str] | None,
             no_residual: bool = False) -> Options:
    if on_loss not in ("ignore", "warn", "error"):
        raise typer.BadParameter(f"{on_loss!r} is not one of ignore, warn, error", param_hint="--on-loss")
    return Options(strict=strict, validate=not no_validate, residual=not no_residual, on_loss=on_loss,
                   fail_on=frozenset(fail_on or ()))


def _summary(result: Result, name: str, output: str, on_loss: str) -> None:
    doc = result.document
    n_events = len(doc.get("events", [])) if result.target_format == "asif" else len(doc.get("messages", []))
    unit = "events" if result.target_format == "asif" else "messages"
    counts = ", ".join(f"{k} {v}" for k, v in sorted(result.loss_counts().items()))
    dest = "stdout" if output == "-" else output
    line = f"{name} -> {dest} ({result.target_format}): {n_events} {unit}"
    if on_loss != "ignore":
        line += f", {len(result.losses)} losses" + (f" ({counts})" if counts else "")
    _err(line)
    if result.warnings:
        _err(f"  {len(result.warnings)} input problems were recorded as losses (use --strict to refuse):")
        for p in result.warnings[:10]:
            _err(f"  warning: {p.render()}")


def _guard(fn) -> None:
    """Run ``fn``; turn our errors into messages and exit codes, and never show a traceback."""
    try:
        fn()
    except ConversionError as exc:
        raise _fail(exc) from None
    except (KeyboardInterrupt, typer.Exit):
        raise
    except Exception as exc:  # a bug: say so briefly, keep the traceback for those who ask
        if os.environ.get("ASIF_CONVERT_DEBUG"):
            raise
        _err(f"internal error: {type(exc).__name__}: {exc} (set ASIF_CONVERT_DEBUG=1 for details; please report)")
        raise typer.Exit(EXIT_INTERNAL) from None


@app.command("from-continuity")
def from_continuity(input_path: InPath, output: OutPath = "-", report: ReportOpt = None, strict: StrictOpt = False,
                    compact: CompactOpt = False, no_validate: NoValidateOpt = False, on_loss: OnLossOpt = "warn",
                    fail_on: FailOnOpt = None, max_bytes: MaxBytesOpt = _DEFAULT.max_bytes,
                    max_depth: MaxDepthOpt = _DEFAULT.max_depth,
                    max_string: MaxStringOpt = _DEFAULT.max_string) -> None:
    """Convert an agent-continuity export into an ASIF 0.4 session."""
    opts = _options(strict, no_validate, on_loss, fail_on)
    limits = Limits(max_bytes=max_bytes, max_depth=max_depth, max_string=max_string)
    _guard(lambda: _run(input_path, output, "asif", source="continuity", report=report, options=opts,
                        compact=compact, limits=limits))


@app.command("to-continuity")
def to_continuity(input_path: InPath, output: OutPath = "-", report: ReportOpt = None, strict: StrictOpt = False,
                  compact: CompactOpt = False, no_validate: NoValidateOpt = False, on_loss: OnLossOpt = "warn",
                  fail_on: FailOnOpt = None, no_residual: NoResidualOpt = False,
                  max_bytes: MaxBytesOpt = _DEFAULT.max_bytes, max_depth: MaxDepthOpt = _DEFAULT.max_depth,
                  max_string: MaxStringOpt = _DEFAULT.max_string) -> None:
    """Convert an ASIF 0.4 session into an agent-continuity export."""
    opts = _options(strict, no_validate, on_loss, fail_on, no_residual)
    limits = Limits(max_bytes=max_bytes, max_depth=max_depth, max_string=max_string)
    _guard(lambda: _run(input_path, output, "continuity", source="asif", report=report, options=opts,
                        compact=compact, limits=limits))


@app.command("convert")
def convert_cmd(input_path: InPath, to: Annotated[str, typer.Option("--to", help="Target format (see 'formats').")],
                output: OutPath = "-",
                source: Annotated[str | None, typer.Option("--from", help="Force the input format.")] = None,
                report: ReportOpt = None, strict: StrictOpt = False, compact: CompactOpt = False,
                no_validate: NoValidateOpt = False, on_loss: OnLossOpt = "warn", fail_on: FailOnOpt = None,
                no_residual: NoResidualOpt = False, max_bytes: MaxBytesOpt = _DEFAULT.max_bytes,
                max_depth: MaxDepthOpt = _DEFAULT.max_depth, max_string: MaxStringOpt = _DEFAULT.max_string) -> None:
    """Convert between any two installed formats; the input format is detected unless --from."""
    for name in filter(None, (to, source)):
        if name not in registry():
            _err(f"error: unknown format {name!r}; installed: {', '.join(sorted(registry()))}")
            raise typer.Exit(EXIT_USAGE)
    opts = _options(strict, no_validate, on_loss, fail_on, no_residual)
    limits = Limits(max_bytes=max_bytes, max_depth=max_depth, max_string=max_string)
    _guard(lambda: _run(input_path, output, to, source=source, report=report, options=opts, compact=compact,
                        limits=limits))


@app.command("formats")
def formats() -> None:
    """List the installed formats (built-in and plugins)."""
    for fmt in registry().values():
        typer.echo(f"{fmt.name:<12} {fmt.extension:<18} {fmt.description}")


@app.command("validate")
def validate(files: Annotated[list[str], typer.Argument(metavar="FILE...", help="Files to check.")],
             as_json: Annotated[bool, typer.Option("--json", help="Print the problems as JSON.")] = False,
             base_dir: Annotated[Path | None, typer.Option(
                 "--base-dir", help="Also check ASIF resources embedded by path, inside this directory only "
                                    "(paths in documents are never opened otherwise).")] = None) -> None:
    """Validate documents against their format's schema and rules; exit 1 when any is invalid."""
    from .validation import validate as validate_document

    results: dict[str, dict] = {}
    for path in files:
        try:
            data, name = jsonio.read_input(path)
            raw, fmt = load(data, name=name)
            problems, fmt_name = validate_document(raw, format=fmt.name, base_dir=base_dir), fmt.name
        except ConversionError as exc:
            problems, fmt_name = getattr(exc, "problems", []), None
        valid = not any(p.severity == "error" for p in problems)
        results[path] = {"format": fmt_name, "valid": valid, "problems": msgspec.to_builtins(problems)}
    if as_json:
        sys.stdout.buffer.write(jsonio.encode(results))
    else:
        for path, r in results.items():
            status = "valid" if r["valid"] else f"{len(r['problems'])} problems"
            typer.echo(f"{path} ({r['format'] or 'unknown format'}): {status}")
            for p in r["problems"]:
                level = "warning: " if p.get("severity") == "warning" else ""
                typer.echo(f"  {level}{p['path'] or '/'}: {p['message']} [{p['rule']}]")
        typer.echo(f"{sum(r['valid'] for r in results.values())} valid, "
                   f"{sum(not r['valid'] for r in results.values())} invalid")
    if not all(r["valid"] for r in results.values()):
        raise typer.Exit(EXIT_INVALID_INPUT)


app.command("batch")(batch_cli.batch)
app.command("inspect")(inspect_cli.inspect)
app.command("diff")(inspect_cli.diff)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"asif-convert {__version__}")
        raise typer.Exit()


@app.callback()
def main(version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                               help="Print the version and exit.")] = False) -> None:
    """Convert AI-agent sessions between agent-continuity exports and ASIF 0.4 session documents."""


def run() -> None:  # console-script entry point
    app()

