"""Each export's own artifacts folder: named by a template relative to the export's folder.

``{stem}`` is the export's file name without its last extension, ``{name}`` the whole name:
``'{stem}'`` puts the files of ``run-1.json`` in ``run-1/``, ``'{stem}.artifacts'`` in
``run-1.artifacts/``, ``'files/{stem}'`` in ``files/run-1/``, and ``'.'`` in the export's own
folder. A template never leads out of the export's folder (no absolute path, no ``..``), and the
folder is reached without following a link (see :class:`asif_convert._artifacts.ArtifactFiles`).

While walking the sources, an artifacts folder of an export beside it is not searched for
exports: the files a session produced are not sessions to convert.
"""

from __future__ import annotations

import os
import string
from functools import lru_cache
from pathlib import PurePosixPath

from asif_convert.batch._records import UsageError, matches

_FIELDS = frozenset({"stem", "name"})


def check_template(template: str) -> str:
    """The template, when it names a folder inside the export's folder; raises UsageError."""
    try:
        fields = {f for _, f, _, _ in string.Formatter().parse(template) if f is not None}
    except ValueError as exc:
        raise UsageError(f"artifacts folder template {template!r}: {exc}") from None
    unknown = sorted(fields - _FIELDS)
    if unknown:
        raise UsageError(f"artifacts folder template {template!r} names {', '.join(map(repr, unknown))}; "
                         "only {stem} and {name} are known")
    if template != "." and (template.startswith("/") or any(
            p in ("", ".", "..") for p in template.split("/")) or "\\" in template or "\0" in template):
        raise UsageError(f"artifacts folder template {template!r} must be '.' or a relative path inside the "
                         "export's folder (no absolute path, no '..', no empty or '.' segment, no backslash)")
    return template


def folder_for(template: str, export_name: str) -> str:
    """The artifacts folder of the export named ``export_name``, relative to its folder ("" for
    the folder itself). A name can make a segment unusable (``..``): the reader refuses it."""
    if template == ".":
        return ""
    return template.format(stem=PurePosixPath(export_name).stem, name=export_name)


class Skipper:
    """Tells whether something found while walking is, or lies inside, an artifacts folder of an
    export (a file matching the walk's pattern) in a folder above it, up to its source root."""

    def __init__(self, template: str, pattern: str) -> None:
        self.template, self.pattern = template, pattern
        self._first = lru_cache(maxsize=256)(self._first_segments)

    def skipped(self, path: str, depth: int) -> bool:
        """Whether ``path`` (``depth`` folders below its source root) is, or lies inside, the
        artifacts folder of an export beside it or beside a folder above it."""
        if self.template == ".":
            return False
        node = path
        for _ in range(depth + 1):
            parent = os.path.dirname(node)
            if os.path.basename(node) in self._first(parent or os.curdir):
                return True
            node = parent
        return False

    def _first_segments(self, folder: str) -> frozenset[str]:
        """The first segment of the artifacts folder of every export in ``folder``."""
        try:
            with os.scandir(folder) as it:
                names = [e.name for e in it if not e.name.startswith(".") and matches(e.name, self.pattern)
                         and e.is_file()]
        except OSError:
            return frozenset()
        return frozenset(folder_for(self.template, n).split("/")[0] for n in names)
