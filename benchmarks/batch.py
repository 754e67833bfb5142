"""Throughput of ``asif-convert batch`` (library ``migrate``) by number of local workers.

    python benchmarks/batch.py --files 2000 --workers 1 2 [--archive /tmp/asif-batch-archive] [--reps 3]

Generates (once) an archive of ``--files`` agent-continuity exports under ``--archive``, by copying
the corpus exports with a distinct session id per copy, 100 files per folder; it never goes in
git. Then, for each worker count, converts the whole archive into a fresh folder ``--reps`` times
(``--force``, so nothing is skipped) and reports the best wall time as files/s and input MB/s,
the scaling ratio against the first worker count, the CPU seconds spent (parent and workers:
files per CPU-second does not depend on what else the machine runs), and the peak resident
memory of the parent and of the largest worker (Linux ``ru_maxrss``).
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = sorted((ROOT / "corpus" / "continuity").glob("*.json"))


def generate(archive: Path, n: int) -> tuple[int, int]:
    """``n`` distinct exports (corpus file i % len, session id made unique); returns (files, bytes)."""
    marker = archive / ".complete"
    if marker.exists() and json.loads(marker.read_text())["files"] == n:
        return n, json.loads(marker.read_text())["bytes"]
    shutil.rmtree(archive, ignore_errors=True)
    sources = [(p, p.read_bytes(), json.loads(p.read_bytes())["session"]["session_id"]) for p in CORPUS]
    total = 0
    for i in range(n):
        path, data, sid = sources[i % len(sources)]
        data = data.replace(json.dumps(sid).encode(), json.dumps(f"{sid}-{i:06d}").encode())
        dst = archive / f"part-{i // 100:04d}" / f"{i:06d}-{path.name}"
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_bytes(data)
        total += len(data)
    marker.write_text(json.dumps({"files": n, "bytes": total}))
    return n, total


def _cpu() -> float:
    """CPU seconds of this process and of its reaped children (the workers, once the pool is shut down)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--archive", type=Path, default=Path(tempfile.gettempdir()) / "asif-batch-archive")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()

    from asif_convert.batch import migrate

    files, size = generate(args.archive, args.files)
    print(f"archive: {files} files, {size / 1e6:.1f} MB in {args.archive}")
    base = None
    for w in args.workers:
        best = cpu = None
        for _ in range(args.reps):
            out = Path(tempfile.mkdtemp(prefix="asif-batch-out-"))
            c0 = _cpu()
            t0 = time.perf_counter()
            report = migrate([args.archive], out, to="asif", workers=w, force=True, keep_results=False)
            elapsed = time.perf_counter() - t0
            used = _cpu() - c0
            shutil.rmtree(out)
            assert report.summary.counts["ok"] == files, report.summary.counts
            if best is None or elapsed < best:
                best, cpu = elapsed, used
        base = base or best
        print(f"workers={w}: {best:.2f} s, {files / best:.0f} files/s, {size / 1e6 / best:.2f} MB/s, "
              f"speed-up x{base / best:.2f} (CPU {cpu:.1f} s: {files / cpu:.0f} files per CPU-second)")
    parent = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"peak RSS: parent {parent:.0f} MB, largest worker {child:.0f} MB")


if __name__ == "__main__":
    sys.exit(main())
