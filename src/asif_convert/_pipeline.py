"""The conversion pipeline: bytes -> reader -> IR -> writer -> bytes, validated at both edges."""

from __future__ import annotations

import dataclasses
import hashlib
import math
import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import msgspec

from asif_convert import _jsonio as jsonio
from asif_convert import ir
from asif_convert._artifacts import ArtifactFiles, artifact_files, source_reference, source_resource
from asif_convert._companions import Sought, digest, gather
from asif_convert._errors import (
    InternalError,
    InvalidInput,
    LossPolicyError,
    Problem,
    UsageError,
    display_name,
    pointer,
    shown,
)
from asif_convert._limits import Limits, check_output, depth_message
from asif_convert._lines import Lines, decode_lines, decode_output, encode_lines, looks_like_lines
from asif_convert._package import is_package, read_package, write_package
from asif_convert._registry import BUILTINS, detect, detect_lines, get, loss_kinds, namespaces, registry
from asif_convert._validation.files import path_resource_problems
from asif_convert.plugin import Context, Format, Options, files_inline, shape

# Problems a conversion can never work around; the rest (referential) become losses unless strict.
FATAL_RULES = frozenset({"json", "schema", "io", "format"})
FILE_NOT_CARRIED = "file_not_carried"  # the loss kind of a file named by path that the output does not carry


_UNDECODED: Any = object()


class _StreamedOutput(UsageError, AttributeError):
    """``Result.document`` of an output that went to a sink. Also an ``AttributeError``, so that
    ``hasattr(result, "document")`` and ``getattr(result, "document", None)`` answer as for
    any attribute an object does not have, instead of raising."""


@dataclass
class Result:
    output: bytes
    source_format: str
    target_format: str
    losses: list[ir.Loss]
    warnings: list[Problem] = field(default_factory=list)
    files: dict[str, bytes] = field(default_factory=dict)  # what an ASIF output embeds by path, by that path
    artifacts: dict[str, bytes] = field(default_factory=dict)  # embedded files, by their original location
    # what each path asked of the artifacts folder gave, in order (see _artifacts.reads_digest)
    artifact_reads: dict[str, str] = field(default_factory=dict)
    # the files looked for beside the input in its format's layout (a Claude Code session's
    # subagent transcripts), with a digest of what was found; None when none were looked for
    companions: Sought | None = None
    counts: dict[str, int] = field(default_factory=dict)  # the length of each list member of the output's root
    _document: Any = field(default=_UNDECODED, repr=False)
    _json: bytes | None = field(default=None, repr=False)  # a package's session document, when output is the package
    streamed: bool = False  # the output went to convert_into's sink: ``output`` is empty
    # the loss kinds this conversion could have recorded (those of the mapping tables it recorded
    # by): a kind of Options.fail_on outside them can never refuse it (none, for a checked copy)
    possible_kinds: frozenset[str] = frozenset()
    shape: str = "document"  # "lines": the output is JSON Lines, and ``document`` the list of its lines' values

    @property
    def document(self) -> Any:
        """The output as JSON values: decoded from its bytes on first use (a conversion need not
        hold them beside the bytes, and the command line never asks for them)."""
        if self.streamed:
            raise _StreamedOutput("the output went to the sink convert_into() was given: read it from there")
        if self._document is _UNDECODED:
            self._document = decode_output(self.output) if self.shape == "lines" else \
                msgspec.json.decode(self._json if self._json is not None else self.output)
        return self._document

    def loss_counts(self) -> Counter[str]:
        return Counter(loss.kind for loss in self.losses)


# What convert(), validate() and load() accept as a document: its bytes, its JSON text, the path
# of a file holding it, or the document already parsed into JSON values.
DocumentInput = bytes | bytearray | memoryview | str | os.PathLike[str] | dict[str, Any] | list[Any]

_ACCEPTED = ("bytes, str (the JSON text), an os.PathLike path to read, or a parsed JSON document "
             "(a dict, as json.loads returns it)")


class WrongFormat(InvalidInput):
    """The document was read as one format (``source``), but it is plainly another one."""

    def __init__(self, found: Format, expected: Format, source: str) -> None:
        self.found, self.expected = found, expected
        self.what = f"this is {_a(found.description)}, not {_a(expected.description)}"
        message = f"{self.what}; read it as {found.name!r} (or let the format be detected)"
        super().__init__([Problem(rule="format", path="", message=message)], source)


def _a(text: str) -> str:
    return ("an " if text[:1].lower() in "aeiou" else "a ") + text


def load(data: DocumentInput, *, source: str | None = None, name: str = "<input>",
         limits: Limits | None = None) -> tuple[Any, Format]:
    """Decode a document (within ``limits``) and pick its format (``source`` forces one); an
    ASIF package is checked whole and its session returned."""
    found = _read(data, source, name, limits)
    return found.raw, found.format


def load_session(data: DocumentInput, *, source: str | None = None, options: Options | None = None,
                 name: str = "<input>", limits: Limits | None = None) -> ir.Document:
    """The typed session of any supported input (an ASIF document or package, a continuity
    export), read as :func:`convert` reads it: the same validation, refusals and errors. Its
    ``losses`` are the document's own, then those reading it into the IR recorded.

    Public as ``asif_convert.load``; ``data`` is what :func:`convert` accepts."""
    return read_session(data, source=source, options=options, name=name, limits=limits).document


