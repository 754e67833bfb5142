"""The wheel carries the schemas and mapping tables and works outside the source tree."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

from .conftest import CONTINUITY_FILES, ROOT


def test_wheel_runs_outside_the_repo(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", tmp_path / "dist", ROOT],
                   check=True, capture_output=True)
    (wheel,) = (tmp_path / "dist").glob("asif_convert-*.whl")
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        zf.extractall(site)
    assert "asif_convert/_data/schemas/asif-0.4-session.schema.json" in names
    assert "asif_convert/_data/mappings/continuity-to-asif.toml" in names

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    export = elsewhere / "export.json"
    export.write_bytes(CONTINUITY_FILES[2].read_bytes())
    env = {**os.environ, "PYTHONPATH": str(site)}
    code = "from asif_convert._cli.app import run; run()"
    res = subprocess.run([sys.executable, "-c", code, "from-continuity", "export.json", "-o", "out.asif.json"],
                         cwd=elsewhere, env=env, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert (elsewhere / "out.asif.json").stat().st_size > 0
    check = "import asif_convert._resources as r; print(r.data_dir('schemas'))"
    where = subprocess.run([sys.executable, "-c", check], cwd=elsewhere, env=env, capture_output=True, text=True)
    assert Path(where.stdout.strip()).is_relative_to(site)
