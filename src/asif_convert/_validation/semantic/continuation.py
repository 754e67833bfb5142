"""The portable-continuation profile (``asif.portable-continuation/0.2``): its single-document rules.

The profile's schema fixes each record's shape; these are the checks across records that it cannot
make: references inside the profile and into the core document, the dependency and workspace
graphs, the workspace trees, Git index records, and each plan's agreement with its checkpoint,
continuation context, configuration and selections. They follow CONTINUATION.md (profile 0.2)
and the reference validator's ``inspect_session``. The destination's assessment report is a
separate document and is not checked here.

Rule ids are ``ASIF-Cnnn``; every finding is an error, as it is for the reference. A plan whose
checkpoint, context or configuration does not resolve is reported once and its dependent checks
are skipped, rather than reported again as mismatches.
"""

from __future__ import annotations

import hashlib
import re
from bisect import bisect_left
from fnmatch import fnmatchcase
from typing import Any

from asif_convert._errors import pointer
from asif_convert._validation.semantic.index import Index, Report, as_dict, as_list, is_local, json_equal
from asif_convert._validation.semantic.resources import path_problem

_GIT_MODES = frozenset({"100644", "100755", "120000", "160000"})
_OID_LENGTH = {"sha1": 40, "sha256": 64}
_HEX = re.compile(r"[0-9a-f]+")
# Fields of a typed context input that must equal its source event's data unless a transformation is stated.
_TOOL_FIELDS = {
    "tool_call": ("tool_id", "arguments", "arguments_status"),
    "tool_result": ("parts", "result_index", "terminal", "outcome"),
}
# path_references entity_type -> core collection (``dependency`` resolves inside the profile).
_PATH_ENTITIES = {
    "event": "events",
    "resource": "resources",
    "environment": "environments",
    "configuration": "configurations",
}
_MISSING = object()


def check(ix: Index, report: Report) -> None:
    profile = ix.doc.get("continuation")
    if isinstance(profile, dict):
        Profile(ix, report, profile).check()


def _ids(records: list[Any], key: str = "id") -> dict[str, int]:
    """id -> position of its first record."""
    out: dict[str, int] = {}
    for i, record in enumerate(records):
        ident = as_dict(record).get(key)
        if isinstance(ident, str):
            out.setdefault(ident, i)
    return out


def _resolve_pointer(value: Any, selector: str) -> Any:
    """RFC 6901 lookup; ``_MISSING`` when the target does not exist."""
    if selector == "":
        return value
    for token in selector[1:].split("/"):
        if re.search(r"~(?![01])", token):
            return _MISSING
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(value, list):
            if not re.fullmatch(r"0|[1-9][0-9]*", token) or int(token) >= len(value):
                return _MISSING
            value = value[int(token)]
        elif isinstance(value, dict) and token in value:
            value = value[token]
        else:
            return _MISSING
    return value


