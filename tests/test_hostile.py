"""Broken and hostile input: the catalogue, each entry with its documented outcome.

Every refusal is checked the same way (``refused``): exit code 1, ``error: FILE: invalid
input`` then the JSON path and the reason, no traceback, no output file, no temp file left,
and the input file byte for byte unchanged. Every conversion of a hostile-but-convertible input
is checked by ``converted``: exit 0, a valid output, the input unchanged.

The README section "Broken and hostile input" is the table of these outcomes.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from unittest import mock

import msgspec
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from asif_convert import InvalidInput, Limits, _limits, convert
from asif_convert._cli.app import app
from asif_convert._limits import DEPTH_CEILING, MAX_SAFE_INTEGER, parse_size
from asif_convert._registry import get
from asif_convert._validation import schemas

from .conftest import CORPUS
from .sdk_blocks import export
from .strategies import json_values

runner = CliRunner()

CHAT = CORPUS / "continuity" / "02-plain-chat.json"
TOOLS = CORPUS / "continuity" / "03-anthropic-tools.json"
ARTIFACTS = CORPUS / "continuity" / "10-artifacts.json"
SESSION = CORPUS / "asif" / "tool-generated-files.session.json"  # has embedded resources stored by path

TO = {"continuity": "from-continuity", "asif": "to-continuity"}  # command for an input of this format


def load(path: Path) -> dict:
    return json.loads(path.read_bytes())


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def invoke(*args, input=None):
    res = runner.invoke(app, [str(a) for a in args], input=input)
    assert "Traceback" not in res.stdout + res.stderr
    return res


def refused(tmp_path: Path, content: bytes, path: str, reason: str, *flags, command: str = "from-continuity",
            rule: str | None = None) -> str:
    """Run ``command`` on ``content``; assert the documented refusal; return stderr."""
    src = tmp_path / "input.json"
    src.write_bytes(content)
    before = digest(src)
    out = tmp_path / "out" / "result.json"
    out.parent.mkdir(exist_ok=True)
    res = invoke(command, src, "-o", out, "--report", tmp_path / "out" / "report.json", *flags)
    assert res.exit_code == 1, res.stderr
    assert f"error: {src}: invalid input" in res.stderr
    lines = [ln for ln in res.stderr.splitlines() if ln.startswith(f"  {path or '/'}: ")]
    line = next((ln for ln in lines if reason in ln), None)
    assert line is not None, f"no problem at {path or '/'!r} saying {reason!r} in:\n{res.stderr}"
    if rule is not None:
        assert line.endswith(f"[{rule}]"), line
    assert list(out.parent.iterdir()) == [], "a refusal wrote something"
    assert digest(src) == before
    return res.stderr


def converted(tmp_path: Path, doc_or_bytes: dict | bytes, command: str = "from-continuity", *flags):
    """Run ``command``; assert exit 0, a valid output and an unchanged input; return (output, stderr)."""
    src = tmp_path / "input.json"
    src.write_bytes(doc_or_bytes if isinstance(doc_or_bytes, bytes) else json.dumps(doc_or_bytes).encode())
    before = digest(src)
    out = tmp_path / "result.json"
    res = invoke(command, src, "-o", out, *flags)
    assert res.exit_code == 0, res.stderr
    assert digest(src) == before
    target = "asif" if command == "from-continuity" else "continuity"
    output = json.loads(out.read_bytes())
    assert get(target).validate(output) == [] or target == "continuity"
    return output, res.stderr


def dumps(doc) -> bytes:
    return json.dumps(doc, ensure_ascii=False).encode()


# -- not a JSON document -------------------------------------------------------------------------


@pytest.mark.parametrize(("content", "reason"), [
    (b"", "the input is empty"),
    (b" \n\t\r\n", "the input is empty"),
    (b"hello", "not valid JSON (line 1, column 1, byte 0): invalid character"),
    (b'{"format": "agent-continuity-export",\n  "session": [}', "not valid JSON (line 2, column 15, byte 52)"),
    (b'{"a": 1} {"b": 2}', "trailing characters"),
    (b"{'format': 'agent-continuity-export'}", "not valid JSON (line 1, column 2"),
    (b'{"a": 1,}', "not valid JSON (line 1, column 9"),
    (b'{"a": 01}', "not valid JSON"),
    (b'{"a": "line\nbreak"}', "not valid JSON (line 1, column 12"),  # raw control character in a string
    (b"\x00{}", "not valid JSON (line 1, column 1, byte 0)"),
])
def test_not_json(tmp_path, content, reason):
    refused(tmp_path, content, "", reason, rule="json")


def test_truncated_json_names_where_it_ends(tmp_path):
    data = TOOLS.read_bytes()
    cut = data[: len(data) // 2]
    line = cut.count(b"\n") + 1
    refused(tmp_path, cut, "", f"the file ends in the middle of a value (line {line}, column ", rule="json")
    assert "is it truncated?" in refused(tmp_path, data[:-2], "", "ends in the middle")


@pytest.mark.parametrize(("content", "kind"), [
    (b"[1, 2]", "an array"), (b'"agent-continuity-export"', "a string"), (b"42", "a number"),
    (b"1.5", "a number"), (b"true", "a boolean"), (b"null", "null"),
])
def test_top_level_not_an_object(tmp_path, content, kind):
    # detected format (convert): says what the document is
    refused(tmp_path, content, "", f"the document is {kind}, not an object", "--to", "asif", command="convert",
            rule="format")
    # forced format: the same words, naming the format asked for (not the schema's Python words)
    refused(tmp_path, content, "", f"the document is {kind}, not an object; expected agent-continuity export",
            rule="format")
    refused(tmp_path, content, "", f"the document is {kind}, not an object; expected ASIF 0.4 session document",
            command="to-continuity", rule="format")


def test_a_value_nested_one_level_too_deep_says_level(tmp_path):
    refused(tmp_path, b'{"format": [1]}', "/format", "nested more than 1 level deep here (--max-depth 1)",
            "--max-depth", "1", rule="limit")


# -- the wrong document --------------------------------------------------------------------------


def test_the_other_format_is_refused_in_one_line_with_the_right_command(tmp_path):
    src = tmp_path / "input.json"
    err = refused(tmp_path, SESSION.read_bytes(), "", "this is an ASIF 0.4 session document (urn:asif:0.4:session), "
                  "not an agent-continuity export (format: agent-continuity-export); to convert it, run: "
                  f"asif-convert to-continuity {src}", rule="format")
    assert len(err.splitlines()) == 2  # "error: FILE: invalid input", then the one problem
    err = refused(tmp_path, CHAT.read_bytes(), "", "this is an agent-continuity export (format: agent-continuity-"
                  "export), not an ASIF 0.4 session document (urn:asif:0.4:session); to convert it, run: "
                  f"asif-convert from-continuity {src}", command="to-continuity", rule="format")
    assert len(err.splitlines()) == 2 and "'streams'" not in err
    refused(tmp_path, CHAT.read_bytes(), "", "leave out --from to read it as continuity", "--from", "asif",
            "--to", "asif", command="convert", rule="format")


def test_a_broken_document_of_the_forced_format_still_gets_its_schema_errors(tmp_path):
    """Only a document another format claims is 'the other format'; a damaged one is not."""
    doc = load(CHAT)
    doc["format"] = "agent-continuity-exprot"
    refused(tmp_path, dumps(doc), "/format", '"agent-continuity-export" was expected', rule="schema")


def test_unknown_format(tmp_path):
    refused(tmp_path, b'{"format": "langchain-memory", "messages": []}', "/format",
            'unknown format "langchain-memory"', "--to", "asif", command="convert", rule="format")
    refused(tmp_path, b'{"messages": []}', "", "not a document of any installed format", "--to", "asif",
            command="convert", rule="format")


def test_misspelled_format(tmp_path):
    doc = load(CHAT)
    doc["format"] = "agent-continuity-exprot"
    refused(tmp_path, dumps(doc), "/format", '"agent-continuity-export" was expected', rule="schema")
    refused(tmp_path, dumps(doc), "/format", 'unknown format "agent-continuity-exprot"', "--to", "asif",
            command="convert", rule="format")


def test_asif_version_other_than_0_4(tmp_path):
    doc = load(SESSION)
    doc["asif_version"] = "0.5"
    refused(tmp_path, dumps(doc), "/asif_version", '"0.4" was expected', command="to-continuity", rule="schema")


CONTINUITY_REQUIRED = [
    ((), "format"), ((), "session"), ((), "messages"), ((), "events"), ((), "checkpoints"),
    (("session",), "session_id"), (("session",), "title"), (("session",), "status"),
    (("session",), "active_branch_id"),
    *[(("messages", 0), f) for f in ("message_id", "session_id", "role", "status", "text_content", "sequence")],
    *[(("events", 0), f) for f in ("event_id", "session_id", "event_type", "payload")],
    *[(("branches", 0), f) for f in ("branch_id", "session_id", "name", "status", "metadata", "created_at",
                                     "updated_at")],
    *[(("artifacts", 0), f) for f in ("artifact_id", "session_id", "branch_id", "kind", "path", "metadata",
                                      "created_at")],
]


@pytest.mark.parametrize(("parent", "field"), CONTINUITY_REQUIRED, ids=lambda v: "/".join(map(str, v)) or "root")
def test_each_required_continuity_field_missing(tmp_path, parent, field):
    doc = load(ARTIFACTS)
    node = doc
    for step in parent:
        node = node[step]
    del node[field]
    path = "".join(f"/{p}" for p in parent)
    refused(tmp_path, dumps(doc), path, f'"{field}" is a required property', rule="schema")


ASIF_REQUIRED = ["asif_version", "capture", "session", "participants", "events", "branches", "executions",
                 "contexts", "configurations", "tools", "resources", "environments", "checkpoints", "coverage",
                 "losses", "required_features"]


@pytest.mark.parametrize("field", ASIF_REQUIRED)
def test_each_required_asif_field_missing(tmp_path, field):
    doc = load(SESSION)
    del doc[field]
    if field == "asif_version":  # the file no longer says what it is: detection and the schema say so
        refused(tmp_path, dumps(doc), "", '"asif_version" is a required property', command="to-continuity")
        return
    refused(tmp_path, dumps(doc), "", f'"{field}" is a required property', command="to-continuity", rule="schema")


@pytest.mark.parametrize(("mutate", "path", "reason"), [
    (lambda d: d["messages"][0].update(sequence="1"), "/messages/0/sequence", '"1" is not of type "integer"'),
    (lambda d: d["messages"][0].update(sequence=1.5), "/messages/0/sequence", '1.5 is not of type "integer"'),
    (lambda d: d["messages"][0].update(role="robot"), "/messages/0/role", '"robot" is not one of'),
    (lambda d: d.update(messages={}), "/messages", 'is not of type "array"'),
    (lambda d: d.update(session=[]), "/session", 'is not of type "object"'),
    (lambda d: d["messages"][0].update(text_content=None), "/messages/0/text_content", "null is not of type"),
    (lambda d: d["events"].append(7), "/events/0", '7 is not of type "object"'),
    (lambda d: d["session"].update(title=True), "/session/title", 'true is not of type "string"'),
    (lambda d: d["messages"][0].update(role=["user"]), "/messages/0/role", 'an array is not of type "string"'),
    (lambda d: d["messages"][0].update(message_id=""), "/messages/0/message_id", '"" should be non-empty'),
    (lambda d: d["messages"][0].update(extra=1, more=None), "/messages/0",
     'additional properties are not allowed ("extra", "more" were unexpected)'),
])
def test_wrong_types(tmp_path, mutate, path, reason):
    """Said in JSON's spelling (true, null, "text"), never Python's (True, None, 'text')."""
    doc = load(CHAT)
    mutate(doc)
    err = refused(tmp_path, dumps(doc), path, reason, rule="schema")
    assert not any(word in err for word in ("True", "None", "'")), err


STREAMED = CORPUS / "asif" / "tool-call-completed.session.json"  # declares asif.streams/0.1 and holds streams


@pytest.mark.parametrize(("mutate", "path", "reason"), [
    (lambda d: d.update(required_features=["other"]), "/required_features", '"asif.streams/0.1" is missing'),
    (lambda d: d["coverage"].pop(), "/coverage", 'an item with "scope": "usage" is missing'),
    (lambda d: d["coverage"].append(d["coverage"][0]), "/coverage",
     'an item with "scope": "participants" appears more than once'),
    (lambda d: d["coverage"].pop(), "/coverage", "an array has fewer than 13 items"),
    (lambda d: d["events"][1]["causes"][0].update(session_id="s"), "/events/1/causes/0",
     '"session_id" requires "capture_id" beside it'),
])
def test_asif_schema_problems_in_words(tmp_path, mutate, path, reason):
    """The array and dependency rules of the ASIF schema name what is missing, in JSON's spelling,
    never the whole array in Python's."""
    doc = load(STREAMED)
    mutate(doc)
    err = refused(tmp_path, dumps(doc), path, reason, command="to-continuity", rule="schema")
    assert not any(word in err for word in ("True", "None", "'")), err


