"""What a transcript says about its session beyond the conversation: the capture, the working
directories and git branches (environments), the client versions and permission modes
(configurations), and the coverage of each ASIF scope."""

from __future__ import annotations

from collections.abc import Iterable
from itertools import repeat
from typing import Any

from asif_convert import ir
from asif_convert._formats.claude_code import NAMESPACE
from asif_convert._lines import Lines


def capture(lines: Lines, session_id: str, version: str) -> ir.Capture:
    """A capture whose id is derived from the records' values (the same transcript, the same id)."""
    cut = next((p.line for p in lines.problems if p.rule == "truncated"), None)
    boundary = f"The Claude Code transcript of session {session_id}: {len(lines.records)} records"
    boundary += f"; its last line ({cut}) was cut and is not part of it." if cut is not None else "."
    return ir.Capture(id=f"claude-code:{lines.values_digest()[:32]}",
                      producer=ir.Producer(name="asif-convert", version=version),
                      consistency="partial" if cut is not None else "unknown", boundary=boundary)


def message_records(values: Iterable[Any]) -> list[dict[str, Any]]:
    """The user and assistant records among the values of a transcript's lines."""
    return [v for v in values if type(v) is dict and v.get("type") in ("user", "assistant")]


def _distinct(messages: list[dict[str, Any]], key: str, other: str) -> list[dict[str, Any]]:
    """The distinct strings the message records give ``key`` and ``other``, in the order they
    first come."""
    try:  # (the pairs told apart in C; a member that is an array or object is no string)
        pairs: Iterable[tuple[Any, Any]] = dict.fromkeys(zip(map(dict.get, messages, repeat(key)),
                                                              map(dict.get, messages, repeat(other)), strict=True))
    except TypeError:
        pairs = ((v.get(key), v.get(other)) for v in messages)
    seen = dict.fromkeys((a if isinstance(a, str) else None, b if isinstance(b, str) else None) for a, b in pairs)
    said = ({k: x for k, x in ((key, a), (other, b)) if x is not None} for a, b in seen)
    return [picked for picked in said if picked]


def environments(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each working directory (with its git branch) the message records name: a workspace. A
    recorded path is metadata: it is never opened."""
    out = []
    for k, found in enumerate(_distinct(messages, "cwd", "gitBranch")):
        where = found.get("cwd", "an unrecorded directory")
        branch = f" on git branch {found['gitBranch']}" if "gitBranch" in found else ""
        out.append({"id": f"workspace-{k + 1}", "kind": "workspace",
                    "description": f"Claude Code's working directory {where}{branch}.", "resource_ids": [],
                    "requirements": [], "definition": {"dialect": NAMESPACE, "value": found}})
    return out


def configurations(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each client version and permission mode the message records name: what is known of the
    client."""
    out = []
    for k, found in enumerate(_distinct(messages, "version", "permissionMode")):
        policies = [{"id": "permission-mode", "type": f"{NAMESPACE}:permissionMode",
                     "definition": found["permissionMode"], "enforcing": True}] if "permissionMode" in found else []
        capabilities = [{"id": "client", "type": f"{NAMESPACE}:client", "definition": {"version": found["version"]},
                         "resource_ids": [], "required": False}] if "version" in found else []
        out.append({"id": f"client-{k + 1}", "instructions": [], "capabilities": capabilities, "policies": policies,
                    "secret_requirements": [], "knowledge": "partial"})
    return out


def coverage(doc: ir.Document, cut: bool) -> list[ir.Coverage]:
    def some(items: Any, yes: str, no: str = "known_empty") -> str:
        return yes if items else no

    said = {
        "participants": ("complete", "The user, the model, the client and each subagent, from record types and roles."),
        "conversation": ("partial" if cut else "complete",
                         "Every record of the transcript" + (" but its cut last line." if cut else ".")),
        "branches": ("complete", "The parentUuid tree: the branch Claude Code resumes, each edited or rewound prompt "
                                 "and each sidechain."),
        "executions": (some(doc.executions, "partial"), "One execution per model response, with its model."),
        "contexts": (some(doc.contexts, "partial", "unavailable"),
                     "Transcripts do not record what the model saw; compactions are contexts."),
        "configuration": (some(doc.extras.get("configurations"), "partial", "unavailable"),
                          "The client version and permission mode; instructions and settings are not recorded."),
        "tools": (some(doc.tools, "partial", "unavailable"), "Tools are known by their calls; definitions are "
                                                              "not recorded."),
        "decisions": ("unavailable", "Permission prompts are not recorded as such."),
        "tasks": ("unavailable", "Task lists are tool calls (TodoWrite), not task records."),
        "resources": (some(doc.resources, "complete"), "Images and documents of the messages."),
        "environment": (some(doc.extras.get("environments"), "partial", "unavailable"),
                        "Working directories and git branches, as recorded."),
        "native": ("partial", "Client records with no ASIF concept are extension events; record envelopes are kept "
                              "under claude-code/1."),
        "usage": (some(doc.extras.get("usage"), "complete"), "The usage of each model response."),
    }
    return [ir.Coverage(scope=s, status=said[s][0], detail=said[s][1]) for s in ir.SCOPES]  # type: ignore[arg-type]