@dataclass(frozen=True)
class Loaded:
    """A session read as :func:`load_session` reads it, with the name its input is reported
    under (a path's own) and the input's problems that did not refuse it (``convert``'s warnings)."""

    document: ir.Document
    name: str
    warnings: list[Problem]
    # where each record of the input is, by the id of the IR events read from it, for an input
    # whose records are not ASIF's (a continuity export: ``/messages/3``), so that a problem
    # found in the IR is pointed at the document the user has; empty for ASIF
    records: dict[str, str] = field(default_factory=dict)
    # for an input of JSON Lines whose format says it (``record_lines``): the line of each event
    lines: dict[str, int] = field(default_factory=dict)
    files: dict[str, bytes] = field(default_factory=dict)  # a package's files, by their paths


def read_session(data: DocumentInput, *, source: str | None = None, options: Options | None = None,
                 name: str = "<input>", limits: Limits | None = None, records: bool = False) -> Loaded:
    """The session and what goes with it (see ``Loaded``); with ``records``, where its records are."""
    options = options or Options()
    if not isinstance(options, Options) or not isinstance(limits or Limits(), Limits):
        raise UsageError("options must be an asif_convert.Options and limits an asif_convert.Limits")
    found = _read(data, source, name, limits)
    found.data = None
    problems = _input_problems(found.format, found.raw, options, found.name)
    ctx = new_context(options)
    doc = found.format.read(found.raw, ctx)
    _refuse_if_strict(ctx.warnings, options, found.name)
    known = {loss.id for loss in doc.losses}
    doc.losses = doc.losses + [loss for loss in ctx.losses() if loss.id not in known]
    record_lines = getattr(found.format, "record_lines", None) if records and isinstance(found.raw, Lines) else None
    return Loaded(doc, found.name, problems + ctx.warnings, _records(found) if records else {},
                  record_lines(doc, found.raw) if record_lines is not None else {}, found.files)


def _records(found: _Input) -> dict[str, str]:
    """The JSON pointer of each message and event of a continuity export, by its id (the id
    of the IR events read from it, or their prefix); nothing for another format."""
    if found.format.name != "continuity" or not isinstance(found.raw, dict):
        return {}
    out: dict[str, str] = {}
    for coll, key in (("events", "event_id"), ("messages", "message_id")):
        records = found.raw.get(coll)
        for k, rec in enumerate(records if isinstance(records, list) else ()):
            if isinstance(rec, dict) and isinstance(rec.get(key), str):
                out[rec[key]] = pointer(coll, k)
    return out


# Records of this module are msgspec Structs, not dataclasses: a dataclass takes about half a
# millisecond to create at import (its methods are generated and compiled), a Struct a hundredth.
class _Input(msgspec.Struct):
    raw: Any  # the document as checked JSON values (a Lines, for a format of JSON Lines)
    format: Format
    name: str  # what to report it under
    files: dict[str, bytes]  # a package's files, by member name (empty for a plain document)
    data: bytes | None  # its bytes, when it came as bytes, text or a file (not when parsed)


def _read(data: DocumentInput, source: str | None, name: str, limits: Limits | None,
          beside: str | os.PathLike[str] | None = None) -> _Input:
    limits, name = limits or Limits(), display_name(name)  # (a name reports go to, and outputs may carry)
    if isinstance(data, os.PathLike):
        beside = data if beside is None else beside
        data, name = _read_path(data, name, limits)
    if isinstance(data, bytes | bytearray | memoryview) and is_package(bytes(data)):
        pkg = read_package(bytes(data), name, limits)
        fmt = format_of(pkg.document, source, name)
        if fmt.name != "asif":
            raise InvalidInput([Problem(rule="package", path="/session.json", message=(
                f"a package carries an ASIF session, not a {fmt.name} document"))], name)
        return _Input(pkg.document, fmt, name, pkg.files, bytes(data))
    as_bytes = bytes(data) if isinstance(data, bytes | bytearray | memoryview) else (
        data.encode("utf-8", "surrogatepass") if isinstance(data, str) else None)
    forced = get(source) if source else None
    if as_bytes is not None and (forced is None or shape(forced) == "lines"):
        try:
            raw = _decode_any(as_bytes, forced, name, limits)
        except InvalidInput as exc:
            if isinstance(data, str) and forced is None:
                raw, name = decoded(data, name, limits)  # (a str's own hint)
            raise exc
    else:
        raw, name = decoded(data, name, limits)
    fmt = format_of(raw, source, name)
    if isinstance(raw, Lines) and beside is not None and hasattr(fmt, "companions"):
        raw = _with_companions(raw, fmt, os.fspath(beside), limits)
    return _Input(raw, fmt, name, {}, as_bytes)


