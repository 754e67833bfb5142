"""An importer can write: ``asif_convert.dump`` writes an ``ir.Document`` as ``convert`` writes a
document (validated, the same Result and errors), every IR record says what it means, and
``ir.SessionBuilder`` builds a valid session from messages and tool calls in a few lines."""

from __future__ import annotations

import json
import re

import msgspec
import pytest

import asif_convert
import asif_convert.ir as ir
from asif_convert import InvalidInput, Options, UsageError, convert, dump, load, validate

from .conftest import ASIF_EXAMPLES, CONTINUITY_FILES, ROOT


def _built() -> ir.Document:
    b = ir.SessionBuilder("session-1", producer="my-importer", version="1.0", title="Arithmetic")
    b.message("user", "What is 2 + 2?")
    call = b.tool_call("calculator", {"expression": "2 + 2"})
    b.tool_result(call, "4")
    b.message("assistant", "2 + 2 = 4.")
    return b.build()


def test_dump_is_public():
    assert "dump" in asif_convert.__all__ and asif_convert.dump is dump


def test_a_built_session_is_valid_asif_and_converts_to_continuity():
    result = dump(_built(), to="asif")
    assert isinstance(result, asif_convert.Result) and result.target_format == "asif"
    assert validate(result.output) == []
    doc = result.document
    assert [e["kind"] for e in doc["events"]] == ["message", "tool_call", "tool_result", "message"]
    assert doc["capture"]["producer"] == {"name": "my-importer", "version": "1.0"}
    assert {e["provenance"]["mode"] for e in doc["events"]} == {"reported"}
    assert doc["checkpoints"][0]["at_event_id"] == doc["branches"][0]["head_event_id"] == "e4"
    assert len(doc["coverage"]) == 13
    assert {loss["kind"] for loss in doc["losses"]} == {"synthesized_participant", "tool_contract_unknown",
                                                         "synthesized_checkpoint"}
    back = dump(_built(), to="continuity")
    assert [m["text_content"] for m in back.document["messages"]][0] == "What is 2 + 2?"
    assert convert(back.output, to="asif").document == doc  # and back, exactly


def test_a_package_and_the_loss_policy_work_as_for_convert():
    assert dump(_built(), to="asif", package=True).output[:2] == b"PK"
    with pytest.raises(asif_convert.LossPolicyError):
        dump(_built(), to="continuity", options=Options(on_loss="error"))


@pytest.mark.parametrize("path", CONTINUITY_FILES[:6] + ASIF_EXAMPLES[:4], ids=lambda p: p.stem)
def test_dump_of_what_load_read_writes_what_convert_writes(path):
    assert dump(load(path), to="asif").document == convert(path.read_bytes(), to="asif").document


def test_dump_refuses_what_is_not_a_document():
    with pytest.raises(UsageError, match="dump\\(\\) writes an asif_convert.ir.Document"):
        dump({"asif_version": "0.4"}, to="asif")  # type: ignore[arg-type]


def test_an_invalid_session_is_refused_with_its_path():
    doc = _built()
    doc.events[2].body.call_id = "no-such-call"  # a result of no call
    with pytest.raises(InvalidInput) as exc:
        dump(doc, to="asif")
    assert any(p.path.startswith("/events/2") for p in exc.value.problems), exc.value.problems


def test_a_value_that_is_not_json_is_refused_with_its_path():
    doc = _built()
    doc.events[1].body.arguments = {"ratio": float("nan")}
    with pytest.raises(InvalidInput):
        dump(doc, to="asif")


def test_every_ir_record_and_field_says_what_it_means():
    for name, cls in vars(ir).items():
        if isinstance(cls, type) and issubclass(cls, msgspec.Struct) and cls.__module__ == ir.__name__:
            doc = cls.__doc__ or ""
            assert doc.strip(), name
            own = [f for f in cls.__struct_fields__ if f not in ("unknown", "native")]
            assert [f for f in own if f"``{f}``" not in doc] == [], name
    assert "``actor_id``: the participant who did it" in (ir.Event.__doc__ or "")


def test_the_readme_importer_example_writes_asif(tmp_path, monkeypatch):
    readme = (ROOT / "README.md").read_text()
    block = next(b for b in re.findall(r"```python\n(.*?)```", readme, re.S) if "SessionBuilder" in b)
    monkeypatch.chdir(tmp_path)
    exec(compile(block, "README.md", "exec"), {})
    written = json.loads((tmp_path / "session.asif.json").read_bytes())
    assert validate(written) == []
