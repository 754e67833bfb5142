"""The registry of installed formats: the built-ins, then the entry points of group
``asif_convert.formats``. Formats never import it; the pipeline, the CLI and batch do.

A plugin that fails to load is reported once, as a warning naming it and its error, and skipped:
one broken distribution must not take the converter down. Setting ``ASIF_CONVERT_NO_PLUGINS=1``
loads the built-ins only. Two formats with one name are an error that names both.

Finding entry points through ``importlib.metadata`` costs more than the rest of a small
conversion's start (importing it, then reading every distribution's metadata), and almost
every installation has no plugin: so the installed distributions' ``entry_points.txt`` files
are first looked through for the group's name, and ``importlib.metadata`` asked only where one
names it.
"""

from __future__ import annotations

import os
import sys
import warnings
from functools import cache
from importlib.machinery import PathFinder
from typing import TYPE_CHECKING

from asif_convert._errors import UsageError
from asif_convert._formats.asif import FORMAT as ASIF
from asif_convert._formats.claude_code.plugin import FORMAT as CLAUDE_CODE
from asif_convert._formats.codex import FORMAT as CODEX
from asif_convert._formats.continuity.plugin import FORMAT as CONTINUITY
from asif_convert._mapping import load_table
from asif_convert.plugin import ENTRY_POINT_GROUP, Format, Lines, mapping_tables, shape

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

BUILTINS: tuple[Format, ...] = (CONTINUITY, ASIF, CLAUDE_CODE, CODEX)
_REQUIRED = ("name", "description", "extension", "detect", "validate", "read", "write")


class PluginWarning(UserWarning):
    """A format plugin could not be loaded and was skipped."""


class DuplicateFormatError(UsageError):
    """Two installed formats claim one name."""


@cache
def registry() -> dict[str, Format]:
    """Every installed format by name, built-ins first."""
    found: dict[str, Format] = {}
    origin: dict[str, str] = {}
    for builtin in BUILTINS:
        found[builtin.name], origin[builtin.name] = builtin, "built-in"
    if os.environ.get("ASIF_CONVERT_NO_PLUGINS"):
        return found
    for ep in _entry_points():
        fmt = _load(ep)
        if fmt is None:
            continue
        where = f"plugin {ep.name!r} ({ep.value})"
        if fmt.name in found:
            raise DuplicateFormatError(f"two formats are named {fmt.name!r}: {origin[fmt.name]} and {where}; "
                                       "uninstall one (or set ASIF_CONVERT_NO_PLUGINS=1 to load the built-ins only)")
        found[fmt.name], origin[fmt.name] = fmt, where
    return found


def _entry_points() -> list[EntryPoint]:
    """The group's entry points by name; none, without importing ``importlib.metadata``, when
    no distribution's entry points name the group."""
    if not _group_named():
        return []
    from importlib.metadata import entry_points  # (see the module's docstring)

    return sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name)


def _group_named() -> bool:
    """Whether any distribution ``importlib.metadata`` would find may declare an entry point of
    the group. It finds them in the folders of ``sys.path`` (their ``*.dist-info`` and
    ``*.egg-info`` folders, an egg's ``EGG-INFO``), in zip files on the path, which are not
    looked into here (so they count as naming it), and through any other finder installed."""
    if any(f is not PathFinder and hasattr(f, "find_distributions") for f in sys.meta_path):
        return True
    needle = ENTRY_POINT_GROUP.encode()
    for entry in sys.path:
        root = entry or os.curdir
        try:
            names = os.listdir(root)
        except NotADirectoryError:  # a zip file
            return True
        except OSError:  # (not there)
            continue
        for name in names:
            low = name.lower()
            if not (low.endswith((".dist-info", ".egg-info")) or low == "egg-info"):
                continue
            try:
                with open(os.path.join(root, name, "entry_points.txt"), "rb") as file:
                    if needle in file.read():
                        return True
            except OSError:  # no entry points (or an egg-info file, which has none)
                continue
    return False


def _load(ep: EntryPoint) -> Format | None:
    try:
        fmt = ep.load()
        missing = [attr for attr in _REQUIRED if not hasattr(fmt, attr)]
        if missing:
            raise TypeError(f"not a format: it has no {', '.join(missing)}")
        return fmt
    except Exception as exc:  # whatever a third party's import raises: report it, keep going
        warnings.warn(f"asif-convert: skipped format plugin {ep.name!r} ({ep.value}): {type(exc).__name__}: {exc}",
                      PluginWarning, stacklevel=2)
        return None


def get(name: str) -> Format:
    """The installed format named ``name``; a usage error (exit 2) names the installed ones."""
    formats = registry()
    if name not in formats:
        raise UsageError(f"unknown format {name!r}; installed: {', '.join(sorted(formats))}")
    return formats[name]


def detect(doc: object) -> Format | None:
    """The first installed format that claims ``doc``: a parsed document (formats of shape
    ``document``), or :class:`Lines` (formats of shape ``lines``, shown its first records)."""
    if isinstance(doc, Lines):
        first = doc.first()
        return next((f for f in registry().values() if shape(f) == "lines" and f.detect(first)), None)
    return next((f for f in registry().values() if shape(f) == "document" and f.detect(doc)), None)


def detect_lines(values: list[object]) -> Format | None:
    """The first installed format of JSON Lines that claims these first records."""
    return next((f for f in registry().values() if shape(f) == "lines" and f.detect(values)), None)


def namespaces() -> frozenset[str]:
    return frozenset(ns for f in registry().values() if (ns := getattr(f, "namespace", None)))


def loss_kinds() -> dict[str, str]:
    """Every loss kind the installed formats' mapping tables (and the request's) define, with
    what it means."""
    kinds: dict[str, str] = dict(load_table("request").kinds)  # (what a provider request cannot carry)
    for fmt in registry().values():
        for table in mapping_tables(fmt):
            kinds.update(table.kinds)
    return dict(sorted(kinds.items()))
