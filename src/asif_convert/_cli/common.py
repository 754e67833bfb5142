"""What every command shares: option types, the loss policy, error handling and exit codes.

Exit codes (documented in the README): 0 done (losses are normal), 1 invalid input or refused
conversion or request, 2 usage error, 3 internal error (a bug of ours), 4 refused by the loss policy, 130
interrupted (Ctrl-C or SIGTERM).
"""

from __future__ import annotations

import gc
import os
import signal
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import msgspec
import typer

from asif_convert._errors import (
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_INVALID_INPUT,
    EXIT_USAGE,
    STDIN,
    ConversionError,
    InvalidInput,
    Problem,
    RequestRefused,
    display_name,
)
from asif_convert._limits import DEPTH_CEILING, Limits, parse_size

if TYPE_CHECKING:
    from asif_convert.plugin import Options

DEBUG_VARIABLE = "ASIF_CONVERT_DEBUG"


class LossPolicy(StrEnum):
    """What a recorded loss means for a conversion."""

    ignore = "ignore"  # say nothing of losses
    warn = "warn"  # one summary line with counts by kind
    error = "error"  # refuse (exit 4, nothing written) when any loss would be recorded


def size_option(text: str) -> int:
    try:
        value = parse_size(text)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    if value < 1:
        raise typer.BadParameter("must be at least 1")  # (bytes or characters: the option says which)
    return value


