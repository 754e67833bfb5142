"""What a command imports before it has done its work: only what it uses (docs/decisions.md, 35).
Held by module name, from ``python -X importtime``, never by time."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import typing
from importlib.machinery import PathFinder
from pathlib import Path

import msgspec
import pytest
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match
from typer.core import TyperCommand

from asif_convert import _codec, _mapping, _registry, ir
from asif_convert._cli.app import COMMANDS, SUMMARIES, command
from asif_convert._validation.schemas import meta_schema_problem

from .conftest import CORPUS

# What no conversion of a valid document uses: other commands' libraries (rich's progress and
# multiprocessing for batch, deepdiff and pydantic for inspect and diff, jinja2 for view,
# cryptography for sign), remote storage, the test tools, python-jsonschema (only to explain an
# invalid document), the installed metadata (only where a plugin is declared), the TOML parser
# (the mapping tables are read in their compiled JSON form), the ZIP module (only for a package),
# and the modules of the other commands.
NEVER = ("rich", "jsonschema", "jsonschema_specifications", "referencing", "deepdiff", "pydantic", "jinja2",
         "cryptography", "dask", "distributed", "fsspec", "s3fs", "hypothesis", "multiprocessing", "importlib.metadata",
         "tomllib", "zipfile",
         "asif_convert.batch", "asif_convert._view", "asif_convert._compare", "asif_convert._signature",
         "asif_convert._summary", "asif_convert._cli.batch", "asif_convert._cli.inspect", "asif_convert._cli.view",
         "asif_convert._cli.sign", "asif_convert._cli.validate")
# The group's help needs no format, validator or command module either.
NOT_FOR_HELP = (*NEVER, "asif_convert._pipeline", "asif_convert._formats", "asif_convert._validation",
                "asif_convert._registry", "asif_convert.plugin", "jsonschema_rs", "asif_convert._cli.convert")

EXPORT = CORPUS / "continuity" / "14-mixed-everything.json"  # its ASIF output declares tools' schemas
SESSION = CORPUS / "asif" / "continuation-action-specific.session.json"  # declares tools' schemas (37 KB)


def _imported(*args: str) -> set[str]:
    """The modules ``python -X importtime -m asif_convert ARGS`` imports (it must exit 0)."""
    env = {k: v for k, v in os.environ.items() if k != "ASIF_CONVERT_NO_PLUGINS"}
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "asif_convert", *args],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return set(re.findall(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)$", done.stderr, re.MULTILINE))


def _found(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in names))


@pytest.mark.parametrize(("args", "source"), [
    (["from-continuity", str(EXPORT)], EXPORT),
    (["to-continuity", str(SESSION)], SESSION),
])
def test_a_conversion_imports_only_what_it_uses(tmp_path, args, source):
    out = tmp_path / "out.json"
    modules = _imported(*args, "-o", str(out))
    assert out.stat().st_size > source.stat().st_size / 4  # (it converted)
    assert "asif_convert._formats.asif" in modules and "jsonschema_rs" in modules  # (the measure sees imports)
    assert _found(modules, NEVER) == []


def test_the_help_imports_no_format_validator_or_command():
    modules = _imported("--help")
    assert "typer" in modules
    assert _found(modules, NOT_FOR_HELP) == []


def test_an_invalid_document_is_still_explained(tmp_path):
    """python-jsonschema, deferred, still gives the readable list of what is wrong."""
    bad = tmp_path / "bad.json"
    bad.write_text(EXPORT.read_text().replace('"role": "user"', '"role": 7', 1))
    done = subprocess.run([sys.executable, "-m", "asif_convert", "from-continuity", str(bad), "-o",
                           str(tmp_path / "out.json")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert "7 is not of type" in done.stderr and "/role" in done.stderr, done.stderr


def test_each_command_is_listed_as_its_own_help_says():
    assert set(SUMMARIES) == set(COMMANDS)
    for name in COMMANDS:
        listed, real = TyperCommand(name, help=SUMMARIES[name]), command(name)
        for limit in (30, 60, 1000):
            assert listed.get_short_help_str(limit) == real.get_short_help_str(limit), name


_META = Draft202012Validator(Draft202012Validator.META_SCHEMA, format_checker=Draft202012Validator.FORMAT_CHECKER)


@pytest.mark.parametrize("schema", [
    True, False, {}, 3, "x", None, [], {"type": "object"}, {"type": "nope"}, {"minLength": -1}, {"minLength": 1.0},
    {"minLength": 1.5}, {"maxItems": 2**70}, {"multipleOf": 0}, {"properties": {"a": 3}}, {"required": ["a", "a"]},
    {"enum": []}, {"items": [{}]}, {"if": 3}, {"deprecated": "yes"}, {"format": 3}, {"$dynamicRef": 3},
    {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}, {"$schema": 3}, {"$anchor": "1a"},
    {"$id": "not a uri ::"}, {"$ref": "#/x y"}, {"$vocabulary": {"not uri": True}},
    {"$defs": {"a": {"type": ["string", "string"]}}}, {"additionalProperties": {"$ref": 3}},
    {"x-custom": {"type": "nope"}}, {"const": {"pattern": "("}},
    # regular expressions: ECMA-262 (jsonschema-rs) and Python's re (python-jsonschema) differ
    {"pattern": "["}, {"pattern": "(?P<x>a)"}, {"pattern": "(?<n>a)"}, {"pattern": "\\p{L}"},
    {"patternProperties": {"(?<n>a)": {}}}, {"properties": {"p": {"pattern": "\\p{L}+"}}},
    {"type": "object", "properties": {"q": {"type": "string", "pattern": "^[a-z]+$"}}, "required": ["q"]},
])
def test_a_tool_schema_is_judged_as_python_jsonschema_judges_it(schema):
    """jsonschema-rs's "valid" is taken only where python-jsonschema (the reference's check)
    would say the same; its problem is python-jsonschema's, word for word."""
    ours, theirs = meta_schema_problem(schema), best_match(_META.iter_errors(schema))
    assert (ours is None) == (theirs is None)
    if ours is not None:
        assert (ours.message, list(ours.absolute_path)) == (theirs.message, list(theirs.absolute_path))


