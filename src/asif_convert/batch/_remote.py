"""Sources and OUTDIR on any fsspec file system (``s3://``, ``gs://``, ``az://``, ``memory://``).

The remote half of :mod:`asif_convert.batch._storage`, imported only when a URL is met. The local
guarantees, as object stores can give them:

- an output is one ``pipe_file`` of its finished bytes: a single PUT (S3 publishes a multipart
  upload only when it completes), so no partial object ever has a final name;
- keys are data: a key whose part is empty, ``.`` or ``..`` is refused, and outputs are written
  only at OUTDIR plus a checked relative path;
- an input's size is read from its listing before any byte is, and then at most that many bytes;
- one run per OUTDIR: a lock object made with a conditional create where the store has one
  (S3's ``If-None-Match: *``), renewed by a heartbeat, stale when the heartbeat stops;
- the manifest is kept in a local working copy, its new lines sent as small part objects every
  few seconds and the whole file put back at the end (see :class:`RemoteManifest`).
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import random
import secrets
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from types import TracebackType
from typing import Any, NamedTuple

import fsspec
from fsspec.asyn import sync

from asif_convert._errors import InvalidInput, OutputError, Problem, display_name
from asif_convert._limits import Limits, check_size
from asif_convert.batch import _credentials as credentials
from asif_convert.batch._discover import Found, Refused
from asif_convert.batch._manifest import Manifest
from asif_convert.batch._paths import Unsafe
from asif_convert.batch._records import FileResult, UsageError, matches

# the extra that brings each cloud file system (pyproject.toml)
EXTRAS = {"s3": "s3", "s3a": "s3", "gs": "gcs", "gcs": "gcs", "az": "azure", "abfs": "azure", "abfss": "azure",
          "adl": "azure"}
# S3 calls give up rather than hang on an endpoint that does not answer (the user's own config wins)
_S3_CONFIG = {"connect_timeout": 10, "read_timeout": 120, "retries": {"max_attempts": 3}}
LOCK_NAME = ".asif-convert.lock"
HEARTBEAT_SECONDS = 30.0  # how often a run renews its lock object
STALE_SECONDS = 300.0  # a lock not renewed for this long belongs to a run that is gone
FLUSH_SECONDS = 5.0  # how often new manifest lines are sent
WRITE_ATTEMPTS = 5  # uploads of an output, when the failures are transient (beyond the SDK's own retries)
MANIFEST_PART_BYTES = 5 * 2**20  # a large manifest goes up in parts this size (S3's smallest)
MANIFEST_READ_BYTES = 2**20  # a manifest is read back a range this size at a time
BACKOFF_SECONDS = 0.25  # the pause after the first failed upload; it doubles after each


def filesystem(url: str, storage_options: dict[str, Any]) -> tuple[Any, str]:
    """The file system of a URL (fsspec caches instances) and the path on it."""
    protocol = url.split("://", 1)[0].lower()
    try:
        cls = fsspec.get_filesystem_class(protocol)
    except ValueError:
        raise UsageError(f"{url}: unknown URL scheme {protocol}:// (no fsspec file system has that name)") from None
    except ImportError:
        extra = EXTRAS.get(protocol)
        how = f"pip install 'asif-convert[{extra}]'" if extra else "install the fsspec package that provides it"
        raise UsageError(f"{url}: the {protocol}:// file system is not installed; {how}") from None
    options = credentials.merge(storage_options, credentials.held())  # this process's own, never a task's
    if protocol in ("s3", "s3a") and "config_kwargs" not in options:
        # a copy: botocore rewrites the retries it is given, which would change the options'
        # token, so that the next call made a second file system (and S3 client) for the same store
        options["config_kwargs"] = copy.deepcopy(_S3_CONFIG)
    try:
        fs = cls(**options)
    except Exception as exc:  # the file system refuses its options
        raise UsageError(f"{url}: the {protocol}:// file system refuses the storage options: {_reason(exc)}") from None
    return fs, cls._strip_protocol(url)


def canonical(url: str) -> str:
    """The URL as the batch names it: its scheme, then the file system's own form of the path."""
    protocol = url.split("://", 1)[0].lower()
    try:
        path = fsspec.get_filesystem_class(protocol)._strip_protocol(url)
    except (ValueError, ImportError):
        return url
    return f"{protocol}://{path}"


