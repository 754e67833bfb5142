"""One file's outcome (a manifest line), the outcome names, and the batch's own usage error."""

from __future__ import annotations

import fnmatch
from typing import Any, NamedTuple

import msgspec

from asif_convert import _errors as errors
from asif_convert._companions import Sought

MANIFEST_NAME = "manifest.jsonl"
# What a walked folder yields: JSON documents, and JSON Lines (Claude Code's sessions). A pattern
# may list several globs, separated by commas.
DEFAULT_PATTERN = "*.json,*.jsonl"


def matches(name: str, pattern: str) -> bool:
    """Whether a file name matches the pattern (any of its comma-separated globs)."""
    return any(fnmatch.fnmatchcase(name, glob) for glob in pattern.split(","))

# Outcomes. Only "ok" files are skipped by a rerun; "unchanged" is a rerun's skip and is never
# written to the manifest (the file's earlier "ok" line stands). "refused": a symlink out of the
# source roots, an unsafe or colliding output path; "policy": refused by the loss policy;
# "unwritable": the output could not be written (permissions, space, a folder in the way).
OK, UNCHANGED, INVALID, INTERNAL = "ok", "unchanged", "invalid", "internal"
REFUSED, POLICY, UNWRITABLE = "refused", "policy", "unwritable"
STATUSES = (OK, UNCHANGED, INVALID, INTERNAL, REFUSED, POLICY, UNWRITABLE)
FAILED = frozenset({INVALID, INTERNAL, REFUSED, POLICY, UNWRITABLE})


class UsageError(errors.UsageError, ValueError):
    """A batch that cannot start as asked (unknown format, OUTDIR a file or holding a source, a
    manifest path that is not a manifest); nothing was converted."""


class ClusterLost(Exception):
    """The cluster a batch runs on stopped converting: no worker for too long, or no result for
    too long while it has workers. What was reported is in the manifest; a rerun resumes."""

    exit_code = errors.EXIT_CLUSTER_LOST


class Previous(NamedTuple):
    """What a rerun compares of a file's last ``ok`` conversion with the same settings."""

    input_sha256: str
    output_bytes: int
    artifacts_sha256: str | None = None  # None: no artifacts folder was consulted (or an older run)
    artifacts_read: tuple[str, ...] = ()
    companions: Sought | None = None  # what was looked for beside the input, and what was found


class FileResult(msgspec.Struct, kw_only=True):
    """One file's outcome: a manifest line. It never holds the converted document."""

    input: str  # the input path as discovered
    output: str | None  # the output path relative to OUTDIR (POSIX separators); None when refused unnamed
    status: str  # ok | unchanged | invalid | internal | refused | policy | unwritable
    target_format: str
    source_format: str | None = None
    input_bytes: int | None = None
    input_sha256: str | None = None
    output_bytes: int | None = None
    output_sha256: str | None = None
    # With an artifacts folder: the paths the conversion asked of it, in order, and a digest over
    # what each gave (its file's SHA-256, or why it was missing or refused), for resume.
    artifacts_read: list[str] | None = None
    artifacts_sha256: str | None = None
    # the files its format looked for beside the input (a Claude Code session's subagent
    # transcripts: folders listed, files named) and a digest of what was there, for resume
    companions: Sought | None = None
    losses: dict[str, int] = {}
    # the files a plain ASIF output embeds by path that did not come with it (each also counted
    # as a file_not_carried loss); None when there is none
    not_carried: list[str] | None = None
    warnings: int = 0
    error: str | None = None
    problems: list[dict[str, Any]] = []
    seconds: dict[str, float] = {}
    settings: str = ""
    run: str = ""
    worker: str = ""

    @property
    def key(self) -> str:
        """What the manifest keys this file by: its output path (stable across working directories)."""
        return self.output if self.output is not None else "input:" + self.input


