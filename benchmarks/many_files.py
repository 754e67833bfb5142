"""Many small files: ``asif-convert batch`` at ``-j 1`` and ``-j 2`` against a shell loop calling
the command once per file.

    python benchmarks/many_files.py [--files 10000] [--loop 300] [--archive /tmp/asif-many]

Generates (once, never in git) ``--files`` exports with ``batch.py``'s generator (copies of the
corpus with distinct session ids). Then times, as whole processes (wall and CPU, children
included):

- ``asif-convert batch ARCHIVE -o OUT --to asif -j N -q --force`` for each ``--workers``;
- the same with progress shown (no ``-q``), at the first worker count: what the display costs;
- a shell loop, ``for f in ...; do asif-convert from-continuity "$f" -o OUT; done``, over the
  first ``--loop`` files, scaled to files per second;
- the machine's own scaling: the same pure-Python work in one process and split over the
  largest ``--workers`` count, the ceiling any ``-j`` can reach on this machine now.

Each is run ``--reps`` times and the best wall time is kept (the machine's load only ever adds).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from batch import generate  # noqa: E402  (the generator beside this file)


def timed(cmd: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system of the process and every child it waited for)."""
    before = os.times()
    t0 = time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if done.returncode not in (0, 1):  # (1: an input the corpus holds on purpose is refused)
        raise RuntimeError(f"{cmd[:4]} exited {done.returncode}")
    wall = time.perf_counter() - t0
    after = os.times()
    return wall, (after.children_user - before.children_user) + (after.children_system - before.children_system)


def _spin(n: int) -> int:
    total = 0
    for k in range(n):
        total += k * k % 7
    return total


def machine_scaling(workers: int, work: int = 20_000_000) -> float:
    """The machine's own ceiling for ``-j workers`` against ``-j 1``: a fixed amount of pure-Python
    work in one process, then split over ``workers`` processes (best of 3 each). On cores that
    share a physical core, or that other work holds, this is below ``workers``."""
    import multiprocessing

    def best(procs: int) -> float:
        runs = []
        for _ in range(3):
            with multiprocessing.get_context("fork").Pool(procs) as pool:
                t0 = time.perf_counter()
                pool.map(_spin, [work // procs] * procs)
                runs.append(time.perf_counter() - t0)
        return min(runs)

    return best(1) / best(workers)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--loop", type=int, default=300, help="files the shell loop converts")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--archive", type=Path, default=Path(tempfile.gettempdir()) / "asif-many")
    ap.add_argument("--cli", default=shutil.which("asif-convert") or str(Path(sys.executable).parent / "asif-convert"))
    args = ap.parse_args()

    files, size = generate(args.archive, args.files)
    print(f"archive: {files} files, {size / 1e6:.1f} MB; CPU count {os.cpu_count()}, "
          f"load average {os.getloadavg()[0]:.2f} at start")
    out = Path(tempfile.mkdtemp(prefix="asif-many-out-"))
    rows: list[tuple[str, int, float, float]] = []

    def best(cmd: list[str]) -> tuple[float, float]:
        runs = []
        for _ in range(args.reps):
            shutil.rmtree(out / "o", ignore_errors=True)
            runs.append(timed(cmd))
        return min(runs)

    try:
        for w in args.workers:
            wall, cpu = best([args.cli, "batch", str(args.archive), "-o", str(out / "o"), "--to", "asif", "-j", str(w),
                              "-q", "--force"])
            rows.append((f"batch -j {w}", files, wall, cpu))
        w = args.workers[0]
        wall, cpu = best([args.cli, "batch", str(args.archive), "-o", str(out / "o"), "--to", "asif", "-j", str(w),
                          "--force"])
        rows.append((f"batch -j {w}, progress shown", files, wall, cpu))
        subset = sorted(args.archive.rglob("*.json"))[:args.loop]
        (out / "loop").mkdir()
        script = 'for f in "$@"; do "$0" from-continuity "$f" -o "out-${f##*/}" || [ $? -eq 1 ] || exit 3; done'
        os.chdir(out / "loop")
        wall, cpu = best(["sh", "-c", script, args.cli, *map(str, subset)])
        os.chdir(HERE)
        rows.append((f"shell loop ({len(subset)} files, scaled)", len(subset), wall, cpu))
    finally:
        shutil.rmtree(out, ignore_errors=True)

    machine = machine_scaling(max(args.workers))
    loop_rate = rows[-1][1] / rows[-1][2]
    first = rows[0][1] / rows[0][2]
    print("| run | files | wall s | files/s | x shell loop | x -j first | CPU s | CPU ms per file |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, n, wall, cpu in rows:
        rate = n / wall
        print(f"| {name} | {n} | {wall:.1f} | {rate:.0f} | {rate / loop_rate:.1f} | {rate / first:.2f} | "
              f"{cpu:.1f} | {1000 * cpu / n:.2f} |")
    print(f"the machine itself, the same pure-Python work in {max(args.workers)} processes against 1: "
          f"{machine:.2f}x (what any -j {max(args.workers)} can reach here)")
    print(f"load average {os.getloadavg()[0]:.2f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