def _reason(exc: BaseException) -> str:
    if isinstance(exc, FileNotFoundError):
        return "no such file, folder or bucket"
    if isinstance(exc, PermissionError):
        return f"access denied ({_first_line(exc)})" if _first_line(exc) else "access denied"
    if isinstance(exc, TimeoutError | socket.timeout):
        return "the storage did not answer in time"
    return f"{type(exc).__name__}: {_first_line(exc)}"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else ""


@contextmanager
def _refusing(url: str, *, usage: bool) -> Iterator[None]:
    """What the storage says (no bucket, access denied, no answer) as one clear line about ``url``:
    a usage error for OUTDIR and the manifest, an invalid input for a source."""
    try:
        yield
    except (UsageError, InvalidInput, Unsafe, OutputError):
        raise
    except Exception as exc:
        if usage:
            raise UsageError(f"cannot use {url}: {_reason(exc)}") from None
        raise InvalidInput([Problem(rule="io", path="", message=f"cannot read: {_reason(exc)}")],
                           display_name(url)) from None


def _has_magic(part: str) -> bool:
    return any(c in part for c in "*?[")


def _literal_prefix(path: str) -> str:
    """A pattern's parts before the first one with a wildcard."""
    literal = []
    for part in path.split("/"):
        if _has_magic(part):
            break
        literal.append(part)
    return "/".join(literal)


def base_of(url: str) -> str:
    """A source's root: the URL itself, or a pattern's literal prefix."""
    url = canonical(url)
    protocol, path = url.split("://", 1)
    return f"{protocol}://{_literal_prefix(path)}".rstrip("/") if _has_magic(path) else url


def check_source(url: str, storage_options: dict[str, Any]) -> None:
    """Raises InvalidInput when nothing is at ``url`` (or a pattern matches nothing)."""
    fs, path = filesystem(url, storage_options)
    with _refusing(url, usage=False):
        found = fs.glob(path) if _has_magic(path) else fs.exists(path)
    if not found:
        message = "no such file or folder" + (", and no object matches it as a pattern" if _has_magic(path) else "")
        raise InvalidInput([Problem(rule="io", path="", message=message)], display_name(url))


def discover(url: str, *, pattern: str, exclude: list[str],
             storage_options: dict[str, Any]) -> Iterator[Found | Refused]:
    """The objects of one source, in sorted order, as discover() finds local files: an object
    named by its URL is taken as given; a folder (prefix) is listed for names matching
    ``pattern``, hidden names skipped; a pattern's matches are relative to its literal prefix."""
    fs, path = filesystem(url, storage_options)
    protocol = url.split("://", 1)[0].lower()
    excluded = [canonical(e) for e in exclude if "://" in e]
    with _refusing(url, usage=False):
        if _has_magic(path):
            yield from _glob(fs, protocol, path, pattern, excluded)
            return
        info = fs.info(path)
        if info.get("type") == "directory":
            yield from _walk(fs, protocol, path, (), pattern, excluded)
        else:
            yield Found(f"{protocol}://{path}", (path.rsplit("/", 1)[-1],), int(info.get("size") or 0), False)


def _walk(fs: Any, protocol: str, top: str, rel0: tuple[str, ...], pattern: str,
          excluded: list[str]) -> Iterator[Found | Refused]:
    top = top.rstrip("/")
    for key, size in _listing(fs, top):
        url = f"{protocol}://{key}"
        if _excluded(url, excluded) or not key.startswith(top + "/"):
            continue
        parts = key[len(top) + 1:].split("/")
        rel = (*rel0, *parts)
        if any(p in ("", ".", "..") for p in parts):  # a key is data: it may not climb out of its prefix
            yield Refused(url, None, f"unsafe object key {key!r}: a part of it is empty, '.' or '..'")
            continue
        if any(p.startswith(".") for p in parts) or not matches(parts[-1], pattern):
            continue
        yield Found(url, rel, size, False)


