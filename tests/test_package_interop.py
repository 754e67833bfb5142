"""Packages we write pass the public reference reader's checks (restated independently in
tests/reference_rules.py), and our own validate."""

from __future__ import annotations

import io
import zipfile

from typer.testing import CliRunner

from asif_convert._cli.app import app
from asif_convert._package import write_package

from . import reference_example as example
from .reference_rules import broken_rule
from .test_artifacts import GOOD, _encode, _export, _root

runner = CliRunner()


def test_the_rebuilt_example_package_passes_the_reference_rules():
    assert broken_rule(write_package(example.SESSION.read_bytes(), example.files())) is None


def test_a_package_of_artifacts_passes_the_reference_rules_and_our_validate(tmp_path):
    root = _root(tmp_path, GOOD)
    export = tmp_path / "export.json"
    export.write_bytes(_encode(_export(GOOD)))
    out = tmp_path / "s.asif.zip"
    res = runner.invoke(app, ["from-continuity", str(export), "--artifacts-root", str(root), "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert broken_rule(out.read_bytes()) is None
    res = runner.invoke(app, ["validate", str(out)])
    assert res.exit_code == 0 and "(asif): valid" in res.stdout


def test_the_reference_rules_are_not_vacuous():
    good = write_package(example.SESSION.read_bytes(), example.files())
    with zipfile.ZipFile(io.BytesIO(good)) as archive:
        members = {i.filename: archive.read(i) for i in archive.infolist()}
    for drop in ("assets/color-grid.png", "asif-package.json"):
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as archive:
            for name, content in members.items():
                if name != drop:
                    archive.writestr(name, content)
        assert broken_rule(out.getvalue()) is not None
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    assert broken_rule(out.getvalue()) == "compressed or encrypted 'asif-package.json'"
