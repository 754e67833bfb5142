"""Local references: actors, executions, provenance, content parts, event targets, requirements."""

from __future__ import annotations

from typing import Any

from asif_convert._errors import pointer
from asif_convert._validation.semantic.index import (
    MISSING,
    Index,
    Path,
    Report,
    as_dict,
    as_list,
    is_local,
    resolve_pointer,
    resource_parts,
    whole,
)

# Event kind -> (data field, collection it names, required?) for rule 57.
EVENT_TARGETS: dict[str, tuple[tuple[str, str], ...]] = {
    "context_checkpoint": (("context_id", "contexts"), ("replaced_context_id", "contexts")),
    "configuration_change": (("configuration_id", "configurations"),),
    "execution_transition": (("execution_id", "executions"),),
    "resource_change": (("resource_id", "resources"), ("previous_resource_id", "resources")),
}

# Usage scope -> collection its scope_id names; "turn" and "session" have no local collection.
USAGE_SCOPES = {"event": "events", "execution": "executions"}



def check(ix: Index, report: Report) -> None:
    participants(ix, report)
    executions(ix, report)
    events(ix, report)
    other_parts(ix, report)
    other_provenance(ix, report)
    requirements(ix, report)


def participants(ix: Index, report: Report) -> None:
    parent: dict[str, str] = {}
    first = ix.positions["participants"]
    for i, p in enumerate(as_list(ix.doc.get("participants"))):
        p = as_dict(p)
        pid = p.get("parent_participant_id")
        if pid is None:
            continue
        if not ix.has("participants", pid):
            report.add(
                15,
                pointer("participants", i, "parent_participant_id"),
                f"participant '{p.get('id')}' names parent '{pid}', which is not a participant",
            )
        elif first.get(p.get("id")) == i:
            parent[p["id"]] = pid
    # Each participant has at most one parent, so following parent links finds every cycle in O(n).
    state: dict[str, int] = {}  # 1 = on the current trail, 2 = done
    for start in parent:
        trail: list[str] = []
        node = start
        while node in parent and node not in state:
            state[node] = 1
            trail.append(node)
            node = parent[node]
        if state.get(node) == 1:
            cycle = trail[trail.index(node) :]
            report.add(
                15,
                pointer("participants", first[trail[-1]], "parent_participant_id"),
                "participant parent links form a cycle: " + " -> ".join(cycle + [node]),
            )
        for member in trail:
            state[member] = 2


def executions(ix: Index, report: Report) -> None:
    for i, x in enumerate(as_list(ix.doc.get("executions"))):
        x = as_dict(x)
        if not ix.has("participants", x.get("participant_id")):
            report.add(
                16,
                pointer("executions", i, "participant_id"),
                f"execution '{x.get('id')}' names participant '{x.get('participant_id')}', which is not declared",
            )
        for j, cid in enumerate(as_list(x.get("context_ids"))):
            if not ix.has("contexts", cid):
                report.add(
                    16,
                    pointer("executions", i, "context_ids", j),
                    f"execution '{x.get('id')}' names context '{cid}', which is not in contexts",
                )
        usage(ix, report, x.get("usage"), ("executions", i, "usage"))


