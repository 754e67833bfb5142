"""Validation as a library call and as `asif-convert validate`, including path resources."""

from __future__ import annotations

import hashlib
import json
import os

import pytest
from typer.testing import CliRunner

from asif_convert import InvalidInput, ensure_valid, validate
from asif_convert._cli.app import app

from .conftest import CONTINUITY_FILES, CORPUS

runner = CliRunner()
WITH_PATH = CORPUS / "asif" / "compaction-with-attachment.session.json"


def broken_asif() -> dict:
    doc = json.loads(WITH_PATH.read_bytes())
    doc["events"][0]["actor_id"] = "nobody"
    return doc


def test_library_validate_takes_bytes_or_a_parsed_document():
    assert validate(WITH_PATH.read_bytes()) == []
    assert validate(json.loads(CONTINUITY_FILES[0].read_bytes())) == []
    problems = validate(broken_asif())
    assert [(p.rule, p.path) for p in problems] == [("ASIF-R014", "/events/0/actor_id")]
    assert validate(b"{nope")[0].rule == "json"


def test_ensure_valid_raises_with_every_error():
    ensure_valid(WITH_PATH.read_bytes())
    with pytest.raises(InvalidInput) as caught:
        ensure_valid(broken_asif())
    assert caught.value.problems[0].rule == "ASIF-R014"


def test_cli_groups_problems_by_file_and_exits_1(tmp_path):
    bad = tmp_path / "bad.asif.json"
    bad.write_text(json.dumps(broken_asif()))
    res = runner.invoke(app, ["validate", str(WITH_PATH), str(bad)])
    assert res.exit_code == 1
    assert f"{WITH_PATH} (asif): valid" in res.stdout
    assert f"{bad} (asif): 1 problem" in res.stdout and "/events/0/actor_id" in res.stdout
    assert "1 valid, 1 invalid" in res.stdout


def test_cli_json_output(tmp_path):
    res = runner.invoke(app, ["validate", str(CONTINUITY_FILES[0]), "--json"])
    assert res.exit_code == 0
    out = json.loads(res.stdout)
    assert out == {str(CONTINUITY_FILES[0]): {"format": "continuity", "valid": True, "problems": []}}


def test_continuity_referential_problems_are_warnings(tmp_path):
    doc = json.loads(CONTINUITY_FILES[1].read_bytes())
    doc["messages"][0]["branch_id"] = "nowhere"
    path = tmp_path / "x.json"
    path.write_text(json.dumps(doc))
    res = runner.invoke(app, ["validate", str(path)])
    assert res.exit_code == 0 and "warning: /messages/0/branch_id" in res.stdout


def _assets(tmp_path, content: bytes) -> None:
    (tmp_path / "assets").mkdir()
    (tmp_path / "assets" / "project-notes.md").write_bytes(content)


def test_path_resources_are_checked_only_with_a_base_dir(tmp_path):
    doc = json.loads(WITH_PATH.read_bytes())
    notes = next(r for r in doc["resources"] if r.get("path"))
    content = b"x" * notes["bytes"]
    notes["sha256"] = hashlib.sha256(content).hexdigest()
    assert validate(doc) == []  # nothing is opened without a base directory
    assert [p.message for p in validate(doc, base_dir=tmp_path)][0].endswith("is missing)")
    _assets(tmp_path, content)
    assert validate(doc, base_dir=tmp_path) == []
    (tmp_path / "assets" / "project-notes.md").write_bytes(content + b"!")
    index = doc["resources"].index(notes)
    problems = validate(doc, base_dir=tmp_path)
    assert {(p.rule, p.path) for p in problems} == {("ASIF-R075", f"/resources/{index}/bytes"),
                                                   ("ASIF-R075", f"/resources/{index}/sha256")}


def test_path_resources_never_follow_links(tmp_path):
    doc = json.loads(WITH_PATH.read_bytes())
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "project-notes.md").write_bytes(b"secret")
    base = tmp_path / "base"
    base.mkdir()
    os.symlink(outside, base / "assets")
    (problem,) = validate(doc, base_dir=base)
    assert problem.rule == "ASIF-R075" and "symbolic link" in problem.message


def test_cli_base_dir(tmp_path):
    res = runner.invoke(app, ["validate", str(WITH_PATH), "--base-dir", str(tmp_path)])
    assert res.exit_code == 1 and "ASIF-R075" in res.stdout


def _nodes(value):
    """Every object and array in a JSON value, the value itself included."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict | list):
            yield node
            stack.extend(node.values() if isinstance(node, dict) else node)


def test_a_definition_checked_on_its_own_answers_as_with_every_definition():
    """A definition (``event``, ``part``, ``loss``) is compiled with only the definitions it
    reaches; every object of the corpus, and a few broken ones, get the same answer as with all
    of them."""
    import jsonschema_rs

    from asif_convert._validation import schemas

    schema = schemas.load_schema(schemas.ASIF_SCHEMA)
    defs = schema["$defs"]
    assert len(schemas._reached(defs, "part")) < len(defs)
    assert schemas._reached(defs, "continuation") is defs  # (a base URI of its own: all kept)
    values = [node for path in sorted((CORPUS / "asif").glob("*.json"))
              for node in _nodes(json.loads(path.read_text()))]
    values += [{}, [], {"kind": 3}, {"type": "text"}, {"type": "text", "text": 3}]
    valid_somewhere = 0
    for definition in defs:
        whole = jsonschema_rs.validator_for({"$schema": schema["$schema"], "$defs": defs,
                                             "$ref": f"#/$defs/{definition}"})
        alone = jsonschema_rs.validator_for(schemas._schema(schemas.ASIF_SCHEMA, definition))
        answers = [whole.is_valid(v) for v in values]
        assert [alone.is_valid(v) for v in values] == answers, definition
        valid_somewhere += any(answers)
    assert valid_somewhere > len(defs) / 2  # (the corpus holds valid values of most, not only broken ones)
