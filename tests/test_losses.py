"""Nothing is silently dropped: every leaf of every corpus input is found in the output or named
by a loss, and every loss is well formed."""

from __future__ import annotations

import json
import re

from asif_convert import convert
from asif_convert._mapping import load_table

from .conftest import CONTINUITY_FILES as CORPUS_FILES
from .conftest import load_json

FREE_FORM = {"metadata", "payload", "content_json", "summary"}


def leaves(value, path=""):
    """Yield (table path, value) for every leaf; free-form objects are walked into as well."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from leaves(v, f"{path}.{k}" if path else k)
    elif isinstance(value, list):
        for v in value:
            yield from leaves(v, path + "[]")
    else:
        yield path, value


def output_values(value, acc):
    if isinstance(value, dict):
        for v in value.values():
            output_values(v, acc)
    elif isinstance(value, list):
        for v in value:
            output_values(v, acc)
    else:
        acc.add(json.dumps(value))
    return acc


def table_path(path: str) -> str:
    """messages[].content_json.blocks[].text -> messages[].content_json (the free-form field)."""
    parts = path.split(".")
    for i, p in enumerate(parts):
        if re.sub(r"\[\]$", "", p) in FREE_FORM:
            return ".".join(parts[: i + 1]).removesuffix("[]")
    return path


def test_every_leaf_is_kept_or_reported(continuity_file):
    raw = load_json(continuity_file)
    out = json.loads(convert(continuity_file.read_bytes(), to="asif").output)
    found = output_values(out, set())
    # Payloads of native states travel as JSON text: their leaves are inside that text.
    texts = " ".join(r.get("text", "") for r in out["resources"])
    reported = {loss["id"].split(":", 1)[1] for loss in out["losses"]}
    table = load_table("continuity-to-asif")
    for path, value in leaves(raw):
        field = table_path(path)
        assert field in table.fields, f"{path}: no mapping entry"
        encoded = json.dumps(value)
        kept = encoded in found or encoded in texts or json.dumps(value, ensure_ascii=False) in texts
        # dialect-split content is rebuilt exactly from its pieces (proven in test_roundtrip)
        split = field == "messages[].content_json" and "dialects" in reported
        assert kept or split or field in reported or table.fields[field]["rule"] == "constant", (
            f"{continuity_file.name}: {path} = {value!r} is neither in the output nor named by a loss"
        )


def test_losses_are_well_formed(continuity_file):
    out = json.loads(convert(continuity_file.read_bytes(), to="asif").output)
    kinds = load_table("continuity-to-asif").kinds
    ids = [loss["id"] for loss in out["losses"]]
    assert len(ids) == len(set(ids))
    for loss in out["losses"]:
        assert loss["stage"] == "translation"
        assert loss["kind"] in kinds
        field = loss["id"].split(":", 1)[1]
        assert loss["explanation"].startswith(field + ": ")


def _kept_on_record(table, loss_id: str) -> bool:
    field = loss_id.split(":", 1)[1]
    entry = table.derived.get(field) if field in table.derived else table.fields.get(field, {})
    return bool(entry.get("kept_on_record", entry.get("rule") == "preserved"))


def test_a_field_kept_on_its_record_is_one_loss_without_a_record_list(continuity_file):
    """Losses are read, not scrolled: a field kept verbatim on the record it belongs to is one
    loss that says where it is kept; the records are exactly those that carry it."""
    out = json.loads(convert(continuity_file.read_bytes(), to="asif").output)
    table = load_table("continuity-to-asif")
    for loss in out["losses"]:
        if _kept_on_record(table, loss["id"]):
            assert "references" not in loss, loss["id"]
            assert " It is kept at " in loss["explanation"], loss["id"]


def test_synthesized_and_approximated_values_name_exactly_their_records():
    source = next(p for p in CORPUS_FILES if "mixed-everything" in p.name)
    out = json.loads(convert(source.read_bytes(), to="asif").output)
    losses = {loss["id"]: loss for loss in out["losses"]}
    refs = {k: {(r["type"], r["id"]) for r in v.get("references", ())} for k, v in losses.items()}
    assert refs["translation:participants"] == {("participant", p["id"]) for p in out["participants"]}
    assert refs["translation:head-checkpoints"] == {("checkpoint", c["id"]) for c in out["checkpoints"]}
    assert refs["translation:executions"] == {("execution", e["id"]) for e in out["executions"]}
    assert refs["translation:artifacts[].path"] == {("resource", r["id"]) for r in out["resources"]
                                                    if r["purpose"] == "artifact"}
