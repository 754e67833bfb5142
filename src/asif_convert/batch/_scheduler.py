"""``migrate``: discover, then keep a bounded window of tasks in flight on an executor, record
every outcome as it arrives, and stop cleanly on Ctrl-C."""

from __future__ import annotations

import ctypes
import hashlib
import multiprocessing
import os
import queue
import re
import sys
import time
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator
from concurrent.futures import BrokenExecutor, Executor, Future, ProcessPoolExecutor
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

from asif_convert._errors import ConversionError
from asif_convert._limits import Limits
from asif_convert._registry import get, registry
from asif_convert._version import __version__
from asif_convert.batch import _credentials as credentials
from asif_convert.batch import _storage as storage
from asif_convert.batch._artifact_folders import Skipper, check_template
from asif_convert.batch._discover import Found, Refused
from asif_convert.batch._manifest import Manifest
from asif_convert.batch._paths import PACKAGE_EXTENSION, output_path
from asif_convert.batch._records import (
    DEFAULT_PATTERN,
    INTERNAL,
    REFUSED,
    UNCHANGED,
    ClusterLost,
    FileResult,
    UsageError,
)
from asif_convert.batch._stops import StopRequests, signals_to_main_thread
from asif_convert.batch._summary import Progress, Report, Summary
from asif_convert.batch._worker import Spec, Task, init_worker, run_tasks
from asif_convert.plugin import Options

# More worker processes than this only contend for the cores, each holding a conversion's memory
# (and the operating system's semaphores cannot count many more).
MAX_WORKERS = 256
_EXTERNAL_PARALLELISM = 8  # window sizing for a caller's executor when ``workers`` does not say


def settings_key(to: str, source: str | None, options: Options, compact: bool, limits: Limits | None = None,
                 package: bool = False, artifacts_each: str | None = None) -> str:
    """A digest of everything that shapes an outcome: a rerun with other settings redoes all.
    (What is off by default adds nothing, so the manifests of earlier versions still resume.)"""
    opts = {k: sorted(v) if isinstance(v, set | frozenset) else str(v) if isinstance(v, os.PathLike) else v
            for k, v in sorted(vars(options).items())}
    bounds = sorted(vars(limits or Limits()).items())
    plugins = sorted((f.name, type(f).__module__) for f in registry().values())
    if opts.get("artifacts_folder") is None:
        opts.pop("artifacts_folder", None)
    extra: list[Any] = ([True] if package else []) + ([{"artifacts_each": artifacts_each}] if artifacts_each else [])
    blob = msgspec.json.encode([__version__, to, source, opts, compact, bounds, plugins] + extra)
    return hashlib.sha256(blob).hexdigest()[:16]


def default_workers() -> int:
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def local_executor(workers: int, stop: Any = None) -> ProcessPoolExecutor:
    """The default executor: local worker processes that ignore Ctrl-C (the parent handles it)
    and die with the parent. ``stop`` (a shared ``multiprocessing.RawValue(ctypes.c_bool)``),
    once set, lets no further file start in them: a stopped batch waits only for the files in
    progress, not for the tasks already queued to the workers.

    On Linux the workers are forked, all at once at the first submission (so they inherit the
    imported converter and need no ``if __name__ == "__main__"`` guard in the caller's script);
    :func:`migrate` submits a no-op first so that this happens before its progress display
    starts a thread. Elsewhere they are spawned, as Python does by default there.
    """
    method = "fork" if sys.platform.startswith("linux") else "spawn"
    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context(method),
                               initializer=init_worker, initargs=(os.getpid(), stop, credentials.held()))


def clean_stale_temps(outdir: str | os.PathLike[str]) -> int:
    """Remove temp files an earlier run left when it was killed mid-write (``.NAME.XXXX.tmp``
    next to an output). Never follows symlinks. Returns how many were removed. Call it only while
    holding OUTDIR's lock: a running batch's temp files are not stale."""
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


