"""inspect, diff and the loss policy, through the command line."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from asif_convert import Options, convert
from asif_convert._cli.app import app
from asif_convert._errors import LossPolicyError

from .conftest import CONTINUITY_FILES, CORPUS

runner = CliRunner()
OPENAI = CORPUS / "continuity" / "04-openai-tools.json"
EXAMPLE = CORPUS / "asif" / "tool-call-completed.session.json"


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def test_inspect_json_shape_for_continuity():
    res = invoke("inspect", OPENAI, "--json")
    assert res.exit_code == 0, res.stderr
    s = json.loads(res.stdout)
    assert s["format"] == "continuity" and s["version"] == "agent-continuity-export"
    assert s["counts"]["messages"] == 9  # the export's own records
    assert s["as_asif"]["counts"]["events_by_kind"]["tool_call"] == 4  # what a conversion would write
    assert s["losses"] == {"total": 0, "by_kind": []}  # an export records no losses itself
    assert [b["id"] for b in s["as_asif"]["branches"]] == ["br-04-main"]


def test_inspect_asif_shows_coverage_and_document_losses():
    s = json.loads(invoke("inspect", EXAMPLE, "--json").stdout)
    doc = json.loads(EXAMPLE.read_bytes())
    assert s["format"] == "asif" and s["version"] == "0.4"
    assert [c["scope"] for c in s["coverage"]] == [c["scope"] for c in doc["coverage"]]
    assert s["losses"]["total"] == len(doc["losses"])
    assert s["counts"]["events"] == len(doc["events"])


def test_inspect_dry_run_lists_the_conversion_losses_and_writes_nothing(tmp_path):
    res = invoke("inspect", OPENAI, "--to", "asif", "--json")
    s = json.loads(res.stdout)
    expected = convert(OPENAI.read_bytes(), to="asif").losses
    assert s["dry_run"]["to"] == "asif"
    assert s["dry_run"]["losses"]["total"] == len(expected) > 0
    assert {r["kind"] for r in s["dry_run"]["losses"]["by_kind"]} == {loss.kind for loss in expected}


def test_inspect_human_output_has_the_tables():
    res = invoke("inspect", OPENAI, "--to", "asif")
    assert res.exit_code == 0
    for title in ("Contents", "Branches", "Losses converting to asif would record"):
        assert title in res.stdout


@pytest.mark.parametrize(("fmt", "path"), [("claude-code", next((CORPUS / "claude-code" / "tools").glob("*.jsonl"))),
                                           ("codex", CORPUS / "codex" / "hello.jsonl")])
def test_inspect_of_a_transcript_names_its_format_without_a_version(fmt, path):
    res = invoke("inspect", path)
    assert res.exit_code == 0, res.stderr
    header = res.stdout.splitlines()[0]
    assert f": {fmt}, session '" in header and "None" not in header
    assert json.loads(invoke("inspect", path, "--json").stdout)["version"] is None


def test_inspect_bad_input_exits_1(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    res = invoke("inspect", bad)
    assert res.exit_code == 1 and "bad.json" in res.stderr


def test_round_trip_diff_prints_no_differences(tmp_path):
    asif, back = tmp_path / "s.asif.json", tmp_path / "back.json"
    assert invoke("from-continuity", OPENAI, "-o", asif).exit_code == 0
    assert invoke("to-continuity", asif, "-o", back).exit_code == 0
    res = invoke("diff", OPENAI, back)
    assert res.exit_code == 0 and res.stdout.strip() == "no differences"


def test_diff_matches_records_by_id_and_reports_changes(tmp_path):
    doc = json.loads(OPENAI.read_bytes())
    other = json.loads(OPENAI.read_bytes())
    other["messages"].reverse()  # order of records does not matter
    other["messages"][0]["text_content"] = "changed"
    del other["events"][0]
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(doc))
    b.write_text(json.dumps(other))
    res = invoke("diff", a, b, "--json")
    assert res.exit_code == 1
    out = json.loads(res.stdout)
    assert out["equal"] is False and out["format"] == "continuity"
    changes = {(tuple(c["path"]), c["change"]) for c in out["changes"]}
    changed_id = other["messages"][0]["message_id"]
    assert changes == {(("messages", changed_id, "text_content"), "changed"),
                       (("events", doc["events"][0]["event_id"]), "removed")}
    human = invoke("diff", a, b)
    assert human.exit_code == 1 and "2 differences" in human.stdout and "changed" in human.stdout


@pytest.mark.parametrize("fmt", ["codex", "claude-code"])
def test_diff_compares_files_of_json_lines_line_by_line(tmp_path, fmt):
    """It ended in an internal error (exit 3): the comparison expected one JSON object."""
    source = sorted((CORPUS / fmt).glob("*.jsonl" if fmt == "codex" else "tools/*.jsonl"))[0]
    lines = source.read_bytes().splitlines()
    value = json.loads(lines[2])
    value["timestamp"] = "2000-01-01T00:00:00Z"
    changed = tmp_path / "changed.jsonl"
    changed.write_bytes(b"\n".join([*lines[:2], json.dumps(value).encode(), *lines[3:]]) + b"\n")
    res = invoke("diff", source, changed, "--json")
    assert res.exit_code == 1, res.output
    out = json.loads(res.stdout)
    assert out["format"] == fmt
    assert [(c["path"], c["change"]) for c in out["changes"]] == [([3, "timestamp"], "changed")]
    human = invoke("diff", source, changed)
    assert human.exit_code == 1 and "1 differences" in human.stdout, human.output
    assert "\n  record 3 (line 3)\n    timestamp: " in human.stdout, human.stdout
    assert invoke("diff", source, source).exit_code == 0


def test_diff_of_json_lines_counts_records_not_lines_and_says_what_it_did_not_compare(tmp_path):
    """Blank lines made every later line a difference; numbers were sorted as text (line 10
    before line 2); a cut last line was left out without a word."""
    source = next((CORPUS / "claude-code" / "tools").glob("*.jsonl"))
    lines = source.read_bytes().splitlines()
    for k in (1, 11):
        value = json.loads(lines[k])
        value["x"] = k
        lines[k] = json.dumps(value).encode()
    changed = tmp_path / "changed.jsonl"
    changed.write_bytes(b"\n".join([lines[0], b"", *lines[1:]]) + b'\n{"cut')
    out = json.loads(invoke("diff", source, changed, "--json").stdout)
    assert [c["path"] for c in out["changes"]] == [[2, "x"], [12, "x"]]  # (records, in their order)
    assert out["not_compared"] == {str(changed): [len(lines) + 2]}
    human = invoke("diff", source, changed)
    assert "record 2 (line 2; 3 in B)" in human.stdout and "not compared: line" in human.stderr


def test_diff_refuses_two_formats(tmp_path):
    res = invoke("diff", OPENAI, EXAMPLE)
    assert res.exit_code == 2 and "one format" in res.stderr


def test_loss_policy_error_refuses_and_writes_nothing(tmp_path):
    out = tmp_path / "o.json"
    res = invoke("from-continuity", CONTINUITY_FILES[1], "-o", out, "--on-loss", "error")
    assert res.exit_code == 4 and not out.exists()
    assert "refused by the loss policy" in res.stderr and "unmapped_field" in res.stderr


def test_fail_on_a_kind_only_refuses_that_kind(tmp_path):
    out = tmp_path / "o.json"
    assert invoke("from-continuity", OPENAI, "-o", out, "--fail-on", "invalid_digest").exit_code == 0
    res = invoke("from-continuity", OPENAI, "-o", out, "--fail-on", "tool_contract_unknown")
    assert res.exit_code == 4 and "tool_contract_unknown (1)" in res.stderr


def test_warnings_are_aggregated_and_ignore_silences_them(tmp_path):
    warn = invoke("from-continuity", OPENAI, "-o", tmp_path / "a.json")
    assert warn.stderr.count("\n") == 1 and "unmapped_field" in warn.stderr
    quiet = invoke("from-continuity", OPENAI, "-o", tmp_path / "b.json", "--on-loss", "ignore")
    assert quiet.exit_code == 0 and "losses" not in quiet.stderr
    assert invoke("from-continuity", OPENAI, "-o", tmp_path / "c.json", "--on-loss", "bogus").exit_code == 2


def test_library_loss_policy():
    with pytest.raises(LossPolicyError) as caught:
        convert(OPENAI.read_bytes(), to="asif", options=Options(fail_on=frozenset({"dialect_split"})))
    assert caught.value.counts == {"dialect_split": 1}


def test_diff_of_deeply_nested_documents_that_differ_is_a_clear_refusal(tmp_path):
    """deepdiff recurses per level: documents within --max-depth can still be too deep for it.
    That is a limit of diff (exit 1, said plainly), never an internal error."""
    def export(leaf: str) -> bytes:
        doc = json.loads(CONTINUITY_FILES[1].read_text())
        nested: object = leaf
        for _ in range(240):
            nested = [nested]
        doc["messages"][0]["content_json"] = nested
        return json.dumps(doc).encode()

    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_bytes(export("x"))
    b.write_bytes(export("y"))
    res = CliRunner().invoke(app, ["diff", str(a), str(b)])
    assert res.exit_code == 1, res.output
    assert "nested too deeply for diff" in res.stderr and "internal error" not in res.stderr


def test_inspect_shows_usage_as_delta_totals_by_unit(tmp_path):
    doc = json.loads(EXAMPLE.read_bytes())
    entry = {"scope": "event", "scope_id": doc["events"][0]["id"], "unit": "input_tokens", "value": 1200,
             "counter": "delta", "provenance": {"mode": "reported", "producer": "p"}}
    doc["usage"] = [entry, {**entry, "value": 34}, {**entry, "counter": "cumulative", "value": 5000},
                    {**entry, "unit": "output_tokens", "value": 7}]
    path = tmp_path / "u.asif.json"
    path.write_text(json.dumps(doc))
    s = json.loads(invoke("inspect", path, "--json").stdout)
    # cumulative counters are never summed
    assert s["usage"] == {"entries": 4, "delta_totals": {"input_tokens": 1234, "output_tokens": 7}}
    res = invoke("inspect", path)
    assert res.exit_code == 0 and "input_tokens 1,234" in res.stdout
