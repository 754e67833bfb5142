"""Bytes in, bytes out: strict decoding with errors people can act on, resource limits checked
before expensive work, deterministic encoding, and atomic writes."""

from __future__ import annotations

import errno
import itertools
import os
import re
import stat
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

import msgspec

from asif_convert._errors import STDIN, InvalidInput, OutputError, Problem, UsageError, display_name, pointer_segment
from asif_convert._limits import (
    Limits,
    check_output,
    check_size,
    check_value,
    deep_nesting_problem,
    huge_integer_problem,
    nesting,
    out_of_range_problem,
)

_decoder = msgspec.json.Decoder()
_encoder = msgspec.json.Encoder()

_CHUNK = 8 * 1024 * 1024
_JSON_START = frozenset(b'{["-0123456789tfnP')  # the first byte of any JSON value, or of a package (ZIP)
_WHITESPACE = b" \t\r\n"


def decode(data: bytes, source: str = "<input>", limits: Limits | None = None) -> Any:
    """Decode one JSON document, refusing (``InvalidInput``, naming the path and the reason)
    what JSON forbids and what ``limits`` does not allow."""
    limits = limits or Limits()
    check_size(len(data), limits, source)
    problem = _encoding_problem(data)
    if problem is not None:
        raise InvalidInput([problem], source)
    try:
        doc = _decoder.decode(data)
    except RecursionError:
        raise InvalidInput([deep_nesting_problem(data, limits)], source) from None
    except msgspec.DecodeError as exc:
        raise InvalidInput([_syntax_problem(data, str(exc))], source) from None
    check_value(data, doc, limits, source)
    return doc


def _json_problem(message: str, path: str = "") -> Problem:
    return Problem(rule="json", path=path, message=message)


def _encoding_problem(data: bytes) -> Problem | None:
    if data.startswith(b"\xef\xbb\xbf"):
        return _json_problem("the file starts with a UTF-8 byte-order mark; JSON documents must not "
                             "(save it as UTF-8 without BOM)")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")) or 2 <= data[:4].count(0) <= 3:  # ASCII in UTF-16/32
        return _json_problem("the file is UTF-16 or UTF-32 (it has a UTF-16 byte-order mark or NUL bytes); "
                             "JSON documents must be UTF-8")
    if not data or data.isspace():  # no copy of a large input just to test it
        return _json_problem("the input is empty (no bytes, or only whitespace); expected a JSON object")
    return None


_AT_BYTE = re.compile(r"\s*\(byte (\d+)\)$")
_LONE_HIGH_SURROGATE = re.compile(rb"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u)")


def _syntax_problem(data: bytes, message: str) -> Problem:
    """msgspec's message, with a line and column, in words a person editing the file can use."""
    if message.startswith("Integer value out of range"):  # more digits than Python converts
        return huge_integer_problem(data)
    if message.startswith("Number out of range"):  # beyond a double: 1e999
        return out_of_range_problem(data)
    if message == "Input data was truncated":
        lone = _LONE_HIGH_SURROGATE.search(data)  # (msgspec says "truncated" for one, wherever it is)
        if lone is not None:
            return _json_problem(f"not valid JSON ({_where(data, lone.start())}): invalid utf-16 surrogate pair "
                                 f"({lone[0].decode()} with no low surrogate after it)")
        return _json_problem(f"not valid JSON: the file ends in the middle of a value ({_where(data, len(data))}); "
                             "is it truncated?")
    if message == "Invalid UTF-8 encoded string":
        try:
            data.decode("utf-8")
            offset = len(data)
        except UnicodeDecodeError as exc:
            offset = exc.start
        return _json_problem(f"not valid UTF-8 ({_where(data, offset)}); JSON documents must be UTF-8")
    match = _AT_BYTE.search(message)
    if match is None:
        return _json_problem(f"not valid JSON: {message}")
    offset = int(match[1])
    reason = message[: match.start()].removeprefix("JSON is malformed: ")
    if data.startswith((b"NaN", b"Infinity", b"-Infinity", b"+"), offset):
        reason = "NaN, Infinity and +numbers are not JSON (write null, or the number as a string)"
    return _json_problem(f"not valid JSON ({_where(data, offset)}): {reason}")


