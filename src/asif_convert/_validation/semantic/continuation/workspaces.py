"""Workspaces: their records, the trees their base chains build, and Git index records (rules 4-6)."""

from __future__ import annotations

import hashlib
import re
from bisect import bisect_left
from collections.abc import Callable
from fnmatch import fnmatchcase
from typing import Any

from asif_convert._validation.semantic.continuation.profile import Profile
from asif_convert._validation.semantic.index import as_dict, as_list

_GIT_MODES = frozenset({"100644", "100755", "120000", "160000"})
_OID_LENGTH = {"sha1": 40, "sha256": 64}
_HEX = re.compile(r"[0-9a-f]+")


def check_workspaces(profile: Profile) -> None:
    for i, w in enumerate(profile.lists["workspaces"]):
        w = as_dict(w)
        owner = f"workspace '{w.get('id')}'"
        if not profile.ix.has("environments", w.get("environment_id")):
            profile.add(
                4,
                ("workspaces", i, "environment_id"),
                f"{owner} names environment '{w.get('environment_id')}', which is not in environments",
            )
        base = w.get("base_snapshot_id")
        if base is not None:
            if base not in profile.workspaces:
                profile.add(
                    4,
                    ("workspaces", i, "base_snapshot_id"),
                    f"{owner} builds on '{base}', which is not a workspace",
                )
            elif profile.workspace(base).get("root_id") != w.get("root_id"):
                profile.add(
                    4,
                    ("workspaces", i, "base_snapshot_id"),
                    f"{owner} builds on '{base}', a snapshot of another root",
                )
        for j, entry in enumerate(as_list(w.get("entries"))):
            entry = as_dict(entry)
            profile.path(5, ("workspaces", i, "entries", j, "path"), entry.get("path"), owner)
            if (
                entry.get("kind") == "file"
                and "resource_id" in entry
                and not profile.ix.has("resources", entry["resource_id"])
            ):
                profile.add(
                    5,
                    ("workspaces", i, "entries", j, "resource_id"),
                    f"{owner} file '{entry.get('path')}' names resource '{entry['resource_id']}', "
                    "which is not in resources",
                )
        for j, deletion in enumerate(as_list(w.get("deletions"))):
            profile.path(5, ("workspaces", i, "deletions", j), deletion, owner)
        if isinstance(w.get("git"), dict):
            _git(profile, i, w["git"], owner)
    _trees(profile)


def _trees(profile: Profile) -> None:
    """Build each workspace's tree from its base chain, in base-first order (rules 4 and 5)."""
    states: dict[str, dict[str, dict[str, Any]] | None] = {}

    def state(ident: str, chain: tuple[str, ...]) -> dict[str, dict[str, Any]] | None:
        if ident in states:
            return states[ident]
        i = profile.workspaces[ident]
        w = profile.workspace(ident)
        base = w.get("base_snapshot_id")
        entries: dict[str, dict[str, Any]] = {}
        if isinstance(base, str) and base in profile.workspaces:
            if base in chain:
                profile.add(
                    4, ("workspaces", i, "base_snapshot_id"), f"workspace '{ident}' lies on a base snapshot cycle"
                )
                states[ident] = None
                return None
            inherited = state(base, (*chain, ident))
            if inherited is None:
                states[ident] = None
                return None
            entries = dict(inherited)
        selection = as_dict(w.get("selection"))
        excluded = [x for x in as_list(selection.get("exclude")) if isinstance(x, str)]
        ordered = sorted(entries)  # paths under a deleted folder form one range of this order
        for j, deletion in enumerate(as_list(w.get("deletions"))):
            if not isinstance(deletion, str):
                continue
            where = ("workspaces", i, "deletions", j)
            if any(
                fnmatchcase(deletion, x) or deletion == x.rstrip("/") or deletion.startswith(x.rstrip("/") + "/")
                for x in excluded
            ):
                profile.add(5, where, f"workspace '{ident}' deletes '{deletion}', an excluded path")
            below = ordered[bisect_left(ordered, deletion + "/") : bisect_left(ordered, deletion + "0")]
            gone = [p for p in [deletion, *below] if p in entries]
            if not gone:
                profile.add(5, where, f"workspace '{ident}' deletes '{deletion}', which its base does not have")
            for p in gone:
                del entries[p]
        seen: set[str] = set()
        for j, entry in enumerate(as_list(w.get("entries"))):
            entry = as_dict(entry)
            path = entry.get("path")
            if not isinstance(path, str):
                continue
            if path in seen:
                profile.add(5, ("workspaces", i, "entries", j, "path"), f"workspace '{ident}' lists '{path}' twice")
            seen.add(path)
            entries[path] = entry
        for path in entries:
            parts = path.split("/")
            for n in range(1, len(parts)):
                parent = "/".join(parts[:n])
                if parent in entries and entries[parent].get("kind") != "directory":
                    profile.add(
                        5,
                        ("workspaces", i, "entries"),
                        f"workspace '{ident}' has '{path}' under '{parent}', which is not a directory",
                    )
        states[ident] = entries
        return entries

    for ident in profile.workspaces:
        state(ident, ())


