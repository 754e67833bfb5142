"""The mapping table is exhaustive against the continuity schema, and consistent with itself."""

from __future__ import annotations

from asif_convert.ir import SCOPES
from asif_convert.mapping import load_table
from asif_convert.validation.schemas import CONTINUITY_SCHEMA, load_schema

RULES = {"mapped", "preserved", "derived", "constant", "container"}


def schema_paths(schema: dict) -> set[str]:
    defs = schema["definitions"]

    def walk(node: dict, path: str) -> set[str]:
        if "$ref" in node:
            node = defs[node["$ref"].rsplit("/", 1)[1]]
        out = {path} if path else set()
        if node.get("type") == "array":
            return out | walk(node["items"], path + "[]")
        for name, sub in node.get("properties", {}).items():
            out |= walk(sub, f"{path}.{name}" if path else name)
        return out

    return walk(schema, "")


def normalize(path: str) -> str:
    return path.removesuffix("[]")


def test_every_schema_field_has_an_entry_and_no_entry_is_invented():
    table = load_table("continuity-to-asif")
    paths = {normalize(p) for p in schema_paths(load_schema(CONTINUITY_SCHEMA))}
    assert paths - set(table.fields) == set(), "schema fields without a mapping entry"
    assert set(table.fields) - paths == set(), "mapping entries naming no schema field"


def test_entries_are_complete():
    table = load_table("continuity-to-asif")
    for key, entry in {**table.fields, **{"+" + k: v for k, v in table.derived.items()}}.items():
        assert entry.get("target"), key
        if not key.startswith("+"):
            assert entry["rule"] in RULES, key
        if "loss" in entry or key.startswith("+"):
            assert entry["loss"] in table.kinds, key
            assert entry["scope"] in SCOPES, key
            assert entry["explanation"].strip(), key
        if entry.get("rule") == "preserved":
            assert "loss" in entry, f"{key}: preserved fields lose their meaning and must say so"


def test_every_loss_kind_is_used():
    table = load_table("continuity-to-asif")
    used = {e["loss"] for e in [*table.fields.values(), *table.derived.values()] if "loss" in e}
    assert used == set(table.kinds)


def test_generated_docs_are_current():
    from asif_convert.docs import TABLES, render_markdown

    from .conftest import ROOT

    for name in TABLES:
        committed = (ROOT / "docs" / f"mapping-{name}.md").read_text(encoding="utf-8")
        assert committed == render_markdown(load_table(name)), "run: python -m asif_convert.docs"
