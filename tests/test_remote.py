"""batch on real services: a local S3 server (moto) and a Dask cluster (a scheduler and two
workers), each a process of its own on 127.0.0.1, started here and stopped by pid."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from asif_convert.batch import migrate, read_manifest

from .conftest import CONTINUITY_FILES

s3fs = pytest.importorskip("s3fs", reason="the s3 extra (fsspec, s3fs) is not installed")
pytest.importorskip("moto", reason="moto[server] (the local S3 server) is not installed")
distributed = pytest.importorskip("distributed", reason="the dask extra is not installed")

CLI = [sys.executable, "-c", "from asif_convert._cli.app import run; run()", "batch"]
MAX_BYTES = 100_000  # the "large" input is above it, so refused from its listed size
WORKER_ENV = {"AWS_ACCESS_KEY_ID": "worker-own-key", "AWS_SECRET_ACCESS_KEY": "worker-own-secret"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for_port(port: int, proc: subprocess.Popen[bytes], seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args} exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing answers on port {port}")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """By pid: SIGTERM, then SIGKILL, and reap it."""
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


class Services:
    def __init__(self) -> None:
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(self, cmd: list[str], env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                                env={**os.environ, **(env or {})})
        self.procs.append(proc)
        return proc

    def moto(self, **env: str) -> str:
        port = _free_port()
        proc = self.start([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)], env)
        _wait_for_port(port, proc)
        return f"http://127.0.0.1:{port}"

    def worker(self, scheduler: str) -> subprocess.Popen[bytes]:
        """A worker with credentials of its own, in its environment (moto takes any): the batch
        never sends it the client's."""
        return self.start([sys.executable, "-m", "distributed.cli.dask_worker", scheduler, "--nthreads", "1",
                           "--no-nanny", "--host", "127.0.0.1", "--no-dashboard"], WORKER_ENV)

    def scheduler(self, workers: int) -> tuple[str, list[subprocess.Popen[bytes]]]:
        """A scheduler and ``workers`` workers: its address, once they are all there, and the workers."""
        port = _free_port()
        proc = self.start([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                           "--port", str(port), "--no-dashboard"])
        _wait_for_port(port, proc)
        address = f"tcp://127.0.0.1:{port}"
        started = [self.worker(address) for _ in range(workers)]
        with distributed.Client(address, timeout=30) as client:
            client.wait_for_workers(workers, timeout=60)
        return address, started

    def stop_all(self) -> None:
        for proc in reversed(self.procs):
            _stop(proc)


@pytest.fixture(scope="module")
def services() -> Iterator[Services]:
    running = Services()
    try:
        yield running
    finally:
        running.stop_all()


@pytest.fixture(scope="module")
def endpoint(services: Services) -> str:
    return services.moto()


@pytest.fixture(scope="module")
def scheduler(services: Services) -> str:
    return services.scheduler(workers=2)[0]


def _options(endpoint: str) -> dict[str, object]:
    return {"endpoint_url": endpoint, "key": "testing", "secret": "testing"}


def _flags(endpoint: str) -> list[str]:
    return [f"--storage-option={k}={v}" for k, v in _options(endpoint).items()]


@pytest.fixture()
def s3(endpoint: str) -> s3fs.S3FileSystem:
    fs = s3fs.S3FileSystem(**_options(endpoint), skip_instance_cache=True)
    return fs


_buckets = iter(range(10_000))


def _bucket(fs: s3fs.S3FileSystem) -> str:
    name = f"b{next(_buckets)}-{os.getpid()}"
    fs.mkdir(name)
    return name


def _archive(copies: int = 1) -> dict[str, bytes]:
    """A mixed archive: valid exports, invalid ones, one above the size limit (relative keys)."""
    files: dict[str, bytes] = {}
    for i in range(copies):
        for path in CONTINUITY_FILES:
            files[f"team-{i}/{path.name}"] = path.read_bytes()
    files["bad/not-json.json"] = b"{nope"
    files["bad/not-an-export.json"] = b'{"session": 3}'
    files["large/huge.json"] = b'{"session": "' + b"x" * (MAX_BYTES * 2) + b'"}'
    return files


