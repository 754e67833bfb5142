"""Finding the input files: files, walked folders and glob patterns, never following a symlink
out of the source roots."""

from __future__ import annotations

import glob
import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

from asif_convert._errors import InvalidInput, Problem
from asif_convert.batch._records import DEFAULT_PATTERN, MANIFEST_NAME, matches


class Found(NamedTuple):
    path: str  # where to open it
    rel: tuple[str, ...]  # path components relative to its source root
    size: int
    confined: bool  # found by walking or matching (not named): must resolve inside the source roots
    real: str | None = None  # its real path, where finding it told it (a walk knows its folders' real paths)


class Refused(NamedTuple):
    path: str
    rel: tuple[str, ...] | None  # where it would have gone, when known
    reason: str


def _has_magic(part: str) -> bool:
    return any(c in part for c in "*?[")


def inside(real: str, roots: Iterable[str]) -> bool:
    return any(real == r or real.startswith(r.rstrip(os.sep) + os.sep) for r in roots)


@dataclass
class _Source:
    kind: str  # file | dir | glob
    arg: str
    base: str  # the file itself, the directory, or the glob's literal prefix


def classify(arg: str) -> _Source:
    if os.path.lexists(arg):
        return _Source("dir" if os.path.isdir(arg) else "file", arg, arg)
    parts = Path(arg).parts
    literal = []
    for part in parts:
        if _has_magic(part):
            break
        literal.append(part)
    if len(literal) == len(parts):
        raise InvalidInput([Problem(rule="io", path="", message="no such file or directory")], arg)
    return _Source("glob", arg, str(Path(*literal)) if literal else os.curdir)


def check_sources(sources: Iterable[str | os.PathLike[str]]) -> list[str]:
    """The sources as strings; raises :class:`InvalidInput` naming one that does not exist (or
    is a pattern that matches nothing), before anything is converted."""
    out = []
    for s in sources:
        arg = os.fspath(s)
        src = classify(arg)
        if src.kind == "glob" and next(glob.iglob(arg, recursive=True), None) is None:
            raise InvalidInput([Problem(rule="io", path="", message="no such file or directory, and no "
                                        "file matches it as a pattern")], arg)
        out.append(arg)
    if not out:
        raise InvalidInput([Problem(rule="io", path="", message="no sources given")], "<batch>")
    return out


def discover(sources: Iterable[str | os.PathLike[str]], *, pattern: str = DEFAULT_PATTERN,
             exclude: Iterable[str | os.PathLike[str]] = ()) -> Iterator[Found | Refused]:
    """Every input file under ``sources``, lazily, in a stable (sorted) order.

    - A file named explicitly is taken as given (even through a symlink); its path relative to
      its root is its name.
    - A directory is walked recursively for names matching ``pattern``; hidden entries (names
      starting with ".") are skipped. Paths are relative to the directory.
    - A glob pattern (``**`` recurses) is expanded; paths are relative to its literal prefix.

    A symlink met while walking or matching is followed only when it resolves inside one of the
    source roots; otherwise it is :class:`Refused`, as are broken symlinks and loops. Paths under
    ``exclude`` (OUTDIR, the manifest) are skipped silently.
    """
    srcs = [classify(os.fspath(s)) for s in sources]
    roots = [os.path.realpath(s.base) for s in srcs]
    excluded = [os.path.realpath(os.fspath(e)) for e in exclude]
    for src in srcs:
        if src.kind == "file":
            yield from _one_file(src.arg, (os.path.basename(os.path.normpath(src.arg)),), roots, confined=False)
        elif src.kind == "dir":
            yield from _walk(src.arg, (), roots, excluded, pattern)
        else:
            yield from _glob(src, roots, excluded, pattern)


def _one_file(path: str, rel: tuple[str, ...], roots: list[str], *, confined: bool,
              real: str | None = None) -> Iterator[Found | Refused]:
    if confined and os.path.islink(path):
        real = os.path.realpath(path)
        if not os.path.exists(real):
            yield Refused(path, rel, "broken symlink")
            return
        if not inside(real, roots):
            yield Refused(path, rel, f"symlink resolves outside the source roots (to {real})")
            return
    try:
        st = os.stat(path)
    except OSError as exc:
        yield Refused(path, rel, f"cannot read: {exc.strerror}")
        return
    if not stat.S_ISREG(st.st_mode):
        yield Refused(path, rel, "not a regular file")
        return
    yield Found(path, rel, st.st_size, confined, real)


