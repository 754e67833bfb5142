"""Round-trip properties over generated documents in both formats (hypothesis).

The profiles (``ci``, ``deep``) are registered in ``conftest.py`` and chosen with the
``ASIF_HYPOTHESIS_PROFILE`` environment variable. Every property compares type-strictly
(``exact``: 1 is not 1.0, absent is not null).
"""

from __future__ import annotations

import copy
import json
from typing import Any
from unittest import mock

import msgspec
from hypothesis import event, example, given, note
from hypothesis import strategies as st

from asif_convert import ConversionError, InvalidInput, Options, convert
from asif_convert import _codec as codec_module
from asif_convert._codec import Codec, codec_for
from asif_convert._pipeline import new_context
from asif_convert._registry import get, namespaces

from .strategies import asif_sessions, continuity_exports, json_strings, json_values
from .test_roundtrip import _covered, exact

ASIF = get("asif")
CODEC = codec_for(namespaces())
CONTINUITY = get("continuity")


def encode(doc: Any) -> bytes:
    return json.dumps(doc, ensure_ascii=False).encode()


def asif_errors(doc: dict[str, Any]) -> list:
    """Problems of an ASIF document, less the R009 warnings for the vendor features it declares
    on purpose (this validator supports only the three asif.* features)."""
    return [p for p in ASIF.validate(doc) if not (p.rule == "ASIF-R009" and p.severity == "warning")]


def show(doc: Any) -> None:
    note(json.dumps(doc, ensure_ascii=False, indent=1))


# -- minimal counterexamples found by these properties (kept as explicit examples) -------------

_SCOPES = ("participants", "conversation", "branches", "executions", "contexts", "configuration", "tools",
           "decisions", "tasks", "resources", "environment", "native", "usage")


def session(events: list[dict[str, Any]] = (), **fields: Any) -> dict[str, Any]:
    """The smallest valid ASIF session (one branch, its head checkpoint), with ``events`` on the
    branch and ``fields`` replacing or adding root properties."""
    ids = [e["id"] for e in events]
    doc: dict[str, Any] = {
        "asif_version": "0.4",
        "capture": {"id": "c", "producer": {"name": "p", "version": "1"}, "consistency": "unknown",
                    "boundary": "b"},
        "session": {"id": "s", "native_ids": [], "lineage": []},
        "participants": [{"id": "a", "kind": "agent"}], "events": list(events),
        "branches": [{"id": "main", "event_ids": ids, "head_event_id": ids[-1] if ids else None}],
        "executions": [], "contexts": [], "configurations": [], "tools": [], "resources": [], "environments": [],
        "checkpoints": [{"id": "head", "branch_id": "main", "at_event_id": ids[-1] if ids else None,
                         "knowledge": "unknown", "status": "unknown", "context_id": None, "configuration_id": None,
                         "open_calls": [], "open_decisions": [], "tasks": [], "requirements": []}],
        "coverage": [{"scope": s, "status": "not_inspected", "detail": "d"} for s in _SCOPES],
        "losses": [], "required_features": [],
    }
    doc.update(fields)
    return doc


UNKNOWN_RESOURCE = {"id": "r", "media_type": "text/plain", "availability": "unknown", "purpose": "input",
                    "explanation": "e", "bytes": 1, "sha256": "0" * 64}

# A document loss naming a resource that continuity cannot carry: the return trip moved the
# reference into the explanation although the residual should have restored it.
BUG_LOSS_REFERENCE = session(
    resources=[UNKNOWN_RESOURCE],
    losses=[{"id": "l", "stage": "capture", "kind": "k", "explanation": "e",
             "references": [{"type": "resource", "id": "r"}]}],
)
# Root additional properties named like IR-only fields were read into the IR and never written.
BUG_IR_NAMED_ROOT_PROPERTY = session(ir_version=1, extras={"x": None})
# Without the residual, the placeholder for a resource that a bytes locator reads declares no
# size, so the return trip writes an invalid session (R030) and raises InternalError.
BUG_PLACEHOLDER_WITHOUT_BYTES = session(
    [{"id": "e", "sequence": 0, "actor_id": "a", "kind": "note", "causes": [],
      "provenance": {"mode": "observed", "producer": "p",
                     "sources": [{"resource_id": "r", "locator": {"syntax": "bytes", "offset": 0, "length": 0}}]},
      "data": {"parts": [], "category": "c"}}],
    resources=[UNKNOWN_RESOURCE],
)
# Without the residual, external bindings (an ASIF-only root collection) are dropped, so a
# result or resolution answering an external call or request no longer resolves (R040/R046)
# and the return trip raises InternalError; no placeholder stands in for the binding.
_SOURCE = {"session_id": "s0", "capture_id": "c0", "event_id": "e0"}
BUG_EXTERNAL_REQUEST_WITHOUT_RESIDUAL = session(
    [{"id": "e", "sequence": 0, "actor_id": "a", "kind": "decision_resolution", "causes": [],
      "provenance": {"mode": "observed", "producer": "p"},
      "data": {"request_id": "q", "outcome": "allowed", "answer": []}}],
    external_bindings=[{"kind": "request", "id": "q", "source": _SOURCE,
                        "descriptor": {"decision_kind": "approval", "prompt": [], "options": []}}],
    required_features=["asif.external-bindings/0.1"],
)
BUG_EXTERNAL_CALL_WITHOUT_RESIDUAL = session(
    [{"id": "e", "sequence": 0, "actor_id": "a", "kind": "tool_result", "causes": [],
      "provenance": {"mode": "observed", "producer": "p"},
      "data": {"call_id": "k", "result_index": 0, "terminal": True, "outcome": "success", "parts": []}}],
    tools=[{"id": "t", "name": "example.t", "description": "", "input_schema": True}],
    external_bindings=[{"kind": "call", "id": "k", "source": _SOURCE,
                        "descriptor": {"tool_id": "t", "arguments": {}, "arguments_status": "complete"}}],
    required_features=["asif.external-bindings/0.1"],
)