def migrate(sources: str | os.PathLike[str] | Iterable[str | os.PathLike[str]], outdir: str | os.PathLike[str], *,
            to: str = "asif", source: str | None = None, options: Options | None = None, compact: bool = False,
            limits: Limits | None = None, executor: Executor | None = None, workers: int | None = None,
            manifest: str | os.PathLike[str] | bool = True, force: bool = False, pattern: str = DEFAULT_PATTERN,
            max_in_flight: int | None = None, chunk_size: int | None = None, keep_results: bool = True,
            on_result: Callable[[FileResult], None] | None = None, progress: Progress | None = None,
            summary: Summary | None = None, package: bool = False, artifacts_each: str | None = None,
            storage_options: dict[str, Any] | None = None, break_lock: bool = False,
            watchdog: Callable[[float], None] | None = None) -> Report:
    """Convert every file under ``sources`` (one path, or several) into ``outdir``, mirroring the tree.

    ``sources``, ``outdir`` and ``manifest`` may be fsspec URLs (``s3://bucket/exports/``, with
    the ``s3``, ``gcs`` or ``azure`` extra): ``storage_options`` go to their file systems, and
    ``break_lock`` takes a remote OUTDIR's lock object whatever it says (see docs/batch.md).
    Credentials among ``storage_options`` stay in this process and its own worker processes:
    no task carries them, so a cluster's workers take their own (see docs/batch.md).

    ``executor`` is any :class:`concurrent.futures.Executor` (e.g. a Dask cluster's
    ``Client.get_executor()``; pass ``workers`` to say how many tasks it runs at once); by default
    a local process pool of ``workers`` processes (the CPU count) is created and shut down;
    ``workers=0`` converts in this process. Workers must see the same file system paths. At most
    ``max_in_flight`` tasks (default: twice the workers) of ``chunk_size`` files each are
    submitted at once.

    Every file's outcome goes to ``manifest`` (default ``OUTDIR/manifest.jsonl``; ``False`` for
    none, which also disables resume) and to ``on_result``; ``force`` redoes files a previous
    run converted. ``limits`` bound what is read from each file, as for one conversion. Running
    totals go to ``summary`` (pass your own to keep them if interrupted).
    One run at a time may use an OUTDIR (a second is refused with :class:`UsageError`).
    ``watchdog`` is called about every second while results are awaited, with the seconds since
    the last one arrived; what it raises stops the run as Ctrl-C does, its tasks cancelled (a
    cluster's, see ``_cluster.Cluster.watchdog``).
    Ctrl-C (KeyboardInterrupt) cancels what has not started, waits for the files being
    converted and records them, then propagates; outputs are written atomically. Its handler
    runs where the run holds nothing (a Ctrl-C arriving while results are recorded waits for the
    last of them), so every output in OUTDIR is in the manifest and counted; so does SIGTERM's
    where it raises KeyboardInterrupt, as the command line's does. A second one abandons the
    files in progress.

    Artifact files are read from ``options.artifacts_root`` (one folder for every file) or, with
    ``artifacts_each``, from each file's own folder named by that template relative to the
    file's folder (``"{stem}"``: ``a.json``'s files are in ``a/``; see docs/batch.md). A rerun
    also redoes a file whose artifact files changed.
    """
    options = options or Options()
    limits = limits or Limits()
    _check_settings(to, source, options, workers, package, artifacts_each)
    # credentials stay in this process (and its own workers): a task carries only the rest
    storage_options, secret = credentials.split(dict(storage_options or {}))
    with credentials.holding(secret):
        srcs = storage.checked_sources([sources] if isinstance(sources, str | os.PathLike) else sources,
                                       storage_options)
        out_arg = storage.local_form(outdir)
        if (storage.is_url(out_arg) or any(storage.is_url(s) for s in srcs)) \
                and (artifacts_each or options.artifacts_root):
            raise UsageError("artifact folders are read from local sources into a local OUTDIR only")
        roots = tuple(storage.source_root(s) for s in srcs)
        out_abs, out_real = _outdir_forms(out_arg, srcs, roots)
        spec = Spec(to=to, source=source, options=options, compact=compact, limits=limits, outdir=out_abs,
                    outdir_real=out_real, roots=roots,
                    settings=settings_key(to, source, options, compact, limits, package, artifacts_each),
                    run=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"), package=package,
                    artifacts_each=artifacts_each, storage_options=storage_options)
        mpath = storage.manifest_at(manifest, out_abs)
        run = _Run(spec, srcs, pattern=pattern, exclude=[spec.outdir] + ([str(mpath)] if mpath else []),
                   force=force, keep_results=keep_results, on_result=on_result, progress=progress,
                   summary=summary if summary is not None else Summary(), watchdog=watchdog)
        if mpath is not None:
            run.refuse_an_output_at(mpath, "the manifest (--manifest)")
        _run_in(run, out_arg, mpath, break_lock=break_lock, force=force,
                pool=lambda: _Pool(executor, workers), max_in_flight=max_in_flight, chunk_size=chunk_size)
    return Report(results=run.results, summary=run.summary, manifest=mpath)