def _listing(fs: Any, top: str) -> Iterator[tuple[str, int]]:
    """Every object under the prefix ``top``, sorted, as (key, size). On S3 a page at a time
    (1,000 keys), fetched as the batch asks for more, so the first files convert while the
    listing goes on and memory holds one page whatever the prefix holds; another file system's
    listing comes whole from ``find``."""
    if not _is_s3(fs):
        for key, info in sorted(fs.find(top, detail=True).items()):
            yield key, int(info.get("size") or 0)
        return
    bucket, prefix, _ = fs.split_path(top)
    ask: dict[str, Any] = {"Bucket": bucket, "Prefix": f"{prefix}/" if prefix else "", **getattr(fs, "req_kw", {})}
    while True:  # S3 lists keys in their UTF-8 order: Python's order of the names
        page = sync(fs.loop, fs._call_s3, "list_objects_v2", **ask)
        for obj in page.get("Contents", ()):
            if not obj["Key"].endswith("/"):  # a folder's marker object is no file
                yield f"{bucket}/{obj['Key']}", int(obj.get("Size") or 0)
        if not page.get("IsTruncated"):
            return
        ask["ContinuationToken"] = page["NextContinuationToken"]


def _is_s3(fs: Any) -> bool:
    protocols = fs.protocol if isinstance(fs.protocol, tuple | list) else (fs.protocol,)
    return any(p in ("s3", "s3a") for p in protocols) and hasattr(fs, "_call_s3")


def _glob(fs: Any, protocol: str, path: str, pattern: str, excluded: list[str]) -> Iterator[Found | Refused]:
    prefix = _literal_prefix(path)
    walk_dirs = "**" not in path  # with "**" the pattern enumerates whole trees itself
    for key, info in sorted(fs.glob(path, detail=True).items()):
        url = f"{protocol}://{key}"
        if _excluded(url, excluded):
            continue
        below = key[len(prefix):].lstrip("/").split("/") if key.startswith(prefix) else None
        if below is None or any(p in ("", ".", "..") for p in below):
            yield Refused(url, None, f"unsafe object key {key!r}: it leaves the pattern's prefix, or a part of "
                                     "it is empty, '.' or '..'")
        elif info.get("type") == "directory":
            if walk_dirs:
                yield from _walk(fs, protocol, key, tuple(below), pattern, excluded)
        else:
            yield Found(url, tuple(below), int(info.get("size") or 0), False)


def _excluded(url: str, excluded: list[str]) -> bool:
    return any(url == e or url.startswith(e.rstrip("/") + "/") for e in excluded)


def read(url: str, limits: Limits, storage_options: dict[str, Any], listed: int | None = None) -> bytes:
    """An object's bytes: its size checked against the limit before any byte is read, and no
    more than that size read (an object that grew since is refused by what was read).

    ``listed``: its size as the listing gave it. Then no request asks for it again: one ranged
    GET reads a byte more than that, and only an object that has grown since it was listed (that
    byte came) is asked for its size and read again, as without a listed size. So a file costs
    a GET and a PUT on object storage, not a HEAD besides."""
    fs, path = filesystem(url, storage_options)
    name = display_name(url)
    with _refusing(url, usage=False):
        if listed:  # (an object listed empty is asked for its size: S3 refuses a range of an empty object)
            check_size(listed, limits, name)
            data = bytes(fs.cat_file(path, start=0, end=listed + 1))
            if len(data) <= listed:
                return data
        info = fs.info(path)
        if info.get("type") != "file":
            raise InvalidInput([Problem(rule="io", path="", message="is no longer an object")], name)
        size = int(info.get("size") or 0)
        check_size(size, limits, name)
        data = bytes(fs.cat_file(path, start=0, end=size + 1)) if size else bytes(fs.cat_file(path))
        check_size(len(data), limits, name)
        return data


def _key(outdir: str, rel: str) -> str:
    parts = rel.split("/")
    if any(p in ("", ".", "..") or "\\" in p or "\x00" in p for p in parts):
        raise Unsafe(f"unsafe output path {rel!r}")
    return outdir.rstrip("/") + "/" + rel


def write(outdir: str, rel: str, data: bytes, storage_options: dict[str, Any]) -> None:
    """Put OUTDIR/rel as one upload of the finished bytes. An upload that fails for a reason that
    passes (the store busy or failing, a connection closed or timed out) is made again after a
    pause that doubles, WRITE_ATTEMPTS times in all; any other failure is final at once. A failed
    upload leaves no object: the store publishes one only when it has all of its bytes."""
    fs, base = filesystem(outdir, storage_options)
    url = _key(canonical(outdir), rel)
    key = _key(base, rel)
    for attempt in range(1, WRITE_ATTEMPTS + 1):
        try:
            fs.pipe_file(key, data)
            return
        except Exception as exc:
            if attempt == WRITE_ATTEMPTS or not _transient(exc):
                tried = f" ({attempt} attempts)" if attempt > 1 else ""
                raise OutputError(f"cannot write {display_name(url)}: {_reason(exc)}{tried} (nothing was "
                                  "written)") from None
        time.sleep(BACKOFF_SECONDS * 2 ** (attempt - 1) * (0.5 + random.random()))  # jittered: workers spread out


