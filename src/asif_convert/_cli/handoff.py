"""``handoff``: continue a session in another coding agent (docs/handoff.md)."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Annotated

import typer

from asif_convert._cli.common import DEFAULT_LIMITS as LIM
from asif_convert._cli.common import (
    InPath,
    MaxBytesOpt,
    MaxDepthOpt,
    MaxStringOpt,
    QuietOpt,
    build_limits,
    err,
    existing_folder,
    guard,
    path_option,
    usage_error,
)
from asif_convert._errors import InvalidInput
from asif_convert._handoff import TARGETS, handoff

TargetOpt = Annotated[str, typer.Option("--to", metavar="AGENT",
                                        help=f"The agent to continue in: {', '.join(TARGETS)}.")]
CwdOpt = Annotated[Path | None, typer.Option(
    "--cwd", metavar="DIR", parser=path_option,
    help="The project folder the agent continues in (default: the current folder).")]
SessionIdOpt = Annotated[str | None, typer.Option(
    "--session-id", metavar="UUID", help="The new session's id (default: one derived from the input and the agent).")]
FilesRootOpt = Annotated[Path | None, typer.Option(
    "--artifacts-root", metavar="DIR", parser=path_option, callback=existing_folder,
    help="Read the files the session embeds by path from DIR (inside it only, checked against their declared size "
         "and sha256), to write them inline where its messages show them; without it no file is opened.")]
DryRunOpt = Annotated[bool, typer.Option("--dry-run", help="Say where the session would be written; write nothing.")]


def handoff_command(input_path: InPath, to: TargetOpt, cwd: CwdOpt = None, session_id: SessionIdOpt = None,
                    dry_run: DryRunOpt = False, artifacts_root: FilesRootOpt = None,
                    max_bytes: MaxBytesOpt = LIM.max_bytes,
                    max_depth: MaxDepthOpt = LIM.max_depth, max_string: MaxStringOpt = LIM.max_string,
                    quiet: QuietOpt = False) -> None:
    """Write a session (Claude Code, Codex, continuity or ASIF) where another coding agent resumes it, and say
    how to continue it there and what did not travel."""
    if to not in TARGETS:
        usage_error(f"unknown agent {to!r} for --to; choose one of {', '.join(TARGETS)}")
    if input_path == "-":
        usage_error("handoff reads a file: give its path")
    limits = build_limits(max_bytes, max_depth, max_string)

    def run() -> None:
        try:
            done = handoff(Path(input_path), to, cwd=cwd or Path.cwd(), env=os.environ, session_id=session_id,
                           dry_run=dry_run, limits=limits, artifacts_root=artifacts_root)
        except InvalidInput as exc:  # one line: the file, where, and what was wrong
            err(f"error: {exc}")
            raise typer.Exit(exc.exit_code) from None
        verb = "would write" if dry_run else "wrote"
        typer.echo(f"{verb} {done.path}")
        typer.echo(f"continue it with: {done.command}")
        if quiet:
            return
        kinds = Counter(loss.kind for loss in done.losses)
        summary = ", ".join(f"{kind} {n}" for kind, n in sorted(kinds.items()))
        err(f"{len(done.losses)} losses" + (f" ({summary})" if summary else ""))
        for loss in done.losses:
            err(f"  {loss.id}: {loss.explanation}")

    guard(run)