def whole_number(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise typer.BadParameter(f"{text!r} is not a whole number") from None


def depth_option(text: str) -> int:
    value = whole_number(text)
    if not 1 <= value <= DEPTH_CEILING:
        raise typer.BadParameter(f"must be from 1 to {DEPTH_CEILING} levels")
    return value


def path_text(text: str) -> str:
    """A path option's or argument's value, which must not be empty: ``Path("")`` is the
    current folder, so an empty value would silently mean it."""
    if not text:
        raise typer.BadParameter("is empty: name a path")
    return text


def path_option(text: str) -> Path:
    """:func:`path_text`, as a ``Path``."""
    return Path(path_text(text))


def existing_folder(value: Path | None) -> Path | None:
    """A folder option's value, which must name a folder: a misspelled one would otherwise
    mean silently that no file in it is found."""
    if value is not None and not value.is_dir():
        raise typer.BadParameter(f"{str(value)!r} is not a folder" if value.exists() else
                                 f"there is no folder {str(value)!r}")
    return value


DEFAULT_LIMITS = Limits()

InPath = Annotated[str, typer.Argument(metavar="IN", parser=path_text, help="Input file, or - for standard input.")]
OutPath = Annotated[str, typer.Option("-o", "--output", metavar="OUT", parser=path_text,
                                      help="Output file, or - for standard output.")]
ReportOpt = Annotated[str | None, typer.Option("--report", metavar="PATH", parser=path_text,
                                                help="Also write the losses as a JSON report here.")]
QuietOpt = Annotated[bool, typer.Option("-q", "--quiet", help="Print nothing on standard error but errors.")]
ToOpt = Annotated[str, typer.Option("--to", metavar="FORMAT", help="Target format (see 'formats').")]
FromOpt = Annotated[str | None, typer.Option("--from", metavar="FORMAT",
                                             help="Force the input format (default: detected).")]
StrictOpt = Annotated[bool, typer.Option("--strict", help="Refuse inputs with referential problems, and what the "
                                                         "conversion warns of, instead of recording them as losses.")]
CompactOpt = Annotated[bool, typer.Option("--compact", help="Write compact JSON instead of indented JSON.")]
NoValidateOpt = Annotated[bool, typer.Option("--no-validate", help="Skip validating the output (trusted batch runs).")]
OnLossOpt = Annotated[LossPolicy, typer.Option(
    "--on-loss", help="ignore: say nothing of losses; warn: one summary line with counts by kind; "
                      "error: refuse (exit 4, nothing written) when any loss would be recorded.")]
FailOnOpt = Annotated[list[str] | None, typer.Option(
    "--fail-on", metavar="KIND", help="Refuse (exit 4, nothing written) when a loss of this kind would be "
                                      "recorded; repeatable ('formats' lists the kinds).")]
NoResidualOpt = Annotated[bool, typer.Option(
    "--no-residual", help="When writing continuity: leave out what it cannot express (each part is then a 'dropped' "
                          "loss) instead of carrying it for an exact return trip.")]
MaxBytesOpt = Annotated[int, typer.Option(
    "--max-bytes", metavar="SIZE", parser=size_option, show_default=f"{DEFAULT_LIMITS.max_bytes >> 20}M",
    help="Refuse inputs larger than this many bytes (K, M, G: KiB, MiB, GiB).")]
MaxDepthOpt = Annotated[int, typer.Option(
    "--max-depth", metavar="N", parser=depth_option, show_default=str(DEFAULT_LIMITS.max_depth),
    help=f"Refuse inputs whose arrays and objects nest deeper than this (at most {DEPTH_CEILING}).")]
TrustedInputOpt = Annotated[bool, typer.Option(
    "--trusted-input", help="Skip the checks of depth, integer range, string length and duplicate keys on the "
                            "input (its producer vouches for it); size, JSON syntax, schema and output checks "
                            "still apply.")]
MaxStringOpt = Annotated[int, typer.Option(
    "--max-string", metavar="SIZE", parser=size_option, show_default=f"{DEFAULT_LIMITS.max_string >> 20}M",
    help="Refuse inputs with a string (or key) longer than this many characters.")]


def err(message: str) -> None:
    try:
        typer.echo(message, err=True)
    except OSError:  # no one can read standard error any more: what was done stays done
        pass


def warn_input_problems(problems: list[Problem]) -> None:
    """The warnings of a conversion, under the summary (the first ten): the input's problems that
    did not refuse it, and what the conversion itself warns of (converter state it set aside)."""
    if problems:
        count = len(problems)
        err(f"  {count} warning{'s' if count > 1 else ''} (a problem of the input is recorded as a loss; "
            "--strict refuses it):")
        for p in problems[:10]:
            err(f"  warning: {p.render()}")


def problem_lines(problems: list[dict[str, Any]]) -> list[str]:
    """Problems as JSON (``validate --json``), one indented line each, warnings marked."""
    return [f"  {'warning: ' if p.get('severity') == 'warning' else ''}{msgspec.convert(p, Problem).render()}"
            for p in problems]


def usage_error(message: str) -> NoReturn:
    err(f"error: {message}")
    raise typer.Exit(EXIT_USAGE)


def input_name(path: str) -> str:
    """How messages name an input the user gave: ``-`` is standard input, named as everywhere."""
    return STDIN if path == "-" else display_name(path)


def stdin_once(paths: list[str]) -> None:
    """Standard input is read once: ``-`` named twice is a usage error (exit 2), the same in every
    command that takes several inputs."""
    if paths.count("-") > 1:
        usage_error(f"{input_name('-')} (-) is named {paths.count('-')} times; it can be read only once")


def check_formats(*names: str | None) -> None:
    """Unknown format names are a usage error (exit 2) that lists the installed ones."""
    from asif_convert._registry import get  # (the formats: imported by the commands that use them)

    for name in filter(None, names):
        try:
            get(name)
        except ConversionError as exc:
            usage_error(str(exc))


def build_options(*, strict: bool, no_validate: bool, on_loss: LossPolicy, fail_on: list[str] | None,
                  no_residual: bool = False) -> Options:
    from asif_convert._registry import loss_kinds  # (the formats: imported by the commands that use them)
    from asif_convert.plugin import Options

    if fail_on:  # (the kinds are every mapping table's: read only when asked for)
        known = loss_kinds()
        unknown = sorted(set(fail_on) - set(known))
        if unknown:
            raise typer.BadParameter(f"unknown loss kind {', '.join(map(repr, unknown))}; known kinds: "
                                     f"{', '.join(known)}", param_hint="'--fail-on'")
    return Options(strict=strict, validate=not no_validate, residual=not no_residual, on_loss=on_loss.value,
                   fail_on=frozenset(fail_on or ()))


def build_limits(max_bytes: int, max_depth: int, max_string: int, trusted: bool = False) -> Limits:
    return Limits(max_bytes=max_bytes, max_depth=max_depth, max_string=max_string, trusted=trusted)


def _fail(exc: ConversionError) -> typer.Exit:
    problems: list[Problem] = getattr(exc, "problems", [])
    err(f"error: {exc.source}: invalid input" if isinstance(exc, InvalidInput) else
        f"error: {exc.source}: request refused" if isinstance(exc, RequestRefused) else f"error: {exc}")
    for p in problems[:50]:
        err(f"  {p.render()}")
    if len(problems) > 50:
        err(f"  ... and {len(problems) - 50} more")
    return typer.Exit(exc.exit_code)


def guard(fn: Callable[[], object]) -> None:
    """Run ``fn``; turn our errors into messages and exit codes, and never show a traceback
    (unless ASIF_CONVERT_DEBUG is set; the exit code stays the same either way)."""
    try:
        with sigterm_interrupts(once=True):
            fn()
    except ConversionError as exc:
        raise _fail(exc) from None
    except KeyboardInterrupt:  # every `finally` has run: temp files are gone, no output was put in place
        err("interrupted")
        raise typer.Exit(EXIT_INTERRUPTED) from None
    except typer.Exit:
        raise
    except BrokenPipeError:  # what reads standard output went away (`| head`): nothing to say it to
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # nor to flush into at exit
        raise typer.Exit(EXIT_INVALID_INPUT) from None
    except Exception as exc:  # a bug: say so briefly, keep the traceback for those who ask
        raise internal_error(exc) from None


def _interrupt(signum: int, frame: object) -> NoReturn:
    raise KeyboardInterrupt


class _Interrupts:
    """Where the running command stands (``once``): already being interrupted, or past its
    point of no return; either way a further Ctrl-C or SIGTERM changes nothing."""

    interrupted = False
    settled = False
    to_exit = False  # the process ends when the command does (the console script)


def _interrupt_once(signum: int, frame: object) -> None:
    if not (_Interrupts.interrupted or _Interrupts.settled):
        _Interrupts.interrupted = True
        raise KeyboardInterrupt


_STOPS = (signal.SIGTERM, signal.SIGINT)


@contextmanager
def sigterm_interrupts(*, once: bool = False) -> Iterator[None]:
    """`kill` ends a command as Ctrl-C does: a KeyboardInterrupt unwinds through every
    ``finally``, so a half-written temp file is removed instead of left beside the target.
    With ``once`` only the first Ctrl-C or SIGTERM before :func:`point_of_no_return`
    interrupts: a second one would cut that clean-up short wherever it landed (``batch``,
    whose second Ctrl-C abandons the files in progress, takes every one). Outside the main
    thread signals are left alone."""
    handler = _interrupt_once if once else _interrupt
    stops = _STOPS if once else (signal.SIGTERM,)
    try:
        previous = {sig: signal.signal(sig, handler) for sig in stops}
    except ValueError:  # signal handlers can only be set from the main thread
        yield
        return
    try:
        yield
    finally:
        if not (_Interrupts.settled and _Interrupts.to_exit):
            for sig, old in previous.items():
                signal.signal(sig, old)
        _Interrupts.interrupted = _Interrupts.settled = False


def point_of_no_return() -> None:
    """From here on the command has done what was asked (its output is being put in place):
    Ctrl-C and SIGTERM are ignored, since stopping now would only hide that the output is
    there. For the console script they stay ignored until the process is gone (freeing a
    large conversion takes a while); a command run in-process (tests, a host) gets its
    handlers back when :func:`guard` returns."""
    _Interrupts.settled = True
    if _Interrupts.to_exit:
        for sig in _STOPS:
            signal.signal(sig, signal.SIG_IGN)


def hold_signals_to_exit() -> None:
    """For the console script: past a command's point of no return, signals stay ignored
    until the process exits."""
    _Interrupts.to_exit = True


def internal_error(exc: Exception) -> typer.Exit:
    """A bug of ours: one line (the traceback too with ASIF_CONVERT_DEBUG set), and exit 3."""
    if os.environ.get(DEBUG_VARIABLE):
        traceback.print_exception(exc)
    err(f"internal error: {type(exc).__name__}: {exc} (set {DEBUG_VARIABLE}=1 for details; please report)")
    return typer.Exit(EXIT_INTERNAL)


@contextmanager
def gc_paused() -> Iterator[None]:
    """For a command converting a document: documents are trees, so the cyclic collector finds
    nothing in them, yet scanning millions of fresh objects costs a third of the run time. Only
    the CLI and batch workers do this: a library call never changes process-wide state."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