def _transient(exc: BaseException) -> bool:
    """Whether a failed request may succeed if made again: not when the store refuses it (no
    bucket, access denied, a bad request: an HTTP status below 500 but 408 and 429), nor for a
    file system's own refusal; yes for a server error, throttling, or a connection lost."""
    if isinstance(exc, FileNotFoundError | PermissionError | FileExistsError | IsADirectoryError
                  | NotADirectoryError | ValueError | TypeError | NotImplementedError):
        return False
    seen: BaseException | None = exc
    while seen is not None:
        response = getattr(seen, "response", None)
        status = response.get("ResponseMetadata", {}).get("HTTPStatusCode") if isinstance(response, dict) else None
        if isinstance(status, int):
            return status >= 500 or status in (408, 429)
        seen = seen.__cause__ or seen.__context__
    return True


def size(outdir: str, rel: str, storage_options: dict[str, Any]) -> int | None:
    """The size of the object OUTDIR/rel, or None when there is none."""
    fs, base = filesystem(outdir, storage_options)
    try:
        info = fs.info(_key(base, rel))
    except Exception:  # missing, or unreadable: the file is converted again
        return None
    return int(info["size"]) if info.get("type") == "file" and info.get("size") is not None else None


# -- one run per OUTDIR ----------------------------------------------------------------------------

def _machine() -> str:
    """This machine, as a digest (no host name is written anywhere)."""
    try:
        with open("/proc/sys/kernel/random/boot_id", "rb") as fh:
            seed = fh.read()
    except OSError:
        seed = socket.gethostname().encode()
    return hashlib.sha256(b"asif-convert lock\0" + seed).hexdigest()[:16]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


class _Held(NamedTuple):
    """A lock object as read: what it says, its ETag, and when the store last wrote it (the
    store's clock, epoch seconds; None where the store does not say)."""

    body: dict[str, Any]
    etag: str | None
    modified: float | None


def _modified(info: dict[str, Any]) -> float | None:
    """When the store last wrote an object, by the store's clock (s3fs, adlfs, gcsfs name it so)."""
    for name in ("LastModified", "last_modified", "updated"):
        value = info.get(name)
        if isinstance(value, datetime):
            return value.timestamp()
        if isinstance(value, str):
            try:
                return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
            except ValueError:
                continue
    return None


