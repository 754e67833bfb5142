"""Output paths under OUTDIR that no name in a source tree can make escape it."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from asif_convert._registry import get, registry
from asif_convert.batch._discover import inside

_BAD_PART = re.compile(r"[\x00/\\]")
PACKAGE_EXTENSION = ".asif.zip"  # an ASIF package (see asif_convert._package)


def output_name(name: str, to: str, package: bool = False) -> str:
    """``export.json`` -> ``export.asif.json`` (``export.asif.zip`` for a package); a known format
    extension is replaced, not doubled."""
    known = [f.extension for f in registry().values()] + [PACKAGE_EXTENSION]
    for ext in sorted(known, key=len, reverse=True):
        if name.endswith(ext) and len(name) > len(ext):
            name = name[: -len(ext)]
            break
    else:
        for ext in (".jsonl", ".json"):  # (JSON Lines of no format's own extension, or a document)
            if name.endswith(ext) and len(name) > len(ext):
                name = name[: -len(ext)]
                break
    return name + (PACKAGE_EXTENSION if package else get(to).extension)


def output_path(rel: Iterable[str], to: str, package: bool = False) -> str:
    """The POSIX path under OUTDIR for a file at ``rel`` (components relative to its source root).

    Raises ValueError for a component that could escape OUTDIR (``..``, ``.``, empty, a separator
    or NUL inside a name), so that no name in a source tree can put a file outside OUTDIR.
    """
    parts = list(rel)
    if not parts:
        raise ValueError("empty path")
    for part in parts:
        if part in ("", ".", "..") or _BAD_PART.search(part):
            raise ValueError(f"unsafe path component {part!r}")
    parts[-1] = output_name(parts[-1], to, package)
    return "/".join(parts)


def safe_target(outdir: str, outdir_real: str, rel: str) -> str:
    """Create the parent folders of OUTDIR/rel, refusing any that resolves outside OUTDIR (a
    symlink planted in OUTDIR). Returns the target path."""
    parts = rel.split("/")
    if any(p in ("", ".", "..") or _BAD_PART.search(p) for p in parts):
        raise Unsafe(f"unsafe output path {rel!r}")
    current = outdir
    for part in parts[:-1]:
        current = os.path.join(current, part)
        if os.path.islink(current) and not inside(os.path.realpath(current), [outdir_real]):
            raise Unsafe(f"output folder {current} is a symlink that resolves outside OUTDIR")
        try:
            os.mkdir(current)
        except FileExistsError:
            pass
    return os.path.join(outdir, *parts)


class Unsafe(Exception):
    pass