def events(ix: Index, report: Report) -> None:
    # Runs once per event: the collections are looked up directly (``Index.has`` is the same test).
    actors, executions = ix.positions["participants"], ix.positions["executions"]
    for i, event in enumerate(ix.events):
        eid, actor = event.get("id"), event.get("actor_id")
        if not (isinstance(actor, str) and actor in actors):
            report.add(
                14,
                pointer("events", i, "actor_id"),
                f"event '{eid}' names actor '{actor}', which is not a declared participant",
            )
        execution = event.get("execution_id")
        if "execution_id" in event and not (isinstance(execution, str) and execution in executions):
            report.add(
                17,
                pointer("events", i, "execution_id"),
                f"event '{eid}' names execution '{execution}', which is not in executions",
            )
        value = event.get("provenance")
        if isinstance(value, dict) and ("inputs" in value or "sources" in value):  # else it names nothing
            provenance(ix, report, value, ("events", i, "provenance"), f"event '{eid}'")
        data = event.get("data")
        if not isinstance(data, dict):
            continue
        for field in ("parts", "prompt", "answer"):
            if field in data:
                parts(ix, report, data[field], ("events", i, "data", field), f"event '{eid}'")
        for field, collection in EVENT_TARGETS.get(event.get("kind"), ()):
            if field in data and not ix.has(collection, data[field]):
                report.add(
                    57,
                    pointer("events", i, "data", field),
                    f"{event.get('kind')} event '{eid}' names {field} '{data[field]}', which is not in {collection}",
                )


def parts(ix: Index, report: Report, values: Any, base: Path, owner: str) -> None:
    for j, rid in resource_parts(values):
        if rid not in ix.resources:
            report.add(
                32,
                pointer(*base, j, "resource_id"),
                f"{owner} has a part referencing resource '{rid}', which is not in resources",
            )


def other_parts(ix: Index, report: Report) -> None:
    doc = ix.doc
    parts(ix, report, as_dict(doc.get("session")).get("objective"), ("session", "objective"), "session objective")
    for c, config in enumerate(as_list(doc.get("configurations"))):
        for k, instruction in enumerate(as_list(as_dict(config).get("instructions"))):
            instruction = as_dict(instruction)
            owner = f"instruction '{instruction.get('id')}'"
            parts(ix, report, instruction.get("parts"), ("configurations", c, "instructions", k, "parts"), owner)
    for c, context in enumerate(as_list(doc.get("contexts"))):
        for j, item in enumerate(as_list(as_dict(context).get("inputs"))):
            item = as_dict(item)
            owner = f"context '{as_dict(context).get('id')}' input '{item.get('id')}'"
            parts(ix, report, item.get("parts"), ("contexts", c, "inputs", j, "parts"), owner)
    for k, binding in enumerate(as_list(doc.get("external_bindings"))):
        binding = as_dict(binding)
        if binding.get("kind") == "request":
            prompt = as_dict(binding.get("descriptor")).get("prompt")
            owner = f"external request binding '{binding.get('id')}'"
            parts(ix, report, prompt, ("external_bindings", k, "descriptor", "prompt"), owner)


def other_provenance(ix: Index, report: Report) -> None:
    doc = ix.doc
    for c, config in enumerate(as_list(doc.get("configurations"))):
        for k, instruction in enumerate(as_list(as_dict(config).get("instructions"))):
            instruction = as_dict(instruction)
            base = ("configurations", c, "instructions", k, "provenance")
            provenance(ix, report, instruction.get("provenance"), base, f"instruction '{instruction.get('id')}'")
    for r, resource in enumerate(as_list(doc.get("resources"))):
        resource = as_dict(resource)
        if "provenance" in resource:
            where: Path = ("resources", r, "provenance")
            provenance(ix, report, resource["provenance"], where, f"resource '{resource.get('id')}'")
    usage(ix, report, doc.get("usage"), ("usage",))


def usage(ix: Index, report: Report, entries: Any, base: Path) -> None:
    for u, entry in enumerate(as_list(entries)):
        entry = as_dict(entry)
        collection = USAGE_SCOPES.get(entry.get("scope"))
        if collection and not ix.has(collection, entry.get("scope_id")):
            report.add(
                5,
                pointer(*base, u, "scope_id"),
                f"usage with scope '{entry.get('scope')}' names '{entry.get('scope_id')}', "
                f"which is not in {collection}",
            )
        provenance(ix, report, entry.get("provenance"), (*base, u, "provenance"), "usage entry")


