"""Batch migration: many files converted in parallel, resumable, with a streamed JSONL manifest.

The pieces, each usable on its own:

- :func:`discover` walks the sources (files, directories, glob patterns) lazily, in a stable order,
  and never follows a symlink out of the source roots.
- :func:`output_path` maps a file's path relative to its source root to a path under OUTDIR that
  cannot escape it.
- :class:`Manifest` appends one JSON line per file as results arrive, and tells a rerun what it
  may skip.
- :func:`migrate` runs it all on any :class:`concurrent.futures.Executor` (local processes by
  default, a Dask cluster through ``Client.get_executor()``), with a bounded number of tasks in
  flight. Workers read their input and write their output themselves; only small
  :class:`FileResult` records travel back, so memory is bounded by the largest single file.
"""

from __future__ import annotations

import fnmatch
import glob
import hashlib
import heapq
import multiprocessing
import os
import re
import signal
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, BrokenExecutor, Executor, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple, Protocol

import msgspec

from asif_convert import _errors as errors
from asif_convert import _jsonio as jsonio
from asif_convert._errors import (
    EXIT_INTERNAL,
    EXIT_INVALID_INPUT,
    EXIT_LOSS_POLICY,
    EXIT_OK,
    ConversionError,
    InvalidInput,
    Problem,
)
from asif_convert._pipeline import convert
from asif_convert._registry import get, registry
from asif_convert._version import __version__
from asif_convert.plugin import Options

MANIFEST_NAME = "manifest.jsonl"
DEFAULT_PATTERN = "*.json"
MAX_PROBLEMS = 20  # problems kept per failed file in the manifest

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
    losses: dict[str, int] = {}
    warnings: int = 0
    error: str | None = None
    problems: list[dict[str, str]] = []
    seconds: dict[str, float] = {}
    settings: str = ""
    run: str = ""
    worker: str = ""

    @property
    def key(self) -> str:
        """What the manifest keys this file by: its output path (stable across working directories)."""
        return self.output if self.output is not None else "input:" + self.input


# --------------------------------------------------------------------------------------------
# Discovery


class Found(NamedTuple):
    path: str  # where to open it
    rel: tuple[str, ...]  # path components relative to its source root
    size: int
    confined: bool  # found by walking or matching (not named): must resolve inside the source roots


class Refused(NamedTuple):
    path: str
    rel: tuple[str, ...] | None  # where it would have gone, when known
    reason: str


def _has_magic(part: str) -> bool:
    return any(c in part for c in "*?[")


def _inside(real: str, roots: Iterable[str]) -> bool:
    return any(real == r or real.startswith(r.rstrip(os.sep) + os.sep) for r in roots)


@dataclass
class _Source:
    kind: str  # file | dir | glob
    arg: str
    base: str  # the file itself, the directory, or the glob's literal prefix


def _classify(arg: str) -> _Source:
    if os.path.lexists(arg):
        return _Source("dir" if os.path.isdir(arg) else "file", arg, arg)
    parts = Path(arg).parts
    literal = []
    for part in parts:
        if _has_magic(part):
            break
        literal.append(part)
    if len(literal) == len(parts):
        raise InvalidInput([Problem(rule="io", path="", message="no such file or directory")], arg)
    return _Source("glob", arg, str(Path(*literal)) if literal else os.curdir)


def check_sources(sources: Iterable[str | os.PathLike[str]]) -> list[str]:
    """The sources as strings; raises :class:`InvalidInput` naming one that does not exist (or
    is a pattern that matches nothing), before anything is converted."""
    out = []
    for s in sources:
        arg = os.fspath(s)
        src = _classify(arg)
        if src.kind == "glob" and next(glob.iglob(arg, recursive=True), None) is None:
            raise InvalidInput([Problem(rule="io", path="", message="no such file or directory, and no "
                                        "file matches it as a pattern")], arg)
        out.append(arg)
    if not out:
        raise InvalidInput([Problem(rule="io", path="", message="no sources given")], "<batch>")
    return out