def test_no_plugin_group_named_means_no_metadata_scan(tmp_path, monkeypatch):
    site = tmp_path / "site"
    (site / "other-1.0.dist-info").mkdir(parents=True)
    (site / "other-1.0.dist-info" / "entry_points.txt").write_text("[console_scripts]\nother = other:main\n")
    monkeypatch.setattr(sys, "path", [str(site), str(tmp_path / "missing")])
    monkeypatch.setattr(sys, "meta_path", [PathFinder])  # (a library may add a finder of its own)
    assert not _registry._group_named()
    (site / "Legacy.egg-info").mkdir()
    (site / "Legacy.egg-info" / "entry_points.txt").write_text("[asif_convert.formats]\nx = legacy:FORMAT\n")
    assert _registry._group_named()


def test_a_zip_on_the_path_counts_as_naming_the_group(tmp_path, monkeypatch):
    archive = tmp_path / "plugins.zip"
    archive.write_bytes(b"PK\x05\x06" + bytes(18))
    monkeypatch.setattr(sys, "path", [str(archive)])
    monkeypatch.setattr(sys, "meta_path", [PathFinder])
    assert _registry._group_named()


def test_another_metadata_finder_counts_as_naming_the_group(tmp_path, monkeypatch):
    class Finder:
        def find_distributions(self, context=None):
            return iter(())

    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    monkeypatch.setattr(sys, "meta_path", [PathFinder, Finder()])
    assert _registry._group_named()


def test_the_compiled_mapping_tables_are_current():
    for name in ("continuity-to-asif", "asif-to-continuity"):
        committed = (Path(_mapping.mapping_path(_mapping.COMPILED)) / f"{name}.json").read_bytes()
        assert committed == _mapping.compiled_table(name), "run: python -m asif_convert._docs"


def test_a_stale_compiled_table_is_not_used(tmp_path, monkeypatch):
    name = "continuity-to-asif"
    (tmp_path / _mapping.COMPILED).mkdir()
    (tmp_path / _mapping.COMPILED / f"{name}.json").write_bytes(_mapping.compiled_table(name))
    toml = _mapping.mapping_path(f"{name}.toml").read_text()
    (tmp_path / f"{name}.toml").write_text(toml.replace("[kinds]\n", '[kinds]\nnew_kind = "edited since"\n', 1))
    monkeypatch.setattr(_mapping, "mapping_path", lambda rel: tmp_path / rel)
    _mapping.load_table.cache_clear()
    try:
        assert _mapping.load_table(name).kinds["new_kind"] == "edited since"
    finally:
        _mapping.load_table.cache_clear()


def test_the_codec_reads_field_types_as_typing_does():
    structs = {v for m in (ir, _codec) for v in vars(m).values()
               if isinstance(v, type) and issubclass(v, msgspec.Struct) and v is not msgspec.Struct}
    assert len(structs) > 30
    for cls in structs:
        expected = {n: t for n, t in typing.get_type_hints(cls).items() if n in cls.__struct_fields__}
        assert _codec.field_types(cls) == expected, cls


def test_the_console_script_sets_what_the_imports_made_aside_from_the_collector():
    """``run`` freezes the objects the imports made, so the collector's full scans (those of the
    interpreter's exit above all) skip them; a host calling the app in-process keeps its collector
    as it was."""
    code = ("import gc, sys\n"
            "from asif_convert._cli.app import app, run\n"
            "try:\n    app(['--version'])\nexcept SystemExit:\n    pass\n"
            "assert gc.get_freeze_count() == 0 and gc.isenabled()\n"
            "sys.argv[1:] = ['--version']\n"
            "try:\n    run()\nexcept SystemExit:\n    print(gc.get_freeze_count(), gc.isenabled())\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    frozen, enabled = done.stdout.split()[-2:]
    assert int(frozen) > 10_000 and enabled == "True"


def test_loading_a_command_leaves_the_collector_as_it_was():
    """A command's module is imported with the collector paused, and only then."""
    code = ("import gc\n"
            "from asif_convert._cli.app import command\n"
            "command('formats')\n"
            "assert gc.isenabled()\n"
            "gc.disable()\n"
            "command('view')\n"
            "assert not gc.isenabled()\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
