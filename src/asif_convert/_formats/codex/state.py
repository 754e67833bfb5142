"""What a rollout's other lines say, as ASIF: the lines themselves stay verbatim in ``codex/1``
(they are what the way back writes); the records here are what an ASIF reader sees of them.

* ``session_meta``: the working folder (and git state) as an environment;
* ``turn_context``: the turn's settings (model, approval and sandbox policy, effort) as a
  configuration, with a ``configuration_change`` event where they change (not one per request);
* ``event_msg`` ``task_started`` / ``task_complete`` / ``turn_aborted``: one execution per turn,
  with its transitions; ``token_count``: the turn's usage;
* ``compacted``: a context of purpose ``summary`` holding the replacement history, and a
  ``context_checkpoint`` event where it took effect.
"""

from __future__ import annotations

import hashlib
from typing import Any

import msgspec

from asif_convert import ir

PROVIDER = "codex"
_REPORTED = ir.Provenance(mode="reported", producer="codex")
_POLICIES = ("approval_policy", "sandbox_policy", "permission_profile", "approvals_reviewer")
_MODEL_KEYS = ("model", "effort", "summary", "personality")
_ENDS = {"task_complete": "completed", "turn_aborted": "interrupted"}


def _stamp(line: dict[str, Any]) -> str | None:
    stamp = line.get("timestamp")
    return stamp if isinstance(stamp, str) and stamp else None


