"""Line-oriented inputs and outputs (JSON Lines): one JSON value per line, as coding agents write
their transcripts. Each line is decoded and checked on its own, under the same limits as a
document (depth, integers, string length and duplicate keys per line, size per file); a line
that is not JSON is a problem naming its line number, a line beyond the limits refuses the input
naming its line and the JSON path inside it, and a cut last line (a file still being written) is
a warning, not a refusal."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from asif_convert._errors import InvalidInput, Problem
from asif_convert._jsonio import decode
from asif_convert._limits import Limits, check_output, check_size, lines_within_limits

Record = tuple[int, Any]  # (1-based line number, the decoded JSON value of one complete line)

CUT = "truncated"  # the rule of a cut last line: a warning, never fatal
_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder()
_IN_LINE = re.compile(r"line 1, column (\d+), byte \d+")  # a line's own syntax error: its column says where


@dataclass(frozen=True)
class Lines:
    """A line-oriented input: its complete records, in file order, and what was wrong with the
    rest (a line that is not JSON, a cut last line). Blank lines are skipped, not records."""

    records: list[Record]
    problems: list[Problem]  # each with Problem.line set; "warning" for a cut last line, else "error"
    name: str = "<input>"  # how the input is reported (its path, or "standard input")
    # the files that belong with it in its producer's layout (a format's ``companions``), by name
    # relative to its folder, each decoded the same way
    parts: dict[str, Lines] = field(default_factory=dict)
    # files of that layout found but not read (symbolic links, never followed), by the same names
    left_out: list[str] = field(default_factory=list)
    sought: Any = None  # what was looked for beside it, and a digest of what was found (_companions.Sought)
    # values_digest() of these records, when decoding made it on the way (a copy with other
    # records must not keep it: dataclasses.replace(lines, records=...) names digest=None too)
    digest: str | None = None

    def values_digest(self) -> str:
        """The sha256 of the records' values, each as compact JSON and a line break: the same
        records, the same digest, whatever their spacing or the lines between them."""
        return self.digest or _digest_and_colons([value for _, value in self.records])[0]

    def first(self, count: int = 20) -> list[Any]:
        """The values of the first ``count`` complete records (what a format's detect gets)."""
        return [value for _, value in self.records[:count]]


def at_line(problem: Problem, line: int) -> Problem:
    """``problem`` found inside the line numbered ``line``."""
    return msgspec.structs.replace(problem, line=line, message=_IN_LINE.sub(r"column \1", problem.message))


def decode_lines(data: bytes, name: str = "<input>", limits: Limits | None = None) -> Lines:
    """Every complete line of ``data``, decoded and checked. The last line, when the file does not
    end with a newline and that line does not decode, is cut: a warning of rule ``truncated``."""
    limits = limits or Limits()
    check_size(len(data), limits, name)
    pieces = data.split(b"\n")
    values: list[Any] = []
    numbers: list[int] = []
    broken = False
    for index, piece in enumerate(pieces):
        if piece.strip():
            try:
                values.append(_decoder.decode(piece))
                numbers.append(index + 1)
            except (msgspec.DecodeError, RecursionError):
                broken = True
                break
        pieces[index] = b""  # (let each line's bytes go once decoded)
    if not broken:
        try:
            digest, colons = (None, 0) if limits.trusted else _digest_and_colons(values)
        except RecursionError:  # (a line nested deeper than encoding it can go: checked on its own below)
            digest, broken = None, True
    if not broken:
        if lines_within_limits(data, values, limits, colons):  # one pass over them all
            return Lines(records=list(zip(numbers, values, strict=True)), problems=[], name=name, digest=digest)
    del values
    return _line_by_line(data.split(b"\n"), name, limits)


_CHUNK = 1024  # values encoded at once: one call of the digest per chunk, never all the encodings at once


def _digest_and_colons(values: Sequence[Any]) -> tuple[str, int]:
    """The values' digest (``Lines.values_digest``) and the number of ``:`` in their encodings
    (what the duplicate-key check compares with the input's): one encoding of each value for both."""
    digest, colons = hashlib.sha256(), 0
    for start in range(0, len(values), _CHUNK):
        chunk = b"\n".join(map(_encoder.encode, values[start:start + _CHUNK]))
        digest.update(chunk)
        digest.update(b"\n")
        colons += chunk.count(b":")
    return digest.hexdigest(), colons


def _line_by_line(pieces: list[bytes], name: str, limits: Limits) -> Lines:
    """Each line decoded and checked on its own, so that what is wrong names its line."""
    records: list[Record] = []
    problems: list[Problem] = []
    last = len(pieces) - 1  # the piece after the final newline: empty unless the last line is cut
    for index, piece in enumerate(pieces):
        if not piece.strip():
            continue
        try:
            records.append((index + 1, decode(piece, "", limits)))
        except InvalidInput as exc:
            found = [at_line(p, index + 1) for p in exc.problems]
            if any(p.rule != "json" for p in found):  # beyond the limits: refused, as a document would be
                raise InvalidInput(found, name) from None
            if index == last:
                found = [Problem(rule=CUT, path="", line=index + 1, severity="warning", message=(
                    "the last line is cut (the file ends without a newline in the middle of a record: is it "
                    "still being written?); the records before it are read, this one is not"))]
            problems.extend(found)
    return Lines(records=records, problems=problems, name=name)


_NON_BLANK = re.compile(rb"\S")  # (what bytes.strip() keeps: all but ASCII whitespace)


def looks_like_lines(data: bytes) -> bool:
    """Whether ``data`` holds more than one non-blank line (a document that is not one JSON
    value may be JSON Lines)."""
    start = len(data) - len(data.lstrip())
    end = data.find(b"\n", start)
    return end != -1 and _NON_BLANK.search(data, end) is not None  # (not a copy of the rest)


def encode_lines(values: Iterable[Any], limits: Limits, source: str) -> bytes:
    """The values one per line: compact JSON, keys in the order given, ``\\n`` after each. Each
    line must read back under ``limits`` (as ``check_output`` asks of a document)."""
    out = []
    for number, value in enumerate(values, 1):
        line = _encoder.encode(value)
        try:
            check_output(line, value, limits, source)
        except InvalidInput as exc:  # (the output's line: not one of the input, which ``line`` would say)
            raise InvalidInput([msgspec.structs.replace(p, message=p.message.replace(
                "in the output:", f"in the output's line {number}:", 1)) for p in exc.problems], source) from None
        out.append(line)
    out.append(b"")
    return b"\n".join(out)


def decode_output(data: bytes) -> list[Any]:
    """The values of lines this package wrote (trusted: no limits)."""
    return [msgspec.json.decode(line) for line in data.split(b"\n") if line.strip()]
