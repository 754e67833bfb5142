"""Where a batch reads its inputs and writes OUTDIR: local paths, as always, or fsspec URLs.

Every place the batch touches storage goes through here: the local implementation is the batch's
own code (symlink confinement, temp file + rename, the flock), the remote one is
:mod:`asif_convert.batch._remote`, imported only when a URL is met, so that local work never
imports fsspec (an optional extra).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol
from urllib.parse import unquote

from asif_convert import _jsonio as jsonio
from asif_convert._limits import Limits
from asif_convert.batch._discover import Found, Refused, check_sources, classify, discover
from asif_convert.batch._discover import inside as _inside
from asif_convert.batch._lock import OutdirLock
from asif_convert.batch._manifest import Manifest
from asif_convert.batch._paths import Unsafe, safe_target
from asif_convert.batch._records import MANIFEST_NAME, UsageError


class Spec(Protocol):
    """What of a batch's settings (batch._worker.Spec) says where it reads and writes."""

    @property
    def limits(self) -> Limits: ...
    @property
    def roots(self) -> tuple[str, ...]: ...
    @property
    def outdir(self) -> str: ...
    @property
    def outdir_real(self) -> str: ...
    @property
    def storage_options(self) -> dict[str, Any]: ...

_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


def is_url(text: str) -> bool:
    """``s3://bucket/key``, ``memory://x``: anything with a scheme (``file://`` is made a path first)."""
    return _URL.match(text) is not None


def local_form(text: str | os.PathLike[str]) -> str:
    """A ``file://`` URL as the local path it names (so it gets every local guarantee); the rest as given."""
    text = os.fspath(text)
    match = _URL.match(text)
    if match and match.group(1).lower() == "file":
        rest = text[len(match.group(0)):]
        if rest.startswith("localhost/"):
            rest = rest[len("localhost"):]
        return unquote(rest) or os.sep
    return text


def remote() -> ModuleType:
    """The fsspec implementation. Imported here, when a URL is met, and nowhere else."""
    try:
        from asif_convert.batch import _remote
    except ImportError:
        raise UsageError("a URL needs fsspec, which is not installed: pip install 'asif-convert[s3]' "
                         "(or [gcs], [azure] for gs:// and az://)") from None
    return _remote


# -- sources ---------------------------------------------------------------------------------------

def checked_sources(sources: Iterable[str | os.PathLike[str]], storage_options: dict[str, Any]) -> list[str]:
    """The sources as strings, each one checked to exist (or to match something); see check_sources."""
    srcs = [local_form(s) for s in sources]
    local = [s for s in srcs if not is_url(s)]
    if local or not srcs:
        check_sources(local)
    for url in srcs:
        if is_url(url):
            remote().check_source(url, storage_options)
    return srcs


def source_root(src: str) -> str:
    """What a source's files must stay inside: its real local base, or its URL base."""
    return remote().base_of(src) if is_url(src) else os.path.realpath(classify(src).base)


def find_inputs(srcs: list[str], *, pattern: str, exclude: list[str],
                storage_options: dict[str, Any]) -> Iterator[Found | Refused]:
    """Every input of the sources, in their order (see discover)."""
    if not any(is_url(s) for s in srcs):
        yield from discover(srcs, pattern=pattern, exclude=exclude)
        return
    for src in srcs:  # mixed: each local source is confined to its own root
        if is_url(src):
            yield from remote().discover(src, pattern=pattern, exclude=exclude, storage_options=storage_options)
        else:
            yield from discover([src], pattern=pattern, exclude=[e for e in exclude if not is_url(e)])


def identity(path: str) -> str:
    """What makes two found paths the same input."""
    return path if is_url(path) else os.path.realpath(path)


def real_form(path: str) -> str:
    """What ``path`` names, in the form OUTDIR's real form takes: the real local path, or the
    canonical URL."""
    return remote().canonical(path) if is_url(path) else os.path.realpath(path)


def relative(path: str, root: str) -> str:
    """``path``, which lies inside ``root`` (both in their real form), relative to it, with ``/``."""
    if is_url(path):
        return path[len(root.rstrip("/")) + 1:]
    return Path(os.path.relpath(path, root)).as_posix()


def inside(path: str, roots: Iterable[str]) -> bool:
    """Whether ``path`` (a real local path or a URL) lies in one of ``roots``."""
    if is_url(path):
        return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots if is_url(r))
    return _inside(path, [r for r in roots if not is_url(r)])


def read_input(spec: Spec, path: str, confined: bool, listed: int | None = None) -> bytes:
    """One input's bytes, its size checked against the limits before it is read. ``listed``: its
    size when it was found; object storage trusts it rather than asking again (see
    ``_remote.read``), a local file is asked (``fstat`` costs nothing)."""
    if is_url(path):
        return remote().read(path, spec.limits, spec.storage_options, listed)
    if confined and not _inside(os.path.realpath(path), spec.roots):
        raise Unsafe("the input now resolves outside the source roots")
    # (refuses an oversized file from its size, unread, and whatever replaced the file found)
    data, _ = jsonio.read_input(path, spec.limits, regular=True)
    return data


# -- OUTDIR ----------------------------------------------------------------------------------------

def write_output(spec: Spec, rel: str, data: bytes) -> None:
    """Write OUTDIR/rel whole or not at all."""
    if is_url(spec.outdir):
        remote().write(spec.outdir, rel, data, spec.storage_options)
        return
    jsonio.write_output(safe_target(spec.outdir, spec.outdir_real, rel), data)


def output_size(spec: Spec, rel: str) -> int | None:
    """The size of a regular output at OUTDIR/rel, or None (a planted symlink is no output)."""
    if is_url(spec.outdir):
        return remote().size(spec.outdir, rel, spec.storage_options)
    try:
        st = os.lstat(os.path.join(spec.outdir, *rel.split("/")))
    except OSError:
        return None
    return st.st_size if stat.S_ISREG(st.st_mode) else None


def lock(outdir: str, storage_options: dict[str, Any], *, break_lock: bool = False) -> AbstractContextManager[Any]:
    """One run at a time per OUTDIR: the flock locally, a lock object on a remote store."""
    if is_url(outdir):
        return remote().OutdirLock(outdir, storage_options, break_lock=break_lock)
    return OutdirLock(outdir)


def open_manifest(path: str, *, fresh: bool, run: str, storage_options: dict[str, Any]) -> Manifest:
    """The manifest at a local path, or a URL's (kept in a local working copy, see _remote)."""
    if is_url(path):
        return remote().RemoteManifest(path, fresh=fresh, run=run, storage_options=storage_options)
    return Manifest(path, fresh=fresh)


def join(outdir: str, name: str) -> str:
    """OUTDIR/name, for a local path or a URL."""
    return outdir.rstrip("/") + "/" + name if is_url(outdir) else os.path.join(outdir, name)


def manifest_at(manifest: str | os.PathLike[str] | bool, outdir: str) -> Path | str | None:
    """Where the manifest is: a local path, or a URL (kept a string: a Path would fold its ``//``)."""
    if manifest is False:
        return None
    where = join(outdir, MANIFEST_NAME) if manifest is True else local_form(manifest)
    return where if is_url(where) else Path(where)
