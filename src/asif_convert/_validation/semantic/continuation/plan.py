"""Each plan's agreement with its checkpoint, continuation context, configuration and selections
(rules 8-20)."""

from __future__ import annotations

from typing import Any

from asif_convert._errors import pointer
from asif_convert._validation.semantic.continuation.profile import Profile
from asif_convert._validation.semantic.index import MISSING, as_dict, as_list, is_local, json_equal, resolve_pointer

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
                resolve_pointer(entity, selector)
                if isinstance(selector, str) and selector.startswith("/")
                else MISSING
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
                    changed = [f for f in _TOOL_FIELDS[kind] if not json_equal(item.get(f), data.get(f, MISSING))]
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