def _where(data: bytes, offset: int) -> str:
    line = data.count(b"\n", 0, offset) + 1
    column = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    return f"line {line}, column {column}, byte {offset}"


def encode(doc: Any, *, compact: bool = False) -> bytes:
    """Deterministic: key order is the order the writers build, never sorted by chance."""
    data = _encoder.encode(doc)
    if not compact:
        data = msgspec.json.format(data, indent=2)
    return data + b"\n"


# A slice of items encoded at a time ends at this many items or bytes, whichever comes first:
# large enough that per-slice costs vanish, small next to a session (a slice of 2,048 long
# messages would be megabytes, held several times over while it is checked and written).
_SLICE = 2048
_SLICE_BYTES = 1 << 20


def encode_streamed(head: dict[str, Any], key: str, items: Iterator[Any], *, compact: bool, limits: Limits,
                    source: str) -> tuple[bytes, int]:
    """What ``encode`` gives for ``head`` with its (empty) list ``head[key]`` holding ``items``,
    and how many items there were (see :class:`StreamedEncoding`)."""
    encoding = StreamedEncoding(head, key, items, compact=compact, limits=limits, source=source)
    return b"".join(encoding), encoding.count


def json_values(items: Iterable[Any]) -> Iterator[Any]:
    """Each item as JSON values (``msgspec.to_builtins``; a dict is taken as one already). A
    struct type may name, as ``shared_members``, members (written under their own names) that
    its items often hold in common, such as one IR node for a whole session: where an item holds
    there the very object the item of its type before it held, it takes that item's values,
    one dict for the node instead of one per item. Sharing follows identity, never ``==`` (which
    takes 1, 1.0 and true for one value). For readers only: what is shared must not be changed."""
    last: Any = None  # the last item with shared members, and its values
    last_values: Any = None
    for item in items:
        if type(item) is dict:
            yield item
            continue
        values = msgspec.to_builtins(item)
        shared = getattr(type(item), "shared_members", ())
        if shared:
            if type(last) is type(item):
                for name in shared:
                    if name in values and getattr(item, name) is getattr(last, name):
                        values[name] = last_values[name]
            last, last_values = item, values
        yield values


def drained(items: list[Any]) -> Iterator[Any]:
    """The items of ``items`` (a list walked only here from now on), each let go of as it is
    taken: fed to :class:`StreamedEncoding`, what was encoded is freed for the next slice."""
    for k, item in enumerate(items):
        items[k] = None
        yield item
    items.clear()


