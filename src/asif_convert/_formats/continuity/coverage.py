"""The 13 ASIF coverage records for a document read from an agent-continuity export: what the
export could say, and whether it said all of it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from asif_convert import ir
from asif_convert._formats.continuity import NAMESPACE

_UNSAID = "The agent-continuity export format does not record {}."
_DIALECTS = {"anthropic-messages": "Anthropic Messages", "openai-chat": "OpenAI Chat Completions",
             "openai-responses": "OpenAI Responses", "google-genai": "Google Gen AI"}


def coverage(doc: ir.Document, raw: dict[str, Any], mapped: Iterable[str]) -> list[ir.Coverage]:
    """``mapped``: the content dialects the reader recognised (and mapped) in message content_json."""
    kinds = {ev.kind for ev in doc.events}

    def has(*wanted: str) -> bool:
        return not kinds.isdisjoint(wanted)

    dialects = sorted({_DIALECTS.get(d, d) for d in mapped})
    # Where only the first two dialects occur, the wording earlier releases wrote (and their
    # documents hold) stays, so that those documents still convert back exactly.
    known = ("Anthropic Messages or OpenAI Chat Completions" if set(dialects) <= set(list(_DIALECTS.values())[:2])
             else "Anthropic Messages, OpenAI Chat Completions, OpenAI Responses or Google Gen AI")
    synthesized = any(b.native.get(NAMESPACE, {}).get("synthesized") for b in doc.branches)
    natives = [r for r in doc.resources if r.purpose == "native"]
    status: dict[str, tuple[ir.CoverageStatus, str]] = {
        "participants": ("partial", "Participants are synthesized from message roles (and a runtime actor "
                                    "for events); the export records no participant identities."),
        "conversation": ("complete", f"All {len(raw['messages'])} messages of the export are included."),
        "branches": (
            ("partial", "Some branches are synthesized or their divergence points inferred; see the "
                        "synthesized_branch and fork_point_* losses.")
            if synthesized or any(b.fork for b in doc.branches)
            else ("complete", f"All {len(doc.branches)} branches of the export are included.")
        ),
        "executions": (
            ("partial", "Executions are derived from run_id values only; their status is unknown.")
            if doc.executions else ("unavailable", _UNSAID.format("executions other than run ids"))
        ),
        "contexts": (
            ("partial", "Only the export's checkpoint summaries (and contexts named by carried ASIF records) "
                        "are included; model inputs were not exported.")
            if doc.contexts else ("unavailable", _UNSAID.format("model contexts"))
        ),
        "configuration": (
            ("partial", "Only configurations named by carried ASIF records are included, as placeholders.")
            if doc.extras.get("configurations") else ("unavailable", _UNSAID.format("configurations"))
        ),
        "tools": (
            ("partial", f"Tool calls and results found in message content ({known}) or carried as ASIF "
                        "records are included; tool contracts are unknown (input_schema true), and content in "
                        "other shapes was not interpreted.")
            if doc.tools or has("tool_call", "tool_result")
            else ("not_inspected", f"Message content in {' and '.join(dialects)} shape was interpreted and holds "
                                   "no tool calls; content in other shapes and continuity events are kept "
                                   "verbatim and were not interpreted.")
            if dialects
            else ("not_inspected", "Tool activity, if any, stays inside message content_json, which is "
                                   "kept verbatim and was not interpreted.")
        ),
        "decisions": (
            ("partial", "Decisions carried as ASIF records in the export are included.")
            if has("decision_request", "decision_resolution") else ("unavailable", _UNSAID.format("decisions"))
        ),
        "tasks": (
            ("partial", "Task updates carried as ASIF records in the export are included; earlier revisions "
                        "may be missing.")
            if has("task_update") else ("unavailable", _UNSAID.format("tasks"))
        ),
        "resources": (
            ("partial", "Some resources are described without their content (artifacts are exported by "
                        "path and metadata only).")
            if any(r.availability != "embedded" for r in doc.resources)
            else ("complete", f"All {len(doc.resources)} resources of the export are included.")
        ),
        "environment": ("unavailable", _UNSAID.format("environments")),
        "native": (
            ("partial", "Some native states were exported without a payload.")
            if any(r.availability != "embedded" for r in natives)
            else ("complete", f"All {len(natives)} native states of the export are included as native resources.")
        ),
        "usage": (
            ("partial", "Usage counters that provider message objects carry are included; the export "
                        "says nothing of other usage.")
            if doc.extras.get("usage") else ("unavailable", _UNSAID.format("usage counters"))
        ),
    }
    return [ir.Coverage(scope=s, status=status[s][0], detail=status[s][1]) for s in ir.SCOPES]