def provenance(ix: Index, report: Report, value: Any, base: Path, owner: str) -> None:
    value = as_dict(value)
    for j, ref in enumerate(as_list(value.get("inputs"))):
        if is_local(ref) and not ix.has("events", ref.get("event_id")):
            report.add(
                28,
                pointer(*base, "inputs", j, "event_id"),
                f"{owner} provenance input names event '{ref.get('event_id')}', which is not in events",
            )
    for j, source in enumerate(as_list(value.get("sources"))):
        source = as_dict(source)
        rid = source.get("resource_id")
        if rid not in ix.resources:
            report.add(
                29,
                pointer(*base, "sources", j, "resource_id"),
                f"{owner} provenance source names resource '{rid}', which is not in resources",
            )
            continue
        locator = source.get("locator")
        if isinstance(locator, dict):
            where = (*base, "sources", j, "locator")
            if locator.get("syntax") == "bytes":
                _bytes_locator(ix, report, rid, locator, where, owner)
            elif locator.get("syntax") == "json_pointer":
                _json_pointer_locator(ix, report, rid, locator, where, owner)


def _count(value: Any) -> int | None:
    """A byte offset, length or size: a whole number (``7`` or ``7.0``) of zero or more."""
    number = whole(value)
    return number if number is not None and number >= 0 else None


def _bytes_locator(ix: Index, report: Report, rid: str, locator: dict, where: Path, owner: str) -> None:
    offset, length = _count(locator.get("offset")), _count(locator.get("length"))
    declared = _count(ix.resources[rid].get("bytes"))
    if offset is None or length is None:
        problem = "needs integer offset and length, both zero or more"
    elif declared is None:
        problem = f"points into resource '{rid}', which declares no bytes size"
    elif offset + length > declared:
        problem = f"spans bytes {offset}..{offset + length} but resource '{rid}' has only {declared}"
    else:
        return
    report.add(30, pointer(*where), f"{owner} bytes locator {problem}")


def _json_pointer_locator(ix: Index, report: Report, rid: str, locator: dict, where: Path, owner: str) -> None:
    selector = locator.get("value")
    if not isinstance(selector, str):
        report.add(31, pointer(*where, "value"), f"{owner} json_pointer locator needs a string value")
        return
    if ix.resource_bytes(rid) is None:
        return  # not embedded inline (or undecodable, which rule 75 reports): nothing to resolve against
    parsed, value = ix.resource_json(rid)
    if not parsed:
        report.add(
            31, pointer(*where, "value"), f"{owner} json_pointer points into resource '{rid}', which is not JSON"
        )
    elif resolve_pointer(value, selector) is MISSING:
        report.add(
            31,
            pointer(*where, "value"),
            f"{owner} json_pointer '{selector}' does not resolve in resource '{rid}'",
        )


def requirements(ix: Index, report: Report) -> None:
    capabilities: set[str] = set()
    handles: set[str] = set()
    for config in as_list(ix.doc.get("configurations")):
        config = as_dict(config)
        capabilities.update(as_dict(c).get("id") for c in as_list(config.get("capabilities")))
        handles.update(as_dict(s).get("handle") for s in as_list(config.get("secret_requirements")))
    known = {
        "resource_id": ("resources", ix.positions["resources"]),
        "environment_id": ("environments", ix.positions["environments"]),
        "capability_id": ("configuration capabilities", capabilities),
        "secret_handle": ("configuration secret requirements", handles),
    }
    for owner in ("checkpoints", "environments"):
        for i, record in enumerate(as_list(ix.doc.get(owner))):
            for k, requirement in enumerate(as_list(as_dict(record).get("requirements"))):
                requirement = as_dict(requirement)
                for field, (where, ids) in known.items():
                    if field in requirement and requirement[field] not in ids:
                        report.add(
                            5,
                            pointer(owner, i, "requirements", k, field),
                            f"requirement '{requirement.get('id')}' names {field} "
                            f"'{requirement[field]}', which is not among the {where}",
                        )