class StreamedEncoding:
    """The bytes ``encode`` gives for ``head`` with its (empty) list ``head[key]`` holding
    ``items``, as pieces, made without ever holding all the items as JSON values, nor (when the
    pieces go to a file as they come) the whole output: the items are built, checked against
    ``limits`` as output (:func:`check_output`) and encoded a slice at a time. ``head`` is
    checked too. ``count`` is the number of items once the pieces are all taken.

    Indented output is indented a slice at a time: a JSON text holds no raw line break inside a
    string, so moving a slice's lines two levels deeper is adding spaces after each line break."""

    def __init__(self, head: dict[str, Any], key: str, items: Iterator[Any], *, compact: bool, limits: Limits,
                 source: str, slice_size: int | None = None, slice_bytes: int | None = None) -> None:
        if head.get(key) != []:
            raise ValueError(f"{key!r} must be an empty list in the head")
        self.head, self.key, self.items = head, key, items
        self.compact, self.limits, self.source = compact, limits, source
        self.slice_size = slice_size or _SLICE
        self.slice_bytes = slice_bytes or _SLICE_BYTES
        self.count = 0

    def __iter__(self) -> Iterator[bytes]:
        head = _encoder.encode(self.head)
        later = self._check_head(head)
        if not self.compact:
            head = msgspec.json.format(head, indent=2)
        # The list's "]": the head's keys are unique, and none but its own sit at that indentation.
        empty = (b"" if self.compact else b"\n  ") + _encoder.encode(self.key) + (b":[]" if self.compact else b": []")
        at = head.index(empty) + len(empty) - 1
        yield head[:at]
        rest = head[at + 1:]
        del head
        while batch := self._slice():
            values, items = batch
            del batch
            first = not self.count
            joined = b",".join(items)
            # compact, a slice is checked as it is written: after the head's "[" or a ","
            written = ((b"[" if first else b",") + joined) if self.compact else b"[" + joined + b"]"
            del joined
            check_output(written, values, self.limits, self.source, at=(self.key,), start=self.count, items=items,
                         rest=lambda: max(nesting(msgspec.to_builtins(self.head)), self._nesting(self.items)))
            self.count += len(values)
            del values, items
            if self.compact:
                yield written[1:] if first else written
            else:  # "[\n  item,\n  item\n]": the items' lines, two spaces deeper
                lines = msgspec.json.format(written, indent=2)[2:-2].replace(b"\n", b"\n  ")
                del written
                yield (b"\n  " if first else b",\n  ") + lines
        if later is not None:
            raise later
        yield (b"]" if self.compact or not self.count else b"\n  ]") + rest + b"\n"

    def _slice(self) -> tuple[list[Any], list[bytes]] | None:
        """The next items and their compact encodings, up to ``slice_size`` of them or
        ``slice_bytes`` of encoding, whichever comes first; None once there are none."""
        values: list[Any] = []
        items: list[bytes] = []
        size = 0
        for value in self.items:
            item = _encoder.encode(value)
            values.append(value)
            items.append(item)
            size += len(item)
            if len(items) == self.slice_size or size >= self.slice_bytes:
                break
        return (values, items) if values else None

    @staticmethod
    def _nesting(items: Iterator[Any]) -> int:
        """How deep the output nests ``items`` of its list (which sits in the document's object)."""
        return max((2 + nesting(msgspec.to_builtins(v)) for v in items), default=0)

    def _check_head(self, head: bytes) -> InvalidInput | None:
        """Check the head against the limits (the length of its encoding is what counts). A
        refusal is raised now, unless it names a place after the items' list: then it is
        returned, for the caller to raise once the items are checked, so that of several
        places, the output's first in document order is named, as for a whole document."""
        self.items, pending = itertools.tee(self.items)  # read ahead only to say how deep the items are
        try:
            check_output(head, self.head, self.limits, self.source, rest=lambda: self._nesting(pending))
        except InvalidInput as exc:
            member = exc.problems[0].path.split("/")[1:2]
            name = pointer_segment(member[0]) if member else None
            keys = list(self.head)
            if name in self.head and keys.index(self.key) < keys.index(name):
                return exc
            raise
        return None


def read_input(path: str, limits: Limits | None = None, *, regular: bool = False) -> tuple[bytes, str]:
    """Read the file the user named (``-`` is stdin); returns the bytes and a display name.

    A regular file larger than ``limits.max_bytes`` is refused before a byte is read; a stream
    (stdin, a pipe, a device) is read up to the limit, and reading stops early when the first
    bytes cannot begin a JSON document (so ``/dev/zero`` is refused at once). With ``regular``
    (a file found as a regular one, which something may have replaced since) anything else is
    refused, and a pipe is not waited on for a writer."""
    limits = limits or Limits()
    if path == "-":
        return _read_stream(sys.stdin.buffer, limits, STDIN), STDIN
    name = display_name(path)
    try:
        with open(os.open(path, os.O_RDONLY | (os.O_NONBLOCK if regular else 0)), "rb") as fh:
            st = os.fstat(fh.fileno())
            if regular and not stat.S_ISREG(st.st_mode):
                raise InvalidInput([Problem(rule="io", path="", message="is no longer a regular file")], name)
            if stat.S_ISREG(st.st_mode):
                check_size(st.st_size, limits, name)
                # its size and one byte more, not the limit's worth: read() sets aside what it is
                # asked for, and a limit may be far above what memory holds (--max-bytes 100G)
                data = fh.read(st.st_size + 1)
                check_size(len(data), limits, name)  # it grew past the limit since
                return data, name
            return _read_stream(fh, limits, name), name
    except OSError as exc:
        raise InvalidInput([Problem(rule="io", path="", message=f"cannot read: {exc.strerror}")], name) from None