@pytest.mark.parametrize(("value", "said"), [(False, "the format is false, not a format's name"),
                                             ({"a": 1}, "the format is an object, not a format's name"),
                                             ("x" * 100, 'unknown format "xxxxxxxx')])
def test_an_unknown_format_value_is_shown_as_json(tmp_path, value, said):
    refused(tmp_path, dumps({"format": value}), "/format", said, "--to", "asif", command="convert", rule="format")


def test_wrong_types_in_asif(tmp_path):
    doc = load(SESSION)
    doc["events"][1]["sequence"] = "1"
    refused(tmp_path, dumps(doc), "/events/1/sequence", '"1" is not of type "integer"', command="to-continuity")


# -- what JSON allows but a session must not hold ------------------------------------------------


def _duplicate_member(data: bytes, member: bytes) -> bytes:
    assert data.count(member) >= 1
    return data.replace(member, member + b", " + member.rstrip(b","), 1)


@pytest.mark.parametrize(("member", "path"), [
    (b'"format": "agent-continuity-export"', "/format"),
    (b'"role": "user"', "/messages/0/role"),
    (b'"title": "Untitled session"', "/session/title"),
])
def test_duplicate_keys_are_refused(tmp_path, member, path):
    data = (CORPUS / "continuity" / "01-minimal.json").read_bytes()
    if member == b'"role": "user"':
        data = CHAT.read_bytes()
    refused(tmp_path, _duplicate_member(data, member), path, "appears more than once in this object", rule="json")


def test_duplicate_keys_in_free_form_payloads_and_in_asif(tmp_path):
    doc = load(TOOLS)
    doc["events"][0]["payload"] = {"tool": "bash"}
    data = dumps(doc).replace(b'"payload": {"tool": "bash"}', b'"payload": {"tool": "bash", "tool": "sh"}')
    refused(tmp_path, data, "/events/0/payload/tool", "the key 'tool' appears more than once", rule="json")
    data = SESSION.read_bytes().replace(b'"id": "e1",', b'"id": "e1", "id": "e0",', 1)
    refused(tmp_path, data, "/events/0/id", "appears more than once", command="to-continuity", rule="json")


@pytest.mark.parametrize(("pair", "key"), [
    (b'"a": 1, "\\u0061": 2', "a"),  # the same key, spelled with an escape
    (b'"k": 1, "k": "\\u003a"', "k"),  # a dropped member whose ':' an escaped colon would make up for
])
def test_duplicate_keys_hidden_by_escapes(tmp_path, pair, key):
    doc = load(CHAT)
    doc["session"]["metadata"] = {"marker": 0}
    data = dumps(doc).replace(b'"marker": 0', pair)
    refused(tmp_path, data, f"/session/metadata/{key}", "appears more than once", rule="json")


def test_escaped_colons_without_duplicates_convert(tmp_path):
    doc = load(CHAT)
    doc["session"]["metadata"] = {"marker": 0}
    data = dumps(doc).replace(b'"marker": 0', b'"time": "12\\u003a00", "raw": "\\\\u003a"')
    converted(tmp_path, data)


@pytest.mark.parametrize("token", [b"NaN", b"Infinity", b"-Infinity"])
def test_nan_and_infinity(tmp_path, token):
    doc = load(TOOLS)
    doc["events"][0]["payload"] = {"score": 0}
    data = dumps(doc).replace(b'"score": 0', b'"score": ' + token)
    refused(tmp_path, data, "", "NaN, Infinity and +numbers are not JSON", rule="json")


@pytest.mark.parametrize(("value", "where"), [
    (MAX_SAFE_INTEGER + 1, "sequence"), (-(MAX_SAFE_INTEGER + 1), "payload"), (2**64, "payload"),
    (10**400, "payload"),
])
def test_integers_beyond_2_53(tmp_path, value, where):
    doc = load(TOOLS)
    if where == "sequence":
        doc["messages"][1]["sequence"] = value
        path = "/messages/1/sequence"
    else:
        doc["events"][0]["payload"] = {"ts_ns": value}
        path = "/events/0/payload/ts_ns"
    err = refused(tmp_path, dumps(doc), path, "is beyond ±(2^53 − 1)", rule="json")
    assert "silently round" in err


def test_integers_with_more_digits_than_python_converts(tmp_path):
    doc = load(TOOLS)
    doc["events"][0]["payload"] = {"n": 0}
    data = dumps(doc).replace(b'"n": 0', b'"n": ' + b"9" * 5000)
    refused(tmp_path, data, "/events/0/payload/n", "the integer of more than 4300 digits", rule="json")


