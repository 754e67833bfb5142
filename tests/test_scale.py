"""batch on a cluster and a store that fail: every worker killed, credentials kept from the
scheduler, uploads failing halfway, racing and stale locks. Real services on 127.0.0.1 (moto's S3
server, a Dask scheduler and workers as processes), started here and stopped by pid."""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid

from asif_convert.batch import migrate

from . import cluster_probe, test_remote
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
        _wait_for_outputs(s3, f"{bucket}/out", proc, at_least=2)
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