# -- 1. generated documents are valid --------------------------------------------------------


@given(continuity_exports())
def test_generated_exports_are_valid(doc):
    assert CONTINUITY.validate(doc) == []


@given(asif_sessions())
@example(BUG_LOSS_REFERENCE)
@example(BUG_IR_NAMED_ROOT_PROPERTY)
@example(BUG_PLACEHOLDER_WITHOUT_BYTES)
@example(BUG_EXTERNAL_REQUEST_WITHOUT_RESIDUAL)
@example(BUG_EXTERNAL_CALL_WITHOUT_RESIDUAL)
def test_generated_sessions_are_valid(doc):
    assert asif_errors(doc) == []


@given(continuity_exports(broken=True))
def test_generated_broken_exports_fail_only_references(doc):
    problems = CONTINUITY.validate(doc)
    assert problems and all(p.rule.startswith("CONT-") for p in problems)


# -- 2. continuity -> ASIF -> continuity is the identity ---------------------------------------


@given(continuity_exports())
def test_continuity_asif_continuity_is_identity(doc):
    show(doc)
    there = convert(encode(doc), to="asif")
    assert asif_errors(there.document) == []
    back = convert(there.output, to="continuity")
    assert exact(doc, back.document) == {}
    assert back.losses == []


# -- 3. ASIF -> continuity -> ASIF is the identity with the residual ---------------------------


@given(asif_sessions())
@example(BUG_LOSS_REFERENCE)
@example(BUG_IR_NAMED_ROOT_PROPERTY)
def test_asif_continuity_asif_is_identity_with_residual(doc):
    show(doc)
    assert asif_errors(doc) == []
    middle = convert(encode(doc), to="continuity")
    assert CONTINUITY.validate(middle.document) == []
    back = convert(middle.output, to="asif")
    assert exact(doc, back.document) == {}


# -- 4. without the residual, every difference is a loss ---------------------------------------


@given(asif_sessions())
@example(BUG_PLACEHOLDER_WITHOUT_BYTES)
@example(BUG_EXTERNAL_REQUEST_WITHOUT_RESIDUAL)
@example(BUG_EXTERNAL_CALL_WITHOUT_RESIDUAL)
def test_without_residual_every_difference_is_a_loss(doc):
    show(doc)
    middle = convert(encode(doc), to="continuity", options=Options(residual=False))
    assert "residual/1" not in {s["kind"] for s in middle.document.get("native_states", [])}
    back = convert(middle.output, to="asif").document
    assert asif_errors(back) == []
    for path in exact(doc, back).affected_paths:
        assert _covered(path, doc, back, back["losses"]), f"{path} differs and no loss names it"


# -- 5. each reader/writer pair is the identity through the IR ---------------------------------


@given(asif_sessions())
@example(BUG_IR_NAMED_ROOT_PROPERTY)
def test_asif_reader_writer_is_identity(doc):
    show(doc)
    ir = CODEC.load_document(copy.deepcopy(doc))
    assert exact(doc, CODEC.dump_document(ir)) == {}
    again = CODEC.load_document(CODEC.dump_document(ir))
    assert exact(msgspec.to_builtins(ir), msgspec.to_builtins(again)) == {}


@given(asif_sessions())
@example(BUG_IR_NAMED_ROOT_PROPERTY)
def test_codec_fast_paths_agree_with_the_walk(doc):
    """The codec lets msgspec build nodes and JSON where no verbatim home is involved; with those
    shortcuts off (every node walked key by key) it must read and write the same."""
    fast = CODEC.load_document(copy.deepcopy(doc))
    with mock.patch.object(Codec, "_load", Codec._load_walk), mock.patch.object(codec_module, "_no_extras", _never):
        walked = CODEC.load_document(copy.deepcopy(doc))
        dumped_walked = CODEC.dump_document(walked)
    assert fast == walked
    assert exact(CODEC.dump_document(fast), dumped_walked) == {}