def discover(sources: Iterable[str | os.PathLike[str]], *, pattern: str = DEFAULT_PATTERN,
             exclude: Iterable[str | os.PathLike[str]] = ()) -> Iterator[Found | Refused]:
    """Every input file under ``sources``, lazily, in a stable (sorted) order.

    - A file named explicitly is taken as given (even through a symlink); its path relative to
      its root is its name.
    - A directory is walked recursively for names matching ``pattern``; hidden entries (names
      starting with ".") are skipped. Paths are relative to the directory.
    - A glob pattern (``**`` recurses) is expanded; paths are relative to its literal prefix.

    A symlink met while walking or matching is followed only when it resolves inside one of the
    source roots; otherwise it is :class:`Refused`, as are broken symlinks and loops. Paths under
    ``exclude`` (OUTDIR, the manifest) are skipped silently.
    """
    srcs = [_classify(os.fspath(s)) for s in sources]
    roots = [os.path.realpath(s.base) for s in srcs]
    excluded = [os.path.realpath(os.fspath(e)) for e in exclude]
    for src in srcs:
        if src.kind == "file":
            yield from _one_file(src.arg, (os.path.basename(os.path.normpath(src.arg)),), roots, confined=False)
        elif src.kind == "dir":
            yield from _walk(src.arg, (), roots, excluded, pattern)
        else:
            yield from _glob(src, roots, excluded, pattern)


def _one_file(path: str, rel: tuple[str, ...], roots: list[str], *, confined: bool) -> Iterator[Found | Refused]:
    if confined and os.path.islink(path):
        real = os.path.realpath(path)
        if not os.path.exists(real):
            yield Refused(path, rel, "broken symlink")
            return
        if not _inside(real, roots):
            yield Refused(path, rel, f"symlink resolves outside the source roots (to {real})")
            return
    try:
        st = os.stat(path)
    except OSError as exc:
        yield Refused(path, rel, f"cannot read: {exc.strerror}")
        return
    if not os.path.isfile(path):
        yield Refused(path, rel, "not a regular file")
        return
    yield Found(path, rel, st.st_size, confined)


def _walk(top: str, rel0: tuple[str, ...], roots: list[str], excluded: list[str],
          pattern: str) -> Iterator[Found | Refused]:
    # An explicit stack (no recursion limit on deep trees); each frame carries the real paths of
    # its ancestors so that a symlink back up the tree is a reported loop, not an endless walk.
    stack: list[tuple[Iterator[os.DirEntry[str]], tuple[str, ...], frozenset[str]]] = []

    def push(path: str, rel: tuple[str, ...], ancestors: frozenset[str]) -> Iterator[Refused]:
        try:
            with os.scandir(path) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            yield Refused(path, rel or None, f"cannot list the directory: {exc.strerror}")
            return
        stack.append((iter(entries), rel, ancestors | {os.path.realpath(path)}))

    yield from push(top, rel0, frozenset())
    while stack:
        entries, rel, ancestors = stack[-1]
        entry = next(entries, None)
        if entry is None:
            stack.pop()
            continue
        if entry.name.startswith("."):
            continue
        sub = (*rel, entry.name)
        try:
            is_link = entry.is_symlink()
            real = os.path.realpath(entry.path) if is_link else None
            is_dir = entry.is_dir(follow_symlinks=True)
        except OSError as exc:
            yield Refused(entry.path, sub, f"cannot read: {exc.strerror}")
            continue
        if is_dir:
            real = real or os.path.realpath(entry.path)
            if _inside(real, excluded):
                continue
            if is_link and not _inside(real, roots):
                yield Refused(entry.path, sub, f"symlink resolves outside the source roots (to {real})")
            elif real in ancestors:
                yield Refused(entry.path, sub, "symlink loop")
            else:
                yield from push(entry.path, sub, ancestors)
            continue
        if not fnmatch.fnmatchcase(entry.name, pattern):
            continue
        if _inside(real or os.path.realpath(entry.path), excluded):
            continue
        yield from _one_file(entry.path, sub, roots, confined=True)