@pytest.mark.parametrize(("literal", "shown"), [
    (b"1e999", "1e999"), (b"-1.5E+400", "-1.5E+400"), (b"1" + b"0" * 400 + b".5", "10000000000000000000…00000000.5"),
])
def test_numbers_beyond_a_double_are_refused_with_their_path(tmp_path, literal, shown):
    """JSON's grammar allows them; no double holds them (msgspec refuses, Python reads inf)."""
    doc = load(TOOLS)
    doc["events"][0]["payload"] = {"text": "1e999", "x": [0.5, 0]}  # the same text in a string is no number
    data = dumps(doc).replace(b"[0.5, 0]", b"[0.5, " + literal + b"]")
    err = refused(tmp_path, data, "/events/0/payload/x/1", f"the number {shown} is beyond the range of a double",
                  rule="json")
    assert "write it as a string" in err


@pytest.mark.parametrize(("literal", "shown"), [
    (b"1e-400", "1e-400"), (b"-2.4E-324", "-2.4E-324"), (b"0." + b"0" * 400 + b"1", "0.000000000000000000…0000000001"),
    (b"0.001e-322", "0.001e-322"),
])
def test_numbers_too_small_for_a_double_are_refused_with_their_path(tmp_path, literal, shown):
    """Not 0, yet every double reader takes them for 0 (they were written as 0.0, silently)."""
    doc = load(TOOLS)
    doc["events"][0]["payload"] = {"text": "1e-400", "x": [0.5, 0]}
    data = dumps(doc).replace(b"[0.5, 0]", b"[0.5, " + literal + b"]")
    err = refused(tmp_path, data, "/events/0/payload/x/1", f"the number {shown} is too small for a double",
                  rule="json")
    assert "would silently read it as 0" in err


@pytest.mark.parametrize("literal", [b"0.0", b"-0.0", b"0e-500", b"0.000E-999", b"5e-324", b"1e-320", b"1e-300"])
def test_zero_and_the_smallest_doubles_are_fine(tmp_path, literal):
    doc = load(TOOLS)
    doc["events"][0]["payload"] = {"x": 0}
    output, _ = converted(tmp_path, dumps(doc).replace(b'"x": 0', b'"x": ' + literal))
    back = convert(json.dumps(output).encode(), to="continuity").document["events"][0]["payload"]["x"]
    assert (back, math.copysign(1, back)) == (float(literal), math.copysign(1, float(literal)))


def test_the_largest_double_is_fine(tmp_path):
    doc = load(TOOLS)
    doc["events"][0]["payload"] = {"x": 0}
    output, _ = converted(tmp_path, dumps(doc).replace(b'"x": 0', b'"x": 1.7976931348623157e308'))
    assert b"1.7976931348623157e308" in dumps(output).replace(b"e+", b"e")


def test_2_53_minus_1_is_fine(tmp_path):
    doc = load(TOOLS)
    doc["events"][0]["payload"] = {"max": MAX_SAFE_INTEGER, "min": -MAX_SAFE_INTEGER, "big_float": 1e300}
    output, _ = converted(tmp_path, doc)
    assert dumps(output).count(str(MAX_SAFE_INTEGER).encode()) >= 2


def test_floats_where_integers_belong(tmp_path):
    """An integral float (1.0, 2e0) is an integer to JSON Schema: accepted, and kept as written."""
    doc = load(CHAT)
    doc["messages"][0]["sequence"] = 1.0
    output, _ = converted(tmp_path, doc)
    assert 1.0 in [e.get("extensions", {}).get("agent-continuity/1", {}).get("sequence") for e in output["events"]]
    back = convert(dumps(output), to="continuity")
    assert json.loads(back.output)["messages"][0]["sequence"] == 1.0
    doc["messages"][0]["sequence"] = 1.5
    refused(tmp_path, dumps(doc), "/messages/0/sequence", '1.5 is not of type "integer"', rule="schema")


def test_a_first_line_nested_deeper_than_a_decoder_recurses(tmp_path):
    """Several lines, the first nested thousands deep: an internal error (exit 3), it is refused."""
    src = tmp_path / "deep.jsonl"
    src.write_bytes(b"[" * 5000 + b"]" * 5000 + b'\n{"type": "user"}\n')
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent / "src")}  # (a stack of its own)
    run = subprocess.run([sys.executable, "-m", "asif_convert", "convert", str(src), "--to", "asif", "-o",
                          str(tmp_path / "out.json")], capture_output=True, env=env)
    assert run.returncode == 1 and b"nested more than 256 levels" in run.stderr, run.stderr[-500:]
    assert not (tmp_path / "out.json").exists()


def _at_depth(frames: int, call):
    """``call()`` made ``frames`` Python frames deeper (a library caller's own stack)."""
    return call() if frames == 0 else _at_depth(frames - 1, call)


@pytest.mark.parametrize("frames", [0, 15, 40])
def test_a_line_nested_about_as_deep_as_the_encoder_goes_is_refused_never_a_crash(frames):
    """An outside sweep: a line nested about 977 deep decoded, then overflowed the encoder that
    makes the digest (RecursionError, exit 3), depending on the caller's stack."""
    head = b'{"timestamp":"t","type":"session_meta","payload":{"id":"s"}}\n'
    for depth in range(940, 1001, 3):
        data = head + b'{"v":' + b"[" * depth + b"]" * depth + b"}\n"
        with pytest.raises(InvalidInput):
            _at_depth(frames, lambda data=data: convert(data, to="asif"))


# -- encodings -----------------------------------------------------------------------------------


def test_invalid_utf8(tmp_path):
    data = CHAT.read_bytes()
    at = data.index(b"Untitled") if b"Untitled" in data else data.index(b'"title": "') + 10
    bad = data[:at] + b"\xff\xfe" + data[at:]
    line = data.count(b"\n", 0, at) + 1
    refused(tmp_path, bad, "", f"not valid UTF-8 (line {line}, column ", rule="json")
    refused(tmp_path, b'{"a": "\xed\xa0\x80"}', "", "not valid UTF-8", rule="json")  # an encoded surrogate
    refused(tmp_path, b'{"a": "\xc0\xaf"}', "", "not valid UTF-8", rule="json")  # an overlong '/'
    refused(tmp_path, b'{"a": "\\udc00x"}', "", "invalid utf-16 surrogate pair", rule="json")
    # a lone high surrogate: msgspec says "truncated", but the file does not end there
    said = refused(tmp_path, b'{"a": "x\\ud800"}\n', "",
                   "not valid JSON (line 1, column 9, byte 8): invalid utf-16 surrogate pair", rule="json")
    assert "truncated" not in said
    refused(tmp_path, b'{\xff: 1}', "", "not valid JSON (line 1, column 2", rule="json")


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le"])
def test_utf16_and_utf32(tmp_path, encoding):
    data = CHAT.read_text(encoding="utf-8").encode(encoding)
    refused(tmp_path, data, "", "the file is UTF-16 or UTF-32", rule="json")


def test_utf8_bom(tmp_path):
    refused(tmp_path, b"\xef\xbb\xbf" + CHAT.read_bytes(), "", "byte-order mark", rule="json")


# -- resource limits -----------------------------------------------------------------------------


def test_nesting_100000_levels(tmp_path):
    started = time.monotonic()
    refused(tmp_path, b"[" * 100_000 + b"]" * 100_000, "/0" * 256, "nested more than 256 levels deep",
            rule="limit")
    refused(tmp_path, b'{"a":' * 100_000 + b"1" + b"}" * 100_000, "/a" * 256, "nested more than 256 levels",
            rule="limit")
    assert time.monotonic() - started < 30


def test_nesting_inside_a_session(tmp_path):
    doc = load(CHAT)
    doc["messages"][0]["content_json"] = json.loads("[" * 300 + "]" * 300)
    # root object (1) > messages (2) > message (3) > content_json arrays from level 4
    refused(tmp_path, dumps(doc), "/messages/0/content_json" + "/0" * 253, "nested more than 256 levels",
            rule="limit")
    refused(tmp_path, dumps(doc), "/messages/0/content_json" + "/0" * 7, "nested more than 10 levels",
            "--max-depth", "10", rule="limit")
    # 256 in all: within the limit as input, but its ASIF form holds the content three levels
    # deeper, which could not be read back with the same limit: refused, naming the output path
    doc["messages"][0]["content_json"] = json.loads("[" * 253 + "]" * 253)
    refused(tmp_path, dumps(doc), "/events/0/data/parts/1/value" + "/0" * 250,
            "in the output: arrays and objects are nested more than 256 levels deep here (--max-depth 256), so it "
            "could not be read back with the same limits; --max-depth 259 converts this input and reads its output "
            "back", rule="limit")
    doc["messages"][0]["content_json"] = json.loads("[" * 250 + "]" * 250)  # 253 in all: 256 once converted
    converted(tmp_path, doc)


def test_output_limits_hold_without_output_validation(tmp_path):
    """--no-validate encodes the events a slice at a time instead of building the whole output:
    the limits still bind each event, named by its path in the whole document."""
    doc = load(CHAT)
    doc["messages"][0]["content_json"] = json.loads("[" * 253 + "]" * 253)
    refused(tmp_path, dumps(doc), "/events/0/data/parts/1/value" + "/0" * 250,
            "in the output: arrays and objects are nested more than 256 levels deep here (--max-depth 256), so it "
            "could not be read back with the same limits; --max-depth 259 converts this input and reads its output "
            "back", "--no-validate",
            rule="limit")
    doc["messages"][0]["content_json"] = json.loads("[" * 250 + "]" * 250)
    converted(tmp_path, doc, "from-continuity", "--no-validate")


