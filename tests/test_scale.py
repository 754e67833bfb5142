"""batch on a cluster and a store that fail: every worker killed, credentials kept from the
scheduler, uploads failing halfway, racing and stale locks. Real services on 127.0.0.1 (moto's S3
server, a Dask scheduler and workers as processes), started here and stopped by pid."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import threading
import time
import uuid
from pathlib import Path

import pytest

if os.environ.get("CI") == "true":  # there a missing service fails the run, never skips these tests
    import distributed as _distributed  # noqa: F401
    import moto  # noqa: F401
    import psutil  # noqa: F401
    import s3fs  # noqa: F401

from asif_convert.batch import FileResult, UsageError, migrate, read_manifest
from asif_convert.batch._remote import OutdirLock

from . import cluster_probe, test_remote
from .conftest import CONTINUITY_FILES
from .s3_faults import FaultyProxy
from .test_remote import (
    CLI,
    _archive,
    _bucket,
    _flags,
    _local_batch,
    _manifest,
    _outputs,
    _run,
    _upload,
    _wait_for_outputs,
    distributed,
)

# this module's own services (moto, a cluster), from test_remote's fixtures
services, endpoint, s3, scheduler = test_remote.services, test_remote.endpoint, test_remote.s3, test_remote.scheduler


def _exports(copies: int) -> dict[str, bytes]:
    return {k: v for k, v in _archive(copies=copies).items() if not k.startswith(("bad/", "large/"))}


def test_credentials_are_in_no_task_the_scheduler_holds(s3, endpoint, scheduler):
    """The client's key and secret list the sources and hold the lock; the workers use their
    own (their environment): no task the scheduler holds carries the client's."""
    import cloudpickle

    cloudpickle.register_pickle_by_value(cluster_probe)  # the scheduler does not import the tests
    bucket = _bucket(s3)
    _upload(s3, f"{bucket}/in", _exports(copies=2))
    secret, key = f"client-secret-{uuid.uuid4().hex}", f"client-key-{uuid.uuid4().hex}"
    looks: list[tuple[int, list[str], list[str]]] = []
    with distributed.Client(scheduler, timeout=30, set_as_default=False) as client:
        def look(_rec: object) -> None:  # while tasks are in flight
            if len(looks) < 3:
                looks.append((*client.run_on_scheduler(cluster_probe.tasks_holding, needle=secret.encode()),
                              client.run_on_scheduler(cluster_probe.tasks_holding, needle=key.encode())[1]))

        report = migrate(f"s3://{bucket}/in/", f"s3://{bucket}/out", to="asif", executor=client.get_executor(),
                         workers=2, max_in_flight=8, chunk_size=1, on_result=look,
                         storage_options={"endpoint_url": endpoint, "key": key, "secret": secret,
                                          "client_kwargs": {"aws_session_token": secret}})
        assert report.exit_code == 0 and report.summary.counts["ok"] == len(report.results) > 0
        assert len(looks) == 3
        assert all(tasks > 0 for tasks, _, _ in looks)  # tasks were there to look at
        assert [(hits, key_hits) for _, hits, key_hits in looks] == [([], [])] * 3
        # the probe finds a secret a task does carry
        carried = client.submit(len, {"secret": secret}, pure=False)
        assert carried.result() == 1
        assert str(carried.key) in client.run_on_scheduler(cluster_probe.tasks_holding, needle=secret.encode())[1]


