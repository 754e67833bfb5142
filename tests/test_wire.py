"""The output path that never holds the whole output as JSON values: events are built, checked
against the limits and encoded a slice at a time (``jsonio.StreamedEncoding``), the command
line writes them to the file as they come, and ``Result.document`` is decoded from the bytes
only when asked for. The input's records are let go as they are read."""

from __future__ import annotations

import errno
import io
import json
import os
import signal
import stat
import subprocess
import sys
import threading
from pathlib import Path

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from asif_convert import Limits, Options, UsageError, convert, ir
from asif_convert import _jsonio as jsonio
from asif_convert._cli import common
from asif_convert._cli.app import app
from asif_convert._codec import Codec, codec_for
from asif_convert._errors import InternalError, InvalidInput, Problem
from asif_convert._ledger import Ledger
from asif_convert._limits import check_output
from asif_convert._mapping import load_table
from asif_convert._pipeline import _UNDECODED, convert_into, new_context
from asif_convert._registry import get, namespaces

from .strategies import asif_sessions, json_values

ROOT = Path(__file__).resolve().parent.parent
CONTINUITY_FILES = sorted((ROOT / "corpus" / "continuity").glob("*.json"))
ASIF_FILES = sorted((ROOT / "corpus" / "asif").glob("*.json"))


@pytest.mark.parametrize("path", CONTINUITY_FILES, ids=lambda p: p.stem)
@pytest.mark.parametrize("compact", [True, False])
def test_streamed_output_is_byte_for_byte_the_output_built_whole(path, compact, monkeypatch):
    """ASIF events are encoded slice by slice (with output validation, once the validators
    passed them whole); a format without ``write_streamed`` has its whole tree encoded at once.
    The bytes are the same."""
    data = path.read_bytes()
    streamed = convert(data, to="asif", options=Options(validate=False), compact=compact)
    validated = convert(data, to="asif", options=Options(validate=True), compact=compact)
    monkeypatch.delattr(type(get("asif")), "write_streamed")
    whole = convert(data, to="asif", options=Options(validate=True), compact=compact)
    assert streamed._document is _UNDECODED and validated._document is _UNDECODED  # nothing decoded until asked
    assert streamed.output == validated.output == whole.output
    assert streamed.document == validated.document == whole.document == json.loads(whole.output)
    assert streamed.counts == validated.counts == whole.counts
    assert streamed.counts["events"] == len(whole.document["events"])


@pytest.mark.parametrize("path", ASIF_FILES, ids=lambda p: p.stem)
@pytest.mark.parametrize("compact", [True, False])
def test_a_streamed_export_is_byte_for_byte_the_export_encoded_whole(path, compact, monkeypatch):
    """A continuity export is built whole (its residual is what reading it back differs by),
    then its messages are encoded a slice at a time, each let go of once encoded."""
    data = path.read_bytes()
    streamed = convert(data, to="continuity", options=Options(validate=False), compact=compact)
    validated = convert(data, to="continuity", compact=compact)
    sink = io.BytesIO()
    assert convert_into(data, sink, to="continuity", compact=compact).streamed
    monkeypatch.delattr(type(get("continuity")), "write_streamed")
    whole = convert(data, to="continuity", compact=compact)
    assert streamed._document is _UNDECODED and validated._document is _UNDECODED
    assert streamed.output == validated.output == whole.output == sink.getvalue()
    assert streamed.document == validated.document == whole.document == json.loads(whole.output)
    assert streamed.counts == validated.counts == whole.counts
    assert streamed.counts["messages"] == len(whole.document["messages"])


def test_streamed_encoding_across_many_slices_matches_one_encode():
    head = {"a": 1, "events": [], "z": {"k": [1, 2]}}
    items = [{"i": i, "s": "x" * (i % 7)} for i in range(jsonio._SLICE * 2 + 5)]
    for compact in (True, False):
        got, count = jsonio.encode_streamed(head, "events", iter(items), compact=compact, limits=Limits(),
                                            source="t")
        assert got == jsonio.encode({**head, "events": items}, compact=compact)
        assert count == len(items)
    last = {"a": 1, "events": []}  # the list is the head's last member
    got, _ = jsonio.encode_streamed(last, "events", iter(items[:3]), compact=True, limits=Limits(), source="t")
    assert got == jsonio.encode({**last, "events": items[:3]}, compact=True)
    got, count = jsonio.encode_streamed(last, "events", iter(()), compact=True, limits=Limits(), source="t")
    assert (got, count) == (jsonio.encode(last, compact=True), 0)


