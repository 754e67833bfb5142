"""--source-pointers: the export travels as a resource, and every ASIF event points at the
record it was read from, so an auditor can check any event against its source."""

from __future__ import annotations

import hashlib
import json

import pytest
from typer.testing import CliRunner

from asif_convert import Options, convert
from asif_convert._cli.app import app
from asif_convert._package import read_package
from asif_convert._pipeline import validate

from .conftest import CONTINUITY_FILES

runner = CliRunner()


def _resolve(doc, pointer: str):
    for part in pointer.split("/")[1:]:
        doc = doc[int(part)] if isinstance(doc, list) else doc[part.replace("~1", "/").replace("~0", "~")]
    return doc


@pytest.mark.parametrize("export", CONTINUITY_FILES, ids=lambda p: p.stem)
def test_every_event_points_at_its_record_in_the_packaged_export(export):
    data = export.read_bytes()
    result = convert(data, to="asif", options=Options(source_pointers=True), name=str(export), package=True)
    pkg = read_package(result.output)
    (source,) = [r for r in pkg.document["resources"] if r["purpose"] == "source"]
    assert pkg.files[source["path"]] == data
    assert source["sha256"] == hashlib.sha256(data).hexdigest() and source["bytes"] == len(data)
    original = json.loads(pkg.files[source["path"]])
    pointed = set()
    for ev in pkg.document["events"]:
        (ref,) = ev["provenance"]["sources"]
        assert ref["resource_id"] == source["id"] and ref["locator"]["syntax"] == "json-pointer"
        record = _resolve(original, ref["locator"]["value"])
        own = record.get("message_id", record.get("event_id"))
        native = ev.get("agent-continuity/1", {})
        assert ev["id"] == own or native.get("id") == own or ev["id"].startswith(own), (ev["id"], own)
        pointed.add(ref["locator"]["value"])
    records = [f"/messages/{i}" for i in range(len(original["messages"]))]
    records += [f"/events/{i}" for i in range(len(original.get("events") or ()))]
    assert pointed == set(records)  # every record is the source of at least one event
    assert [p for p in validate(pkg.document) if p.severity == "error"] == []


def test_without_a_package_the_export_is_referenced_by_its_digest():
    data = CONTINUITY_FILES[2].read_bytes()
    result = convert(data, to="asif", options=Options(source_pointers=True), name="x/export.json")
    (source,) = [r for r in result.document["resources"] if r["purpose"] == "source"]
    assert source["availability"] == "unavailable" and "path" not in source
    assert (source["bytes"], source["sha256"]) == (len(data), hashlib.sha256(data).hexdigest())
    assert source["name"] == "export.json"
    assert [p for p in validate(result.output) if p.severity == "error"] == []


def test_pointers_survive_a_trip_through_continuity_in_the_residual():
    data = CONTINUITY_FILES[2].read_bytes()
    asif = convert(data, to="asif", options=Options(source_pointers=True))
    back = convert(convert(asif.output, to="continuity").output, to="asif")
    assert back.document == asif.document


def test_the_command_line_option_and_its_limits(tmp_path):
    out = tmp_path / "s.asif.zip"
    res = runner.invoke(app, ["from-continuity", str(CONTINUITY_FILES[2]), "--source-pointers", "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert any(p.startswith("source/") for p in read_package(out.read_bytes()).files)
    res = runner.invoke(app, ["convert", str(out), "--to", "continuity", "--source-pointers"])
    assert res.exit_code == 2
    assert "source pointers are written from a continuity export to ASIF only" in res.stderr


def test_batch_writes_packages_with_source_pointers(tmp_path):
    src = tmp_path / "exports"
    src.mkdir()
    (src / "a.json").write_bytes(CONTINUITY_FILES[2].read_bytes())
    res = runner.invoke(app, ["batch", str(src), "-o", str(tmp_path / "out"), "--to", "asif", "--package",
                              "--source-pointers", "--workers", "0", "--quiet"])
    assert res.exit_code == 0, res.output
    pkg = read_package((tmp_path / "out" / "a.asif.zip").read_bytes())
    assert pkg.files == {"source/a.json": CONTINUITY_FILES[2].read_bytes()}
    assert all(ev["provenance"]["sources"] for ev in pkg.document["events"])
