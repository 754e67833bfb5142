"""Throughput of ``asif-convert batch`` (library ``migrate``) by number of local workers.

    python benchmarks/batch.py --files 2000 --workers 1 2 [--archive /tmp/asif-batch-archive] [--reps 3]
    python benchmarks/batch.py --files 400 --workers 1 2 --dask 1 2 4 --s3    # cluster and object storage

Generates (once) an archive of ``--files`` agent-continuity exports under ``--archive``, by copying
the corpus exports with a distinct session id per copy, 100 files per folder; it never goes in
git. Then, for each worker count, converts the whole archive into a fresh folder ``--reps`` times
(``--force``, so nothing is skipped) and reports the best wall time as files/s and input MB/s,
the scaling ratio against the first worker count, the CPU seconds spent (parent and workers:
files per CPU-second does not depend on what else the machine runs), and the peak resident
memory of the parent and of the largest worker (Linux ``ru_maxrss``).

``--dask N...`` converts the same archive on a local Dask cluster of N single-threaded worker
processes (``distributed.LocalCluster``, the executor ``batch --scheduler`` uses), to compare
with ``--workers N``. ``--s3`` also converts it from S3 to S3 on a local moto server (a process on
127.0.0.1, stopped when done) with the first worker count, against local disk, for the
overhead of object storage (the moto server shares the machine's cores with the workers).
``--large`` makes each file about 40 times larger (the mixed corpus export's events repeated).
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


def generate(archive: Path, n: int, factor: int = 1) -> tuple[int, int]:
    """``n`` distinct exports (corpus file i % len, session id made unique); returns (files, bytes)."""
    marker = archive / ".complete"
    if marker.exists() and json.loads(marker.read_text()).get("factor", 1) == factor \
            and json.loads(marker.read_text())["files"] == n:
        return n, json.loads(marker.read_text())["bytes"]
    shutil.rmtree(archive, ignore_errors=True)
    sources = [(p, enlarge(p.read_bytes(), factor), json.loads(p.read_bytes())["session"]["session_id"])
               for p in CORPUS]
    total = 0
    for i in range(n):
        path, data, sid = sources[i % len(sources)]
        data = data.replace(json.dumps(sid).encode(), json.dumps(f"{sid}-{i:06d}").encode())
        dst = archive / f"part-{i // 100:04d}" / f"{i:06d}-{path.name}"
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_bytes(data)
        total += len(data)
    marker.write_text(json.dumps({"files": n, "bytes": total, "factor": factor}))
    return n, total


def enlarge(data: bytes, factor: int) -> bytes:
    """The export with its messages repeated ``factor`` times under fresh ids (a larger, valid file)."""
    doc = json.loads(data)
    messages = doc.get("messages") or []
    if factor > 1 and messages:
        extra = []
        for k in range(1, factor):
            for m in messages:
                copy = dict(m)
                copy["message_id"] = f"{m['message_id']}-x{k}"
                extra.append(copy)
        doc["messages"] = messages + extra
    return json.dumps(doc).encode()


def _best(run, reps: int) -> tuple[float, float]:
    best = cpu = None
    for _ in range(reps):
        c0 = _cpu()
        t0 = time.perf_counter()
        run()
        elapsed, used = time.perf_counter() - t0, _cpu() - c0
        if best is None or elapsed < best:
            best, cpu = elapsed, used
    assert best is not None and cpu is not None
    return best, cpu


def _dask(archive: Path, files: int, size: int, counts: list[int], reps: int, base: float | None) -> None:
    from distributed import Client, LocalCluster

    from asif_convert.batch import migrate

    for n in counts:
        with LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
                Client(cluster) as client:
            def run(n: int = n, client: Client = client) -> None:
                out = Path(tempfile.mkdtemp(prefix="asif-batch-dask-"))
                report = migrate([archive], out, to="asif", executor=client.get_executor(), workers=n,
                                 max_in_flight=2 * n, force=True, keep_results=False)
                shutil.rmtree(out)
                assert report.summary.counts["ok"] == files, report.summary.counts
            best, _ = _best(run, reps)
        ratio = f", x{base / best:.2f} of --workers {counts[0]}'s speed" if base else ""
        print(f"dask workers={n}: {best:.2f} s, {files / best:.0f} files/s, {size / 1e6 / best:.2f} MB/s{ratio}")


def _s3(archive: Path, files: int, size: int, workers: int, reps: int, local: float) -> None:
    import socket
    import subprocess

    import s3fs

    from asif_convert.batch import migrate

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        options = {"endpoint_url": f"http://127.0.0.1:{port}", "key": "testing", "secret": "testing"}
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.1)
        fs = s3fs.S3FileSystem(**options)
        fs.mkdir("bench")
        fs.put(str(archive) + "/", "bench/in/", recursive=True)

        def run() -> None:
            report = migrate(["s3://bench/in/"], "s3://bench/out/", to="asif", workers=workers, force=True,
                             keep_results=False, storage_options=options)
            assert report.summary.counts["ok"] == files, report.summary.counts
        best, _ = _best(run, reps)
    finally:
        server.terminate()
        server.wait(timeout=10)
    print(f"s3 (moto) workers={workers}: {best:.2f} s, {files / best:.0f} files/s, {size / 1e6 / best:.2f} MB/s, "
          f"x{best / local:.2f} the time of local disk")


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
    ap.add_argument("--dask", type=int, nargs="*", default=[], metavar="N")
    ap.add_argument("--s3", action="store_true")
    ap.add_argument("--large", action="store_true")
    args = ap.parse_args()

    from asif_convert.batch import migrate

    files, size = generate(args.archive, args.files, 40 if args.large else 1)
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
    if args.dask:
        _dask(args.archive, files, size, args.dask, args.reps, base)
    if args.s3 and base is not None:
        _s3(args.archive, files, size, args.workers[0], args.reps, base)
    parent = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"peak RSS: parent {parent:.0f} MB, largest worker {child:.0f} MB")


if __name__ == "__main__":
    sys.exit(main())