def _glob(src: _Source, roots: list[str], excluded: list[str], pattern: str) -> Iterator[Found | Refused]:
    # With "**" the pattern enumerates whole trees itself, so a matched folder is not walked again.
    walk_dirs = "**" not in src.arg
    base_parts = Path(src.base).parts if src.base != os.curdir else ()
    for match in sorted(glob.iglob(src.arg, recursive=True)):
        rel: list[str] = []
        for part in Path(match).parts[len(base_parts):]:  # lexical normalization below the literal prefix
            if part == "..":
                if not rel:
                    yield Refused(match, None, "the match lies outside the pattern's base directory")
                    break
                rel.pop()
            elif part not in (".", ""):
                rel.append(part)
        else:
            real = os.path.realpath(match)
            if _inside(real, excluded):
                continue
            if not _inside(real, roots):
                yield Refused(match, tuple(rel) or None, f"resolves outside the source roots (to {real})")
            elif os.path.isdir(match):
                if walk_dirs:
                    yield from _walk(match, tuple(rel), roots, excluded, pattern)
            else:
                yield from _one_file(match, tuple(rel) or (os.path.basename(match),), roots, confined=True)


# --------------------------------------------------------------------------------------------
# Output paths

_BAD_PART = re.compile(r"[\x00/\\]")


def output_name(name: str, to: str) -> str:
    """``export.json`` -> ``export.asif.json``; a known format extension is replaced, not doubled."""
    for ext in sorted((f.extension for f in registry().values()), key=len, reverse=True):
        if name.endswith(ext) and len(name) > len(ext):
            name = name[: -len(ext)]
            break
    else:
        if name.endswith(".json") and len(name) > 5:
            name = name[:-5]
    return name + get(to).extension


def output_path(rel: Iterable[str], to: str) -> str:
    """The POSIX path under OUTDIR for a file at ``rel`` (components relative to its source root).

    Raises ValueError for a component that could escape OUTDIR (``..``, ``.``, empty, a separator
    or NUL inside a name), so that no name in a source tree can put a file outside OUTDIR.
    """
    parts = list(rel)
    if not parts:
        raise ValueError("empty path")
    for part in parts:
        if part in ("", ".", "..") or _BAD_PART.search(part):
            raise ValueError(f"unsafe path component {part!r}")
    parts[-1] = output_name(parts[-1], to)
    return "/".join(parts)


def _safe_target(outdir: str, outdir_real: str, rel: str) -> str:
    """Create the parent folders of OUTDIR/rel, refusing any that resolves outside OUTDIR (a
    symlink planted in OUTDIR). Returns the target path."""
    parts = rel.split("/")
    if any(p in ("", ".", "..") or _BAD_PART.search(p) for p in parts):
        raise _Unsafe(f"unsafe output path {rel!r}")
    current = outdir
    for part in parts[:-1]:
        current = os.path.join(current, part)
        if os.path.islink(current) and not _inside(os.path.realpath(current), [outdir_real]):
            raise _Unsafe(f"output folder {current} is a symlink that resolves outside OUTDIR")
        try:
            os.mkdir(current)
        except FileExistsError:
            pass
    return os.path.join(outdir, *parts)


class _Unsafe(Exception):
    pass


# --------------------------------------------------------------------------------------------
# The worker


@dataclass(frozen=True)
class Spec:
    """What every file of one batch shares; sent along with each task."""

    to: str
    source: str | None
    options: Options
    compact: bool
    outdir: str
    outdir_real: str
    roots: tuple[str, ...]
    settings: str
    run: str


class Task(NamedTuple):
    input: str
    output: str  # relative to OUTDIR, POSIX
    confined: bool  # re-check at open time that the input resolves inside the roots
    expect: tuple[str, int] | None  # (input sha256, output bytes) of a previous ok run, for resume