@pytest.mark.parametrize("flags", [[], ["--no-validate"]], ids=["validated", "streamed"])
def test_of_several_places_over_the_limits_the_first_in_the_output_is_named(tmp_path, flags):
    """The events are checked a slice at a time, the rest of the document before them; still,
    as for a whole document, the place named is the first in the output's order: an event
    before a branch, the session before an event."""
    doc = load(CORPUS / "continuity" / "14-mixed-everything.json")

    def nested(levels: int) -> list:
        return json.loads("[" * levels + "1" + "]" * levels)

    doc["branches"][0]["metadata"]["k"] = nested(16)
    doc["events"][0]["payload"]["k"] = nested(15)
    stderr = refused(tmp_path, dumps(doc), "/events/1/data/value/payload/k" + "/0" * 14,
                     "in the output: arrays and objects are nested more than 20 levels", "--max-depth", "20", *flags)
    assert "/branches/" not in stderr
    doc["session"]["metadata"] = {"k": nested(17)}
    stderr = refused(tmp_path, dumps(doc), "/session/agent-continuity~11/metadata/k" + "/0" * 16,
                     "in the output: arrays and objects are nested more than 20 levels", "--max-depth", "20", *flags)
    assert "/events/" not in stderr


def test_what_asif_convert_writes_reads_back_with_the_same_limits(tmp_path):
    """Every command that reads documents takes the limits, and reads back what a conversion
    under those limits wrote."""
    doc = load(CHAT)
    doc["messages"][0]["content_json"] = json.loads("[" * 250 + "]" * 250)
    src, asif, back = tmp_path / "in.json", tmp_path / "s.asif.json", tmp_path / "back.json"
    src.write_bytes(dumps(doc))
    for flags in ([], ["--max-depth", "300"]):
        assert invoke("from-continuity", src, "-o", asif, *flags).exit_code == 0
        for command in (["validate", asif], ["inspect", asif], ["diff", asif, asif],
                        ["to-continuity", asif, "-o", back]):
            res = invoke(*command, *flags)
            assert res.exit_code == 0, (command, res.stdout + res.stderr)
        assert invoke("diff", src, back, *flags).exit_code == 0
    for command in (["validate", asif], ["inspect", asif], ["diff", asif, asif]):
        res = invoke(*command, "--max-depth", "10")  # the same options, and they bind
        assert res.exit_code == 1 and "nested more than 10 levels" in res.stdout + res.stderr, command


def test_nesting_deeper_than_the_decoder_allows_with_a_bigger_limit(tmp_path):
    data = b"[" * 5_000 + b"]" * 5_000
    refused(tmp_path, data, "/0" * DEPTH_CEILING, f"nested more than {DEPTH_CEILING} levels",
            "--max-depth", str(DEPTH_CEILING), rule="limit")


@pytest.mark.parametrize("command", ["from-continuity", "to-continuity"])
def test_nesting_at_the_ceiling_converts(tmp_path, command):
    """asif-convert's own recursion is safe at the deepest nesting --max-depth accepts."""
    deep: object = 1
    if command == "from-continuity":
        doc = load(CHAT)
        for _ in range(DEPTH_CEILING - 6):  # content_json starts at level 4, and at level 7 in the output
            deep = [deep]
        doc["messages"][0]["content_json"] = deep
    else:
        doc = load(SESSION)
        for _ in range(DEPTH_CEILING - 6):  # a structured part value starts at level 7
            deep = [deep]
        doc["events"][0]["data"]["parts"].append({"kind": "structured", "schema": "x-deep", "value": deep})
    output, _ = converted(tmp_path, doc, command, "--max-depth", str(DEPTH_CEILING))
    back = tmp_path / "back.json"
    res = invoke("to-continuity" if command == "from-continuity" else "from-continuity", tmp_path / "result.json",
                 "-o", back, "--max-depth", str(DEPTH_CEILING))
    assert res.exit_code == 0, res.stderr


def test_long_string(tmp_path):
    """The '1 GB string', scaled down: the string limit names the path; no work is done on it."""
    doc = load(CHAT)
    doc["messages"][1]["text_content"] = "A" * 5_000
    refused(tmp_path, dumps(doc), "/messages/1/text_content", "a string of 5,000 characters, more than the limit "
            "of 1,000 (--max-string)", "--max-string", "1000", rule="limit")
    doc["messages"][1]["text_content"] = "short"
    doc["session"]["metadata"] = {"k" * 2_000: 1}
    refused(tmp_path, dumps(doc), "/session/metadata", "has a key of 2,000 characters", "--max-string", "1K",
            rule="limit")


def test_long_string_of_escapes(tmp_path):
    doc = load(CHAT)
    doc["messages"][1]["text_content"] = '"\\' * 1_000  # 2,000 characters, 4,000 bytes of escapes
    refused(tmp_path, dumps(doc), "/messages/1/text_content", "a string of 2,000 characters", "--max-string", "1999")
    converted(tmp_path, dumps(doc), "from-continuity", "--max-string", "2000")


# Strings mostly of one-byte characters (so a string can be long in characters and still short in
# bytes), with what makes quotes hard to find: quotes, backslashes, multi-byte characters.
_tricky_text = st.text(st.sampled_from('aaaaaaab"\\\u00e9\U0001f600'), max_size=60)
_tricky_json = st.recursive(st.one_of(_tricky_text, st.integers(0, 9)), lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(_tricky_text, inner, max_size=3)), max_leaves=10)


def _longest(value) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return max([0, *map(len, value), *map(_longest, value.values())])
    return max([0, *map(_longest, value)]) if isinstance(value, list) else 0


@settings(max_examples=500)
@given(_tricky_json, st.integers(1, 40), st.booleans())
@example("a" * 11, 10, True)  # longer than the limit, shorter than two blocks
@example(['\\"' * 8], 10, True)  # escaped quotes and backslashes only
def test_a_text_said_to_hold_no_long_string_holds_none(value, limit, ascii_only):
    """The string check is skipped only when the text's unescaped quotes prove every string short."""
    data = json.dumps(value, ensure_ascii=ascii_only).encode()  # escapes as other writers make them
    if not _limits.may_hold_long_strings(data, limit):
        assert _longest(value) <= limit


def test_short_strings_are_told_from_the_quotes_alone():
    assert not _limits.may_hold_long_strings(json.dumps(["a" * 10] * 100).encode(), 24)
    assert _limits.may_hold_long_strings(json.dumps(["a" * 10, "b" * 50]).encode(), 24)
    assert _limits.may_hold_long_strings(json.dumps(['\\"' * 20]).encode(), 24)  # escaped quotes do not count


# Values near the integer limit (16 and 17 digits on either side of it), digits and brackets in
# strings, and nesting: what the bytes-level proof of an output slice must not be fooled by.
_near_limit = st.one_of(st.integers(-(2**63), 2**63 - 1), st.sampled_from(
    [2**53 - 1, 2**53, -(2**53 - 1), -(2**53), 10**15, 10**16, 999_999_999_999_999_9]))
_deep_json = st.recursive(
    st.one_of(_near_limit, st.floats(allow_nan=False, allow_infinity=False), st.text("0123456789[{:,-", max_size=20)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text("0[{:", max_size=3), inner,
                                                                          max_size=2)), max_leaves=12)


@settings(max_examples=500)
@given(st.lists(_deep_json, min_size=1, max_size=4), st.integers(2, 7))
@example([2**53], 8)  # beyond the limit by one
@example([[[[1]]]], 5)  # item nested 4 deep: the list, "events" and the root make 6 > 5
def test_an_output_slice_proved_within_limits_from_its_bytes_is(items, max_depth):
    """An output slice's values are walked only when its bytes cannot prove it within the depth
    and integer limits: what they prove, the walk finds too."""
    limits = _limits.Limits(max_depth=max_depth)
    encoded = [msgspec.json.encode(item) for item in items]
    data = msgspec.json.encode(items)
    assert data == b"[" + b",".join(encoded) + b"]"
    if _limits._within_limits(data, encoded, max_depth - 2):  # the slice of a list one level below the root
        assert _limits._walk(items, limits, False, 1) is None


def test_an_output_slice_is_walked_when_its_bytes_cannot_prove_it_within_limits():
    within = _limits._within_limits
    one = msgspec.json.encode
    assert within(one([999_999_999_999_999]), [one(999_999_999_999_999)], 5)  # 15 digits: within
    assert not within(one([9007199254740992]), [one(9007199254740992)], 5)
    assert not within(one([9007199254740991]), [one(9007199254740991)], 5)  # 2^53 - 1: allowed, but 16 digits
    assert not within(one([{"n": -9007199254740992}]), [one({"n": -9007199254740992})], 5)
    assert within(one(["9007199254740992"]), [one("9007199254740992")], 5)  # a string: no number after a quote
    assert within(one([[[1]]]), [one([[1]])], 2) and not within(one([[[1]]]), [one([[1]])], 1)
    # Brackets in strings count as levels: a walk, not a wrong answer.
    assert not within(one(["[[["]), [one("[[[")], 2)


