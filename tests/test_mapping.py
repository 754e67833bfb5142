"""The mapping tables are exhaustive against their source schemas, and consistent with themselves."""

from __future__ import annotations

from asif_convert._docs import TABLES, load_dialects, render_dialects, render_markdown, update_losses_doc
from asif_convert._mapping import load_table
from asif_convert._validation.schemas import ASIF_SCHEMA, CONTINUITY_SCHEMA, load_schema
from asif_convert.ir import SCOPES

from .conftest import ROOT

RULES = {"mapped", "preserved", "derived", "constant", "container"}
ASIF_RULES = {"mapped", "residual", "derived", "constant", "container"}


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


def asif_schema_paths(schema: dict | None = None) -> set[str]:
    """Every declared property path of a JSON Schema 2020-12 document (the ASIF schema by default).

    Follows ``$ref``s, resolving a ``#/$defs/<name>`` against the nearest enclosing ``$defs`` that
    has the name (falling back outwards to the root's), and walks ``allOf``/``anyOf``/``oneOf`` and
    ``if``-``then``/``else`` branches, so a path exists if any branch declares it. A definition
    reached again through its own ``$ref``s ends the walk there (the path itself is kept). Open
    values (``{}``, ``additionalProperties``) contribute no paths: only declared properties count.
    """
    schema = load_schema(ASIF_SCHEMA) if schema is None else schema

    def resolve(ref: str, scopes: tuple[dict, ...]) -> tuple[dict, tuple[dict, ...]]:
        name = ref.rsplit("/", 1)[1]
        for depth in range(len(scopes), 0, -1):
            if name in scopes[depth - 1]:
                return scopes[depth - 1][name], scopes[:depth]
        raise KeyError(f"unresolvable $ref {ref!r}")

    def walk(node: object, path: str, scopes: tuple[dict, ...], active: frozenset[int]) -> set[str]:
        if not isinstance(node, dict):  # boolean schemas declare nothing
            return set()
        if "$defs" in node:
            scopes = (*scopes, node["$defs"])
        out = {path} if path else set()
        if "$ref" in node:
            target, target_scopes = resolve(node["$ref"], scopes)
            if id(target) not in active:
                out |= walk(target, path, target_scopes, active | {id(target)})
        for name, sub in node.get("properties", {}).items():
            out |= walk(sub, f"{path}.{name}" if path else name, scopes, active)
        if isinstance(node.get("items"), dict):
            out |= walk(node["items"], path + "[]", scopes, active)
        for sub in [*node.get("allOf", []), *node.get("anyOf", []), *node.get("oneOf", [])]:
            out |= walk(sub, path, scopes, active)
        for keyword in ("then", "else"):
            if keyword in node:
                out |= walk(node[keyword], path, scopes, active)
        return out

    return walk(schema, "", (), frozenset())


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

    for name in TABLES:
        committed = (ROOT / "docs" / f"mapping-{name}.md").read_text(encoding="utf-8")
        assert committed == render_markdown(load_table(name)), "run: python -m asif_convert._docs"


def test_dialect_matrix_is_current():
    committed = (ROOT / "docs" / "dialects.md").read_text(encoding="utf-8")
    assert committed == render_dialects(load_dialects()), "run: python -m asif_convert._docs"


def test_dialect_table_says_what_every_block_becomes_in_its_own_words():
    table = load_dialects()
    for name, section in table.items():
        if name == "meta":
            continue
        assert {"name", "sdk", "content", "blocks"} <= section.keys(), name
        for block, entry in section["blocks"].items():
            assert entry["maps"] in table["meta"]["maps"], (name, block)
            assert entry["asif"], (name, block)


# --- asif-to-continuity -------------------------------------------------------------------

OPEN_OBJECTS = "(additional properties)"


def test_asif_paths_follow_branches_and_nested_defs():
    paths = {normalize(p) for p in asif_schema_paths()}
    assert {"events[].data.role", "events[].data.call_id", "events[].data.interpretation_required"} <= paths
    assert {"events[].data.parts[].text", "events[].data.parts[].semantic_type"} <= paths  # union of part kinds
    assert "continuation.workspaces[].git.index_entries[].object_id" in paths  # continuation's own $defs
    assert "continuation.plans[].cwd.root_id" in paths  # anyOf branch


def test_asif_path_walk_resolves_nearest_defs_and_stops_at_recursion():
    schema = {
        "$defs": {
            "node": {"type": "object", "properties": {"name": {}, "children": {"type": "array",
                                                                                "items": {"$ref": "#/$defs/node"}}}},
            "leaf": {"properties": {"outer": {}}},
        },
        "properties": {
            "tree": {"$ref": "#/$defs/node"},
            "box": {
                "$defs": {"leaf": {"properties": {"inner": {}}}},
                "properties": {"near": {"$ref": "#/$defs/leaf"}, "far": {"$ref": "#/$defs/node"}},
            },
        },
    }
    assert asif_schema_paths(schema) == {
        "tree", "tree.name", "tree.children", "tree.children[]",
        "box", "box.near", "box.near.inner", "box.far", "box.far.name", "box.far.children", "box.far.children[]",
    }


def test_every_asif_field_has_an_entry_and_no_entry_is_invented():
    table = load_table("asif-to-continuity")
    paths = {normalize(p) for p in asif_schema_paths()}
    entries = set(table.fields) - {OPEN_OBJECTS}
    assert paths - entries == set(), "ASIF schema fields without a mapping entry"
    assert entries - paths == set(), "mapping entries naming no ASIF schema field"
    assert OPEN_OBJECTS in table.fields, "undeclared properties of open ASIF objects need an entry"


def test_asif_entries_are_complete():
    table = load_table("asif-to-continuity")
    assert table.derived == {}
    assert {"residual", "losses"} <= set(table.meta)
    for key, entry in table.fields.items():
        assert str(entry.get("target", "")).strip(), key
        assert entry.get("rule") in ASIF_RULES, key
        if entry["rule"] == "residual":
            assert str(entry.get("explanation", "")).strip(), f"{key}: say why continuity cannot hold it"
            assert entry["rule"] in table.kinds, key


def test_losses_doc_is_current():
    text = (ROOT / "docs" / "losses.md").read_text(encoding="utf-8")
    assert update_losses_doc(text) == text, "run: python -m asif_convert._docs"