def _run_in(run: _Run, out_arg: str, mpath: Path | str | None, *, break_lock: bool, force: bool,
            pool: Callable[[], _Pool], max_in_flight: int | None, chunk_size: int | None) -> None:
    """Take OUTDIR (its folder, its lock, the stray temp files of a killed run, the manifest),
    then run the batch on the pool."""
    spec = run.spec
    remote_out = storage.is_url(out_arg)
    if not remote_out:
        with _cannot_start():
            Path(out_arg).mkdir(parents=True, exist_ok=True)
    with ExitStack() as held:
        with _cannot_start():
            held.enter_context(storage.lock(spec.outdir if remote_out else out_arg, spec.storage_options,
                                            break_lock=break_lock))
            if not remote_out:
                clean_stale_temps(spec.outdir)
            # before any worker starts: it may refuse the file
            book = storage.open_manifest(os.fspath(mpath), fresh=force, run=spec.run,
                                         storage_options=spec.storage_options) if mpath else None
        try:
            with pool() as running:
                run.execute(book, running, max_in_flight, chunk_size)
        finally:
            if book is not None:
                book.close()


def _check_settings(to: str, source: str | None, options: Options, workers: int | None, package: bool,
                    artifacts_each: str | None) -> None:
    """Refuse (UsageError) the settings that name no format or cannot go together."""
    for name in filter(None, (to, source)):
        try:
            get(name)
        except ConversionError as exc:
            raise UsageError(str(exc)) from None
    if package and get(to).name != "asif":
        raise UsageError(f"a package carries an ASIF session; {to} output cannot be packaged")
    if artifacts_each is not None:
        check_template(artifacts_each)
        if options.artifacts_root is not None:
            raise UsageError("name one artifacts folder for every file (artifacts_root) or each file's own "
                             "(artifacts_each), not both")
    if workers is not None and not 0 <= workers <= MAX_WORKERS:
        raise UsageError(f"workers must be from 0 (converts in this process) to {MAX_WORKERS}")


def _outdir_forms(out_arg: str, srcs: list[str], roots: tuple[str, ...]) -> tuple[str, str]:
    """OUTDIR's absolute and real forms (for a URL, its canonical form, both); refused
    (UsageError) when it is not a folder or a source lies inside it."""
    if storage.is_url(out_arg):
        out_abs = out_real = storage.remote().canonical(out_arg)
    else:
        if os.path.exists(out_arg) and not os.path.isdir(out_arg):
            raise UsageError(f"{Path(out_arg)} exists and is not a directory")
        out_abs, out_real = os.path.abspath(out_arg), os.path.realpath(out_arg)
    for arg, root in zip(srcs, roots, strict=True):
        if storage.inside(root, [out_real]):
            raise UsageError(f"the source {arg} lies inside OUTDIR {out_arg}; choose an OUTDIR outside the sources")
    return out_abs, out_real


