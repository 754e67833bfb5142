"""Make corpus/claude-code/ with the real Claude Code: transcripts nobody hand-wrote.

    python -m tests.agents.make_claude_corpus [--out corpus/claude-code] [--only NAME ...]

Each scenario drives the pinned client (tests/agents/node_modules/.bin/claude) through a task in
a fresh project folder, answered by a scripted mock model on 127.0.0.1, and copies the session
file the client wrote, and its ``subagents/`` folder, in the client's own layout to
``OUT/<name>/<session id>.jsonl`` and ``OUT/<name>/<session id>/subagents/``.
The project lives at one fixed path, ``/tmp/asif-claude-corpus/project``, so the transcripts name
the same working directory on every run; HOME is a fresh folder beside it, never the real one.
Session ids, tool-call ids, model message ids and file contents are fixed; record uuids,
timestamps, durations and the subagents' ids are the client's own and change from run to run.
"""

from __future__ import annotations

import argparse
import base64
import json
import shutil
import struct
import sys
import uuid
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.agents.claude import ClaudeCode, find_claude, read_jsonl
from tests.agents.mock_server import (
    AnthropicScript,
    MockModelServer,
    Recorded,
    Reply,
    anthropic_routes,
    text,
    thinking,
    tool_use,
)

ROOT = Path("/tmp/asif-claude-corpus")  # the project is ROOT/project, HOME is ROOT/home
OUT = Path(__file__).resolve().parents[2] / "corpus" / "claude-code"
MODEL = "claude-sonnet-4-5-20250929"
SUBAGENT_MARK = "(subagent task)"


def session_id(name: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"asif-convert/corpus/claude-code/{name}"))


def red_square_png(size: int = 8) -> bytes:
    """A small valid PNG, made here so the corpus needs no binary file."""
    rows = b"".join(b"\x00" + bytes((200, 30, 30)) * size for _ in range(size))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 9))
            + chunk(b"IEND", b""))


class Model:
    """The mock model: the main conversation's script, and the subagents' when a task starts one."""

    def __init__(self) -> None:
        self.main = AnthropicScript(is_side=lambda body: False)
        self.sub = AnthropicScript(is_side=lambda body: False)

    def script(self, main: list[Any], sub: list[Any] | None = None) -> None:
        self.main.turns = list(main)
        self.sub.turns = list(sub or [])

    def __call__(self, request: Recorded) -> Reply:
        body = request.body if isinstance(request.body, dict) else {}
        first = json.dumps((body.get("messages") or [None])[0])
        return (self.sub if SUBAGENT_MARK in first else self.main)(request)

    def check_used_up(self, name: str) -> None:
        left = len(self.main.turns) + len(self.sub.turns)
        if left:
            raise SystemExit(f"{name}: the client asked for {left} turn(s) fewer than scripted")


# -- scenarios: each drives the client through one task in a fresh project ----------------------

HELLO = 'import sys\n\nprint("Helo, world")\nif "--strict" in sys.argv:\n    sys.exit("strict mode is not supported")\n'


def tools(cc: ClaudeCode, model: Model, sid: str) -> None:
    """Read, Edit, Write, parallel calls, a failing command, thinking, and a second run."""
    project = cc.project
    (project / "hello.py").write_text(HELLO)
    hello = str(project / "hello.py")
    model.script([
        [thinking("The greeting is misspelled; I should read the file and see the project first.",
                  "EqQBCkYIBxgCKkDmockSignatureForTheCorpusOnly"),
         text("I'll look at hello.py and the project first."),
         tool_use("toolu_01Read", "Read", {"file_path": hello}),
         tool_use("toolu_02Ls", "Bash", {"command": "ls -1", "description": "List the project files"})],
        [tool_use("toolu_03Edit", "Edit", {"file_path": hello, "old_string": '"Helo, world"',
                                           "new_string": '"Hello, world"'})],
        [tool_use("toolu_04Write", "Write", {"file_path": str(project / "README.md"),
                                             "content": "# hello\n\nPrints a greeting: `python3 hello.py`.\n"})],
        [tool_use("toolu_05Run", "Bash", {"command": "python3 hello.py --strict",
                                          "description": "Run the script in strict mode"})],
        [text("The greeting is fixed and README.md is written. `--strict` is not supported yet: "
              "the script exits with status 1.")],
    ])
    cc.prompt("Fix the greeting in hello.py, add a README, then try it with --strict.",
              "--session-id", sid).check()
    model.script([
        [tool_use("toolu_06Run", "Bash", {"command": "python3 hello.py", "description": "Run the script"})],
        [text("It prints `Hello, world`.")],
    ])
    cc.resume(sid, "Run it without --strict.").check()


