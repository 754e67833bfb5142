"""Embedded resources stored by ``path``: checked only against a base directory the user names.

Documents are data: a path inside one is never opened unless the user asks for it with a base
directory, and then only a regular file inside that directory, reached without links.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from pathlib import Path
from typing import Any

from asif_convert._errors import Problem, pointer
from asif_convert._validation.semantic.resources import path_problem


def path_resource_problems(doc: dict[str, Any], base_dir: Path) -> list[Problem]:
    problems = []
    for r, res in enumerate(doc.get("resources") or ()):
        path = res.get("path") if isinstance(res, dict) else None
        if res.get("availability") != "embedded" or not isinstance(path, str) or path_problem(path):
            continue  # unsafe paths are reported by ASIF-R076 and never touched
        where, rid = pointer("resources", r, "path"), res.get("id")
        size, digest, why = _digest_contained(base_dir, path)
        if why is not None:
            problems.append(Problem(rule="ASIF-R075", path=where, message=f"resource '{rid}' path '{path}' {why}"))
            continue
        if res.get("bytes") != size:
            problems.append(Problem(rule="ASIF-R075", path=pointer("resources", r, "bytes"),
                                    message=f"resource '{rid}' declares {res.get('bytes')} bytes but the file "
                                            f"'{path}' has {size}"))
        if res.get("sha256") != digest:
            problems.append(Problem(rule="ASIF-R075", path=pointer("resources", r, "sha256"),
                                    message=f"resource '{rid}' declares sha256 {res.get('sha256')} but the file "
                                            f"'{path}' hashes to {digest}"))
    return problems


def _digest_contained(base: Path, relative: str) -> tuple[int, str, str | None]:
    """The size and SHA-256 of ``base/relative``, or the reason it is refused (see
    :func:`open_contained`). The file is hashed in chunks, so its size does not matter."""
    fd, why, _ = open_contained(base, relative)
    if fd is None:
        return 0, "", why
    try:
        digest, size = hashlib.sha256(), 0
        while chunk := os.read(fd, 1 << 20):
            digest.update(chunk)
            size += len(chunk)
        return size, digest.hexdigest(), None
    finally:
        os.close(fd)


def open_contained(base: Path, relative: str) -> tuple[int | None, str | None, bool]:
    """An open descriptor of ``base/relative`` when every step is a real directory or file (no
    links, no devices or pipes), else None, the reason it is refused, and whether the reason is
    only that the file is missing. The caller closes the descriptor.

    Each step is opened relative to the directory before it, with ``O_NOFOLLOW``: a link swapped
    in between a check and an open cannot lead outside ``base``."""
    if not {os.open, os.stat} <= os.supports_dir_fd:
        return None, "cannot be checked safely on this platform (no directory-relative open)", False
    parts = relative.split("/")
    fds: list[int] = []
    try:
        try:
            fds.append(os.open(base, os.O_RDONLY | _DIRECTORY))
        except OSError:
            return None, "names no file under the base directory (the base directory cannot be opened)", False
        for i, part in enumerate(parts):
            shown = "/".join(parts[: i + 1])
            last = i == len(parts) - 1
            try:
                st = os.lstat(part, dir_fd=fds[-1])
            except OSError as exc:
                if exc.errno != errno.ENOENT:  # (a folder on the way that cannot be searched)
                    return None, unreadable(shown, exc), False
                return None, f"names no file under the base directory ({shown} is missing)", True
            if stat.S_ISLNK(st.st_mode):
                return None, f"goes through a symbolic link ({shown}), which is not followed", False
            if not last and not stat.S_ISDIR(st.st_mode):
                return None, f"goes through {shown}, which is not a directory", False
            if last and not stat.S_ISREG(st.st_mode):
                return None, "is not a regular file (a directory, device or pipe is never read)", False
            flags = os.O_RDONLY | _NOFOLLOW | (os.O_NONBLOCK if last else _DIRECTORY)
            try:
                fds.append(os.open(part, flags, dir_fd=fds[-1]))
            except OSError as exc:
                if exc.errno in SWAPPED:
                    return None, f"changed while it was checked ({shown})", False
                return None, unreadable(shown, exc), False
            if last and not stat.S_ISREG(os.fstat(fds[-1]).st_mode):
                return None, "is not a regular file (a directory, device or pipe is never read)", False
        return fds.pop(), None, False
    finally:
        for fd in fds:
            os.close(fd)


# What opening a step that was checked a moment before says when it was replaced since: by a
# link (O_NOFOLLOW), by a non-directory, or removed. Any other error is the step's own (no
# permission, an I/O error) and is said as such.
SWAPPED = frozenset({errno.ELOOP, errno.ENOTDIR, errno.ENOENT})


def unreadable(shown: str, exc: OSError) -> str:
    """Why a checked step cannot be opened, as the system says it."""
    return f"cannot be read ({shown}: {exc.strerror or exc})"


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