def _walk(top: str, rel0: tuple[str, ...], roots: list[str], excluded: list[str],
          pattern: str) -> Iterator[Found | Refused]:
    # An explicit stack (no recursion limit on deep trees); each frame carries the real paths of
    # its ancestors so that a symlink back up the tree is a reported loop, not an endless walk.
    # A frame's own real path is the last of them: an entry that is no symlink is that and its
    # name, with no resolving of every file's path (the second largest cost of a batch's parent).
    stack: list[tuple[Iterator[os.DirEntry[str]], tuple[str, ...], frozenset[str], str]] = []

    def push(path: str, rel: tuple[str, ...], ancestors: frozenset[str]) -> Iterator[Refused]:
        try:
            with os.scandir(path) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            yield Refused(path, rel or None, f"cannot list the directory: {exc.strerror}")
            return
        here = os.path.realpath(path)
        stack.append((iter(entries), rel, ancestors | {here}, here))

    yield from push(top, rel0, frozenset())
    while stack:
        entries, rel, ancestors, here = stack[-1]
        entry = next(entries, None)
        if entry is None:
            stack.pop()
            continue
        if entry.name.startswith("."):
            continue
        sub = (*rel, entry.name)
        try:
            is_link = entry.is_symlink()
            real = os.path.realpath(entry.path) if is_link else os.path.join(here, entry.name)
            is_dir = entry.is_dir(follow_symlinks=True)
        except OSError as exc:
            yield Refused(entry.path, sub, f"cannot read: {exc.strerror}")
            continue
        if is_dir:
            if inside(real, excluded) or companion_folder(entry.name, here):
                continue
            if is_link and not inside(real, roots):
                yield Refused(entry.path, sub, f"symlink resolves outside the source roots (to {real})")
            elif real in ancestors:
                yield Refused(entry.path, sub, "symlink loop")
            else:
                yield from push(entry.path, sub, ancestors)
            continue
        if not matches(entry.name, pattern) or companion_file(entry.name, here) or entry.name == MANIFEST_NAME:
            continue  # (a batch's own manifest, in a tree a batch wrote, is no input)
        if inside(real, excluded):
            continue
        yield from _one_file(entry.path, sub, roots, confined=True, real=real)


def companion_folder(name: str, folder: str) -> bool:
    """A folder beside a session file of its name (``<id>/`` beside ``<id>.jsonl``): the session's
    own files in Claude Code's layout (its subagents' transcripts), read with the session."""
    return os.path.isfile(os.path.join(folder, name + ".jsonl"))


def companion_file(name: str, folder: str) -> bool:
    """A subagent's transcript beside the sessions of a Claude Code project folder
    (``agent-<id>.jsonl``, the layout of 2.0 clients): read with the session that names it."""
    return name.startswith("agent-") and name.endswith(".jsonl") and _holds_sessions(folder)


@lru_cache(maxsize=256)
def _holds_sessions(folder: str) -> bool:
    try:
        with os.scandir(folder) as it:
            return any(e.name.endswith(".jsonl") and not e.name.startswith(("agent-", ".")) for e in it)
    except OSError:
        return False


def _glob(src: _Source, roots: list[str], excluded: list[str], pattern: str) -> Iterator[Found | Refused]:
    # With "**" the pattern enumerates whole trees itself, so a matched folder is not walked again.
    walk_dirs = "**" not in src.arg
    base_parts = Path(src.base).parts if src.base != os.curdir else ()
    for match in sorted(glob.iglob(src.arg, recursive=True)):
        rel: list[str] = []
        for part in Path(match).parts[len(base_parts):]:  # lexical normalization below the literal prefix
            if part == "..":
                if not rel:
                    yield Refused(match, None, "the match lies outside the pattern's base directory")
                    break
                rel.pop()
            elif part not in (".", ""):
                rel.append(part)
        else:
            real = os.path.realpath(match)
            if inside(real, excluded):
                continue
            if not inside(real, roots):
                yield Refused(match, tuple(rel) or None, f"resolves outside the source roots (to {real})")
            elif os.path.isdir(match):
                if walk_dirs:
                    yield from _walk(match, tuple(rel), roots, excluded, pattern)
            else:
                yield from _one_file(match, tuple(rel) or (os.path.basename(match),), roots, confined=True)