def image(cc: ClaudeCode, model: Model, sid: str) -> None:
    """An image read by the Read tool, and an image the user sends in the prompt."""
    png = red_square_png()
    (cc.project / "red.png").write_bytes(png)
    model.script([[tool_use("toolu_11Img", "Read", {"file_path": str(cc.project / "red.png")})],
                  [text("A red square, 8 by 8 pixels.")]])
    cc.prompt("What is in red.png?", "--session-id", sid).check()
    model.script([[text("That is the same red square.")]])
    prompt = {"type": "user", "message": {"role": "user", "content": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                     "data": base64.b64encode(png).decode()}},
        {"type": "text", "text": "And this one?"}]}}
    cc.run("-p", "--resume", sid, "--input-format", "stream-json", "--output-format", "stream-json",
           "--verbose", stdin=json.dumps(prompt) + "\n").check()


def fork(cc: ClaudeCode, model: Model, sid: str) -> None:
    """An edited prompt: the second question asked again, differently, from the first answer."""
    model.script([[text("7.")]])
    cc.prompt("Name a prime number.", "--session-id", sid).check()
    model.script([[text("11.")]])
    cc.resume(sid, "Name a larger one.").check()
    first_answer = next(r for r in read_jsonl(cc.session_file(sid)) if r.get("type") == "assistant")
    model.script([[text("2.")]])
    cc.run("-p", "--resume", sid, "--resume-session-at", first_answer["uuid"], "Name the even prime instead.").check()


def subagent(cc: ClaudeCode, model: Model, sid: str) -> None:
    """A subagent (the Agent tool) that runs a command and reads a file, in subagents/."""
    (cc.project / "notes.txt").write_text("alpha\nbeta\ngamma\n")
    model.script(
        [[text("I'll ask a subagent to count them."),
          tool_use("toolu_21Agent", "Agent", {"description": "Count lines in notes.txt",
                                              "prompt": f"{SUBAGENT_MARK} Count the lines of notes.txt "
                                                        "and report the first one.",
                                              "subagent_type": "general-purpose"})],
         [text("notes.txt has 3 lines; the first is `alpha`.")]],
        sub=[[tool_use("toolu_22Wc", "Bash", {"command": "wc -l notes.txt", "description": "Count lines"})],
             [tool_use("toolu_23Read", "Read", {"file_path": str(cc.project / "notes.txt"), "limit": 1})],
             [text("3 lines; the first line is `alpha`.")]])
    cc.prompt("How many lines does notes.txt have? Use a subagent.", "--session-id", sid).check()


def compact(cc: ClaudeCode, model: Model, sid: str) -> None:
    """A manual /compact after a few turns, and a turn after it."""
    (cc.project / "notes.txt").write_text("alpha\nbeta\ngamma\n")
    model.script([[tool_use("toolu_31Ls", "Bash", {"command": "ls -1", "description": "List files"})],
                  [text("There is one file, notes.txt.")]])
    cc.prompt("Which files are here?", "--session-id", sid).check()
    model.script([[tool_use("toolu_32Read", "Read", {"file_path": str(cc.project / "notes.txt")})],
                  [text("It lists alpha, beta and gamma.")]])
    cc.resume(sid, "What does notes.txt say?").check()
    model.script([[text("<summary>The user asked which files exist (notes.txt) and what notes.txt says "
                        "(alpha, beta, gamma). Nothing is pending.</summary>")]])
    cc.resume(sid, "/compact").check()
    model.script([[text("We listed the files and read notes.txt.")]])
    cc.resume(sid, "What have we done so far?").check()


SCENARIOS: dict[str, Callable[[ClaudeCode, Model, str], None]] = {
    "tools": tools, "image": image, "fork": fork, "subagent": subagent, "compact": compact,
}


def make(name: str, out: Path, binary: Path, root: Path = ROOT) -> Path:
    """Run scenario ``name`` in ``root`` (made afresh, removed after) and copy what the client wrote."""
    if root.exists():
        shutil.rmtree(root)
    (root / "project").mkdir(parents=True)
    model = Model()
    with MockModelServer(anthropic_routes(model.main) | {"/v1/messages": model}) as server:
        cc = ClaudeCode(root / "home", root / "project", server.base_url, binary)
        sid = session_id(name)
        SCENARIOS[name](cc, model, sid)
        if server.errors:
            raise SystemExit(f"{name}: the mock failed: {server.errors}")
        model.check_used_up(name)
    # The client's own layout, one project folder per scenario: <id>.jsonl and <id>/subagents/.
    if (out / name).exists():
        shutil.rmtree(out / name)
    (out / name).mkdir(parents=True)
    target = out / name / f"{sid}.jsonl"
    shutil.copyfile(cc.session_file(sid), target)
    if (cc.sessions_dir / sid).is_dir():
        shutil.copytree(cc.sessions_dir / sid, out / name / sid)
    shutil.rmtree(root)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--only", nargs="*", choices=sorted(SCENARIOS), default=sorted(SCENARIOS))
    args = parser.parse_args(argv)
    binary = find_claude()
    args.out.mkdir(parents=True, exist_ok=True)
    for name in args.only:
        print(make(name, args.out, binary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
