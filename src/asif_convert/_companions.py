"""The files that belong with an input in its producer's own layout (a Claude Code session's
subagent transcripts beside it), read only inside the input's own folder: regular files reached
without a symbolic link, under names checked to stay there, within the size limit together."""

from __future__ import annotations

import os
import re
import stat

from asif_convert._jsonio import read_input
from asif_convert._limits import Limits

_BAD = re.compile(r"[\x00\\]")


def _safe(rel: str) -> bool:
    parts = rel.split("/")
    return bool(rel) and not _BAD.search(rel) and all(p not in ("", ".", "..") for p in parts)


def _plain_path(root: str, rel: str) -> str | None:
    """``root/rel`` when no component below ``root`` is a symbolic link, else None."""
    path = root
    for part in rel.split("/"):
        path = os.path.join(path, part)
        try:
            if stat.S_ISLNK(os.lstat(path).st_mode):
                return None
        except OSError:
            return None
    return path


def gather(base: str, folders: list[str], files: list[str], limits: Limits) -> dict[str, bytes]:
    """The companions of the input file ``base``: every ``*.jsonl`` regular file of each folder in
    ``folders`` and each file of ``files`` that exists, by name relative to ``base``'s folder."""
    root = os.path.dirname(os.path.abspath(base))
    wanted = [f for f in files if _safe(f)]
    for rel in folders:
        folder = _plain_path(root, rel) if _safe(rel) else None
        if folder is None:
            continue
        try:
            with os.scandir(folder) as it:
                wanted += sorted(f"{rel}/{e.name}" for e in it if e.name.endswith(".jsonl")
                                 and not e.name.startswith(".") and e.is_file(follow_symlinks=False))
        except OSError:
            continue
    out: dict[str, bytes] = {}
    left = limits.max_bytes
    for rel in dict.fromkeys(wanted):
        path = _plain_path(root, rel)
        if path is None or not os.path.isfile(path):
            continue
        data, _ = read_input(path, Limits(max_bytes=max(left, 1), max_depth=limits.max_depth,
                                          max_string=limits.max_string, trusted=limits.trusted), regular=True)
        left -= len(data)
        out[rel] = data
    return out
