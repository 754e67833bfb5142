"""Run on a Dask scheduler (``Client.run_on_scheduler``; pickled by value, the scheduler need not
import the tests): what its tasks hold."""

from __future__ import annotations

from typing import Any


def tasks_holding(dask_scheduler: Any, needle: bytes) -> tuple[int, list[str]]:
    """How many tasks the scheduler holds, and the keys of those whose run_spec (the function
    and arguments a worker is sent) holds ``needle`` once pickled."""
    import pickle

    import cloudpickle

    found = []
    for key, ts in dask_scheduler.tasks.items():
        spec = ts.run_spec
        try:
            blob = pickle.dumps(spec)
        except Exception:
            blob = cloudpickle.dumps(spec)
        if needle in blob or needle in repr(spec).encode():
            found.append(str(key))
    return len(dask_scheduler.tasks), found
