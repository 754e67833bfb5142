"""How Ctrl-C and SIGTERM reach a running batch: as a request the run acts on where it has
nothing in hand, never as an exception in the middle of its bookkeeping.

Python runs a signal's handler in the main thread, between two of its bytecodes, whichever
thread the kernel gave the signal to. A KeyboardInterrupt raised there can land between taking a
finished task's results and recording the last of them (their outputs in OUTDIR, with no
manifest line and no count), or inside ``concurrent.futures.wait`` while it holds some of the
futures' locks (which it then never releases: the pool's thread blocks on them, and the stopped
run waits forever). Blocking the signals in the main thread cannot prevent either: the kernel
then hands a signal sent to the process to any thread that does not block it (one of fsspec's,
of a Dask client's, of the caller's), and Python still runs the handler in the main thread at
its next bytecode. So during a run a handler only notes the signal and wakes the run, which
lets the signal act (its handler raising KeyboardInterrupt) from its own loop.
"""

from __future__ import annotations

import signal
import threading
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType, TracebackType
from typing import Any

_STOPS = {signal.SIGINT, signal.SIGTERM}

Handler = Callable[[int, FrameType | None], Any]


class StopRequests:
    """Inside ``with``, the handlers of Ctrl-C and SIGTERM that are Python functions (Python's
    own for Ctrl-C, the command line's for SIGTERM, a caller's) do not run when the signal
    arrives: it is held, :attr:`requested` says so (the run starts nothing more), ``wake`` is
    called (the run stops waiting), and the handler runs when the run calls :meth:`act`, where
    it holds nothing. A second signal while one is held does not wait: the held one acts at
    once, wherever the run is, and the second is held in turn (a second Ctrl-C abandons the
    files in progress; a run stuck in a caller's callback can still be stopped). Handlers that
    are not Python functions (SIGTERM's default, which ends the process) are left alone, and so
    is everything outside the main thread, where no handler can be set.

    ``wake`` runs inside a signal handler: it must be safe there (``SimpleQueue.put`` is)."""

    def __init__(self, wake: Callable[[], object]) -> None:
        self._wake = wake
        self._previous: dict[int, Handler] = {}
        self._held: deque[tuple[int, FrameType | None]] = deque()

    def __enter__(self) -> StopRequests:
        if threading.current_thread() is threading.main_thread():
            for sig in _STOPS:
                handler = signal.getsignal(sig)
                if callable(handler):
                    self._previous[sig] = handler
                    signal.signal(sig, self._arrived)
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self.act()  # a signal held until the run's end acts as it ends

    @property
    def requested(self) -> bool:
        """A signal is held: the run should start nothing more, and act on it."""
        return bool(self._held)

    def act(self) -> None:
        """The signals held act now, in the order they came, as their handlers would have on
        arrival (Ctrl-C's raises KeyboardInterrupt, and the rest stay held)."""
        while self._held:
            sig, frame = self._held.popleft()
            self._previous[sig](sig, frame)

    def _arrived(self, sig: int, frame: FrameType | None) -> None:
        self._held.append((sig, frame))
        if len(self._held) > 1:
            self.act()
        else:
            self._wake()


@contextmanager
def signals_to_main_thread() -> Iterator[None]:
    """Threads started inside (a process pool's, a progress display's) block Ctrl-C and SIGTERM,
    so that the kernel delivers those to the main thread: Python runs a signal's handler only
    in the main thread, and only once it wakes. A signal taken by another thread would leave
    the main thread waiting for the next result (a whole task of files) before the run stops,
    while the workers go on starting files. Worker processes forked inside unblock them again
    (:func:`~asif_convert.batch._worker.init_worker`). Outside the main thread, or without
    POSIX signal masks, nothing changes. (This makes a stop prompt, not safe: a thread the run
    did not start may still take a signal; :class:`StopRequests` makes it safe.)"""
    if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _STOPS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