def _init_worker() -> None:
    """Local worker processes leave Ctrl-C to the parent, which stops the batch cleanly."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def run_tasks(spec: Spec, tasks: list[Task]) -> list[FileResult]:
    """Convert a few files (one task). Module level, so any executor can pickle it by reference."""
    return [convert_file(spec, t) for t in tasks]


def convert_file(spec: Spec, task: Task) -> FileResult:
    """Read, convert and atomically write one file; every failure becomes the result's status."""
    t0 = time.perf_counter()
    res = FileResult(input=task.input, output=task.output, status=OK, target_format=spec.to,
                     settings=spec.settings, run=spec.run, worker=f"pid {os.getpid()}")  # no host names in outputs
    try:
        if task.confined and not _inside(os.path.realpath(task.input), spec.roots):
            raise _Unsafe("the input now resolves outside the source roots")
        data, _ = jsonio.read_input(task.input)  # refuses an oversized file from its size, unread
    except _Unsafe as exc:
        return _finish(res, t0, status=REFUSED, error=str(exc))
    except InvalidInput as exc:
        return _finish(res, t0, status=INVALID, error=str(exc), problems=_problems(exc.problems))
    res.input_bytes = len(data)
    res.input_sha256 = hashlib.sha256(data).hexdigest()
    t_read = time.perf_counter()
    res.seconds["read"] = round(t_read - t0, 6)

    target = os.path.join(spec.outdir, *task.output.split("/"))
    if task.expect is not None and task.expect[0] == res.input_sha256:
        try:
            if os.stat(target).st_size == task.expect[1]:
                return _finish(res, t0, status=UNCHANGED)
        except OSError:
            pass

    try:
        result = convert(data, to=spec.to, source=spec.source, options=spec.options, name=task.input,
                         compact=spec.compact)
    except ConversionError as exc:  # classified as the single-file commands' exit codes classify it
        status = {EXIT_INVALID_INPUT: INVALID, EXIT_INTERNAL: INTERNAL}.get(exc.exit_code, POLICY)
        return _finish(res, t0, status=status, error=str(exc), problems=_problems(getattr(exc, "problems", [])))
    except Exception as exc:  # a bug in a reader or writer: this file fails, the batch goes on
        return _finish(res, t0, status=INTERNAL, error=f"{type(exc).__name__}: {exc}")
    del data
    t_conv = time.perf_counter()
    res.seconds["convert"] = round(t_conv - t_read, 6)
    res.source_format = result.source_format
    res.losses = dict(sorted(result.loss_counts().items()))
    res.warnings = len(result.warnings)
    output = result.output
    del result
    try:
        target = _safe_target(spec.outdir, spec.outdir_real, task.output)
        jsonio.write_output(target, output)
    except _Unsafe as exc:
        return _finish(res, t0, status=REFUSED, error=str(exc))
    except ConversionError as exc:  # jsonio's OutputError: no permission, no space, a folder in the way
        return _finish(res, t0, status=UNWRITABLE, error=str(exc))
    except OSError as exc:  # creating the output's folders
        return _finish(res, t0, status=UNWRITABLE, error=f"cannot write {target}: {exc.strerror or exc}")
    res.output_bytes = len(output)
    res.output_sha256 = hashlib.sha256(output).hexdigest()
    res.seconds["write"] = round(time.perf_counter() - t_conv, 6)
    return _finish(res, t0)


def _problems(problems: list[Problem]) -> list[dict[str, str]]:
    return [{"rule": p.rule, "path": p.path, "message": p.message} for p in problems[:MAX_PROBLEMS]]


def _finish(res: FileResult, t0: float, *, status: str | None = None, error: str | None = None,
            problems: list[dict[str, str]] | None = None) -> FileResult:
    if status is not None:
        res.status = status
    if error is not None:
        res.error = error
    if problems:
        res.problems = problems
    res.seconds["total"] = round(time.perf_counter() - t0, 6)
    return res