class OutdirLock:
    """The lock object ``OUTDIR/.asif-convert.lock``: ``{"pid", "machine", "token", "heartbeat"}``.

    Made with a conditional create (S3: ``If-None-Match: *``; a file system without one checks
    first, which leaves a short race between two runs starting at the same moment). The holder
    rewrites it every HEARTBEAT_SECONDS. A lock is stale, and taken over, when it has not been
    rewritten for ``stale_seconds``, or when it was made on this machine by a process that is
    gone; ``break_lock`` takes it whatever it says. The age is the store's: the object's
    modification time against that of a probe object written now, so a client whose clock is
    off neither takes a live lock nor waits on a dead one (a store that keeps no modification
    time falls back to the heartbeat inside, by this machine's clock). On S3 a stale lock is
    replaced only if it is still the object judged (``If-Match`` on its ETag), and so is a
    heartbeat: of two runs taking over at once, one wins.
    """

    def __init__(self, outdir: str, storage_options: dict[str, Any], *, break_lock: bool = False,
                 stale_seconds: float = STALE_SECONDS) -> None:
        self.fs, base = filesystem(outdir, storage_options)
        self.key = base.rstrip("/") + "/" + LOCK_NAME
        self.url = canonical(outdir).rstrip("/") + "/" + LOCK_NAME
        self.outdir = canonical(outdir)
        self.token = secrets.token_hex(8)
        self.break_lock = break_lock
        self.stale_seconds = stale_seconds
        self.conditional = _is_s3(self.fs)  # If-Match on a PUT: S3's
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _body(self) -> bytes:
        return json.dumps({"pid": os.getpid(), "machine": _machine(), "token": self.token,
                           "heartbeat": time.time()}).encode()

    def _create(self) -> None:
        try:
            self.fs.pipe_file(self.key, self._body(), mode="create")
        except TypeError:  # a file system without exclusive creation: check, then put (a race)
            if self.fs.exists(self.key):
                raise FileExistsError(self.key) from None
            self.fs.pipe_file(self.key, self._body())

    def _read(self) -> _Held | None:
        self.fs.invalidate_cache(self.key)
        try:
            info = self.fs.info(self.key)
            raw = self.fs.cat_file(self.key)
        except FileNotFoundError:
            return None
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        return _Held(body if isinstance(body, dict) else {}, info.get("ETag"), _modified(info))

    def _replace(self, held: _Held) -> None:
        """Write our lock over ``held``, on S3 only if it is still that object (else OSError)."""
        if self.conditional and held.etag:
            self.fs.pipe_file(self.key, self._body(), IfMatch=held.etag)
        else:
            self.fs.pipe_file(self.key, self._body())

    def _age(self, held: _Held) -> float | None:
        """How long ago the lock was last written: by the store's clock where it keeps one."""
        if held.modified is not None:
            probe = f"{self.key}.clock-{self.token}"
            try:
                self.fs.pipe_file(probe, b"")
                now = _modified(self.fs.info(probe))
                self.fs.rm_file(probe)
            except Exception:  # no probe: this machine's clock
                now = None
            if now is not None:
                return now - held.modified
        beat = held.body.get("heartbeat")
        return time.time() - beat if isinstance(beat, int | float) else None

    def _stale(self, held: _Held, age: float | None) -> bool:
        if not isinstance(held.body.get("heartbeat"), int | float):  # not asif-convert's: never taken silently
            return False
        if age is not None and age > self.stale_seconds:
            return True
        pid = held.body.get("pid")
        return (held.body.get("machine") == _machine() and isinstance(pid, int) and pid != os.getpid()
                and not _alive(pid))

    def _take_over(self, held: _Held) -> bool:
        """Replace a stale lock with ours; False when another run acted on it first."""
        if self.conditional and held.etag:
            try:
                self._replace(held)
                return True
            except OSError:  # it changed since it was judged (PreconditionFailed), or is gone
                return False
        _remove(self.fs, self.key)
        try:
            self._create()
        except FileExistsError:
            return False
        return True

    def __enter__(self) -> OutdirLock:
        with _refusing(self.outdir, usage=True):
            for _ in range(5):
                try:
                    self._create()
                    break
                except FileExistsError:
                    held = self._read()
                if held is None:  # released meanwhile
                    continue
                age = self._age(held)
                if self.break_lock or self._stale(held, age):
                    self.break_lock = False  # break it once, not a lock a new run takes meanwhile
                    if self._take_over(held):
                        break
                    continue
                raise UsageError(_busy(self.outdir, held, age, self.stale_seconds))
            else:
                raise UsageError(f"{self.outdir} is in use by another asif-convert batch (its lock changes hands "
                                 "as this run starts); wait for it to finish or choose another OUTDIR")
        self._thread = threading.Thread(target=self._beat, name="asif-convert-lock-heartbeat", daemon=True)
        self._thread.start()
        return self

    def _beat(self) -> None:
        while not self._stop.wait(HEARTBEAT_SECONDS):
            try:
                held = self._read()
                if held is None or held.body.get("token") != self.token:
                    return  # broken by another run: nothing of ours to renew
                self._replace(held)
            except Exception:  # a missed beat (or taken over meanwhile: the next read says so)
                continue

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        try:
            held = self._read()
            if held and held.body.get("token") == self.token:
                self.fs.rm_file(self.key)
        except Exception:  # the store is unreachable now: the lock goes stale by itself
            pass


def _busy(outdir: str, held: _Held, age: float | None, stale_seconds: float) -> str:
    if "heartbeat" not in held.body:
        return (f"{outdir} has a lock object {LOCK_NAME} that asif-convert did not write; remove it, or rerun "
                "with --break-lock")
    renewed = f", its lock renewed {max(age, 0):.0f} s ago" if age is not None else ""
    return (f"{outdir} is in use by another asif-convert batch (pid {held.body.get('pid')}{renewed}); wait for it "
            f"to finish, choose another OUTDIR, or if that run is gone, rerun with --break-lock (a lock not renewed "
            f"for {stale_seconds:.0f} s is taken over)")