def test_a_slice_ends_at_its_count_or_its_bytes_whichever_comes_first():
    """Long items (messages of a text-heavy export) make short slices: a slice of 2,048 of them
    would be megabytes, held several times over while it is checked and written."""
    items = ["x" * 8 for _ in range(10)]  # 10 bytes each, encoded
    for size, size_bytes, pieces in ((4, 1000, 3), (100, 25, 4), (2, 25, 5)):
        encoding = jsonio.StreamedEncoding({"events": []}, "events", iter(items), compact=True, limits=Limits(),
                                           source="t", slice_size=size, slice_bytes=size_bytes)
        got = list(encoding)
        assert len(got) == 1 + pieces + 1  # the head up to the list, the slices, the rest
        assert b"".join(got) == jsonio.encode({"events": items}, compact=True)


def _refusal(head, items, limits):
    with pytest.raises(InvalidInput) as info:
        jsonio.encode_streamed(head, "events", iter(items), compact=True, limits=limits, source="t")
    (problem,) = info.value.problems
    return problem


def test_an_item_of_a_late_slice_nested_too_deeply_is_named_by_its_index_in_the_whole_list():
    at = jsonio._SLICE + 17
    items = [{"v": 1} for _ in range(at)] + [{"v": json.loads("[" * 8 + "]" * 8)}]
    # root (1) > events (2) > item (3) > v's arrays from level 4: 8 of them reach level 11
    problem = _refusal({"events": []}, items, Limits(max_depth=10))
    assert problem.path == f"/events/{at}/v" + "/0" * 7
    assert "in the output: arrays and objects are nested more than 10 levels deep" in problem.message
    with pytest.raises(InvalidInput) as whole:  # what the check of the whole document says
        check_output(b"", {"events": items}, Limits(max_depth=10), "t")
    assert whole.value.problems == [problem]
    jsonio.encode_streamed({"events": []}, "events", iter(items), compact=True, limits=Limits(max_depth=11),
                           source="t")


def test_limits_one_level_deep_still_name_the_list():
    problem = _refusal({"events": []}, [{"a": 1}], Limits(max_depth=1))
    assert problem.path == "/events"
    with pytest.raises(InvalidInput) as whole:
        check_output(b"", {"events": [{"a": 1}]}, Limits(max_depth=1), "t")
    assert whole.value.problems == [problem]


def test_too_long_strings_are_refused_in_items_and_in_the_head_after_the_list():
    items = [{"s": "x"} for _ in range(jsonio._SLICE + 3)] + [{"s": "y" * 50}]
    problem = _refusal({"events": []}, items, Limits(max_string=40))
    assert (problem.path, problem.rule) == (f"/events/{jsonio._SLICE + 3}/s", "limit")
    with pytest.raises(InvalidInput) as whole:
        check_output(b"x" * 41, {"events": items}, Limits(max_string=40), "t")
    assert whole.value.problems == [problem]
    # the head's string after the list: the head's own bytes before the list are too few to hold it
    problem = _refusal({"events": [], "z": "w" * 50}, [], Limits(max_string=40))
    assert (problem.path, problem.rule) == ("/z", "limit")


def test_a_package_result_decodes_its_session_document(tmp_path):
    data = CONTINUITY_FILES[0].read_bytes()
    res = convert(data, to="asif", options=Options(validate=False), package=True)
    assert res.output.startswith(b"PK")
    assert res.document == msgspec.json.decode(convert(data, to="asif").output)


@given(asif_sessions())
def test_streamed_dump_and_encode_equal_the_whole_document(doc):
    """Whatever the session (unknown members, native homes, every event kind), the head without
    events plus the events dumped one by one encode to the bytes of the whole document."""
    codec = codec_for(namespaces())
    ir = codec.load_document(msgspec.json.decode(msgspec.json.encode(doc)))
    whole = jsonio.encode(codec.dump_document(ir), compact=True)
    head = codec.dump_document(ir, events=False)
    streamed, count = jsonio.encode_streamed(head, "events", map(codec.dump_event, ir.events), compact=True,
                                             limits=Limits(), source="t")
    assert streamed == whole
    assert count == len(ir.events)


@given(json_values(), json_values(), st.lists(json_values(), max_size=9), st.integers(1, 4), st.integers(1, 64),
       st.booleans())