def _git(profile: Profile, i: int, g: dict[str, Any], owner: str) -> None:
    base = ("workspaces", i, "git")
    length = _OID_LENGTH.get(g.get("object_format"))  # type: ignore[arg-type]
    if length is None:
        profile.add(
            6,
            (*base, "object_format"),
            f"{owner} uses Git object format '{g.get('object_format')}'; expected sha1 or sha256",
        )

    def oid(where: tuple[str | int, ...], value: Any) -> None:
        if length is not None and isinstance(value, str) and not (len(value) == length and _HEX.fullmatch(value)):
            profile.add(6, (*base, *where), f"{owner} Git object id '{value}' is not {length} lowercase hex digits")

    oid(("head",), g.get("head"))
    profile.resource_refs(6, (*base, "bundle_resource_ids"), g.get("bundle_resource_ids"), owner)
    _git_index(profile, base, g, owner, length, oid)
    for j, pre in enumerate(as_list(g.get("prerequisites"))):
        pre = as_dict(pre)
        oid(("prerequisites", j, "object_id"), pre.get("object_id"))
        if pre.get("availability") == "embedded" and "resource_id" not in pre:
            profile.add(6, (*base, "prerequisites", j), f"{owner} embedded Git prerequisite names no resource")
        if "resource_id" in pre and not profile.ix.has("resources", pre["resource_id"]):
            profile.add(
                6,
                (*base, "prerequisites", j, "resource_id"),
                f"{owner} Git prerequisite names resource '{pre['resource_id']}', which is not in resources",
            )
    for j, module in enumerate(as_list(g.get("submodules"))):
        module = as_dict(module)
        profile.path(6, (*base, "submodules", j, "path"), module.get("path"), owner)
        oid(("submodules", j, "object_id"), module.get("object_id"))
        if module.get("dependency_id") not in profile.deps:
            profile.add(
                6,
                (*base, "submodules", j, "dependency_id"),
                f"{owner} submodule names dependency '{module.get('dependency_id')}', which is not a dependency",
            )
    for j, dep in enumerate(as_list(g.get("lfs_dependency_ids"))):
        if dep not in profile.deps:
            profile.add(
                6,
                (*base, "lfs_dependency_ids", j),
                f"{owner} names LFS dependency '{dep}', which is not a dependency",
            )


def _git_index(profile: Profile, base: tuple[str | int, ...], g: dict[str, Any], owner: str, length: int | None,
               oid: Callable[[tuple[str | int, ...], Any], None]) -> None:
    """The Git index entries of a workspace: paths, stages, modes, and the blobs they name."""
    stages: dict[str, set[Any]] = {}
    for j, entry in enumerate(as_list(g.get("index_entries"))):
        entry = as_dict(entry)
        where = ("index_entries", j)
        path = entry.get("path")
        profile.path(6, (*base, *where, "path"), path, owner)
        oid((*where, "object_id"), entry.get("object_id"))
        mine = stages.setdefault(path, set()) if isinstance(path, str) else set()
        stage = entry.get("stage")
        if stage in mine:
            profile.add(6, (*base, *where, "stage"), f"{owner} Git index lists stage {stage} of '{path}' twice")
        mine.add(stage)
        if 0 in mine and len(mine) > 1:
            profile.add(6, (*base, *where, "stage"), f"{owner} Git index mixes a resolved and unmerged '{path}'")
        if entry.get("mode") not in _GIT_MODES:
            profile.add(
                6, (*base, *where, "mode"), f"{owner} Git index mode '{entry.get('mode')}' is not a Git file mode"
            )
        rid, object_id = entry.get("resource_id"), entry.get("object_id")
        if rid is None and object_id is None:
            profile.add(6, (*base, *where), f"{owner} Git index entry '{path}' names neither a resource nor an object")
        if rid is None:
            continue
        if not profile.ix.has("resources", rid):
            profile.add(
                6,
                (*base, *where, "resource_id"),
                f"{owner} Git index names resource '{rid}', which is not in resources",
            )
            continue
        raw = profile.ix.resource_bytes(rid)
        if raw is not None and isinstance(object_id, str) and length is not None:
            digest = hashlib.new(g["object_format"], b"blob %d\0" % len(raw) + raw).hexdigest()
            if digest != object_id:
                profile.add(
                    6,
                    (*base, *where, "object_id"),
                    f"{owner} Git blob '{path}' hashes to {digest}, not {object_id}",
                )