def test_max_bytes_is_checked_before_reading(tmp_path):
    """A 1 GiB file (sparse: it costs no disk) is refused from its size, without reading it."""
    big = tmp_path / "input.json"
    with big.open("wb") as fh:
        fh.write(b'{"format": "agent-continuity-export", "session": {"title": "')
        fh.truncate(1 << 30)
    out = tmp_path / "out.json"
    started = time.monotonic()
    res = invoke("from-continuity", big, "-o", out)
    assert time.monotonic() - started < 5
    assert res.exit_code == 1
    assert f"error: {big}: invalid input" in res.stderr
    assert "the input is 1,073,741,824 bytes, more than the limit of 536,870,912 (--max-bytes) [limit]" in res.stderr
    assert not out.exists()


def test_max_bytes_flag(tmp_path):
    data = CHAT.read_bytes()
    refused(tmp_path, data, "", f"the input is {len(data):,} bytes, more than the limit of 1,024", "--max-bytes",
            "1K", rule="limit")
    _, stderr = converted(tmp_path, data, "from-continuity", "--max-bytes", str(len(data)))
    # an ASIF session is larger than its export: written, with a note on reading it back
    assert f"note: the output is {(tmp_path / 'result.json').stat().st_size:,} bytes, more than --max-bytes" in stderr


def test_max_bytes_on_stdin():
    data = CHAT.read_bytes()
    res = invoke("from-continuity", "-", "-o", "-", "--max-bytes", "100", input=data)
    assert res.exit_code == 1
    assert "error: <stdin>: invalid input" in res.stderr and "more than the limit of 100" in res.stderr
    assert res.stdout == ""


def test_a_device_as_input_is_refused_at_once(tmp_path):
    if not Path("/dev/zero").exists():
        pytest.skip("no /dev/zero")
    started = time.monotonic()
    res = invoke("from-continuity", "/dev/zero", "-o", tmp_path / "o.json")
    assert time.monotonic() - started < 5  # reading stopped after the first chunk: NULs cannot start JSON
    assert res.exit_code == 1 and "error: /dev/zero: invalid input" in res.stderr
    assert "not valid JSON (line 1, column 1, byte 0)" in res.stderr
    assert not (tmp_path / "o.json").exists()


@pytest.mark.parametrize(("flag", "value"), [("--max-bytes", "0"), ("--max-bytes", "lots"), ("--max-string", "-5"),
                                             ("--max-depth", "0"), ("--max-depth", str(DEPTH_CEILING + 1))])
def test_bad_limit_values_are_usage_errors(tmp_path, flag, value):
    res = invoke("from-continuity", CHAT, "-o", tmp_path / "o.json", flag, value)
    assert res.exit_code == 2
    assert flag in res.stderr
    assert not (tmp_path / "o.json").exists()


def test_limits_in_the_library():
    assert Limits() == Limits(max_bytes=512 << 20, max_depth=256, max_string=64 << 20)
    for bad in ({"max_depth": 0}, {"max_depth": DEPTH_CEILING + 1}, {"max_bytes": -1}, {"max_string": True}):
        with pytest.raises(ValueError):
            Limits(**bad)
    assert [parse_size(s) for s in ("10", "1k", "2M", "3G", "64MiB", "5kb")] == [10, 1 << 10, 2 << 20, 3 << 30,
                                                                                   64 << 20, 5 << 10]
    with pytest.raises(ValueError):
        parse_size("1.5G")
    with pytest.raises(InvalidInput) as exc:
        convert(CHAT.read_bytes(), to="asif", limits=Limits(max_bytes=10))
    assert exc.value.problems[0].rule == "limit"


# -- referential problems: converted with a named loss, refused under --strict ---------------------


def test_dangling_references(tmp_path):
    doc = load(CORPUS / "continuity" / "08-checkpoints.json")
    doc["messages"][0]["branch_id"] = "no-such-branch"
    doc["checkpoints"][0]["parent_event_id"] = "no-such-event"
    output, err = converted(tmp_path, doc)
    assert "warning: /messages/0/branch_id" in err and "[CONT-BRANCH]" in err
    assert "warning: /checkpoints/0/parent_event_id" in err
    assert any({"type": "branch", "id": "no-such-branch"} in loss.get("references", []) for loss in output["losses"])
    refused(tmp_path, dumps(doc), "/messages/0/branch_id", "names no branch in branches", "--strict",
            rule="CONT-BRANCH")


def test_dangling_references_in_asif(tmp_path):
    doc = load(SESSION)
    doc["events"][1]["actor_id"] = "ghost"
    _, err = converted(tmp_path, doc, "to-continuity")
    assert "warning: /events/1/actor_id" in err
    refused(tmp_path, dumps(doc), "/events/1/actor_id", "names actor 'ghost'", "--strict", command="to-continuity")


def test_duplicate_ids(tmp_path):
    doc = load(CHAT)
    doc["messages"][1]["message_id"] = doc["messages"][0]["message_id"]
    output, err = converted(tmp_path, doc)
    assert "[CONT-DUPLICATE]" in err
    assert len({e["id"] for e in output["events"]}) == len(output["events"])  # ids made unique, and reported
    assert any(loss["kind"] == "identity_change" for loss in output["losses"])
    refused(tmp_path, dumps(doc), "/messages/1/message_id", "is used twice in messages", "--strict",
            rule="CONT-DUPLICATE")


def test_duplicate_ids_in_asif(tmp_path):
    doc = load(SESSION)
    doc["resources"][1]["id"] = doc["resources"][0]["id"]
    refused(tmp_path, dumps(doc), "/resources/1/id", "already used", "--strict", command="to-continuity")


# -- paths inside documents: data, never opened ----------------------------------------------------

HOSTILE_PATHS = ["/etc/passwd", "../../../../etc/shadow", "reports\\..\\..\\secret.txt", "out/\u0000evil",
                 "/dev/zero", "/dev/stdin", "CON", "C:\\Windows\\win.ini", "//server/share/x", "\u202egnp.exe"]


def test_hostile_artifact_paths_are_kept_as_text(tmp_path):
    doc = load(ARTIFACTS)
    for art, path in zip(doc["artifacts"], HOSTILE_PATHS, strict=False):
        art["path"] = path
    output, _ = converted(tmp_path, doc)
    kept = [r["original_location"] for r in output["resources"] if r["purpose"] == "artifact"]
    assert kept == HOSTILE_PATHS[: len(doc["artifacts"])]
    assert all(r["availability"] == "unavailable" for r in output["resources"] if r["purpose"] == "artifact")
    back = json.loads(convert(dumps(output), to="continuity").output)
    assert [a["path"] for a in back["artifacts"]] == kept


@pytest.mark.parametrize("path", ["/etc/passwd", "../outside.csv", "assets\\totals.csv", "assets/\u0000.csv",
                                  "/dev/zero", "CON", "assets/./totals.csv", "assets//totals.csv"])
def test_hostile_asif_resource_paths(tmp_path, path):
    doc = load(SESSION)
    doc["resources"][1]["path"] = path
    _, err = converted(tmp_path, doc, "to-continuity")
    assert "warning: /resources/1/path" in err and "[ASIF-R076]" in err
    refused(tmp_path, dumps(doc), "/resources/1/path", "resource 'output-csv' path", "--strict",
            command="to-continuity", rule="ASIF-R076")


_AUDIT = textwrap.dedent("""
    import json, sys
    from asif_convert import convert
    from asif_convert._cli.app import app
    from pathlib import Path

    corpus = Path(sys.argv[1])
    warm = convert((corpus / "continuity" / "14-mixed-everything.json").read_bytes(), to="asif")
    convert(warm.output, to="continuity")
    convert((corpus / "asif" / "tool-generated-files.session.json").read_bytes(), to="continuity")
    try:  # the command line imports some of its machinery lazily: load it before recording
        app(["from-continuity", str(corpus / "continuity" / "02-plain-chat.json"), "-o", "-", "--on-loss",
             "ignore"], prog_name="asif-convert")
    except SystemExit:
        pass
    events, recording = [], [True]

    def hook(event, args):
        if not recording[0]:
            return
        if event == "open":
            events.append([event, str(args[0]), str(args[1])])
        elif event.startswith(("socket.", "os.", "shutil.", "subprocess.", "urllib.", "http.", "ftplib.",
                               "smtplib.", "webbrowser.")) or event in ("import", "exec", "compile"):
            events.append([event, *[str(a)[:200] for a in args[:2]]])

    sys.addaudithook(hook)
    try:
        app(sys.argv[3:], prog_name="asif-convert")
    except SystemExit as exc:
        code = exc.code
    recording[0] = False
    code_dirs = sorted({sys.prefix, sys.base_prefix, str(Path(__import__("asif_convert").__file__).parent)})
    Path(sys.argv[2]).write_text(json.dumps({"code": code, "events": events, "code_dirs": code_dirs}))
""")


