"""The files that belong with an input in its producer's own layout (a Claude Code session's
subagent transcripts beside it), read only inside the input's own folder: regular files reached
without a symbolic link, under names checked to stay there, within the size limit together."""

from __future__ import annotations

import hashlib
import os
import re
import stat

import msgspec

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


class Sought(msgspec.Struct, frozen=True):
    """What a conversion looked for beside its input (the folders it listed, the files it named)
    and a digest of what it found there: what a resumed batch looks for again, to tell whether
    the companions changed while the input did not."""

    folders: list[str]
    files: list[str]
    sha256: str


def digest(found: dict[str, bytes], left: list[str]) -> str:
    """A digest of the companions read (by name and content) and of those left unread."""
    named = sorted((rel, hashlib.sha256(data).hexdigest()) for rel, data in found.items())
    return hashlib.sha256(msgspec.json.encode([named, sorted(left)])).hexdigest()


def unchanged(base: str, sought: Sought, limits: Limits) -> bool:
    """Whether looking beside ``base`` again finds what ``sought`` found."""
    try:
        return digest(*gather(base, sought.folders, sought.files, limits)) == sought.sha256
    except Exception:  # (unreadable now, beyond a limit: converting again says what is wrong)
        return False


def gather(base: str, folders: list[str], files: list[str],
           limits: Limits) -> tuple[dict[str, bytes], list[str]]:
    """The companions of the input file ``base``: every ``*.jsonl`` regular file of each folder in
    ``folders`` and each file of ``files`` that exists, by name relative to ``base``'s folder;
    and those found but not read: symbolic links, which are never followed."""
    root = os.path.dirname(os.path.abspath(base))
    wanted = [f for f in files if _safe(f)]
    left: list[str] = []
    for rel in folders:
        if not _safe(rel) or not os.path.lexists(os.path.join(root, rel)):
            continue
        folder = _plain_path(root, rel)
        if folder is None:
            left.append(rel)
            continue
        try:
            with os.scandir(folder) as it:
                for e in sorted(it, key=lambda e: e.name):
                    if e.name.endswith(".jsonl") and not e.name.startswith("."):
                        if e.is_symlink():
                            left.append(f"{rel}/{e.name}")
                        elif e.is_file(follow_symlinks=False):
                            wanted.append(f"{rel}/{e.name}")
        except OSError:
            continue
    out: dict[str, bytes] = {}
    remaining = limits.max_bytes
    for rel in dict.fromkeys(wanted):
        path = _plain_path(root, rel)
        if path is None:
            if os.path.lexists(os.path.join(root, rel)):
                left.append(rel)
            continue
        if not os.path.isfile(path):
            continue
        data, _ = read_input(path, Limits(max_bytes=max(remaining, 1), max_depth=limits.max_depth,
                                          max_string=limits.max_string, trusted=limits.trusted), regular=True)
        remaining -= len(data)
        out[rel] = data
    return out, left