# --------------------------------------------------------------------------------------------
# The manifest

_line_decoder = msgspec.json.Decoder(FileResult)
_line_encoder = msgspec.json.Encoder()


class Manifest:
    """A JSONL file, one :class:`FileResult` per line, appended as results arrive.

    Each line is written with one ``write`` to a file opened for appending, so an interrupted
    run leaves whole lines (a torn last line, possible only on a crash of the machine, is ignored
    when read). The last line for an output is its current state; opening and closing compact
    the file to one line per output. A rerun skips a file when its line says ``ok`` with the
    same settings and input digest and the output still has the recorded size.
    """

    def __init__(self, path: str | os.PathLike[str], *, fresh: bool = False) -> None:
        self.path = Path(path)
        # key -> (settings, input sha256, output bytes) of an ok line, None for a line of another status
        self._index: dict[str, tuple[str, str, int] | None] = {}
        self._rewrite = False
        if fresh:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            jsonio.write_output(str(self.path), b"")
        elif self.path.exists():
            self._load()
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def _load(self) -> None:
        lines = 0
        for rec in self._read():
            lines += 1
            if rec.key in self._index:
                self._rewrite = True
            ok = rec.status == OK and rec.input_sha256 and rec.output_bytes is not None
            self._index[rec.key] = (rec.settings, rec.input_sha256, rec.output_bytes) if ok else None
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

    def previous(self, key: str, settings: str) -> tuple[str, int] | None:
        """(input sha256, output bytes) of this output's last ok conversion with these settings."""
        hit = self._index.get(key)
        return (hit[1], hit[2]) if hit is not None and hit[0] == settings else None

    def append(self, rec: FileResult) -> None:
        data = _line_encoder.encode(rec) + b"\n"
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
                    out.write(_line_encoder.encode(rec) + b"\n")
        os.replace(tmp, self.path)
        self._rewrite = False

    def __enter__(self) -> Manifest:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _count_lines(path: Path) -> int:
    with open(path, "rb") as fh:
        return sum(1 for line in fh if line.strip())


def read_manifest(path: str | os.PathLike[str]) -> list[FileResult]:
    """Every line of a manifest, in order (for tests and tools)."""
    with open(path, "rb") as fh:
        return [_line_decoder.decode(line) for line in fh if line.strip()]


# --------------------------------------------------------------------------------------------
# Summary


@dataclass
class Summary:
    """Running totals of a batch, in constant memory (top lists are bounded)."""

    top: int = 10
    counts: Counter[str] = field(default_factory=Counter)
    loss_counts: Counter[str] = field(default_factory=Counter)  # losses by kind, over converted files
    loss_files: Counter[str] = field(default_factory=Counter)  # files with at least one loss of a kind
    input_bytes: int = 0  # of the files read (converted or failed)
    output_bytes: int = 0
    slowest: list[tuple[float, str]] = field(default_factory=list)  # a min-heap of the top slowest
    failures: list[FileResult] = field(default_factory=list)  # the first ``top * 5`` failures
    total_files: int = 0
    total_bytes: int = 0
    started: float = field(default_factory=time.perf_counter)
    elapsed: float = 0.0
    interrupted: bool = False

    def add(self, rec: FileResult) -> None:
        self.counts[rec.status] += 1
        self.input_bytes += rec.input_bytes or 0
        if rec.status == OK:
            self.output_bytes += rec.output_bytes or 0
            self.loss_counts.update(rec.losses)
            self.loss_files.update(rec.losses.keys())
            item = (rec.seconds.get("total", 0.0), rec.input)
            if len(self.slowest) < self.top:
                heapq.heappush(self.slowest, item)
            elif item > self.slowest[0]:
                heapq.heapreplace(self.slowest, item)
        elif rec.status in FAILED and len(self.failures) < self.top * 5:
            self.failures.append(rec)
        self.elapsed = time.perf_counter() - self.started

    @property
    def done(self) -> int:
        return sum(self.counts.values())

    @property
    def failed(self) -> int:
        return sum(self.counts[s] for s in FAILED)

    def slowest_files(self) -> list[tuple[float, str]]:
        return sorted(self.slowest, reverse=True)

    @property
    def exit_code(self) -> int:
        """3 if any internal error, else 1 if any input was invalid or refused or any output could
        not be written, else 4 if the loss policy refused any, else 0."""
        if self.counts[INTERNAL]:
            return EXIT_INTERNAL
        if self.counts[INVALID] or self.counts[REFUSED] or self.counts[UNWRITABLE]:
            return EXIT_INVALID_INPUT
        if self.counts[POLICY]:
            return EXIT_LOSS_POLICY
        return EXIT_OK


