"""Minimal stand-ins for entities that ASIF records carried in an export reference but that the
export does not hold (for example an ASIF session written with ``--no-residual``: its tools and
resources had no continuity home). ASIF requires every local reference to resolve; a stand-in
says only that the entity existed, never what it was, and each one is reported. Likewise a
carried extension that must be understood is declared in ``required_features`` again."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from asif_convert import ir


def add_missing(doc: ir.Document, report: Callable[[str, str], None]) -> None:
    have = {
        "participant": {p.id for p in doc.participants},
        "tool": {t.id for t in doc.tools},
        "resource": {r.id for r in doc.resources},
        "execution": {e.id for e in doc.executions},
        "context": {c.id for c in doc.contexts},
        "configuration": {c["id"] for c in doc.extras.get("configurations", ())},
    }
    home = {eid: b.id for b in reversed(doc.branches) for eid in b.event_ids}
    stand_ins: set[str] = set()
    for ev in doc.events:
        for ref_type, rid in _references(ev):
            if rid in have[ref_type]:
                continue
            have[ref_type].add(rid)
            report(ref_type, rid)
            _add(doc, ref_type, rid, home.get(ev.id) or doc.branches[0].id, have)
            if ref_type == "resource":
                stand_ins.add(rid)
        body = ev.body
        if isinstance(body, ir.Extension) and body.interpretation_required and body.type not in doc.required_features:
            doc.required_features.append(body.type)  # ASIF: an extension that must be understood is declared
            report("event", ev.id)
        for src in ev.provenance.sources or ():
            if src.resource_id in stand_ins and src.locator is not ir.UNSET:
                src.locator = ir.UNSET  # it located bytes the stand-in does not have
                report("event", ev.id)


def _references(ev: ir.Event) -> Iterator[tuple[str, str]]:
    yield "participant", ev.actor_id
    body = ev.body
    for part in ir.parts_of(body):
        if isinstance(part, ir.ResourcePart | ir.OpaquePart):
            yield "resource", part.resource_id
    for src in ev.provenance.sources or ():
        yield "resource", src.resource_id
    if isinstance(body, ir.ToolCall):
        yield "tool", body.tool_id
    elif isinstance(body, ir.ResourceChange):
        yield "resource", body.resource_id
        if body.previous_resource_id is not ir.UNSET:
            yield "resource", body.previous_resource_id
    elif isinstance(body, ir.ConfigurationChange):
        yield "configuration", body.configuration_id
    elif isinstance(body, ir.ExecutionTransition):
        yield "execution", body.execution_id
    elif isinstance(body, ir.ContextCheckpoint):
        yield "context", body.context_id
        if body.replaced_context_id is not ir.UNSET:
            yield "context", body.replaced_context_id


def _add(doc: ir.Document, ref_type: str, rid: str, branch_id: str, have: dict[str, set[str]]) -> None:
    why = "Referenced by a record of the export, which does not hold this entity."
    if ref_type == "participant":
        doc.participants.append(ir.Participant(id=rid, kind="unknown"))
    elif ref_type == "tool":
        doc.tools.append(ir.Tool(id=rid, name=rid, description="", input_schema=True))
    elif ref_type == "resource":
        doc.resources.append(ir.Resource(id=rid, media_type="application/octet-stream", availability="unavailable",
                                         purpose="unknown", explanation=why))
    elif ref_type == "execution":
        if "runtime" not in have["participant"]:
            have["participant"].add("runtime")
            doc.participants.append(ir.Participant(id="runtime", kind="service"))
        doc.executions.append(ir.Execution(id=rid, participant_id="runtime", status="unknown"))
    elif ref_type == "context":
        doc.contexts.append(ir.Context(id=rid, branch_id=branch_id, at_event_id=None, purpose="model_request",
                                       fidelity="unknown"))
    else:
        doc.extras.setdefault("configurations", []).append(
            {"id": rid, "instructions": [], "capabilities": [], "policies": [], "secret_requirements": [],
             "knowledge": "unknown"})