def _with_companions(lines: Lines, fmt: Any, path: str, limits: Limits) -> Lines:
    """``lines`` with the files that belong with it in its format's layout, found beside ``path``
    (the format's ``companions(file name, lines)`` says which: folders to list, files to read)."""
    folders, files = fmt.companions(os.path.basename(path), lines)
    folders, files = list(folders), list(files)
    found, left = gather(path, folders, files, limits)
    parts = {rel: decode_lines(data, f"{lines.name} ({rel})", limits) for rel, data in found.items()}
    return dataclasses.replace(lines, parts=parts, left_out=left,
                               sought=Sought(folders=folders, files=files, sha256=digest(found, left)))


def _decode_any(data: bytes, forced: Format | None, name: str, limits: Limits) -> Any:
    """The input as one JSON document, or as :class:`Lines` when it is JSON Lines: several
    lines of which the first decodes alone, or a format of JSON Lines claims (or ``forced``
    is one). One line holding one object is a document unless only a format of JSON Lines
    claims it (or ``forced`` is one): then it is one record."""
    lines_forced = forced is not None
    if looks_like_lines(data) and _first_line_decodes(data):
        return decode_lines(data, name, limits)
    try:
        doc = jsonio.decode(data, name, limits)
    except InvalidInput:
        if lines_forced or looks_like_lines(data):  # a first line that is not JSON, a cut one
            lines = decode_lines(data, name, limits)
            if lines_forced or detect(lines) is not None:
                return lines
        raise
    one_line = b"\n" not in data.strip()
    if lines_forced and not one_line:  # one document over several lines: not JSON Lines
        assert forced is not None
        other = detect(doc)
        if other is not None:
            raise WrongFormat(other, forced, name)
        raise InvalidInput([Problem(rule="format", path="", message=(
            f"one JSON document written over several lines, not JSON Lines; expected {forced.description}"))], name)
    if one_line and isinstance(doc, dict) and (lines_forced or (detect(doc) is None and detect_lines([doc]))):
        return Lines(records=[(1, doc)], problems=[], name=name)
    return doc


def _first_line_decodes(data: bytes) -> bool:
    stripped = data.lstrip()
    try:
        return isinstance(msgspec.json.decode(stripped[:stripped.find(b"\n")]), dict)
    except (msgspec.DecodeError, RecursionError):  # (deeper than a decoder recurses: refused as a document)
        return False


def _read_path(path: os.PathLike[str], name: str, limits: Limits) -> tuple[bytes, str]:
    text = os.fsdecode(os.fspath(path))
    data, text = jsonio.read_input(os.path.join(".", text) if text == "-" else text, limits)  # a file named -
    return data, text if name == "<input>" else name


def decoded(document: DocumentInput, name: str = "<input>", limits: Limits | None = None) -> tuple[Any, str]:
    """The document as checked JSON values (the limits, integers, duplicate keys: as for a file),
    and the name to report it under (a path's own, unless ``name`` is given).

    Raises ``UsageError`` for anything but the types in ``DocumentInput``."""
    limits = limits or Limits()
    if isinstance(document, bytes | bytearray | memoryview):
        return jsonio.decode(bytes(document), name, limits), name
    if isinstance(document, str):
        return _decode_text(document, name, limits), name
    if isinstance(document, os.PathLike):
        data, name = _read_path(document, name, limits)
        return jsonio.decode(data, name, limits), name
    if isinstance(document, dict | list):
        return _checked_values(document, name, limits), name
    raise UsageError(f"cannot read a document from {type(document).__name__}; expected {_ACCEPTED}")


def _decode_text(text: str, name: str, limits: Limits) -> Any:
    try:
        return jsonio.decode(text.encode("utf-8", "surrogatepass"), name, limits)
    except InvalidInput as exc:
        if text.lstrip()[:1] in ("{", "["):
            raise
        hint = "; a str is read as the document's JSON text: pass a pathlib.Path to read a file"
        raise InvalidInput([msgspec.structs.replace(p, message=p.message + hint) for p in exc.problems],
                           name) from None


def _checked_values(document: dict[str, Any] | list[Any], name: str, limits: Limits) -> Any:
    """A parsed document, checked as its JSON text would be: encoded, then decoded and checked
    like a file. What does not survive the trip unchanged (a tuple, a set, a datetime, NaN, a
    key that is not a string) is not a JSON value, and is refused where it is."""
    try:
        raw = jsonio.decode(msgspec.json.encode(document), name, limits)
    except (TypeError, ValueError, RecursionError, msgspec.EncodeError):
        raw = None
    if raw is None or raw != document:
        raise InvalidInput([non_json_value(document, limits)], name)
    return raw


