"""Fuzzing in the normal suite: mutated corpus files never make asif-convert fail in any way
other than the documented one (``InvalidInput``, exit 1, nothing written).

Mutations of the files in corpus/continuity and corpus/asif: byte flips, truncation, inserted
bytes, and structure-aware edits (a member deleted, duplicated in the text, its value swapped
for one of another type or a boundary value, a subtree copied elsewhere). Bounded and
derandomized so CI takes a few tens of seconds and is reproducible; the open-ended search is
the atheris harness in fuzz/ (see fuzz/README.md).
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from pathlib import Path

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from asif_convert import InvalidInput, Limits, convert
from asif_convert._cli.app import app

from .conftest import ASIF_EXAMPLES, CONTINUITY_FILES, CORPUS

SEEDS = [p.read_bytes() for p in CONTINUITY_FILES + ASIF_EXAMPLES]
LIMITS = Limits(max_bytes=1 << 20, max_depth=64, max_string=1 << 16)

BOUNDARY = [None, True, False, 0, -1, 2**53 - 1, 2**53, -(2**53), 1.0, 1.5, -0.0, 1e308, "", "x" * 70_000,
            "\u0000", "\U0001f600", "../../etc/passwd", "/dev/zero", "C:\\x", "agent-continuity-export", "0.4",
            [], {}, [None], {"": None}, {"type": "text"}, [{"type": {"type": "text"}}]]

# byte-level edits mostly make the file not JSON at all: structure-aware ones are drawn more often
OPS = ["flip", "truncate", "insert", "duplicate"] + ["delete", "swap", "retype", "copy"] * 3

FUZZ = settings(max_examples=200, deadline=None, derandomize=True, database=None, print_blob=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.large_base_example])


def _nodes(value, path=()):
    yield path, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _nodes(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _nodes(v, (*path, i))


def _retyped(value):
    if isinstance(value, str):
        return len(value)
    if isinstance(value, bool | int | float):
        return str(value)
    if isinstance(value, list):
        return {str(i): v for i, v in enumerate(value)}
    if isinstance(value, dict):
        return list(value.values())
    return [value]


@st.composite
def mutated(draw) -> bytes:
    return _mutate(draw, draw(st.sampled_from(SEEDS)))


def _mutate(draw, data: bytes) -> bytes:
    for op in draw(st.lists(st.sampled_from(OPS), min_size=1, max_size=3)):
        if op == "flip" and data:
            at = draw(st.integers(0, len(data) - 1))
            data = data[:at] + bytes([data[at] ^ draw(st.integers(1, 255))]) + data[at + 1:]
        elif op == "truncate":
            data = data[: draw(st.integers(0, len(data)))]
        elif op == "insert":
            at = draw(st.integers(0, len(data)))
            junk = draw(st.sampled_from([b"[", b"}", b",", b'"', b"\\", b"\x00", b"\xff", b"NaN", b"1e999",
                                         b"\xef\xbb\xbf", b"9" * 30, b'"\\ud800"', b'"a":1,']))
            data = data[:at] + junk + data[at:]
        elif op == "duplicate":  # a member repeated in the text: JSON readers keep one or the other
            at = data.find(b'":', draw(st.integers(0, max(0, len(data) - 1))))
            start = data.rfind(b'"', 0, data.rfind(b'"', 0, at + 1)) if at > 0 else -1
            end = data.find(b",", at) if at > 0 else -1
            if start >= 0 and end > at:
                data = data[:end] + b", " + data[start:end] + data[end:]
        else:
            try:
                doc = msgspec.json.decode(data)
            except (msgspec.DecodeError, RecursionError):
                continue
            nodes = list(_nodes(doc))
            path, value = nodes[draw(st.integers(0, len(nodes) - 1))]
            if not path:
                continue
            parent = doc
            for step in path[:-1]:
                parent = parent[step]
            key = path[-1]
            if op == "delete":
                del parent[key]
            elif op == "swap":
                parent[key] = msgspec.json.decode(msgspec.json.encode(draw(st.sampled_from(BOUNDARY))))
            elif op == "retype":
                parent[key] = _retyped(value)
            else:  # copy another subtree here
                parent[key] = msgspec.json.decode(msgspec.json.encode(nodes[draw(st.integers(0, len(nodes) - 1))][1]))
            data = msgspec.json.encode(doc)
    return data


# Claude Code transcripts: one of their lines mutated as a document is, or lines cut, dropped,
# repeated or added; the file may end anywhere (a file still being written).
CC_SEEDS = [p.read_bytes() for p in sorted((CORPUS / "claude-code").rglob("*.jsonl"))]


@st.composite
def mutated_lines(draw) -> bytes:
    lines = draw(st.sampled_from(CC_SEEDS)).split(b"\n")
    for op in draw(st.lists(st.sampled_from(["line", "line", "line", "drop", "repeat", "junk", "cut"]),
                            min_size=1, max_size=3)):
        at = draw(st.integers(0, max(0, len(lines) - 1)))
        if op == "line":
            lines[at] = _mutate(draw, lines[at]).replace(b"\n", b" ")
        elif op == "drop":
            del lines[at:at + 1]
        elif op == "repeat":
            lines.insert(at, lines[at] if lines else b"")
        elif op == "junk":
            lines.insert(at, draw(st.sampled_from([b"# a comment", b"{", b"[1]", b'"text"', b"null", b"\xff",
                                                   b'{"type": 7}', b'{"type": "user"}', b'{"uuid": []}'])))
        else:
            data = b"\n".join(lines)
            return data[: draw(st.integers(0, len(data)))]
    return b"\n".join(lines)


@FUZZ
@given(mutated_lines())
def test_mutated_transcripts_convert_exactly_or_are_refused(data):
    """A mutated transcript is refused (InvalidInput, naming the line), or read into a valid ASIF
    session that gives back every complete record."""
    try:
        result = convert(data, to="asif", name="fuzzed.jsonl", limits=LIMITS, source="claude-code")
    except InvalidInput as exc:
        assert exc.problems and all(p.message for p in exc.problems)
        return
    doc = json.loads(result.output)
    back = convert(result.output, to="claude-code", limits=Limits(max_bytes=1 << 24))
    complete = []
    for line in data.split(b"\n"):
        try:
            complete.append(msgspec.json.decode(line))
        except msgspec.DecodeError:  # a blank line, or the cut last one
            continue
    assert [msgspec.json.decode(x) for x in back.output.splitlines()] == complete
    assert doc["asif_version"] == "0.4"


def _only_invalid_input(data: bytes, target: str) -> None:
    try:
        result = convert(data, to=target, name="fuzzed.json", limits=LIMITS)
    except InvalidInput as exc:
        assert exc.problems, "a refusal must say why"
        for p in exc.problems:
            assert isinstance(p.rule, str) and p.rule and isinstance(p.message, str) and p.message
            assert p.path == "" or p.path.startswith("/")
        assert str(exc).startswith("fuzzed.json: ")
    else:
        assert json.loads(result.output) == result.document  # what is returned is what would be written


@FUZZ
@given(mutated())
def test_mutated_inputs_raise_only_invalid_input(data):
    for target in ("asif", "continuity"):
        _only_invalid_input(data, target)


runner = CliRunner()


@settings(FUZZ, max_examples=40)
@given(mutated(), st.sampled_from(["from-continuity", "to-continuity", "convert"]))
def test_the_command_line_writes_a_whole_output_or_nothing(data, command):
    with tempfile.TemporaryDirectory() as tmp:
        src, out_dir = Path(tmp) / "in.json", Path(tmp) / "out"
        src.write_bytes(data)
        out_dir.mkdir()
        out = out_dir / "o.json"
        args = [command, str(src), "-o", str(out), "--max-depth", "64", "--max-string", "64K"]
        res = runner.invoke(app, args + (["--to", "asif"] if command == "convert" else []))
        assert res.exit_code in (0, 1), res.stderr
        assert "Traceback" not in res.stderr
        assert hashlib.sha256(src.read_bytes()).digest() == hashlib.sha256(data).digest()
        if res.exit_code == 1:
            assert res.stderr.startswith(f"error: {src}: invalid input")
            assert list(out_dir.iterdir()) == []
        else:
            assert [p.name for p in out_dir.iterdir()] == ["o.json"]
            json.loads(out.read_bytes())
