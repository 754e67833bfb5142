"""Embedded resources stored by ``path``: checked only against a base directory the user names.

Documents are data: a path inside one is never opened unless the user asks for it with a base
directory, and then only a regular file inside that directory, reached without links.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from typing import Any

from ..errors import Problem, pointer
from .semantic.resources import path_problem


def path_resource_problems(doc: dict[str, Any], base_dir: Path) -> list[Problem]:
    problems = []
    for r, res in enumerate(doc.get("resources") or ()):
        path = res.get("path") if isinstance(res, dict) else None
        if res.get("availability") != "embedded" or not isinstance(path, str) or path_problem(path):
            continue  # unsafe paths are reported by ASIF-R076 and never touched
        where, rid = pointer("resources", r, "path"), res.get("id")
        data, why = _read_contained(base_dir, path)
        if why is not None:
            problems.append(Problem(rule="ASIF-R075", path=where, message=f"resource '{rid}' path '{path}' {why}"))
            continue
        if res.get("bytes") != len(data):
            problems.append(Problem(rule="ASIF-R075", path=pointer("resources", r, "bytes"),
                                    message=f"resource '{rid}' declares {res.get('bytes')} bytes but the file "
                                            f"'{path}' has {len(data)}"))
        digest = hashlib.sha256(data).hexdigest()
        if res.get("sha256") != digest:
            problems.append(Problem(rule="ASIF-R075", path=pointer("resources", r, "sha256"),
                                    message=f"resource '{rid}' declares sha256 {res.get('sha256')} but the file "
                                            f"'{path}' hashes to {digest}"))
    return problems


def _read_contained(base: Path, relative: str) -> tuple[bytes, str | None]:
    """The bytes of ``base/relative`` when every step is a real directory or file (no links,
    no devices or pipes), else the reason it is refused."""
    current = base
    parts = relative.split("/")
    for i, part in enumerate(parts):
        current = current / part
        try:
            st = os.lstat(current)
        except OSError:
            return b"", f"names no file under the base directory ({'/'.join(parts[:i + 1])} is missing)"
        if stat.S_ISLNK(st.st_mode):
            return b"", f"goes through a symbolic link ({'/'.join(parts[:i + 1])}), which is not followed"
        last = i == len(parts) - 1
        if not last and not stat.S_ISDIR(st.st_mode):
            return b"", f"goes through {'/'.join(parts[:i + 1])}, which is not a directory"
        if last and not stat.S_ISREG(st.st_mode):
            return b"", "is not a regular file (a directory, device or pipe is never read)"
    fd = os.open(current, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as fh:
        return fh.read(), None
