"""Bytes in, bytes out: strict decoding with errors people can act on, deterministic encoding,
and atomic writes."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import msgspec

from .errors import InvalidInput, Problem

_decoder = msgspec.json.Decoder()
_encoder = msgspec.json.Encoder()


def decode(data: bytes, source: str = "<input>") -> Any:
    if data.startswith(b"\xef\xbb\xbf"):
        raise InvalidInput([Problem(rule="json", path="", message="the file starts with a UTF-8 byte-order mark; "
                                    "JSON documents must not (save it as UTF-8 without BOM)")], source)
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise InvalidInput([Problem(rule="json", path="", message="the file is UTF-16; JSON documents must be UTF-8")],
                           source)
    if not data.strip():
        raise InvalidInput([Problem(rule="json", path="", message="the file is empty; expected a JSON object")], source)
    try:
        return _decoder.decode(data)
    except msgspec.DecodeError as exc:
        raise InvalidInput([Problem(rule="json", path="", message=f"not valid JSON: {exc}")], source) from None


def encode(doc: Any, *, compact: bool = False) -> bytes:
    """Deterministic: key order is the order the writers build, never sorted by chance."""
    data = _encoder.encode(doc)
    if not compact:
        data = msgspec.json.format(data, indent=2)
    return data + b"\n"


def read_input(path: str) -> tuple[bytes, str]:
    """Read the file the user named (``-`` is stdin); returns the bytes and a display name."""
    if path == "-":
        import sys

        return sys.stdin.buffer.read(), "<stdin>"
    try:
        return Path(path).read_bytes(), path
    except OSError as exc:
        raise InvalidInput([Problem(rule="io", path="", message=f"cannot read: {exc.strerror}")], path) from None


def write_output(path: str, data: bytes) -> None:
    """Write atomically: a temp file in the target folder, then rename; ``-`` is stdout."""
    if path == "-":
        import sys

        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent or ".")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