def test_every_worker_killed_stops_resumably_and_a_worker_back_resumes(s3, endpoint, services, tmp_path):
    address, (worker,) = services.scheduler(workers=1)
    files = _exports(copies=12)
    expected = _local_batch(tmp_path, files)

    def start(bucket: str, *extra: str) -> tuple[list[str], subprocess.Popen[str]]:
        _upload(s3, f"{bucket}/in", files)
        args = [f"s3://{bucket}/in/", "-o", f"s3://{bucket}/out/", "--to", "asif", "--scheduler", address, "-q",
                *extra, *_flags(endpoint)]
        proc = subprocess.Popen([*CLI, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        _wait_for_outputs(s3, f"{bucket}/out", proc, at_least=1)
        return args, proc

    # every worker dies and one comes back while the batch waits: it takes the work up again
    bucket = _bucket(s3)
    _, proc = start(bucket)
    assert proc.poll() is None, "the batch ended before its worker could be killed"
    os.kill(worker.pid, signal.SIGKILL)
    worker.wait(timeout=30)
    worker = services.worker(address)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert _outputs(s3, f"{bucket}/out") == expected

    # every worker dies and none comes back: one line, exit 5, a manifest the rerun resumes
    bucket = _bucket(s3)
    args, proc = start(bucket, "--no-worker-timeout", "3")
    assert proc.poll() is None, "the batch ended before its worker could be killed"
    os.kill(worker.pid, signal.SIGKILL)
    worker.wait(timeout=30)
    killed = time.monotonic()
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 5, err
    assert time.monotonic() - killed < 30
    lines = err.strip().splitlines()
    assert len(lines) == 1 and f"the Dask cluster at {address} has had no worker for 3 s" in lines[0], err
    done = _manifest(s3, f"{bucket}/out/manifest.jsonl", tmp_path)
    # what the cluster reported before it lost its worker (a task reports its files together)
    assert len(done) < len(files) and set(done.values()) <= {"ok"}
    services.worker(address)
    again = _run(*args, "--connect-timeout", "60")
    assert again.returncode == 0, again.stderr
    assert _outputs(s3, f"{bucket}/out") == expected
    assert set(_manifest(s3, f"{bucket}/out/manifest.jsonl", tmp_path).values()) == {"ok"}


def read_manifest_at(fs: object, key: str, tmp_path: Path) -> list[FileResult]:
    local = tmp_path / "manifest-records.jsonl"
    fs.invalidate_cache()  # type: ignore[attr-defined]
    local.write_bytes(fs.cat_file(key))  # type: ignore[attr-defined]
    return read_manifest(local)


def _via(proxy_url: str) -> list[str]:
    return [f"--storage-option=endpoint_url={proxy_url}", "--storage-option=key=testing",
            "--storage-option=secret=testing"]


def test_uploads_failing_halfway_are_retried_to_a_clean_runs_bytes(s3, endpoint, scheduler, tmp_path):
    """Every upload of an output fails three times (the store failing, a connection closed
    halfway through the body, the store busy): each is made again, and the outputs are the clean
    run's. The SDK's own retries are off: s3fs's take the last two, the batch's the first."""
    bucket = _bucket(s3)
    files = _exports(copies=1)
    _upload(s3, f"{bucket}/in", files)
    plan = {1: "500", 2: "close", 3: "503"}
    with FaultyProxy(endpoint, lambda n, tries: plan.get(tries, "pass")) as proxy:
        proc = _run(f"s3://{bucket}/in/", "-o", f"s3://{bucket}/out/", "--to", "asif", "--scheduler", scheduler,
                    "-q", *_via(proxy.url), '--storage-option=config_kwargs={"retries": {"max_attempts": 0}}')
    assert proc.returncode == 0, proc.stderr
    assert proxy.faults == {"500": len(files), "close": len(files), "503": len(files)}
    assert proxy.puts == 4 * len(files)  # three failed, then put
    assert _outputs(s3, f"{bucket}/out") == _local_batch(tmp_path, files)
    assert set(_manifest(s3, f"{bucket}/out/manifest.jsonl", tmp_path).values()) == {"ok"}


def test_an_upload_refused_fails_at_once_and_the_rerun_completes(s3, endpoint, scheduler, tmp_path):
    """Access denied is no transient failure: one attempt per file, a clear reason, no object;
    the rerun (access given) converts every file to the clean run's bytes."""
    bucket = _bucket(s3)
    files = _exports(copies=1)
    _upload(s3, f"{bucket}/in", files)
    args = [f"s3://{bucket}/in/", "-o", f"s3://{bucket}/out/", "--to", "asif", "--scheduler", scheduler]
    with FaultyProxy(endpoint, lambda n, tries: "403") as proxy:
        proc = _run(*args, *_via(proxy.url))
    assert proc.returncode == 1, proc.stderr
    assert proxy.puts == len(files)  # never made again
    assert re.search(rf"output not writable\s+{len(files)}\s", proc.stdout), proc.stdout
    assert _outputs(s3, f"{bucket}/out") == {}
    records = read_manifest_at(s3, f"{bucket}/out/manifest.jsonl", tmp_path)
    assert {r.status for r in records} == {"unwritable"}
    assert all("access denied" in (r.error or "") and "nothing was written" in (r.error or "") for r in records)
    again = _run(*args, "-q", *_flags(endpoint))
    assert again.returncode == 0, again.stderr
    assert _outputs(s3, f"{bucket}/out") == _local_batch(tmp_path, files)


def test_a_worker_killed_mid_upload_leaves_no_object_and_the_batch_completes(s3, endpoint, services, tmp_path):
    import psutil

    address, workers = services.scheduler(workers=2)
    bucket = _bucket(s3)
    files = _exports(copies=2)
    _upload(s3, f"{bucket}/in", files)
    with FaultyProxy(endpoint, lambda n, tries: "hold" if n == 3 else "pass") as proxy:
        proc = subprocess.Popen([*CLI, f"s3://{bucket}/in/", "-o", f"s3://{bucket}/out/", "--to", "asif",
                                 "--scheduler", address, "-q", *_via(proxy.url)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert proxy.held.wait(60), "no upload was held"
        uploading = [w for w in workers if any(c.laddr and c.laddr.port == proxy.held_port
                                               for c in psutil.Process(w.pid).net_connections("tcp"))]
        assert len(uploading) == 1, "the held upload is no worker's"
        os.kill(uploading[0].pid, signal.SIGKILL)  # half its body sent
        uploading[0].wait(timeout=30)
        _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert _outputs(s3, f"{bucket}/out") == _local_batch(tmp_path, files)


def _lock(endpoint: str, outdir: str, stale_seconds: float = 300) -> OutdirLock:
    return OutdirLock(outdir, {"endpoint_url": endpoint, "key": "testing", "secret": "testing"},
                      stale_seconds=stale_seconds)


def _race(locks: list[OutdirLock]) -> list[OutdirLock]:
    """Every lock tries to take OUTDIR at the same moment; those that got it."""
    barrier = threading.Barrier(len(locks))
    won: list[OutdirLock] = []

    def take(lock: OutdirLock) -> None:
        barrier.wait()
        try:
            lock.__enter__()
        except UsageError:
            return
        won.append(lock)

    threads = [threading.Thread(target=take, args=(lock,)) for lock in locks]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    return won


def _holder_token(s3: object, outdir: str) -> str:
    s3.invalidate_cache()  # type: ignore[attr-defined]
    return str(json.loads(s3.cat_file(f"{outdir}/.asif-convert.lock"))["token"])  # type: ignore[attr-defined]


def test_clients_racing_for_one_outdir_one_wins(s3, endpoint):
    bucket = _bucket(s3)
    with FaultyProxy(endpoint, lambda n, tries: "pass") as store:  # (conditional writes atomic, as on S3)
        won = _race([_lock(store.url, f"s3://{bucket}/out") for _ in range(6)])
        assert len(won) == 1 and _holder_token(s3, f"{bucket}/out") == won[0].token
        won[0].__exit__(None, None, None)
    assert not s3.exists(f"{bucket}/out/.asif-convert.lock")


def test_a_stale_lock_is_taken_over_by_one_of_the_racing_clients(s3, endpoint):
    bucket = _bucket(s3)
    outdir = f"s3://{bucket}/out"
    test_remote._plant_lock(s3, f"{bucket}/out", time.time())  # another machine's run, then gone
    with pytest.raises(UsageError, match="is in use by another asif-convert batch"):
        _lock(endpoint, outdir, stale_seconds=2).__enter__()
    time.sleep(3.5)  # by the store's clock, not renewed for longer than 2 s
    with FaultyProxy(endpoint, lambda n, tries: "pass") as store:  # (conditional writes atomic, as on S3)
        won = _race([_lock(store.url, outdir, stale_seconds=2) for _ in range(6)])
        assert len(won) == 1 and _holder_token(s3, f"{bucket}/out") == won[0].token
        won[0].__exit__(None, None, None)


@pytest.mark.parametrize("skew", [3600, -3600])
def test_a_client_whose_clock_is_off_judges_a_lock_by_the_stores(skew, s3, endpoint, monkeypatch):
    """An hour ahead, a live lock's heartbeat looks an hour old; an hour behind, a dead one's
    looks fresh for an hour: the store's clock says how old the lock is."""
    bucket = _bucket(s3)
    outdir = f"s3://{bucket}/out"
    test_remote._plant_lock(s3, f"{bucket}/out", time.time())  # written now, by a run on another machine
    real = time.time
    monkeypatch.setattr(time, "time", lambda: real() + skew)
    with pytest.raises(UsageError, match="renewed [0-9] s ago"):  # live: refused, whatever this clock says
        _lock(endpoint, outdir, stale_seconds=2).__enter__()
    time.sleep(3.5)  # now stale, whatever this clock says
    lock = _lock(endpoint, outdir, stale_seconds=2).__enter__()
    assert _holder_token(s3, f"{bucket}/out") == lock.token
    lock.__exit__(None, None, None)


def test_a_listing_streams_the_first_files_convert_before_its_last_page(s3, endpoint, scheduler, tmp_path):
    """2,110 keys, three pages of a listing: files of the first page are converted (their
    outputs put) before the last page is asked for, and the counts are exact."""
    bucket = _bucket(s3)
    exports = CONTINUITY_FILES[:5]
    objects = {f"{bucket}/in/a/{i}-{p.name}": p.read_bytes() for i, p in enumerate(exports)}
    objects.update({f"{bucket}/in/b/{i:05d}.txt": b"not an export" for i in range(2100)})  # not *.json
    objects.update({f"{bucket}/in/c/{i}-{p.name}": p.read_bytes() for i, p in enumerate(exports)})
    s3.pipe(objects)
    with FaultyProxy(endpoint, lambda n, tries: "pass") as proxy:
        proc = _run(f"s3://{bucket}/in/", "-o", f"s3://{bucket}/out/", "--to", "asif", "--scheduler", scheduler,
                    *_via(proxy.url))
    assert proc.returncode == 0, proc.stderr
    assert "batch: listing the sources on 2 workers; files convert as they are found" in proc.stderr
    assert re.search(r"converted\s+10\s", proc.stdout), proc.stdout
    pages = [i for i, (what, path) in enumerate(proxy.log)
             if what == "list" and "prefix=in%2F&" in path and "max-keys=1&" not in path]  # the listing's pages
    puts = [i for i, (what, _) in enumerate(proxy.log) if what == "put"]
    assert len(pages) == 3 and len(puts) == 10, [p for w, p in proxy.log if w == "list"]
    assert puts[0] < pages[-1]  # a file converted while the listing went on
    assert set(_manifest(s3, f"{bucket}/out/manifest.jsonl", tmp_path).values()) == {"ok"}
    assert len(_outputs(s3, f"{bucket}/out")) == 10


def test_an_object_costs_one_get_of_its_listed_size_and_no_head(s3, endpoint, tmp_path):
    """The listing's sizes stand: each input is read by one ranged GET, no HEAD asks its size
    again, and its output is one PUT; the input above --max-bytes is refused from its listed size
    without a request. The outputs are a local batch's."""
    bucket = _bucket(s3)
    files = _archive(copies=1)
    _upload(s3, f"{bucket}/in", files)
    with FaultyProxy(endpoint, lambda n, tries: "pass") as proxy:
        report = migrate(f"s3://{bucket}/in/", f"s3://{bucket}/out/", to="asif", workers=0,
                         limits=test_remote._limits(),
                         storage_options={"endpoint_url": proxy.url, "key": "testing", "secret": "testing"})
    inputs = {f"/{bucket}/in/{rel}" for rel in files}
    reads = sorted((what, key) for what, key in proxy.log if key in inputs)
    assert reads == sorted(("get", key) for key in inputs if not key.endswith("/large/huge.json"))
    converted = [r for r in report.results if r.status == "ok"]
    assert len(converted) == len(files) - 3 and proxy.puts == len(converted)
    assert {r.output: r.status for r in report.results}["large/huge.asif.json"] == "invalid"
    assert _outputs(s3, f"{bucket}/out") == _local_batch(tmp_path, files)


@pytest.mark.parametrize("listed", [10, 1_000])
def test_an_object_that_changed_size_since_it_was_listed_is_read_whole(listed):
    """An object grown since the listing (the byte past its listed size comes) is asked for its
    size and read again, whole; one that shrank is read whole by the first GET."""
    import fsspec

    from asif_convert._limits import Limits
    from asif_convert.batch import _remote

    data = b'{"session": "' + b"x" * 200 + b'"}'
    fsspec.filesystem("memory").pipe_file(f"/changed-{os.getpid()}/a.json", data)
    assert _remote.read(f"memory://changed-{os.getpid()}/a.json", Limits(), {}, listed) == data


def test_an_object_listed_above_the_limit_is_refused_unread(monkeypatch):
    import fsspec

    from asif_convert._errors import InvalidInput
    from asif_convert._limits import Limits
    from asif_convert.batch import _remote

    fs = fsspec.filesystem("memory")
    fs.pipe_file(f"/limit-{os.getpid()}/a.json", b"{}")
    monkeypatch.setattr(type(fs), "cat_file", lambda *a, **k: pytest.fail("read"))
    with pytest.raises(InvalidInput, match="more than the limit of 100 "):
        _remote.read(f"memory://limit-{os.getpid()}/a.json", Limits(max_bytes=100), {}, 101)


def test_a_large_manifest_goes_up_and_comes_back_a_part_at_a_time(s3, endpoint):
    """A manifest of four parts' size is put back, and read back by a rerun, holding about a part
    in memory, never the manifest (s3fs would read ten parts before sending any, and a whole read
    holds it twice)."""
    import tracemalloc

    from asif_convert.batch._remote import MANIFEST_PART_BYTES, RemoteManifest

    bucket = _bucket(s3)
    url, options = f"s3://{bucket}/out/manifest.jsonl", test_remote._options(endpoint)
    first = RemoteManifest(url, fresh=True, run="2026-01-01T00:00:00.000000Z", storage_options=options)
    line = FileResult(input="s3://b/a.json", output=None, status="invalid", target_format="asif",
                      error="x" * 2**16)
    for i in range(4 * MANIFEST_PART_BYTES // 2**16 + 1):  # lines of 64 KiB, one output each
        line.output = f"{i}.asif.json"
        first.append(line)
    tracemalloc.start()
    try:
        first.close()
        put_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        second = RemoteManifest(url, fresh=False, run="2026-01-01T00:01:00.000000Z", storage_options=options)
        read_peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    second.close()
    assert s3.info(f"{bucket}/out/manifest.jsonl")["size"] > 4 * MANIFEST_PART_BYTES
    assert put_peak < 2.5 * MANIFEST_PART_BYTES and read_peak < 2.5 * MANIFEST_PART_BYTES, (put_peak, read_peak)


def test_a_store_is_one_file_system_whatever_its_client_made_of_the_options(s3, endpoint):
    """botocore rewrites the retry settings it is given: the batch's own stay as written, so the
    next call names the same store by the same options and gets the same file system (one S3
    client per process, not a second after the first request)."""
    from asif_convert.batch import _remote

    bucket = _bucket(s3)
    fs, _ = _remote.filesystem(f"s3://{bucket}/a", test_remote._options(endpoint))
    fs.ls(bucket)
    again, _ = _remote.filesystem(f"s3://{bucket}/b", test_remote._options(endpoint))
    assert again is fs
    assert _remote._S3_CONFIG == {"connect_timeout": 10, "read_timeout": 120, "retries": {"max_attempts": 3}}


def test_credentials_are_split_from_the_options_at_any_depth_and_merged_back():
    from asif_convert.batch import _credentials as credentials

    options = {"endpoint_url": "http://h:1", "key": "K", "Secret": "S", "anon": False,
               "client_kwargs": {"region_name": "r", "aws_session_token": "T"},
               "config_kwargs": {"retries": {"max_attempts": 0}}}
    shared, secret = credentials.split(options)
    assert shared == {"endpoint_url": "http://h:1", "anon": False, "client_kwargs": {"region_name": "r"},
                      "config_kwargs": {"retries": {"max_attempts": 0}}}
    assert secret == {"key": "K", "Secret": "S", "client_kwargs": {"aws_session_token": "T"}}
    assert credentials.merge(shared, secret) == options
    with credentials.holding(secret):
        assert credentials.held() == secret
    assert credentials.held() == {}


def test_a_cluster_whose_workers_stop_progressing_stops_the_batch(s3, endpoint, services, tmp_path):
    """The worker is there (the scheduler still lists it) but converts nothing: stopped, not
    dead. The batch stops after --stall-timeout, exit 5, and the rerun completes."""
    address, (worker,) = services.scheduler(workers=1)
    bucket = _bucket(s3)
    files = _exports(copies=6)
    _upload(s3, f"{bucket}/in", files)
    args = [f"s3://{bucket}/in/", "-o", f"s3://{bucket}/out/", "--to", "asif", "--scheduler", address, "-q",
            *_flags(endpoint)]
    proc = subprocess.Popen([*CLI, *args, "--stall-timeout", "3"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        _wait_for_outputs(s3, f"{bucket}/out", proc, at_least=1)
        os.kill(worker.pid, signal.SIGSTOP)
        _, err = proc.communicate(timeout=60)
    finally:
        os.kill(worker.pid, signal.SIGCONT)
    assert proc.returncode == 5, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "has 1 worker but finished no file for 3 s" in lines[0], err
    assert set(_manifest(s3, f"{bucket}/out/manifest.jsonl", tmp_path).values()) <= {"ok"}
    again = _run(*args)
    assert again.returncode == 0, again.stderr
    assert _outputs(s3, f"{bucket}/out") == _local_batch(tmp_path, files)
