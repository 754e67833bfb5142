"""The house: dependencies point one way, the public surface is what the README shows, and a
library call leaves the host process as it found it."""

from __future__ import annotations

import ast
import gc
import importlib
import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from unittest import mock

import pytest
from typer.testing import CliRunner

import asif_convert
from asif_convert import ConversionError, LossPolicyError, Options, UsageError, convert
from asif_convert._cli import app as cli
from asif_convert._cli.app import COMMANDS

from .conftest import CONTINUITY_FILES, ROOT

SRC = ROOT / "src" / "asif_convert"  # the source tree, whichever copy of the package is imported

# Lower layers never import higher ones. A module's layer is the first prefix that matches.
LAYERS = [
    ("asif_convert._version", 0), ("asif_convert._errors", 0), ("asif_convert._resources", 0),
    ("asif_convert.ir", 1), ("asif_convert._limits", 1), ("asif_convert._mapping", 1), ("asif_convert._patch", 1),
    ("asif_convert._codec", 2), ("asif_convert._jsonio", 2), ("asif_convert._lines", 2), ("asif_convert._ledger", 2),
    ("asif_convert._validation", 3), ("asif_convert._docs", 3), ("asif_convert._package", 3),
    ("asif_convert._signature", 3), ("asif_convert._companions", 3), ("asif_convert._artifacts", 3),
    ("asif_convert._dialects", 3),
    ("asif_convert.plugin", 4),
    ("asif_convert._formats", 5),
    ("asif_convert._registry", 6),
    ("asif_convert._pipeline", 7), ("asif_convert._summary", 8), ("asif_convert._compare", 8),
    ("asif_convert._request", 8), ("asif_convert._handoff", 8),
    ("asif_convert.batch", 9), ("asif_convert._view", 10),
    ("asif_convert._cli", 11),
    ("asif_convert", 12),  # the package root re-exports the public surface
]