def test_a_streamed_encoding_is_the_whole_encoding_for_any_values_and_slices(a, z, items, size, size_bytes,
                                                                             compact):
    """Indented output is indented a slice at a time (each slice's lines moved two levels deeper):
    the bytes are those of indenting the whole, whatever the values, the key order and the slices."""
    head = {"a": a, "events": [], "z": z}
    encoding = jsonio.StreamedEncoding(head, "events", iter(items), compact=compact, limits=Limits(), source="t",
                                       slice_size=size, slice_bytes=size_bytes)
    assert b"".join(encoding) == jsonio.encode({**head, "events": items}, compact=compact)
    assert encoding.count == len(items)


@pytest.mark.parametrize("compact", [True, False], ids=["compact", "indented"])
def test_the_command_writes_a_streamed_output_as_it_is_made(tmp_path, compact):
    """Without output validation the command line writes the events to the file as they are
    encoded; the file holds the library's bytes exactly, and no temp file is left."""
    path = CONTINUITY_FILES[-1]
    out = tmp_path / "out.asif.json"
    flags = ["--no-validate", *(["--compact"] if compact else [])]
    result = CliRunner().invoke(app, ["from-continuity", str(path), "-o", str(out), *flags])
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == convert(path.read_bytes(), to="asif", options=Options(validate=False),
                                       compact=compact).output
    assert [p.name for p in tmp_path.iterdir()] == ["out.asif.json"]


def test_a_refusal_while_streaming_leaves_no_output_and_no_temp_file(tmp_path, monkeypatch):
    """An output limit broken in the last events, after earlier slices went to the temp file: the
    command refuses (exit 1, invalid input) and the folder holds neither the output nor the temp file."""
    monkeypatch.setattr(jsonio, "_SLICE", 2)
    written = []
    monkeypatch.setattr(jsonio.PendingOutput, "write", _spy(jsonio.PendingOutput.write, written))
    export = json.loads(CONTINUITY_FILES[-1].read_text())
    deep: object = "bottom"
    for _ in range(58):  # within --max-depth 64 in the export, beyond it in the ASIF output
        deep = [deep]
    export["messages"][-1]["content_json"] = {"nested": deep}
    src = tmp_path / "in.json"
    src.write_text(json.dumps(export))
    out = tmp_path / "out" / "x.asif.json"
    out.parent.mkdir()
    result = CliRunner().invoke(app, ["from-continuity", str(src), "-o", str(out), "--no-validate",
                                      "--max-depth", "64"])
    assert result.exit_code == 1, result.output
    assert "in the output" in result.output
    assert len(written) > 2  # slices went to the temp file before the refusal
    assert list(out.parent.iterdir()) == []


class _FullDisk:
    """A file on a disk that fills up after ``room`` bytes: writing fails with ENOSPC, and so
    does closing (the buffered rest cannot be flushed), as a real full disk does."""

    def __init__(self, file, room):
        self.file, self.room = file, room

    def write(self, data):
        if len(data) > self.room:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self.room -= len(data)
        return self.file.write(data)

    def close(self):
        self.file.close()
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


@pytest.mark.parametrize("room", [0, 5000])
def test_a_full_disk_while_streaming_is_an_output_error_and_leaves_no_temp_file(tmp_path, monkeypatch, room):
    """ENOSPC at the first slice or a later one: exit 1 naming the file and the reason, no
    traceback, and the folder holds neither the output nor the temp file."""
    monkeypatch.setattr(jsonio, "_SLICE", 2)
    real_fdopen = os.fdopen
    monkeypatch.setattr(jsonio.os, "fdopen", lambda fd, mode: _FullDisk(real_fdopen(fd, mode), room))
    out = tmp_path / "out" / "x.asif.json"
    out.parent.mkdir()
    result = CliRunner().invoke(app, ["from-continuity", str(CONTINUITY_FILES[-1]), "-o", str(out), "--no-validate"])
    assert result.exit_code == 1, result.output
    assert f"cannot write {out}: No space left on device" in result.output
    assert list(out.parent.iterdir()) == []


def test_sigterm_while_streaming_removes_the_temp_file_and_exits_130(tmp_path, monkeypatch):
    """`kill` during a conversion ends it as Ctrl-C does: the temp file already holding slices
    is removed, nothing is put in place, and the exit code is the shell's 130."""
    monkeypatch.setattr(jsonio, "_SLICE", 2)
    written = []
    write = jsonio.PendingOutput.write

    def write_then_get_killed(self, data):
        write(self, data)
        written.append(len(data))
        if len(written) == 2:
            os.kill(os.getpid(), signal.SIGTERM)

    monkeypatch.setattr(jsonio.PendingOutput, "write", write_then_get_killed)
    out = tmp_path / "x.asif.json"
    before = signal.getsignal(signal.SIGTERM)
    result = CliRunner().invoke(app, ["from-continuity", str(CONTINUITY_FILES[-1]), "-o", str(out), "--no-validate"])
    assert result.exit_code == 130, result.output
    assert "interrupted" in result.output
    assert len(written) == 2  # stopped at the signal, not after the conversion
    assert list(tmp_path.iterdir()) == []
    assert signal.getsignal(signal.SIGTERM) is before  # the handler is the command's only


