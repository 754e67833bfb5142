"""A running Dask cluster as a batch's executor (``batch --scheduler``; the ``dask`` extra).

Imported only when a scheduler is named. Workers read their inputs and write their outputs
themselves: what travels through the scheduler is each task's paths or URLs and the batch's
settings (storage options included), and each file's small result record back.
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import Executor
from typing import Any

import distributed

from asif_convert.batch._records import ClusterLost, UsageError

NO_WORKER_SECONDS = 60.0  # a cluster without a worker this long has lost them: the batch stops
STALL_SECONDS = 900.0  # no file finished this long while workers are there: the batch stops


def _connect(address: str, timeout: float) -> Any:
    """A client, or a usage error within about ``timeout`` seconds: a port that accepts a
    connection and never speaks would hold distributed's handshake far longer, so the connection
    is made in a thread that is left behind (a daemon) when it does not finish in time."""
    made: list[Any] = []
    failed: list[BaseException] = []
    # What the client's connections say (tracebacks of streams closed under a gather as workers
    # die) is not for the user: the batch says what each file became, and why it stops.
    for name in ["distributed", "tornado", *logging.root.manager.loggerDict]:
        if name.split(".")[0] in ("distributed", "tornado"):  # (distributed sets some children's levels)
            logging.getLogger(name).setLevel(logging.CRITICAL)

    def attempt() -> None:
        try:
            made.append(distributed.Client(address, timeout=timeout, set_as_default=False))
        except BaseException as exc:
            failed.append(exc)

    thread = threading.Thread(target=attempt, name="asif-convert-dask-connect", daemon=True)
    thread.start()
    thread.join(timeout + 2)
    if made:
        return made[0]
    reason = "not a scheduler address" if failed and isinstance(failed[0], ValueError) \
        else f"no answer within {timeout:g} s"
    raise UsageError(f"cannot reach the Dask scheduler at {address}: {reason}")


class Cluster:
    """A client of the scheduler at ``address``, connected within ``timeout`` seconds, with at
    least one worker; ``threads`` is how many tasks the cluster runs at once."""

    def __init__(self, address: str, timeout: float, *, no_worker_timeout: float = NO_WORKER_SECONDS,
                 stall_timeout: float = STALL_SECONDS) -> None:
        self.address = address
        self.no_worker_timeout, self.stall_timeout = no_worker_timeout, stall_timeout
        self._no_worker_since: float | None = None
        self.client: Any = _connect(address, timeout)
        try:
            self.client.wait_for_workers(1, timeout=timeout)
        except (OSError, TimeoutError):
            self.close()
            raise UsageError(f"the Dask scheduler at {address} has no workers (waited {timeout:g} s)") from None
        counts = self.client.nthreads()
        self.workers = len(counts)
        self.threads = max(1, sum(counts.values()))

    def watchdog(self, idle: float) -> None:
        """Raise :class:`ClusterLost` when the cluster has had no worker for ``no_worker_timeout``
        seconds (every worker died, and none came back: one that does takes the tasks up again,
        Dask reschedules them), or when no file has finished for ``stall_timeout`` seconds while
        it has workers (0: never). ``idle``: the seconds since the last result arrived."""
        now = time.monotonic()
        workers = self._workers()
        if workers:
            self._no_worker_since = None
        elif self._no_worker_since is None:
            self._no_worker_since = now
        if self._no_worker_since is not None and now - self._no_worker_since >= self.no_worker_timeout:
            raise ClusterLost(f"the Dask cluster at {self.address} has had no worker for "
                              f"{self.no_worker_timeout:g} s; stopped (the manifest holds what was done: rerun "
                              "the same command when workers are back)")
        if workers and self.stall_timeout and idle >= self.stall_timeout:
            raise ClusterLost(f"the Dask cluster at {self.address} has {workers} worker{'s' if workers > 1 else ''} "
                              f"but finished no file for {self.stall_timeout:g} s; stopped (the manifest holds what "
                              "was done: rerun the same command)")

    def _workers(self) -> int:
        """How many workers the scheduler has now (none when it cannot be asked)."""
        if self.client.status != "running":  # the scheduler went away: the client is reconnecting
            return 0
        try:
            return len(self.client.nthreads())
        except Exception:  # it went away while asked
            return 0

    @property
    def executor(self) -> Executor:
        return self.client.get_executor()

    def close(self) -> None:
        """Disconnect; the scheduler forgets (and cancels) whatever this client left running."""
        try:
            self.client.close(timeout=10)
        except Exception:  # the scheduler went away meanwhile: nothing is left to cancel
            pass

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
