"""Exact round trips in both directions, and honest losses when the residual is off."""

from __future__ import annotations

import json
import re

import pytest
from deepdiff import DeepDiff

from asif_convert import Options, convert
from asif_convert._codec import codec_for
from asif_convert._formats.continuity.plugin import _REF_TYPES
from asif_convert._mapping import load_table
from asif_convert._registry import get, namespaces

from .conftest import ASIF_EXAMPLES, CONTINUITY_FILES, ROOT

SCOPES = load_table("asif-to-continuity").meta["scopes"]


def asif_of(path) -> bytes:
    return convert(path.read_bytes(), to="asif").output


# ASIF sessions: the public examples and our own conversions of the corpus
CODEC = codec_for(namespaces())
ASIF_DOCS = [(p.stem, p.read_bytes()) for p in ASIF_EXAMPLES] + [(f"from-{p.stem}", None) for p in CONTINUITY_FILES]


@pytest.fixture(params=ASIF_DOCS, ids=[name for name, _ in ASIF_DOCS])
def asif_doc(request) -> bytes:
    name, data = request.param
    if data is None:
        data = asif_of(next(p for p in CONTINUITY_FILES if f"from-{p.stem}" == name))
    return data


def exact(a, b) -> DeepDiff:
    """Differences, strict about types (1 vs 1.0), key sets and null vs absent."""
    return DeepDiff(a, b, ignore_order=False, ignore_numeric_type_changes=False)


def test_corpus_has_public_examples():
    assert len(ASIF_EXAMPLES) >= 10


def test_continuity_asif_continuity_is_exact(continuity_file):
    original = json.loads(continuity_file.read_bytes())
    back = convert(asif_of(continuity_file), to="continuity")
    assert exact(original, back.document) == {}
    assert back.losses == []  # nothing to carry: the export came from continuity


def test_asif_continuity_asif_is_exact_with_the_residual(asif_doc):
    middle = convert(asif_doc, to="continuity")
    assert get("continuity").validate(middle.document) == []
    back = convert(middle.output, to="asif")
    assert exact(json.loads(asif_doc), back.document) == {}


def test_without_residual_every_difference_is_a_loss(asif_doc):
    original = json.loads(asif_doc)
    middle = convert(asif_doc, to="continuity", options=Options(residual=False))
    assert "residual/1" not in {s["kind"] for s in middle.document.get("native_states", [])}
    back = convert(middle.output, to="asif").document
    losses = back["losses"]
    for path in exact(original, back).affected_paths:
        assert _covered(path, original, back, losses), f"{path} differs and no loss names it"


def _covered(path: str, original: dict, back: dict, losses: list[dict]) -> bool:
    """A difference is covered by a loss that names its entity, or the scope it lies in."""
    # deepdiff quotes a key with single quotes, or double quotes when the key holds one
    steps = [(single or double, index) for single, double, index in
             re.findall(r"\['((?:[^'\\]|\\.)*)'\]|\[\"((?:[^\"\\]|\\.)*)\"\]|\[(\d+)\]", path)]
    top = steps[0][0]
    if top == "losses":
        return True  # the return trip adds its own translation losses
    if top in _REF_TYPES and len(steps) > 1 and steps[1][1]:
        index = int(steps[1][1])
        ids = {doc[top][index]["id"] for doc in (original, back) if index < len(doc[top])}
        refs = {(r["type"], r["id"]) for loss in losses for r in loss.get("references", ())}
        if any((_REF_TYPES[top], i) in refs for i in ids):
            return True
    scope = SCOPES.get(top, "conversation")
    return any(loss.get("scope") == scope for loss in losses)