class State:
    """The ASIF records of the lines that are not response items, built as the reader meets them."""

    def __init__(self, add_event: Any, last_event: Any, session_id: str) -> None:
        self.session_id = session_id  # the scope of usage outside a turn
        self.add_event = add_event  # (event id, body, time) -> None: an event in file order
        self.last_event = last_event  # () -> the id of the latest event, or None
        self.environments: list[dict[str, Any]] = []
        self.configurations: dict[str, dict[str, Any]] = {}
        self.configuration: str | None = None  # the one in effect
        self.executions: list[ir.Execution] = []
        self.execution: ir.Execution | None = None  # the turn running
        self.usage: list[dict[str, Any]] = []
        self.contexts: list[ir.Context] = []
        self.mapped: set[str] = set()  # what was mapped: the coverage scopes it speaks for

    def line(self, number: int, line: Any, model_provider: str | None) -> None:
        if not isinstance(line, dict) or not isinstance(line.get("payload"), dict):
            return
        kind, payload = line.get("type"), line["payload"]
        if kind == "session_meta":
            self._environment(payload)
        elif kind == "turn_context":
            self._configuration(number, line, payload, model_provider)
        elif kind == "compacted":
            self._compaction(number, line, payload)
        elif kind == "event_msg":
            self._event(number, line, payload)

    def _environment(self, meta: dict[str, Any]) -> None:
        cwd = meta.get("cwd")
        if not isinstance(cwd, str):
            return
        value = {k: meta[k] for k in ("cwd", "git") if k in meta}
        if any(env["definition"]["value"] == value for env in self.environments):
            return  # (a session_meta line repeated: the same workspace)
        number = len(self.environments) + 1
        self.environments.append({"id": "workspace" if number == 1 else f"workspace-{number}", "kind": "workspace",
                                  "description": f"The folder Codex worked in: {cwd} (a recorded path, never opened)",
                                  "resource_ids": [], "requirements": [],
                                  "definition": {"dialect": "codex/1", "value": value}})
        self.mapped.add("environment")

    def _configuration(self, number: int, line: dict[str, Any], payload: dict[str, Any],
                       model_provider: str | None) -> None:
        model = {k: payload[k] for k in _MODEL_KEYS if k in payload}
        if model_provider:
            model["provider"] = model_provider
        policies = [{"id": key, "type": f"codex.{key}/1", "definition": payload[key], "enforcing": True}
                    for key in _POLICIES if key in payload]
        snapshot = {"knowledge": "declared", "instructions": [], "capabilities": [], "policies": policies,
                    "secret_requirements": [], **({"model": model} if model else {})}
        digest = hashlib.sha256(msgspec.json.encode(snapshot)).hexdigest()[:16]
        cid = f"turn-settings-{digest}"
        if self.environments:
            snapshot["environment_ids"] = [self.environments[0]["id"]]
        self.configurations.setdefault(cid, {"id": cid, **snapshot})
        self.mapped.add("configuration")
        if cid != self.configuration:
            self.configuration = cid
            self.add_event(f"line-{number}", ir.ConfigurationChange(configuration_id=cid), _stamp(line))

    def _event(self, number: int, line: dict[str, Any], payload: dict[str, Any]) -> None:
        kind = payload.get("type")
        if not isinstance(kind, str):
            return
        if kind == "task_started":
            self._end(None, None, None)  # a turn that never said it ended
            turn = payload.get("turn_id")
            xid = turn if isinstance(turn, str) and turn else f"turn-at-line-{number}"
            if any(x.id == xid for x in self.executions):
                xid = f"{xid}@line-{number}"
            self.execution = ir.Execution(id=xid, participant_id="assistant", status="running",
                                          started_at=_stamp(line) or ir.UNSET)
            self.executions.append(self.execution)
            self.add_event(f"line-{number}", ir.ExecutionTransition(execution_id=xid, status="running"), _stamp(line))
            self.mapped.add("executions")
        elif kind in _ENDS and self.execution is not None:
            self._end(number, line, _ENDS[kind])
        elif kind == "token_count":
            self._usage(payload)

    def _end(self, number: int | None, line: dict[str, Any] | None, status: str | None) -> None:
        running = self.execution
        if running is None:
            return
        self.execution = None
        if number is None or line is None or status is None:
            running.status = "unknown"
            return
        running.status = status
        ended = _stamp(line)
        if ended is not None:
            running.ended_at = ended
        self.add_event(f"line-{number}", ir.ExecutionTransition(execution_id=running.id, status=status),
                       _stamp(line))

    def _usage(self, payload: dict[str, Any]) -> None:
        info = payload.get("info")
        last = info.get("last_token_usage") if isinstance(info, dict) else None
        if not isinstance(last, dict):
            return
        running = self.execution
        scope, scope_id = ("execution", running.id) if running is not None else ("session", self.session_id)
        for unit, value in last.items():
            if type(value) is int and value >= 0:
                self.usage.append({"scope": scope, "scope_id": scope_id, "unit": unit, "value": value,
                                   "counter": "delta", "provenance": {"mode": "reported", "producer": "codex"}})
        self.mapped.add("usage")

    def _compaction(self, number: int, line: dict[str, Any], payload: dict[str, Any]) -> None:
        history = payload.get("replacement_history")
        summary = payload.get("message")
        inputs = [entry for k, item in enumerate(history if isinstance(history, list) else [])
                  if (entry := _input(f"r{k}", item)) is not None]
        complete = isinstance(history, list) and len(inputs) == len(history)
        if not isinstance(history, list) and isinstance(summary, str):
            inputs = [{"id": "summary", "kind": "message", "role": "user",
                       "parts": [{"kind": "text", "text": summary}], "source_events": []}]
        cid = f"compaction-at-line-{number}"
        self.contexts.append(ir.Context(id=cid, branch_id="main", at_event_id=None, purpose="summary",
                                        fidelity="reconstructed" if complete else "partial", inputs=inputs))
        self.add_event(f"line-{number}", ir.ContextCheckpoint(context_id=cid, reason="compaction"), _stamp(line))
        self.contexts[-1].at_event_id = self.last_event()
        self.mapped.add("contexts")

    def finish(self) -> None:
        self._end(None, None, None)


def _input(iid: str, item: Any) -> dict[str, Any] | None:
    """A context input for a replacement-history message of text parts (None for anything else)."""
    if not isinstance(item, dict) or item.get("type", "message") != "message" or \
            item.get("role") not in ("user", "assistant", "developer", "system"):
        return None
    content = item.get("content")
    texts = [p.get("text") for p in content if isinstance(p, dict)] if isinstance(content, list) else None
    if not texts or not all(isinstance(t, str) for t in texts):
        return None
    return {"id": iid, "kind": "message", "role": item["role"], "parts": [{"kind": "text", "text": t} for t in texts],
            "source_events": []}