def _read_stream(fh: IO[bytes], limits: Limits, name: str) -> bytes:
    chunks: list[bytes] = []
    size, started = 0, False
    while chunk := fh.read(min(_CHUNK, limits.max_bytes + 1 - size)):
        chunks.append(chunk)
        size += len(chunk)
        check_size(size, limits, name)  # over by one byte: refused, reading stops
        if not started and (head := b"".join(chunks).lstrip(_WHITESPACE)[:1]):
            started = True
            if head[0] not in _JSON_START:
                break  # cannot be JSON: decode() says why, from these first bytes
    return b"".join(chunks)


def check_paths(input_path: str, *outputs: str | os.PathLike | None) -> None:
    """Refuse (``UsageError``) to write over the input, or twice to one file: an output that
    is the input file itself (through a link or not) would replace the user's input."""
    named = [("the input", input_path)] if input_path != "-" else []
    named += [("an output", str(o)) for o in outputs if o is not None]
    if any(path == "" for _, path in named):
        raise UsageError("an output path is empty: name a file, or - for standard output")
    if sum(path == "-" or _descriptor(path) == 1 for what, path in named if what == "an output") > 1:
        raise UsageError("two outputs would go to standard output: give all but one of them a file")
    named = [(what, path) for what, path in named if path != "-"]
    for i, (_, path) in enumerate(named):
        for other_what, other in named[:i]:
            if _same_file(path, other):
                why = ("asif-convert never writes over its input" if other_what == "the input"
                       else "two outputs cannot share a file")
                raise UsageError(f"{path} is also {other_what} ({other}); choose another output path ({why})")


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet)
        return os.path.abspath(a) == os.path.abspath(b)


def _temp_beside(target: Path) -> tuple[int, str]:
    """A new temp file in the target's folder, created with mode 0o666 so that the kernel applies
    the process umask, as it would to the output itself (the umask is never read or changed)."""
    for _ in range(100):
        tmp = str(target.parent / f".{target.name}.{os.urandom(4).hex()}.tmp")
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temp file name", str(target.parent))


_DESCRIPTOR_PATH = re.compile(r"/(?:dev|proc/self)/fd/([0-9]+)")


def _descriptor(path: str) -> int | None:
    """The process's own open file that ``path`` names (``/dev/stdout``, ``/dev/fd/N``,
    ``/proc/self/fd/N``, or a link to one), if it names one. Such a path is a stream of this
    process: written as standard output is, never replaced (``/dev/stdout`` is a link, and
    behind it may be the regular file a shell redirected to)."""
    here = os.path.abspath(path)
    for _ in range(40):  # as many links as the kernel would follow
        if found := _DESCRIPTOR_PATH.fullmatch(here):
            return int(found[1])
        try:
            target = os.readlink(here)
        except OSError:  # not a link
            return None
        here = os.path.normpath(os.path.join(os.path.dirname(here), target))
    return None


