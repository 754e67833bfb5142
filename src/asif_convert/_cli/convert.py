"""``from-continuity``, ``to-continuity`` and ``convert``: one document in, one document out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from asif_convert import _jsonio as jsonio
from asif_convert._cli.common import (
    DEFAULT_LIMITS as LIM,
)
from asif_convert._cli.common import (
    CompactOpt,
    FailOnOpt,
    FromOpt,
    InPath,
    LossPolicy,
    MaxBytesOpt,
    MaxDepthOpt,
    MaxStringOpt,
    NoResidualOpt,
    NoValidateOpt,
    OnLossOpt,
    OutPath,
    ReportOpt,
    StrictOpt,
    ToOpt,
    build_limits,
    build_options,
    check_formats,
    err,
    gc_paused,
    guard,
)
from asif_convert._errors import InvalidInput, Problem
from asif_convert._limits import Limits
from asif_convert._pipeline import Result, WrongFormat, convert
from asif_convert.plugin import Options


def from_continuity(input_path: InPath, output: OutPath = "-", report: ReportOpt = None, strict: StrictOpt = False,
                    compact: CompactOpt = False, no_validate: NoValidateOpt = False,
                    on_loss: OnLossOpt = LossPolicy.warn, fail_on: FailOnOpt = None,
                    max_bytes: MaxBytesOpt = LIM.max_bytes, max_depth: MaxDepthOpt = LIM.max_depth,
                    max_string: MaxStringOpt = LIM.max_string) -> None:
    """Convert an agent-continuity export into an ASIF 0.4 session."""
    opts = build_options(strict=strict, no_validate=no_validate, on_loss=on_loss, fail_on=fail_on)
    limits = build_limits(max_bytes, max_depth, max_string)
    guard(lambda: _run(input_path, output, "asif", source="continuity", report=report, options=opts,
                       compact=compact, limits=limits, command="from-continuity"))


def to_continuity(input_path: InPath, output: OutPath = "-", report: ReportOpt = None, strict: StrictOpt = False,
                  compact: CompactOpt = False, no_validate: NoValidateOpt = False,
                  on_loss: OnLossOpt = LossPolicy.warn, fail_on: FailOnOpt = None, no_residual: NoResidualOpt = False,
                  max_bytes: MaxBytesOpt = LIM.max_bytes, max_depth: MaxDepthOpt = LIM.max_depth,
                  max_string: MaxStringOpt = LIM.max_string) -> None:
    """Convert an ASIF 0.4 session into an agent-continuity export."""
    opts = build_options(strict=strict, no_validate=no_validate, on_loss=on_loss, fail_on=fail_on,
                         no_residual=no_residual)
    limits = build_limits(max_bytes, max_depth, max_string)
    guard(lambda: _run(input_path, output, "continuity", source="asif", report=report, options=opts,
                       compact=compact, limits=limits, command="to-continuity"))


def convert_command(input_path: InPath, to: ToOpt, output: OutPath = "-", source: FromOpt = None,
                    report: ReportOpt = None, strict: StrictOpt = False, compact: CompactOpt = False,
                    no_validate: NoValidateOpt = False, on_loss: OnLossOpt = LossPolicy.warn,
                    fail_on: FailOnOpt = None, no_residual: NoResidualOpt = False,
                    max_bytes: MaxBytesOpt = LIM.max_bytes, max_depth: MaxDepthOpt = LIM.max_depth,
                    max_string: MaxStringOpt = LIM.max_string) -> None:
    """Convert between any two installed formats; the input format is detected unless --from."""
    check_formats(to, source)
    opts = build_options(strict=strict, no_validate=no_validate, on_loss=on_loss, fail_on=fail_on,
                         no_residual=no_residual)
    limits = build_limits(max_bytes, max_depth, max_string)
    guard(lambda: _run(input_path, output, to, source=source, report=report, options=opts, compact=compact,
                       limits=limits))


# The command that reads each built-in format; a plugin format is read with 'convert'.
_READS = {"continuity": "from-continuity", "asif": "to-continuity"}


def _run(input_path: str, output: str, to: str, *, source: str | None, report: Path | None,
         options: Options, compact: bool, limits: Limits, command: str = "convert") -> None:
    jsonio.check_paths(input_path, output, report)
    data, name = jsonio.read_input(input_path, limits)
    try:
        with gc_paused():
            result = convert(data, to=to, source=source, options=options, name=name, compact=compact,
                             limits=limits)
    except WrongFormat as exc:
        raise InvalidInput([Problem(rule="format", path="", message=_other_format(exc, input_path, to, command))],
                           name) from None
    summary = _summary(result, name, output, options.on_loss)  # before writing: nothing may fail after
    if report is not None:
        jsonio.write_output(str(report), jsonio.encode(_report(result, name)))
    jsonio.write_output(output, result.output)
    err(summary)
    if result.warnings:
        err(f"  {len(result.warnings)} input problems were recorded as losses (use --strict to refuse):")
        for p in result.warnings[:10]:
            err(f"  warning: {p.render()}")
    if len(result.output) > limits.max_bytes:
        err(f"  note: the output is {len(result.output):,} bytes, more than --max-bytes {limits.max_bytes:,}: "
            "give a larger --max-bytes to read it back")


def _other_format(exc: WrongFormat, input_path: str, to: str, command: str) -> str:
    """One line for a document given to the command for another format: what it is, and the
    command that reads it."""
    found = exc.found.name
    if command == "convert":
        return f"{exc.what}; leave out --from to read it as {found}" + (
            f" (it is already {to}: the output would be a checked copy)" if found == to else "")
    reader = _READS.get(found)
    run = f"asif-convert {reader} {input_path}" if reader else f"asif-convert convert {input_path} --to {to}"
    return f"{exc.what}; to convert it, run: {run}"


def _report(result: Result, name: str) -> dict[str, Any]:
    return {
        "source": Path(name).name,
        "source_format": result.source_format,
        "target_format": result.target_format,
        "loss_counts": dict(sorted(result.loss_counts().items())),
        "losses": msgspec.to_builtins(result.losses),
        "warnings": msgspec.to_builtins(result.warnings),
    }


# What the summary line counts in each built-in format's output (a plugin's output: its bytes).
_UNITS = {"asif": "events", "continuity": "messages"}


def _summary(result: Result, name: str, output: str, on_loss: str) -> str:
    unit = _UNITS.get(result.target_format)
    doc = result.document
    if unit is not None and isinstance(doc, dict) and isinstance(doc.get(unit), list):
        size = f"{len(doc[unit])} {unit}"
    else:
        size = f"{len(result.output):,} bytes"
    counts = ", ".join(f"{k} {v}" for k, v in sorted(result.loss_counts().items()))
    dest = "stdout" if output == "-" else output
    copy = ", a checked copy of the input" if result.source_format == result.target_format else ""
    line = f"{name} -> {dest} ({result.target_format}{copy}): {size}"
    if on_loss != "ignore":
        line += f", {len(result.losses)} losses" + (f" ({counts})" if counts else "")
    return line
