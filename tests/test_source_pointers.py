"""--source-pointers: the export travels as a resource, and every ASIF event points at the
record it was read from, so an auditor can check any event against its source."""

from __future__ import annotations

import hashlib
import json

import pytest
from typer.testing import CliRunner

from asif_convert import Options, convert
from asif_convert._cli.app import app
from asif_convert._formats.continuity import pointers
from asif_convert._package import read_package, write_package
from asif_convert._pipeline import validate

from .conftest import ASIF_EXAMPLES, CONTINUITY_FILES

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


@pytest.mark.parametrize("export", CONTINUITY_FILES, ids=lambda p: p.stem)
def test_resources_point_at_the_record_they_were_read_from(export):
    data = export.read_bytes()
    result = convert(data, to="asif", options=Options(source_pointers=True))
    original = json.loads(data)
    (source,) = [r for r in result.document["resources"] if r["purpose"] == "source"]
    pointed = set()
    for res in result.document["resources"]:
        if res is source:
            continue
        (ref,) = res["provenance"]["sources"]
        assert ref["resource_id"] == source["id"] and ref["locator"]["syntax"] == "json-pointer"
        where = ref["locator"]["value"]
        record = _resolve(original, where)
        if res["purpose"] == "native":
            assert where.startswith("/native_states/") and res["id"] in (record["state_id"],
                                                                        res["agent-continuity/1"].get("state_id"))
        elif res["purpose"] == "artifact":
            assert where.startswith("/artifacts/") and res["original_location"] == record["path"]
        else:  # split out of a message's content
            assert where.startswith("/messages/"), (res["id"], where)
        pointed.add(where)
    records = {f"/{c}/{i}" for c in ("native_states", "artifacts") for i in range(len(original.get(c) or ()))}
    assert records <= pointed
    # and they travel: continuity -> ASIF -> continuity -> ASIF is exact
    assert convert(convert(result.output, to="continuity").output, to="asif").output == result.output


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
    res = runner.invoke(app, ["convert", str(out), "--to", "asif", "--source-pointers", "-o", str(tmp_path / "x.json")])
    assert res.exit_code == 2
    assert "source pointers are written between a continuity export and ASIF only" in res.stderr
    assert not (tmp_path / "x.json").exists()


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


# -- ASIF -> continuity: records point back ----------------------------------------------------

def _asif_inputs() -> list[tuple[str, bytes]]:
    """The ASIF examples, and the ASIF written from each continuity export (artifacts, native
    states, checkpoints and split messages have continuity records of their own)."""
    out = [(p.name, p.read_bytes()) for p in ASIF_EXAMPLES]
    out += [(p.stem + ".asif.json", convert(p.read_bytes(), to="asif").output) for p in CONTINUITY_FILES]
    return out


ASIF_INPUTS = _asif_inputs()
COLLECTIONS = ("branches", "messages", "events", "checkpoints", "native_states", "artifacts")


def _sources(export: dict) -> dict:
    (entry,) = [s for s in export.get("native_states", []) if s["provider"] == "asif" and s["kind"] == "sources/1"]
    return entry["payload"]