def _audited(tmp_path: Path, args: list[str]) -> tuple[int, list[list[str]]]:
    script = tmp_path / "audit.py"
    script.write_text(_AUDIT)
    result = tmp_path / "audit.json"
    proc = subprocess.run([sys.executable, str(script), str(CORPUS), str(result), *args], capture_output=True,
                          timeout=120, text=True)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(result.read_text())
    # Python's own imports (modules the command line loads lazily) are code, not data: set aside
    code = [Path(d) for d in report["code_dirs"]]
    events = [e for e in report["events"] if e[0] not in ("import", "compile", "exec") and not (
        e[0] == "open" and Path(e[1]).suffix in (".py", ".pyc", ".so", ".pth")
        and any(Path(e[1]).is_relative_to(d) for d in code))]
    return report["code"], events


def _hostile_targets(tmp_path: Path) -> dict[str, Path]:
    targets = tmp_path / "targets"
    targets.mkdir()
    secret = targets / "secret.txt"
    secret.write_text("never read")
    fifo = targets / "fifo"
    os.mkfifo(fifo)  # opening it for reading would block: the test would time out
    link = targets / "link"
    link.symlink_to("/etc/passwd")
    return {"secret": secret, "fifo": fifo, "link": link}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_paths_in_a_continuity_export_are_never_opened(tmp_path):
    """Audit hooks see every open(), os.* and socket call: conversion opens the input and its
    output (a temp file, then a rename) and nothing else; no network, no listing, no links."""
    t = _hostile_targets(tmp_path)
    doc = load(ARTIFACTS)
    paths = [str(t["secret"]), str(t["fifo"]), str(t["link"]), "/dev/zero", "../targets/secret.txt",
             str(t["secret"]).replace("/", "\\"), "/etc/passwd"]
    for art, path in zip(doc["artifacts"], paths, strict=True):
        art["path"] = path
    src = tmp_path / "in" / "export.json"
    src.parent.mkdir()
    src.write_text(json.dumps(doc))
    out = tmp_path / "out" / "session.json"
    out.parent.mkdir()
    code, events = _audited(tmp_path, ["from-continuity", str(src), "-o", str(out)])
    assert code == 0 and out.exists()
    _only_named_files(events, src, out)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_paths_in_an_asif_session_are_never_opened(tmp_path):
    t = _hostile_targets(tmp_path)
    doc = load(SESSION)
    doc["resources"][1]["path"] = "../targets/secret.txt"
    doc["resources"][2]["path"] = "link"
    doc["resources"][0]["original_location"] = str(t["fifo"])
    src = tmp_path / "targets" / "session.json"  # beside the files it names
    src.write_text(json.dumps(doc))
    out = tmp_path / "out" / "export.json"
    out.parent.mkdir()
    code, events = _audited(tmp_path, ["to-continuity", str(src), "-o", str(out), "--report",
                                       str(tmp_path / "out" / "report.json")])
    assert code == 0 and out.exists()
    _only_named_files(events, src, out, tmp_path / "out" / "report.json")


def _only_named_files(events: list[list[str]], src: Path, *outputs: Path) -> None:
    opened = {Path(e[1]) for e in events if e[0] == "open" and not e[1].isdigit()}  # (os.fdopen: a descriptor)
    temps = {p for p in opened if p.parent in {o.parent for o in outputs} and p.name.endswith(".tmp")}
    assert opened - temps == {src}, events  # the input, and the outputs' temp files
    assert {p.name.split(".")[1] for p in temps} == {o.name.split(".")[0] for o in outputs}
    others = [e for e in events if e[0] not in ("open", "os.putenv", "os.unsetenv")]  # typer sets an env var
    renames = [e for e in others if e[0] == "os.rename"]
    assert len(renames) == len(outputs) and {Path(e[2]) for e in renames} == set(outputs), others
    assert all(e[0] in ("os.rename", "os.chmod", "os.remove") for e in others), others
    assert not any(e[0].startswith("socket.") for e in events)


# -- output safety ---------------------------------------------------------------------------------


def test_output_onto_the_input_is_refused(tmp_path):
    src = tmp_path / "export.json"
    src.write_bytes(CHAT.read_bytes())
    before = digest(src)
    link = tmp_path / "link.json"
    link.symlink_to(src)
    hard = tmp_path / "hard.json"
    os.link(src, hard)
    for target in (src, link, hard, tmp_path / "." / "export.json"):
        res = invoke("from-continuity", src, "-o", target)
        assert res.exit_code == 2, res.stderr
        assert "asif-convert never writes over its input" in res.stderr
        assert digest(src) == before
    res = invoke("from-continuity", src, "-o", tmp_path / "o.json", "--report", src)
    assert res.exit_code == 2 and digest(src) == before
    res = invoke("from-continuity", src, "-o", tmp_path / "o.json", "--report", tmp_path / "o.json")
    assert res.exit_code == 2 and not (tmp_path / "o.json").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export.json", "hard.json", "link.json"]