def test_a_device_is_written_in_place_not_replaced(tmp_path):
    """`-o /dev/null` (or any device or pipe) is written through: a temp file renamed over it
    would replace the device with a regular file."""
    if not os.path.exists(os.devnull) or not os.access(os.devnull, os.W_OK):
        pytest.skip("no writable null device on this system")
    for flags in (["--no-validate"], []):
        result = CliRunner().invoke(app, ["from-continuity", str(CONTINUITY_FILES[-1]), "-o", os.devnull, *flags])
        assert result.exit_code == 0, result.output
        assert stat.S_ISCHR(os.stat(os.devnull).st_mode)


@pytest.mark.parametrize("no_validate", [True, False])
def test_a_named_pipe_receives_the_whole_output_once_it_is_complete(tmp_path, no_validate):
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    path = CONTINUITY_FILES[-1]
    flags = ["--no-validate"] if no_validate else []
    result = CliRunner().invoke(app, ["from-continuity", str(path), "-o", str(fifo), *flags])
    reader.join(timeout=30)
    assert result.exit_code == 0, result.output
    assert received == [convert(path.read_bytes(), to="asif", options=Options(validate=not no_validate)).output]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.fifo"]


@pytest.mark.parametrize("error", [errno.EPIPE, errno.ENOSPC])
def test_a_stream_that_cannot_take_the_output_is_an_output_error(error):
    """A reader that has gone (broken pipe) or a full disk behind standard output: exit 1 with
    the reason, and what is still buffered is sent nowhere so leaving does not fail again."""
    if error == errno.EPIPE:
        read_end, write_end = os.pipe()
        os.close(read_end)  # the reader has gone
        stream = os.fdopen(write_end, "wb")
    elif os.path.exists("/dev/full"):
        stream = open("/dev/full", "wb")  # noqa: SIM115 (closed below, after the failure)
    else:
        pytest.skip("no /dev/full on this system to fill a disk")
    with pytest.raises(jsonio.OutputError, match="cannot write standard output: " + os.strerror(error)):
        jsonio._write_stream(stream, b"x" * 100_000, "standard output")
    stream.write(b"more")
    stream.close()  # to the null device now: no second error


class _Sip(io.RawIOBase):
    """An unbuffered stream that takes at most a few bytes per write, as a pipe does when it is
    nearly full: whoever writes to it must write again."""

    def __init__(self):
        self.got = bytearray()

    def writable(self):
        return True

    def write(self, data):
        taken = bytes(data[:7])
        self.got += taken
        return len(taken)


def test_a_stream_that_takes_part_of_a_write_gets_the_rest_too():
    """With PYTHONUNBUFFERED standard output is a raw stream: one write may take part of the
    output, and stopping there would cut the document short and still exit 0."""
    sink = _Sip()
    jsonio._write_stream(sink, b"0123456789" * 100, "standard output")
    assert bytes(sink.got) == b"0123456789" * 100


