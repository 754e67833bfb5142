"""Document-level identity: unique ids, required features, coverage claims, loss references, lineage."""

from __future__ import annotations

from asif_convert._errors import pointer
from asif_convert._validation.semantic.index import Index, Report, as_dict, as_list

SUPPORTED_FEATURES = frozenset({"asif.portable-continuation/0.2", "asif.streams/0.1", "asif.external-bindings/0.1"})

# Loss reference type -> collection it names (the types the spec resolves; others stay opaque).
LOSS_TYPES = {
    "event": "events",
    "resource": "resources",
    "context": "contexts",
    "configuration": "configurations",
    "participant": "participants",
    "execution": "executions",
    "branch": "branches",
    "checkpoint": "checkpoints",
    "tool": "tools",
    "environment": "environments",
}

_SINGULAR = {collection: singular for singular, collection in LOSS_TYPES.items()}
_SINGULAR["losses"] = "loss"


def check(ix: Index, report: Report) -> None:
    unique_ids(ix, report)
    required_features(ix, report)
    known_empty_coverage(ix, report)
    loss_references(ix, report)
    fork_lineage(ix, report)


def unique_ids(ix: Index, report: Report) -> None:
    for collection, i, ident, first in ix.duplicates:
        report.add(
            3,
            pointer(collection, i, "id"),
            f"{_SINGULAR[collection]} id '{ident}' is already used by /{collection}/{first}; "
            "give each record its own id",
        )


def required_features(ix: Index, report: Report) -> None:
    declared = as_list(ix.doc.get("required_features"))
    for i in ix.by_kind.get("extension", []):
        data = as_dict(ix.events[i].get("data"))
        if data.get("interpretation_required") is True and data.get("type") not in declared:
            report.add(
                8,
                pointer("events", i, "data", "type"),
                f"extension event '{ix.events[i].get('id')}' requires interpretation, so its type "
                f"'{data.get('type')}' must be listed in required_features",
            )
    for j, feature in enumerate(declared):
        if feature not in SUPPORTED_FEATURES:
            report.add(
                9,
                pointer("required_features", j),
                f"required feature '{feature}' is not supported by this validator; a consumer "
                "must not claim the capabilities it gates",
                warning=True,
            )


def _domains_with_data(ix: Index) -> dict[str, bool]:
    doc = ix.doc
    return {
        "participants": bool(as_list(doc.get("participants"))),
        "conversation": bool(ix.by_kind.get("message")),
        "branches": bool(as_list(doc.get("branches"))),
        "executions": bool(as_list(doc.get("executions"))),
        "contexts": bool(as_list(doc.get("contexts"))),
        "configuration": bool(as_list(doc.get("configurations"))),
        "tools": bool(as_list(doc.get("tools"))) or bool(ix.by_kind.get("tool_call")),
        "decisions": bool(ix.by_kind.get("decision_request")),
        "tasks": bool(ix.by_kind.get("task_update")),
        "resources": bool(ix.resources),
        "environment": bool(as_list(doc.get("environments"))),
        "native": any(r.get("purpose") == "native" for r in ix.resources.values()),
        "usage": bool(as_list(doc.get("usage"))),
    }


def known_empty_coverage(ix: Index, report: Report) -> None:
    entries = as_list(ix.doc.get("coverage"))
    if not any(as_dict(c).get("status") == "known_empty" for c in entries):
        return
    has_data = _domains_with_data(ix)
    for i, entry in enumerate(entries):
        entry = as_dict(entry)
        scope = entry.get("scope")
        if entry.get("status") == "known_empty" and has_data.get(scope, False):
            report.add(
                10,
                pointer("coverage", i, "status"),
                f"coverage scope '{scope}' is known_empty but the document has {scope} data; "
                "use complete or partial instead",
            )


def loss_references(ix: Index, report: Report) -> None:
    for i, loss in enumerate(as_list(ix.doc.get("losses"))):
        loss = as_dict(loss)
        for j, ref in enumerate(as_list(loss.get("references"))):
            ref = as_dict(ref)
            collection = LOSS_TYPES.get(ref.get("type"))
            if collection and not ix.has(collection, ref.get("id")):
                report.add(
                    12,
                    pointer("losses", i, "references", j, "id"),
                    f"loss '{loss.get('id')}' references {ref.get('type')} '{ref.get('id')}', "
                    f"which is not in {collection}",
                )


def fork_lineage(ix: Index, report: Report) -> None:
    session = as_dict(ix.doc.get("session"))
    for i, entry in enumerate(as_list(session.get("lineage"))):
        entry = as_dict(entry)
        if entry.get("relation") == "fork" and entry.get("session_id") == session.get("id"):
            report.add(
                13,
                pointer("session", "lineage", i, "session_id"),
                f"fork lineage names this document's own session '{session.get('id')}'; a fork gets a new session.id",
            )
