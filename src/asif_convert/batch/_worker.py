"""The worker: read, convert and atomically write one file; every failure becomes its status."""

from __future__ import annotations

import ctypes
import gc
import hashlib
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NamedTuple

from asif_convert import _companions as companions
from asif_convert._artifacts import ArtifactFiles, reads_digest, remove_files, replay_digest, write_files
from asif_convert._errors import ConversionError, InvalidInput, LossPolicyError, OutputError, Problem
from asif_convert._limits import Limits
from asif_convert._pipeline import FILE_NOT_CARRIED, convert
from asif_convert.batch import _credentials as credentials
from asif_convert.batch import _storage as storage
from asif_convert.batch._artifact_folders import folder_for
from asif_convert.batch._paths import Unsafe
from asif_convert.batch._records import (
    INTERNAL,
    INVALID,
    OK,
    POLICY,
    REFUSED,
    UNCHANGED,
    UNWRITABLE,
    FileResult,
    Previous,
)
from asif_convert.plugin import Options

MAX_PROBLEMS = 20  # problems kept per failed file in the manifest
_PR_SET_PDEATHSIG = 1  # linux/prctl.h
_STATUS: dict[type[ConversionError], str] = {LossPolicyError: POLICY, OutputError: UNWRITABLE}


@dataclass(frozen=True)
class Spec:
    """What every file of one batch shares; sent along with each task."""

    to: str
    source: str | None
    options: Options
    compact: bool
    limits: Limits
    outdir: str
    outdir_real: str
    roots: tuple[str, ...]
    settings: str
    run: str
    package: bool = False  # write ASIF packages (.asif.zip)
    artifacts_each: str | None = None  # each export's artifacts folder, a template (see _artifact_folders)
    # for URLs: what fsspec's file systems take, but the credentials (see _credentials: never in a task)
    storage_options: dict[str, Any] = field(default_factory=dict)

    def options_for(self, path: str) -> Options:
        """The options of one file: with ``artifacts_each``, its own artifacts folder."""
        if self.artifacts_each is None:
            return self.options
        folder = folder_for(self.artifacts_each, os.path.basename(path))
        return replace(self.options, artifacts_root=Path(os.path.dirname(path) or os.curdir),
                       artifacts_folder=folder or None)


class Task(NamedTuple):
    input: str
    output: str  # relative to OUTDIR, POSIX
    confined: bool  # re-check at open time that the input resolves inside the roots
    expect: Previous | None  # what a previous ok run read and wrote, for resume
    size: int | None = None  # its size when it was found (object storage reads by it, asking no HEAD)


# A local worker's view of its batch's stop flag (a byte shared with the parent, see
# :func:`init_worker`); None in any other process, where every task runs whole.
_stop: Any = None


def init_worker(parent: int, stop: Any = None, secret: dict[str, Any] | None = None) -> None:
    """Set up a local worker process: it leaves Ctrl-C to the parent (which stops the batch
    cleanly), ends on SIGTERM as a process does by default (the handler it was forked with turns
    SIGTERM into Ctrl-C for the parent only), dies with the parent (a killed batch leaves no
    orphans), and runs without the cyclic collector (documents are trees; scanning millions of
    fresh objects costs a third of the time). ``stop`` is the parent's shared flag: once set, no
    file starts (a lock-free byte: a worker killed while reading it blocks no other). ``secret``:
    the batch's storage credentials, given here so that no task carries them (see _credentials)."""
    global _stop
    _stop = stop
    credentials.hold(secret or {})
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if hasattr(signal, "pthread_sigmask"):  # forked where the parent blocked them for its threads
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    _die_with(parent)
    gc.disable()


def _die_with(parent: int) -> None:
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0:
                if os.getppid() != parent:  # the parent died before the signal was armed
                    os._exit(1)
                return
        except (OSError, AttributeError):
            pass
    threading.Thread(target=_watch_parent, args=(parent,), name="asif-convert-parent-watch", daemon=True).start()


def _watch_parent(parent: int) -> None:
    """Where the kernel cannot tie a worker to its parent: poll, and leave when it is gone."""
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(1)


def run_tasks(spec: Spec, tasks: list[Task]) -> list[FileResult]:
    """Convert a few files (one task). Module level, so any executor can pickle it by reference.
    Once the batch is stopped, the files not yet started are left out (a rerun converts them):
    a task queued before the stop, or half done, ends without starting another file."""
    results = []
    for task in tasks:
        if _stop is not None and _stop.value:
            break
        results.append(convert_file(spec, task))
    return results