class Progress(Protocol):
    def start(self, total_files: int, total_bytes: int, workers: int | None) -> None: ...

    def advance(self, rec: FileResult) -> None: ...

    def stop(self) -> None: ...


@dataclass
class Report:
    """What :func:`migrate` returns: the per-file results (unless ``keep_results=False``) and the
    running summary (counts, losses by kind, slowest files, first failures, exit code)."""

    results: list[FileResult]
    summary: Summary
    manifest: Path | None

    @property
    def exit_code(self) -> int:
        return self.summary.exit_code


# --------------------------------------------------------------------------------------------
# migrate


def settings_key(to: str, source: str | None, options: Options, compact: bool) -> str:
    """A digest of everything that shapes an outcome: a rerun with other settings redoes all."""
    opts = {k: sorted(v) if isinstance(v, set | frozenset) else v for k, v in sorted(vars(options).items())}
    blob = msgspec.json.encode([__version__, to, source, opts, compact])
    return hashlib.sha256(blob).hexdigest()[:16]


def default_workers() -> int:
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def local_executor(workers: int) -> ProcessPoolExecutor:
    """The default executor: local worker processes that ignore Ctrl-C (the parent handles it).

    On Linux the workers are forked, all at once at the first submission (so they inherit the
    imported converter and need no ``if __name__ == "__main__"`` guard in the caller's script);
    :func:`migrate` submits a no-op first so that this happens before its progress display
    starts a thread. Elsewhere they are spawned, as Python does by default there.
    """
    method = "fork" if sys.platform.startswith("linux") else "spawn"
    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context(method),
                               initializer=_init_worker)


def _noop() -> None:
    return None