class Profile:
    def __init__(self, ix: Index, report: Report, profile: dict[str, Any]) -> None:
        self.ix, self.report, self.p = ix, report, profile
        self.lists = {
            name: as_list(profile.get(name))
            for name in (
                "workspaces",
                "dependencies",
                "configuration_bindings",
                "service_bindings",
                "operations",
                "native_imports",
                "plans",
            )
        }
        self.deps = _ids(self.lists["dependencies"])
        self.workspaces = _ids(self.lists["workspaces"])
        self.services = _ids(self.lists["service_bindings"])
        self.operations = _ids(self.lists["operations"])
        self.natives = _ids(self.lists["native_imports"])
        self.bindings = _ids(self.lists["configuration_bindings"], "configuration_id")

    def add(self, rule: int, where: tuple[str | int, ...], message: str) -> None:
        self.report.add(f"ASIF-C{rule:03d}", pointer("continuation", *where), message)

    def dep(self, ident: str) -> dict[str, Any]:
        return as_dict(self.lists["dependencies"][self.deps[ident]])

    def workspace(self, ident: str) -> dict[str, Any]:
        return as_dict(self.lists["workspaces"][self.workspaces[ident]])

    def resource_refs(self, rule: int, where: tuple[str | int, ...], ids: Any, owner: str) -> None:
        for j, rid in enumerate(as_list(ids)):
            if not self.ix.has("resources", rid):
                self.add(rule, (*where, j), f"{owner} names resource '{rid}', which is not in resources")

    def path(self, rule: int, where: tuple[str | int, ...], value: Any, owner: str, empty: bool = False) -> bool:
        """Report an unsafe relative path; True when it is safe (the empty path means the root)."""
        if not isinstance(value, str) or (empty and value == ""):
            return True
        problem = "is empty" if value == "" else path_problem(value)
        if problem is not None:
            self.add(rule, where, f"{owner} path '{value}' {problem}")
        return problem is None

    def check(self) -> None:
        self.unique()
        self.dependencies()
        self.workspace_records()
        self.operation_records()
        for k, plan in enumerate(self.lists["plans"]):
            Plan(self, k, as_dict(plan)).check()

    # -- collections -------------------------------------------------------------------------

    def unique(self) -> None:
        for name, ids in (
            ("workspaces", self.workspaces),
            ("dependencies", self.deps),
            ("service_bindings", self.services),
            ("operations", self.operations),
            ("native_imports", self.natives),
            ("plans", _ids(self.lists["plans"])),
            ("configuration_bindings", self.bindings),
        ):
            key = "configuration_id" if name == "configuration_bindings" else "id"
            for i, record in enumerate(self.lists[name]):
                ident = as_dict(record).get(key)
                if isinstance(ident, str) and ids.get(ident) != i:
                    self.add(1, (name, i, key), f"{key} '{ident}' is already used by /continuation/{name}/{ids[ident]}")

    def dependencies(self) -> None:
        for i, d in enumerate(self.lists["dependencies"]):
            d = as_dict(d)
            owner = f"dependency '{d.get('id')}'"
            for j, other in enumerate(as_list(d.get("depends_on"))):
                if other not in self.deps:
                    self.add(
                        2,
                        ("dependencies", i, "depends_on", j),
                        f"{owner} depends on '{other}', which is not a dependency",
                    )
            self.resource_refs(2, ("dependencies", i, "resource_ids"), d.get("resource_ids"), owner)
            if d.get("kind") == "tool" and "tool_id" in d and not self.ix.has("tools", d["tool_id"]):
                self.add(
                    2, ("dependencies", i, "tool_id"), f"{owner} names tool '{d['tool_id']}', which is not in tools"
                )
        # Peel off dependencies whose prerequisites are all placed; what remains lies on a cycle.
        pending = {ident for ident in self.deps}
        while pending:
            ready = {ident for ident in pending if not set(as_list(self.dep(ident).get("depends_on"))) & pending}
            if not ready:
                break
            pending -= ready
        for ident in sorted(pending, key=self.deps.__getitem__):
            self.add(
                3, ("dependencies", self.deps[ident], "depends_on"), f"dependency '{ident}' lies on a dependency cycle"
            )

    def workspace_records(self) -> None:
        for i, w in enumerate(self.lists["workspaces"]):
            w = as_dict(w)
            owner = f"workspace '{w.get('id')}'"
            if not self.ix.has("environments", w.get("environment_id")):
                self.add(
                    4,
                    ("workspaces", i, "environment_id"),
                    f"{owner} names environment '{w.get('environment_id')}', which is not in environments",
                )
            base = w.get("base_snapshot_id")
            if base is not None:
                if base not in self.workspaces:
                    self.add(
                        4,
                        ("workspaces", i, "base_snapshot_id"),
                        f"{owner} builds on '{base}', which is not a workspace",
                    )
                elif self.workspace(base).get("root_id") != w.get("root_id"):
                    self.add(
                        4,
                        ("workspaces", i, "base_snapshot_id"),
                        f"{owner} builds on '{base}', a snapshot of another root",
                    )
            for j, entry in enumerate(as_list(w.get("entries"))):
                entry = as_dict(entry)
                self.path(5, ("workspaces", i, "entries", j, "path"), entry.get("path"), owner)
                if (
                    entry.get("kind") == "file"
                    and "resource_id" in entry
                    and not self.ix.has("resources", entry["resource_id"])
                ):
                    self.add(
                        5,
                        ("workspaces", i, "entries", j, "resource_id"),
                        f"{owner} file '{entry.get('path')}' names resource '{entry['resource_id']}', "
                        "which is not in resources",
                    )
            for j, deletion in enumerate(as_list(w.get("deletions"))):
                self.path(5, ("workspaces", i, "deletions", j), deletion, owner)
            if isinstance(w.get("git"), dict):
                self.git(i, w["git"], owner)
        self.trees()

    def trees(self) -> None:
        """Build each workspace's tree from its base chain, in base-first order (rules 4 and 5)."""
        states: dict[str, dict[str, dict[str, Any]] | None] = {}

        def state(ident: str, chain: tuple[str, ...]) -> dict[str, dict[str, Any]] | None:
            if ident in states:
                return states[ident]
            i = self.workspaces[ident]
            w = self.workspace(ident)
            base = w.get("base_snapshot_id")
            entries: dict[str, dict[str, Any]] = {}
            if isinstance(base, str) and base in self.workspaces:
                if base in chain:
                    self.add(
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
                    self.add(5, where, f"workspace '{ident}' deletes '{deletion}', an excluded path")
                below = ordered[bisect_left(ordered, deletion + "/") : bisect_left(ordered, deletion + "0")]
                gone = [p for p in [deletion, *below] if p in entries]
                if not gone:
                    self.add(5, where, f"workspace '{ident}' deletes '{deletion}', which its base does not have")
                for p in gone:
                    del entries[p]
            seen: set[str] = set()
            for j, entry in enumerate(as_list(w.get("entries"))):
                entry = as_dict(entry)
                path = entry.get("path")
                if not isinstance(path, str):
                    continue
                if path in seen:
                    self.add(5, ("workspaces", i, "entries", j, "path"), f"workspace '{ident}' lists '{path}' twice")
                seen.add(path)
                entries[path] = entry
            for path in entries:
                parts = path.split("/")
                for n in range(1, len(parts)):
                    parent = "/".join(parts[:n])
                    if parent in entries and entries[parent].get("kind") != "directory":
                        self.add(
                            5,
                            ("workspaces", i, "entries"),
                            f"workspace '{ident}' has '{path}' under '{parent}', which is not a directory",
                        )
            states[ident] = entries
            return entries

        for ident in self.workspaces:
            state(ident, ())

    def git(self, i: int, g: dict[str, Any], owner: str) -> None:
        base = ("workspaces", i, "git")
        length = _OID_LENGTH.get(g.get("object_format"))  # type: ignore[arg-type]
        if length is None:
            self.add(
                6,
                (*base, "object_format"),
                f"{owner} uses Git object format '{g.get('object_format')}'; expected sha1 or sha256",
            )

        def oid(where: tuple[str | int, ...], value: Any) -> None:
            if length is not None and isinstance(value, str) and not (len(value) == length and _HEX.fullmatch(value)):
                self.add(6, (*base, *where), f"{owner} Git object id '{value}' is not {length} lowercase hex digits")

        oid(("head",), g.get("head"))
        self.resource_refs(6, (*base, "bundle_resource_ids"), g.get("bundle_resource_ids"), owner)
        stages: dict[str, set[Any]] = {}
        for j, entry in enumerate(as_list(g.get("index_entries"))):
            entry = as_dict(entry)
            where = ("index_entries", j)
            path = entry.get("path")
            self.path(6, (*base, *where, "path"), path, owner)
            oid((*where, "object_id"), entry.get("object_id"))
            mine = stages.setdefault(path, set()) if isinstance(path, str) else set()
            stage = entry.get("stage")
            if stage in mine:
                self.add(6, (*base, *where, "stage"), f"{owner} Git index lists stage {stage} of '{path}' twice")
            mine.add(stage)
            if 0 in mine and len(mine) > 1:
                self.add(6, (*base, *where, "stage"), f"{owner} Git index mixes a resolved and unmerged '{path}'")
            if entry.get("mode") not in _GIT_MODES:
                self.add(
                    6, (*base, *where, "mode"), f"{owner} Git index mode '{entry.get('mode')}' is not a Git file mode"
                )
            rid, object_id = entry.get("resource_id"), entry.get("object_id")
            if rid is None and object_id is None:
                self.add(6, (*base, *where), f"{owner} Git index entry '{path}' names neither a resource nor an object")
            if rid is None:
                continue
            if not self.ix.has("resources", rid):
                self.add(
                    6,
                    (*base, *where, "resource_id"),
                    f"{owner} Git index names resource '{rid}', which is not in resources",
                )
                continue
            raw = self.ix.resource_bytes(rid)
            if raw is not None and isinstance(object_id, str) and length is not None:
                digest = hashlib.new(g["object_format"], b"blob %d\0" % len(raw) + raw).hexdigest()
                if digest != object_id:
                    self.add(
                        6,
                        (*base, *where, "object_id"),
                        f"{owner} Git blob '{path}' hashes to {digest}, not {object_id}",
                    )
        for j, pre in enumerate(as_list(g.get("prerequisites"))):
            pre = as_dict(pre)
            oid(("prerequisites", j, "object_id"), pre.get("object_id"))
            if pre.get("availability") == "embedded" and "resource_id" not in pre:
                self.add(6, (*base, "prerequisites", j), f"{owner} embedded Git prerequisite names no resource")
            if "resource_id" in pre and not self.ix.has("resources", pre["resource_id"]):
                self.add(
                    6,
                    (*base, "prerequisites", j, "resource_id"),
                    f"{owner} Git prerequisite names resource '{pre['resource_id']}', which is not in resources",
                )
        for j, module in enumerate(as_list(g.get("submodules"))):
            module = as_dict(module)
            self.path(6, (*base, "submodules", j, "path"), module.get("path"), owner)
            oid(("submodules", j, "object_id"), module.get("object_id"))
            if module.get("dependency_id") not in self.deps:
                self.add(
                    6,
                    (*base, "submodules", j, "dependency_id"),
                    f"{owner} submodule names dependency '{module.get('dependency_id')}', which is not a dependency",
                )
        for j, dep in enumerate(as_list(g.get("lfs_dependency_ids"))):
            if dep not in self.deps:
                self.add(
                    6,
                    (*base, "lfs_dependency_ids", j),
                    f"{owner} names LFS dependency '{dep}', which is not a dependency",
                )

    def operation_records(self) -> None:
        for i, op in enumerate(self.lists["operations"]):
            op = as_dict(op)
            owner = f"operation '{op.get('id')}'"
            recovery = as_dict(op.get("recovery"))
            handler = recovery.get("handler_dependency_id")
            if handler is not None and handler not in self.deps:
                self.add(
                    7,
                    ("operations", i, "recovery", "handler_dependency_id"),
                    f"{owner} names recovery handler '{handler}', which is not a dependency",
                )
            self.resource_refs(7, ("operations", i, "evidence_resource_ids"), op.get("evidence_resource_ids"), owner)
            self.resource_refs(
                7, ("operations", i, "recovery", "evidence_resource_ids"), recovery.get("evidence_resource_ids"), owner
            )
            if recovery.get("strategy") == "restart" and not (
                op.get("replay") == "idempotent"
                and recovery.get("idempotency_ref")
                and as_list(recovery.get("evidence_resource_ids"))
            ):
                self.add(
                    7,
                    ("operations", i, "recovery", "strategy"),
                    f"{owner} may restart only with idempotent replay, an idempotency_ref and recovery evidence",
                )


class Plan:
    """One plan's agreement with its checkpoint, context, configuration and selections (rules 8-20)."""

    def __init__(self, profile: Profile, k: int, plan: dict[str, Any]) -> None:
        self.pr, self.ix, self.k, self.plan = profile, profile.ix, k, plan
        self.owner = f"plan '{plan.get('id')}'"

    def add(self, rule: int, where: tuple[str | int, ...], message: str) -> None:
        self.pr.add(rule, ("plans", self.k, *where), f"{self.owner} {message}")

    def check(self) -> None:
        plan, ix = self.plan, self.ix
        self.selections()
        checkpoint_id = plan.get("checkpoint_id")
        if not isinstance(checkpoint_id, str) or not ix.has("checkpoints", checkpoint_id):
            self.add(8, ("checkpoint_id",), f"names checkpoint '{checkpoint_id}', which is not in checkpoints")
            return
        cp = ix.record("checkpoints", checkpoint_id)
        at = cp.get("at_event_id")
        branch_ok = ix.has("branches", cp.get("branch_id"))
        if branch_ok and ix.record("branches", cp["branch_id"]).get("head_event_id") != at:
            self.add(
                8, ("checkpoint_id",), f"continues from checkpoint '{checkpoint_id}', which is not at its branch head"
            )
        for field in ("context_id", "configuration_id"):
            if plan.get(field) != cp.get(field):
                self.add(8, (field,), f"names {field} '{plan.get(field)}' but its checkpoint names '{cp.get(field)}'")
        self.workspace_selection(at)
        self.paths()
        context_ok = ix.has("contexts", plan.get("context_id"))
        config_ok = ix.has("configurations", plan.get("configuration_id"))
        if not context_ok:
            self.add(9, ("context_id",), f"names context '{plan.get('context_id')}', which is not in contexts")
        if not config_ok:
            self.add(
                9,
                ("configuration_id",),
                f"names configuration '{plan.get('configuration_id')}', which is not in configurations",
            )
        config = ix.record("configurations", plan["configuration_id"]) if config_ok else None
        if context_ok:
            ctx = ix.record("contexts", plan["context_id"])
            if (
                ctx.get("purpose") != "continuation"
                or ctx.get("at_event_id") != at
                or ctx.get("branch_id") != cp.get("branch_id")
            ):
                self.add(
                    9,
                    ("context_id",),
                    f"needs a continuation context at its checkpoint's boundary; context '{ctx.get('id')}' is a "
                    f"{ctx.get('purpose')} context at '{ctx.get('at_event_id')}' on branch '{ctx.get('branch_id')}'",
                )
            if ctx.get("configuration_id") != plan.get("configuration_id"):
                self.add(
                    9,
                    ("context_id",),
                    f"context '{ctx.get('id')}' names configuration '{ctx.get('configuration_id')}', "
                    f"not the plan's '{plan.get('configuration_id')}'",
                )
            if branch_ok:
                self.accounting(ctx, ix.record("branches", cp["branch_id"]))
            calls, still_open = self.context_tools(ctx)
            self.open_calls(cp, calls, still_open)
        self.next_action(cp)
        if config is not None:
            self.configuration(config)
            self.services(config)
            self.requirements(cp, config)

    # -- selections ------------------------------------------------------------------------

    def selections(self) -> None:
        pr, plan = self.pr, self.plan
        for field, ids, what in (
            ("workspace_ids", pr.workspaces, "workspace"),
            ("dependency_ids", pr.deps, "dependency"),
            ("service_binding_ids", pr.services, "service binding"),
            ("operation_ids", pr.operations, "operation"),
        ):
            for j, ident in enumerate(as_list(plan.get(field))):
                if ident not in ids:
                    self.add(10, (field, j), f"selects {what} '{ident}', which the profile does not declare")
        native = plan.get("native_import_id")
        if native is not None and native not in pr.natives:
            self.add(10, ("native_import_id",), f"selects native import '{native}', which the profile does not declare")
        if isinstance(native, str) and native in pr.natives:
            native_record = as_dict(pr.lists["native_imports"][pr.natives[native]])
            pr.resource_refs(
                20,
                ("native_imports", pr.natives[native], "resource_ids"),
                native_record.get("resource_ids"),
                f"native import '{native}'",
            )
        pr.resource_refs(
            20,
            ("plans", self.k, "boundary", "evidence_resource_ids"),
            as_dict(plan.get("boundary")).get("evidence_resource_ids"),
            self.owner,
        )
        # Closure: everything a selected record needs is selected too.
        self.selected_deps = {d for d in as_list(plan.get("dependency_ids")) if d in pr.deps}
        for j, ident in enumerate(as_list(plan.get("dependency_ids"))):
            if ident in pr.deps:
                missing = [d for d in as_list(pr.dep(ident).get("depends_on")) if self.unselected(d)]
                if missing:
                    self.add(
                        11, ("dependency_ids", j), f"selects dependency '{ident}' without its prerequisites {missing}"
                    )
        for j, ident in enumerate(as_list(plan.get("service_binding_ids"))):
            if ident in pr.services:
                service = as_dict(pr.lists["service_bindings"][pr.services[ident]])
                missing = [d for d in as_list(service.get("dependency_ids")) if self.unselected(d)]
                if missing:
                    self.add(
                        11,
                        ("service_binding_ids", j),
                        f"selects service binding '{ident}' without its dependencies {missing}",
                    )
        for j, ident in enumerate(as_list(plan.get("operation_ids"))):
            if ident in pr.operations:
                op = as_dict(pr.lists["operations"][pr.operations[ident]])
                handler = as_dict(op.get("recovery")).get("handler_dependency_id")
                if handler is not None and self.unselected(handler):
                    self.add(
                        11,
                        ("operation_ids", j),
                        f"selects operation '{ident}' without its recovery handler '{handler}'",
                    )
        for j, ident in enumerate(as_list(plan.get("workspace_ids"))):
            current: str | None = ident if ident in pr.workspaces else None
            visited: set[str] = set()
            while current is not None and current not in visited:
                visited.add(current)
                w = pr.workspace(current)
                git = as_dict(w.get("git"))
                needed = as_list(git.get("lfs_dependency_ids")) + [
                    as_dict(m).get("dependency_id") for m in as_list(git.get("submodules"))
                ]
                missing = [d for d in needed if self.unselected(d)]
                if missing:
                    self.add(
                        11, ("workspace_ids", j), f"selects workspace '{ident}' without its Git dependencies {missing}"
                    )
                base = w.get("base_snapshot_id")
                current = base if isinstance(base, str) and base in pr.workspaces else None

    def unselected(self, dep: Any) -> bool:
        """A declared dependency the plan leaves out (an undeclared one is reported where it is named)."""
        return dep in self.pr.deps and dep not in self.selected_deps

    def workspace_selection(self, at: Any) -> None:
        pr = self.pr
        self.roots: set[Any] = set()
        for j, ident in enumerate(as_list(self.plan.get("workspace_ids"))):
            if ident not in pr.workspaces:
                continue
            w = pr.workspace(ident)
            if w.get("root_id") in self.roots:
                self.add(12, ("workspace_ids", j), f"selects a second workspace for root '{w.get('root_id')}'")
            self.roots.add(w.get("root_id"))
            if w.get("at_event_id") != at:
                self.add(
                    12,
                    ("workspace_ids", j),
                    f"selects workspace '{ident}' at '{w.get('at_event_id')}', not at its checkpoint's boundary '{at}'",
                )

    def paths(self) -> None:
        cwd = self.plan.get("cwd")
        if isinstance(cwd, dict):
            if cwd.get("root_id") not in self.roots:
                self.add(
                    13, ("cwd", "root_id"), f"works in root '{cwd.get('root_id')}', which no selected workspace binds"
                )
            self.pr.path(
                13, ("plans", self.k, "cwd", "relative_path"), cwd.get("relative_path"), self.owner, empty=True
            )
        for j, ref in enumerate(as_list(self.plan.get("path_references"))):
            ref = as_dict(ref)
            where = ("path_references", j)
            if ref.get("root_id") not in self.roots:
                self.add(
                    13,
                    (*where, "root_id"),
                    f"maps a path into root '{ref.get('root_id')}', which no selected workspace binds",
                )
            self.pr.path(
                13, ("plans", self.k, *where, "relative_path"), ref.get("relative_path"), self.owner, empty=True
            )
            kind, ident = ref.get("entity_type"), str(ref.get("entity_id"))
            if kind == "dependency":
                entity = self.pr.dep(ident) if ident in self.pr.deps else None
            elif kind in _PATH_ENTITIES and self.ix.has(_PATH_ENTITIES[kind], ident):
                entity = self.ix.record(_PATH_ENTITIES[kind], ident)
            else:
                entity = None
            if entity is None:
                self.add(13, (*where, "entity_id"), f"maps a path of {kind} '{ident}', which does not exist")
                continue
            selector = ref.get("json_pointer")
            value = (
                _resolve_pointer(entity, selector)
                if isinstance(selector, str) and selector.startswith("/")
                else _MISSING
            )
            if not isinstance(value, str):
                self.add(
                    13,
                    (*where, "json_pointer"),
                    f"maps '{selector}' of {kind} '{ident}', which is not a string field of that record",
                )

    # -- context -------------------------------------------------------------------------------

    def accounting(self, ctx: dict[str, Any], branch: dict[str, Any]) -> None:
        inputs = {as_dict(x).get("id") for x in as_list(ctx.get("inputs"))}
        history = [e for e in as_list(branch.get("event_ids")) if isinstance(e, str)]
        wanted = set(history)
        seen: set[str] = set()
        for j, entry in enumerate(as_list(self.plan.get("context_accounting"))):
            entry = as_dict(entry)
            eid = entry.get("event_id")
            where = ("context_accounting", j)
            if eid in seen:
                self.add(14, (*where, "event_id"), f"accounts for event '{eid}' twice")
            elif eid not in wanted:
                self.add(14, (*where, "event_id"), f"accounts for event '{eid}', which is not in its branch's history")
            if isinstance(eid, str):
                seen.add(eid)
            for m, iid in enumerate(as_list(entry.get("input_ids"))):
                if iid not in inputs:
                    self.add(
                        14,
                        (*where, "input_ids", m),
                        f"accounts event '{eid}' to input '{iid}', which context '{ctx.get('id')}' lacks",
                    )
        missing = [e for e in history if e not in seen]
        if missing:
            shown = ", ".join(f"'{e}'" for e in missing[:5]) + (
                f" and {len(missing) - 5} more" if len(missing) > 5 else ""
            )
            self.add(
                14,
                ("context_accounting",),
                f"does not account for branch events {shown}; every event through the head needs a disposition",
            )

    def context_tools(self, ctx: dict[str, Any]) -> tuple[set[Any], set[Any]]:
        """Check typed inputs against their source events; return the context's calls, and those it leaves open."""
        c = self.ix.positions["contexts"][ctx["id"]]
        calls: set[Any] = set()
        closed: set[Any] = set()
        for j, item in enumerate(as_list(ctx.get("inputs"))):
            item = as_dict(item)
            kind = item.get("kind")
            if kind not in _TOOL_FIELDS:
                continue
            call_id = item.get("call_id")
            if kind == "tool_call":
                calls.add(call_id)
            elif item.get("terminal") is True:
                closed.add(call_id)
            for m, ref in enumerate(as_list(item.get("source_events"))):
                event = self.ix.event(ref.get("event_id")) if is_local(ref) else None
                if event is None:
                    continue  # unresolved local sources are rule 68's
                data = as_dict(event.get("data"))
                where = pointer("contexts", c, "inputs", j, "source_events", m, "event_id")
                if event.get("kind") != kind or data.get("call_id") != call_id:
                    self.pr.report.add(
                        "ASIF-C015",
                        where,
                        f"context '{ctx['id']}' {kind} input '{item.get('id')}' cites {event.get('kind')} event "
                        f"'{event.get('id')}' of call '{data.get('call_id')}'; the correlation changed",
                    )
                elif "transformation" not in item:
                    changed = [f for f in _TOOL_FIELDS[kind] if not json_equal(item.get(f), data.get(f, _MISSING))]
                    if changed:
                        self.pr.report.add(
                            "ASIF-C015",
                            pointer("contexts", c, "inputs", j, changed[0]),
                            f"context '{ctx['id']}' input '{item.get('id')}' differs from event '{event.get('id')}' "
                            f"in {', '.join(changed)} without stating a transformation",
                        )
        return calls, calls - closed

    def open_calls(self, cp: dict[str, Any], calls: set[Any], context_open: set[Any]) -> None:
        pr = self.pr
        bound: dict[Any, str] = {}
        for j, ident in enumerate(as_list(self.plan.get("operation_ids"))):
            if ident not in pr.operations:
                continue
            op = as_dict(pr.lists["operations"][pr.operations[ident]])
            if "call_id" not in op:
                continue
            call_id = op["call_id"]
            if call_id not in calls:
                self.add(
                    16,
                    ("operation_ids", j),
                    f"selects operation '{ident}' for call '{call_id}', which its context does not contain",
                )
            if call_id in bound:
                self.add(
                    16,
                    ("operation_ids", j),
                    f"selects operations '{bound[call_id]}' and '{ident}' for one call '{call_id}'",
                )
            bound.setdefault(call_id, ident)
        open_calls = {as_dict(x).get("call_id") for x in as_list(cp.get("open_calls"))}
        for call_id in sorted(map(str, open_calls - bound.keys())):
            self.add(16, ("operation_ids",), f"selects no operation for open call '{call_id}' of its checkpoint")
        if open_calls != context_open:
            self.add(
                16,
                ("checkpoint_id",),
                f"checkpoint open calls {sorted(map(str, open_calls))} differ from the calls its context leaves "
                f"open {sorted(map(str, context_open))}",
            )

    def next_action(self, cp: dict[str, Any]) -> None:
        action = as_dict(self.plan.get("next_action"))
        kind = action.get("kind")
        if kind == "reconcile_operation" and action.get("operation_id") not in as_list(self.plan.get("operation_ids")):
            self.add(
                17,
                ("next_action", "operation_id"),
                f"reconciles operation '{action.get('operation_id')}', which it does not select",
            )
        if kind == "await_decision":
            pending = {as_dict(x).get("request_id") for x in as_list(cp.get("open_decisions"))}
            if action.get("request_id") not in pending:
                self.add(
                    17,
                    ("next_action", "request_id"),
                    f"awaits decision '{action.get('request_id')}', which its checkpoint does not hold open",
                )
        if kind == "resume_native" and (
            self.plan.get("native_import_id") is None
            or action.get("native_import_id") != self.plan.get("native_import_id")
        ):
            self.add(
                17,
                ("next_action", "native_import_id"),
                f"resumes native import '{action.get('native_import_id')}', not its own native import",
            )

    # -- configuration, services, requirements -----------------------------------------------

    def configuration(self, config: dict[str, Any]) -> None:
        pr, cid = self.pr, config.get("id")
        if cid not in pr.bindings:
            self.add(18, ("configuration_id",), f"has no configuration binding for configuration '{cid}'")
            return
        b = pr.bindings[cid]
        binding = as_dict(pr.lists["configuration_bindings"][b])
        where = ("configuration_bindings", b)
        rules = {as_dict(r).get("instruction_id"): as_dict(r) for r in as_list(binding.get("instruction_rules"))}
        order = as_list(binding.get("effective_order"))
        instructions = {as_dict(x).get("id") for x in as_list(config.get("instructions"))}
        if not (set(order) == instructions == set(rules)) or len(rules) != len(
            as_list(binding.get("instruction_rules"))
        ):
            pr.add(
                18,
                (*where, "instruction_rules"),
                f"configuration binding of '{cid}' must order and rule each of its instructions exactly once",
            )
        priorities = [rules[i].get("priority") for i in order if i in rules]
        numbers = [p for p in priorities if isinstance(p, (int, float)) and not isinstance(p, bool)]
        if numbers == priorities and priorities != sorted(priorities):
            pr.add(
                18,
                (*where, "effective_order"),
                f"configuration binding of '{cid}' orders instructions against their priorities",
            )
        policies = {as_dict(x).get("id") for x in as_list(config.get("policies"))}
        if set(as_list(binding.get("policy_ids"))) != policies:
            pr.add(
                18, (*where, "policy_ids"), f"configuration binding of '{cid}' must account for exactly its policies"
            )
        for j, rule in enumerate(as_list(binding.get("instruction_rules"))):
            scope = as_dict(as_dict(rule).get("scope"))
            if scope.get("kind") in ("root", "path_prefix") and scope.get("root_id") not in self.roots:
                pr.add(
                    18,
                    (*where, "instruction_rules", j, "scope", "root_id"),
                    f"instruction rule scope names root '{scope.get('root_id')}', which {self.owner} does not select",
                )
            if scope.get("kind") == "path_prefix":
                pr.path(
                    18,
                    (*where, "instruction_rules", j, "scope", "relative_path"),
                    scope.get("relative_path"),
                    "instruction rule scope",
                    empty=True,
                )

    def services(self, config: dict[str, Any]) -> None:
        handles = {as_dict(s).get("handle") for s in as_list(config.get("secret_requirements"))}
        for ident in as_list(self.plan.get("service_binding_ids")):
            if ident not in self.pr.services:
                continue
            s = self.pr.services[ident]
            for j, handle in enumerate(as_list(as_dict(self.pr.lists["service_bindings"][s]).get("secret_handles"))):
                if handle not in handles:
                    self.pr.add(
                        19,
                        ("service_bindings", s, "secret_handles", j),
                        f"service binding '{ident}' uses secret handle '{handle}', which configuration "
                        f"'{config.get('id')}' of {self.owner} does not declare",
                    )

    def requirements(self, cp: dict[str, Any], config: dict[str, Any]) -> None:
        """The requirements a plan's assessment walks: those of its checkpoint, and of every environment
        it reaches (its configuration's, its workspaces', those requirements name), have unique ids;
        checkpoint requirements resolve against the plan's configuration (capabilities, secrets)."""
        c = self.ix.positions["checkpoints"][cp["id"]]
        capabilities = {as_dict(x).get("id") for x in as_list(config.get("capabilities"))}
        handles = {as_dict(s).get("handle") for s in as_list(config.get("secret_requirements"))}
        self._unique_requirements(("checkpoints", c), cp, f"checkpoint '{cp.get('id')}'")
        reached = [e for e in as_list(config.get("environment_ids"))]
        reached += [
            self.pr.workspace(w).get("environment_id")
            for w in as_list(self.plan.get("workspace_ids"))
            if w in self.pr.workspaces
        ]
        for j, requirement in enumerate(as_list(cp.get("requirements"))):
            requirement = as_dict(requirement)
            reached.append(requirement.get("environment_id"))
            for field, known in (("capability_id", capabilities), ("secret_handle", handles)):
                if field in requirement and requirement[field] not in known:
                    self.pr.report.add(
                        "ASIF-C020",
                        pointer("checkpoints", c, "requirements", j, field),
                        f"checkpoint requirement '{requirement.get('id')}' names {field} '{requirement[field]}', "
                        f"which configuration '{config.get('id')}' of {self.owner} does not declare",
                    )
        for env in dict.fromkeys(e for e in reached if isinstance(e, str) and self.ix.has("environments", e)):
            e = self.ix.positions["environments"][env]
            self._unique_requirements(("environments", e), self.ix.record("environments", env), f"environment '{env}'")

    def _unique_requirements(self, base: tuple[str | int, ...], record: dict[str, Any], owner: str) -> None:
        seen: set[Any] = set()
        for j, requirement in enumerate(as_list(record.get("requirements"))):
            ident = as_dict(requirement).get("id")
            if ident in seen:
                self.pr.report.add(
                    "ASIF-C020",
                    pointer(*base, "requirements", j, "id"),
                    f"{owner} lists requirement '{ident}' twice, so {self.owner} cannot assess each once",
                )
            seen.add(ident)