@pytest.mark.parametrize("example", ASIF_EXAMPLES, ids=lambda p: p.stem)
def test_losses_travel_through_continuity(example):
    asif_doc = example.read_bytes()
    original = json.loads(asif_doc)
    middle = convert(asif_doc, to="continuity", options=Options(residual=False))
    payload = next(s for s in middle.document["native_states"] if s["kind"] == "losses/1")["payload"]
    # the document's own losses travel whole; this conversion's, by mapping-table key and records
    assert payload["ours"]["kind"] == "dropped"
    # (a time not known and a file not carried are this run's: reported, not carried, since the
    # return trip reads the values back as written)
    travelling = [loss for loss in middle.losses if loss.kind not in ("time_unknown", "file_not_carried")]
    assert [loss.id for loss in travelling] == [f"translation:{key}" for key in payload["ours"]["fields"]]
    back = convert(middle.output, to="asif").document
    back_losses = {loss["id"]: loss for loss in back["losses"]}
    for loss in travelling:
        came = back_losses[loss.id]
        assert came["kind"] == loss.kind and came["explanation"].startswith(loss.explanation)
    assert {loss["id"] for loss in payload["losses"]} <= set(back_losses)
    assert {loss["id"] for loss in original["losses"]} <= set(back_losses)


@pytest.mark.parametrize("example", ASIF_EXAMPLES, ids=lambda p: p.stem)
def test_with_a_residual_our_losses_are_not_written_twice(example):
    """The residual restores the document, its losses included: this conversion's own losses
    would be read back only for the residual to take them out again."""
    middle = convert(example.read_bytes(), to="continuity")
    assert middle.losses  # the conversion still reports them
    states = {s["kind"]: s["payload"] for s in middle.document["native_states"] if s["provider"] == "asif"}
    assert "ours" not in states.get("losses/1", {})
    assert exact(json.loads(example.read_bytes()), convert(middle.output, to="asif").document) == {}


def test_asif_reader_and_writer_are_exact_inverses(asif_doc):
    raw = json.loads(asif_doc)
    assert exact(raw, CODEC.dump_document(CODEC.load_document(raw))) == {}


def test_a_property_named_kind_in_event_data_is_kept():
    """Event ``data`` does not carry its kind (the event does), so a "kind" found there is an
    additional property like any other, not the tag of the body."""
    raw = json.loads(ASIF_EXAMPLES[0].read_bytes())
    event = next(e for e in raw["events"] if e["kind"] == "message")
    event["data"]["kind"] = "vendor-kind"
    data = json.dumps(raw).encode()
    assert exact(raw, CODEC.dump_document(CODEC.load_document(json.loads(data)))) == {}
    back = convert(convert(data, to="continuity").output, to="asif")
    assert exact(raw, back.document) == {}


def test_both_directions_are_deterministic(asif_doc):
    assert convert(asif_doc, to="continuity").output == convert(asif_doc, to="continuity").output
    middle = convert(asif_doc, to="continuity").output
    assert convert(middle, to="asif").output == convert(middle, to="asif").output


def test_edits_travel():
    """Writers map from the IR: an edited ASIF document converts back with the edit."""
    source = next(p for p in CONTINUITY_FILES if "plain-chat" in p.name)
    doc = json.loads(asif_of(source))
    message = next(e for e in doc["events"] if e["kind"] == "message")
    message["data"]["parts"][0]["text"] = "edited text"
    added = {
        "id": "note-added", "sequence": len(doc["events"]), "actor_id": "assistant", "kind": "message",
        "causes": [], "provenance": {"mode": "observed", "producer": "editor"},
        "data": {"role": "assistant", "parts": [{"kind": "text", "text": "a new reply"}]},
    }
    doc["events"].append(added)
    branch = doc["branches"][0]
    branch["event_ids"].append("note-added")
    branch["head_event_id"] = "note-added"
    next(c for c in doc["checkpoints"] if c["branch_id"] == branch["id"])["at_event_id"] = "note-added"

    export = convert(json.dumps(doc).encode(), to="continuity").document
    by_id = {m["message_id"]: m for m in export["messages"]}
    assert by_id[message["id"]]["text_content"] == "edited text"
    assert by_id["note-added"]["text_content"] == "a new reply"
    assert by_id["note-added"]["branch_id"] == branch["id"]
    back = convert(json.dumps(export).encode(), to="asif").document
    assert exact(doc, back) == {}


