"""One batch run per OUTDIR at a time.

The lock is an advisory ``flock`` on ``OUTDIR/.asif-convert.lock``: the kernel releases it when
the run's process (and its workers, which die with it) is gone, however it ended, so a killed run
never leaves OUTDIR stuck. The file records the holder's pid for the message a second run sees,
and a run that ends removes it (a killed one leaves it, unlocked, for the next run to take).
Where ``fcntl`` does not exist (Windows) runs are not locked.
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path
from types import TracebackType

from asif_convert.batch._records import UsageError

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]

LOCK_NAME = ".asif-convert.lock"
# A run that was just killed may still be exiting (the kernel closes its files last): give it a
# moment before calling OUTDIR busy.
_GRACE = 2.0


class OutdirLock:
    def __init__(self, outdir: str | os.PathLike[str]) -> None:
        self.path = Path(outdir) / LOCK_NAME
        self._fd = -1

    def __enter__(self) -> OutdirLock:
        if fcntl is None:
            return self
        deadline = time.monotonic() + _GRACE
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
            if not stat.S_ISREG(os.fstat(fd).st_mode):  # a pipe or a device planted there: nothing to lock
                os.close(fd)
                raise UsageError(f"{self.path} is not a regular file; remove it to run a batch in {self.path.parent}")
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.read(fd, 32).decode("ascii", "replace").strip() or "unknown"
                os.close(fd)
                if time.monotonic() < deadline:
                    time.sleep(0.05)
                    continue
                raise UsageError(f"{self.path.parent} is in use by another asif-convert batch (pid {holder}); "
                                 "wait for it to finish or choose another OUTDIR") from None
            if _same_file(fd, self.path):
                break
            os.close(fd)  # the run that held it removed it meanwhile: lock the file that is there now
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._fd >= 0:
            self.path.unlink(missing_ok=True)  # while still holding it: see _same_file
            os.close(self._fd)
            self._fd = -1


def _same_file(fd: int, path: Path) -> bool:
    try:
        here, there = os.fstat(fd), os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)