@pytest.mark.parametrize("name,data", ASIF_INPUTS, ids=[n for n, _ in ASIF_INPUTS])
def test_every_continuity_record_points_back_at_the_asif_records_it_came_from(name, data):
    result = convert(data, to="continuity", options=Options(source_pointers=True), name=f"in/{name}")
    export, asif = result.document, json.loads(data)
    payload = _sources(export)
    assert payload["document"] == {"name": name, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    records = payload["records"]
    # every record written is listed (the asif entries of the converter's own state excepted)
    written = {"/session"} | {f"/{c}/{i}" for c in COLLECTIONS for i, rec in enumerate(export.get(c) or ())
                              if not (c == "native_states" and rec["provider"] == "asif")}
    assert set(records) == written
    kinds = {"branches": "branches", "messages": "events", "events": "events", "checkpoints": "contexts",
             "native_states": "resources", "artifacts": "resources", "session": "session"}
    for ptr, targets in records.items():
        record = _resolve(export, ptr)
        for target in targets:
            assert target.split("/")[1] == kinds[ptr.split("/")[1]], (ptr, target)
            source = _resolve(asif, target)
            if ptr.startswith(("/messages/", "/events/")):
                own = record.get("message_id", record.get("event_id"))
                native = source.get("extensions", {}).get("agent-continuity/1", {})
                assert own in (source["id"], native.get("id")) or source["id"].startswith(own), (ptr, target)
            elif ptr.startswith("/branches/"):
                assert record["branch_id"] in (source["id"], source.get("agent-continuity/1", {}).get("branch_id"))
    # the records with metadata say it themselves
    for ptr in payload["metadata"]:
        value = _resolve(export, ptr)["metadata"]["asif_source"]
        assert value["pointer"] == records[ptr][0] and value["sha256"] == payload["document"]["sha256"]
    assert set(payload["metadata"]) == {p for p in written if p == "/session" or p.split("/")[1] in (
        "branches", "artifacts")}
    assert result.target_format == "continuity"


@pytest.mark.parametrize("name,data", ASIF_INPUTS, ids=[n for n, _ in ASIF_INPUTS])
@pytest.mark.parametrize("residual", [True, False], ids=["residual", "no-residual"])
def test_back_pointers_never_come_back_as_data(name, data, residual):
    plain = convert(data, to="continuity", options=Options(residual=residual))
    pointed = convert(data, to="continuity", options=Options(source_pointers=True, residual=residual))
    assert "asif_source" not in plain.output.decode() and "sources/1" not in plain.output.decode()
    # the option adds the pointers and nothing else
    assert pointers.consume(pointed.document) == plain.document
    # and they are the converter's own: the way back gives what it gives without them, and says so
    back, back_plain = convert(pointed.output, to="asif"), convert(plain.output, to="asif")
    said = [loss for loss in back.document["losses"] if loss["id"] == "translation:back-pointers"]
    assert [loss for loss in back.document["losses"] if loss not in said] == back_plain.document["losses"]
    assert len(said) == (0 if residual else 1)
    strip = {**back.document, "losses": back_plain.document["losses"]}
    assert strip == back_plain.document


def test_the_round_trip_through_continuity_stays_exact_with_the_option():
    for name, data in ASIF_INPUTS:
        export = convert(data, to="continuity", options=Options(source_pointers=True)).output
        again = convert(export, to="asif").output
        assert json.loads(again) == json.loads(data), name


def test_a_package_is_referenced_with_the_member_the_pointers_are_into(tmp_path):
    from .reference_example import SESSION, files
    pkg = write_package(SESSION.read_bytes(), files())
    result = convert(pkg, to="continuity", options=Options(source_pointers=True), name="ex.asif.zip")
    assert _sources(result.document)["document"] == {"name": "ex.asif.zip", "bytes": len(pkg),
                                                     "sha256": hashlib.sha256(pkg).hexdigest(),
                                                     "member": "session.json"}
    assert result.document["session"]["metadata"]["asif_source"]["member"] == "session.json"


def _with_branch_metadata(value) -> bytes:
    doc = json.loads(CONTINUITY_FILES[2].read_bytes())
    doc["branches"][0]["metadata"] = {"asif_source": value, "team": "a"}
    return (json.dumps(doc, indent=2) + "\n").encode()


LOOK_ALIKE = {"sha256": "0" * 64, "pointer": "/branches/0"}


def test_look_alike_pointers_written_by_someone_else_are_data():
    data = _with_branch_metadata(LOOK_ALIKE)
    asif = convert(data, to="asif")
    branch = asif.document["branches"][0]["agent-continuity/1"]
    assert branch["metadata"]["asif_source"] == LOOK_ALIKE  # kept as the branch's own metadata
    assert convert(asif.output, to="continuity").output == data


def test_an_entry_of_another_shape_is_an_ordinary_native_state_and_leaves_metadata_alone():
    doc = json.loads(_with_branch_metadata(LOOK_ALIKE))
    payload = {"document": {"name": "x", "bytes": 1, "sha256": "0" * 64}, "records": {"/branches/0": ["/branches/0"]},
               "metadata": ["/branches/0"], "signed_by": "someone"}  # a field the type does not have
    doc.setdefault("native_states", []).append({"state_id": "s", "session_id": doc["session"]["session_id"],
                                                "provider": "asif", "kind": "sources/1", "payload": payload,
                                                "portable": True})
    data = (json.dumps(doc, indent=2) + "\n").encode()
    asif = convert(data, to="asif")
    assert asif.document["branches"][0]["agent-continuity/1"]["metadata"]["asif_source"] == LOOK_ALIKE
    assert any(r.get("agent-continuity/1", {}).get("kind") == "sources/1" for r in asif.document["resources"])
    assert convert(asif.output, to="continuity").output == data


def test_an_edited_pointer_is_kept_as_data_the_others_are_taken_out():
    data = ASIF_INPUTS[-1][1]
    export = convert(data, to="continuity", options=Options(source_pointers=True)).document
    export["branches"][0]["metadata"]["asif_source"]["pointer"] = "/branches/7"  # edited since
    back = convert(json.dumps(export).encode(), to="asif", options=Options(residual=False)).document
    meta = back["branches"][0]["agent-continuity/1"]["metadata"]
    assert meta["asif_source"]["pointer"] == "/branches/7"
    assert "metadata" not in back["session"].get("agent-continuity/1", {})  # the session's was ours


def test_metadata_of_the_records_own_is_never_written_over():
    asif = convert(_with_branch_metadata(LOOK_ALIKE), to="asif")
    result = convert(asif.output, to="continuity", options=Options(source_pointers=True))
    assert result.document["branches"][0]["metadata"]["asif_source"] == LOOK_ALIKE
    payload = _sources(result.document)
    assert "/branches/0" in payload["records"] and "/branches/0" not in payload["metadata"]
    assert convert(result.output, to="asif").output == asif.output


def test_to_continuity_and_batch_take_the_option(tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    (src / "a.asif.json").write_bytes(ASIF_EXAMPLES[0].read_bytes())
    out = tmp_path / "a.continuity.json"
    res = runner.invoke(app, ["to-continuity", str(src / "a.asif.json"), "--source-pointers", "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert _sources(json.loads(out.read_bytes()))["document"]["name"] == "a.asif.json"
    res = runner.invoke(app, ["batch", str(src), "-o", str(tmp_path / "out"), "--to", "continuity",
                              "--source-pointers", "--workers", "0", "--quiet"])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "out" / "a.continuity.json").read_bytes() == out.read_bytes()
