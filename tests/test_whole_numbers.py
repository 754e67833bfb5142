"""Whole numbers written as floats (``88.0``, ``3e0``) are integers to both schemas, so every rule
that reads a number must compare them by value, and a conversion must keep them as written."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest

from asif_convert import convert, validate
from asif_convert._jsonio import decode
from asif_convert._validation.semantic import check_semantics

from .conftest import CORPUS
from .test_semantic_rules import CASES, E, apply, ev, minimal_valid, rich_valid, schema_errors


def floated(value: Any, keep: int = 1) -> Any:
    """A copy with integers turned into floats; ``keep=2`` turns every other one, to mix both."""
    counter = [0]

    def walk(v: Any) -> Any:
        if isinstance(v, bool):
            return v
        if isinstance(v, int):
            counter[0] += 1
            return float(v) if counter[0] % keep == 0 else v
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()}
        if isinstance(v, list):
            return [walk(x) for x in v]
        return v

    return walk(copy.deepcopy(value))


def found(doc: dict) -> set[tuple[str, str]]:
    return {(p.rule, p.path) for p in check_semantics(doc)}


@pytest.mark.parametrize("keep", [1, 2], ids=["all-floats", "mixed"])
@pytest.mark.parametrize("build", [minimal_valid, rich_valid], ids=["minimal", "rich"])
def test_valid_documents_stay_valid_with_floats(build, keep: int) -> None:
    doc = floated(build(), keep)
    assert any(isinstance(e["sequence"], float) for e in doc["events"])
    assert schema_errors(doc) == []
    assert check_semantics(doc) == []


@pytest.mark.parametrize("keep", [1, 2], ids=["all-floats", "mixed"])
def test_every_violation_is_found_the_same_with_floats(keep: int) -> None:
    """Each rule family that reads numbers (events, tasks, history, contexts, streams, references,
    resources) reports exactly what it reports for the integer document."""
    for n, name, base, ops, _path in CASES:
        doc = apply(base(), ops)
        as_floats = floated(doc, keep)
        assert schema_errors(as_floats) == [], name
        assert found(as_floats) == found(doc), f"R{n:03d} {name}"


def test_duplicate_sequence_written_as_float_is_caught() -> None:
    doc = rich_valid()
    doc["events"][E["e-note"]]["sequence"] = float(E["e-xt1"])
    assert ("ASIF-R020", ev("e-note", "sequence")) in found(doc)


def test_float_sequence_is_compared_by_value_for_causes() -> None:
    raw = json.dumps(minimal_valid()).replace('"sequence": 1', '"sequence": 1e0').encode()
    doc = decode(raw)
    assert doc["events"][1]["sequence"] == 1.0 and isinstance(doc["events"][1]["sequence"], float)
    assert check_semantics(doc) == []
    doc["events"][1]["sequence"] = 0.0  # now equal to its cause's sequence
    assert ("ASIF-R022", "/events/1/causes/0/event_id") in found(doc)


@pytest.mark.parametrize(
    ("field", "value", "rule", "path"),
    [
        ("result_index", 0.0, "ASIF-R041", ev("e-res1b", "data", "result_index")),
        ("revision", 1.0, "ASIF-R050", ev("e-task1b", "data", "revision")),
    ],
)
def test_float_violations_in_history_and_tasks(field: str, value: float, rule: str, path: str) -> None:
    doc = rich_valid()
    target = "e-res1b" if field == "result_index" else "e-task1b"
    doc["events"][E[target]]["data"][field] = value
    assert schema_errors(doc) == []
    assert (rule, path) in found(doc)


def test_fractional_locator_is_still_rejected() -> None:
    """Only a zero fraction makes a float a whole number."""
    doc = rich_valid()
    doc["events"][E["e-user"]]["provenance"]["sources"] = [
        {"resource_id": "notes", "locator": {"syntax": "bytes", "offset": 0.5, "length": 1}}
    ]
    rules = {p.rule for p in check_semantics(doc)}
    assert "ASIF-R030" in rules


# -- conversions keep 3.0 as 3.0 and 3 as 3 -----------------------------------------------------


def _floated_text(raw: bytes, key: str) -> bytes:
    """Rewrite every integer value of ``key`` as a float literal in the JSON text itself."""
    doc = json.loads(raw)

    def walk(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: (float(x) if k == key and isinstance(x, int) and not isinstance(x, bool) else walk(x))
                    for k, x in v.items()}
        if isinstance(v, list):
            return [walk(x) for x in v]
        return v

    return json.dumps(walk(doc)).encode()


MIXED = CORPUS / "continuity" / "14-mixed-everything.json"


@pytest.mark.parametrize("key", ["sequence", "token_estimate", "size_bytes"])
def test_continuity_round_trip_keeps_floats_as_written(key: str) -> None:
    raw = _floated_text(MIXED.read_bytes(), key)
    assert re.search(rb'"' + key.encode() + rb'": [0-9]+\.0', raw)
    assert validate(raw) == []
    asif = convert(raw, to="asif").output
    assert validate(asif) == []
    back = convert(asif, to="continuity").output
    assert json.loads(back) == json.loads(raw)
    assert _number_literals(back, key) == _number_literals(raw, key)


@pytest.mark.parametrize("key", ["sequence", "revision", "result_index"])
def test_asif_round_trip_keeps_floats_as_written(key: str) -> None:
    raw = _floated_text((CORPUS / "asif" / "task-dependencies.session.json").read_bytes(), key)
    if key == "result_index":
        raw = _floated_text((CORPUS / "asif" / "tool-call-completed.session.json").read_bytes(), key)
    assert validate(raw) == []
    cont = convert(raw, to="continuity").output
    back = convert(cont, to="asif").output
    assert _number_literals(back, key) == _number_literals(raw, key)


def _number_literals(raw: bytes, key: str) -> list[str]:
    """The literal text of every number written for ``key``, in document order."""
    found = re.findall(rb'"' + key.encode() + rb'":\s*(-?[0-9][0-9.eE+-]*)', raw)
    assert found, f"no {key} in the document"
    return found


def test_continuation_profile_findings_are_the_same_with_floats() -> None:
    """The profile reads numbers too (instruction priorities, Git index stages)."""
    from . import test_continuation as profile

    for n, name, base, edit, _path in profile.CASES:
        doc = base()
        edit(doc)
        as_floats = floated(doc)
        assert schema_errors(as_floats) == [], name
        assert found(as_floats) == found(doc), f"C{n:03d} {name}"
    doc = profile.with_git()
    doc["continuation"]["workspaces"][1]["git"]["index_entries"].append(
        {**doc["continuation"]["workspaces"][1]["git"]["index_entries"][0], "stage": 2.0}
    )
    assert ("ASIF-C006", "/continuation/workspaces/1/git/index_entries/1/stage") in found(doc)


def test_float_sequences_convert_to_the_same_session() -> None:
    """Merged order, fork points and every other derived record are the same for 7 and 7.0; only
    the digest of the input's bytes (in the capture id, lineage and boundary) differs, and the
    source sequences kept verbatim in the native home keep their ``.0``."""
    raw = json.dumps(json.loads(MIXED.read_bytes())).encode()
    texts = [convert(x, to="asif").output.decode() for x in (raw, _floated_text(MIXED.read_bytes(), "sequence"))]
    digests = [_input_digest(t) for t in texts]
    assert digests[0] != digests[1]
    docs = [json.loads(t.replace(digests[1], digests[0]).replace(digests[1][:32], digests[0][:32])) for t in texts]
    kept = []  # the source sequences each output keeps verbatim, taken out to compare the rest
    for doc in docs:
        found = {}
        for event in doc["events"]:
            state = event.get("extensions", {}).get("agent-continuity/1", {})
            if "sequence" in state:
                found[event["id"]] = state.pop("sequence")
        kept.append(found)
    assert docs[0] == docs[1]
    # A message's sequence that is its position is implied when written 7, but 7.0 must be kept
    # to be written back as it was: every kept value is the float form of the source's.
    assert kept[1] and all(type(v) is float for v in kept[1].values())
    assert all(kept[1][k] == v for k, v in kept[0].items())


def _input_digest(text: str) -> str:
    """The input's SHA-256 as the output names it: the capture id carries its first 32 digits."""
    prefix = json.loads(text)["capture"]["id"].rsplit(":", 1)[1]
    return re.search(prefix + "[0-9a-f]{32}", text).group(0)  # type: ignore[union-attr]