def convert_file(spec: Spec, task: Task) -> FileResult:
    """Read, convert and atomically write one file; every failure becomes the result's status."""
    t0 = time.perf_counter()
    res = FileResult(input=task.input, output=task.output, status=OK, target_format=spec.to,
                     settings=spec.settings, run=spec.run, worker=f"pid {os.getpid()}")  # no host names in outputs
    try:
        data = storage.read_input(spec, task.input, task.confined, task.size)
    except Unsafe as exc:
        return _finish(res, t0, status=REFUSED, error=str(exc))
    except InvalidInput as exc:
        return _finish(res, t0, status=INVALID, error=str(exc), problems=_problems(exc.problems))
    res.input_bytes = len(data)
    res.input_sha256 = hashlib.sha256(data).hexdigest()
    t_read = time.perf_counter()
    res.seconds["read"] = round(t_read - t0, 6)

    options = spec.options_for(task.input)
    if _unchanged(spec, task, res, options):
        return _finish(res, t0, status=UNCHANGED)

    try:
        result = convert(data, to=spec.to, source=spec.source, options=options, name=task.input,
                         compact=spec.compact, limits=spec.limits, package=spec.package,
                         beside=None if storage.is_url(task.input) else task.input)
    except ConversionError as exc:  # classified as the single-file commands' exit codes classify it
        status = _STATUS.get(type(exc), INVALID if isinstance(exc, InvalidInput) else INTERNAL)
        return _finish(res, t0, status=status, error=str(exc), problems=_problems(getattr(exc, "problems", [])))
    except Exception as exc:  # a bug in a reader or writer: this file fails, the batch goes on
        return _finish(res, t0, status=INTERNAL, error=f"{type(exc).__name__}: {exc}")
    del data
    t_conv = time.perf_counter()
    res.seconds["convert"] = round(t_conv - t_read, 6)
    res.source_format = result.source_format
    res.losses = dict(sorted(result.loss_counts().items()))
    res.warnings = len(result.warnings)
    res.companions = result.companions
    if options.artifacts_root is not None:
        res.artifacts_read = list(result.artifact_reads)
        res.artifacts_sha256 = reads_digest(result.artifact_reads)
    output, files = result.output, result.files
    res.not_carried = sorted(loss.id.partition("file-not-carried:")[2] for loss in result.losses
                             if loss.kind == FILE_NOT_CARRIED) or None
    if result.artifacts and spec.to != "asif":  # a batch writes no artifacts folder beside an export
        _not_carried(res, result.artifacts)
    del result
    created: list[Path] = []
    try:
        if files and not spec.package:  # a plain ASIF document: its files go beside it, first
            created = _files_beside(spec, task.output, files, res)
        storage.write_output(spec, task.output, output)
        created = []
    except Unsafe as exc:
        return _finish(res, t0, status=REFUSED, error=str(exc))
    except ConversionError as exc:  # jsonio's OutputError: no permission, no space, a folder in the way
        return _finish(res, t0, status=UNWRITABLE, error=str(exc))
    except OSError as exc:  # creating the output's folders
        return _finish(res, t0, status=UNWRITABLE, error=f"cannot write {storage.join(spec.outdir, task.output)}: "
                                                             f"{exc.strerror or exc}")
    finally:
        remove_files(created)  # (nothing once the output is in place)
    res.output_bytes = len(output)
    res.output_sha256 = hashlib.sha256(output).hexdigest()
    res.seconds["write"] = round(time.perf_counter() - t_conv, 6)
    return _finish(res, t0)


def _unchanged(spec: Spec, task: Task, res: FileResult, options: Options) -> bool:
    """Whether the output of a previous ok run stands: the same input, the output still there
    with its size, and the artifact files it read (asked for again) still what they were."""
    expect = task.expect
    if expect is None or expect.input_sha256 != res.input_sha256:
        return False
    if storage.output_size(spec, task.output) != expect.output_bytes:
        return False
    if expect.companions is not None and not companions.unchanged(task.input, expect.companions, spec.limits):
        return False  # (a subagent's transcript grew, appeared or went while the session's file stayed)
    if options.artifacts_root is None:
        return True
    if expect.artifacts_sha256 is None:  # an earlier version's line: what it read is unknown
        return False
    files = ArtifactFiles(options.artifacts_root, options.artifact_max_bytes, options.artifacts_max_total,
                          folder=options.artifacts_folder or "")
    return replay_digest(files, expect.artifacts_read) == expect.artifacts_sha256


def _files_beside(spec: Spec, rel: str, files: dict[str, bytes], res: FileResult) -> list[Path]:
    """Write the files a plain ASIF output embeds by path beside it, inside OUTDIR (the files it
    created, to take back if the output fails). On remote storage they are not written: each is
    a ``file_not_carried`` loss of the file's line, named in ``not_carried``."""
    if storage.is_url(spec.outdir):
        _not_carried(res, files)
        return []
    folder = os.path.dirname(storage.safe_target(spec.outdir, spec.outdir_real, rel))
    return write_files(Path(folder), files, create=False)


def _not_carried(res: FileResult, files: dict[str, bytes]) -> None:
    """Count ``files`` as not carried by the file's output: a loss each, their paths listed."""
    res.losses = dict(sorted({**res.losses, FILE_NOT_CARRIED: res.losses.get(FILE_NOT_CARRIED, 0)
                              + len(files)}.items()))
    res.not_carried = sorted({*(res.not_carried or ()), *files})


def _problems(problems: list[Problem]) -> list[dict[str, Any]]:
    return [{"rule": p.rule, "path": p.path, "message": p.message, **({"line": p.line} if p.line else {})}
            for p in problems[:MAX_PROBLEMS]]


def _finish(res: FileResult, t0: float, *, status: str | None = None, error: str | None = None,
            problems: list[dict[str, Any]] | None = None) -> FileResult:
    if status is not None:
        res.status = status
    if error is not None:
        res.error = error
    if problems:
        res.problems = problems
    res.seconds["total"] = round(time.perf_counter() - t0, 6)
    return res
