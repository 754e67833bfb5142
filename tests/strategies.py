"""Hypothesis strategies: agent-continuity exports and ASIF 0.4 sessions, built as JSON values.

Both generators draw small documents out of plain building blocks (no ``from_type`` on the IR
structs), so a failing example shrinks to a short, readable JSON document:

* :func:`continuity_exports` draws schema-valid, referentially sound exports; with
  ``broken=True`` it then breaks one reference on purpose (for the loss/strict property).
* :func:`asif_sessions` draws a session as a story: one main line of events built by a small
  state machine (calls, amendments, results, decisions, tasks, ...), side branches that share a
  prefix of it, then everything the story implies (head checkpoints with the exact open calls,
  contexts whose typed inputs replay the selected history, streams, bindings, coverage). Each
  document is meant to pass the schema and the semantic rules; the tests check that they do.
"""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

from hypothesis import strategies as st

# -- shared building blocks ---------------------------------------------------------------------

# Ids that have tripped converters before: separators, the collision suffix, escapes, non-ASCII.
TRICKY_IDS = ("m-1", "m-1~event", "a/b", "x:y", "with space", "t~0", "back\\slash", "ünï", "🙂", "0", "main")

text = st.text(max_size=12)
nonempty_text = st.text(min_size=1, max_size=12)
ids = st.one_of(st.sampled_from(TRICKY_IDS), nonempty_text)

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**53 - 1), max_value=2**53 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    text,
)


_JSON: dict[int, st.SearchStrategy[Any]] = {}


