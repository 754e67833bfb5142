"""The ``asif-convert`` Typer application: every command, registered in one place."""

from __future__ import annotations

import warnings
from typing import Annotated

import typer

from asif_convert._cli import batch, convert, inspect, sign, validate, view
from asif_convert._cli.common import err, guard, hold_signals_to_exit
from asif_convert._registry import PluginWarning, registry
from asif_convert._version import __version__

app = typer.Typer(
    name="asif-convert",
    help="Convert AI-agent sessions between agent-continuity exports and ASIF 0.4 session documents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Plain help and usage errors: a flag is shown as a flag (no "<bool>" value it would refuse),
    # and an error is one line that does not depend on the terminal's width.
    rich_markup_mode=None,
)

app.command("from-continuity")(convert.from_continuity)
app.command("to-continuity")(convert.to_continuity)
app.command("convert")(convert.convert_command)
app.command("batch")(batch.batch)
app.command("inspect")(inspect.inspect)
app.command("diff")(inspect.diff)
app.command("validate")(validate.validate)
app.command("formats")(validate.formats)
app.command("view")(view.view)
app.command("sign")(sign.sign)
app.command("verify")(sign.verify)


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
    """Load every format before a command runs: a plugin that cannot load is one warning line."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PluginWarning)
        registry()
    for warning in caught:
        err(f"warning: {warning.message}")


def run() -> None:  # console-script entry point
    hold_signals_to_exit()
    app()