@contextmanager
def _cannot_start() -> Iterator[None]:
    """What the file system refuses while a run takes OUTDIR, its lock and its manifest (a
    folder that cannot be made or written, a lock or manifest path that is a folder, a link or
    a pipe): a reason the batch cannot start, said with the path, like a busy OUTDIR."""
    try:
        yield
    except OSError as exc:
        where = f" {exc.filename}" if exc.filename is not None else ""
        raise UsageError(f"cannot use{where}: {exc.strerror or exc}") from None


class _Pool:
    """The executor a run submits to: the caller's, or one it owns (local processes, or this
    process for ``workers=0``), which it replaces when a worker dies and shuts down at the end."""

    def __init__(self, executor: Executor | None, workers: int | None) -> None:
        self.owned = executor is None
        self.workers = default_workers() if workers is None else workers
        self.parallelism = max(1, self.workers) if self.owned else max(1, workers or _EXTERNAL_PARALLELISM)
        # what the progress display may say: worker processes of our own, or what the caller told us
        self.shown_workers = (self.workers or None) if self.owned else workers
        self._processes: list[multiprocessing.process.BaseProcess] = []  # an owned pool's, to end if abandoned
        # an owned pool's workers read it before each file: set, nothing new starts (see stop())
        self._stop = multiprocessing.RawValue(ctypes.c_bool, False) if self.owned and self.workers else None
        self.executor: Executor = executor if executor is not None else self._start()
        self.abandoned = False

    @property
    def in_process(self) -> bool:
        """Whether tasks convert in this process, as they are submitted (``workers=0``)."""
        return isinstance(self.executor, _InProcess)

    def _start(self) -> Executor:
        if self.workers == 0:
            return _InProcess()
        before = set(multiprocessing.active_children())
        with signals_to_main_thread():  # (the pool's threads start with its first task)
            pool = local_executor(self.workers, stop=self._stop)
            if isinstance(pool, ProcessPoolExecutor):
                pool.submit(_noop).result()  # start the workers now, before any progress thread
        self._processes = [p for p in multiprocessing.active_children() if p not in before]
        return pool

    def submit(self, fn: Callable[..., Any], *args: Any) -> tuple[Future[Any], Executor]:
        try:
            return self.executor.submit(fn, *args), self.executor
        except BrokenExecutor:  # a worker died since the last result: its futures report it
            if not self.owned:
                raise
            self.replace(self.executor)
            return self.executor.submit(fn, *args), self.executor

    def stop(self) -> None:
        """No file starts from now on in the workers of an owned pool, whatever their queues hold
        (a caller's executor cannot be told: only what it has not started is cancelled)."""
        if self._stop is not None:
            self._stop.value = True

    def replace(self, broken: Executor) -> None:
        """A worker died (killed, out of memory): the pool is unusable; start a new one."""
        if self.owned and broken is self.executor:
            self.executor.shutdown(wait=False, cancel_futures=True)
            self.executor = self._start()

    def __enter__(self) -> _Pool:
        return self

    def __exit__(self, *exc: object) -> None:
        if not self.owned:
            return
        if self.abandoned:
            for proc in self._processes:
                proc.terminate()
        self.executor.shutdown(wait=not self.abandoned, cancel_futures=True)


