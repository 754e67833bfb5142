"""``from-continuity``, ``to-continuity`` and ``convert``: one document in, one document out."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import msgspec
import typer

from asif_convert import _jsonio as jsonio
from asif_convert._artifacts import MAX_ARTIFACT_BYTES, MAX_ARTIFACTS_TOTAL, remove_files, write_files
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
    QuietOpt,
    ReportOpt,
    StrictOpt,
    ToOpt,
    TrustedInputOpt,
    build_limits,
    build_options,
    check_formats,
    err,
    existing_folder,
    gc_paused,
    guard,
    input_name,
    path_option,
    point_of_no_return,
    size_option,
    warn_input_problems,
)
from asif_convert._errors import InvalidInput, Problem, UsageError
from asif_convert._limits import Limits
from asif_convert._pipeline import FILE_NOT_CARRIED, Result, WrongFormat, convert_into
from asif_convert.plugin import Options

PACKAGE_SUFFIX = ".asif.zip"
ArtifactsRootOpt = Annotated[Path | None, typer.Option(
    "--artifacts-root", metavar="DIR", parser=path_option, callback=existing_folder,
    help="Embed each artifact's file, found by its path inside DIR only (no absolute paths, '..' or links); without "
         "it no file is opened.")]
FilesRootOpt = Annotated[Path | None, typer.Option(
    "--artifacts-root", metavar="DIR", parser=path_option, callback=existing_folder,
    help="Read the files the session embeds by path from DIR (inside it only, checked against their declared size "
         "and sha256), to write them under --artifacts-out; without it no file is opened.")]
ArtifactMaxOpt = Annotated[int, typer.Option(
    "--artifact-max-bytes", metavar="SIZE", parser=size_option, show_default="64M",
    help="Leave an artifact unavailable when its file is larger than this.")]
ArtifactsTotalOpt = Annotated[int, typer.Option(
    "--artifacts-max-total", metavar="SIZE", parser=size_option, show_default="256M",
    help="Read at most this many bytes of artifact files in all.")]
ArtifactsOutOpt = Annotated[Path | None, typer.Option(
    "--artifacts-out", metavar="DIR", parser=path_option,
    help="Write the embedded files back as artifact files, under their paths inside DIR (never outside it).")]
ForceOpt = Annotated[bool, typer.Option("--force", help="Replace existing artifact files.")]
SourcePointersOpt = Annotated[bool, typer.Option(
    "--source-pointers", help="Carry the export itself as a resource (embedded in a package, else by digest) and "
                              "point every event at its record with a JSON Pointer.")]
BothPointersOpt = Annotated[bool, typer.Option(
    "--source-pointers", help="Continuity to ASIF: carry the export as a resource and point every event at its "
                              "record. ASIF to continuity: point every record back at the ASIF records it came from.")]
BackPointersOpt = Annotated[bool, typer.Option(
    "--source-pointers", help="Point every record back at the ASIF records it came from (JSON Pointers, with the "
                              "input's SHA-256), in an 'asif' native state and in the metadata of records with one.")]
PackageOpt = Annotated[bool, typer.Option(
    "--package", help=f"Write an ASIF package (a ZIP of the session and the files it embeds); implied by "
                      f"-o *{PACKAGE_SUFFIX}.")]


def from_continuity(input_path: InPath, output: OutPath = "-", report: ReportOpt = None, strict: StrictOpt = False,
                    compact: CompactOpt = False, no_validate: NoValidateOpt = False,
                    on_loss: OnLossOpt = LossPolicy.warn, fail_on: FailOnOpt = None,
                    max_bytes: MaxBytesOpt = LIM.max_bytes, max_depth: MaxDepthOpt = LIM.max_depth,
                    max_string: MaxStringOpt = LIM.max_string, package: PackageOpt = False,
                    artifacts_root: ArtifactsRootOpt = None, artifact_max_bytes: ArtifactMaxOpt = MAX_ARTIFACT_BYTES,
                    artifacts_max_total: ArtifactsTotalOpt = MAX_ARTIFACTS_TOTAL, force: ForceOpt = False,
                    source_pointers: SourcePointersOpt = False, trusted_input: TrustedInputOpt = False,
                    quiet: QuietOpt = False) -> None:
    """Convert an agent-continuity export into an ASIF 0.4 session."""
    opts = replace(build_options(strict=strict, no_validate=no_validate, on_loss=on_loss, fail_on=fail_on),
                   artifacts_root=artifacts_root, artifact_max_bytes=artifact_max_bytes,
                   artifacts_max_total=artifacts_max_total, source_pointers=source_pointers)
    limits = build_limits(max_bytes, max_depth, max_string, trusted_input)
    guard(lambda: _run(input_path, output, "asif", source="continuity", report=report, options=opts,
                       compact=compact, limits=limits, command="from-continuity", package=package, force=force,
                       quiet=quiet))


def to_continuity(input_path: InPath, output: OutPath = "-", report: ReportOpt = None, strict: StrictOpt = False,
                  compact: CompactOpt = False, no_validate: NoValidateOpt = False,
                  on_loss: OnLossOpt = LossPolicy.warn, fail_on: FailOnOpt = None, no_residual: NoResidualOpt = False,
                  max_bytes: MaxBytesOpt = LIM.max_bytes, max_depth: MaxDepthOpt = LIM.max_depth,
                  max_string: MaxStringOpt = LIM.max_string, artifacts_out: ArtifactsOutOpt = None,
                  artifacts_root: FilesRootOpt = None, artifact_max_bytes: ArtifactMaxOpt = MAX_ARTIFACT_BYTES,
                  artifacts_max_total: ArtifactsTotalOpt = MAX_ARTIFACTS_TOTAL,
                  force: ForceOpt = False, source_pointers: BackPointersOpt = False,
                  trusted_input: TrustedInputOpt = False, quiet: QuietOpt = False) -> None:
    """Convert an ASIF 0.4 session (or package) into an agent-continuity export."""
    opts = replace(build_options(strict=strict, no_validate=no_validate, on_loss=on_loss, fail_on=fail_on,
                                 no_residual=no_residual), source_pointers=source_pointers,
                   artifacts_root=artifacts_root, artifact_max_bytes=artifact_max_bytes,
                   artifacts_max_total=artifacts_max_total)
    limits = build_limits(max_bytes, max_depth, max_string, trusted_input)
    guard(lambda: _run(input_path, output, "continuity", source="asif", report=report, options=opts,
                       compact=compact, limits=limits, command="to-continuity", artifacts_out=artifacts_out,
                       force=force, quiet=quiet))


def convert_command(input_path: InPath, to: ToOpt, output: OutPath = "-", source: FromOpt = None,
                    report: ReportOpt = None, strict: StrictOpt = False, compact: CompactOpt = False,
                    no_validate: NoValidateOpt = False, on_loss: OnLossOpt = LossPolicy.warn,
                    fail_on: FailOnOpt = None, no_residual: NoResidualOpt = False,
                    max_bytes: MaxBytesOpt = LIM.max_bytes, max_depth: MaxDepthOpt = LIM.max_depth,
                    max_string: MaxStringOpt = LIM.max_string, package: PackageOpt = False,
                    artifacts_root: ArtifactsRootOpt = None, artifact_max_bytes: ArtifactMaxOpt = MAX_ARTIFACT_BYTES,
                    artifacts_max_total: ArtifactsTotalOpt = MAX_ARTIFACTS_TOTAL,
                    artifacts_out: ArtifactsOutOpt = None, force: ForceOpt = False,
                    source_pointers: BothPointersOpt = False, trusted_input: TrustedInputOpt = False,
                    quiet: QuietOpt = False) -> None:
    """Convert between any two installed formats; the input format is detected unless --from."""
    check_formats(to, source)
    opts = replace(build_options(strict=strict, no_validate=no_validate, on_loss=on_loss, fail_on=fail_on,
                                 no_residual=no_residual),
                   artifacts_root=artifacts_root, artifact_max_bytes=artifact_max_bytes,
                   artifacts_max_total=artifacts_max_total, source_pointers=source_pointers)
    limits = build_limits(max_bytes, max_depth, max_string, trusted_input)
    guard(lambda: _run(input_path, output, to, source=source, report=report, options=opts, compact=compact,
                       limits=limits, package=package, artifacts_out=artifacts_out, force=force, quiet=quiet))


# The command that reads each built-in format; a plugin format is read with 'convert'.
_READS = {"continuity": "from-continuity", "asif": "to-continuity"}


def _run(input_path: str, output: str, to: str, *, source: str | None, report: str | None,
         options: Options, compact: bool, limits: Limits, command: str = "convert", package: bool = False,
         artifacts_out: Path | None = None, force: bool = False, quiet: bool = False) -> None:
    jsonio.check_paths(input_path, output, report)
    # A file is read by convert() itself, which lets its bytes go once they are decoded; standard
    # input is read here.
    data: bytes | Path = Path(input_path) if input_path != "-" else jsonio.read_input(input_path, limits)[0]
    name = input_name(input_path)
    package = package or output.endswith(PACKAGE_SUFFIX)
    # A file output may be written while it is made (a temp file, put in place at the end): then
    # it never exists whole in memory. Standard output gets it whole, once the conversion succeeded.
    pending = jsonio.PendingOutput(output) if output != "-" else None
    report_pending = jsonio.PendingOutput(report) if report is not None and report != "-" else None
    created: list[Path] = []  # the files beside the output: taken back if the output fails
    try:
        try:
            with gc_paused():
                result = convert_into(data, pending, to=to, source=source, options=options, name=name,
                                      compact=compact, limits=limits, package=package)
        except WrongFormat as exc:
            raise InvalidInput([Problem(rule="format", path="", message=_other_format(exc, input_path, to,
                                                                                      command))], name) from None
        size = pending.size if pending is not None and result.streamed else len(result.output)
        if result.files and not package:  # a plain ASIF document: its files go beside it, written first
            if output == "-":
                raise UsageError("the session embeds files by path: write it to a file (-o) or a package "
                                 f"(-o *{PACKAGE_SUFFIX}), not to standard output")
            created += write_files(Path(output).parent, result.files, force=force, create=False)
        if artifacts_out is not None and result.artifacts:  # (no empty folder: nothing to write is said)
            created += write_files(artifacts_out, result.artifacts, force=force)
        if pending is not None and not result.streamed:
            pending.write(result.output)
        if report is not None:
            report_bytes = jsonio.encode(_report(result, name))
            if report_pending is None:
                jsonio.write_output("-", report_bytes)
            else:
                report_pending.write(report_bytes)
        # Standard output, devices and pipes are written now: they cannot be taken back, and a
        # reader may keep them waiting, so an interrupt must still reach them.
        if pending is None:
            jsonio.write_output("-", result.output)
        for target in (pending, report_pending):
            if target is not None and target.in_place:
                target.commit()
        point_of_no_return()  # files are put in place, and said so
        for target in (pending, report_pending):
            if target is not None and not target.in_place:
                target.commit()
        created.clear()  # the output is in place: what came with it stays
        if not quiet:
            _tell(result, name, output, options, size, limits, artifacts_out is not None)
    finally:
        _clean_up(created, [t for t in (pending, report_pending) if t is not None])


def _clean_up(created: list[Path], targets: list[jsonio.PendingOutput]) -> None:
    """Remove what a failed run wrote, and the temp files (nothing once committed)."""
    remove_files(created)
    for target in targets:
        target.discard()


def _tell(result: Result, name: str, output: str, options: Options, size: int, limits: Limits,
          artifacts_written: bool) -> None:
    """The summary on standard error, once the output is in place."""
    err(_summary(result, name, output, options.on_loss, size))
    void = sorted(options.fail_on - result.possible_kinds)
    if void:  # accepted (the same flags may serve both directions), but never silently void
        can = (f"it can record {', '.join(sorted(result.possible_kinds))}" if result.possible_kinds
               else "a checked copy records none")
        err(f"  note: --fail-on {', '.join(void)}: converting {result.source_format} to {result.target_format} "
            f"records no loss of {'this kind' if len(void) == 1 else 'these kinds'}; {can}")
    _tell_files(result, artifacts_written, options.on_loss)
    warn_input_problems(result.warnings)
    if size > limits.max_bytes:
        err(f"  note: the output is {size:,} bytes, more than --max-bytes {limits.max_bytes:,}: "
            "give a larger --max-bytes to read it back")


def _tell_files(result: Result, artifacts_written: bool, on_loss: str) -> None:
    """Name every file the session embeds by path that did not come with the output (a loss:
    said unless --on-loss ignore; --report lists them too; docs/packages.md, *Files named by
    path*), and the files at hand that were not written."""
    for loss in result.losses:
        if loss.kind == FILE_NOT_CARRIED and on_loss != "ignore":
            err(f"  note: {loss.explanation.partition(': ')[2]}")
    if result.artifacts and not artifacts_written:
        names = ", ".join(sorted(result.artifacts)[:5]) + (", ..." if len(result.artifacts) > 5 else "")
        err(f"  note: {len(result.artifacts)} embedded files were not written as files of their own ({names}): "
            "give --artifacts-out DIR to write them")


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


def _summary(result: Result, name: str, output: str, on_loss: str, size: int) -> str:
    unit = _UNITS.get(result.target_format)
    if unit is not None and unit in result.counts:  # counted as written: the document is never decoded here
        shown = f"{result.counts[unit]} {unit}"
    else:
        shown = f"{size:,} bytes"
    counts = ", ".join(f"{k} {v}" for k, v in sorted(result.loss_counts().items()))
    dest = "stdout" if output == "-" else output
    copy = ", a checked copy of the input" if result.source_format == result.target_format else ""
    line = f"{name} -> {dest} ({result.target_format}{copy}): {shown}"
    if on_loss != "ignore":
        line += f", {len(result.losses)} losses" + (f" ({counts})" if counts else "")
    return line