class _InProcess(Executor):
    """``workers=0``: convert in this process, one file at a time (debugging, tiny batches)."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        fut: Future[Any] = Future()
        try:
            fut.set_result(fn(*args, **kwargs))
        except Exception as exc:
            fut.set_exception(exc)
        return fut


def clean_stale_temps(outdir: str | os.PathLike[str]) -> int:
    """Remove temp files an earlier run left when it was killed mid-write (``.NAME.XXXX.tmp``
    next to an output). Never follows symlinks. Returns how many were removed."""
    exts = tuple(f.extension for f in registry().values())
    stale = re.compile(r"^\..+(" + "|".join(re.escape(e) for e in exts) + r")\.[^./]+\.tmp$")
    removed = 0
    for dirpath, _dirnames, filenames in os.walk(outdir, followlinks=False):
        for name in filenames:
            if stale.match(name):
                try:
                    os.unlink(os.path.join(dirpath, name))
                    removed += 1
                except OSError:
                    pass
    return removed


def migrate(sources: Iterable[str | os.PathLike[str]], outdir: str | os.PathLike[str], *, to: str = "asif",
            source: str | None = None, options: Options | None = None, compact: bool = False,
            executor: Executor | None = None, workers: int | None = None,
            manifest: str | os.PathLike[str] | bool = True, force: bool = False, pattern: str = DEFAULT_PATTERN,
            max_in_flight: int | None = None, chunk_size: int | None = None, keep_results: bool = True,
            on_result: Callable[[FileResult], None] | None = None, progress: Progress | None = None,
            summary: Summary | None = None) -> Report:
    """Convert every file under ``sources`` into ``outdir``, mirroring the tree.

    ``executor`` is any :class:`concurrent.futures.Executor` (e.g. a Dask cluster's
    ``Client.get_executor()``); by default a local process pool of ``workers`` processes (the
    CPU count) is created and shut down; ``workers=0`` converts in this process. Workers must see
    the same file system paths. At most ``max_in_flight`` tasks (default: twice the workers) of
    ``chunk_size`` files each are submitted at once.

    Every file's outcome goes to ``manifest`` (default ``OUTDIR/manifest.jsonl``; ``False`` for
    none, which also disables resume) and to ``on_result``; ``force`` redoes files a previous
    run converted. Running totals go to ``summary`` (pass your own to keep them if interrupted).
    Ctrl-C (KeyboardInterrupt) cancels what has not started, waits for the files
    being converted and records them, then propagates; outputs are written atomically.
    """
    options = options or Options()
    for name in filter(None, (to, source)):
        if name not in registry():
            raise UsageError(f"unknown format {name!r}; installed: {', '.join(sorted(registry()))}")
    if workers is not None and workers < 0:
        raise UsageError("workers must be 0 or more")
    srcs = check_sources(sources)
    out = Path(outdir)
    if out.exists() and not out.is_dir():
        raise UsageError(f"{out} exists and is not a directory")
    out.mkdir(parents=True, exist_ok=True)
    outdir_s = os.path.abspath(out)
    outdir_real = os.path.realpath(out)
    clean_stale_temps(outdir_s)

    mpath = out / MANIFEST_NAME if manifest is True else (Path(manifest) if manifest else None)
    spec = Spec(to=to, source=source, options=options, compact=compact, outdir=outdir_s, outdir_real=outdir_real,
                roots=tuple(os.path.realpath(_classify(s).base) for s in srcs),
                settings=settings_key(to, source, options, compact),
                run=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"))
    for arg, root in zip(srcs, spec.roots, strict=True):
        if _inside(root, [outdir_real]):
            raise UsageError(f"the source {arg} lies inside OUTDIR {out}; choose an OUTDIR outside the sources")
    exclude = [outdir_s] + ([str(mpath)] if mpath else [])

    total_files = total_bytes = 0
    for item in discover(srcs, pattern=pattern, exclude=exclude):
        total_files += 1
        total_bytes += item.size if isinstance(item, Found) else 0

    book = Manifest(mpath, fresh=force) if mpath else None  # before any worker starts: it may refuse the file
    owned = executor is None
    n_workers = default_workers() if workers is None else workers
    if owned:
        try:
            executor = _InProcess() if n_workers == 0 else local_executor(n_workers)
            if isinstance(executor, ProcessPoolExecutor):  # start the workers now, before any progress thread
                executor.submit(_noop).result()
        except BaseException:
            if book is not None:
                book.close()
            raise
        parallelism = max(1, n_workers)
    else:
        parallelism = max(1, workers or getattr(executor, "_max_workers", 0) or 8)
    window = max_in_flight or 2 * parallelism
    if chunk_size is None:  # small tasks amortize per-task overhead; enough of them keep all workers busy
        chunk_size = max(1, min(32, total_files // (parallelism * 16)))

    summary = summary if summary is not None else Summary()
    summary.total_files, summary.total_bytes = total_files, total_bytes
    summary.started = time.perf_counter()
    results: list[FileResult] = []

    def record(rec: FileResult) -> None:
        if book is not None and rec.status != UNCHANGED:
            book.append(rec)
        summary.add(rec)
        if keep_results:
            results.append(rec)
        if progress is not None:
            progress.advance(rec)
        if on_result is not None:
            on_result(rec)

    seen: dict[str, str] = {}  # output key -> input, to refuse a second input for one output

    def tasks() -> Iterator[Task]:
        for item in discover(srcs, pattern=pattern, exclude=exclude):
            try:
                rel = output_path(item.rel, to) if item.rel else None
            except ValueError as exc:
                record(_refused(spec, item.path, None, str(exc)))
                continue
            if isinstance(item, Refused):
                record(_refused(spec, item.path, rel, item.reason))
                continue
            if rel is None:
                record(_refused(spec, item.path, None, "no output name"))
                continue
            if rel in seen:
                if os.path.realpath(seen[rel]) != os.path.realpath(item.path):  # not just named twice
                    record(_refused(spec, item.path, None, f"its output {rel} is already the output of {seen[rel]}"))
                continue
            seen[rel] = item.path
            expect = None if force or book is None else book.previous(rel, spec.settings)
            yield Task(item.path, rel, item.confined, expect)

    def chunks() -> Iterator[list[Task]]:
        batch: list[Task] = []
        for t in tasks():
            batch.append(t)
            if len(batch) >= chunk_size:
                yield batch
                batch = []
        if batch:
            yield batch

    if progress is not None:
        progress.start(total_files, total_bytes, parallelism if owned or workers else None)
    pending: dict[Future[list[FileResult]], tuple[list[Task], Executor]] = {}
    work = chunks()
    abandoned = False

    def fill() -> None:
        nonlocal executor
        while len(pending) < window:
            chunk = next(work, None)
            if chunk is None:
                return
            pending[executor.submit(run_tasks, spec, chunk)] = (chunk, executor)

    def collect(fut: Future[list[FileResult]]) -> None:
        nonlocal executor
        chunk, ran_on = pending.pop(fut)
        try:
            recs = fut.result()
        except BrokenExecutor as exc:
            recs = [_crashed(spec, t, exc) for t in chunk]
            if owned and ran_on is executor:  # a worker died (killed, out of memory): start a new pool
                executor.shutdown(wait=False, cancel_futures=True)
                executor = local_executor(n_workers)
        except Exception as exc:
            recs = [_crashed(spec, t, exc) for t in chunk]
        for rec in recs:
            record(rec)

    try:
        fill()
        while pending:
            done, _ = wait(list(pending), return_when=FIRST_COMPLETED)
            for fut in done:
                collect(fut)
            fill()
    except KeyboardInterrupt:
        summary.interrupted = True
        for fut in list(pending):
            if fut.cancel():
                pending.pop(fut)
        try:  # the files being converted finish (their writes are atomic anyway) and are recorded
            while pending:
                done, _ = wait(list(pending), return_when=FIRST_COMPLETED)
                for fut in done:
                    if fut.cancelled():
                        pending.pop(fut)
                    else:
                        collect(fut)
        except KeyboardInterrupt:  # a second Ctrl-C: abandon them
            abandoned = True
        raise
    finally:
        work.close()
        if book is not None:
            book.close()
        if owned:
            if abandoned:
                _terminate(executor)
            executor.shutdown(wait=not abandoned, cancel_futures=True)
        summary.elapsed = time.perf_counter() - summary.started
        if progress is not None:
            progress.stop()
    return Report(results=results, summary=summary, manifest=mpath)


def _refused(spec: Spec, path: str, rel: str | None, reason: str) -> FileResult:
    return FileResult(input=path, output=rel, status=REFUSED, target_format=spec.to, error=reason,
                      settings=spec.settings, run=spec.run)


def _crashed(spec: Spec, task: Task, exc: BaseException) -> FileResult:
    return FileResult(input=task.input, output=task.output, status=INTERNAL, target_format=spec.to,
                      error=f"the worker failed ({type(exc).__name__}: {exc}) while converting this file or "
                            "another of the same task; rerun to retry", settings=spec.settings, run=spec.run)


def _terminate(executor: Executor) -> None:
    for proc in list((getattr(executor, "_processes", None) or {}).values()):
        try:
            proc.terminate()
        except Exception:  # already gone
            pass