def json_strings(value: Any, keys: bool = False) -> list[str]:
    """Every string of a JSON value, depth first (with ``keys``, object keys too)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*([k] if keys else []), *json_strings(v, keys))]
    if isinstance(value, list):
        return [s for v in value for s in json_strings(v, keys)]
    return []


def json_values(max_leaves: int = 8) -> st.SearchStrategy[Any]:
    """Any JSON value (built once per size: strategies are costly to rebuild on every draw)."""
    if max_leaves not in _JSON:
        _JSON[max_leaves] = st.recursive(
            json_scalars,
            lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(text, inner, max_size=3)),
            max_leaves=max_leaves,
        )
    return _JSON[max_leaves]


json_objects = st.dictionaries(text, json_values(6), max_size=3)

# The converter's own vocabulary: key names of its state, its first release's placeholder key
# and the keys of its patches. Free-form JSON drawn with these keys proves that nothing a user
# writes is taken for converter state.
CONVERTER_KEYS = ("asif.piece/1", "asif.parts/1", "agent-continuity/1", "dialect", "style", "diff", "template",
                  "members", "msg", "call", "result", "res", "encode", "=", "{}", "[]", "-", "#", "k", "order", "key",
                  "patch", "losses", "carried/1", "sequence", "status", "role", "text_content")
_vocab_keys = st.one_of(st.sampled_from(CONVERTER_KEYS), text)
vocab_json = st.recursive(
    st.one_of(json_scalars, st.sampled_from(CONVERTER_KEYS),
              st.builds(lambda path: {"asif.piece/1": path},
                        st.lists(st.one_of(st.sampled_from(["msg", "call", "result", "res", "parts", "text"]),
                                           st.integers(0, 2)), max_size=5))),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_vocab_keys, inner, max_size=3)),
    max_leaves=8,
)
vocab_objects = st.dictionaries(_vocab_keys, vocab_json, max_size=3)


@st.composite
def dialect_content(draw: st.DrawFn) -> Any:
    """content_json in one of the dialects, with converter-vocabulary keys put into it."""
    call_id = draw(st.sampled_from(["call_1", "toolu_1", "c"]))
    content = draw(st.sampled_from([
        [{"type": "text", "text": "hi"}, {"type": "tool_use", "id": call_id, "name": "bash", "input": {"a": 1}}],
        [{"type": "tool_result", "tool_use_id": call_id, "content": "ok", "is_error": False}],
        [{"type": "thinking", "thinking": "hm", "signature": "s"}, {"type": "text", "text": "x"}],
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": "f", "arguments": '{"a":1}'}}]},
        {"role": "tool", "tool_call_id": call_id, "content": "done"},
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "refusal", "refusal": "no"}]},
        {"role": "assistant", "content": "x", "refusal": "no", "function_call": {"name": "g", "arguments": "{}"}},
        # every block type of the SDKs: tools the provider runs, MCP, media sources, unknown blocks
        [{"type": "server_tool_use", "id": call_id, "name": "web_search", "input": {"query": "q"}},
         {"type": "web_search_tool_result", "tool_use_id": call_id,
          "content": {"type": "web_search_tool_result_error", "error_code": "unavailable"}},
         {"type": "text", "text": "none", "citations": None}],
        [{"type": "mcp_tool_use", "id": call_id, "name": "echo", "server_name": "kit", "input": {}},
         {"type": "mcp_tool_result", "tool_use_id": call_id, "is_error": False,
          "content": [{"type": "text", "text": "e"}]}],
        [{"type": "image", "source": {"type": "file", "file_id": "file_1"}},
         {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "d"}, "title": "t"},
         {"type": "document", "source": {"type": "content", "content": [{"type": "text", "text": "c"}]}},
         {"type": "container_upload", "file_id": "file_2"}, {"type": "future_block", "x": 1},
         {"type": "search_result", "source": "s", "title": "t", "content": [{"type": "text", "text": "r"}]}],
        {"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
         "content": [{"type": "text", "text": "a"}], "stop_reason": "end_turn", "stop_sequence": None,
         "usage": {"input_tokens": 1, "output_tokens": 1}},
        {"role": "assistant", "content": [{"type": "text", "text": "a"}], "tool_calls": [
            {"id": call_id, "type": "custom", "custom": {"name": "sql", "input": "SELECT 1"}}]},
        {"role": "tool", "tool_call_id": call_id, "content": [{"type": "text", "text": "r"}]},
        {"role": "user", "content": [{"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
                                     {"type": "file", "file": {"file_id": "file-1", "filename": "a.pdf"}},
                                     {"type": "future_part"}]},
        {"content": "sunny", "refusal": None, "role": "assistant", "annotations": [
            {"type": "url_citation", "url_citation": {"start_index": 0, "end_index": 5, "title": "t", "url": "u"}}],
         "audio": {"id": "audio_1", "data": "UklGRg==", "expires_at": 1, "transcript": "sunny"},
         "function_call": None, "tool_calls": None},
        # OpenAI Responses items: one, or a list
        [{"type": "reasoning", "id": "rs", "summary": [{"type": "summary_text", "text": "hm"}]},
         {"type": "web_search_call", "id": "ws", "status": "completed", "action": {"type": "search", "query": "q"}},
         {"type": "message", "role": "assistant", "content": [
             {"type": "output_text", "text": "a", "annotations": []}, {"type": "refusal", "refusal": "no"}]},
         {"type": "function_call", "call_id": call_id, "name": "f", "arguments": '{"a": 1}'}],
        {"type": "function_call_output", "call_id": call_id, "output": "done"},
        [{"role": "user", "content": [{"type": "input_text", "text": "a"}, {"type": "item_reference", "id": "x"}]},
         {"type": "mcp_approval_request", "id": "mr", "name": "t", "server_label": "s", "arguments": "{}"}],
        # Google Gen AI contents, in either casing
        {"role": "model", "parts": [{"text": "t", "thought": True}, {"text": "x", "thought_signature": "c2ln"},
                                    {"function_call": {"id": call_id, "name": "f", "args": {"a": 1}}},
                                    {"executable_code": {"code": "1", "language": "PYTHON"}},
                                    {"code_execution_result": {"outcome": "OUTCOME_OK", "output": "1"}}]},
        {"role": "user", "parts": [{"functionResponse": {"id": call_id, "name": "f", "response": {"output": 1}}},
                                   {"inlineData": {"data": "AA==", "mimeType": "image/png"}}, {"future": 1}]},
        # and without ids, as the API usually writes them: responses answer calls by name and order
        {"role": "model", "parts": [{"function_call": {"name": "f", "args": {"a": 1}}},
                                    {"function_call": {"name": "f"}}]},
        {"role": "user", "parts": [{"function_response": {"name": "f", "response": {"output": 1}}},
                                   {"function_response": {"name": "f", "response": {"error": "x"}}}]},
    ]))
    content = json.loads(json.dumps(content))
    objects = [content] if isinstance(content, dict) else []
    inner = content if isinstance(content, list) else content.get("tool_calls") or content.get("parts") or []
    if isinstance(content, dict) and not isinstance(inner, list):
        inner = []
    objects += [b for b in inner if isinstance(b, dict)]
    for _ in range(draw(st.integers(0, 2))):
        draw(st.sampled_from(objects))[draw(_vocab_keys)] = draw(vocab_json)
    return content

TIMESTAMPS = (
    "2025-03-01T10:00:00Z",
    "2025-03-01T10:00:00.250Z",
    "2025-03-01T10:00:01+00:00",
    "2025-03-01T12:00:00+02:00",
    "2025-03-01T10:00:02",  # naive: not comparable with the aware ones
    "2025-03-01T09:59:59Z",
    "yesterday",  # a string the schema accepts but no parser does
)
timestamps = st.sampled_from(TIMESTAMPS)


_ABSENT = object()  # a field left out


def _put(out: dict, key: str, value: Any) -> None:
    if value is not _ABSENT:
        out[key] = value


def optional(strategy: st.SearchStrategy[Any], nullable: bool = False) -> st.SearchStrategy[Any]:
    """A field that is absent, (when nullable) null, or present."""
    choices = [st.just(_ABSENT), strategy]
    if nullable:
        choices.insert(1, st.none())
    return st.one_of(*choices)


def _unique(draw: st.DrawFn, taken: set[str], base: st.SearchStrategy[str] = ids) -> str:
    wanted = draw(base)
    new, n = wanted, 2
    while new in taken:
        new, n = f"{wanted}{n}", n + 1
    taken.add(new)
    return new


# -- agent-continuity exports ----------------------------------------------------------------------

CONTINUITY_EVENT_TYPES = ("run.started", "tool.started", "tool.finished", "branch.forked", "asif.note", "x.🙂")


@st.composite
def continuity_exports(draw: st.DrawFn, broken: bool = False) -> dict[str, Any]:
    sid = draw(ids)
    # One pool of record ids, so ids collide across collections (never within one).
    pool = st.one_of(st.sampled_from(("m-1", "m-2", "e-1", "obj-1", "m-7")), ids)
    branch_pool = draw(st.lists(ids, min_size=1, max_size=3, unique=True))
    listed = draw(st.booleans())
    runs = st.one_of(st.sampled_from(("run-1", "run-2")), nonempty_text)

    session: dict[str, Any] = {
        "session_id": sid,
        "title": draw(text),
        "status": draw(st.sampled_from(["active", "paused", "completed", "archived"])),
        "active_branch_id": draw(st.sampled_from(branch_pool)) if listed else draw(st.one_of(
            st.sampled_from(branch_pool), ids)),
    }
    _put(session, "metadata", draw(optional(st.one_of(json_objects, vocab_objects))))
    doc: dict[str, Any] = {"format": "agent-continuity-export", "session": session}

    if listed:
        branches = []
        ancestry = draw(st.permutations(branch_pool))  # parents come earlier here: no parent cycles
        for bid in branch_pool:
            b: dict[str, Any] = {"branch_id": bid, "session_id": sid}
            others = ancestry[:ancestry.index(bid)]
            parent = draw(optional(st.sampled_from(others), nullable=True) if others else optional(st.none()))
            _put(b, "parent_branch_id", parent)
            b.update(name=draw(nonempty_text), status=draw(st.sampled_from(["active", "paused", "archived"])),
                     metadata=draw(json_objects), created_at=draw(timestamps), updated_at=draw(timestamps))
            branches.append(b)
        doc["branches"] = branches

    def branch_field(out: dict[str, Any]) -> None:
        _put(out, "branch_id", draw(optional(st.sampled_from(branch_pool))))

    messages, taken = [], set()
    for _ in range(draw(st.integers(0, 5))):
        m: dict[str, Any] = {"message_id": _unique(draw, taken, pool), "session_id": sid}
        _put(m, "run_id", draw(optional(runs, nullable=True)))
        branch_field(m)
        m["role"] = draw(st.sampled_from(["user", "assistant", "tool"]))
        m["status"] = draw(st.sampled_from(["pending", "streaming", "complete", "partial", "failed"]))
        _put(m, "content_json", draw(optional(st.one_of(json_values(), vocab_json, dialect_content()))))
        m["text_content"] = draw(text)
        _put(m, "provider_message_id", draw(optional(nonempty_text, nullable=True)))
        _put(m, "idempotency_key", draw(optional(text, nullable=True)))
        m["sequence"] = draw(st.integers(1, 6))  # repeats across branches, as continuity numbers them
        _put(m, "sha256", draw(optional(nonempty_text)))
        _put(m, "created_at", draw(optional(timestamps)))
        messages.append(m)
    doc["messages"] = messages

    events, taken = [], set()
    for _ in range(draw(st.integers(0, 4))):
        e: dict[str, Any] = {"event_id": _unique(draw, taken, pool), "session_id": sid}
        _put(e, "run_id", draw(optional(runs, nullable=True)))
        branch_field(e)
        _put(e, "sequence", draw(optional(st.integers(1, 6))))
        e["event_type"] = draw(st.one_of(st.sampled_from(CONTINUITY_EVENT_TYPES), nonempty_text))
        e["payload"] = draw(st.one_of(json_objects, vocab_objects))
        _put(e, "idempotency_key", draw(optional(text, nullable=True)))
        _put(e, "sha256", draw(optional(nonempty_text)))
        _put(e, "created_at", draw(optional(timestamps)))
        events.append(e)
    doc["events"] = events

    record_ids = [m["message_id"] for m in messages] + [e["event_id"] for e in events]
    checkpoints, taken = [], set()
    for _ in range(draw(st.integers(0, 3))):
        c: dict[str, Any] = {"checkpoint_id": _unique(draw, taken, pool), "session_id": sid,
                             "branch_id": draw(st.sampled_from(branch_pool))}
        parent = optional(st.sampled_from(record_ids), nullable=True) if record_ids else optional(st.none())
        _put(c, "parent_event_id", draw(parent))
        c["summary"] = draw(st.one_of(json_objects, vocab_objects))
        _put(c, "token_estimate", draw(optional(st.integers(0, 10**6))))
        _put(c, "created_by", draw(optional(text, nullable=True)))
        _put(c, "created_at", draw(optional(timestamps)))
        checkpoints.append(c)
    doc["checkpoints"] = checkpoints

    if draw(st.booleans()):
        states, taken = [], set()
        for _ in range(draw(st.integers(0, 3))):
            s: dict[str, Any] = {"state_id": _unique(draw, taken, pool), "session_id": sid,
                                 "provider": draw(st.sampled_from(["anthropic", "openai", "google"]) | nonempty_text),
                                 "kind": draw(st.sampled_from(["prompt_cache", "conversation_state"]) | nonempty_text)}
            if s["provider"] == "asif":  # the residual's own provider: a different case, tested apart
                s["provider"] = "asif-like"
            _put(s, "payload", draw(optional(json_values())))
            s["portable"] = draw(st.booleans())
            _put(s, "created_at", draw(optional(timestamps)))
            states.append(s)
        doc["native_states"] = states

    if draw(st.booleans()):
        artifacts, taken = [], set()
        for _ in range(draw(st.integers(0, 3))):
            a: dict[str, Any] = {"artifact_id": _unique(draw, taken, pool), "session_id": sid}
            _put(a, "run_id", draw(optional(runs, nullable=True)))
            a.update(branch_id=draw(st.sampled_from(branch_pool)), kind=draw(nonempty_text),
                     path=draw(st.sampled_from(["reports/summary.md", "out/plot.png", "https://example.invalid/x",
                                                "données/é.txt"]) | nonempty_text))
            digest = st.one_of(st.binary(max_size=8).map(lambda b: hashlib.sha256(b).hexdigest()), text)
            _put(a, "sha256", draw(optional(digest, nullable=True)))
            _put(a, "size_bytes", draw(optional(st.integers(0, 2**40), nullable=True)))
            a.update(metadata=draw(json_objects), created_at=draw(timestamps))
            artifacts.append(a)
        doc["artifacts"] = artifacts

    if broken:
        _break(draw, doc)
    return doc


def _break(draw: st.DrawFn, doc: dict[str, Any]) -> None:
    """Break one reference the schema cannot see (so the export stays schema-valid)."""
    options = ["session_id", "active_branch", "checkpoint_parent"]
    if doc.get("branches"):
        options += ["record_branch", "parent_branch"]
    if len({b["branch_id"] for b in doc.get("branches") or ()}) > 1:
        options.append("parent_cycle")
    if len(doc["messages"]) > 1 or len(doc["events"]) > 1:
        options.append("duplicate")
    how = draw(st.sampled_from(options))
    records = [r for k in ("messages", "events", "checkpoints", "native_states", "artifacts") for r in doc.get(k, ())]
    if how == "session_id" and records:
        draw(st.sampled_from(records))["session_id"] = doc["session"]["session_id"] + "-other"
    elif how == "session_id" or how == "active_branch":
        doc["session"]["active_branch_id"] = "unlisted-branch"
        doc.setdefault("branches", [])
    elif how == "checkpoint_parent":
        doc["checkpoints"].append({"checkpoint_id": "cp-dangling", "session_id": doc["session"]["session_id"],
                                   "branch_id": doc["session"]["active_branch_id"],
                                   "parent_event_id": "names-nothing", "summary": {}})
    elif how == "record_branch":
        holders = [r for r in records if "branch_id" in r] or doc["checkpoints"]
        if holders:
            draw(st.sampled_from(holders))["branch_id"] = "unlisted-branch"
        else:
            doc["session"]["active_branch_id"] = "unlisted-branch"
    elif how == "parent_branch":
        b = draw(st.sampled_from(doc["branches"]))
        b["parent_branch_id"] = draw(st.sampled_from([b["branch_id"], "unlisted-branch", ""]))
    elif how == "parent_cycle":  # each branch's parent is the next one's: a loop through all of them
        ring = doc["branches"]
        for k, b in enumerate(ring):
            b["parent_branch_id"] = ring[(k + 1) % len(ring)]["branch_id"]
    else:
        coll, field = ("messages", "message_id") if len(doc["messages"]) > 1 else ("events", "event_id")
        doc[coll][1][field] = doc[coll][0][field]


# -- ASIF 0.4 sessions ---------------------------------------------------------------------------

# Names of additional properties: plain vendor keys and names that mean something elsewhere
# (IR field names, the other format's words), which must still travel as plain properties.
EXTRA_KEYS = ("x-vendor", "example.extra/1", "ünï-key", "ir_version", "extras", "body", "annotations", "native",
              "unknown", "metadata", "payload", "")
extra_keys = st.one_of(st.sampled_from(EXTRA_KEYS), text.map(lambda s: "x." + s))


extras = st.dictionaries(extra_keys, json_values(4), max_size=2)


def _with_extras(draw: st.DrawFn, obj: dict[str, Any], enabled: bool) -> dict[str, Any]:
    """Add additional properties to an ASIF object (never one of its own property names)."""
    if enabled:
        for k, v in draw(extras).items():
            if k not in _RESERVED:
                obj.setdefault(k, v)
    return obj


# Words an object may define even when it does not carry them here; never used as extras.
_RESERVED = frozenset({
    "id", "kind", "data", "text", "media_type", "resource_id", "description", "schema", "value", "semantic_type",
    "reason", "role", "parts", "name", "provider", "native_id", "parent_participant_id", "child_session", "sequence",
    "actor_id", "causes", "provenance", "time", "execution_id", "supersedes", "extensions", "mode", "producer",
    "sources", "method", "inputs", "event_id", "session_id", "capture_id", "locator", "syntax", "offset", "length",
    "call_id", "tool_id", "arguments", "arguments_status", "retry_of", "result_index", "terminal", "outcome",
    "request_id", "decision_kind", "prompt", "options", "task_id", "task_revision", "answer", "selected_option_id",
    "revision", "status", "previous_revision", "dependencies", "reopen_reason", "context_id", "replaced_context_id",
    "configuration_id", "error", "operation", "previous_resource_id", "category", "type", "interpretation_required",
    "label", "agent-continuity/1", "fork", "event_ids", "head_event_id", "branch_id", "inclusive",
    "participant_id", "context_ids", "started_at", "ended_at", "model", "usage", "input_schema", "output_schema",
    "server_identity", "resource_ids", "availability", "purpose", "original_location", "bytes", "sha256", "path",
    "explanation", "at_event_id", "fidelity", "tool_ids", "request_parameters", "knowledge", "open_calls",
    "open_decisions", "tasks", "requirements", "scope", "detail", "stage", "references", "source_events",
    "transformation", "title", "objective", "native_ids", "lineage", "relation", "namespace", "consistency",
    "boundary", "version", "instructions", "capabilities", "policies", "secret_requirements", "environment_ids",
    "required_for", "scope_id", "unit", "counter", "segments", "index", "source", "descriptor",
})

ROOT_KEYS = ("asif_version", "capture", "session", "participants", "events", "branches", "executions", "contexts",
             "configurations", "tools", "resources", "environments", "checkpoints", "coverage", "losses",
             "required_features", "usage", "continuation", "streams", "external_bindings")

SCOPES = ("participants", "conversation", "branches", "executions", "contexts", "configuration", "tools",
          "decisions", "tasks", "resources", "environment", "native", "usage")
FINISHED_TASK = ("completed", "failed", "cancelled", "superseded")
ACTIVE_TASK = ("proposed", "pending", "in_progress")
TASK_STATUSES = (*ACTIVE_TASK, *FINISHED_TASK, "unknown")
ACTIONS = ("message", "call", "amend", "result", "request", "resolve", "task", "note", "extension",
           "context_checkpoint", "configuration_change", "execution_transition", "resource_change", "correction")


def _digest(data: bytes) -> tuple[int, str]:
    return len(data), hashlib.sha256(data).hexdigest()


def _embedded_text(rid: str, content: str, purpose: str) -> dict[str, Any]:
    size, sha = _digest(content.encode())
    return {"id": rid, "media_type": "text/plain", "availability": "embedded", "purpose": purpose,
            "text": content, "bytes": size, "sha256": sha}


class _Story:
    """The state a selected history establishes, as the semantic rules walk it."""

    def __init__(self) -> None:
        self.open_calls: dict[str, None] = {}
        self.open_requests: dict[str, None] = {}
        self.tasks: dict[str, int] = {}

    def copy(self) -> _Story:
        new = _Story()
        new.open_calls, new.open_requests, new.tasks = dict(self.open_calls), dict(self.open_requests), dict(self.tasks)
        return new


@st.composite
def asif_sessions(draw: st.DrawFn, features: bool | None = None) -> dict[str, Any]:
    """A valid ASIF 0.4 session. ``features``: True forces streams, external bindings and
    continuation on, False off, None draws each."""
    b = _AsifBuilder(draw, features)
    return b.build()


class _AsifBuilder:
    def __init__(self, draw: st.DrawFn, features: bool | None) -> None:
        self.draw = draw
        self.features = features
        self.extra_on = draw(st.booleans())
        self.resources: list[dict[str, Any]] = []
        self.resource_ids: set[str] = set()
        self.events: list[dict[str, Any]] = []
        self.event_ids: set[str] = set()
        self.required: list[str] = []
        self.seq = draw(st.integers(0, 3))

    # -- helpers ----------------------------------------------------------------------------

    def x(self, obj: dict[str, Any]) -> dict[str, Any]:
        return _with_extras(self.draw, obj, self.extra_on)

    def feature(self, name: str) -> bool:
        return self.features if self.features is not None else self.draw(st.booleans(), label=name)

    def provenance(self, inputs: list[str] = ()) -> dict[str, Any]:
        draw = self.draw
        mode = draw(st.sampled_from(["observed", "reported", "derived", "synthetic"]))
        p: dict[str, Any] = {"mode": mode, "producer": draw(nonempty_text)}
        if mode in ("derived", "synthetic"):
            p["method"] = draw(nonempty_text)
            p["inputs"] = [{"event_id": e} for e in draw(st.lists(st.sampled_from(inputs), unique=True, max_size=2))] \
                if inputs else []
        if self.resources and draw(st.booleans()):
            src = draw(st.sampled_from(self.resources))
            source: dict[str, Any] = {"resource_id": src["id"]}
            if "bytes" in src and draw(st.booleans()):
                offset = draw(st.integers(0, src["bytes"]))
                source["locator"] = {"syntax": "bytes", "offset": offset,
                                     "length": draw(st.integers(0, src["bytes"] - offset))}
            p["sources"] = [source]
        return self.x(p)

    def part(self, allow_resources: bool = True) -> dict[str, Any]:
        draw = self.draw
        kinds = ["text", "structured"] + (["resource", "opaque"] if allow_resources and self.resources else [])
        kind = draw(st.sampled_from(kinds))
        if kind == "text":
            p: dict[str, Any] = {"kind": "text", "text": draw(text)}
            _put(p, "media_type", draw(optional(st.sampled_from(["text/markdown", "text/plain"]))))
        elif kind == "structured":
            schema = draw(st.sampled_from(["example.table/1", "agent-continuity.content-json/1"]))
            p = {"kind": "structured", "schema": schema, "value": draw(json_values())}
        elif kind == "resource":
            p = {"kind": "resource", "resource_id": draw(st.sampled_from(sorted(self.resource_ids)))}
            _put(p, "description", draw(optional(text)))
        else:
            p = {"kind": "opaque", "resource_id": draw(st.sampled_from(sorted(self.resource_ids))),
                 "semantic_type": "example.reasoning/1", "reason": draw(nonempty_text)}
        return self.x(p)

    def parts(self, min_size: int = 0) -> list[dict[str, Any]]:
        return [self.part() for _ in range(self.draw(st.integers(min_size, 2)))]

    def resource(self, availability: str, purpose: str | None = None) -> dict[str, Any]:
        draw = self.draw
        rid = _unique(draw, self.resource_ids)
        purpose = purpose or draw(st.sampled_from(["input", "derived_input", "native", "artifact", "session_memory"]))
        if availability == "embedded":
            how = draw(st.sampled_from(["text", "data", "path"]))
            if how == "text":
                r = _embedded_text(rid, draw(text), purpose)
            elif how == "data":
                raw = draw(st.binary(max_size=16))
                size, sha = _digest(raw)
                r = {"id": rid, "media_type": "application/octet-stream", "availability": "embedded",
                     "purpose": purpose, "data": base64.b64encode(raw).decode(), "bytes": size, "sha256": sha}
            else:  # bytes next to the document, not checked here (only the path syntax is)
                size, sha = _digest(b"asset")
                r = {"id": rid, "media_type": "image/png", "availability": "embedded", "purpose": purpose,
                     "path": draw(st.sampled_from(["assets/a.png", "assets/ü/b.png"])), "bytes": size, "sha256": sha}
        else:
            r = {"id": rid, "media_type": draw(st.sampled_from(["image/png", "application/json"])),
                 "availability": availability, "purpose": purpose, "explanation": draw(nonempty_text)}
            if availability == "external":
                r["locator"] = draw(st.sampled_from(["https://example.invalid/x", "s3://bucket/key"]))
            if draw(st.booleans()):
                size, sha = _digest(draw(st.binary(max_size=4)))
                r.update(bytes=size, sha256=sha)
        _put(r, "name", draw(optional(text)))
        _put(r, "original_location", draw(optional(text)))
        if purpose == "session_memory" or draw(st.booleans()):
            r["provenance"] = self.provenance()
        return self.x(r)

    def add_event(self, kind: str, data: dict[str, Any], actor: str, *, causes_from: list[str],
                  supersedes: str | None = None, execution_id: str | None = None) -> dict[str, Any]:
        draw = self.draw
        eid = _unique(draw, self.event_ids)
        self.seq += draw(st.integers(1, 2))
        causes = draw(st.lists(st.sampled_from(causes_from), unique=True, max_size=2)) if causes_from else []
        ev: dict[str, Any] = {"id": eid, "sequence": self.seq, "actor_id": actor, "kind": kind,
                              "causes": [{"event_id": c} for c in causes], "provenance": self.provenance(causes_from),
                              "data": self.x(data)}
        if draw(st.booleans()):
            ev["causes"].append({"event_id": "elsewhere", "session_id": "other-session", "capture_id": "other-capture"})
        _put(ev, "time", draw(optional(timestamps)))
        if execution_id is not None:
            ev["execution_id"] = execution_id
        elif self.executions and draw(st.booleans()):
            ev["execution_id"] = draw(st.sampled_from(self.executions))["id"]
        if supersedes is not None:
            ev["supersedes"] = {"event_id": supersedes}
        if draw(st.booleans()):
            ev["extensions"] = {"example.annotation/1": draw(json_values(3))}
        self.events.append(self.x(ev))
        return ev

    # -- the document -----------------------------------------------------------------------

    def build(self) -> dict[str, Any]:
        draw = self.draw
        self.sid = draw(ids)
        self.capture_id = draw(nonempty_text)

        # participants: a human, an agent, and maybe a tool and a child agent
        pids: set[str] = set()
        self.human, self.agent = _unique(draw, pids), _unique(draw, pids)
        participants = [{"id": self.human, "kind": "human"}, {"id": self.agent, "kind": "agent"}]
        if draw(st.booleans()):
            participants.append({"id": _unique(draw, pids), "kind": "agent", "parent_participant_id": self.agent,
                                 "child_session": {"session_id": "child-session", "capture_id": "child-capture"}})
        if draw(st.booleans()):
            kind = draw(st.sampled_from(["tool", "service", "unknown"]))
            participants.append({"id": _unique(draw, pids), "kind": kind})
        for p in participants:
            _put(p, "name", draw(optional(text)))
            _put(p, "provider", draw(optional(nonempty_text)))
            _put(p, "native_id", draw(optional(nonempty_text)))
        self.participants = [self.x(p) for p in participants]
        self.actors = [p["id"] for p in participants]

        # resources of every availability (each drawn or not)
        for availability in ("embedded", "external", "unavailable", "excluded", "redacted", "unknown"):
            for _ in range(draw(st.integers(0, 1), label=f"{availability} resources")):
                self.resources.append(self.resource(availability))

        tool_ids: set[str] = set()
        self.tools = []
        for _ in range(draw(st.integers(1, 2))):
            t: dict[str, Any] = {"id": _unique(draw, tool_ids), "name": "example.tool/" + draw(nonempty_text),
                                 "description": draw(text),
                                 "input_schema": draw(st.sampled_from([True, {"type": "object"}, {}]))}
            _put(t, "output_schema", draw(optional(st.sampled_from([True, False, {"type": "string"}]))))
            _put(t, "server_identity", draw(optional(nonempty_text)))
            _put(t, "revision", draw(optional(nonempty_text)))
            if self.resources and draw(st.booleans()):
                t["resource_ids"] = [draw(st.sampled_from(self.resources))["id"]]
            self.tools.append(self.x(t))

        self.configurations = []
        if draw(st.booleans()):
            self.configurations.append(self.x({
                "id": draw(nonempty_text), "instructions": [], "capabilities": [], "policies": [],
                "secret_requirements": draw(st.sampled_from([[], [{"handle": "api-key", "purpose": "calls"}]])),
                "knowledge": draw(st.sampled_from(["effective", "declared", "partial", "unknown"]))}))
        self.environments = []
        if draw(st.booleans()):
            self.environments.append(self.x({
                "id": draw(nonempty_text), "kind": draw(st.sampled_from(["workspace", "service", "runtime", "other"])),
                "description": draw(nonempty_text),
                "resource_ids": [r["id"] for r in self.resources[:1]], "requirements": []}))

        exec_ids: set[str] = set()
        self.executions = []
        for _ in range(draw(st.integers(0, 2))):
            e: dict[str, Any] = {"id": _unique(draw, exec_ids), "participant_id": draw(st.sampled_from(self.actors)),
                                 "status": draw(st.sampled_from(["running", "completed", "unknown", "interrupted"])),
                                 "context_ids": []}
            _put(e, "started_at", draw(optional(timestamps)))
            _put(e, "model", draw(optional(json_objects)))
            _put(e, "error", draw(optional(json_values(3))))
            self.executions.append(e)

        # call and request ids live in one namespace each, shared with the external bindings
        self.call_ids: set[str] = set()
        self.request_ids: set[str] = set()
        self.bindings: list[dict[str, Any]] = []
        if self.feature("external_bindings"):
            for kind in draw(st.lists(st.sampled_from(["call", "request"]), min_size=1, max_size=2)):
                src = {"session_id": "earlier-session", "capture_id": "earlier-capture",
                       "event_id": draw(nonempty_text)}
                if kind == "call":
                    descriptor = {"tool_id": draw(st.sampled_from(self.tools))["id"], "arguments": draw(json_values(3)),
                                  "arguments_status": draw(st.sampled_from(["complete", "partial", "unknown"]))}
                    bid = _unique(draw, self.call_ids)
                else:
                    descriptor = {"decision_kind": "approval", "prompt": [self.part(False)],
                                  "options": [{"id": "allow", "label": "Allow"}, {"id": "deny", "label": "Deny"}]}
                    bid = _unique(draw, self.request_ids)
                self.bindings.append(self.x({"kind": kind, "id": bid, "source": src, "descriptor": descriptor}))
            self.required.append("asif.external-bindings/0.1")

        self.tasks_partial = draw(st.booleans(), label="tasks coverage partial")
        self.story = _Story()
        for b in self.bindings:
            (self.story.open_calls if b["kind"] == "call" else self.story.open_requests)[b["id"]] = None
        self.calls: dict[str, dict[str, Any]] = {}  # call_id -> latest version event
        self.results: dict[str, int] = {}  # call_id -> last result_index
        self.requests: dict[str, list[str]] = {b["id"]: ["allow", "deny"] for b in self.bindings
                                               if b["kind"] == "request"}
        self.task_order: list[str] = []
        self._task_status: dict[str, str] = {}
        self.finished_executions: set[str] = set()
        self.pending_contexts: list[tuple[str, str | None]] = []  # (context id, boundary) from checkpoints
        self.context_ids: set[str] = set()

        # the main line, then side branches sharing a prefix of it
        main: list[str] = []
        snapshots = [self.story.copy()]
        for action in draw(st.lists(st.sampled_from(ACTIONS), max_size=8), label="main line"):
            ev = self.step(action, main)
            main.append(ev["id"])
            snapshots.append(self.story.copy())

        branch_ids: set[str] = set()
        main_id = _unique(draw, branch_ids)
        branches = [{"id": main_id, "event_ids": main}]
        self.states = {main_id: snapshots[-1]}
        self.positions = {main_id: snapshots}
        for _ in range(draw(st.integers(0, 2), label="side branches")):
            k = draw(st.integers(0, len(main)))
            own = []
            for _ in range(draw(st.integers(0, 2))):
                kind = draw(st.sampled_from(["message", "note"]))
                history = main[:k] + own
                data = ({"role": draw(st.sampled_from(["user", "assistant"])), "parts": self.parts()}
                        if kind == "message" else {"parts": self.parts(), "category": "example.aside"})
                own.append(self.add_event(kind, data, draw(st.sampled_from(self.actors)), causes_from=history)["id"])
            branch: dict[str, Any] = {"id": _unique(draw, branch_ids), "event_ids": main[:k] + own}
            if draw(st.booleans()):
                branch["fork"] = {"session_id": self.sid, "capture_id": self.capture_id, "branch_id": main_id,
                                  "event_id": main[k - 1] if k else None, "inclusive": bool(k)}
            branches.append(branch)
            self.states[branch["id"]] = snapshots[k]
            self.positions[branch["id"]] = snapshots[: k + 1] + [snapshots[k]] * len(own)
        for br in branches:
            br["head_event_id"] = br["event_ids"][-1] if br["event_ids"] else None
        self.branches = [self.x(br) for br in branches]

        contexts = self.contexts(main_id)
        for e in self.executions:
            e["context_ids"] = draw(st.lists(st.sampled_from([c["id"] for c in contexts]), unique=True, max_size=2)) \
                if contexts else []
        self.executions = [self.x(e) for e in self.executions]
        checkpoints = self.checkpoints(contexts)

        doc: dict[str, Any] = {
            "asif_version": "0.4",
            "capture": self.capture(),
            "session": self.session(),
            "participants": self.participants,
            "events": self.events,
            "branches": self.branches,
            "executions": self.executions,
            "contexts": contexts,
            "configurations": self.configurations,
            "tools": self.tools,
            "resources": self.resources,
            "environments": self.environments,
            "checkpoints": checkpoints,
        }
        streams = self.streams() if self.feature("streams") else None
        continuation = self.continuation(checkpoints[0], contexts) if self.feature("continuation") else None
        doc["coverage"] = self.coverage(doc)
        doc["losses"] = self.losses(doc)
        if draw(st.booleans()):
            doc["usage"] = self.usage()
        if continuation is not None:
            doc["continuation"] = continuation
            self.required.append("asif.portable-continuation/0.2")
        if streams is not None:
            doc["streams"] = streams
            self.required.append("asif.streams/0.1")
        if self.bindings:
            doc["external_bindings"] = self.bindings
        doc["required_features"] = sorted(set(self.required), key=self.required.index)
        return self.x(doc) if self.extra_on and draw(st.booleans()) else doc

    # -- the main line: one step of the story -----------------------------------------------

    def step(self, action: str, history: list[str]) -> dict[str, Any]:
        draw, story = self.draw, self.story
        actor = draw(st.sampled_from(self.actors))
        if action == "call":
            call_id = _unique(draw, self.call_ids)
            data: dict[str, Any] = {"call_id": call_id, "tool_id": draw(st.sampled_from(self.tools))["id"],
                                    "arguments": draw(json_values(4)),
                                    "arguments_status": draw(st.sampled_from(["complete", "partial", "unknown"]))}
            earlier = [c for c in self.calls if c != call_id]
            if earlier and draw(st.booleans()):
                data["retry_of"] = draw(st.sampled_from(earlier))
            ev = self.add_event("tool_call", data, actor, causes_from=history)
            self.calls[call_id] = ev
            story.open_calls[call_id] = None
            return ev
        if action == "amend":
            amendable = [c for c, ev in self.calls.items() if ev["data"]["arguments_status"] != "complete"]
            if amendable:
                prior = self.calls[draw(st.sampled_from(amendable))]
                status = prior["data"]["arguments_status"]
                allowed = ["partial", "complete"] + (["unknown"] if status == "unknown" else [])
                data = {k: prior["data"][k] for k in ("call_id", "tool_id", "retry_of") if k in prior["data"]}
                data.update(arguments=draw(json_values(4)), arguments_status=draw(st.sampled_from(allowed)))
                ev = self.add_event("tool_call", data, prior["actor_id"], causes_from=history,
                                    supersedes=prior["id"], execution_id=prior.get("execution_id"))
                if "execution_id" not in prior:
                    ev.pop("execution_id", None)
                self.calls[data["call_id"]] = ev
                return ev
        if action == "result":
            open_calls = [c for c in story.open_calls]
            if open_calls:
                call_id = draw(st.sampled_from(open_calls))
                index = self.results.get(call_id, -1) + draw(st.integers(1, 2))
                self.results[call_id] = index
                terminal = draw(st.booleans())
                outcome = draw(st.sampled_from(["success", "error", "cancelled", "unknown"])) if terminal else "unknown"
                ev = self.add_event("tool_result", {"call_id": call_id, "result_index": index, "terminal": terminal,
                                                    "outcome": outcome, "parts": self.parts()},
                                    actor, causes_from=history)
                if terminal:
                    del story.open_calls[call_id]
                return ev
        if action == "request":
            request_id = _unique(draw, self.request_ids)
            options = draw(st.lists(ids, unique=True, max_size=3))
            data = {"request_id": request_id, "decision_kind": draw(st.sampled_from(["approval", "question",
                                                                                      "plan_review"])),
                    "prompt": self.parts(1), "options": [self.x({"id": o, "label": draw(text)}) for o in options]}
            if self.calls and draw(st.booleans()):
                data["call_id"] = draw(st.sampled_from(sorted(self.calls)))
            if story.tasks and draw(st.booleans()):
                task_id = draw(st.sampled_from(sorted(story.tasks)))
                data.update(task_id=task_id, task_revision=story.tasks[task_id])
            self.requests[request_id] = options
            story.open_requests[request_id] = None
            return self.add_event("decision_request", data, actor, causes_from=history)
        if action == "resolve":
            if story.open_requests:
                request_id = draw(st.sampled_from(list(story.open_requests)))
                data = {"request_id": request_id,
                        "outcome": draw(st.sampled_from(["allowed", "denied", "answered", "cancelled", "expired",
                                                         "unknown"])),
                        "answer": self.parts()}
                if self.requests[request_id] and draw(st.booleans()):
                    data["selected_option_id"] = draw(st.sampled_from(self.requests[request_id]))
                del story.open_requests[request_id]
                return self.add_event("decision_resolution", data, actor, causes_from=history)
        if action == "task":
            known = list(story.tasks)
            task_id = draw(st.sampled_from(known)) if known and draw(st.booleans()) else None
            status = draw(st.sampled_from(TASK_STATUSES))
            if task_id is None:
                task_id = _unique(draw, set(self.task_order))
                self.task_order.append(task_id)
                revision = draw(st.integers(0, 3))
                data = {"task_id": task_id, "revision": revision, "status": status, "parts": self.parts()}
                if self.tasks_partial and revision and draw(st.booleans()):
                    data["previous_revision"] = revision - 1  # the earlier revision is not in the capture
            else:
                revision = story.tasks[task_id] + draw(st.integers(1, 2))
                data = {"task_id": task_id, "revision": revision, "status": status, "parts": self.parts(),
                        "previous_revision": story.tasks[task_id]}
                prior_status = self._task_status[task_id]
                if prior_status in FINISHED_TASK and status in ACTIVE_TASK or draw(st.booleans()):
                    data["reopen_reason"] = draw(nonempty_text)
            # depend only on tasks created earlier: the dependency graph stays acyclic
            earlier = self.task_order[: self.task_order.index(task_id)]
            if earlier and draw(st.booleans()):
                data["dependencies"] = draw(st.lists(st.sampled_from(earlier), unique=True, min_size=1, max_size=2))
            story.tasks[task_id] = revision
            self._task_status[task_id] = status
            return self.add_event("task_update", data, actor, causes_from=history)
        if action == "note":
            return self.add_event("note", {"parts": self.parts(), "category": draw(st.sampled_from(
                ["example.aside", "summary"]))}, actor, causes_from=history)
        if action == "extension":
            required = draw(st.booleans())
            etype = draw(st.sampled_from(["example.ext/1", "agent-continuity.event/1", "vendor.thing/2"]))
            if required:
                self.required.append(etype)
            return self.add_event("extension", {"type": etype, "value": draw(json_values()),
                                                "interpretation_required": required}, actor, causes_from=history)
        if action == "context_checkpoint":
            context_id = _unique(draw, self.context_ids)
            data = {"context_id": context_id, "reason": draw(st.sampled_from(["initial", "request", "compaction",
                                                                               "manual", "unknown"]))}
            if self.pending_contexts and draw(st.booleans()):
                data["replaced_context_id"] = self.pending_contexts[-1][0]
            self.pending_contexts.append((context_id, history[-1] if history else None))
            return self.add_event("context_checkpoint", data, actor, causes_from=history)
        if action == "configuration_change" and self.configurations:
            return self.add_event("configuration_change", {"configuration_id": self.configurations[0]["id"]},
                                  actor, causes_from=history)
        if action == "execution_transition":
            live = [e["id"] for e in self.executions if e["id"] not in self.finished_executions]
            if live:
                execution_id = draw(st.sampled_from(live))
                status = draw(st.sampled_from(["running", "completed", "failed", "cancelled", "interrupted",
                                               "unknown"]))
                if status in ("completed", "failed", "cancelled", "interrupted"):
                    self.finished_executions.add(execution_id)
                data = {"execution_id": execution_id, "status": status}
                _put(data, "error", draw(optional(json_values(3))))
                if draw(st.booleans()):
                    data["parts"] = self.parts()
                return self.add_event("execution_transition", data, actor, causes_from=history)
        if action == "resource_change" and self.resources:
            data = {"resource_id": draw(st.sampled_from(self.resources))["id"],
                    "operation": draw(st.sampled_from(["created", "modified", "deleted", "observed"]))}
            if len(self.resources) > 1 and draw(st.booleans()):
                data["previous_resource_id"] = self.resources[0]["id"]
            return self.add_event("resource_change", data, actor, causes_from=history)
        if action == "correction":
            notes = [e for e in self.events if e["id"] in history and e["kind"] in ("message", "note")]
            if notes:
                prior = draw(st.sampled_from(notes))
                data = {k: v for k, v in prior["data"].items() if k in ("role", "category")}
                data["parts"] = self.parts()
                return self.add_event(prior["kind"], data, actor, causes_from=history, supersedes=prior["id"])
        # the fallback, and the plain case: a message
        role = draw(st.sampled_from(["user", "assistant", "system", "developer", "tool", "unknown"]))
        return self.add_event("message", {"role": role, "parts": self.parts()}, actor, causes_from=history)

    # -- what the story implies -------------------------------------------------------------

    def contexts(self, main_id: str) -> list[dict[str, Any]]:
        draw = self.draw
        by_id = {e["id"]: e for e in self.events}
        out = []
        for context_id, boundary in self.pending_contexts:
            out.append({"id": context_id, "branch_id": main_id, "at_event_id": boundary,
                        "purpose": draw(st.sampled_from(["summary", "continuation", "model_request"])),
                        "fidelity": draw(st.sampled_from(["reconstructed", "partial", "unknown"])),
                        "inputs": [], "tool_ids": []})
        for _ in range(draw(st.integers(0, 2), label="contexts")):
            branch = draw(st.sampled_from(self.branches))
            history = branch["event_ids"]
            k = draw(st.integers(0, len(history)))
            selected = history[:k]
            context: dict[str, Any] = {
                "id": _unique(draw, self.context_ids), "branch_id": branch["id"],
                "at_event_id": selected[-1] if selected else None,
                "purpose": draw(st.sampled_from(["model_request", "continuation", "summary"])),
                "fidelity": "reconstructed", "inputs": self.inputs([by_id[e] for e in selected]),
                "tool_ids": draw(st.lists(st.sampled_from([t["id"] for t in self.tools]), unique=True)),
            }
            if self.configurations and draw(st.booleans()):
                context["configuration_id"] = self.configurations[0]["id"]
                context["request_parameters"] = draw(json_objects)
                context["fidelity"] = draw(st.sampled_from(["exact", "reconstructed", "partial"]))
            else:
                context["fidelity"] = draw(st.sampled_from(["reconstructed", "partial", "unknown"]))
            _put(context, "model", draw(optional(json_objects)))
            out.append(context)
        return [self.x(c) for c in out]

    def inputs(self, selected: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Typed inputs replaying a selected history: messages, one call input per invocation
        (its latest version), its results in order. Whole messages or whole calls may be left out."""
        draw = self.draw
        superseded = {e["supersedes"]["event_id"] for e in selected if "supersedes" in e and e["kind"] != "tool_call"}
        latest = {e["data"]["call_id"]: e for e in selected if e["kind"] == "tool_call"}
        dropped_calls = {c for c in latest if draw(st.booleans())}
        out: list[dict[str, Any]] = []
        seen: set[str] = set()
        for e in selected:
            data = e["data"]
            ref = [{"event_id": e["id"]}]
            if e["kind"] == "message" and e["id"] not in superseded and draw(st.booleans()):
                item = {"id": f"in-{len(out)}", "kind": "message", "role": data["role"], "parts": data["parts"],
                        "source_events": ref}
            elif e["kind"] == "tool_call" and data["call_id"] not in dropped_calls and data["call_id"] not in seen:
                seen.add(data["call_id"])
                last = latest[data["call_id"]]
                item = {"id": f"in-{len(out)}", "kind": "tool_call", "role": "assistant", "parts": [],
                        "source_events": [{"event_id": last["id"]}], "call_id": data["call_id"],
                        "tool_id": data["tool_id"], "arguments": last["data"]["arguments"],
                        "arguments_status": last["data"]["arguments_status"]}
            elif e["kind"] == "tool_result" and data["call_id"] in seen:
                item = {"id": f"in-{len(out)}", "kind": "tool_result", "role": "tool", "parts": data["parts"],
                        "source_events": ref, **{k: data[k] for k in ("call_id", "result_index", "terminal",
                                                                      "outcome")}}
            else:
                continue
            if draw(st.booleans()):
                item["transformation"] = "example.trimmed"
            out.append(self.x(item))
        return out

    def checkpoints(self, contexts: list[dict[str, Any]]) -> list[dict[str, Any]]:
        draw = self.draw
        taken: set[str] = set()
        out = []
        for branch in self.branches:
            history = branch["event_ids"]
            heads = [len(history)]
            if history and draw(st.booleans()):
                heads.append(draw(st.integers(1, len(history))))  # another checkpoint inside the branch
            for n, k in enumerate(heads):
                if n and k == len(history):
                    continue  # exactly one checkpoint at the head
                story = self.positions[branch["id"]][k]
                at = history[k - 1] if k else None
                cp: dict[str, Any] = {
                    "id": _unique(draw, taken), "branch_id": branch["id"], "at_event_id": at,
                    "knowledge": draw(st.sampled_from(["observed", "derived", "unknown"])),
                    "status": draw(st.sampled_from(["idle", "active", "waiting", "stopped", "ended", "unknown"])),
                    "context_id": None, "configuration_id": None,
                    "open_calls": [{"call_id": c, "state": draw(st.sampled_from(["pending", "outcome_unknown"]))}
                                   for c in story.open_calls],
                    "open_decisions": [{"request_id": r, "state": "outcome_unknown"} for r in story.open_requests],
                    "tasks": [{"task_id": t, "revision": r} for t, r in story.tasks.items() if draw(st.booleans())],
                    "requirements": [],
                }
                usable = [c["id"] for c in contexts if c["branch_id"] == branch["id"] and (
                    c["at_event_id"] is None or (at is not None and self._seq(c["at_event_id"]) <= self._seq(at)))]
                if usable and draw(st.booleans()):
                    cp["context_id"] = draw(st.sampled_from(usable))
                if self.configurations and draw(st.booleans()):
                    cp["configuration_id"] = self.configurations[0]["id"]
                if draw(st.booleans()):
                    cp["requirements"] = [{"id": "req-1", "kind": "asif.resource", "description": draw(nonempty_text),
                                           "required_for": ["continue"],
                                           "status": draw(st.sampled_from(["available", "unresolved", "unavailable",
                                                                           "unsupported"]))}]
                out.append(self.x(cp))
        return out

    def _seq(self, event_id: str) -> int:
        return next(e["sequence"] for e in self.events if e["id"] == event_id)

    def streams(self) -> list[dict[str, Any]]:
        draw = self.draw
        out: list[dict[str, Any]] = []
        taken: set[str] = set()
        for ev in self.events:
            data = ev["data"]
            streamable = ev["kind"] == "tool_call" and data["arguments_status"] in ("complete", "partial")
            if streamable and draw(st.booleans()):
                raw = json.dumps(data["arguments"], ensure_ascii=False).encode()
                complete = data["arguments_status"] == "complete"
                if not complete:
                    raw = raw[: draw(st.integers(0, len(raw)))]
                out.append(self._stream(taken, "tool_arguments", ev, raw, complete))
            elif (ev["kind"] == "tool_result" and len(data["parts"]) == 1 and data["parts"][0]["kind"] == "text"
                  and draw(st.booleans())):
                raw = data["parts"][0]["text"].encode()
                complete = draw(st.booleans())
                stream = self._stream(taken, "tool_result_text", ev, raw if complete else raw[:1], complete)
                stream["result_index"] = data["result_index"]
                out.append(stream)
        return out

    def _stream(self, taken: set[str], kind: str, ev: dict[str, Any], raw: bytes, complete: bool) -> dict[str, Any]:
        draw = self.draw
        resource = _embedded_text(_unique(draw, self.resource_ids), raw.decode("utf-8", "replace"), "stream")
        raw = resource["text"].encode()
        if not complete:
            resource["purpose"] = "stream-prefix"
        self.resources.append(resource)
        cuts = sorted(set(draw(st.lists(st.integers(0, len(raw)), max_size=2))) | {0, len(raw)})
        spans = list(zip(cuts, cuts[1:], strict=False)) or [(0, 0)]
        segments = [{"index": i, "resource_id": resource["id"], "offset": a, "length": b - a,
                     "terminal": complete and i == len(spans) - 1} for i, (a, b) in enumerate(spans)]
        if not complete and draw(st.booleans()):
            segments = []  # an empty stream is partial
        return self.x({"id": _unique(draw, taken), "kind": kind, "event_id": ev["id"], "call_id": ev["data"]["call_id"],
                       "status": "complete" if complete else "partial", "segments": segments})

    def capture(self) -> dict[str, Any]:
        draw = self.draw
        c: dict[str, Any] = {"id": self.capture_id, "producer": self.x({"name": draw(nonempty_text), "version": "1"}),
                             "consistency": draw(st.sampled_from(["consistent", "partial", "unknown"])),
                             "boundary": draw(nonempty_text)}
        _put(c, "started_at", draw(optional(timestamps)))
        _put(c, "ended_at", draw(optional(timestamps)))
        return self.x(c)

    def session(self) -> dict[str, Any]:
        draw = self.draw
        s: dict[str, Any] = {"id": self.sid, "native_ids": [], "lineage": []}
        _put(s, "title", draw(optional(text)))
        if draw(st.booleans()):
            s["objective"] = self.parts(1)
        if draw(st.booleans()):
            s["native_ids"].append(self.x({"provider": draw(nonempty_text), "namespace": "session_id",
                                           "value": draw(nonempty_text)}))
        for relation in draw(st.lists(st.sampled_from(["continuation", "fork", "translation", "copy"]), max_size=2)):
            entry: dict[str, Any] = {"relation": relation, "session_id": "source-session", "capture_id": "source-cap"}
            if relation in ("fork", "translation") or draw(st.booleans()):
                entry.update(event_id="source-event", inclusive=draw(st.booleans()))
            s["lineage"].append(self.x(entry))
        return self.x(s)

    def coverage(self, doc: dict[str, Any]) -> list[dict[str, Any]]:
        draw = self.draw
        kinds = {e["kind"] for e in doc["events"]}
        data = {
            "participants": bool(doc["participants"]), "conversation": "message" in kinds,
            "branches": True, "executions": bool(doc["executions"]), "contexts": bool(doc["contexts"]),
            "configuration": bool(doc["configurations"]), "tools": bool(doc["tools"]) or "tool_call" in kinds,
            "decisions": "decision_request" in kinds, "tasks": "task_update" in kinds,
            "resources": bool(doc["resources"]), "environment": bool(doc["environments"]),
            "native": any(r["purpose"] == "native" for r in doc["resources"]), "usage": True,
        }
        statuses = ["complete", "partial", "unavailable", "excluded", "not_inspected", "not_applicable"]
        out = []
        for scope in SCOPES:
            if scope == "tasks" and self.tasks_partial:
                status = "partial"
            else:
                status = draw(st.sampled_from(statuses + ([] if data[scope] else ["known_empty"])))
            out.append(self.x({"scope": scope, "status": status, "detail": draw(nonempty_text)}))
        return out

    def losses(self, doc: dict[str, Any]) -> list[dict[str, Any]]:
        draw = self.draw
        refs = [("event", e["id"]) for e in doc["events"]] + [("resource", r["id"]) for r in doc["resources"]] + \
            [("branch", b["id"]) for b in doc["branches"]] + [("tool", t["id"]) for t in doc["tools"]]
        out, taken = [], set()
        for _ in range(draw(st.integers(0, 2), label="losses")):
            loss: dict[str, Any] = {"id": _unique(draw, taken), "stage": draw(st.sampled_from(
                ["capture", "normalization", "redaction", "translation"])), "kind": draw(nonempty_text),
                "explanation": draw(nonempty_text)}
            if not refs or draw(st.booleans()):
                loss["scope"] = draw(st.sampled_from(SCOPES))
            if refs and ("scope" not in loss or draw(st.booleans())):
                ref_type, rid = draw(st.sampled_from(refs))
                loss["references"] = [{"type": ref_type, "id": rid}]
            out.append(self.x(loss))
        return out

    def usage(self) -> list[dict[str, Any]]:
        draw = self.draw
        scopes = [("session", self.sid), ("turn", "turn-1")] + [("event", e["id"]) for e in self.events[:2]] + \
            [("execution", e["id"]) for e in self.executions[:1]]
        out = []
        for _ in range(draw(st.integers(1, 2))):
            scope, scope_id = draw(st.sampled_from(scopes))
            out.append(self.x({"scope": scope, "scope_id": scope_id, "unit": draw(st.sampled_from(["tokens", "usd"])),
                               "value": draw(st.one_of(st.integers(0, 10**9), st.floats(0, 1e6))),
                               "counter": draw(st.sampled_from(["delta", "cumulative"])),
                               "provenance": self.provenance()}))
        return out

    def continuation(self, checkpoint: dict[str, Any], contexts: list[dict[str, Any]]) -> dict[str, Any]:
        """A plan that meets the profile's rules: it continues from ``checkpoint`` (the main branch's
        head) through a new continuation context and configuration, which the checkpoint now names;
        every branch event is accounted as not input, and the checkpoint holds no open call (its
        knowledge becomes unknown), since no operation is generated to bind one."""
        branch = next(b for b in self.branches if b["id"] == checkpoint["branch_id"])
        self.configurations.append({"id": "continuation-configuration", "instructions": [], "capabilities": [],
                                    "policies": [], "secret_requirements": [], "knowledge": "unknown"})
        contexts.append({"id": "continue-context", "branch_id": branch["id"], "at_event_id": checkpoint["at_event_id"],
                         "purpose": "continuation", "fidelity": "unknown", "inputs": [], "tool_ids": [],
                         "configuration_id": "continuation-configuration"})
        checkpoint.update(context_id="continue-context", configuration_id="continuation-configuration",
                          knowledge="unknown", open_calls=[])
        plan = {
            "id": "continue-main", "checkpoint_id": checkpoint["id"], "context_id": "continue-context",
            "configuration_id": "continuation-configuration", "workspace_ids": [], "dependency_ids": [],
            "service_binding_ids": [],
            "operation_ids": [], "native_import_id": None,
            "boundary": {"method": self.draw(st.sampled_from(["quiesced", "best_effort"])), "consistency": "unknown",
                         "evidence_resource_ids": [], "explanation": "Generated for a property test."},
            "context_accounting": [{"event_id": e, "disposition": "not_input", "input_ids": [],
                                    "explanation": "Generated: kept in history, not given as input."}
                                   for e in branch["event_ids"]],
            "cwd": None, "path_references": [],
            "model_requirements": {"source_model": {"provider": "example", "id": "model-a", "revision": None},
                                   "capabilities": [], "media_types": [], "overflow_policy": "block"},
            "next_action": {"kind": "await_user"},
        }
        return self.x({
            "profile_version": "0.2",
            "source_runtime": {"agent": {"id": "example-agent", "version": None, "state_format": None},
                               "adapter": {"id": "example-adapter", "version": "1"}, "os": "linux",
                               "architecture": "x86_64"},
            "workspaces": [], "dependencies": [],
            "configuration_bindings": [{"configuration_id": "continuation-configuration", "effective_order": [],
                                        "instruction_rules": [], "policy_ids": []}],
            "service_bindings": [],
            "operations": [], "native_imports": [], "plans": [self.x(plan)],
        })