# -- the manifest ----------------------------------------------------------------------------------

class RemoteManifest(Manifest):
    """A manifest at a URL. Objects cannot be appended to, so the manifest is a local working
    copy (a :class:`Manifest`): at the start it is the manifest object followed by the part
    objects an earlier run left (``.NAME.parts/``, sorted; the last line for an output wins);
    new lines are sent every FLUSH_SECONDS as a new part object; at the end the whole file is
    put back as the manifest object and this run's parts are removed. A part is removed only
    once a manifest that holds its lines has been put, so a run killed at any moment loses at
    most its last few seconds of lines: those files are converted again, to the same bytes."""

    def __init__(self, url: str, *, fresh: bool, run: str, storage_options: dict[str, Any]) -> None:
        self.fs, self.key = filesystem(url, storage_options)
        self.url = canonical(url)
        parent, _, name = self.key.rpartition("/")
        self.parts = f"{parent}/.{name}.parts"
        self.stamp = run.replace(":", "")
        self.work = tempfile.mkdtemp(prefix="asif-convert-manifest-")
        local = os.path.join(self.work, name or "manifest.jsonl")
        try:
            with _refusing(self.url, usage=True):
                earlier = sorted(self.fs.find(self.parts)) if self.fs.exists(self.parts) else []
                if not fresh:
                    with open(local, "wb") as out:
                        for key in ([self.key] if self.fs.exists(self.key) else []) + earlier:
                            _copy_lines(self.fs, key, out)
                super().__init__(local, fresh=fresh)
                if earlier or fresh:  # their lines are now in one manifest: put it before removing them
                    self._put()
                    for key in earlier:
                        _remove(self.fs, key)
        except BaseException:
            shutil.rmtree(self.work, ignore_errors=True)
            raise
        self._sent = os.path.getsize(local)
        self._seq = 0
        self._flushed = time.monotonic()
        self._mine: list[str] = []

    def _put(self) -> None:
        """The working copy put whole, from the file: on S3 a multipart upload of MANIFEST_PART_BYTES
        parts above twice that (published only when complete), one part read at a time, so the
        client holds one part of a large manifest, never the manifest. (s3fs reads as many parts
        as its ``max_concurrency``, 10 by default, before sending them: 50 MiB held at once.)"""
        self.fs.put_file(str(self.path), self.key,
                         **({"chunksize": MANIFEST_PART_BYTES, "max_concurrency": 1} if _is_s3(self.fs) else {}))

    def append(self, rec: FileResult) -> None:
        super().append(rec)
        if time.monotonic() - self._flushed >= FLUSH_SECONDS:
            self.flush()

    def flush(self) -> None:
        """Send the lines written since the last flush as one part object."""
        self._flushed = time.monotonic()
        with open(self.path, "rb") as fh:
            fh.seek(self._sent)
            data = fh.read()
        if not data:
            return
        key = f"{self.parts}/{self.stamp}-{self._seq:06d}.jsonl"
        try:
            self.fs.pipe_file(key, data)
        except Exception:  # unsent lines go with the next part, or the final manifest
            return
        self._seq += 1
        self._sent += len(data)
        self._mine.append(key)

    def close(self) -> None:
        if self._fd < 0:
            return
        super().close()
        try:
            with _refusing(self.url, usage=True):
                self._put()
                for key in self._mine:
                    _remove(self.fs, key)
        finally:
            shutil.rmtree(self.work, ignore_errors=True)


def _copy_lines(fs: Any, key: str, out: Any) -> None:
    """Append the object ``key`` to ``out`` a MANIFEST_READ_BYTES range at a time, ending its last
    line if it is not ended: a large manifest is never held whole (a whole ``cat_file`` holds it
    twice, its ranges and their join)."""
    size = int(fs.info(key).get("size") or 0)
    last = b"\n"
    for start in range(0, size, MANIFEST_READ_BYTES):
        data = fs.cat_file(key, start=start, end=min(start + MANIFEST_READ_BYTES, size))
        if data:
            out.write(data)
            last = data[-1:]
        del data  # (before the next range is read)
    if last != b"\n":
        out.write(b"\n")


def _remove(fs: Any, key: str) -> None:
    """Remove a part object; one already gone (another run merged it) is what was wanted."""
    try:
        fs.rm_file(key)
    except FileNotFoundError:
        pass
