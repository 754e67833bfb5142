"""Batch with artifact files: each export's own artifacts folder (``--artifacts-each``) or one
for all (``--artifacts-root``), under the same containment rules as one conversion, and a
resume that notices when the files an output was made from changed."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from asif_convert import Options
from asif_convert._cli.app import app
from asif_convert._package import read_package
from asif_convert.batch import UsageError, migrate
from asif_convert.batch._artifact_folders import folder_for

from .test_artifacts import GOOD, _encode, _export

runner = CliRunner()
PLOT = {"out/plot.png": GOOD["out/plot.png"]}
NOTES = {"notes.json": b'{"not": "an export"}\n', "reports/summary.md": GOOD["reports/summary.md"]}


def _write(folder: Path, files: dict[str, bytes]) -> None:
    for path, content in files.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_bytes(content)


def _tree(tmp_path: Path, template: str = "{stem}") -> Path:
    """exports/a.json with its files (one a JSON file, which is no export), and
    exports/team/b.json with its own; both exports declare no digests, so a changed file is
    embedded as it is now."""
    exports = tmp_path / "exports"
    for rel, files in (("a.json", NOTES), ("team/b.json", PLOT)):
        export = exports / rel
        export.parent.mkdir(parents=True, exist_ok=True)
        export.write_bytes(_encode(_export(dict.fromkeys(files))))
        _write(export.parent / folder_for(template, export.name), files)
    return exports


def _batch(*args) -> object:
    return runner.invoke(app, ["batch", *map(str, args), "--to", "asif", "--package", "--workers", "0", "--quiet"])


def _lines(out: Path) -> dict[str, dict]:
    return {rec["output"]: rec for rec in map(json.loads, (out / "manifest.jsonl").read_text().splitlines())}


def _losses(package: Path) -> dict[str, dict]:
    return {loss["id"]: loss for loss in read_package(package.read_bytes()).document.get("losses", [])}


@pytest.mark.parametrize("template", ["{stem}", "{stem}.artifacts", "files/{stem}", "{name}.d"])
def test_a_folder_of_exports_with_their_artifact_folders_becomes_packages(tmp_path, template):
    exports, out = _tree(tmp_path, template), tmp_path / "out"
    res = _batch(exports, "-o", out, "--artifacts-each", template)
    assert res.exit_code == 0, res.output
    a, b = read_package((out / "a.asif.zip").read_bytes()), read_package((out / "team" / "b.asif.zip").read_bytes())
    assert a.files == NOTES and b.files == PLOT
    # the JSON file among a's artifacts was embedded, not taken for an export
    assert sorted(_lines(out)) == ["a.asif.zip", "team/b.asif.zip"]
    assert {rec["status"] for rec in _lines(out).values()} == {"ok"}
    assert _lines(out)["a.asif.zip"]["artifacts_read"] == ["notes.json", "reports/summary.md"]


def test_resume_skips_unchanged_exports_and_redoes_one_whose_artifact_changed(tmp_path):
    exports, out = _tree(tmp_path), tmp_path / "out"
    assert _batch(exports, "-o", out, "--artifacts-each", "{stem}").exit_code == 0
    stamps = {p: (out / p).stat().st_mtime_ns for p in ("a.asif.zip", "team/b.asif.zip")}
    res = _batch(exports, "-o", out, "--artifacts-each", "{stem}")
    assert res.exit_code == 0
    assert {p: (out / p).stat().st_mtime_ns for p in stamps} == stamps  # nothing redone

    (exports / "team" / "b" / "out" / "plot.png").write_bytes(b"a new plot")  # same export, another file
    res = _batch(exports, "-o", out, "--artifacts-each", "{stem}")
    assert res.exit_code == 0, res.output
    assert (out / "a.asif.zip").stat().st_mtime_ns == stamps["a.asif.zip"]
    assert read_package((out / "team" / "b.asif.zip").read_bytes()).files == {"out/plot.png": b"a new plot"}

    (exports / "team" / "b" / "out" / "plot.png").unlink()  # a file that goes missing redoes it too
    assert _batch(exports, "-o", out, "--artifacts-each", "{stem}").exit_code == 0
    assert read_package((out / "team" / "b.asif.zip").read_bytes()).files == {}
    assert "translation:artifact-missing" in _losses(out / "team" / "b.asif.zip")
    (exports / "team" / "b" / "out" / "plot.png").write_bytes(b"back again")  # and one that comes back
    assert _batch(exports, "-o", out, "--artifacts-each", "{stem}").exit_code == 0
    assert read_package((out / "team" / "b.asif.zip").read_bytes()).files == {"out/plot.png": b"back again"}
    assert (out / "a.asif.zip").stat().st_mtime_ns == stamps["a.asif.zip"]


def test_resume_with_one_shared_root_notices_changed_artifacts(tmp_path):
    root = tmp_path / "root"
    _write(root, GOOD)
    exports, out = tmp_path / "exports", tmp_path / "out"
    exports.mkdir()
    (exports / "a.json").write_bytes(_encode(_export(dict.fromkeys(GOOD))))
    (exports / "b.json").write_bytes(_encode(_export(dict.fromkeys(["out/plot.png"]))))
    assert _batch(exports, "-o", out, "--artifacts-root", root).exit_code == 0
    stamps = {p: (out / p).stat().st_mtime_ns for p in ("a.asif.zip", "b.asif.zip")}
    (root / "reports" / "summary.md").write_bytes(b"# Summary\nchurn is up\n")  # only a reads it
    assert _batch(exports, "-o", out, "--artifacts-root", root).exit_code == 0
    assert (out / "b.asif.zip").stat().st_mtime_ns == stamps["b.asif.zip"]
    assert read_package((out / "a.asif.zip").read_bytes()).files["reports/summary.md"] == b"# Summary\nchurn is up\n"


def test_a_line_without_an_artifacts_digest_is_redone(tmp_path):
    """A manifest line that does not say what it read (an earlier version's) cannot vouch for it."""
    exports, out = _tree(tmp_path), tmp_path / "out"
    assert _batch(exports, "-o", out, "--artifacts-each", "{stem}").exit_code == 0
    lines = [json.loads(line) for line in (out / "manifest.jsonl").read_text().splitlines()]
    for rec in lines:
        rec.pop("artifacts_sha256"), rec.pop("artifacts_read")
    (out / "manifest.jsonl").write_text("".join(json.dumps(rec) + "\n" for rec in lines))
    seen = []
    migrate([exports], out, to="asif", package=True, workers=0, artifacts_each="{stem}", on_result=seen.append)
    assert sorted(rec.status for rec in seen) == ["ok", "ok"]


def test_hostile_artifact_folders_are_refused_or_missing_never_followed(tmp_path):
    exports, out = tmp_path / "exports", tmp_path / "out"
    outside = tmp_path / "outside"
    _write(outside, PLOT)
    exports.mkdir()
    for name in ("linked", "inner", "missing", "dotdot", "notafolder"):
        (exports / f"{name}.json").write_bytes(_encode(_export(dict.fromkeys(PLOT))))
    os.symlink(outside, exports / "linked")  # the folder itself is a link out
    _write(exports / "inner", {})
    (exports / "inner").mkdir()
    os.symlink(outside / "out", exports / "inner" / "out")  # a link on the way
    (exports / "dotdot.json").write_bytes(_encode(_export(dict.fromkeys(["../outside/out/plot.png"]))))
    _write(exports / "dotdot", {})
    (exports / "dotdot").mkdir()
    (exports / "notafolder").write_bytes(b"a file where the folder should be")
    res = _batch(exports, "-o", out, "--artifacts-each", "{stem}")
    assert res.exit_code == 0, res.output
    for name, loss, why in (
            ("linked", "artifact-refused", "the artifacts folder 'linked' goes through a symbolic link (linked)"),
            ("inner", "artifact-refused", "goes through a symbolic link (inner/out)"),
            ("missing", "artifact-missing", "the artifacts folder 'missing' is missing"),
            ("dotdot", "artifact-refused", "has an empty, '.' or '..' segment"),
            ("notafolder", "artifact-refused", "the artifacts folder 'notafolder' is not a folder")):
        package = out / f"{name}.asif.zip"
        assert read_package(package.read_bytes()).files == {}, name
        resource = next(r for r in read_package(package.read_bytes()).document["resources"]
                        if r.get("purpose") == "artifact")
        assert resource["availability"] == "unavailable" and why in resource["explanation"], (name, resource)
        assert f"translation:{loss}" in _losses(package), name


def test_an_export_named_so_that_its_folder_would_leave_is_refused(tmp_path):
    exports, out = tmp_path / "exports", tmp_path / "out"
    exports.mkdir()
    _write(tmp_path, PLOT)
    (exports / "...json").write_bytes(_encode(_export(dict.fromkeys(PLOT))))  # {stem} is '..'
    assert folder_for("{stem}", "...json") == ".."
    res = runner.invoke(app, ["batch", str(exports / "...json"), "-o", str(out), "--to", "asif", "--package",
                              "--workers", "0", "--quiet", "--artifacts-each", "{stem}"])
    assert res.exit_code == 0, res.output
    package = read_package((out / "...asif.zip").read_bytes())
    assert package.files == {}
    assert "is not a plain relative path" in json.dumps(package.document["resources"])


@pytest.mark.parametrize("template,why", [
    ("../{stem}", "relative path inside the export's folder"),
    ("/abs/{stem}", "relative path inside the export's folder"),
    ("a//b", "relative path inside the export's folder"),
    ("{stem}\\x", "relative path inside the export's folder"),
    ("{path}", "only {stem} and {name} are known"),
    ("{stem", "artifacts folder template"),
])
def test_a_template_that_could_leave_the_exports_folder_is_a_usage_error(tmp_path, template, why):
    exports = _tree(tmp_path)
    res = _batch(exports, "-o", tmp_path / "out", "--artifacts-each", template)
    assert res.exit_code == 2, res.output
    assert why in res.stderr
    with pytest.raises(UsageError):
        migrate([exports], tmp_path / "out2", workers=0, artifacts_each=template)


def test_a_shared_root_and_per_export_folders_are_exclusive(tmp_path):
    exports = _tree(tmp_path)
    res = _batch(exports, "-o", tmp_path / "out", "--artifacts-each", "{stem}", "--artifacts-root", tmp_path)
    assert res.exit_code == 2
    assert "not both" in res.stderr
    with pytest.raises(UsageError):
        migrate([exports], tmp_path / "o", workers=0, artifacts_each="{stem}",
                options=Options(artifacts_root=tmp_path))


def test_size_limits_apply_to_each_exports_folder(tmp_path):
    exports, out = _tree(tmp_path), tmp_path / "out"
    res = _batch(exports, "-o", out, "--artifacts-each", "{stem}", "--artifact-max-bytes", "21")
    assert res.exit_code == 0, res.output
    a = read_package((out / "a.asif.zip").read_bytes())
    assert a.files == {"notes.json": NOTES["notes.json"]}  # 21 bytes; the summary's 25 are not read
    assert "more than the limit of 21 per artifact" in json.dumps(a.document["resources"])


def test_the_export_folder_template_dot_reads_beside_the_export(tmp_path):
    exports, out = tmp_path / "exports", tmp_path / "out"
    _write(exports, {"run.export.json": _encode(_export(dict.fromkeys(PLOT))), **PLOT,
                     "other.json": b"{}\n"})
    res = _batch(exports, "-o", out, "--artifacts-each", ".", "--pattern", "*.export.json")
    assert res.exit_code == 0, res.output
    assert read_package((out / "run.export.asif.zip").read_bytes()).files == PLOT


def test_the_per_export_folder_changes_the_settings(tmp_path):
    exports, out = tmp_path / "exports", tmp_path / "out"
    _write(exports, {"x.json": _encode(_export(dict.fromkeys(PLOT)))})
    _write(exports / "x", PLOT)
    _write(exports / "x.artifacts", PLOT)
    assert _batch(exports, "-o", out, "--artifacts-each", "{stem}").exit_code == 0
    before = {rec["settings"] for rec in _lines(out).values()}
    assert _batch(exports, "-o", out, "--artifacts-each", "{stem}.artifacts").exit_code == 0
    after = {rec["settings"] for rec in _lines(out).values()}
    assert before.isdisjoint(after)  # another template: every file redone
