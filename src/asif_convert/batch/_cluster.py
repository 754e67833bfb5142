"""A running Dask cluster as a batch's executor (``batch --scheduler``; the ``dask`` extra).

Imported only when a scheduler is named. Workers read their inputs and write their outputs
themselves: what travels through the scheduler is each task's paths or URLs and the batch's
settings (storage options included), and each file's small result record back.
"""

from __future__ import annotations

import threading
from concurrent.futures import Executor
from typing import Any

import distributed

from asif_convert.batch._records import UsageError


def _connect(address: str, timeout: float) -> Any:
    """A client, or a usage error within about ``timeout`` seconds: a port that accepts a
    connection and never speaks would hold distributed's handshake far longer, so the connection
    is made in a thread that is left behind (a daemon) when it does not finish in time."""
    made: list[Any] = []
    failed: list[BaseException] = []

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

    def __init__(self, address: str, timeout: float) -> None:
        self.address = address
        self.client: Any = _connect(address, timeout)
        try:
            self.client.wait_for_workers(1, timeout=timeout)
        except (OSError, TimeoutError):
            self.close()
            raise UsageError(f"the Dask scheduler at {address} has no workers (waited {timeout:g} s)") from None
        counts = self.client.nthreads()
        self.workers = len(counts)
        self.threads = max(1, sum(counts.values()))

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
