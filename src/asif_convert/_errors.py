"""Problems found in documents, the exceptions that carry them, and the CLI exit codes."""

from __future__ import annotations

import re
from typing import Literal

import msgspec

# Exit codes, documented in the README.
EXIT_OK = 0
EXIT_INVALID_INPUT = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3
EXIT_LOSS_POLICY = 4
EXIT_CLUSTER_LOST = 5  # batch on a cluster that stopped converting (no worker, or no progress); rerun to resume
EXIT_INTERRUPTED = 130  # the shell's code for a command ended by Ctrl-C


class Problem(msgspec.Struct, frozen=True, kw_only=True):
    """One thing wrong with a document.

    ``rule`` is a stable identifier (``schema``, ``json``, ``ASIF-R014``, ``CONT-REF-BRANCH`` ...);
    ``path`` is an RFC 6901 JSON pointer to the offending value ("" for the whole document);
    ``line`` the 1-based line of a line-oriented input the pointer is inside (None for a
    document).
    """

    rule: str
    path: str
    message: str
    severity: Literal["error", "warning"] = "error"
    line: int | None = None

    def render(self) -> str:
        where = _CONTROL.sub(_escaped, self.path or "/")  # a key or member name may hold any character
        if self.line is not None:
            where = f"line {self.line}: {where}"
        return f"{where}: {self.message} [{self.rule}]"


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")  # what a terminal would act on, not show


def _escaped(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group()):02x}"


class ConversionError(Exception):
    """Base of every error asif-convert raises on purpose."""

    exit_code = EXIT_INTERNAL


class _Problems(ConversionError):
    """An error that carries the problems found, each with its JSON pointer."""

    exit_code = EXIT_INVALID_INPUT
    _said = ""  # what the message says before the first problem
    _none = "invalid input"  # what it says when there is none

    def __init__(self, problems: list[Problem], source: str = "<input>") -> None:
        self.problems = problems
        self.source = source
        first = problems[0].render() if problems else self._none
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        super().__init__(f"{source}: {self._said}{first}{more}")


class InvalidInput(_Problems):
    """The input is not a document we can convert; carries every problem found."""


class RequestRefused(_Problems):
    """The document is valid, but the request asked of it cannot be made as asked (a tool call
    with no recorded result, nothing left to continue from); carries each problem, pointed at
    the document as the user has it."""

    _said = "request refused: "
    _none = "request refused"


class LossPolicyError(ConversionError):
    """The conversion would record losses the caller's loss policy refuses; nothing is written."""

    exit_code = EXIT_LOSS_POLICY

    def __init__(self, counts: dict[str, int], source: str = "<input>") -> None:
        self.counts = counts
        self.source = source
        listed = ", ".join(f"{kind} ({n})" for kind, n in counts.items())
        super().__init__(f"{source}: refused by the loss policy: {listed}")


class UsageError(ConversionError):
    """The command asks for something asif-convert will not do (say, write over its own input)."""

    exit_code = EXIT_USAGE


class OutputError(ConversionError):
    """The output cannot be written (a missing folder, no permission, a directory in the way);
    nothing was written."""

    exit_code = EXIT_INVALID_INPUT


class InternalError(ConversionError):
    """asif-convert produced something wrong: a bug, never the user's fault."""

    exit_code = EXIT_INTERNAL

    def __init__(self, message: str, problems: list[Problem] | None = None) -> None:
        self.problems = problems or []
        super().__init__(message)


def pointer(*parts: str | int) -> str:
    """Build an RFC 6901 JSON pointer from path segments."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def pointer_segment(token: str) -> str:
    """One reference token of a JSON pointer as the segment it names (``pointer``'s inverse)."""
    return token.replace("~1", "/").replace("~0", "~")


STDIN = "<stdin>"  # how every message names standard input (``-``)


def display_name(path: str) -> str:
    """A file name as text that JSON and HTML can hold: a name that is not UTF-8 (decoded by
    Python with surrogateescape, its odd bytes as lone surrogates) has those bytes as ``\\xNN``."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return path


def shown(value: object) -> str:
    """A document's value as a message shows it: a scalar in JSON's spelling (``true``, ``null``,
    ``"text"``; a long one cut short), an object or an array by its kind (it can be the whole
    document)."""
    if isinstance(value, dict):
        return "an object" if value else "{}"
    if isinstance(value, list):
        return "an array" if value else "[]"
    try:
        text = msgspec.json.encode(value).decode()
    except (TypeError, msgspec.EncodeError):  # not a JSON value (a caller's Python object)
        return f"a {type(value).__name__}"
    return text if len(text) <= 80 else f"{text[:60]}…{text[-10:]}"