def _module(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _layer(module: str) -> int:
    for prefix, layer in LAYERS:
        if module == prefix or module.startswith(prefix + "."):
            return layer
    raise AssertionError(f"{module} has no layer: add it to LAYERS")


def _imports() -> dict[str, set[str]]:
    """Every module of src/ and the asif_convert modules it imports (anywhere in its body)."""
    graph: dict[str, set[str]] = {}
    for path in SRC.rglob("*.py"):
        module = _module(path)
        found = graph.setdefault(module, set())
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("asif_convert"):
                for alias in node.names:  # `from pkg import submodule` imports the submodule
                    sub = f"{node.module}.{alias.name}"
                    found.add(sub if (SRC.parent / sub.replace(".", "/")).exists()
                              or (SRC.parent / (sub.replace(".", "/") + ".py")).exists() else node.module)
            elif isinstance(node, ast.Import):
                found.update(a.name for a in node.names if a.name.startswith("asif_convert"))
    return graph


def test_no_module_imports_from_a_higher_layer():
    wrong = [f"{mod} (layer {_layer(mod)}) imports {dep} (layer {_layer(dep)})"
             for mod, deps in _imports().items() for dep in deps
             if _layer(dep) > _layer(mod) and not mod.startswith(dep + ".")]
    assert wrong == []


def test_formats_import_neither_each_other_nor_the_registry():
    wrong = []
    for mod, deps in _imports().items():
        if mod.startswith("asif_convert._formats."):
            own = ".".join(mod.split(".")[:3])
            wrong += [f"{mod} -> {d}" for d in deps
                      if (d.startswith("asif_convert._formats.") and not d.startswith(own))
                      or d.startswith("asif_convert._registry")]
    assert wrong == []


def test_no_import_cycle():
    graph = _imports()
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for dep in sorted(graph.get(node, ())):
            if dep == node or node.startswith(dep + "."):
                continue  # a submodule's import of its own package's __init__ is no cycle by itself
            if state.get(dep) == 1:
                cycles.append(path[path.index(dep):] + [dep] if dep in path else [node, dep])
            elif dep not in state:
                visit(dep, path + [dep])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    assert cycles == []


# The house's deferred imports, the one list of them: an import inside a function, made where
# importing at the top would load, for every run, what only some runs use (docs/decisions.md,
# 28, 35 and 36). (file, function, module imported) -> why. Every other import is at the top of its
# module, where it says what the module needs.
DEFERRED = {
    ("__init__.py", "__getattr__", "asif_convert"):
        "the public surface's pipeline and plugin API: every asif_convert module runs the root first",
    ("__init__.py", "__getattr__", "asif_convert._request"): "the request API, on first use, like the pipeline",
    ("_cli/app.py", "load_formats", "asif_convert._registry"):
        "the formats, loaded when a command runs: the group's help needs none",
    ("_cli/common.py", "check_formats", "asif_convert._registry"): "the formats, for the commands that name them",
    ("_cli/common.py", "build_options", "asif_convert._registry"): "the formats, for the commands that name them",
    ("_cli/common.py", "build_options", "asif_convert.plugin"): "the plugin API, for the commands that convert",
    ("_mapping.py", "load_table", "tomllib"): "the TOML parser, only where a compiled table is stale",
    ("_mapping.py", "compiled_table", "tomllib"): "the TOML parser, only to write the compiled tables",
    ("_mapping.py", "load_mapping", "tomllib"): "the TOML parser, only for a plugin's own mapping table",
    ("_package.py", "_members", "zipfile"): "the ZIP reader and its compressors, only to read a package",
    ("_package.py", "write_package", "zipfile"): "the ZIP writer, only to write a package",
    ("_registry.py", "_entry_points", "importlib.metadata"): "only where a distribution names the plugins' group",
    ("_cli/batch.py", "_connect", "asif_convert.batch"): "Dask distributed, only for --scheduler",
    ("batch/_storage.py", "remote", "asif_convert.batch"): "fsspec and its file systems, only for a URL",
    ("_validation/schemas.py", "_full", "jsonschema"): "python-jsonschema: only to explain an invalid document",
    ("_validation/schemas.py", "_full_meta", "jsonschema"):
        "python-jsonschema: only to explain a tool schema jsonschema-rs cannot vouch for",
    ("_validation/schemas.py", "meta_schema_problem", "jsonschema.exceptions"):
        "python-jsonschema: only to explain a tool schema jsonschema-rs cannot vouch for",
}


def test_imports_are_deferred_only_where_listed_and_no_e402():
    """Imports are at the top of modules, where they say what a module needs, except those in
    ``DEFERRED``, each with its reason."""
    deferred = set()
    for path in SRC.rglob("*.py"):
        text = path.read_text()
        assert "noqa: E402" not in text, path
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                deferred |= {(path.relative_to(SRC).as_posix(), node.name,
                              n.module if isinstance(n, ast.ImportFrom) else n.names[0].name)
                             for n in ast.walk(node) if isinstance(n, ast.Import | ast.ImportFrom)}
    assert sorted(deferred) == sorted(DEFERRED)


# Functions of at most this many lines (decorators and docstring included): one job each.
MAX_FUNCTION_LINES = 80
# The folders of src/asif_convert whose functions the rule holds, relative to SRC ("" is the whole
# tree: docs/decisions.md, 38), and those under them it leaves out (none).
SHORT_FUNCTION_FOLDERS = ("",)
SHORT_FUNCTION_EXCEPTIONS: tuple[str, ...] = ()


def _long_functions(folders: tuple[str, ...], skip: tuple[str, ...] = ()) -> list[str]:
    """``path:line name (n lines)`` of every function longer than the bound under ``folders``
    (not under ``skip``)."""
    found = []
    for folder in folders:
        for path in sorted((SRC / folder).rglob("*.py")):
            if any(path.is_relative_to(SRC / s) for s in skip):
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                    lines = node.end_lineno - first + 1
                    if lines > MAX_FUNCTION_LINES:
                        found.append(f"{path.relative_to(SRC).as_posix()}:{node.lineno} {node.name} ({lines} lines)")
    return found


def test_no_function_is_longer_than_the_bound():
    assert _long_functions(SHORT_FUNCTION_FOLDERS, SHORT_FUNCTION_EXCEPTIONS) == []


def test_the_function_length_rule_sees_a_long_function(tmp_path, monkeypatch):
    body = "\n".join(f"    x{k} = {k}" for k in range(MAX_FUNCTION_LINES))
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(f"def short():\n    return 1\n\n\ndef long():\n{body}\n")
    (tmp_path / "pkg" / "left_out").mkdir()
    (tmp_path / "pkg" / "left_out" / "m.py").write_text(f"def long():\n{body}\n")
    monkeypatch.setattr(sys.modules[__name__], "SRC", tmp_path)
    assert _long_functions(("pkg",), ("pkg/left_out",)) == [f"pkg/m.py:5 long ({MAX_FUNCTION_LINES + 1} lines)"]


def test_the_only_import_by_name_is_the_command_table():
    by_name = sorted(path.relative_to(SRC).as_posix() for path in SRC.rglob("*.py")
                     if re.search(r"import_module|__import__", path.read_text()))
    assert by_name == ["_cli/app.py"]
    for name, (module, function) in COMMANDS.items():  # every entry names a command that exists
        assert callable(getattr(importlib.import_module(f"asif_convert._cli.{module}"), function)), name


def test_a_conversion_imports_none_of_the_other_commands_modules(tmp_path):
    """What only inspect, diff, view, batch, sign and verify need is not loaded for a conversion,
    nor python-jsonschema (its input and output are valid, and have no tool schema)."""
    out = tmp_path / "out.asif.json"
    code = ("import json, sys\n"
            "from asif_convert._cli.app import app\n"
            "try:\n"
            f"    app(['from-continuity', {str(CONTINUITY_FILES[0])!r}, '-o', {str(out)!r}])\n"
            "except SystemExit as exc:\n"
            "    assert exc.code == 0, exc.code\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('deepdiff', 'jinja2', 'cryptography', 'jsonschema') or m in ('rich.progress', 'multiprocessing', "
            "'asif_convert._view', 'asif_convert.batch', 'asif_convert._compare', 'asif_convert._signature'))))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == []
    assert out.stat().st_size > 0


@pytest.mark.parametrize(("raised", "code", "line"), [
    (ImportError("No module named 'jinja2'"), 3, "internal error: ImportError: No module named 'jinja2'"),
    (KeyboardInterrupt(), 130, "interrupted"),
])
def test_loading_a_command_ends_as_a_command_does(monkeypatch, raised, code, line):
    """A broken installation or a Ctrl-C while a command's module loads: one line, its exit code."""
    def failing(name):
        raise raised

    cli.command.cache_clear()
    monkeypatch.setattr(cli, "importlib", SimpleNamespace(import_module=failing))  # (in that module only)
    try:
        result = CliRunner().invoke(cli.app, ["view", "x.json"])
    finally:
        monkeypatch.undo()
        cli.command.cache_clear()
    assert result.exit_code == code
    assert result.stderr.startswith(line) and result.stderr.count("\n") == 1, result.stderr


def test_the_public_surface_is_sorted_importable_and_covers_the_readme():
    names = asif_convert.__all__
    assert names == sorted(names)
    for name in names:
        assert getattr(asif_convert, name) is not None
    readme = (ROOT / "README.md").read_text()
    shown = set(re.findall(r"from asif_convert import ([\w, ]+)", readme))
    for line in shown:
        for name in (n.strip() for n in line.split(",")):
            assert name in names, f"the README imports {name} from asif_convert"
    import asif_convert.plugin as plugin

    for name in plugin.__all__:
        assert hasattr(plugin, name)


def test_private_modules_are_named_so():
    public = {"asif_convert", "asif_convert.ir", "asif_convert.plugin", "asif_convert.batch"}
    for path in SRC.rglob("*.py"):
        module = _module(path)
        assert module in public or any(p.startswith("_") for p in module.split(".")[1:]), module


def test_every_library_error_derives_from_conversion_error():
    data = CONTINUITY_FILES[0].read_bytes()
    with pytest.raises(UsageError, match="unknown format 'xml'; installed: asif, claude-code, codex, continuity"):
        convert(data, to="xml")
    with pytest.raises(ConversionError):
        convert(data, to="asif", source="nope")
    with pytest.raises(ConversionError):
        Options(on_loss="sometimes")
    assert issubclass(LossPolicyError, ConversionError)
    with pytest.raises(LossPolicyError):
        convert(data, to="asif", options=Options(on_loss="error"))


def test_a_library_call_leaves_the_garbage_collector_alone():
    data = CONTINUITY_FILES[0].read_bytes()
    with mock.patch.object(gc, "disable") as disable, mock.patch.object(gc, "enable") as enable:
        convert(data, to="asif")
    assert not disable.called and not enable.called
    assert gc.isenabled()


def test_writing_an_output_never_touches_the_umask(tmp_path):
    from asif_convert import _jsonio

    old = os.umask(0o027)
    try:
        with mock.patch.object(os, "umask", side_effect=AssertionError("umask changed")):
            _jsonio.write_output(str(tmp_path / "out.json"), b"{}")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "out.json").stat().st_mode) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


@pytest.mark.parametrize("args", [["inspect", "{f}", "--to", "nope"], ["convert", "{f}", "--to", "nope"],
                                  ["convert", "{f}", "--to", "asif", "--from", "nope"],
                                  ["batch", "{f}", "-o", "{out}", "--to", "nope"]])
def test_an_unknown_format_name_is_a_usage_error_everywhere(args, tmp_path):
    from typer.testing import CliRunner

    from asif_convert._cli.app import app

    argv = [a.format(f=CONTINUITY_FILES[0], out=tmp_path / "out") for a in args]
    res = CliRunner().invoke(app, argv)
    assert res.exit_code == 2, res.output
    assert "unknown format 'nope'; installed: asif, claude-code, codex, continuity" in res.stderr
    assert "internal error" not in res.stderr


def test_library_fail_on_refuses_an_unknown_kind_and_takes_one_kind():
    data = CONTINUITY_FILES[0].read_bytes()
    with pytest.raises(UsageError, match="unknown loss kind 'unmaped_field' in fail_on; known kinds: "):
        convert(data, to="asif", options=Options(fail_on={"unmaped_field"}))
    assert Options(fail_on="identity_change").fail_on == frozenset({"identity_change"})