class _Run:
    """One migration's state: what has been seen, recorded and submitted."""

    def __init__(self, spec: Spec, srcs: list[str], *, pattern: str, exclude: list[str], force: bool,
                 keep_results: bool, on_result: Callable[[FileResult], None] | None, progress: Progress | None,
                 summary: Summary, watchdog: Callable[[float], None] | None = None) -> None:
        self.watchdog = watchdog
        self.last_result = time.monotonic()  # when a result last arrived, for the watchdog
        self.spec, self.srcs, self.pattern, self.exclude = spec, srcs, pattern, exclude
        self.force, self.keep_results, self.on_result, self.progress = force, keep_results, on_result, progress
        self.summary = summary
        self.results: list[FileResult] = []
        self.book: Manifest | None = None
        self.seen: set[int] = set()  # the outputs' digests, to refuse a second input for one output
        self.streaming = False  # whether discovery is one pass, the totals growing as it goes
        # each task in flight: its files, the executor it ran on, and whether it is a retry
        self.pending: dict[Future[list[FileResult]], tuple[list[Task], Executor, bool]] = {}
        self.suspects: deque[Task] = deque()  # files of tasks a dying worker took down, to retry alone
        # what wakes the run: a task done (each future's callback), or a stop requested; a queue
        # that is safe to put on from a signal handler and, waited on, lets a signal in cleanly
        self.woken: queue.SimpleQueue[None] = queue.SimpleQueue()
        self.stops = StopRequests(wake=self._wake)  # Ctrl-C and SIGTERM, acted on where the run waits
        # with per-file artifacts folders: the files inside them are not inputs
        self.skipper = Skipper(spec.artifacts_each, pattern) if spec.artifacts_each is not None else None

    def execute(self, book: Manifest | None, pool: _Pool, max_in_flight: int | None, chunk_size: int | None) -> None:
        self.book = book
        # A listing of object storage streams: its pages feed the tasks as they come (the first
        # files convert while it goes on, and a million keys are never held at once), and the
        # totals grow as it goes. A local walk is counted first, for the progress display's ETA.
        self.streaming = any(storage.is_url(s) for s in self.srcs)
        if not self.streaming:
            for item in self._discover():
                self.summary.total_files += 1
                self.summary.total_bytes += item.size if isinstance(item, Found) else 0
            self.summary.counted = True
        self.summary.started = time.perf_counter()
        self.last_result = time.monotonic()
        window = max_in_flight or 2 * pool.parallelism
        if self.progress is not None:
            if self.streaming:
                self._found(None)  # before start: the display knows the totals will grow
            with signals_to_main_thread():  # (a display may start a thread)
                self.progress.start(self.summary.total_files, self.summary.total_bytes, pool.shown_workers)
        # In this process a task's files convert as it is submitted, while a signal is held: one
        # file a task, unless told otherwise, so that a stop waits for the file in progress only.
        work = self._chunks(chunk_size or (1 if pool.in_process else None), pool.parallelism)
        with self.stops:  # a signal acts only where the run waits: every task taken is recorded whole
            try:
                while True:
                    self._fill(pool, work, window)
                    if self.pending:
                        self._collect_done(pool)
                    elif self.stops.requested:  # held since the last result: it acts here, as it would have
                        self.stops.act()  # (and should its handler not stop the run, the run goes on)
                    else:
                        break
            except KeyboardInterrupt:
                pool.stop()  # first: every moment from here on, a worker could start another file
                self.summary.interrupted = True
                pool.abandoned = not self._finish_started(pool)
                raise
            except ClusterLost:  # nothing more will finish: what was reported stands
                self.summary.interrupted = True
                for fut in self.pending:
                    fut.cancel()
                raise
            finally:
                work.close()
                self.summary.elapsed = time.perf_counter() - self.summary.started
                if self.progress is not None:
                    self.progress.stop()

    def _fill(self, pool: _Pool, work: Iterator[list[Task]], window: int) -> None:
        """Submit tasks up to ``window`` in flight; none once a stop is requested (a signal held
        until the run next waits, where it acts)."""
        if self.suspects:  # one at a time, nothing beside it: a death then names its file
            if not self.pending and not self.stops.requested:
                self._submit(pool, [self.suspects.popleft()], retry=True)
            return
        while len(self.pending) < window and not self.stops.requested:
            chunk = next(work, None)
            if chunk is None:
                return
            self._submit(pool, chunk, retry=False)

    def _submit(self, pool: _Pool, chunk: list[Task], *, retry: bool) -> None:
        fut, ran_on = pool.submit(run_tasks, self.spec, chunk)
        self.pending[fut] = (chunk, ran_on, retry)
        fut.add_done_callback(self._wake)

    def _wake(self, *_: object) -> None:
        self.woken.put(None)

    def _wait(self) -> set[Future[list[FileResult]]]:
        """The tasks done, once one is or a stop is requested, or none after a second (a Ctrl-C
        caught by a thread this run did not start, which Python hands to this thread only when
        it wakes, still stops the run within a second); then the watchdog, if any, looks on.
        First, a stop requested acts (its KeyboardInterrupt raised here, where the run holds
        nothing: every task taken out of ``pending`` has been recorded whole)."""
        self.stops.act()
        try:
            self.woken.get(timeout=_WAKE_SECONDS)
        except queue.Empty:
            pass
        while not self.woken.empty():  # (emptied before looking: a task done from now on wakes the next wait)
            self.woken.get_nowait()
        done = {fut for fut in self.pending if fut.done()}
        if done:
            self.last_result = time.monotonic()
        elif self.watchdog is not None:
            self.watchdog(time.monotonic() - self.last_result)
        return done

    def _collect_done(self, pool: _Pool) -> None:
        done = self._wait()
        for fut in done:
            chunk, ran_on, retry = self.pending.pop(fut)
            if fut.cancelled():
                continue
            try:
                recs = fut.result()
            except BrokenExecutor as exc:
                # A worker died (killed, out of memory): every task on that pool fails, most of them
                # innocent or never started. Each of their files gets one more try, alone, so only
                # a file that kills a worker by itself is recorded as failed.
                pool.replace(ran_on)
                if not retry:
                    self.suspects.extend(chunk)
                    continue
                recs = [_crashed(self.spec, t, exc) for t in chunk]
            except Exception as exc:
                recs = [_crashed(self.spec, t, exc) for t in chunk]
            for rec in recs:
                self._record(rec)

    def _finish_started(self, pool: _Pool) -> bool:
        """After Ctrl-C: cancel what has not started; the files being converted finish (their
        writes are atomic anyway) and are recorded, and the tasks a worker had already taken end
        without starting another file (:meth:`_Pool.stop`). False when a second Ctrl-C abandons
        them."""
        for fut in list(self.pending):
            if fut.cancel():
                self.pending.pop(fut)
        try:
            while self.pending:
                self._collect_done(pool)
        except KeyboardInterrupt:
            return False
        return True

    def _record(self, rec: FileResult) -> None:
        if self.book is not None and rec.status != UNCHANGED:
            self.book.append(rec)
        self.summary.add(rec)
        if self.keep_results:
            self.results.append(rec)
        if self.progress is not None:
            self.progress.advance(rec)
        if self.on_result is not None:
            self.on_result(rec)

    def refuse_an_output_at(self, path: Path | str, what: str) -> None:
        """Refuse the run (UsageError) when one of its outputs would be written at ``path`` (a
        local path or a URL), which holds something else: outputs replace what is there. Only a
        name that ends as an output's can be one, so only then are the sources walked."""
        real = storage.real_form(os.fspath(path))
        extension = PACKAGE_EXTENSION if self.spec.package else get(self.spec.to).extension
        if not os.fspath(path).endswith(extension) or not storage.inside(real, [self.spec.outdir_real]):
            return
        rel = storage.relative(real, self.spec.outdir_real)
        for item in self._discover():
            try:
                mine = item.rel and output_path(item.rel, self.spec.to, self.spec.package) == rel
            except ValueError:  # refused when the run meets it
                continue
            if mine:
                raise UsageError(f"{what} {path} is where the output of {item.path} goes; "
                                 "choose a path no output takes")

    def _discover(self) -> Iterator[Found | Refused]:
        """The files of the run, each once: a file reached twice at the same relative path (a
        source named twice, a folder and a file in it) is one input. Both passes use this. (One
        URL's listing names each key once: nothing to remember then.)"""
        once = len(self.srcs) == 1 and storage.is_url(self.srcs[0])
        seen: set[tuple[str, tuple[str, ...] | None]] = set()
        for item in storage.find_inputs(self.srcs, pattern=self.pattern, exclude=self.exclude,
                                        storage_options=self.spec.storage_options):
            named = isinstance(item, Found) and not item.confined  # taken as given
            if self.skipper is not None and item.rel and not named \
                    and self.skipper.skipped(item.path, len(item.rel) - 1):
                continue
            if once:
                yield item
                continue
            key = ((item.real if isinstance(item, Found) and item.real else storage.identity(item.path)), item.rel)
            if key not in seen:
                seen.add(key)
                yield item

    def _tasks(self) -> Iterator[Task]:
        for item in self._discover():
            if self.streaming:
                self._found(item)
            try:
                rel = output_path(item.rel, self.spec.to, self.spec.package) if item.rel else None
            except ValueError as exc:
                self._record(_refused(self.spec, item.path, None, str(exc)))
                continue
            if isinstance(item, Refused):
                self._record(_refused(self.spec, item.path, rel, item.reason))
            elif rel is None:
                self._record(_refused(self.spec, item.path, None, "no output name"))
            elif _digest(rel) in self.seen:
                why = f"its output {rel} is already the output of an input found before it"
                self._record(_refused(self.spec, item.path, None, why))
            else:
                self.seen.add(_digest(rel))
                expect = None if self.force or self.book is None else self.book.previous(rel, self.spec.settings)
                yield Task(item.path, rel, item.confined, expect, item.size)
        self.summary.counted = True  # (a listing that streams is done: its total is known now)

    def _found(self, item: Found | Refused | None) -> None:
        """One more file listed (streaming): the totals, and the progress display's, grow."""
        if item is not None:
            self.summary.total_files += 1
            self.summary.total_bytes += item.size if isinstance(item, Found) else 0
        found = getattr(self.progress, "found", None)  # (a caller's display may not follow the listing)
        if found is not None:
            found(self.summary.total_files, self.summary.total_bytes)

    def _chunks(self, chunk_size: int | None, parallelism: int) -> Generator[list[Task], None, None]:
        """The tasks, ``chunk_size`` files each; by default as many as amortize a task's overhead
        while enough tasks keep every worker busy, from what is known of the total (it grows
        while a listing streams, and the tasks with it, up to 32 files)."""
        chunk: list[Task] = []
        for task in self._tasks():
            chunk.append(task)
            if len(chunk) >= (chunk_size or max(1, min(32, self.summary.total_files // (parallelism * 16)))):
                yield chunk
                chunk = []
        if chunk:
            yield chunk


def _digest(rel: str) -> int:
    """An output's key, as the run remembers it to refuse a second input for it: 16 bytes, not
    the name (a name can be hundreds), so that memory stays small whatever the archive's size."""
    return int.from_bytes(hashlib.blake2b(rel.encode("utf-8", "surrogateescape"), digest_size=16).digest())


def _noop() -> None:
    return None


_WAKE_SECONDS = 1.0


class _InProcess(Executor):
    """``workers=0``: convert in this process, one file at a time (debugging, tiny batches)."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        fut: Future[Any] = Future()
        try:
            fut.set_result(fn(*args, **kwargs))
        except Exception as exc:
            fut.set_exception(exc)
        return fut


def _refused(spec: Spec, path: str, rel: str | None, reason: str) -> FileResult:
    return FileResult(input=path, output=rel, status=REFUSED, target_format=spec.to, error=reason,
                      settings=spec.settings, run=spec.run)


def _crashed(spec: Spec, task: Task, exc: BaseException) -> FileResult:
    if isinstance(exc, BrokenExecutor):
        why = ("the worker process died while converting this file (killed, or out of memory: see "
               "--max-bytes); rerun to retry")
    else:
        why = f"the task converting this file failed ({type(exc).__name__}: {exc}); rerun to retry"
    return FileResult(input=task.input, output=task.output, status=INTERNAL, target_format=spec.to, error=why,
                      settings=spec.settings, run=spec.run)
