"""The profile's records: ids, the dependency graph and operations (rules 1-3 and 7), and the
lookups the other checks share."""

from __future__ import annotations

from typing import Any

from asif_convert._errors import pointer
from asif_convert._validation.semantic.index import Index, Report, as_dict, as_list
from asif_convert._validation.semantic.resources import path_problem


def _ids(records: list[Any], key: str = "id") -> dict[str, int]:
    """id -> position of its first record."""
    out: dict[str, int] = {}
    for i, record in enumerate(records):
        ident = as_dict(record).get(key)
        if isinstance(ident, str):
            out.setdefault(ident, i)
    return out


class Profile:
    """The profile of one document: its record lists, their ids, and how a finding is reported."""

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

