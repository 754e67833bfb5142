"""Files named by path travel with the document, or a loss names each one (docs/packages.md,
*Files named by path*): every ASIF document written from the public reference examples by
``convert``, ``batch`` and the round trip through continuity is accepted with its files by
``validate --base-dir``, or the command names every file it did not carry."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from asif_convert._cli.app import app

from .conftest import ASIF_EXAMPLES, CORPUS

runner = CliRunner()
ASSETS = CORPUS / "asif"  # the folder that holds the examples' assets/ (the reference's layout)
WITH_FILES = [p for p in ASIF_EXAMPLES if '"path"' in p.read_text() and p.stem != "attachment-availability.session"]


def _path_files(doc: Path) -> set[str]:
    return {r["path"] for r in json.loads(doc.read_bytes()).get("resources", [])
            if r.get("availability") == "embedded" and isinstance(r.get("path"), str)}


def _valid_with_files(doc: Path) -> list[str]:
    res = runner.invoke(app, ["validate", str(doc), "--base-dir", str(doc.parent)])
    return [] if res.exit_code == 0 else [res.output]


def test_the_examples_with_files_are_the_three_the_issue_names():
    assert sorted(p.name for p in ASIF_EXAMPLES if _path_files(p)) == [
        "compaction-with-attachment.session.json", "image-and-document.session.json",
        "tool-generated-files.session.json"]


def test_the_assets_are_the_reference_files():
    from .reference_example import files

    for path, content in files().items():
        assert (ASSETS / path).read_bytes() == content
    for example in ASIF_EXAMPLES:
        res = runner.invoke(app, ["validate", str(example), "--base-dir", str(ASSETS)])
        assert res.exit_code == 0, res.output


@pytest.mark.parametrize("example", ASIF_EXAMPLES, ids=lambda p: p.stem)
def test_convert_writes_the_files_beside_the_output_when_told_where_they_are(tmp_path, example):
    out = tmp_path / "out.asif.json"
    res = runner.invoke(app, ["convert", str(example), "--to", "asif", "-o", str(out), "--artifacts-root",
                              str(ASSETS)])
    assert res.exit_code == 0, res.output
    assert _valid_with_files(out) == []
    assert "file_not_carried" not in res.stderr
    for path in _path_files(example):
        assert (tmp_path / path).read_bytes() == (ASSETS / path).read_bytes()


@pytest.mark.parametrize("example", ASIF_EXAMPLES, ids=lambda p: p.stem)
def test_convert_names_every_file_it_did_not_carry(tmp_path, example):
    out = tmp_path / "out.asif.json"
    res = runner.invoke(app, ["convert", str(example), "--to", "asif", "-o", str(out), "--report",
                              str(tmp_path / "r.json")])
    assert res.exit_code == 0, res.output
    wanted = _path_files(example)
    report = json.loads((tmp_path / "r.json").read_bytes())
    named = {loss["id"].partition("file-not-carried:")[2] for loss in report["losses"]
             if loss["kind"] == "file_not_carried"}
    assert named == wanted
    for path in wanted:
        assert f"the session embeds {path} by path" in res.stderr
    if not wanted:
        assert _valid_with_files(out) == []


def test_a_file_not_carried_can_refuse_the_conversion(tmp_path):
    example = ASSETS / "image-and-document.session.json"
    out = tmp_path / "out.asif.json"
    res = runner.invoke(app, ["convert", str(example), "--to", "asif", "-o", str(out), "--fail-on",
                              "file_not_carried"])
    assert res.exit_code != 0 and not out.exists()


def test_a_file_that_is_not_what_its_resource_declares_is_not_carried(tmp_path):
    (tmp_path / "in" / "assets").mkdir(parents=True)
    for path in _path_files(ASSETS / "image-and-document.session.json"):
        (tmp_path / "in" / path).write_bytes(b"something else")
    (tmp_path / "out").mkdir()
    res = runner.invoke(app, ["convert", str(ASSETS / "image-and-document.session.json"), "--to", "asif", "-o",
                              str(tmp_path / "out" / "s.asif.json"), "--artifacts-root", str(tmp_path / "in")])
    assert res.exit_code == 0, res.output
    assert "differs from its declared bytes and sha256" in res.stderr
    assert not (tmp_path / "out" / "assets").exists()


@pytest.mark.parametrize("example", ASIF_EXAMPLES, ids=lambda p: p.stem)
def test_the_round_trip_through_continuity_carries_the_files(tmp_path, example):
    export, files, back = tmp_path / "c.json", tmp_path / "files", tmp_path / "back"
    res = runner.invoke(app, ["to-continuity", str(example), "-o", str(export), "--artifacts-root", str(ASSETS),
                              "--artifacts-out", str(files)])
    assert res.exit_code == 0, res.output
    files.mkdir(exist_ok=True)  # (no file to write: the folder is not made)
    assert {p.relative_to(files).as_posix() for p in files.rglob("*") if p.is_file()} == _path_files(example)
    back.mkdir()
    res = runner.invoke(app, ["from-continuity", str(export), "-o", str(back / "s.asif.json"), "--artifacts-root",
                              str(files)])
    assert res.exit_code == 0, res.output
    assert _valid_with_files(back / "s.asif.json") == []
    assert json.loads((back / "s.asif.json").read_bytes()) == json.loads(example.read_bytes())


@pytest.mark.parametrize("example", WITH_FILES, ids=lambda p: p.stem)
def test_artifacts_out_without_the_files_names_each_one(tmp_path, example):
    export, files = tmp_path / "c.json", tmp_path / "files"
    res = runner.invoke(app, ["to-continuity", str(example), "-o", str(export), "--artifacts-out", str(files)])
    assert res.exit_code == 0, res.output
    for path in _path_files(example):
        assert f"the session embeds {path} by path, but its bytes are not at hand" in res.stderr
    assert not files.exists()  # no empty folder that looks like success
    res = runner.invoke(app, ["from-continuity", str(export), "-o", str(tmp_path / "s.asif.json")])
    assert res.exit_code == 0, res.output
    for path in _path_files(example):
        assert f"the session embeds {path} by path" in res.stderr


@pytest.mark.parametrize("root", [True, False], ids=["artifacts-root", "none"])
def test_batch_carries_the_files_or_names_each_one(tmp_path, root):
    out = tmp_path / "out"
    res = runner.invoke(app, ["batch", str(ASSETS), "-o", str(out), "--to", "asif", "--pattern", "*.session.json",
                              *(["--artifacts-root", str(ASSETS)] if root else [])])
    assert res.exit_code == 0, res.output
    lines = [json.loads(line) for line in (out / "manifest.jsonl").read_text().splitlines()]
    assert len(lines) == len(ASIF_EXAMPLES)
    for line in lines:
        wanted = _path_files(ASSETS / Path(line["input"]).name)
        if root:
            assert line["not_carried"] is None and "file_not_carried" not in line["losses"]
            assert _valid_with_files(out / line["output"]) == []
        else:
            assert set(line["not_carried"] or ()) == wanted
            assert line["losses"].get("file_not_carried", 0) == len(wanted)


def test_batch_to_continuity_names_the_files_of_a_package(tmp_path):
    example = ASSETS / "image-and-document.session.json"
    src = tmp_path / "in"
    src.mkdir()
    res = runner.invoke(app, ["convert", str(example), "--to", "asif", "--artifacts-root", str(ASSETS), "-o",
                              str(src / "p.asif.zip")])
    assert res.exit_code == 0, res.output
    out = tmp_path / "out"
    res = runner.invoke(app, ["batch", str(src), "-o", str(out), "--to", "continuity", "--pattern", "*.asif.zip"])
    assert res.exit_code == 0, res.output
    [line] = [json.loads(line) for line in (out / "manifest.jsonl").read_text().splitlines()]
    assert line["not_carried"] == sorted(_path_files(example))
    assert line["losses"]["file_not_carried"] == 2


@pytest.mark.parametrize("to", ["claude-code", "codex"])
def test_an_agents_transcript_carries_the_files_inline_when_told_where_they_are(tmp_path, to):
    """An agent's transcript is one file: the image the session names by path reaches it inline
    (base64), with the folder given; without it, the part is left out and a loss names the file."""
    import base64

    from asif_convert import Options, convert

    source = ASSETS / "image-and-document.session.json"
    image = (ASSETS / "assets" / "color-grid.png").read_bytes()
    carried = convert(source, to=to, options=Options(artifacts_root=ASSETS))
    assert base64.b64encode(image).decode() in carried.output.decode()
    assert not [x for x in carried.losses if x.kind == "file_not_carried"]
    if to == "claude-code":  # a document keeps its name as its title (what the model is shown of it)
        assert b'"title":"meeting-notes.pdf"' in carried.output
    bare = convert(source, to=to)
    assert base64.b64encode(image).decode() not in bare.output.decode()
    assert {ref.id for x in bare.losses if x.kind == "file_not_carried" for ref in x.references} == {"image",
                                                                                                   "document"}


def test_a_text_file_named_by_path_reaches_claude_code_as_a_text_document():
    from asif_convert import Options, convert

    source = ASSETS / "tool-generated-files.session.json"
    summary = (ASSETS / "assets" / "summary.md").read_text()
    carried = convert(source, to="claude-code", options=Options(artifacts_root=ASSETS))
    documents = [b for line in carried.output.splitlines() for r in [json.loads(line)]
                 for b in _blocks(r) if b.get("type") == "document"]
    assert {"type": "text", "media_type": "text/plain", "data": summary} in [d["source"] for d in documents]
    assert any(x.kind == "media_adapted" for x in carried.losses)  # (text/markdown written as text/plain)


def _blocks(record: dict) -> list[dict]:
    """A record's content blocks, and those inside its tool results."""
    content = record.get("message", {}).get("content")
    out = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
    return out + [x for b in out if b.get("type") == "tool_result" and isinstance(b.get("content"), list)
                  for x in b["content"]]


