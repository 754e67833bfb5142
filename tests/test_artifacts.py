"""Artifact files: embedded from the folder the user names (and nowhere else), checked against
what the export declares, carried in a package, and written back inside the folder the user
names, so that continuity + files -> package -> continuity + files is exact."""

from __future__ import annotations

import copy
import hashlib
import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from asif_convert import Options, _artifacts, convert
from asif_convert._cli.app import app
from asif_convert._package import read_package, write_package
from asif_convert._pipeline import validate

from .conftest import CONTINUITY_FILES

runner = CliRunner()
BASE = json.loads(next(p for p in CONTINUITY_FILES if p.name == "10-artifacts.json").read_bytes())
GOOD = {"reports/summary.md": b"# Summary\nchurn is down\n", "out/plot.png": b"\x89PNG\r\n\x1a\nnot really",
        "data/r\u00e9sum\u00e9.csv": b"plan,churn\nbasic,0.1\n"}


def _export(paths: dict[str, bytes | None], *, declare: dict[str, dict] | None = None) -> dict:
    """The corpus export with one artifact per path; its sha256 and size_bytes are the content's
    (None: not declared) unless ``declare`` says otherwise."""
    doc = copy.deepcopy(BASE)
    template = doc["artifacts"][0]
    doc["artifacts"] = []
    for i, (path, content) in enumerate(paths.items()):
        rec = {**copy.deepcopy(template), "artifact_id": f"art-{i}", "path": path}  # the writer's key order
        if content is None:
            rec.pop("sha256"), rec.pop("size_bytes")
        else:
            rec["sha256"], rec["size_bytes"] = hashlib.sha256(content).hexdigest(), len(content)
        rec.update((declare or {}).get(path, {}))
        doc["artifacts"].append(rec)
    return doc


def _root(tmp_path: Path, files: dict[str, bytes]) -> Path:
    root = tmp_path / "root"
    for path, content in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(content)
    root.mkdir(exist_ok=True)
    return root