def test_referentially_broken_exports_round_trip_faithfully():
    """Dangling references are converted with losses and come back as they were."""
    source = next(p for p in CONTINUITY_FILES if "forks" in p.name)
    doc = json.loads(source.read_bytes())
    doc["branches"][1]["parent_branch_id"] = "ghost-parent"
    doc["messages"][0]["branch_id"] = "ghost-branch"
    doc["checkpoints"] = [{"checkpoint_id": "cp", "session_id": doc["session"]["session_id"],
                           "branch_id": "ghost-branch", "parent_event_id": "nothing", "summary": {}}]
    first = convert(json.dumps(doc).encode(), to="asif")
    assert {w.rule for w in first.warnings} == {"CONT-PARENT-BRANCH", "CONT-BRANCH", "CONT-CHECKPOINT-PARENT"}
    synthesized = {r["id"] for loss in first.document["losses"] if loss["kind"] == "synthesized_branch"
                   for r in loss["references"]}
    assert synthesized == {"ghost-parent", "ghost-branch"}
    assert exact(doc, convert(first.output, to="continuity").document) == {}


@pytest.mark.parametrize("parent", ["self", ""])
def test_a_parent_no_fork_can_say_comes_back_as_written(parent):
    """A branch that names itself as its parent, or an empty id (the schema lets a parent be any
    string): no ASIF fork says either, so the value is kept with a loss, and the branch's other
    fields come back too (they were lost with the parent) where the empty id was exit 3."""
    doc = json.loads(next(p for p in CONTINUITY_FILES if "forks" in p.name).read_bytes())
    branch = doc["branches"][0]
    branch["parent_branch_id"] = branch["branch_id"] if parent == "self" else parent
    first = convert(json.dumps(doc).encode(), to="asif")
    assert "translation:branches[].parent_branch_id" in {loss.id for loss in first.losses}
    assert exact(doc, convert(first.output, to="continuity").document) == {}


def test_what_an_export_holds_beyond_the_document_its_residual_restores_is_reported():
    """With a residual, this conversion's losses are those its reading derived that the restored
    document still says: a native state added to the export is one, and the loss policy sees it."""
    source = (ROOT / "corpus/continuity/03-anthropic-tools.json").read_bytes()
    asif = convert(source, to="asif").document
    asif["events"][0]["data"]["parts"][0]["text"] += " (edited)"
    export = convert(json.dumps(asif).encode(), to="continuity").document
    assert "residual/1" in {s["kind"] for s in export["native_states"]}
    restored = convert(json.dumps(export).encode(), to="asif")
    export["native_states"].insert(0, {"state_id": "ns-cache", "session_id": export["session"]["session_id"],
                                       "provider": "anthropic", "kind": "prompt_cache", "payload": {"ttl": "5m"},
                                       "portable": False, "created_at": "2026-06-01T10:03:00Z"})
    result = convert(json.dumps(export).encode(), to="asif")
    added = {loss.id for loss in result.losses} - {loss.id for loss in restored.losses}
    assert added == {f"translation:native_states[].{f}" for f in ("provider", "kind", "portable", "created_at")}
    assert {loss.id for loss in result.losses} <= {loss["id"] for loss in result.document["losses"]}


def test_an_events_array_out_of_sequence_order_converts_in_sequence_order(asif_doc):
    """ASIF's event order is ``sequence``, not array position: the same events in another order
    in the file (reported, ASIF-R021) convert as the ordered file does, and the export converts
    back to a valid session, where it was one the converter itself refused."""
    doc = json.loads(asif_doc)
    if len(doc["events"]) < 2:
        pytest.skip("one event has no other order")
    shuffled = {**doc, "events": doc["events"][::-1]}
    first = convert(json.dumps(shuffled).encode(), to="continuity")
    assert "ASIF-R021" in {w.rule for w in first.warnings}
    assert first.output == convert(asif_doc, to="continuity").output
    assert exact(doc, convert(first.output, to="asif").document) == {}
