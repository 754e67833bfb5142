"""Artifact files: read inside a folder the user names, written back inside a folder the user names.

Paths come from documents, which are untrusted: a path is used only when it is a portable
relative path (no absolute path, no ``..``, no backslash, no device name), and every step is
opened relative to the folder before it without following links (see
:func:`asif_convert._validation.files.open_contained`). Nothing else is ever opened.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

import msgspec

from asif_convert import ir
from asif_convert._errors import OutputError
from asif_convert._limits import MiB
from asif_convert._validation.files import SWAPPED, open_contained, unreadable
from asif_convert._validation.semantic.resources import path_problem

MAX_ARTIFACT_BYTES = 64 * MiB
MAX_ARTIFACTS_TOTAL = 256 * MiB

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


class FileSource(Protocol):
    """Where a reader gets files it is allowed to embed: bytes, the reason it may not have
    them, or None when this source knows nothing of the path."""

    def read(self, path: str) -> bytes | Refusal | None: ...


# Records of this module are msgspec Structs, not dataclasses: a dataclass takes about half a
# millisecond to create at import (its methods are generated and compiled), a Struct a hundredth.
class Refusal(msgspec.Struct):
    """Why a file is not embedded: ``missing`` (no such file), ``refused`` (never read) or
    ``mismatch`` (not what the document declares)."""

    kind: str
    reason: str


class ArtifactFiles(msgspec.Struct):
    """The files under ``root`` that a conversion asks for, each read once, within limits.

    ``folder``, when given, is a folder inside ``root`` that holds the files (a batch's
    per-export artifacts folder): it is reached one step at a time without following a link,
    like the files themselves. ``log`` records what every path asked for gave, in the order
    asked (see :func:`reads_digest`)."""

    root: Path
    max_bytes: int = MAX_ARTIFACT_BYTES  # per file
    max_total: int = MAX_ARTIFACTS_TOTAL  # for the whole conversion
    folder: str = ""  # relative to root; "" for root itself
    served: dict[str, bytes] = msgspec.field(default_factory=dict)  # what was read, by relative path
    log: dict[str, str] = msgspec.field(default_factory=dict)  # path -> "sha256:<hex>" or "<kind>: <reason>"
    _folded: dict[str, str] = msgspec.field(default_factory=dict)
    _total: int = 0
    _folder_refusal: Refusal | None = None
    _folder_checked: bool = False

    def read(self, path: str) -> bytes | Refusal:
        got = self._read(path)
        if path not in self.log:
            self.log[path] = (f"sha256:{hashlib.sha256(got).hexdigest()}" if isinstance(got, bytes)
                              else f"{got.kind}: {got.reason}")
        return got

    def _read(self, path: str) -> bytes | Refusal:
        if path in self.served:
            return self.served[path]
        why = path_problem(path) if path else "is empty"
        if why is not None:
            return Refusal("refused", f"the path {why}")
        other = self._folded.get(path.casefold())
        if other is not None:
            return Refusal("refused", f"the path differs only in case from {other!r}, read before")
        refusal = self._check_folder()
        if refusal is not None:
            return refusal
        fd, why, missing = open_contained(self.root, f"{self.folder}/{path}" if self.folder else path)
        if fd is None:
            return Refusal("missing" if missing else "refused", f"the path {why}")
        try:
            size = os.fstat(fd).st_size
            if size > self.max_bytes:
                return Refusal("refused", f"the file is {size:,} bytes, more than the limit of {self.max_bytes:,} "
                                          "per artifact")
            if self._total + size > self.max_total:
                return Refusal("refused", f"reading it would exceed the limit of {self.max_total:,} bytes for all "
                                          "artifacts")
            content = _read_all(fd, self.max_bytes + 1)
        except OSError as exc:  # opened, yet not readable (an I/O error)
            return Refusal("refused", f"the file cannot be read ({exc.strerror or exc})")
        finally:
            os.close(fd)
        if len(content) > self.max_bytes:  # it grew after the check
            return Refusal("refused", f"the file is more than the limit of {self.max_bytes:,} bytes per artifact")
        self._total += len(content)
        self.served[path] = content
        self._folded[path.casefold()] = path
        return content

    def _check_folder(self) -> Refusal | None:
        """Why the files' folder cannot be used (checked once; every file's own open checks its
        steps again, so a link swapped in later is still never followed)."""
        if self.folder and not self._folder_checked:
            self._folder_checked = True
            self._folder_refusal = folder_refusal(self.root, self.folder)
        return self._folder_refusal


def folder_refusal(root: Path, folder: str) -> Refusal | None:
    """Why ``root/folder`` is not a folder reached without links (None when it is one)."""
    parts = folder.split("/")
    if any(p in ("", ".", "..") or "\\" in p or "\0" in p for p in parts):
        return Refusal("refused", f"the artifacts folder {folder!r} is not a plain relative path")
    try:
        fds = [os.open(root, os.O_RDONLY | _DIRECTORY)]
    except OSError as exc:
        return Refusal("missing" if exc.errno == errno.ENOENT else "refused",
                       f"the folder {str(root)!r} cannot be opened ({exc.strerror})")
    try:
        for i, part in enumerate(parts):
            shown = "/".join(parts[: i + 1])
            try:
                st = os.lstat(part, dir_fd=fds[-1])
            except OSError as exc:
                if exc.errno != errno.ENOENT:
                    return Refusal("refused", f"the artifacts folder {folder!r} {unreadable(shown, exc)}")
                return Refusal("missing", f"the artifacts folder {folder!r} is missing ({shown} does not exist)")
            if stat.S_ISLNK(st.st_mode):
                return Refusal("refused", f"the artifacts folder {folder!r} goes through a symbolic link ({shown}), "
                                          "which is not followed")
            if not stat.S_ISDIR(st.st_mode):
                return Refusal("refused", f"the artifacts folder {folder!r} is not a folder ({shown})")
            try:
                fds.append(os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW, dir_fd=fds[-1]))
            except OSError as exc:
                if exc.errno not in SWAPPED:
                    return Refusal("refused", f"the artifacts folder {folder!r} {unreadable(shown, exc)}")
                return Refusal("refused", f"the artifacts folder {folder!r} changed while it was checked ({shown})")
        return None
    finally:
        for fd in fds:
            os.close(fd)


def reads_digest(log: dict[str, str]) -> str:
    """A digest over what each path asked of an artifacts folder gave (its content's digest, or
    why it was missing or refused), in the order asked: equal digests, equal files."""
    return hashlib.sha256(msgspec.json.encode(list(log.items()))).hexdigest()


def replay_digest(files: ArtifactFiles, paths: Iterable[str]) -> str:
    """:func:`reads_digest` of asking ``files`` (a fresh one) for ``paths`` again, in order: what a
    resumed batch compares with the digest of the conversion that wrote an output."""
    for path in paths:
        files.read(path)
    return reads_digest(files.log)


def _read_all(fd: int, limit: int) -> bytes:
    chunks, size = [], 0
    while size < limit and (chunk := os.read(fd, min(1 << 20, limit - size))):
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def write_files(base: Path, files: dict[str, bytes], *, force: bool = False, create: bool = True) -> list[Path]:
    """Write ``files`` (relative path -> bytes) under ``base``, creating folders as needed.

    Every path is checked before anything is written: one that is not a portable relative
    path, or that names an existing file with other bytes (without ``force``), refuses the whole
    set (``OutputError``). ``base`` is created when missing, if ``create``. Each file is written
    to a temp file in its folder, then linked (or, with ``force``, renamed) into place; no step
    follows a link. Returns the files it created (not those it replaced or found in place), then
    the folders it made, innermost first, so that a caller whose next step fails can take them
    back (``remove_files``); when a write fails, what was written before it is removed here."""
    bad = [f"{p!r} {why}" for p in sorted(files) if (why := path_problem(p) if p else "is empty")]
    if bad:
        raise OutputError(f"cannot write the artifact files under {base}: {'; '.join(bad[:5])} (nothing was written)")
    if not force:
        same = {p for p in files if _holds(base, p) == files[p]}  # already there, byte for byte
        files = {p: content for p, content in files.items() if p not in same}
        present = [p for p in sorted(files) if _holds(base, p) is not None]
        if present:
            raise OutputError(f"cannot write the artifact files under {base}: {', '.join(map(repr, present[:5]))} "
                              "already exist (use --force to replace them; nothing was written)")
    if not create and not base.is_dir():
        raise OutputError(f"cannot write the artifact files: {base} is not a folder (nothing was written)")
    made = _missing_folders(base)  # the folders this run makes, outermost first: taken back with its files
    try:
        os.makedirs(base, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot create {base}: {exc.strerror} (nothing was written)") from None
    new = {p for p in files if not force or _holds(base, p) is None}  # not there before this run
    created: list[Path] = []
    for path, content in sorted(files.items()):
        try:
            made += _write_one(base, path, content, force)
        except OSError as exc:
            remove_files([*created, *reversed(made)])
            raise OutputError(f"cannot write {base / path}: {exc.strerror or exc} (nothing was written)") from None
        if path in new:
            created.append(base / path)
    return [*created, *reversed(made)]


def _missing_folders(path: Path) -> list[Path]:
    missing = []
    while not os.path.lexists(path) and path != path.parent:
        missing.append(path)
        path = path.parent
    return missing[::-1]


def remove_files(paths: Iterable[Path]) -> None:
    """Take back files and folders written by this run (a later step failed), in the order given
    (a folder after what it holds); one that is already gone, not empty, or cannot be removed, is
    left as it is."""
    for path in paths:
        try:
            if path.is_dir() and not path.is_symlink():
                path.rmdir()
            else:
                path.unlink()
        except OSError:
            pass


def _holds(base: Path, path: str) -> bytes | None:
    """What ``base/path`` holds (None: nothing); a link, a folder or a device there, or on the
    way, holds b"" so that it counts as present and is never written through."""
    if not base.is_dir():
        return None
    fd, _, missing = open_contained(base, path)
    if fd is None:
        return None if missing else b""
    try:
        return _read_all(fd, MAX_ARTIFACTS_TOTAL + 1)
    finally:
        os.close(fd)


def _write_one(base: Path, path: str, content: bytes, force: bool) -> list[Path]:
    """Write one file; returns the folders it made on the way, outermost first."""
    *folders, name = path.split("/")
    made: list[Path] = []
    fds = [os.open(base, os.O_RDONLY | _DIRECTORY)]
    try:
        for k, part in enumerate(folders):
            try:
                os.mkdir(part, 0o777, dir_fd=fds[-1])
                made.append(base.joinpath(*folders[:k + 1]))
            except FileExistsError:
                pass
            st = os.lstat(part, dir_fd=fds[-1])
            if not stat.S_ISDIR(st.st_mode):
                raise OSError(errno.ENOTDIR, f"{part} is not a folder (links are not followed)")
            fds.append(os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW, dir_fd=fds[-1]))
        tmp = f".asif-convert.{os.urandom(8).hex()}.tmp"  # (not the name: one of 255 bytes takes no more)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o666, dir_fd=fds[-1])
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(content)
            if force:
                os.replace(tmp, name, src_dir_fd=fds[-1], dst_dir_fd=fds[-1])
            else:  # a link fails if the name was taken since the check: never over a file
                os.link(tmp, name, src_dir_fd=fds[-1], dst_dir_fd=fds[-1], follow_symlinks=False)
                os.unlink(tmp, dir_fd=fds[-1])
        except BaseException:
            try:
                os.unlink(tmp, dir_fd=fds[-1])
            except OSError:
                pass
            raise
    except OSError:  # the folders made for it go with it
        remove_files(reversed(made))
        raise
    finally:
        for fd in fds:
            os.close(fd)
    return made


def artifact_files(resources: Iterable[ir.Resource], files: dict[str, bytes], *, every: bool) -> dict[str, bytes]:
    """What ``--artifacts-out`` writes: the bytes at hand of each resource embedded by path, under
    its artifact's location (``original_location``) or, with ``every``, under its own ``path``
    when it has no location (a file of an ASIF session that no continuity artifact holds: its
    record travels in the residual, its bytes would otherwise stay behind). The first claim to a
    location wins."""
    out: dict[str, bytes] = {}
    for r in resources:
        if r.availability != "embedded" or not isinstance(r.path, str) or r.path not in files:
            continue
        where = r.original_location if isinstance(r.original_location, str) else r.path if every else None
        if where is not None:
            out.setdefault(where, files[r.path])
    return out


def source_resource(data: bytes, name: str, *, packaged: bool) -> ir.Resource:
    """The input document as a resource, for source pointers: embedded by path in a package,
    otherwise referenced by its size and digest (the bytes stay where they are)."""
    digest = hashlib.sha256(data).hexdigest()
    base = Path(name).name
    path = f"source/{base}" if base and path_problem(base) is None else "source/input.json"
    res = ir.Resource(id=f"source-{digest[:12]}", media_type="application/json", purpose="source",
                      availability="embedded" if packaged else "unavailable", name=base or ir.UNSET,
                      bytes=len(data), sha256=digest)
    if packaged:
        res.path = path
    else:
        res.explanation = ("The document this session was converted from, referenced by its size and SHA-256; "
                           "its bytes are not carried (write a package to carry them).")
    return res


def source_reference(data: bytes, name: str, *, member: str | None = None) -> dict[str, str | int]:
    """The input document referenced by its file's name, size and SHA-256 (``member``: the
    package member the pointers are into), for source pointers written into continuity."""
    ref: dict[str, str | int] = {"name": Path(name).name or "input", "bytes": len(data),
                                 "sha256": hashlib.sha256(data).hexdigest()}
    if member is not None:
        ref["member"] = member
    return ref
