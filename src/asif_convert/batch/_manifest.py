"""The JSONL manifest: one line per file, appended as results arrive; what a rerun may skip."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import msgspec

from asif_convert import _jsonio as jsonio
from asif_convert._errors import InvalidInput, Problem, display_name
from asif_convert.batch._records import OK, FileResult, Previous, UsageError

_line_decoder = msgspec.json.Decoder(FileResult)
_line_encoder = msgspec.json.Encoder()


class Manifest:
    """A JSONL file, one :class:`FileResult` per line, appended as results arrive.

    Each line is written with one ``write`` to a file opened for appending, so an interrupted
    run leaves whole lines (a torn last line, possible only on a crash of the machine, is ignored
    when read). The last line for an output is its current state; opening and closing compact
    the file to one line per output. A rerun skips a file when its line says ``ok`` with the
    same settings and input digest, the output still has the recorded size and the artifact
    files it read (if any) are still what they were.
    """

    def __init__(self, path: str | os.PathLike[str], *, fresh: bool = False) -> None:
        self.path = Path(path)
        # key -> (settings, what a rerun compares) of an ok line, None for a line of another status
        self._index: dict[str, tuple[str, Previous] | None] = {}
        self._rewrite = False
        _check_kind(self.path)
        if fresh:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            jsonio.write_output(str(self.path), b"")
        elif self.path.exists():
            self._load()
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)

    def _load(self) -> None:
        lines = 0
        for rec in self._read():
            lines += 1
            if rec.key in self._index:
                self._rewrite = True
            ok = rec.status == OK and rec.input_sha256 is not None and rec.output_bytes is not None
            self._index[rec.key] = (rec.settings, Previous(
                rec.input_sha256, rec.output_bytes, rec.artifacts_sha256,  # type: ignore[arg-type]
                tuple(rec.artifacts_read or ()), rec.companions)) if ok else None
        total = _count_lines(self.path)
        if total and not lines:
            raise UsageError(f"{self.path} is not an asif-convert manifest (no line is a file record)")
        if self._rewrite or lines != total:
            self.compact()

    def _read(self) -> Iterator[FileResult]:
        with open(self.path, "rb") as fh:
            for line in fh:
                if line.strip():
                    try:
                        yield _line_decoder.decode(line)
                    except msgspec.DecodeError:
                        continue  # a torn line from a crash: that file is simply redone

    def previous(self, key: str, settings: str) -> Previous | None:
        """What this output's last ok conversion with these settings read and wrote."""
        hit = self._index.get(key)
        return hit[1] if hit is not None and hit[0] == settings else None

    def append(self, rec: FileResult) -> None:
        data = _line(rec)
        while data:
            n = os.write(self._fd, data)
            data = data[n:]
        if rec.key in self._index:  # an older line for it is now superseded
            self._rewrite = True
        self._index[rec.key] = None  # keys are unique within a run; its resume decision is made

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
            if self._rewrite:
                self.compact()

    def compact(self) -> None:
        """Rewrite the file atomically with only the last valid line of each output."""
        last: dict[str, int] = {}
        for i, rec in enumerate(self._read()):
            last[rec.key] = i
        keep = set(last.values())
        del last
        tmp = self.path.with_name(f".{self.path.name}.compact.tmp")
        with open(tmp, "wb") as out:
            for i, rec in enumerate(self._read()):
                if i in keep:
                    out.write(_line(rec))
        os.replace(tmp, self.path)
        self._rewrite = False

    def __enter__(self) -> Manifest:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _line(rec: FileResult) -> bytes:
    try:
        return _line_encoder.encode(rec) + b"\n"
    except UnicodeEncodeError:  # a path that is not UTF-8 (and messages naming it): spelled \xNN
        return _line_encoder.encode(_displayable(msgspec.to_builtins(rec))) + b"\n"


def _displayable(value: Any) -> Any:
    if isinstance(value, str):
        return display_name(value)
    if isinstance(value, dict):
        return {display_name(k): _displayable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_displayable(v) for v in value]
    return value


def _check_kind(path: Path) -> None:
    """A manifest is a regular file, or none yet: never a folder, a device or a pipe (read to
    its end on resume), and never a link (appended to, it would write wherever the link points)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode):
        raise UsageError(f"the manifest {path} is a symbolic link; a manifest is never written through a link")
    if not stat.S_ISREG(st.st_mode):
        raise UsageError(f"the manifest {path} is not a regular file")


def _count_lines(path: Path) -> int:
    with open(path, "rb") as fh:
        return sum(1 for line in fh if line.strip())


def read_manifest(path: str | os.PathLike[str]) -> list[FileResult]:
    """Every line of a manifest, in order (for tests and tools). A line that is not a file
    record raises ``InvalidInput`` naming the manifest, the line and why; a last line not yet
    ended (a running batch is writing it) is left for the next read."""
    with open(path, "rb") as fh:
        return manifest_records(fh, os.fspath(path))


def manifest_records(lines: Iterable[bytes], name: str) -> list[FileResult]:
    """:func:`read_manifest` of a manifest's lines, with their line ends (``name``: where they
    come from)."""
    out = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            out.append(_line_decoder.decode(line))
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            if not line.endswith(b"\n"):  # the line being written (each is one write, ending the line)
                continue
            problem = Problem(rule="manifest", path="", message=f"line {number} is not a file record: {exc}")
            raise InvalidInput([problem], name) from None
    return out