@pytest.mark.parametrize("to", ["claude-code", "codex"])
def test_batch_to_an_agent_counts_the_files_it_carried_inline_as_carried(tmp_path, to):
    src = tmp_path / "in"
    src.mkdir()
    (src / "s.session.json").write_bytes((ASSETS / "image-and-document.session.json").read_bytes())
    res = runner.invoke(app, ["batch", str(src), "-o", str(tmp_path / "out"), "--to", to, "--artifacts-root",
                              str(ASSETS), "--fail-on", "file_not_carried"])
    assert res.exit_code == 0, res.output
    [line] = [json.loads(x) for x in (tmp_path / "out" / "manifest.jsonl").read_text().splitlines()]
    assert line["status"] == "ok" and line["not_carried"] is None and "file_not_carried" not in line["losses"]


@pytest.mark.parametrize("to", ["claude-code", "codex"])
def test_an_agent_output_names_only_the_files_of_the_parts_it_writes(to):
    """A file no written part shows would not be in the transcript with its bytes either."""
    from asif_convert import convert

    doc = json.loads((ASSETS / "image-and-document.session.json").read_text())
    for ev in doc["events"]:
        ev["data"]["parts"] = [p for p in ev["data"]["parts"] if p["kind"] == "text"]
    assert not [x for x in convert(json.dumps(doc).encode(), to=to).losses if x.kind == "file_not_carried"]


@pytest.mark.parametrize("packaged", [False, True], ids=["artifacts-root", "package"])
def test_a_file_too_long_for_the_limits_inline_is_named_not_refused(packaged):
    """A file whose data URL would be longer than --max-string is not carried (a loss names it),
    whether the folder or the package gives it; one that fits to the character is carried."""
    from asif_convert import Limits, Options, convert

    pdf = (ASSETS / "assets" / "meeting-notes.pdf").read_bytes()
    fits = len("data:application/pdf;base64,") + len(base64.b64encode(pdf))
    source = ASSETS / "image-and-document.session.json"
    options = Options(artifacts_root=ASSETS)
    if packaged:
        source, options = convert(source, to="asif", package=True, options=options).output, Options()
    for limit, carried in ((fits, True), (fits - 1, False)):
        result = convert(source, to="claude-code", limits=Limits(max_string=limit), options=options)
        named = [x for x in result.losses if x.kind == "file_not_carried"]
        assert (base64.b64encode(pdf) in result.output) is carried and (not named) is carried
        if not carried:
            assert named[0].references[0].id == "document" and "--max-string" in named[0].explanation
            assert b'"type":"image"' in result.output  # (the image is within them)