def test_a_link_to_a_pipe_is_written_through_not_replaced(tmp_path):
    """`-o /dev/stdout` is a link to whatever standard output is: the output goes there, and
    the link stays a link (replacing it would break /dev/stdout for everyone)."""
    fifo, link = tmp_path / "pipe", tmp_path / "stdout"
    os.mkfifo(fifo)
    link.symlink_to(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    path = CONTINUITY_FILES[-1]
    result = CliRunner().invoke(app, ["from-continuity", str(path), "-o", str(link), "--no-validate"])
    reader.join(timeout=30)
    assert result.exit_code == 0, result.output
    assert received == [convert(path.read_bytes(), to="asif", options=Options(validate=False)).output]
    assert link.is_symlink() and stat.S_ISFIFO(os.stat(link).st_mode)


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc/self/fd (Linux)")
def test_a_link_to_an_open_descriptor_is_that_stream_even_when_a_file_is_behind_it(tmp_path):
    """`-o /dev/stdout` when the shell redirected standard output to a file: /dev/stdout is a
    link to /proc/self/fd/1, behind which is a regular file. The output goes to the stream,
    and the link is never replaced (as root that would break /dev/stdout for everyone)."""
    behind = tmp_path / "redirected.json"
    path = CONTINUITY_FILES[-1]
    expected = convert(path.read_bytes(), to="asif", options=Options(validate=False)).output
    with open(behind, "wb") as fh:  # a descriptor of this process, as fd 1 is for the command
        link = tmp_path / "stdout"
        link.symlink_to(f"/proc/self/fd/{fh.fileno()}")
        result = CliRunner().invoke(app, ["from-continuity", str(path), "-o", str(link), "--no-validate"])
    assert result.exit_code == 0, result.output
    assert behind.read_bytes() == expected
    assert link.is_symlink()


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc/self/fd (Linux)")
def test_the_command_writes_to_its_standard_output_through_a_link(tmp_path):
    link, out = tmp_path / "stdout", tmp_path / "out.json"
    link.symlink_to("/proc/self/fd/1")
    path = CONTINUITY_FILES[-1]
    run = [sys.executable, "-c", "from asif_convert._cli.app import run; run()", "from-continuity", str(path)]
    with open(out, "wb") as fh:
        proc = subprocess.run([*run, "-o", str(link)], stdout=fh, stderr=subprocess.PIPE)
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes() == convert(path.read_bytes(), to="asif").output
    assert link.is_symlink()
    proc = subprocess.run([*run, "-o", str(link), "--report", "-"], capture_output=True)
    assert proc.returncode == 2 and b"two outputs would go to standard output" in proc.stderr


def test_a_signal_once_the_output_is_in_place_does_not_make_it_a_failure(tmp_path, monkeypatch):
    """Past the rename the command has done what was asked: a Ctrl-C or SIGTERM then is
    forgotten, not reported as an interruption over an output that exists."""
    commit = jsonio.PendingOutput.commit

    def commit_then_get_killed(self):
        commit(self)
        os.kill(os.getpid(), signal.SIGTERM)

    monkeypatch.setattr(jsonio.PendingOutput, "commit", commit_then_get_killed)
    out = tmp_path / "x.asif.json"
    result = CliRunner().invoke(app, ["from-continuity", str(CONTINUITY_FILES[-1]), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert out.exists() and "interrupted" not in result.output


def test_a_second_signal_while_cleaning_up_still_removes_the_temp_file(tmp_path, monkeypatch):
    """Only the first Ctrl-C or SIGTERM interrupts a command: the second one, landing in the
    clean-up, would cut it short and leave the temp file."""
    monkeypatch.setattr(jsonio, "_SLICE", 2)
    write, discard, calls = jsonio.PendingOutput.write, jsonio.PendingOutput.discard, []

    def write_then_get_killed(self, data):
        write(self, data)
        os.kill(os.getpid(), signal.SIGTERM)

    def killed_again_then_discard(self):
        calls.append(self.path)
        os.kill(os.getpid(), signal.SIGINT)  # the user presses Ctrl-C as well
        os.getpid()  # (where the second interrupt would be raised)
        discard(self)

    monkeypatch.setattr(jsonio.PendingOutput, "write", write_then_get_killed)
    monkeypatch.setattr(jsonio.PendingOutput, "discard", killed_again_then_discard)
    before = signal.getsignal(signal.SIGINT)  # (Python's default, or SIG_IGN in a background job)
    result = CliRunner().invoke(app, ["from-continuity", str(CONTINUITY_FILES[-1]), "-o", str(tmp_path / "x.json"),
                                      "--no-validate"])
    assert result.exit_code == 130, result.output
    assert calls and list(tmp_path.iterdir()) == []
    assert signal.getsignal(signal.SIGINT) is before  # given back


class _ClosesThenInterrupted:
    """A file whose first close is interrupted right after closing (closing again does nothing,
    as for any closed file)."""

    def __init__(self, file):
        self.file = file

    def close(self):
        if not self.file.closed:
            self.file.close()
            raise KeyboardInterrupt


def test_a_discard_interrupted_halfway_can_be_done_again(tmp_path):
    pending = jsonio.PendingOutput(str(tmp_path / "x.json"))
    pending.write(b"{}")
    pending._file = _ClosesThenInterrupted(pending._file)
    with pytest.raises(KeyboardInterrupt):
        pending.discard()
    assert len(list(tmp_path.iterdir())) == 1  # the temp file: not yet removed, not forgotten
    pending.discard()
    assert list(tmp_path.iterdir()) == []


def test_past_the_point_of_no_return_signals_are_forgotten():
    with common.sigterm_interrupts(once=True):
        common.point_of_no_return()
        os.kill(os.getpid(), signal.SIGTERM)
        os.getpid()  # (a point where an interrupt that was not ignored would be raised)
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL  # given back


def test_a_failed_output_keeps_the_report_that_was_there(tmp_path):
    report = tmp_path / "report.json"
    report.write_text("OLD")
    out = tmp_path / "folder"
    out.mkdir()
    for flags in ([], ["--no-validate"]):
        result = CliRunner().invoke(app, ["from-continuity", str(CONTINUITY_FILES[-1]), "-o", str(out),
                                          "--report", str(report), *flags])
        assert result.exit_code == 1, result.output
        assert f"cannot write {out}: it is a folder" in result.output
        assert report.read_text() == "OLD"
        assert sorted(p.name for p in tmp_path.iterdir()) == ["folder", "report.json"]


@pytest.mark.parametrize(("args", "message"), [
    (["-o", ""], "Invalid value for '-o' / '--output': is empty"),
    (["-o", "-", "--report", "-"], "two outputs would go to standard output"),
    (["-o", "x.json", "--report", ""], "Invalid value for '--report': is empty"),
    (["-o", os.devnull, "--report", os.devnull], "two outputs cannot share a file"),
])
def test_outputs_that_cannot_be_told_apart_are_usage_errors(args, message):
    result = CliRunner().invoke(app, ["from-continuity", str(CONTINUITY_FILES[0]), *args])
    assert result.exit_code == 2, result.output
    assert message in result.output


def test_a_standard_error_no_one_reads_does_not_undo_a_conversion(tmp_path):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this system to fill standard error")
    out = tmp_path / "x.asif.json"
    with open("/dev/full", "wb") as full:
        proc = subprocess.run([sys.executable, "-c", "from asif_convert._cli.app import run; run()",
                               "from-continuity", str(CONTINUITY_FILES[0]), "-o", str(out)], stderr=full)
    assert proc.returncode == 0
    assert out.read_bytes() == convert(CONTINUITY_FILES[0].read_bytes(), to="asif").output


def _spy(method, calls):
    def spy(self, data):
        calls.append(len(data))
        return method(self, data)
    return spy


def test_a_streamed_result_has_no_document_to_decode():
    sink = io.BytesIO()
    res = convert_into(CONTINUITY_FILES[0].read_bytes(), sink, to="asif", options=Options(validate=False))
    assert res.streamed and res.output == b""
    assert sink.getvalue() == convert(CONTINUITY_FILES[0].read_bytes(), to="asif",
                                      options=Options(validate=False)).output
    with pytest.raises(UsageError, match="sink"):
        _ = res.document
    assert not hasattr(res, "document") and getattr(res, "document", None) is None  # not a failure of theirs
    validated = convert_into(CONTINUITY_FILES[0].read_bytes(), io.BytesIO(), to="asif")
    assert validated.streamed and validated.output == b""


def test_a_validated_output_that_fails_writes_nothing_to_the_sink(monkeypatch):
    """Output validation runs on the whole output before its first piece is encoded: an invalid
    output reaches no sink (a file output is a temp file, but a library caller's sink may not be)."""
    bad = Problem(rule="ASIF-R005", path="/events/0", message="planted")
    monkeypatch.setattr(type(get("asif")), "validate", lambda self, doc: [bad])
    sink = io.BytesIO()
    with pytest.raises(InternalError, match="planted"):
        convert_into(CONTINUITY_FILES[0].read_bytes(), sink, to="asif")
    assert sink.getvalue() == b""


@pytest.mark.parametrize("ours", [False, True], ids=["export", "export-with-our-state"])
def test_reading_lets_the_records_go_only_for_a_conversion(ours):
    """convert() reads its own decoded copy once, and lets its records go while reading (also
    when the reader works on a copy of the export without our state entries, which shares its
    lists); a format's read() called by anyone else leaves the document whole."""
    asif = ROOT / "corpus" / "asif" / "compaction-with-attachment.session.json"
    export = json.loads(convert(asif.read_bytes(), to="continuity", options=Options(residual=False)).output
                        if ours else CONTINUITY_FILES[-1].read_bytes())
    assert any(s["provider"] == "asif" for s in export.get("native_states", ())) == ours
    kept = json.loads(json.dumps(export))
    convert(export, to="asif")
    assert export == kept  # the caller's document is never the one released
    ctx = new_context(Options())
    get("continuity").read(export, ctx)
    assert export == kept
    ctx.release_input = True
    get("continuity").read(export, ctx)
    assert export["messages"] == [None] * len(kept["messages"]) and kept["messages"]
    assert export["events"] == [None] * len(kept["events"])


def test_reading_asif_lets_the_events_go_only_for_a_conversion(monkeypatch):
    data = (ROOT / "corpus" / "asif" / "compaction-with-attachment.session.json").read_bytes()
    doc = json.loads(data)
    kept = json.loads(data)
    convert(doc, to="continuity")
    assert doc == kept  # the caller's document is never the one released
    ctx = new_context(Options())
    read = get("asif").read(doc, ctx)
    assert doc == kept
    ctx.release_input = True
    events, left = doc["events"], []
    load_event = Codec.load_event

    def counting(self, raw, provenance=None):
        left.append(sum(e is not None for e in events))
        return load_event(self, raw, provenance)

    monkeypatch.setattr(Codec, "load_event", counting)
    assert get("asif").read(doc, ctx) == read
    assert left == list(range(len(kept["events"]) - 1, -1, -1))  # each event let go as it is read
    assert doc["events"] == [] and kept["events"]


def test_events_share_a_provenance_node_only_when_it_is_spelled_the_same():
    """Most events of a session have one or two provenances: byte-equal ones are one node.
    Values Python calls equal but JSON spells apart (1 and 1.0, true and 1) stay apart."""
    def event(k, **provenance):
        return {"id": f"e{k}", "sequence": k, "actor_id": "a", "kind": "note", "causes": [],
                "provenance": {"mode": "reported", "producer": "p", **provenance},
                "data": {"parts": [], "category": "c"}}
    raw = [event(0), event(1), event(2, weight=1), event(3, weight=1.0), event(4, weight=True), event(5),
           event(6)]
    codec = codec_for(namespaces())
    session = json.loads((ROOT / "corpus" / "asif" / "compaction-with-attachment.session.json").read_bytes())
    doc = codec.load_document({**session, "events": json.loads(json.dumps(raw))})
    nodes = [ev.provenance for ev in doc.events]
    assert nodes[0] is nodes[1] and nodes[5] is nodes[6]
    assert len({id(n) for n in nodes[1:6]}) == 5
    assert msgspec.json.encode([codec.dump_event(ev) for ev in doc.events]) == msgspec.json.encode(raw)


def test_a_ledger_remembers_the_records_of_a_field_kept_on_them_only_when_listing():
    """A loss of a field kept on its own record never lists the records (they are those that
    carry it); only the first release's form did, so only a listing ledger remembers them."""
    table = load_table("continuity-to-asif")

    def filled(ledger):
        for k in range(3):
            ledger.add("messages[].sequence", "event", f"e{k}")  # kept on the record
            ledger.add("+participants", "participant", f"p{k}")  # synthesized: its records are listed
        return ledger

    short, listing = filled(Ledger(table)), filled(Ledger(table, listing=True))
    assert short.losses() == listing.losses()
    assert [len(loss.references or ()) for loss in short.losses()] == [0, 3]
    assert not short._refs["messages[].sequence"] and len(listing._refs["messages[].sequence"]) == 3
    assert short.compact()["+participants"] == listing.compact()["+participants"]
    assert [len(loss.references or ()) for loss in listing.first_release_losses()] == [3, 3]
    with pytest.raises(ValueError, match="listing"):
        short.first_release_losses()


def test_nodes_without_extras_share_one_empty_value_that_refuses_writes():
    """Two fresh empty dicts per node used to cost about the input's size again on a record-dense
    session: a node without extras holds the one shared empty value, which cannot be written to
    by mistake, and dumps as a node without extras however its empty value came."""
    given_empty = ir.TextPart(text="t", unknown={}, native={})
    assert given_empty.unknown is ir.NO_EXTRAS and given_empty.native is ir.NO_EXTRAS
    assert ir.TextPart(text="u").unknown is ir.NO_EXTRAS
    with pytest.raises(TypeError, match="shared"):
        ir.TextPart(text="u").unknown["x"] = 1
    with pytest.raises(TypeError, match="shared"):
        ir.TextPart(text="u").native.setdefault("x", {})
    assert ir.NO_EXTRAS == {}
    codec = codec_for(namespaces())
    assigned = ir.TextPart(text="v")
    assigned.unknown = {}  # assigned after construction: a dict of its own, still empty
    assert codec.dump_part(assigned) == codec.dump_part(ir.TextPart(text="v")) == {"kind": "text", "text": "v"}
    assert codec.dump_part(ir.TextPart(text="w", unknown={"x": 1})) == {"kind": "text", "text": "w", "x": 1}


def test_events_without_causes_share_one_empty_list_that_refuses_writes():
    def event(**kwargs):
        return ir.Event(id="e", sequence=0, actor_id="a", provenance=ir.Provenance(mode="reported", producer="p"),
                        body=ir.Note(parts=[], category="c"), **kwargs)
    assert event().causes is ir.NO_CAUSES and event(causes=[]).causes is ir.NO_CAUSES
    with pytest.raises(TypeError, match="shared"):
        event().causes.append(ir.EventRef(event_id="x"))
    codec = codec_for(namespaces())
    caused = event(causes=[ir.EventRef(event_id="x")])
    assert codec.dump_event(caused)["causes"] == [{"event_id": "x"}]
    assert codec.dump_event(event())["causes"] == []
    assert jsonio.encode(codec.wire_event(event()), compact=True) == jsonio.encode(codec.dump_event(event()),
                                                                                   compact=True)


def test_validated_values_share_only_the_nodes_the_events_share():
    """Output validation takes the events whole as JSON values: a node the events hold in
    common (one provenance, one empty list of causes) is one dict or list there too. A node
    equal to the one before but not the same object keeps values of its own: sharing follows
    identity, never ``==`` (which takes 1, 1.0 and true for one value)."""
    shared = ir.Provenance(mode="reported", producer="p")

    def event(k, provenance=shared):
        return ir.Event(id=f"e{k}", sequence=k, actor_id="a", provenance=provenance,
                        body=ir.Note(parts=[], category="c"))
    events = [event(0), event(1), event(2, ir.Provenance(mode="reported", producer="p")), event(3),
              event(4, ir.Provenance(mode="reported", producer="p", method="m"))]
    codec = codec_for(namespaces())
    items = [codec.wire_event(ev) for ev in events] + [{"as": "is"}]
    assert not any(isinstance(item, dict) for item in items[:-1])  # the fast path: structs
    values = list(jsonio.json_values(items))
    assert values == [msgspec.to_builtins(item) for item in items]
    assert values[-1] is items[-1]  # JSON values already
    assert values[0]["provenance"] is values[1]["provenance"]
    assert len({id(v["provenance"]) for v in values[1:5]}) == 4  # equal is not enough
    assert values[0]["causes"] is values[1]["causes"] is values[4]["causes"]
    assert values[0]["data"] is not values[1]["data"]  # bodies of their own


@given(asif_sessions())
def test_validated_values_are_each_events_own_values(doc):
    """Whatever the events share or not, their values are what msgspec makes of each alone."""
    codec = codec_for(namespaces())
    ir_doc = codec.load_document(msgspec.json.decode(msgspec.json.encode(doc)))
    items = [codec.wire_event(ev) for ev in ir_doc.events]
    values = list(jsonio.json_values(items))
    assert msgspec.json.encode(values) == msgspec.json.encode([msgspec.to_builtins(item) for item in items])


@given(asif_sessions())
def test_wire_events_encode_as_their_dumps_and_meet_the_same_limits(doc):
    """The fast path (IR nodes without extras written by msgspec) against the general one (the
    codec's dump): the same bytes for every event, and the output limits see the same depth,
    integers and strings in either."""
    codec = codec_for(namespaces())
    ir_doc = codec.load_document(msgspec.json.decode(msgspec.json.encode(doc)))
    for ev in ir_doc.events:
        wire, dumped = codec.wire_event(ev), codec.dump_event(ev)
        encoded = jsonio.encode(wire, compact=True)
        assert encoded == jsonio.encode(dumped, compact=True)
        for depth in (2, 3, 4, 5, 6, 8):
            limits = Limits(max_depth=depth)
            assert _output_refusal(encoded, wire, limits) == _output_refusal(encoded, dumped, limits)


def _output_refusal(data, value, limits):
    try:
        check_output(data, [value], limits, "t", at=("events",))
    except InvalidInput as exc:
        return exc.problems
    return None


def test_a_wire_event_too_deep_is_named_by_its_json_path():
    codec = codec_for(namespaces())
    deep = json.loads("[" * 6 + "]" * 6)
    ev = ir.Event(id="e", sequence=0, actor_id="a", provenance=ir.Provenance(mode="reported", producer="p"),
                  body=ir.ToolCall(call_id="c", tool_id="t", arguments={"x": deep}, arguments_status="complete"))
    wire = codec.wire_event(ev)
    assert not isinstance(wire, dict)  # the fast path
    problem = _refusal({"events": []}, [wire], Limits(max_depth=8))
    assert problem == _refusal({"events": []}, [codec.dump_event(ev)], Limits(max_depth=8))
    assert problem.path == "/events/0/data/arguments/x/0/0/0"  # the first array nested past 8 levels