def _upload(fs: s3fs.S3FileSystem, prefix: str, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        fs.pipe_file(f"{prefix}/{rel}", data)


def _local_batch(tmp: Path, files: dict[str, bytes]) -> dict[str, bytes]:
    src = tmp / "local-src"
    for rel, data in files.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_bytes(data)
    out = tmp / "local-out"
    migrate([src], out, to="asif", workers=0, limits=_limits())
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*.asif.json"))}


def _limits():
    from asif_convert._limits import Limits
    return Limits(max_bytes=MAX_BYTES)


def _outputs(fs: s3fs.S3FileSystem, outdir: str) -> dict[str, bytes]:
    fs.invalidate_cache()
    keys = [k for k in fs.find(outdir) if k.endswith(".asif.json")]
    return {k[len(outdir) + 1:]: fs.cat_file(k) for k in sorted(keys)}


def _run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def _manifest(fs: s3fs.S3FileSystem, key: str, tmp: Path) -> dict[str, str]:
    local = tmp / "manifest.jsonl"
    fs.invalidate_cache()  # the listing made while waiting for outputs is stale
    local.write_bytes(fs.cat_file(key))
    return {rec.key: rec.status for rec in read_manifest(local)}


def test_s3_to_s3_through_the_cluster_is_byte_identical_to_a_local_batch(s3, endpoint, scheduler, tmp_path):
    bucket = _bucket(s3)
    files = _archive()
    _upload(s3, f"{bucket}/exports", files)
    # hostile keys: a part that climbs out of its prefix, an empty part
    s3.pipe_file(f"{bucket}/exports/team-0/../../escape.json", CONTINUITY_FILES[0].read_bytes())
    s3.pipe_file(f"{bucket}/exports/team-0//empty-part.json", CONTINUITY_FILES[0].read_bytes())
    proc = _run(f"s3://{bucket}/exports/", "-o", f"s3://{bucket}/asif/", "--to", "asif", "--scheduler", scheduler,
                f"--max-bytes={MAX_BYTES}", *_flags(endpoint))
    assert proc.returncode == 1, proc.stderr  # invalid and refused inputs
    assert "Traceback" not in proc.stderr
    assert "the Dask cluster at" in proc.stderr and "2 workers" in proc.stderr
    assert re.search(rf"converted\s+{len(CONTINUITY_FILES)}\s", proc.stdout), proc.stdout
    assert re.search(r"invalid input\s+3\s", proc.stdout) and re.search(r"refused\s+2\s", proc.stdout)
    assert f"manifest: s3://{bucket}/asif/manifest.jsonl" in proc.stdout

    assert _outputs(s3, f"{bucket}/asif") == _local_batch(tmp_path, files)
    statuses = _manifest(s3, f"{bucket}/asif/manifest.jsonl", tmp_path)
    assert statuses["bad/not-json.asif.json"] == "invalid"
    assert statuses["large/huge.asif.json"] == "invalid"
    refused = [k for k, v in statuses.items() if v == "refused"]
    assert len(refused) == 2 and all("escape" in k or "empty-part" in k for k in refused)
    assert sum(v == "ok" for v in statuses.values()) == len(CONTINUITY_FILES)
    assert not s3.exists(f"{bucket}/escape.asif.json") and not s3.exists(f"{bucket}/asif/.asif-convert.lock")
    records = [json.loads(line) for line in s3.cat_file(f"{bucket}/asif/manifest.jsonl").splitlines()]
    huge = next(r for r in records if r["output"] == "large/huge.asif.json")
    assert huge["input_bytes"] is None and "limit" in huge["error"]  # refused from its size, unread

    rerun = _run(f"s3://{bucket}/exports/", "-o", f"s3://{bucket}/asif/", "--to", "asif", "--scheduler", scheduler,
                 f"--max-bytes={MAX_BYTES}", *_flags(endpoint))
    assert rerun.returncode == 1
    assert re.search(rf"unchanged \(resumed\)\s+{len(CONTINUITY_FILES)}\s", rerun.stdout), rerun.stdout
    assert re.search(r"converted\s+0\s", rerun.stdout), rerun.stdout


def _wait_for_outputs(fs: s3fs.S3FileSystem, outdir: str, proc: subprocess.Popen[bytes], at_least: int) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and proc.poll() is None:
        fs.invalidate_cache()
        if fs.exists(outdir) and len([k for k in fs.find(outdir) if k.endswith(".asif.json")]) >= at_least:
            return
        time.sleep(0.05)


def test_a_client_killed_mid_run_then_rerun_gives_a_clean_runs_bytes(s3, endpoint, scheduler, tmp_path):
    bucket = _bucket(s3)
    files = {k: v for k, v in _archive(copies=8).items() if not k.startswith(("bad/", "large/"))}
    _upload(s3, f"{bucket}/in", files)
    args = [f"s3://{bucket}/in/", "-o", f"s3://{bucket}/out/", "--to", "asif", "--scheduler", scheduler, "-q",
            *_flags(endpoint)]
    # (a killed client cannot remove its manifest's working copy: it goes to the test's own folder)
    scratch = tmp_path / "client-tmp"
    scratch.mkdir()
    proc = subprocess.Popen([*CLI, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "TMPDIR": str(scratch)})
    try:
        _wait_for_outputs(s3, f"{bucket}/out", proc, at_least=3)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    expected = _local_batch(tmp_path, files)
    partial = _outputs(s3, f"{bucket}/out")
    print(f"killed after {len(partial)} of {len(expected)} outputs")
    assert 0 < len(partial) <= len(expected)
    assert all(partial[k] == expected[k] for k in partial)  # no partial object under a final key
    again = _run(*args)  # the killed run's lock: made on this machine by a process that is gone
    assert again.returncode == 0, again.stderr
    assert _outputs(s3, f"{bucket}/out") == expected
    assert set(_manifest(s3, f"{bucket}/out/manifest.jsonl", tmp_path).values()) == {"ok"}
    assert not s3.exists(f"{bucket}/out/.manifest.jsonl.parts")


def test_an_interrupted_cluster_run_cancels_and_resumes(s3, endpoint, scheduler, tmp_path):
    """SIGTERM (as Ctrl-C): the futures are cancelled, exit 130, and a rerun completes the batch."""
    bucket = _bucket(s3)
    files = {k: v for k, v in _archive(copies=8).items() if not k.startswith(("bad/", "large/"))}
    _upload(s3, f"{bucket}/in", files)
    args = [f"s3://{bucket}/in/", "-o", f"s3://{bucket}/out/", "--to", "asif", "--scheduler", scheduler,
            *_flags(endpoint)]
    proc = subprocess.Popen([*CLI, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _wait_for_outputs(s3, f"{bucket}/out", proc, at_least=2)
    os.kill(proc.pid, signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Batch interrupted" in out and "run the same command again" in out
    # a manifest put back whole: the lines of what was reported before the cancel (there may be none)
    done = _manifest(s3, f"{bucket}/out/manifest.jsonl", tmp_path)
    assert len(done) < len(files) and set(done.values()) <= {"ok"}
    again = _run(*args, "-q")
    assert again.returncode == 0, again.stderr
    assert _outputs(s3, f"{bucket}/out") == _local_batch(tmp_path, files)


def test_a_worker_killed_mid_run_the_batch_finishes_on_the_others(s3, endpoint, scheduler, services, tmp_path):
    bucket = _bucket(s3)
    files = {k: v for k, v in _archive(copies=8).items() if not k.startswith(("bad/", "large/"))}
    _upload(s3, f"{bucket}/in", files)
    extra = services.worker(scheduler)
    with distributed.Client(scheduler, timeout=30) as client:
        client.wait_for_workers(3, timeout=60)
    args = [f"s3://{bucket}/in/", "-o", f"s3://{bucket}/out/", "--to", "asif", "--scheduler", scheduler, "-q",
            *_flags(endpoint)]
    proc = subprocess.Popen([*CLI, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _wait_for_outputs(s3, f"{bucket}/out", proc, at_least=2)
    os.kill(extra.pid, signal.SIGKILL)
    extra.wait(timeout=30)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert _outputs(s3, f"{bucket}/out") == _local_batch(tmp_path, files)


def _plant_lock(fs: s3fs.S3FileSystem, outdir: str, heartbeat: float) -> None:
    fs.pipe_file(f"{outdir}/.asif-convert.lock", json.dumps(
        {"pid": 1, "machine": "another-machine", "token": "t", "heartbeat": heartbeat}).encode())


def test_an_outdir_in_use_on_s3_refuses_a_second_run(s3, endpoint, tmp_path):
    bucket = _bucket(s3)
    s3.pipe_file(f"{bucket}/in/a.json", CONTINUITY_FILES[0].read_bytes())
    args = [f"s3://{bucket}/in/", "-o", f"s3://{bucket}/out", "--to", "asif", "-j", "0", "-q", *_flags(endpoint)]
    _plant_lock(s3, f"{bucket}/out", time.time())
    busy = _run(*args)
    assert busy.returncode == 2
    assert "is in use by another asif-convert batch (pid 1" in busy.stderr and len(busy.stderr.splitlines()) == 1
    assert not s3.exists(f"{bucket}/out/a.asif.json")
    assert _run(*args, "--break-lock").returncode == 0


def test_the_lock_object_is_created_only_if_absent(s3, endpoint):
    """S3's conditional create: of two runs that find no lock, only one makes it."""
    from asif_convert.batch._remote import OutdirLock

    bucket = _bucket(s3)
    first = OutdirLock(f"s3://{bucket}/out", _options(endpoint))
    first._create()
    with pytest.raises(FileExistsError):
        OutdirLock(f"s3://{bucket}/out", _options(endpoint))._create()


@pytest.mark.parametrize("case", ["scheme", "bucket-src", "bucket-out", "scheduler", "credentials"])
def test_bad_storage_or_cluster_is_one_clear_line(case, s3, endpoint, services, tmp_path):
    src = tmp_path / "a.json"
    src.write_bytes(CONTINUITY_FILES[0].read_bytes())
    flags = _flags(endpoint)
    if case == "scheme":
        args, code, said = [str(src), "-o", "nosuch://x/out"], 2, "unknown URL scheme nosuch://"
    elif case == "bucket-src":
        args, code, said = ["s3://no-such-bucket-here/in/", "-o", str(tmp_path / "o")], 1, "no such"
    elif case == "bucket-out":
        args, code, said = [str(src), "-o", "s3://no-such-bucket-here/out"], 2, "no such file, folder or bucket"
    elif case == "scheduler":
        silent = socket.socket()  # accepts connections, never speaks
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        address = f"tcp://127.0.0.1:{silent.getsockname()[1]}"
        args, code, said = [str(src), "-o", str(tmp_path / "o"), "--scheduler", address, "--connect-timeout", "1"], \
            2, f"cannot reach the Dask scheduler at {address}"
    else:
        refusing = services.moto(INITIAL_NO_AUTH_ACTION_COUNT="0")  # checks credentials: these are unknown
        flags = [f"--storage-option=endpoint_url={refusing}", "--storage-option=key=nobody",
                 "--storage-option=secret=wrong"]
        args, code, said = ["s3://some-bucket/in/", "-o", str(tmp_path / "o")], 1, "access denied"
    proc = _run(*args, "--to", "asif", "-q", *flags, timeout=60)
    assert proc.returncode == code, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and said in lines[0], proc.stderr


def test_local_work_imports_neither_fsspec_nor_dask(tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    (src / "a.json").write_bytes(CONTINUITY_FILES[0].read_bytes())
    code = ("import sys\nfrom asif_convert._cli.app import run\n"
            "sys.argv = ['asif-convert', 'batch', sys.argv[1], '-o', sys.argv[2], '--to', 'asif', '-j', '0', '-q']\n"
            "try:\n    run()\nexcept SystemExit as e:\n    code = e.code\n"
            "print(code, sorted(m for m in sys.modules if m.split('.')[0] in ('fsspec', 's3fs', 'distributed')))")
    proc = subprocess.run([sys.executable, "-c", code, str(src), str(tmp_path / "out")], capture_output=True,
                          text=True, timeout=60)
    assert proc.stdout.strip() == "0 []", proc.stderr


def test_a_url_whose_file_system_is_missing_names_the_extra(tmp_path):
    code = ("import sys\nsys.modules['s3fs'] = None\nfrom asif_convert._cli.app import run\n"
            "sys.argv = ['asif-convert', 'batch', 's3://bucket/in/', '-o', sys.argv[1], '--to', 'asif']\nrun()")
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path / "out")], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("error: s3://bucket/in/: the s3:// file system is not installed; "
                                   "pip install 'asif-convert[s3]'")


def test_storage_options_are_json_literals_or_strings():
    from asif_convert._cli.batch import parse_storage_options

    assert parse_storage_options(["anon=true", "n=3", 'client_kwargs={"region_name": "x"}', "endpoint_url=http://h:1",
                                  "key=a=b"]) == {"anon": True, "n": 3, "client_kwargs": {"region_name": "x"},
                                                  "endpoint_url": "http://h:1", "key": "a=b"}


def test_a_killed_runs_manifest_parts_are_read_back_and_merged_once():
    """Lines sent as part objects by a run that never closed its manifest count on the rerun;
    the rerun puts one manifest holding them before it removes the parts."""
    import fsspec

    from asif_convert.batch import FileResult
    from asif_convert.batch._records import Previous
    from asif_convert.batch._remote import RemoteManifest

    fs = fsspec.filesystem("memory")
    url = f"memory://manifest-{os.getpid()}/out/manifest.jsonl"
    first = RemoteManifest(url, fresh=False, run="2026-01-01T00:00:00.000000Z", storage_options={})
    first.append(FileResult(input="s3://b/a.json", output="a.asif.json", status="ok", target_format="asif",
                            input_sha256="ab", output_bytes=10, settings="S"))
    first.flush()  # then the run is killed: no close, no whole manifest put
    parts = fs.find(f"/manifest-{os.getpid()}/out/.manifest.jsonl.parts")
    assert len(parts) == 1 and not fs.exists(f"/manifest-{os.getpid()}/out/manifest.jsonl")

    second = RemoteManifest(url, fresh=False, run="2026-01-01T00:01:00.000000Z", storage_options={})
    assert second.previous("a.asif.json", "S") == Previous("ab", 10, None, ())
    assert fs.find(f"/manifest-{os.getpid()}/out/.manifest.jsonl.parts") == []  # merged into the manifest
    assert b'"a.asif.json"' in fs.cat_file(f"/manifest-{os.getpid()}/out/manifest.jsonl")
    second.close()
    first.close()


def test_memory_urls_take_every_source_form_and_refuse_climbing_keys(tmp_path):
    import fsspec

    fs = fsspec.filesystem("memory")
    root = f"/forms-{os.getpid()}"
    for path in CONTINUITY_FILES[:3]:
        fs.pipe_file(f"{root}/in/deep/{path.name}", path.read_bytes())
    fs.pipe_file(f"{root}/in/deep/../../climb.json", CONTINUITY_FILES[0].read_bytes())
    one = CONTINUITY_FILES[0].name
    report = migrate([f"memory://{root}/in/", f"memory://{root}/in/deep/{one}", f"memory://{root}/in/**/*.json"],
                     f"memory://{root}/out", to="asif", workers=0)
    statuses = [(r.output, r.status) for r in report.results]
    assert ("deep/" + one.replace(".json", ".asif.json"), "ok") in statuses
    assert (one.replace(".json", ".asif.json"), "ok") in statuses  # the object named by its URL
    assert sum(s == "refused" for _, s in statuses) >= 1
    assert not any("climb" in k for k in fs.find("/")
                   if not k.startswith(f"{root}/in"))  # nothing written outside OUTDIR


def test_a_remote_manifest_where_an_output_goes_is_refused_before_anything_is_written():
    import fsspec

    from asif_convert import UsageError

    fs = fsspec.filesystem("memory")
    root = f"/clash-{os.getpid()}"
    one = CONTINUITY_FILES[0]
    fs.pipe_file(f"{root}/in/{one.name}", one.read_bytes())
    output = one.name.replace(".json", ".asif.json")
    with pytest.raises(UsageError, match="is where the output of"):
        migrate(f"memory://{root}/in/", f"memory://{root}/out", manifest=f"memory://{root}/out/{output}", workers=0)
    assert fs.find(f"{root}/out") == []  # no lock, no manifest, no output