def _never(*_: Any) -> bool:
    return False


@given(continuity_exports())
def test_continuity_reader_writer_is_identity(doc):
    show(doc)
    ir = CONTINUITY.read(copy.deepcopy(doc), new_context(Options()))
    assert exact(doc, CONTINUITY.write(ir, new_context(Options()))) == {}
    # and the ASIF writer and reader agree on it: the session they write reads back to an IR
    # that writes the same session (configurations and environments, always written, then
    # show up in ``extras``, so the IR itself is compared from there on)
    session = CODEC.dump_document(ir)
    normalized = CODEC.load_document(copy.deepcopy(session))
    assert exact(session, CODEC.dump_document(normalized)) == {}
    again = CODEC.load_document(CODEC.dump_document(normalized))
    assert exact(msgspec.to_builtins(normalized), msgspec.to_builtins(again)) == {}


# -- referentially broken exports: converted with losses, or refused under strict ---------------


@given(continuity_exports(broken=True))
def test_broken_exports_convert_with_losses_or_are_refused_under_strict(doc):
    show(doc)
    data = encode(doc)
    result = convert(data, to="asif")
    assert result.warnings and all(p.rule.startswith("CONT-") for p in result.warnings)
    assert result.losses
    assert asif_errors(result.document) == []
    assert exact(doc, convert(result.output, to="continuity").document) == {}  # and they come back as they were
    try:
        convert(data, to="asif", options=Options(strict=True))
    except InvalidInput as exc:
        assert {p.rule for p in exc.problems} == {p.rule for p in result.warnings}
    else:
        raise AssertionError("strict conversion accepted a referentially broken export")


# -- 6. deterministic, and nothing but ConversionError escapes ---------------------------------


def _paths(value: Any, path: tuple = ()) -> list[tuple]:
    out = [path]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*path, i))
    return out


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    """A valid document of either format, then one or two blind edits (or broken bytes)."""
    doc = draw(st.one_of(continuity_exports(), asif_sessions()))
    for _ in range(draw(st.integers(1, 2))):
        paths = [p for p in _paths(doc)[1:] if p not in (("format",), ("asif_version",))]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = doc
        for step in path[:-1]:
            parent = parent[step]
        key = path[-1]
        how = draw(st.sampled_from(["delete", "replace", "duplicate", "copy-sibling", "re-id", "re-id"]))
        if how == "re-id":  # a dangling or crossed reference: schema-valid, semantically broken
            refs = [p for p in paths if isinstance(p[-1], str) and (p[-1] == "id" or p[-1].endswith("_id"))]
            if refs:
                path = draw(st.sampled_from(refs))
                parent = doc
                for step in path[:-1]:
                    parent = parent[step]
                strings = [v for v in json_strings(doc)] + ["nowhere"]
                parent[path[-1]] = draw(st.sampled_from(strings))
        elif how == "delete":
            del parent[key]
        elif how == "replace":
            parent[key] = draw(st.one_of(json_values(4), st.just(2**64)))
        elif how == "duplicate" and isinstance(parent, list):
            parent.insert(key, copy.deepcopy(parent[key]))
        else:  # put another value of the same container here: ids that collide, types that clash
            siblings = list(parent.values()) if isinstance(parent, dict) else parent
            parent[key] = copy.deepcopy(draw(st.sampled_from(siblings)))
    data = encode(doc)
    if draw(st.booleans(), label="break the bytes"):
        cut = draw(st.integers(0, len(data)))
        data = draw(st.sampled_from([data[:cut], data[:cut] + b"\xff" + data[cut:], b"\xef\xbb\xbf" + data]))
    return data


def _outcome(data: bytes, to: str, options: Options) -> tuple[str, bytes | str]:
    try:
        return "ok", convert(data, to=to, options=options).output
    except ConversionError as exc:
        return type(exc).__name__, str(exc)


@given(mutated(), st.sampled_from(["asif", "continuity"]), st.booleans(), st.booleans())
def test_conversion_is_deterministic_and_raises_only_conversion_errors(data, to, strict, residual):
    note(data.decode("utf-8", "replace"))
    options = Options(strict=strict, residual=residual)
    first = _outcome(data, to, options)
    event(f"outcome: {first[0]}")
    assert _outcome(data, to, options) == first


@given(st.one_of(continuity_exports(), asif_sessions()), st.sampled_from(["asif", "continuity"]))
def test_conversion_of_valid_documents_is_deterministic(doc, to):
    data = encode(doc)
    first = convert(data, to=to)
    assert convert(data, to=to).output == first.output
    assert convert(first.output, to=to).output == convert(first.output, to=to).output