def non_json_value(document: Any, limits: Limits) -> Problem:
    """The first value of a parsed document that is not a JSON value, as a Problem."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(document, ())]
    while stack:
        value, path = stack.pop()
        if len(path) > limits.max_depth:
            return Problem(rule="limit", path=pointer(*path[:limits.max_depth]),
                           message=depth_message(limits))
        kind = type(value)
        if kind is float and not math.isfinite(value):
            return Problem(rule="json", path=pointer(*path), message=f"{value!r} is not a JSON number")
        if kind is dict:
            bad = next((k for k in value if type(k) is not str), None)
            if bad is not None:
                return Problem(rule="json", path=pointer(*path),
                               message=f"the key {bad!r} is not a string; JSON object keys are strings")
            stack.extend((v, (*path, k)) for k, v in reversed(value.items()))
        elif kind is list:
            stack.extend((v, (*path, i)) for i, v in reversed(list(enumerate(value))))
        elif kind not in (str, int, float, bool, type(None)):
            return Problem(rule="json", path=pointer(*path),
                           message=f"a Python {kind.__name__} is not a JSON value (expected an object, array, "
                                   "string, number, boolean or null)")
    return Problem(rule="json", path="", message="not a JSON document")  # e.g. an integer msgspec cannot encode


def format_of(raw: Any, source: str | None, name: str) -> Format:
    """The format ``source`` names, or the detected one. A document forced into a format it
    plainly is not (another installed format claims it) is refused in one line, rather than with
    every schema error of the wrong format. ``raw`` is a parsed document, or :class:`Lines`."""
    lines = isinstance(raw, Lines)
    if source:
        fmt = get(source)
        if lines != (shape(fmt) == "lines"):  # (a parsed document, forced into a format of lines)
            raise InvalidInput([Problem(rule="format", path="", message=(
                f"expected {fmt.description}: one JSON record per line, but the input is one JSON "
                f"{_KINDS.get(type(raw), 'number')}"))], name)
        if not fmt.detect(raw.first() if lines else raw):
            other = detect(raw)
            if other is not None and other.name != fmt.name:
                raise WrongFormat(other, fmt, name)
            if not lines and not isinstance(raw, dict):  # one line saying what it is, not every schema error
                raise InvalidInput([_not_an_object(raw, f"expected {fmt.description}")], name)
        return fmt
    found = detect(raw)
    if found is None:
        raise InvalidInput([_unknown_lines(raw) if lines else _unknown_format(raw)], name)
    return found


def _unknown_lines(lines: Lines) -> Problem:
    known = "; ".join(f.description for f in registry().values() if shape(f) == "lines") or "none is installed"
    if not lines.records:
        return next((p for p in lines.problems), Problem(rule="format", path="", message="no record"))
    return Problem(rule="format", path="", line=lines.records[0][0], message=(
        f"JSON Lines of no installed format; expected one of: {known}"))


_KINDS = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}


def _not_an_object(raw: Any, expected: str) -> Problem:
    kind = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(type(raw), "a number")
    return Problem(rule="format", path="", message=f"the document is {kind}, not an object; {expected}")


def _unknown_format(raw: Any) -> Problem:
    lines = ", ".join(f.name for f in registry().values() if shape(f) == "lines")
    expected = ("expected an agent-continuity export (format: agent-continuity-export) or an ASIF session "
                "(asif_version)" + (f", or JSON Lines of one record per line ({lines})" if lines else ""))
    if not isinstance(raw, dict):
        return _not_an_object(raw, expected)
    if "format" in raw:
        named = raw["format"]
        said = f"unknown format {shown(named)}" if isinstance(named, str) else \
            f"the format is {shown(named)}, not a format's name"
        return Problem(rule="format", path="/format", message=f"{said}; {expected}")
    return Problem(rule="format", path="", message=f"not a document of any installed format; {expected}")


def new_context(options: Options) -> Context:
    """A conversion's context, knowing the native namespaces of every installed format, and the
    artifacts folder the user named (if any)."""
    files = None
    if options.artifacts_root is not None:
        files = ArtifactFiles(options.artifacts_root, options.artifact_max_bytes, options.artifacts_max_total,
                              folder=options.artifacts_folder or "")
    return Context(options=options, namespaces=namespaces(), files=files)


class Sink(Protocol):
    def write(self, data: bytes, /) -> Any: ...


def convert(data: DocumentInput, *, to: str, source: str | None = None, options: Options | None = None,
            name: str = "<input>", compact: bool = False, limits: Limits | None = None,
            package: bool = False, beside: str | os.PathLike[str] | None = None) -> Result:
    """Convert one document to the format ``to``; raises a ``ConversionError`` subclass on failure.

    ``data`` is the document's bytes, its JSON text (``str``), an ``os.PathLike`` path to read,
    or the parsed document (a ``dict``); anything else raises ``UsageError``. The input may be
    an ASIF package; with ``package`` the output is one (``to`` must be ASIF). A document already
    in the format ``to`` is a checked copy: validated like any input, written back unchanged
    (re-indented or compacted), with no losses of its own.

    The files the session embeds by path come with the result when their bytes are at hand (a
    package's members, files read under ``Options.artifacts_root``): ``Result.files`` (to write
    beside an ASIF output) and ``Result.artifacts`` (under an artifacts folder). Each other one
    is a ``file_not_carried`` loss in ``Result.losses`` (not written into the output).

    A format of JSON Lines may have files that belong with an input (a Claude Code session's
    subagent transcripts): they are read from beside ``data`` when it is a path, or from beside
    ``beside`` (the path the bytes were read from), inside that folder only."""
    return convert_into(data, None, to=to, source=source, options=options, name=name, compact=compact,
                        limits=limits, package=package, beside=beside)


def convert_into(data: DocumentInput, sink: Sink | None, *, to: str, source: str | None = None,
                 options: Options | None = None, name: str = "<input>", compact: bool = False,
                 limits: Limits | None = None, package: bool = False,
                 beside: str | os.PathLike[str] | None = None) -> Result:
    """:func:`convert`; an output its format encodes a slice at a time (an ASIF document that
    is not a package, a continuity export) goes piece by piece to ``sink`` instead of
    ``Result.output``, which is then empty (``Result.streamed`` says so): the output never
    exists whole as bytes, nor (an ASIF one, without output validation) whole as JSON values.
    A refusal may come after some pieces: the sink must hold them apart until the end (the
    command line writes a temp file, renamed once the conversion succeeded)."""
    options = options or Options()
    limits = limits or Limits()
    if not isinstance(options, Options) or not isinstance(limits, Limits):
        raise UsageError("options must be an asif_convert.Options and limits an asif_convert.Limits")
    dst = _target(to, options, package)
    found = _read(data, source, name, limits, beside)
    raw, src, name = found.raw, found.format, found.name
    if not options.source_pointers:  # the bytes are read from here on as decoded values: they need
        found.data = None  # not stay while the input is validated and its IR built
    problems = _input_problems(src, raw, options, name)
    if src.name == dst.name and not options.source_pointers and options.artifacts_root is None:
        return _copy(found, problems, options, compact, limits, package)

    ctx = new_context(options)
    ctx.release_input = True  # read once below, then let go
    source_doc = _point_at_the_source(found, src, dst, ctx, package) if options.source_pointers else None
    input_bytes = found.data if source_doc is not None else None
    found.data = None  # (kept until here only for the source pointers)
    companions = raw.sought if isinstance(raw, Lines) else None
    doc = src.read(raw, ctx)
    _refuse_if_strict(ctx.warnings, options, name)
    files = {**found.files, **(ctx.files.served if ctx.files else {})}
    del raw, found  # the decoded input is no longer needed: let it go before the output is built
    if source_doc is not None:
        doc.resources.append(source_doc)
        if isinstance(source_doc.path, str) and input_bytes is not None:
            files[source_doc.path] = input_bytes
    wanted, files, not_carried, artifacts = _files_of(dst, doc, files, ctx, limits, package)
    ctx.embedded = files
    write_streamed = getattr(dst, "write_streamed", None)
    streamed = False  # whether the output went to the sink
    if write_streamed is not None:  # the output is encoded a slice at a time: never whole as bytes
        out, key, items = write_streamed(doc, ctx)
        _refuse_if_strict(ctx.warnings, options, name)
        del doc  # the items hold what they still need of the IR
        if options.validate:  # the validators take one document: its items are built whole (the
            # IR let go as they are, so never the IR and the output's values at once; items that
            # are dicts already are JSON values), and let go in turn as they are encoded
            out[key] = list(jsonio.json_values(items))
            _check_written(dst, out, problems, ctx, name)
            items, out[key] = jsonio.drained(out[key]), []
        losses = ctx.losses() + not_carried
        _apply_loss_policy(losses, options, name)
        encoding = jsonio.StreamedEncoding(out, key, items, compact=compact, limits=limits, source=name)
        if sink is not None and not package:
            for piece in encoding:
                sink.write(piece)
            output, streamed = b"", True
        else:
            output = b"".join(encoding)
        counts, document = {**_counts(out), key: encoding.count}, _UNDECODED
        del items, encoding
    else:
        out = written_as(name, dst.write, doc, ctx)
        del doc  # nor is the IR: the output holds what it needs, and validating and encoding it is the peak
        _refuse_if_strict(ctx.warnings, options, name)
        if options.validate:
            _check_written(dst, out, problems, ctx, name)
        losses = ctx.losses() + not_carried
        _apply_loss_policy(losses, options, name)
        output = _encoded(dst, out, compact, limits, name)
        counts, document = _counts(out), out
    embedded = {path: files[path] for path in _path_resources(out) if path in files} if dst.name == "asif" else {}
    session, output = _packaged(output, out, files, name, ctx.files) if package else (None, output)
    return Result(output=output, source_format=src.name, target_format=dst.name, losses=losses,
                  warnings=problems + ctx.warnings, files=embedded, artifacts=artifacts,
                  artifact_reads=dict(ctx.files.log) if ctx.files else {}, companions=companions, counts=counts,
                  _document=document, _json=session if document is _UNDECODED else None, streamed=streamed,
                  possible_kinds=frozenset(kind for ledger in ctx.ledgers for kind in ledger.table.kinds)
                  | ({FILE_NOT_CARRIED} if wanted else set()), shape=shape(dst))


def written_as(name: str, write: Callable[..., Any], *args: Any) -> Any:
    """``write(*args)``, its refusal of the session told as a problem of the input ``name`` (a
    writer knows only the session, whose id the user may never have seen)."""
    try:
        return write(*args)
    except InvalidInput as exc:
        raise InvalidInput(exc.problems, name) from None


def _packaged(session: bytes, out: Any, files: dict[str, bytes], name: str,
              folder: ArtifactFiles | None) -> tuple[bytes, bytes]:
    """(the session document, the package that carries it with its files)."""
    return session, write_package(session, packaged_files(out, files, name, folder))


def dump(document: ir.Document, *, to: str = "asif", options: Options | None = None, name: str = "<document>",
         compact: bool = False, limits: Limits | None = None, package: bool = False) -> Result:
    """Write a typed session (an ``ir.Document``: what :func:`load_session` returns, or what an
    importer builds, see ``ir.SessionBuilder``) in the format ``to``, as :func:`convert` writes
    a document: the session is checked as an ASIF input is (schema and semantic rules, errors
    with their JSON path, ``InvalidInput``), then written, and the output checked; the same
    ``Result``, options, loss policy and errors. Public as ``asif_convert.dump``."""
    if not isinstance(document, ir.Document):
        raise UsageError(f"dump() writes an asif_convert.ir.Document, not {type(document).__name__}; "
                         "to convert a document's bytes, text or path, use convert()")
    try:  # the session as ASIF JSON values: from here on it is read like any ASIF input
        raw = get("asif").write(document, new_context(Options()))
    except (AttributeError, TypeError, ValueError, msgspec.MsgspecError) as exc:
        raise InvalidInput([Problem(rule="schema", path="", message=f"the document cannot be written as ASIF: "
                                                                     f"{exc}")], name) from None
    return convert(raw, to=to, options=options, name=name, compact=compact, limits=limits, package=package)


def _encoded(dst: Format, out: Any, compact: bool, limits: Limits, name: str) -> bytes:
    """The output's bytes, which must read back under ``limits``: JSON Lines for a format of that
    shape (always compact), else one document."""
    if shape(dst) == "lines":
        return encode_lines(out, limits, name)
    output = jsonio.encode(out, compact=compact)
    check_output(output, out, limits, name)  # what we write must read back under these limits
    return output


def problems_of(fmt: Format, raw: Any) -> list[Problem]:
    """Every problem of a decoded input: a format of JSON Lines is told its records' problems,
    and the lines that are not records (not JSON, cut) come first; then those of the files read
    with it (its companions), each named in its message (their lines are that file's)."""
    if not isinstance(raw, Lines):
        return fmt.validate(raw)
    problems = [*raw.problems, *fmt.validate(raw)]
    for rel, part in sorted(raw.parts.items()):
        # (a record-level problem only: a companion with no record at all is an empty history)
        own = [*part.problems, *(p for p in fmt.validate(part) if p.line is not None)]
        problems += [msgspec.structs.replace(p, message=f"in {rel}: {p.message}") for p in own]
    return problems


def _input_problems(src: Format, raw: Any, options: Options, name: str) -> list[Problem]:
    """The input's problems, when none refuses it (strict: none at all): they become warnings."""
    problems = problems_of(src, raw)
    fatal = [p for p in problems if options.strict or p.rule in FATAL_RULES]
    if fatal:
        raise InvalidInput(fatal, name)
    return problems


def _target(to: str, options: Options, package: bool) -> Format:
    """The target format, once the request is known to make sense for it."""
    dst = get(to)
    if package and dst.name != "asif":
        raise UsageError(f"a package carries an ASIF session; {dst.name} output cannot be packaged")
    unknown = sorted(options.fail_on - loss_kinds().keys()) if options.fail_on else []
    if unknown:  # a misspelled kind would never fire
        raise UsageError(f"unknown loss kind {', '.join(map(repr, unknown))} in fail_on; known kinds: "
                         f"{', '.join(loss_kinds())}")
    return dst


def _point_at_the_source(found: _Input, src: Format, dst: Format, ctx: Context, package: bool) -> ir.Resource | None:
    """Set ``ctx`` up for source pointers; to ASIF, the input's own resource, which the output gets."""
    if {src.name, dst.name} != {"continuity", "asif"}:
        raise UsageError("source pointers are written between a continuity export and ASIF only")
    if found.data is None:
        raise UsageError("source pointers name the input's bytes: pass the document as bytes, text or a path")
    if dst.name == "asif":
        source_doc = source_resource(found.data, found.name, packaged=package)
        ctx.source_id = source_doc.id
        return source_doc
    ctx.source_document = source_reference(found.data, found.name,
                                           member="session.json" if is_package(found.data) else None)
    return None


def _check_written(dst: Format, out: Any, problems: list[Problem], ctx: Context, name: str) -> None:
    """Output validation: an invalid output is the input's fault when it carries the input's own
    problems or records of the target format, else a bug of the writer."""
    written = Lines(records=list(enumerate(out, 1)), problems=[], name=name) if shape(dst) == "lines" else out
    bad = [p for p in dst.validate(written) if p.severity == "error"]
    if bad and {(p.rule, p.path) for p in bad} <= {(p.rule, p.path) for p in problems}:
        raise InvalidInput(problems, name)  # the input's own problems, carried into the output: not a bug
    if bad and ctx.carries_target_records:
        raise InvalidInput([msgspec.structs.replace(p, message=f"{p.message} (in the {dst.name} records the "
                                                                "input carries, as converted)") for p in bad], name)
    if bad:
        who = "asif-convert" if dst in BUILTINS else f"the {dst.name} format plugin ({type(dst).__module__})"
        raise InternalError(f"{who} produced an invalid {dst.name} document from {name} "
                            f"({len(bad)} problems, first {bad[0].render()}); nothing was written. "
                            f"Please report this bug{'' if dst in BUILTINS else ' to its authors'}.", bad)


def _counts(doc: Any) -> dict[str, int]:
    if isinstance(doc, list):  # JSON Lines: its lines
        return {"lines": len(doc)}
    return {k: len(v) for k, v in doc.items() if isinstance(v, list)} if isinstance(doc, dict) else {}


def _copy(found: _Input, problems: list[Problem], options: Options, compact: bool, limits: Limits,
          package: bool) -> Result:
    """A same-format conversion: the input, checked, written back as it is. Going through the
    IR would rebuild the same document while reporting the losses of a trip to the IR and back
    that the output never makes; a copy has none. Problems a conversion would have carried as
    losses cannot be carried here: the copy would repeat them, so errors among them refuse it."""
    raw, fmt, name = found.raw, found.format, found.name
    if options.validate and any(p.severity == "error" for p in problems):
        raise InvalidInput(problems, name)  # the input's own problems: a copy would repeat them
    if isinstance(raw, Lines):  # its complete records (a cut last line is a warning, and not copied)
        raw = [value for _, value in raw.records]
    output = _encoded(fmt, raw, compact, limits, name)
    if package:
        output = write_package(output, packaged_files(raw, found.files, name))
        embedded: dict[str, bytes] = {}
        losses: list[ir.Loss] = []
        wanted: dict[str, _Wanted] = {}
    else:  # (no artifacts folder here: with one, the conversion goes through the IR)
        wanted = _wanted_in(raw) if fmt.name == "asif" else {}
        embedded, losses = _files_at_hand(wanted, found.files, None)
        embedded = {path: embedded[path] for path in wanted if path in embedded}
        _apply_loss_policy(losses, options, name)
    return Result(output=output, source_format=fmt.name, target_format=fmt.name, losses=losses,
                  warnings=problems, files=embedded, counts=_counts(raw), _document=raw,
                  possible_kinds=frozenset({FILE_NOT_CARRIED} if wanted else ()), shape=shape(fmt))


def _path_resources(doc: dict[str, Any]) -> dict[str, int]:
    """The paths of the resources an ASIF document embeds by path, with the index of the first."""
    out: dict[str, int] = {}
    for r, res in enumerate(doc.get("resources") or ()):
        if res.get("availability") == "embedded" and isinstance(res.get("path"), str):
            out.setdefault(res["path"], r)
    return out


class _Wanted(msgspec.Struct, array_like=True):
    """A file a document embeds by path: its first resource's index and id, and what it declares."""

    index: int
    id: str
    size: Any
    sha256: Any
    media_type: Any = ""


def _wanted_in(doc: dict[str, Any]) -> dict[str, _Wanted]:
    """The files an ASIF document (as JSON values) embeds by path."""
    return {path: _Wanted(r, str(doc["resources"][r].get("id")), doc["resources"][r].get("bytes"),
                          doc["resources"][r].get("sha256")) for path, r in _path_resources(doc).items()}


def writing_context(loaded: Loaded, dst: Format, options: Options, limits: Limits) -> tuple[Context, list[ir.Loss]]:
    """The context a writer of ``dst`` is given for a session read by :func:`read_session`,
    outside :func:`convert` (a hand-off writes into a client's store): the files it carries
    (its package's, what the artifacts folder of ``options`` gives), and a ``file_not_carried``
    loss for each it wants and cannot have."""
    ctx = new_context(options)
    _, ctx.embedded, not_carried, _ = _files_of(dst, loaded.document, loaded.files, ctx, limits, False)
    return ctx, not_carried


def _files_of(dst: Format, doc: ir.Document, files: dict[str, bytes], ctx: Context, limits: Limits,
              package: bool) -> tuple[dict[str, _Wanted], dict[str, bytes], list[ir.Loss], dict[str, bytes]]:
    """The files the output wants of those the session embeds by path, what it has of them (the
    input's, with the artifacts folder's), a ``file_not_carried`` loss each for the rest, and
    what ``--artifacts-out`` writes. An output that carries them inline (an agent's transcript)
    wants only the files the messages and tool results of the history it continues show, each
    within ``--max-string`` as a base64 data URL, and has no artifacts of its own."""
    inline = files_inline(dst)
    used = ir.resources_used(ir.continued_history(doc)) if inline else None
    wanted = {} if package else _wanted(doc.resources, used)
    files, not_carried = _files_at_hand(wanted, files, ctx.files, limits.max_string if inline else None)
    return wanted, files, not_carried, {} if inline else artifact_files(doc.resources, files,
                                                                         every=dst.name != "asif")


def _wanted(resources: list[ir.Resource], used: set[str] | None = None) -> dict[str, _Wanted]:
    """The files the IR's resources embed by path (each path's first resource); with ``used``,
    those of the resources of these ids alone."""
    out: dict[str, _Wanted] = {}
    for r, res in enumerate(resources):
        if res.availability == "embedded" and isinstance(res.path, str) and res.path not in out \
                and (used is None or res.id in used):
            out[res.path] = _Wanted(r, res.id, res.bytes, res.sha256, res.media_type)
    return out


def _inline_length(content: bytes, want: _Wanted) -> int:
    """The length of ``content`` written inline at the most: as a base64 data URL."""
    return len(f"data:{want.media_type};base64,") + 4 * -(-len(content) // 3)


def _file_bytes(path: str, want: _Wanted, files: dict[str, bytes], folder: ArtifactFiles | None,
                package: bool = False) -> tuple[bytes | None, str]:
    """The bytes of one file a document embeds by path (None, and why not): those the input
    brought (a package's members, artifacts read), else the file of that path in ``folder``
    (the user's --artifacts-root), which must have the size and digest its resource declares."""
    content = files.get(path)
    if content is not None:
        return content, ""
    if folder is None:
        return None, (f"its bytes are not at hand {'to package' if package else 'to carry'} (name the folder that "
                      "holds it with --artifacts-root)")
    got = folder.read(path)
    if not isinstance(got, bytes):
        return None, f"it is not {'packaged' if package else 'carried'}: {got.reason}"
    if (len(got), hashlib.sha256(got).hexdigest()) != (want.size, want.sha256):
        return None, "the file in the artifacts folder differs from its declared bytes and sha256"
    return got, ""


def _files_at_hand(wanted: dict[str, _Wanted], files: dict[str, bytes], folder: ArtifactFiles | None,
                   inline_max: int | None = None) -> tuple[dict[str, bytes], list[ir.Loss]]:
    """``files`` with the bytes of every file in ``wanted`` that can be had, and one
    ``file_not_carried`` loss per file that cannot: the output names a file that does not come
    with it (docs/packages.md, *Files named by path*). ``inline_max``: the longest string the
    output may hold (``--max-string``), for a file written inline as a base64 data URL."""
    out, losses = dict(files), []
    for path, want in wanted.items():
        content, why = _file_bytes(path, want, out, folder)
        if content is not None and inline_max is not None and _inline_length(content, want) > inline_max:
            why = f"its {len(content):,} bytes, written inline as base64, would be a longer string than --max-string"
            content = None
            out.pop(path, None)  # (a package's member too: not to be written inline after all)
        if content is None:
            losses.append(ir.Loss(id=f"translation:file-not-carried:{path}", stage="translation",
                                  kind=FILE_NOT_CARRIED, scope="resources",
                                  explanation=f"file-not-carried:{path}: the session embeds {path} by path, "
                                              f"but {why}, so it does not come with the output.",
                                  references=[ir.LossRef(type="resource", id=want.id)]))
        else:
            out[path] = content
    return out, losses


def packaged_files(doc: dict[str, Any], files: dict[str, bytes], name: str,
                   folder: ArtifactFiles | None = None) -> dict[str, bytes]:
    """The bytes of every resource ``doc`` embeds by path: a package must carry each one. Those
    not at hand are read from ``folder`` (the user's --artifacts-root) when there is one, and
    must have the size and digest their resource declares."""
    problems, out = [], {}
    for path, want in _wanted_in(doc).items():
        content, why = _file_bytes(path, want, files, folder, package=True)
        if content is None:
            problems.append(Problem(rule="package", path=pointer("resources", want.index, "path"),
                                    message=f"embeds '{path}' by path, but {why}"))
        else:
            out[path] = content
    if problems:
        raise InvalidInput(problems, name)
    return out


def _refuse_if_strict(warnings: list[Problem], options: Options, name: str) -> None:
    """With ``strict``, what the conversion warns of (converter state of an edited document it
    could not follow, an output the client could not resume) refuses it, as the input's own
    problems do."""
    if options.strict and warnings:
        raise InvalidInput([msgspec.structs.replace(w, severity="error") for w in warnings], name)


def _apply_loss_policy(losses: list[ir.Loss], options: Options, name: str) -> None:
    refused = Counter(loss.kind for loss in losses
                      if options.on_loss == "error" or loss.kind in options.fail_on)
    if refused:
        raise LossPolicyError(dict(sorted(refused.items())), name)


def validate(document: DocumentInput, *, format: str | None = None, base_dir: Path | None = None,
             name: str = "<input>", limits: Limits | None = None) -> list[Problem]:
    """Every problem of a document (errors and warnings); [] when it is clean.

    ``document`` is what :func:`convert` accepts. ``format`` forces the format instead of
    detecting it; ``base_dir`` enables checking embedded ASIF resources stored by path, inside
    that directory only."""
    return validate_as(document, format=format, base_dir=base_dir, name=name, limits=limits)[1]


def validate_as(document: DocumentInput, *, format: str | None = None, base_dir: Path | None = None,
                name: str = "<input>", limits: Limits | None = None) -> tuple[str | None, list[Problem]]:
    """:func:`validate`, also returning the format the document was validated as (``None``
    when it could not be read as any)."""
    try:
        raw, fmt = load(document, source=format, name=name, limits=limits)
    except InvalidInput as exc:
        return None, exc.problems
    problems = problems_of(fmt, raw)
    if base_dir is not None and fmt.name == "asif" and not any(p.rule == "schema" for p in problems):
        problems += path_resource_problems(raw, base_dir)
    return fmt.name, problems


def ensure_valid(document: DocumentInput, **kwargs: Any) -> None:
    """Raise ``InvalidInput`` with every error of the document; warnings do not raise."""
    errors = [p for p in validate(document, **kwargs) if p.severity == "error"]
    if errors:
        raise InvalidInput(errors, kwargs.get("name", "<input>"))
