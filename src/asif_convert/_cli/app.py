"""The ``asif-convert`` Typer application: every command, registered in one place."""

from __future__ import annotations

import gc
import importlib
import warnings
from collections.abc import Iterator, Mapping
from functools import cache
from gettext import gettext
from typing import Annotated, Any

import typer
from typer.core import TyperCommand, TyperGroup

from asif_convert._cli.common import err, gc_paused, guard, hold_signals_to_exit, internal_error
from asif_convert._errors import EXIT_INTERRUPTED
from asif_convert._version import __version__

# Every command: its name -> the module of asif_convert._cli that holds it, and its function.
# A command's module (and what it needs: deepdiff for inspect and diff, jinja2 for view, rich's
# progress display for batch, cryptography for sign and verify) is imported when that command
# is run, so a conversion starts in the time its own modules take, not every command's (a
# small conversion: about 0.5 s instead of 0.75 s). This table is the one place the package
# imports by name; see docs/decisions.md.
COMMANDS = {
    "from-continuity": ("convert", "from_continuity"),
    "to-continuity": ("convert", "to_continuity"),
    "convert": ("convert", "convert_command"),
    "batch": ("batch", "batch"),
    "inspect": ("inspect", "inspect"),
    "diff": ("inspect", "diff"),
    "validate": ("validate", "validate"),
    "formats": ("validate", "formats"),
    "view": ("view", "view"),
    "request": ("request", "request_command"),
    "handoff": ("handoff", "handoff_command"),
    "sign": ("sign", "sign"),
    "verify": ("sign", "verify"),
}

# What the group's help says of each command: the first paragraph of its docstring (a test holds
# them equal), so that `--help` lists the commands without importing any. A command missing
# here is imported to be listed.
SUMMARIES = {
    "from-continuity": "Convert an agent-continuity export into an ASIF 0.4 session.",
    "to-continuity": "Convert an ASIF 0.4 session (or package) into an agent-continuity export.",
    "convert": "Convert between any two installed formats; the input format is detected unless --from.",
    "batch": "Convert many files in parallel into OUTDIR; resumable, with a JSONL manifest.",
    "inspect": "Show a document's format, counts, branches, coverage and losses.",
    "diff": "Show what differs between two documents of one format (records matched by id); exit 1 if any.",
    "validate": "Validate documents against their format's schema and rules; exit 1 when any is invalid.",
    "formats": "List the installed formats (built-in and plugins) and the loss kinds they record.",
    "request": "Write the request that continues a captured session on a provider's API (the create call's "
               "keyword arguments, without model and sampling settings); nothing is sent.",
    "handoff": "Write a session (Claude Code, Codex, continuity or ASIF) where another coding agent resumes it, "
               "and say how to continue it there and what did not travel.",
    "view": "Write one self-contained HTML page (no network access, inline CSS and script) to look at a "
            "session, compare two documents, or see a whole batch at a glance.",
    "sign": "Write the detached signature object of a package (checked whole first).",
    "verify": "Check a package and its detached signature under a public key you trust; exit 1 if it fails.",
}

# Plain help and usage errors: a flag is shown as a flag (no "<bool>" value it would refuse),
# and an error is one line that does not depend on the terminal's width.
_SETTINGS: dict[str, Any] = {"add_completion": False, "pretty_exceptions_enable": False, "rich_markup_mode": None,
                            "context_settings": {"help_option_names": ["-h", "--help"]}}


@cache
def command(name: str) -> TyperCommand:
    """The command ``name`` (one of ``COMMANDS``), its module imported on first use. Loading
    it ends as a command does: an interrupt is exit 130, a module that cannot be imported (a
    broken installation) one line and exit 3."""
    module, function = COMMANDS[name]
    try:
        # What an import makes (modules, classes, functions) lives on: the collector's passes
        # over it while a conversion's modules load (about 1.3 ms) would find nothing to free.
        with gc_paused():
            loaded = importlib.import_module(f"asif_convert._cli.{module}")
    except KeyboardInterrupt:
        err("interrupted")
        raise typer.Exit(EXIT_INTERRUPTED) from None
    except ImportError as exc:
        raise internal_error(exc) from None
    one = typer.Typer(**_SETTINGS)
    one.command(name)(getattr(loaded, function))
    built = typer.main.get_command(one)
    assert isinstance(built, TyperCommand)  # (one command and no callback: a command, not a group)
    return built


class _Commands(Mapping[str, TyperCommand]):
    """The group's commands: every name known, each command built when it is looked up (the
    help's list of commands looks up all of them)."""

    def __getitem__(self, name: str) -> TyperCommand:
        if name not in COMMANDS:
            raise KeyError(name)
        return command(name)

    def __iter__(self) -> Iterator[str]:
        return iter(COMMANDS)

    def __len__(self) -> int:
        return len(COMMANDS)


class _Group(TyperGroup):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.commands = _Commands()  # type: ignore[assignment]  # read-only: commands come from COMMANDS

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """The help's list of commands, as Typer writes it, from ``SUMMARIES``."""
        listed = {name: TyperCommand(name, help=SUMMARIES[name]) if name in SUMMARIES else command(name)
                  for name in COMMANDS}
        limit = formatter.width - 6 - max(map(len, listed))
        rows = [(name, cmd.get_short_help_str(limit)) for name, cmd in listed.items() if not cmd.hidden]
        with formatter.section(gettext("Commands")):
            formatter.write_dl(rows)


app = typer.Typer(
    name="asif-convert",
    help="Convert AI-agent sessions between agent-continuity exports and ASIF 0.4 session documents.",
    no_args_is_help=True,
    cls=_Group,
    **_SETTINGS,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"asif-convert {__version__}")
        raise typer.Exit()


@app.callback()
def main(version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                               help="Print the version and exit.")] = False) -> None:
    """Convert AI-agent sessions between agent-continuity exports and ASIF 0.4 session documents."""
    guard(load_formats)


def load_formats() -> None:
    """Load every format before a command runs: a plugin that cannot load is one warning line.
    (Imported here: the group's help needs no format.)"""
    from asif_convert._registry import PluginWarning, registry

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PluginWarning)
        registry()
    for warning in caught:
        err(f"warning: {warning.message}")


def run() -> None:  # console-script entry point
    hold_signals_to_exit()
    # What the imports made (classes, functions, tables) lives until the process ends: set
    # aside, the cyclic collector no longer scans it, neither during the command nor in the
    # full collections of the interpreter's exit (about a tenth of a small conversion's time).
    # Garbage made from here on is collected as before. The console script only: a host that
    # imports the app keeps its collector as it was.
    gc.freeze()
    app()