def _in_place(path: str) -> bool:
    """Whether ``path`` is a device or a pipe (``/dev/null``, a FIFO), or a link to one
    (``/dev/stdout``): written in place, since a temp file renamed over it would replace it
    with a regular file. Folders, regular and missing files, and links to them, are not."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return _descriptor(path) is not None or not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _refuse_folder(path: str) -> None:
    if os.path.isdir(path):
        raise OutputError(f"cannot write {path}: it is a folder; name a file in it (nothing was written)")


class PendingOutput:
    """An output file written in pieces while it is made: a temp file beside the target until
    :meth:`commit` puts it in place (:meth:`discard` removes it). Nothing shows at the target
    before the commit, so a failed conversion leaves no partial output. The temp file is
    created on the first write: a conversion that writes nothing here leaves no trace. A
    device or a pipe cannot take a temp file: its pieces are held until the commit."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.size = 0  # bytes written so far
        self._file: IO[bytes] | None = None
        self._tmp: str | None = None
        self._held: list[bytes] | None = [] if _in_place(path) else None

    @property
    def in_place(self) -> bool:
        """A device or a pipe: :meth:`commit` writes it all then, and may wait for a reader."""
        return self._held is not None

    def write(self, data: bytes) -> None:
        if self._held is not None:
            self._held.append(data)
            self.size += len(data)
            return
        try:
            if self._file is None:
                _refuse_folder(self.path)
                fd, self._tmp = _temp_beside(Path(self.path))
                self._file = os.fdopen(fd, "wb")
            self._file.write(data)
        except OSError as exc:
            self.discard()
            raise OutputError(f"cannot write {self.path}: {exc.strerror} (nothing was written)") from None
        self.size += len(data)

    def commit(self) -> None:
        if self._held is not None:
            data, self._held = b"".join(self._held), []
            write_output(self.path, data)
            return
        if self._tmp is None:  # nothing was written: an empty output is still an output
            self.write(b"")
        file, tmp = self._file, self._tmp
        try:
            if file is None or tmp is None:
                raise OSError(errno.ENOENT, "the temp file is gone")
            file.close()
            os.replace(tmp, self.path)
        except OSError as exc:
            self.discard()
            raise OutputError(f"cannot write {self.path}: {exc.strerror} (nothing was written)") from None
        self._file = self._tmp = None

    def discard(self) -> None:
        """Remove the temp file; safe to call at any time, also after a failed write (closing
        a file whose disk is full fails again, and the file must go all the same)."""
        # Forgotten only once removed: interrupted halfway, it can be called again.
        if self._file is not None:
            try:
                self._file.close()
            except OSError:
                pass  # the buffered rest could not be written: it is being thrown away
        if self._tmp is not None:
            Path(self._tmp).unlink(missing_ok=True)
        self._file = self._tmp = None
        if self._held is not None:
            self._held = []


def write_output(path: str, data: bytes) -> None:
    """Write atomically: a temp file in the target folder, then rename; ``-`` is stdout.

    A symbolic link at ``path`` to a file, or to nothing, is replaced by the file (its target
    is never written); the folder is the one ``path`` names, links included. A device or a
    pipe at ``path``, or a link to one, is written in place, as standard output is; a folder
    is refused."""
    own = 1 if path == "-" else _descriptor(path)
    if own == 1:  # through sys.stdout, so that nothing buffered there comes out of order
        _write_stream(sys.stdout.buffer, data, "standard output" if path == "-" else path)
        return
    if _in_place(path):
        sys.stderr.flush()  # (/dev/stderr: what the command said before comes first)
        try:  # another stream of this process (/dev/fd/3), or a device or pipe opened without O_CREAT
            fd = os.dup(own) if own is not None else os.open(path, os.O_WRONLY | os.O_CLOEXEC)
        except OSError as exc:
            raise OutputError(f"cannot write {path}: {exc.strerror} (nothing was written)") from None
        with os.fdopen(fd, "wb", buffering=0) as stream:
            _write_stream(stream, data, path)
        return
    _refuse_folder(path)
    target = Path(path)
    try:
        fd, tmp = _temp_beside(target)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror} (nothing was written)") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, target)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise OutputError(f"cannot write {path}: {exc.strerror} (nothing was written)") from None
        raise


def _write_stream(fh: IO[bytes], data: bytes, name: str) -> None:
    """Write to a stream that cannot be taken back (a pipe, a terminal, a device). When the
    reader has gone or the disk is full, the error is the user's to see (exit 1), and what
    is still buffered is sent nowhere so that leaving the process does not fail a second time."""
    try:
        view = memoryview(data)
        while view:  # an unbuffered stream (PYTHONUNBUFFERED, a device) may take part of it
            taken = fh.write(view)
            if taken is None:  # a non-blocking stream that is full
                raise BlockingIOError(errno.EAGAIN, os.strerror(errno.EAGAIN))
            view = view[taken:]
        fh.flush()
    except OSError as exc:
        with open(os.devnull, "wb") as devnull:
            os.dup2(devnull.fileno(), fh.fileno())
        raise OutputError(f"cannot write {name}: {exc.strerror} (what was written is incomplete)") from None