def _encode(doc: dict) -> bytes:
    return (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode()


def _convert(doc: dict, root: Path | None, **kwargs):
    return convert(_encode(doc), to="asif", options=Options(artifacts_root=root, **kwargs))


def _resources(result) -> dict[str, dict]:
    return {r["original_location"]: r for r in result.document["resources"] if "original_location" in r}


def _losses(result) -> dict[str, list[str]]:
    return {loss.id: [r.id for r in loss.references or ()] for loss in result.losses}


def test_good_files_are_embedded_with_bytes_sha256_and_their_path(tmp_path):
    root = _root(tmp_path, GOOD)
    result = _convert(_export(GOOD), root)
    for path, content in GOOD.items():
        res = _resources(result)[path]
        assert res["availability"] == "embedded"
        assert (res["path"], res["bytes"], res["sha256"]) == (path, len(content), hashlib.sha256(content).hexdigest())
        assert "explanation" not in res
    assert result.files == GOOD
    assert "translation:artifacts[].path" not in _losses(result)
    assert [p for p in validate(result.output, base_dir=root) if p.severity == "error"] == []


def test_without_the_option_nothing_is_opened_and_artifacts_stay_unavailable(tmp_path):
    _root(tmp_path, GOOD)
    result = _convert(_export(GOOD), None)
    assert {r["availability"] for r in _resources(result).values()} == {"unavailable"}
    assert result.files == {}


def test_a_file_unlike_what_the_export_declares_is_a_mismatch_loss(tmp_path):
    root = _root(tmp_path, GOOD)
    doc = _export(GOOD, declare={"reports/summary.md": {"sha256": "0" * 64},
                                 "out/plot.png": {"size_bytes": 3}})
    result = _convert(doc, root)
    res = _resources(result)
    assert res["reports/summary.md"]["availability"] == "unavailable"
    assert "declares sha256 0000" in res["reports/summary.md"]["explanation"]
    assert "declares 3 bytes, the file has 18" in res["out/plot.png"]["explanation"]
    mismatch = [loss for loss in result.losses if loss.id == "translation:artifact-mismatch"]
    assert mismatch[0].kind == "artifact_mismatch"
    assert [r.id for r in mismatch[0].references] == ["art-0", "art-1"]
    assert res["data/r\u00e9sum\u00e9.csv"]["availability"] == "embedded"


def test_undeclared_digests_and_sizes_are_filled_in_from_the_file(tmp_path):
    root = _root(tmp_path, GOOD)
    doc = _export({**dict.fromkeys(GOOD)})  # no sha256, no size_bytes
    res = _resources(_convert(doc, root))["out/plot.png"]
    assert res["availability"] == "embedded" and res["bytes"] == len(GOOD["out/plot.png"])


def test_missing_files_are_losses_saying_which_step_is_missing(tmp_path):
    root = _root(tmp_path, GOOD)
    result = _convert(_export({"reports/gone.md": b"x", "nowhere/x.txt": b"y"}), root)
    res = _resources(result)
    assert res["reports/gone.md"]["explanation"] == (
        "The artifact's file is missing from the artifacts folder: the path names no file under the base "
        "directory (reports/gone.md is missing).")
    assert _losses(result)["translation:artifact-missing"] == ["art-0", "art-1"]


@pytest.mark.parametrize("path,why", [
    ("../outside.txt", "has an empty, '.' or '..' segment"),
    ("reports/../../outside.txt", "has an empty, '.' or '..' segment"),
    ("/etc/hostname", "is absolute"),
    ("C:\\x.txt", "contains a backslash"),
    ("https://example.com/x", "contains ':'"),
])
def test_paths_outside_the_folder_are_refused_unread(tmp_path, path, why):
    root = _root(tmp_path, GOOD)
    (tmp_path / "outside.txt").write_bytes(b"secret")
    result = _convert(_export({path: None}), root)
    res = _resources(result)[path]
    assert res["availability"] == "unavailable"
    assert why in res["explanation"]
    assert _losses(result)["translation:artifact-refused"] == ["art-0"]


def test_symlinks_at_any_step_and_special_files_are_refused(tmp_path):
    root = _root(tmp_path, GOOD)
    (tmp_path / "outside.txt").write_bytes(b"secret")
    os.symlink(tmp_path / "outside.txt", root / "link.txt")
    os.symlink(tmp_path, root / "linkdir")
    os.symlink("/dev/zero", root / "zero")
    os.mkfifo(root / "fifo")
    (root / "folder").mkdir()
    result = _convert(_export(dict.fromkeys(["link.txt", "linkdir/outside.txt", "zero", "fifo", "folder"])), root)
    res = _resources(result)
    assert "goes through a symbolic link (link.txt)" in res["link.txt"]["explanation"]
    assert "goes through a symbolic link (linkdir)" in res["linkdir/outside.txt"]["explanation"]
    assert "goes through a symbolic link (zero)" in res["zero"]["explanation"]
    assert "is not a regular file" in res["fifo"]["explanation"]
    assert "is not a regular file" in res["folder"]["explanation"]
    assert {r["availability"] for r in res.values()} == {"unavailable"}
    assert len(_losses(result)["translation:artifact-refused"]) == 5


@pytest.mark.parametrize("denied", ["summary.md", "reports"])
def test_a_file_or_folder_that_cannot_be_read_says_so_and_why(tmp_path, monkeypatch, denied):
    """Permission denied on the file, or on a folder on its way (simulated: the tests may run as
    root, whom no permission stops), was explained as "changed while it was checked"."""
    root = _root(tmp_path, GOOD)
    real_open = os.open

    def refusing_open(path, flags, *args, dir_fd=None, **kwargs):
        if dir_fd is not None and path == denied:
            raise PermissionError(13, "Permission denied", path)
        return real_open(path, flags, *args, dir_fd=dir_fd, **kwargs)

    monkeypatch.setattr(os, "open", refusing_open)
    monkeypatch.setattr(os, "supports_dir_fd", os.supports_dir_fd | {refusing_open})
    result = _convert(_export(GOOD), root)
    res = _resources(result)["reports/summary.md"]
    shown = "reports/summary.md" if denied == "summary.md" else "reports"
    assert res["availability"] == "unavailable"
    assert res["explanation"] == ("The artifact's file was refused, never read: the path cannot be read "
                                  f"({shown}: Permission denied).")
    assert _losses(result)["translation:artifact-refused"] == ["art-0"]
    assert _resources(result)["out/plot.png"]["availability"] == "embedded"


def test_an_artifacts_folder_that_cannot_be_searched_says_so_and_why(tmp_path, monkeypatch):
    root = _root(tmp_path, {"a/x.txt": b"x"})
    real_lstat = os.lstat

    def refusing_lstat(path, *args, dir_fd=None, **kwargs):
        if dir_fd is not None and path == "a":
            raise PermissionError(13, "Permission denied", path)
        return real_lstat(path, *args, dir_fd=dir_fd, **kwargs)

    monkeypatch.setattr(os, "lstat", refusing_lstat)
    refusal = _artifacts.folder_refusal(root, "a")
    assert refusal is not None and refusal.kind == "refused"
    assert refusal.reason == "the artifacts folder 'a' cannot be read (a: Permission denied)"


def test_size_limits_per_file_and_in_total(tmp_path):
    root = _root(tmp_path, GOOD)
    result = _convert(_export(GOOD), root, artifact_max_bytes=21)
    res = _resources(result)
    assert "the file is 24 bytes, more than the limit of 21 per artifact" in res["reports/summary.md"]["explanation"]
    assert res["out/plot.png"]["availability"] == "embedded"  # 18 bytes
    assert res["data/r\u00e9sum\u00e9.csv"]["availability"] == "embedded"  # 21 bytes: at the limit
    result = _convert(_export(GOOD), root, artifacts_max_total=45)
    states = [r["availability"] for r in _resources(result).values()]
    assert states == ["embedded", "embedded", "unavailable"]
    why = _resources(result)["data/r\u00e9sum\u00e9.csv"]["explanation"]
    assert "exceed the limit of 45 bytes for all artifacts" in why


def test_case_collisions_and_package_names_are_refused(tmp_path):
    root = _root(tmp_path, {"A.txt": b"a", "a.txt": b"b", "session.json": b"{}"})
    result = _convert(_export({"A.txt": b"a", "a.txt": b"b", "session.json": b"{}"}), root)
    res = _resources(result)
    assert res["A.txt"]["availability"] == "embedded"
    assert "differs only in case from 'A.txt'" in res["a.txt"]["explanation"]
    assert "a package's own member name" in res["session.json"]["explanation"]


def test_round_trip_through_a_package_restores_the_export_and_its_files_exactly(tmp_path):
    files = {**GOOD, "bad.txt": b"not what was declared", "null.txt": b"n", "upper.txt": b"u"}
    root = _root(tmp_path, files)
    doc = _export({**files, "gone/missing.md": b"?", "../escape": None},
                  declare={"bad.txt": {"sha256": "f" * 64}, "null.txt": {"sha256": None, "size_bytes": None},
                           "upper.txt": {"sha256": hashlib.sha256(b"u").hexdigest().upper()}})
    export = tmp_path / "export.json"
    export.write_bytes(_encode(doc))
    pkg, back, out = tmp_path / "s.asif.zip", tmp_path / "back.json", tmp_path / "out"
    res = runner.invoke(app, ["from-continuity", str(export), "--artifacts-root", str(root), "-o", str(pkg)])
    assert res.exit_code == 0, res.output
    assert set(read_package(pkg.read_bytes()).files) == {*GOOD, "null.txt", "upper.txt"}
    res = runner.invoke(app, ["to-continuity", str(pkg), "-o", str(back), "--artifacts-out", str(out)])
    assert res.exit_code == 0, res.output
    assert back.read_bytes() == export.read_bytes()
    written = {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert written == {**GOOD, "null.txt": b"n", "upper.txt": b"u"}


def test_a_plain_asif_output_gets_its_files_beside_it(tmp_path):
    root = _root(tmp_path, GOOD)
    export = tmp_path / "export.json"
    export.write_bytes(_encode(_export(GOOD)))
    (tmp_path / "plain").mkdir()
    out = tmp_path / "plain" / "s.asif.json"
    args = ["from-continuity", str(export), "--artifacts-root", str(root), "-o", str(out)]
    assert runner.invoke(app, args).exit_code == 0
    for path, content in GOOD.items():
        assert (tmp_path / "plain" / path).read_bytes() == content
    res = runner.invoke(app, ["validate", str(out), "--base-dir", str(tmp_path / "plain")])
    assert res.exit_code == 0, res.output
    assert runner.invoke(app, args).exit_code == 0  # the same files again: nothing to replace
    (tmp_path / "plain" / "out" / "plot.png").write_bytes(b"changed")
    res = runner.invoke(app, args)
    assert res.exit_code == 1 and "'out/plot.png' already exist (use --force" in res.stderr
    assert (tmp_path / "plain" / "out" / "plot.png").read_bytes() == b"changed"
    assert runner.invoke(app, [*args, "--force"]).exit_code == 0
    assert (tmp_path / "plain" / "out" / "plot.png").read_bytes() == GOOD["out/plot.png"]
    res = runner.invoke(app, ["from-continuity", str(export), "--artifacts-root", str(root)])
    assert res.exit_code == 2 and "not to standard output" in res.stderr


@pytest.mark.parametrize("flags", [[], ["--no-validate"]])
def test_an_output_that_cannot_be_put_in_place_takes_back_its_files_and_report(tmp_path, flags):
    """The files beside a plain ASIF document and the report are written before the document;
    when the document then cannot be written, they are removed again, and a file that was
    already there with the same bytes stays."""
    root = _root(tmp_path, GOOD)
    export = tmp_path / "export.json"
    export.write_bytes(_encode(_export(GOOD)))
    plain = tmp_path / "plain"
    kept = sorted(GOOD)[0]
    (plain / kept).parent.mkdir(parents=True)
    (plain / kept).write_bytes(GOOD[kept])
    out = plain / "s.asif.json"
    out.mkdir()  # a folder where the document should go: it cannot be replaced
    report = tmp_path / "report.json"
    res = runner.invoke(app, ["from-continuity", str(export), "--artifacts-root", str(root), "-o", str(out),
                              "--report", str(report), *flags])
    assert res.exit_code == 1, res.output
    assert f"cannot write {out}" in res.stderr
    assert [p.relative_to(plain).as_posix() for p in plain.rglob("*") if p.is_file()] == [kept]
    assert not report.exists()


@pytest.mark.parametrize("force", [False, True])
def test_a_write_that_fails_midway_removes_the_files_written_before_it(tmp_path, monkeypatch, force):
    (tmp_path / "a.txt").write_bytes(b"old")  # replaced with --force: it stays (what it held is gone)
    files = {"a.txt": b"a", "b.txt": b"b", "c.txt": b"c"}
    write_one = _artifacts._write_one

    def full_at_c(base, path, content, force):
        if path == "c.txt":
            raise OSError(28, "No space left on device")
        return write_one(base, path, content, force)

    monkeypatch.setattr(_artifacts, "_write_one", full_at_c)
    if not force:
        del files["a.txt"]
    with pytest.raises(_artifacts.OutputError, match="c.txt: No space left on device"):
        _artifacts.write_files(tmp_path, files, force=force)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]
    monkeypatch.setattr(_artifacts, "_write_one", write_one)
    assert _artifacts.write_files(tmp_path, files, force=True) == [tmp_path / "b.txt", tmp_path / "c.txt"]


def test_a_write_that_fails_midway_removes_the_folders_it_made_too(tmp_path):
    """(Empty folders were left behind, one per file written before the failure.) The file that
    fails has a name the file system refuses, after its own folders were made."""
    files = {"a/x.txt": b"1", "b/c/" + "n" * 300: b"2"}
    with pytest.raises(_artifacts.OutputError, match="nothing was written"):
        _artifacts.write_files(tmp_path / "out", files)
    assert list(tmp_path.iterdir()) == []


def test_an_artifact_name_as_long_as_the_file_system_allows_is_written(tmp_path):
    """(Its temp file's name was the name and 15 bytes more: 255-byte names could not be written.)"""
    name = "n" * 255
    assert _artifacts.write_files(tmp_path, {name: b"x"}) == [tmp_path / name]
    assert (tmp_path / name).read_bytes() == b"x"


def _package_with_location(location: str) -> bytes:
    """A package whose one artifact resource goes back to ``location``."""
    result = _convert(_export({"a.txt": b"a"}), None)
    doc = result.document
    res = next(r for r in doc["resources"] if r.get("original_location") == "a.txt")
    res.update(availability="embedded", path="a.txt", bytes=1, sha256=hashlib.sha256(b"a").hexdigest(),
               original_location=location)
    res.pop("explanation")
    return write_package(json.dumps(doc).encode(), {"a.txt": b"a"})


@pytest.mark.parametrize("location", ["../evil.txt", "/tmp/evil.txt", "x/../../evil.txt"])
def test_artifacts_out_never_writes_outside_its_folder(tmp_path, location):
    src = tmp_path / "p.asif.zip"
    src.write_bytes(_package_with_location(location))
    out = tmp_path / "out" / "deeper"
    res = runner.invoke(app, ["to-continuity", str(src), "-o", str(tmp_path / "back.json"),
                              "--artifacts-out", str(out)])
    assert res.exit_code == 1, res.output
    assert "cannot write the artifact files" in res.stderr and "nothing was written" in res.stderr
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["p.asif.zip"]


def test_artifacts_out_never_follows_a_link_or_replaces_a_file_unasked(tmp_path):
    src = tmp_path / "p.asif.zip"
    src.write_bytes(_package_with_location("dir/a.txt"))
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    out.mkdir(), elsewhere.mkdir()
    os.symlink(elsewhere, out / "dir")
    args = ["to-continuity", str(src), "-o", str(tmp_path / "back.json"), "--artifacts-out", str(out)]
    res = runner.invoke(app, args)
    assert res.exit_code == 1 and "'dir/a.txt' already exist" in res.stderr  # a link in the way counts
    res = runner.invoke(app, [*args, "--force"])
    assert res.exit_code == 1 and "not a folder (links are not followed)" in res.stderr
    assert list(elsewhere.iterdir()) == []
    (out / "dir").unlink()
    (out / "dir").mkdir()
    (out / "dir" / "a.txt").write_bytes(b"mine")
    assert runner.invoke(app, args).exit_code == 1
    assert (out / "dir" / "a.txt").read_bytes() == b"mine"
    assert runner.invoke(app, [*args, "--force"]).exit_code == 0
    assert (out / "dir" / "a.txt").read_bytes() == b"a"


def test_fail_on_artifact_mismatch_refuses_the_conversion(tmp_path):
    root = _root(tmp_path, GOOD)
    export = tmp_path / "export.json"
    export.write_bytes(_encode(_export(GOOD, declare={"out/plot.png": {"size_bytes": 3}})))
    out = tmp_path / "s.asif.zip"
    res = runner.invoke(app, ["from-continuity", str(export), "--artifacts-root", str(root), "-o", str(out),
                              "--fail-on", "artifact_mismatch"])
    assert res.exit_code == 4, res.output
    assert "artifact_mismatch (1)" in res.stderr
    assert not out.exists()


def test_batch_migrates_a_folder_of_exports_with_their_files_to_packages_resumably(tmp_path):
    root = _root(tmp_path, GOOD)
    exports = tmp_path / "exports"
    (exports / "team").mkdir(parents=True)
    (exports / "a.json").write_bytes(_encode(_export(GOOD)))
    (exports / "team" / "b.json").write_bytes(_encode(_export({"out/plot.png": GOOD["out/plot.png"]})))
    out = tmp_path / "out"
    args = ["batch", str(exports), "-o", str(out), "--to", "asif", "--package", "--artifacts-root", str(root),
            "--workers", "0", "--quiet"]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    a, b = read_package((out / "a.asif.zip").read_bytes()), read_package((out / "team" / "b.asif.zip").read_bytes())
    assert a.files == GOOD and b.files == {"out/plot.png": GOOD["out/plot.png"]}
    lines = [json.loads(line) for line in (out / "manifest.jsonl").read_text().splitlines()]
    assert sorted(rec["status"] for rec in lines) == ["ok", "ok"]
    written = (out / "a.asif.zip").stat().st_mtime_ns
    res = runner.invoke(app, args)  # a rerun resumes: nothing left to do, nothing rewritten
    assert res.exit_code == 0, res.output
    assert len((out / "manifest.jsonl").read_text().splitlines()) == 2
    assert (out / "a.asif.zip").stat().st_mtime_ns == written
    back = tmp_path / "back"
    res = runner.invoke(app, ["batch", str(out), "-o", str(back), "--to", "continuity", "--pattern", "*.asif.zip",
                              "--workers", "0", "--quiet"])
    assert res.exit_code == 0, res.output
    assert (back / "a.continuity.json").read_bytes() == (exports / "a.json").read_bytes()


def test_batch_refuses_to_package_another_format(tmp_path):
    res = runner.invoke(app, ["batch", str(tmp_path), "-o", str(tmp_path / "o"), "--to", "continuity", "--package"])
    assert res.exit_code == 2
    assert "continuity output cannot be packaged" in res.stderr


def test_files_of_an_asif_package_no_artifact_holds_travel_through_continuity(tmp_path):
    """A package written elsewhere embeds files no continuity artifact holds: their records
    travel in the residual, and --artifacts-out writes their bytes under their own paths, so
    package -> continuity + files -> package gives the same package."""
    from .reference_example import SESSION, files

    src = tmp_path / "assets-src"
    for path, content in files().items():
        (src / path).parent.mkdir(parents=True, exist_ok=True)
        (src / path).write_bytes(content)
    first = tmp_path / "first.asif.zip"
    res = runner.invoke(app, ["convert", str(SESSION), "--to", "asif", "-o", str(first), "--artifacts-root", str(src)])
    assert res.exit_code == 0, res.output
    export, out = tmp_path / "export.json", tmp_path / "restored"
    res = runner.invoke(app, ["to-continuity", str(first), "-o", str(export), "--artifacts-out", str(out)])
    assert res.exit_code == 0, res.output
    assert {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()} == files()
    assert json.loads(export.read_bytes())["artifacts"] == []  # no continuity artifact is made up
    again = tmp_path / "again.asif.zip"
    res = runner.invoke(app, ["from-continuity", str(export), "-o", str(again), "--artifacts-root", str(out)])
    assert res.exit_code == 0, res.output
    assert again.read_bytes() == first.read_bytes()


def test_without_artifacts_out_nothing_is_written_and_a_package_back_needs_the_files(tmp_path):
    from .reference_example import SESSION, files

    pkg = tmp_path / "p.asif.zip"
    pkg.write_bytes(write_package(SESSION.read_bytes(), files()))
    export = tmp_path / "export.json"
    res = runner.invoke(app, ["to-continuity", str(pkg), "-o", str(export)])
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export.json", "p.asif.zip"]
    res = runner.invoke(app, ["from-continuity", str(export), "-o", str(tmp_path / "back.asif.zip")])
    assert res.exit_code == 1
    assert "embeds 'assets/color-grid.png' by path, but its bytes are not at hand" in res.stderr
