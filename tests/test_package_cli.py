"""Packages on the command line: `-o X.asif.zip` (or --package) writes one, and every command
that reads ASIF reads one too, checked whole before it is used."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile

import pytest
from typer.testing import CliRunner

from asif_convert import convert
from asif_convert._cli.app import app
from asif_convert._package import MANIFEST, SESSION, read_package, write_package

from .conftest import CONTINUITY_FILES, CORPUS

runner = CliRunner()
EXPORT = CONTINUITY_FILES[2]
ASSETS = {"assets/color-grid.png": b"stand-in image bytes", "assets/meeting-notes.pdf": b"%PDF stand-in"}


def _run(*args):
    return runner.invoke(app, [str(a) for a in args])


def _session_with_files() -> bytes:
    """A corpus session whose path resources are the stand-in ASSETS (declared sizes and digests)."""
    doc = json.loads((CORPUS / "asif" / "image-and-document.session.json").read_bytes())
    for res in doc["resources"]:
        if res.get("path") in ASSETS:
            res["bytes"] = len(ASSETS[res["path"]])
            res["sha256"] = hashlib.sha256(ASSETS[res["path"]]).hexdigest()
    return json.dumps(doc, indent=2).encode()


def test_from_continuity_writes_a_deterministic_package(tmp_path):
    plain, zipped, again = tmp_path / "s.asif.json", tmp_path / "s.asif.zip", tmp_path / "again.asif.zip"
    for out in (plain, zipped, again):
        assert _run("from-continuity", EXPORT, "-o", out).exit_code == 0
    assert zipped.read_bytes() == again.read_bytes()
    pkg = read_package(zipped.read_bytes())
    assert pkg.session == plain.read_bytes()
    assert pkg.files == {}
    with zipfile.ZipFile(zipped) as archive:
        assert archive.namelist() == [MANIFEST, SESSION]


def test_package_option_packages_whatever_the_name(tmp_path):
    out = tmp_path / "session.bin"
    assert _run("convert", EXPORT, "--to", "asif", "--package", "-o", out).exit_code == 0
    assert read_package(out.read_bytes()).session == convert(EXPORT.read_bytes(), to="asif").output


def test_only_asif_output_can_be_packaged(tmp_path):
    res = _run("convert", EXPORT, "--to", "continuity", "-o", tmp_path / "x.asif.zip")
    assert res.exit_code == 2, res.output
    assert "a package carries an ASIF session; continuity output cannot be packaged" in res.stderr
    assert list(tmp_path.iterdir()) == []


def test_every_command_reading_asif_reads_a_package(tmp_path):
    plain, zipped = tmp_path / "s.asif.json", tmp_path / "s.asif.zip"
    _run("from-continuity", EXPORT, "-o", plain)
    _run("from-continuity", EXPORT, "-o", zipped)
    for target in ("a.json", "b.json"):
        src = plain if target == "a.json" else zipped
        assert _run("to-continuity", src, "-o", tmp_path / target).exit_code == 0
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    res = _run("validate", zipped)
    assert res.exit_code == 0 and "(asif): valid" in res.output
    res = _run("inspect", zipped, "--json")
    assert res.exit_code == 0 and json.loads(res.stdout)["format"] == "asif"
    res = _run("diff", plain, zipped)
    assert res.exit_code == 0 and "no differences" in res.output
    res = runner.invoke(app, ["to-continuity", "-"], input=zipped.read_bytes())  # a package on stdin
    assert res.exit_code == 0 and res.stdout.encode() == (tmp_path / "a.json").read_bytes()


def test_a_package_carries_its_files_through_an_asif_conversion(tmp_path):
    src, out = tmp_path / "in.asif.zip", tmp_path / "out.asif.zip"
    src.write_bytes(write_package(_session_with_files(), ASSETS))
    res = _run("convert", src, "--to", "asif", "-o", out)
    assert res.exit_code == 0, res.output
    pkg = read_package(out.read_bytes())
    assert pkg.files == ASSETS
    assert _run("validate", out).exit_code == 0


def test_a_plain_session_whose_files_are_not_at_hand_is_not_packaged(tmp_path):
    src = tmp_path / "in.asif.json"
    src.write_bytes(_session_with_files())
    res = _run("convert", src, "--to", "asif", "-o", tmp_path / "out.asif.zip")
    assert res.exit_code == 1, res.output
    assert "/resources/0/path: embeds 'assets/color-grid.png' by path, but its bytes are not at hand" in res.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.asif.json"]


@pytest.mark.parametrize("command", [["to-continuity"], ["convert", "--to", "asif"], ["inspect"], ["validate"]])
def test_a_hostile_package_is_refused_with_its_path_and_nothing_is_written(tmp_path, command):
    members = {"../evil.txt": b"x", SESSION: _session_with_files(), MANIFEST: b"{}"}
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    src = tmp_path / "bad.asif.zip"
    src.write_bytes(data.getvalue())
    args = [*command, src] + (["-o", tmp_path / "out.json"] if command[0] in ("to-continuity", "convert") else [])
    res = _run(*args)
    assert res.exit_code == 1, res.output
    assert "/..~1evil.txt: member name '../evil.txt' has an empty, '.' or '..' segment [package]" in res.output
    assert "internal error" not in res.output and "Traceback" not in res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.asif.zip"]


def test_a_package_holding_a_continuity_export_is_refused(tmp_path):
    export = EXPORT.read_bytes()
    src = tmp_path / "x.asif.zip"
    src.write_bytes(write_package(export, {}))
    res = _run("convert", src, "--to", "asif", "-o", tmp_path / "o.json")
    assert res.exit_code == 1
    assert "/session.json: a package carries an ASIF session, not a continuity document [package]" in res.stderr


def test_a_plain_session_is_packaged_with_its_files_from_the_folder_the_user_names(tmp_path):
    src = tmp_path / "in.asif.json"
    src.write_bytes(_session_with_files())
    for path, content in ASSETS.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_bytes(content)
    out = tmp_path / "out.asif.zip"
    res = _run("convert", src, "--to", "asif", "-o", out, "--artifacts-root", tmp_path)
    assert res.exit_code == 0, res.output
    assert read_package(out.read_bytes()).files == ASSETS
    (tmp_path / "assets" / "meeting-notes.pdf").write_bytes(b"%PDF changed")
    (tmp_path / "assets" / "color-grid.png").unlink()
    res = _run("convert", src, "--to", "asif", "-o", tmp_path / "again.asif.zip", "--artifacts-root", tmp_path)
    assert res.exit_code == 1
    assert "/resources/0/path: embeds 'assets/color-grid.png' by path, but it is not packaged: the path names no " \
           "file under the base directory (assets/color-grid.png is missing)" in res.stderr
    assert "/resources/1/path: embeds 'assets/meeting-notes.pdf' by path, but the file in the artifacts folder " \
           "differs from its declared bytes and sha256" in res.stderr
    assert not (tmp_path / "again.asif.zip").exists()
