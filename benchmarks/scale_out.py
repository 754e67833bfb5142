"""Object storage through a Dask cluster: ``asif-convert batch s3://... --scheduler`` on a local S3
server (moto) with 1, 2 and 4 workers, at two archive sizes: files per second, and the client's
peak memory (what must not grow with the archive beyond the manifest).

    python benchmarks/scale_out.py [--counts 10000 100000] [--workers 1 2 4] [--json OUT]

Everything runs on 127.0.0.1 and is stopped by its pid: a moto server, a Dask scheduler and its
workers (one thread each, no nanny). The archive is ``--counts`` copies of a small corpus export,
each with its own session id, uploaded once per count. Each run is a whole client process (its
peak RSS, ``VmHWM``: not ``getrusage``'s, which on Linux keeps the RSS of the fork of this
benchmark that became the client, and so grew with the archive this process holds; its CPU
seconds; its wall time; the load average as it ends), with
``--no-resume`` so every file is converted. The
floor is raw msgspec decode+encode of the same files in this process, one core: what a worker
could reach if storage and the converter cost nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import msgspec

ROOT = Path(__file__).resolve().parent.parent
EXPORT = ROOT / "corpus" / "continuity" / "02-plain-chat.json"
ENV = {**os.environ, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
       "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
CLIENT = ("import resource, sys\nfrom asif_convert._cli.app import run\nsys.argv = ['asif-convert', 'batch', "
          "*sys.argv[1:]]\ntry:\n    run()\nexcept SystemExit as exc:\n    code = exc.code\n"
          "usage = resource.getrusage(resource.RUSAGE_SELF)\n"
          # VmHWM is this process's own high-water mark; ru_maxrss also holds, on Linux, the RSS the
          # process had as a fork of this benchmark before its exec, which grows with the archive
          "hwm = [int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM:')]\n"
          "print('PEAK_RSS_KB', hwm[0] if hwm else usage.ru_maxrss, 'CPU_S', usage.ru_utime + usage.ru_stime, "
          "file=sys.stderr)\n"
          "sys.exit(code)\n")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing answers on port {port}")


class Processes:
    """What this benchmark starts, stopped by pid (SIGTERM, then SIGKILL), last first."""

    def __init__(self) -> None:
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(self, cmd: list[str]) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
        self.procs.append(proc)
        return proc

    def stop(self, proc: subprocess.Popen[bytes]) -> None:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait(timeout=15)
        self.procs.remove(proc)

    def stop_all(self) -> None:
        for proc in reversed(list(self.procs)):
            self.stop(proc)


def exports(count: int) -> dict[str, bytes]:
    """``count`` copies of the export, each with its own session id, under 1,000-key folders."""
    doc = json.loads(EXPORT.read_bytes())
    out = {}
    for i in range(count):
        doc["session"]["session_id"] = f"bench-{i:07d}"
        out[f"{i // 1000:04d}/{i:07d}.json"] = msgspec.json.encode(doc)
    return out


def floor(files: dict[str, bytes]) -> float:
    """Raw msgspec decode+encode of the files, one core: files per second."""
    t0 = time.perf_counter()
    for data in files.values():
        msgspec.json.encode(msgspec.json.decode(data))
    return len(files) / (time.perf_counter() - t0)


def cluster(procs: Processes, workers: int) -> tuple[str, subprocess.Popen[bytes], list[subprocess.Popen[bytes]]]:
    port = free_port()
    scheduler = procs.start([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                             "--port", str(port), "--no-dashboard"])
    wait_port(port)
    address = f"tcp://127.0.0.1:{port}"
    started = [procs.start([sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1",
                            "--no-nanny", "--host", "127.0.0.1", "--no-dashboard"]) for _ in range(workers)]
    import distributed

    with distributed.Client(address, timeout=60) as client:
        client.wait_for_workers(workers, timeout=120)
    return address, scheduler, started


def run_client(bucket: str, endpoint: str, address: str) -> dict[str, float]:
    args = [f"s3://{bucket}/in/", "-o", f"s3://{bucket}/out/", "--to", "asif", "--scheduler", address, "--no-resume",
            f"--storage-option=endpoint_url={endpoint}"]
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", CLIENT, *args], capture_output=True, text=True, env=ENV,
                          timeout=7200)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"batch exited {proc.returncode}: {proc.stdout[-3000:]} {proc.stderr[-2000:]}")
    converted = int(re.search(r"converted\s+(\d+)", proc.stdout).group(1))  # type: ignore[union-attr]
    rate = float(re.search(r"files/s\s+([\d.]+)", proc.stdout).group(1))  # type: ignore[union-attr]
    usage = re.search(r"PEAK_RSS_KB (\d+) CPU_S ([\d.]+)", proc.stderr)
    assert usage is not None, proc.stderr[-2000:]
    return {"converted": converted, "files_per_s": rate, "wall_s": round(wall, 1),
            "peak_rss_mb": round(int(usage.group(1)) / 1024, 1), "client_cpu_s": round(float(usage.group(2)), 1),
            "load_1m_after": os.getloadavg()[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--counts", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--json", type=Path)
    opts = parser.parse_args()
    import s3fs

    procs = Processes()
    results = []
    try:
        port = free_port()
        procs.start([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)])
        wait_port(port)
        endpoint = f"http://127.0.0.1:{port}"
        fs = s3fs.S3FileSystem(endpoint_url=endpoint, key="testing", secret="testing")
        for count in opts.counts:
            files = exports(count)
            bucket = f"bench-{count}"
            fs.mkdir(bucket)
            t0 = time.perf_counter()
            fs.pipe({f"{bucket}/in/{k}": v for k, v in files.items()}, batch_size=64)
            print(f"{count} objects uploaded in {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
            ceiling = floor(files)
            del files
            for workers in opts.workers:
                address, scheduler, started = cluster(procs, workers)
                row = {"objects": count, "workers": workers, **run_client(bucket, endpoint, address),
                       "msgspec_floor_files_per_s": round(ceiling)}
                manifest = fs.info(f"{bucket}/out/manifest.jsonl")["size"]
                row["manifest_mb"] = round(manifest / 1e6, 1)
                print(json.dumps(row), flush=True)
                results.append(row)
                for proc in reversed(started):
                    procs.stop(proc)
                procs.stop(scheduler)
            fs.rm(f"{bucket}", recursive=True)
    finally:
        procs.stop_all()
    if opts.json:
        opts.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
