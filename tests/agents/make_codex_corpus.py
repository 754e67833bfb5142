"""Make corpus/codex/ again: the real Codex CLI, driven by a scripted mock model through tasks in
a temporary project, writes the rollouts itself; this script only copies them into the corpus.

    PYTHONPATH=. python tests/agents/make_codex_corpus.py [NAME ...]

Each scenario is one or more runs (``codex exec`` for the first, ``codex exec resume`` for the
next ones) with the replies the mock model gives, in order. Tools run with approvals and the
sandbox off, inside the temporary project folder only. The rollouts keep what Codex wrote
(times, ids, the temporary paths): they are real files, not templates.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

from tests.agents import codex
from tests.agents.mock_server import MockModelServer, ResponsesScript, responses_routes

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "corpus" / "codex"
WORK = Path("/tmp/asif-codex-corpus")
IMAGE = Path(__file__).with_name("red-2x2.png")
Reply = list[dict[str, Any]]


def say(text: str, ident: str = "msg_a") -> dict[str, Any]:
    return {"type": "message", "role": "assistant", "id": ident,
            "content": [{"type": "output_text", "text": text, "annotations": []}]}


def call(name: str, arguments: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {"type": "function_call", "name": name, "arguments": json.dumps(arguments), "call_id": call_id,
            "id": f"fc_{call_id}"}


def shell(cmd: str, call_id: str) -> dict[str, Any]:
    return call("exec_command", {"cmd": cmd, "yield_time_ms": 5000}, call_id)


def reasoning(summary: str, ident: str) -> dict[str, Any]:
    return {"type": "reasoning", "id": ident, "summary": [{"type": "summary_text", "text": summary}],
            "encrypted_content": f"gAAAAB-opaque-{ident}"}


PATCH = """*** Begin Patch
*** Update File: notes.txt
@@
-first line
+first line, patched
*** End Patch
"""

# name -> runs: (extra exec options, prompt, replies)
SCENARIOS: dict[str, list[tuple[list[str], str, list[Reply]]]] = {
    "hello": [([], "Say hello.", [[say("Hello! How can I help?")]])],
    "failing-command": [([], "List the missing folder, then the project.", [
        [reasoning("I will list the folder first.", "rs_1"), shell("ls missing-folder", "call_ls1")],
        [shell("printf 'first line\\nsecond line\\n' > notes.txt && ls", "call_ls2")],
        [say("missing-folder does not exist; notes.txt is now in the project.")],
    ])],
    "patch": [([], "Make notes.txt and patch its first line.", [
        [shell("printf 'first line\\n' > notes.txt", "call_mk")],
        [shell(f"apply_patch <<'EOF'\n{PATCH}EOF", "call_patch_shell")],
        [{"type": "custom_tool_call", "name": "apply_patch", "input": PATCH, "call_id": "call_patch_free",
          "id": "ctc_1"}],
        [shell("cat notes.txt", "call_cat")],
        [say("Patched.")],
    ])],
    "parallel": [([], "Count the files and print the date, at once.", [
        [shell("ls | wc -l", "call_p1"), shell("echo two", "call_p2"), shell("exit 3", "call_p3")],
        [say("Done, one of them failed with exit code 3.")],
    ])],
    "image": [(["-i", str(IMAGE)], "What colour is this image?", [
        [call("view_image", {"path": str(IMAGE)}, "call_img")],
        [say("It is red.")],
    ])],
    "resumed": [
        ([], "Remember the word apple.", [[say("Remembered: apple.")]]),
        (["resume", "{id}"], "Which word?", [[reasoning("Recall it.", "rs_2"), say("apple", "msg_b")]]),
    ],
    "web-search": [([], "Search the web for ASIF.", [
        [{"type": "web_search_call", "id": "ws_1", "status": "completed",
          "action": {"type": "search", "query": "agent session interchange format"}}, say("Found it.")],
    ])],
    "compaction": [
        ([], "Write a long answer.", [[say("A long answer. " * 40)]]),
        (["-c", "model_auto_compact_token_limit=50", "resume", "{id}"], "Go on.",
         [[say("Summary: the user asked for a long answer; it was given.", "msg_sum")], [say("Going on.")],
          [say("Still going on.")]]),
    ],
}


def make(name: str) -> Path:
    runs = SCENARIOS[name]
    root = WORK / name
    shutil.rmtree(root, ignore_errors=True)
    sandbox = codex.Sandbox(root).make()
    shutil.copy(IMAGE, sandbox.project / IMAGE.name)
    session_id = ""
    for options, prompt, replies in runs:
        with MockModelServer(responses_routes(ResponsesScript(replies))) as server:
            args = ["--dangerously-bypass-approvals-and-sandbox",
                    *[o.replace("{id}", session_id) for o in options], "--", prompt]
            done = codex.run(sandbox, server, args)
        if done.returncode != 0:
            raise SystemExit(f"{name}: codex exited {done.returncode}: {done.stderr[-2000:]}")
        if not session_id:
            session_id = codex.meta_of(sandbox.rollouts()[0].read_bytes())["id"]
    rollouts = sandbox.rollouts()
    if len(rollouts) != 1:
        raise SystemExit(f"{name}: expected one rollout, found {rollouts}")
    target = OUT / f"{name}.jsonl"
    shutil.copy(rollouts[0], target)
    return target


def main() -> None:
    codex.require_codex = lambda: codex.BIN  # type: ignore[assignment]  # outside pytest
    OUT.mkdir(parents=True, exist_ok=True)
    for name in sys.argv[1:] or SCENARIOS:
        print(make(name).relative_to(ROOT))


if __name__ == "__main__":
    main()