def test_an_output_symlink_is_replaced_not_followed(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    out = tmp_path / "out.json"
    out.symlink_to(victim)
    res = invoke("from-continuity", CHAT, "-o", out)
    assert res.exit_code == 0, res.stderr
    assert victim.read_text() == "keep me"
    assert not out.is_symlink() and json.loads(out.read_bytes())["asif_version"] == "0.4"


def test_an_output_through_a_symlinked_folder_goes_where_the_link_points(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "via").symlink_to(real, target_is_directory=True)
    res = invoke("from-continuity", CHAT, "-o", tmp_path / "via" / "s.json")
    assert res.exit_code == 0, res.stderr
    assert [p.name for p in real.iterdir()] == ["s.json"]  # and no temp file left


@pytest.mark.parametrize("where", ["missing-folder/out.json", "a-folder"])
def test_an_unwritable_output_exits_1_without_a_traceback(tmp_path, where):
    (tmp_path / "a-folder").mkdir()
    res = invoke("from-continuity", CHAT, "-o", tmp_path / where)
    assert res.exit_code == 1, res.stderr
    assert f"cannot write {tmp_path / where}" in res.stderr and "nothing was written" in res.stderr
    assert list((tmp_path / "a-folder").iterdir()) == []


def test_input_is_a_folder(tmp_path):
    res = invoke("from-continuity", tmp_path, "-o", tmp_path / "o.json")
    assert res.exit_code == 1 and "cannot read: Is a directory" in res.stderr


# -- exit codes through stdin and stdout -------------------------------------------------------------


def test_stdin_stdout_exit_codes(monkeypatch):
    ok = invoke("from-continuity", "-", "-o", "-", input=CHAT.read_bytes())
    assert ok.exit_code == 0 and json.loads(ok.stdout)["asif_version"] == "0.4"
    back = invoke("to-continuity", "-", input=ok.stdout.encode())
    assert back.exit_code == 0 and json.loads(back.stdout)["format"] == "agent-continuity-export"

    bad = invoke("from-continuity", "-", input=b"[" * 1000)
    assert bad.exit_code == 1 and "error: <stdin>: invalid input" in bad.stderr and bad.stdout == ""
    dup = invoke("convert", "-", "--to", "continuity", input=b'{"asif_version": "0.4", "asif_version": "0.4"}')
    assert dup.exit_code == 1 and "/asif_version: the key 'asif_version' appears more than once" in dup.stderr

    usage = invoke("from-continuity", "-", "--max-depth", "nope", input=CHAT.read_bytes())
    assert usage.exit_code == 2 and usage.stdout == ""

    policy = invoke("from-continuity", "-", "--on-loss", "error", input=CHAT.read_bytes())
    assert policy.exit_code == 4 and policy.stdout == ""

    from asif_convert._formats.asif import AsifFormat

    monkeypatch.setattr(AsifFormat, "write_streamed",
                            lambda self, doc, ctx: ({"asif_version": "0.4", "events": []}, "events", iter(())))
    internal = invoke("from-continuity", "-", input=CHAT.read_bytes())
    assert internal.exit_code == 3 and internal.stdout == ""


def test_library_refuses_every_catalogue_entry_with_invalid_input():
    for data in (b"", b"[", b"[1]", b"\xef\xbb\xbf{}", b'{"a": NaN}', b'{"a": 1, "a": 2}', b"[" * 10_000,
                 b'{"n": 9007199254740992}', "{}".encode("utf-16"), b'{"s": "\xff"}'):
        for target in ("asif", "continuity"):
            with pytest.raises(InvalidInput) as exc:
                convert(data, to=target, name="x.json")
            assert exc.value.problems and str(exc.value).startswith("x.json: ")


def test_original_documents_are_not_changed_by_conversion():
    """convert() never mutates what it was given (bytes are immutable; the decoded value is ours)."""
    doc = load(TOOLS)
    snapshot = copy.deepcopy(doc)
    convert(dumps(doc), to="asif")
    assert doc == snapshot


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize(("make", "reason"), [
    (lambda p: os.mkfifo(p), "is not a regular file"),
    (lambda p: p.symlink_to("/etc/passwd"), "goes through a symbolic link"),
    (lambda p: p.symlink_to("/dev/zero"), "goes through a symbolic link"),
    (lambda p: p.mkdir(), "is not a regular file"),
])
def test_validate_base_dir_reads_only_regular_files_inside_it(tmp_path, make, reason):
    """``validate --base-dir`` is the one place a path inside a document is opened: only a
    regular file under the named folder, reached without links (each step opened relative to the
    last, with O_NOFOLLOW), is read."""
    doc = load(SESSION)
    (tmp_path / "assets").mkdir()
    make(tmp_path / "assets" / "totals.csv")
    src = tmp_path / "session.json"
    src.write_text(json.dumps(doc))
    started = time.monotonic()
    res = invoke("validate", src, "--base-dir", tmp_path)
    assert time.monotonic() - started < 30
    assert res.exit_code == 1
    assert f"resource 'output-csv' path 'assets/totals.csv' {reason}" in res.stdout


# -- found by fuzzing (fuzz/ and tests/test_fuzz.py): each was an exit 3 before its fix ----------------


def test_two_results_for_one_call_in_one_message(tmp_path):
    """The second tool_result stays in a message (a reported loss): ASIF allows one terminal result."""
    doc = load(TOOLS)
    doc["messages"][2]["content_json"].append(doc["messages"][2]["content_json"][0])
    output, _ = converted(tmp_path, doc)
    assert any(loss["kind"] == "dialect_not_applied" for loss in output["losses"])


@pytest.mark.parametrize("block_type", [{"type": "text"}, ["text"]])
def test_a_content_block_whose_type_is_not_a_string(tmp_path, block_type):
    doc = load(TOOLS)
    doc["messages"][1]["content_json"][0]["type"] = block_type
    converted(tmp_path, doc)


def test_an_openai_tool_call_that_is_not_an_object(tmp_path):
    doc = load(CORPUS / "continuity" / "04-openai-tools.json")
    message = next(m for m in doc["messages"] if isinstance(m.get("content_json"), dict)
                   and m["content_json"].get("tool_calls"))
    message["content_json"]["tool_calls"].insert(0, ["call_x", "function", {"name": "f", "arguments": "{}"}])
    converted(tmp_path, doc)


def test_asif_to_asif_with_rule_violations_is_refused_not_an_internal_error(tmp_path):
    doc = load(SESSION)
    doc["branches"][0]["id"] = "renamed"  # checkpoints, contexts and events still name the old id
    refused(tmp_path, dumps(doc), "/checkpoints/0/branch_id", "which is not in branches", "--to", "asif",
            command="convert")


@pytest.mark.parametrize("where", ["anthropic-call", "anthropic-result", "openai-call", "openai-name"])
def test_empty_tool_ids_stay_in_the_message(tmp_path, where):
    """ASIF ids are never empty: a call or result with an empty id is not mapped to tool events."""
    if where.startswith("anthropic"):
        doc = load(TOOLS)
        if where == "anthropic-call":
            block = next(b for m in doc["messages"] for b in m.get("content_json", []) if b["type"] == "tool_use")
            block["id"] = ""
        else:
            block = next(b for m in doc["messages"] for b in m.get("content_json", []) if b["type"] == "tool_result")
            block["tool_use_id"] = ""
    else:
        doc = load(CORPUS / "continuity" / "04-openai-tools.json")
        call = next(c for m in doc["messages"] if isinstance(m.get("content_json"), dict)
                    for c in m["content_json"].get("tool_calls") or [])
        if where == "openai-call":
            call["id"] = ""
        else:
            call["function"]["name"] = ""
    output, _ = converted(tmp_path, doc)
    assert all(e["data"].get("call_id") != "" for e in output["events"] if e["kind"] in ("tool_call", "tool_result"))
    assert json.loads(convert(dumps(output), to="continuity").output) == doc  # and the export comes back exactly


# -- --trusted-input: the value checks traded for speed, by name only -----------------------------

def test_trusted_input_skips_the_value_checks_and_only_when_asked(tmp_path):
    """The default refuses a duplicate key; --trusted-input takes the producer's word for it (msgspec
    keeps the last value). What the conversion writes is still checked: an integer beyond 2^53
    is refused in the output, never written."""
    doc = load(TOOLS)
    doc["events"][0]["payload"] = {"tool": "bash"}
    data = dumps(doc).replace(b'"payload": {"tool": "bash"}', b'"payload": {"tool": "bash", "tool": "sh"}')
    refused(tmp_path, data, "/events/0/payload/tool", "appears more than once", "--no-validate", rule="json")
    output, _ = converted(tmp_path, data, "from-continuity", "--trusted-input")
    assert json.dumps(output).count('"sh"') >= 1 and '"tool": "bash"' not in json.dumps(output)
    doc["events"][0]["payload"] = {"ts": 2**60}
    for flags in ((), ("--no-validate",)):
        refused(tmp_path, dumps(doc), "/events/1/data/value/payload/ts", "in the output: the integer",
                "--trusted-input", *flags, rule="json")


@pytest.mark.parametrize("depth", [DEPTH_CEILING - 20, DEPTH_CEILING + 50, 700, 990, 5000])
@pytest.mark.parametrize("command", ["from-continuity", "to-continuity"])
def test_trusted_input_nested_deeply_is_refused_or_converted_never_a_crash(tmp_path, depth, command):
    """Without the depth check, nesting is bounded by msgspec's recursion guard and by the
    checks on the output: a refusal (exit 1) or a conversion, never exit 3."""
    if command == "from-continuity":
        doc = load(CHAT)
        doc["messages"][0]["content_json"] = "@@"
    else:
        doc = json.loads(SESSION.read_bytes())
        doc["events"][0]["data"]["deep"] = "@@"
    data = dumps(doc).replace(b'"@@"', b"[" * depth + b"]" * depth, 1)
    src = tmp_path / "in.json"
    src.write_bytes(data)
    for flags in ((), ("--no-validate",)):
        res = invoke(command, src, "-o", tmp_path / "out.json", "--trusted-input", "--max-depth", "400", *flags)
        assert res.exit_code in (0, 1), res.stderr
        if res.exit_code == 1:
            assert "nested" in res.stderr, res.stderr


@given(json_values(), st.integers(0, 3), st.integers(1, 3))
def test_the_duplicate_key_count_of_colons_never_needs_the_whole_re_encoding(value, levels, chunk):
    """The ``:`` count the duplicate-key check compares is made a list slice at a time (a whole
    re-encoding is a second copy of the input's size): the same count, however the value splits."""
    with mock.patch.object(_limits, "_CHUNK", chunk):
        assert _limits._colons({"k:": value, "l": [value, {"m": value}]}, levels) == \
            msgspec.json.encode({"k:": value, "l": [value, {"m": value}]}).count(b":")


def test_a_duplicate_key_deep_in_a_long_list_is_still_found():
    export = json.loads((CORPUS / "continuity" / "03-anthropic-tools.json").read_text())
    text = json.dumps(export)
    messages = export["messages"]
    with mock.patch.object(_limits, "_CHUNK", 1):
        last = json.dumps(messages[-1])
        doubled = last[:-1] + ', "role": "user"}'
        with pytest.raises(InvalidInput, match="appears more than once"):
            convert(text.replace(last, doubled).encode(), to="asif")


# -- JSON inside strings: texts the input's limits never saw nested --------------------------------

def _nested_text(levels: int) -> str:
    return "[" * levels + "]" * levels


@pytest.mark.parametrize("levels", [DEPTH_CEILING + 1, 1_100])
@pytest.mark.parametrize("content", [
    {"role": "assistant", "content": None,
     "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "@@"}}]},
    [{"type": "function_call", "call_id": "c1", "name": "f", "arguments": "@@"}],
], ids=["openai-chat", "openai-responses"])
def test_tool_arguments_nested_deeper_than_the_converter_carries_stay_text(tmp_path, content, levels):
    """An argument string is JSON text: the input's depth check never saw what it holds. Deeper than
    the converter's ceiling no ASIF value holds it (at 1,100 levels it was exit 3): the message
    stays a message, its content_json verbatim, with a loss that says why; the way back is exact."""
    doc = export(("assistant", content))
    data = dumps(doc).replace(b'"@@"', json.dumps(_nested_text(levels)).encode())
    output, _ = converted(tmp_path, data)
    assert [e["kind"] for e in output["events"]] == ["message"]
    assert "translation:dialect-deep-arguments" in {loss["id"] for loss in output["losses"]}
    assert json.loads(convert(json.dumps(output).encode(), to="continuity").output) == json.loads(data)


def _asif_with_text(doc: dict, resource_id: str, levels: int) -> bytes:
    """``doc`` converted to ASIF, the text of its resource ``resource_id`` replaced by JSON nested
    ``levels`` deep (an edit: the text is a string, within every limit of the document)."""
    session = json.loads(convert(doc, to="asif").output)
    (resource,) = [r for r in session["resources"] if r["id"] == resource_id]
    resource["text"] = _nested_text(levels)
    resource["bytes"], resource["sha256"] = levels * 2, hashlib.sha256(resource["text"].encode()).hexdigest()
    return dumps(session)


@pytest.mark.parametrize("levels", [DEPTH_CEILING + 1, 977, 1_100])
@pytest.mark.parametrize(("doc", "resource_id"), [
    ({**export(("user", [{"type": "text", "text": "hi"}])),
      "native_states": [{"state_id": "n1", "session_id": "s-sdk", "provider": "p", "kind": "k", "payload": {"a": 1},
                         "portable": True}]}, "n1"),
    (export(("user", [{"type": "weird_block", "x": 1}, {"type": "text", "text": "hi"}])), "m1/opaque/0"),
    (export(("user", [{"type": "document", "source": {"type": "content", "content": [{"type": "text", "text": "d"}]}},
                       {"type": "text", "text": "hi"}])), "m1/document/0"),
], ids=["native-state", "opaque-block", "document-content"])
def test_resource_texts_nested_deeper_than_the_converter_carries_stay_text(tmp_path, doc, resource_id, levels):
    """The continuity writer turns some resource texts back into JSON (a native state's payload, an
    opaque block, a document's content): a text nested deeper than the converter carries is not
    taken for JSON there (at 977 and 1,100 levels it was exit 3); the residual keeps it, exactly."""
    data = _asif_with_text(doc, resource_id, levels)
    converted(tmp_path, data, "to-continuity")
    back = convert((tmp_path / "result.json").read_bytes(), to="asif")
    assert json.loads(back.output) == json.loads(data)


@pytest.mark.parametrize(("levels", "flags"), [(DEPTH_CEILING - 10, ("--max-depth", str(DEPTH_CEILING))),
                                               (900, ("--trusted-input",))])
def test_a_difference_from_the_rendering_as_deep_as_the_input_may_be(tmp_path, levels, flags):
    """What a message holds beyond its dialect's rendering is found and checked for text by walks
    as deep as the content: at the ceiling they convert (at 340 levels they were exit 3), and
    trusted input deeper still is refused where the output cannot hold it, never a crash."""
    deep: object = "x"
    for _ in range(levels):
        deep = [deep]
    doc = export(("assistant", [{"type": "tool_use", "id": "t1", "name": "bash", "input": {}}]),
                 ("user", [{"type": "tool_result", "tool_use_id": "t1", "content": "ok", "is_error": None}]))
    doc["messages"][1]["content_json"][0]["is_error"] = deep  # (after: export() copies its contents, recursively)
    src = tmp_path / "input.json"
    src.write_bytes(dumps(doc))
    res = invoke("from-continuity", src, "-o", tmp_path / "out.json", *flags)
    if "--trusted-input" in flags:
        assert res.exit_code == 1 and "nested more than" in res.stderr, res.stderr
        return
    assert res.exit_code == 0, res.stderr
    back = convert((tmp_path / "out.json").read_bytes(), to="continuity", limits=Limits(max_depth=DEPTH_CEILING))
    assert json.loads(back.output) == doc


@pytest.mark.parametrize("flags", [("--max-depth", "300"), ("--trusted-input",)])
def test_a_value_deeper_than_the_fast_schema_validator_walks_gets_its_schema_error(tmp_path, flags):
    """jsonschema-rs stops at about 255 levels; deeper values (which a raised --max-depth or
    --trusted-input let through) are judged by python-jsonschema instead of ending in exit 3."""
    doc = json.loads(convert(TOOLS.read_bytes(), to="asif").output)
    deep: object = 1
    for _ in range(256):
        deep = [deep]
    doc["branches"][0]["event_ids"].insert(1, deep)
    refused(tmp_path, dumps(doc), "/branches/0/event_ids/1", 'an array is not of type "string"', *flags,
            command="to-continuity", rule="schema")


def test_where_the_fast_schema_validator_gives_no_answer_python_jsonschema_gives_it():
    """Whatever value makes jsonschema-rs give up, the answer is python-jsonschema's: errors with
    their paths for an invalid document, none for a valid one, and the same for a definition."""
    def gives_up(*args):
        raise ValueError("Recursion limit reached")

    session = load(SESSION)
    broken = copy.deepcopy(session)
    broken["branches"][0]["event_ids"].insert(1, [1])
    with mock.patch.object(schemas, "_fast", return_value=mock.Mock(is_valid=gives_up)):
        assert schemas.schema_problems(schemas.ASIF_SCHEMA, session) == []
        assert [p.path for p in schemas.schema_problems(schemas.ASIF_SCHEMA, broken)] == ["/branches/0/event_ids/1"]
        assert schemas.is_asif("event", session["events"][0])
        assert not schemas.is_asif("event", {**session["events"][0], "sequence": "1"})


# -- JSON Lines (Claude Code transcripts) --------------------------------------------------------

TRANSCRIPT = next((CORPUS / "claude-code" / "tools").glob("*.jsonl"))


def _transcript_refused(tmp_path: Path, content: bytes, where: str) -> str:
    src = tmp_path / "session.jsonl"
    src.write_bytes(content)
    out = tmp_path / "out" / "s.asif.json"
    out.parent.mkdir()
    res = invoke("convert", src, "--to", "asif", "-o", out)
    assert res.exit_code == 1, res.stderr
    assert f"error: {src}: invalid input" in res.stderr and where in res.stderr, res.stderr
    assert list(out.parent.iterdir()) == []
    return res.stderr


@pytest.mark.parametrize(("junk", "said"), [
    (b"# a comment", "line 3: /: not valid JSON (column 1): invalid character"),
    (b'{"type": "user", "uuid": ', "line 3: /: not valid JSON"),
    (b'{"a": "\xff"}', "line 3: /: not valid UTF-8"),
    (b'{"a": NaN}', "line 3: /: not valid JSON"),
])
def test_a_line_of_a_transcript_that_is_not_json_is_named(tmp_path, junk, said):
    lines = TRANSCRIPT.read_bytes().split(b"\n")
    _transcript_refused(tmp_path, b"\n".join([*lines[:2], junk, *lines[2:]]), said)


def test_a_transcript_line_beyond_the_limits_names_its_line_and_path(tmp_path):
    lines = TRANSCRIPT.read_bytes().split(b"\n")
    deep = b'{"type": "x", "uuid": "d", "v": ' + b"[" * 300 + b"]" * 300 + b"}"
    said = _transcript_refused(tmp_path, b"\n".join([*lines[:4], deep, *lines[4:]]), "line 5: /v/0/0/0")
    assert "--max-depth" in said
    big = b'{"type": "x", "uuid": "i", "n": 9007199254740993}'
    (tmp_path / "i").mkdir()
    _transcript_refused(tmp_path / "i", b"\n".join([big, *lines]), "line 1: /n")


def test_duplicate_keys_in_a_transcript_line_are_refused_with_its_line(tmp_path):
    lines = TRANSCRIPT.read_bytes().split(b"\n")
    twice = b'{"type": "x", "type": "y"}'
    _transcript_refused(tmp_path, b"\n".join([*lines[:1], twice, *lines[1:]]), "line 2: /type")


def test_a_cut_last_line_is_a_warning_and_the_rest_converts(tmp_path):
    data = TRANSCRIPT.read_bytes()
    cut = data[:-40]  # the last record, cut
    src, out = tmp_path / "live.jsonl", tmp_path / "live.asif.json"
    src.write_bytes(cut)
    res = invoke("convert", src, "--to", "asif", "-o", out)
    assert res.exit_code == 0, res.stderr
    line = cut.count(b"\n") + 1
    assert f"warning: line {line}: /: the last line is cut" in res.stderr
    doc = json.loads(out.read_bytes())
    assert any(f"line {line}" in loss["id"] for loss in doc["losses"])


@pytest.mark.parametrize("content", [b"", b"\n\n", b"{", b'{"type": "user"', b"[]\n[]\n"])
def test_a_transcript_with_no_complete_record_is_refused(tmp_path, content):
    src, out = tmp_path / "empty.jsonl", tmp_path / "o.json"
    src.write_bytes(content)
    res = invoke("convert", src, "--from", "claude-code", "--to", "asif", "-o", out)
    assert res.exit_code == 1, res.stderr
    assert "Traceback" not in res.stderr and not out.exists()


def test_a_document_read_as_a_transcript_is_refused_in_one_line(tmp_path):
    src, out = tmp_path / "export.json", tmp_path / "o.json"
    src.write_bytes(TOOLS.read_bytes())
    res = invoke("convert", src, "--from", "claude-code", "--to", "asif", "-o", out)
    assert res.exit_code == 1
    assert "not a Claude Code session transcript" in res.stderr and "continuity" in res.stderr
