"""Run the real Claude Code against a mock model server: a temporary HOME, a temporary project.

Never the real home directory: every run gets ``HOME`` set to a folder the caller made (usually
pytest's tmp_path), and the environment is built from nothing but ``PATH`` and what the client
needs to talk to 127.0.0.1 only. A run is bounded by a timeout; on timeout or any failure the
client's whole process group is killed by its pid.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

AGENTS = Path(__file__).resolve().parent
CLAUDE = AGENTS / "node_modules" / ".bin" / "claude"
# Tools the client may run without asking, inside the temporary project only. Not
# `--permission-mode bypassPermissions`: the client refuses it when run as root.
ALLOWED_TOOLS = "Bash,Read,Edit,Write,Agent,Task,Glob,Grep"
RUN_TIMEOUT = 120.0  # seconds for one client run; a run usually takes 1-3 s


class ClientMissing(Exception):
    """The pinned client is not installed (``npm ci --prefix tests/agents``)."""


def find_claude() -> Path:
    """The pinned Claude Code binary, or ClientMissing saying how to install it."""
    if not CLAUDE.exists():
        raise ClientMissing(f"Claude Code is not installed at {CLAUDE}: "
                            "run `npm ci --prefix tests/agents --no-audit --no-fund`")
    return CLAUDE


def encode_cwd(cwd: Path | str) -> str:
    """The folder name under ``~/.claude/projects/`` for a working directory."""
    return re.sub(r"[^A-Za-z0-9]", "-", str(cwd))


def client_env(home: Path, base_url: str) -> dict[str, str]:
    """The whole environment of a client run: no variable of the caller's leaks in but PATH."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TZ": "UTC",
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": "sk-test",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
    }


@dataclass
class Run:
    """One finished client run."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str

    def check(self) -> Run:
        if self.returncode != 0:
            raise AssertionError(f"claude {' '.join(self.args)} exited {self.returncode}\n"
                                 f"stdout: {self.stdout[-2000:]}\nstderr: {self.stderr[-2000:]}")
        return self


def run_process(argv: list[str], cwd: Path, env: dict[str, str], timeout: float,
                stdin: str | None = None) -> tuple[int, str, str]:
    """Run ``argv`` in its own process group; on timeout kill the group by its pid, then raise."""
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc.pid)
        out, err = proc.communicate()
        raise AssertionError(f"{argv[0]} timed out after {timeout:.0f} s\nstdout: {out[-2000:]}\n"
                             f"stderr: {err[-2000:]}") from None
    finally:
        if proc.poll() is None:
            kill_group(proc.pid)
    kill_group(proc.pid)  # anything the client left running in its group
    return proc.returncode, out, err


def kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


@dataclass
class ClaudeCode:
    """A temporary HOME and project for the real client, talking to ``base_url``.

    ``home`` and ``project`` are created if missing; ``project`` is the client's working
    directory, so its sessions live in ``sessions_dir``.
    """

    home: Path
    project: Path
    base_url: str
    binary: Path = field(default_factory=find_claude)
    timeout: float = RUN_TIMEOUT
    extra_env: dict[str, str] = field(default_factory=dict)  # client settings for one scenario

    def __post_init__(self) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        self.project.mkdir(parents=True, exist_ok=True)
        if Path(self.home).resolve() == Path.home().resolve():
            raise AssertionError("refusing to run the client against the real home directory")

    @property
    def sessions_dir(self) -> Path:
        return self.home / ".claude" / "projects" / encode_cwd(self.project.resolve())

    def session_file(self, session_id: str) -> Path:
        return self.sessions_dir / f"{session_id}.jsonl"

    def run(self, *args: str, timeout: float | None = None, stdin: str | None = None) -> Run:
        argv = [str(self.binary), *args]
        env = client_env(self.home, self.base_url) | self.extra_env
        code, out, err = run_process(argv, self.project, env, timeout or self.timeout, stdin)
        return Run(list(args), code, out, err)

    def prompt(self, text: str, *options: str) -> Run:
        """A new print-mode session; the tools in ALLOWED_TOOLS run without asking."""
        return self.run("-p", f"--allowedTools={ALLOWED_TOOLS}", *options, text)

    def resume(self, session_id: str, text: str, *options: str) -> Run:
        return self.run("-p", f"--allowedTools={ALLOWED_TOOLS}", "--resume", session_id, *options, text)

    def place(self, transcript: Path | bytes, session_id: str, files: dict[str, bytes] | None = None) -> Path:
        """Put a transcript where ``--resume`` finds it, and ``files`` (paths relative to the
        project's session folder: ``<id>/subagents/agent-<a>.jsonl``, ``agent-<a>.jsonl``) beside it."""
        target = self.session_file(session_id)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(transcript if isinstance(transcript, bytes) else transcript.read_bytes())
        for name, data in (files or {}).items():
            extra = (self.sessions_dir / name).resolve()
            if not extra.is_relative_to(self.sessions_dir.resolve()):
                raise AssertionError(f"{name} is outside the session folder")
            extra.parent.mkdir(parents=True, exist_ok=True)
            extra.write_bytes(data)
        return target


def session_folder(folder: Path) -> tuple[Path, dict[str, bytes]]:
    """A project folder of the client's layout holding one session: the session file (the one
    ``.jsonl`` not named ``agent-*``) and every other file in the folder, by relative path."""
    sessions = [p for p in folder.glob("*.jsonl") if not p.name.startswith("agent-")]
    if len(sessions) != 1:
        raise AssertionError(f"{folder} holds {len(sessions)} sessions, not one")
    files = {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
             if p.is_file() and p != sessions[0]}
    return sessions[0], files


def read_jsonl(path: Path) -> list[Any]:
    """The JSON values of a transcript's complete lines (a cut or broken line is skipped)."""
    return jsonl_values(path.read_bytes())


def jsonl_values(data: bytes) -> list[Any]:
    """The JSON values of the complete lines of a transcript's bytes (a cut or broken line is skipped)."""
    values = []
    for line in data.decode("utf-8").splitlines():
        if line.strip():
            try:
                values.append(json.loads(line))
            except ValueError:
                continue
    return values


# -- what the client sends after resuming ------------------------------------------------------

# The one text the client puts before the first user message on every run (its user context:
# today's date, and CLAUDE.md files when there are any; the temporary HOME and project have none).
USER_CONTEXT = re.compile(
    r"<system-reminder>\nAs you answer the user's questions, you can use the following context:\n"
    r"# currentDate\nToday's date is \d{4}-\d{2}-\d{2}\.\n\n"
    r"      IMPORTANT: this context may or may not be relevant to your tasks\. You should not respond "
    r"to this context unless it is highly relevant to your task\.\n</system-reminder>\n\n?")


# Tools the client renames in what it sends from a resumed file (2.1.197): the subagent tool was
# called Task before it was called Agent, and a recorded Task call goes to the model as Agent.
CLIENT_TOOL_NAMES = {"Task": "Agent"}


@dataclass
class Resumed:
    """A resume run: the first conversation request the client sent, and the transcript around it."""

    run: Run
    request: dict[str, Any]
    prompt: str
    before: list[Any]  # the transcript's records as placed
    after: list[Any]  # the transcript's records once the run ended (the client appends to it)

    def history(self) -> list[dict[str, Any]]:
        """The request's messages as the resumed file gave them, without the client's additions.

        Each addition is identified exactly, never by a loose match:
        - the message of the new prompt and what the client sends beside it (its agent and skill
          listings), i.e. everything from the last user message holding the prompt's text block;
        - the records the client appended to the file during this run before the prompt (to a
          file whose last record is not an assistant turn it adds its own "No response
          requested.", after a compaction a "Continue from where you left off." first): their
          blocks, the last ones equal to them, in order (the file's own attachments it sends
          between them stay);
        - the user-context reminder it puts first in the first user message (USER_CONTEXT);
        - the ``cache_control`` marks it puts on the last blocks.
        Content given as a string is read as one text block, and consecutive messages of one role
        as one message (the client merges them too), so two files that differ only there compare
        equal.
        """
        messages = [normalized_message(m) for m in self.request["messages"]]
        blocks = [(m["role"], b) for m in messages[:_prompt_index(messages, self.prompt)] for b in m["content"]]
        end = len(blocks)  # the appended blocks are the last of their kind, in their order, but
        # the client may send the file's own attachments between them: those stay
        for record in reversed(self._appended_before_prompt()):
            for block in reversed(normalized_message(record["message"])["content"]):
                end -= 1
                while end >= 0 and blocks[end] != (record["message"]["role"], block):
                    end -= 1
                if end < 0:
                    raise AssertionError(f"the client appended record {record.get('uuid')} "
                                         f"but did not send its {block!r}")
                del blocks[end]
        if blocks and blocks[0][0] == "user" and blocks[0][1].get("type") == "text" and \
                USER_CONTEXT.fullmatch(blocks[0][1].get("text", "")):
            blocks.pop(0)
        history: list[dict[str, Any]] = []
        for role, block in blocks:
            if history and history[-1]["role"] == role:
                history[-1]["content"].append(block)
            else:
                history.append({"role": role, "content": [block]})
        return history

    def _appended_before_prompt(self) -> list[Any]:
        added = []
        for record in self.after[len(self.before):]:
            if not isinstance(record, dict) or record.get("type") not in ("user", "assistant"):
                continue
            if record["type"] == "user" and _prompt_text(record) == self.prompt:
                break
            added.append(record)
        return added


def normalized_message(message: dict[str, Any]) -> dict[str, Any]:
    """``message`` with its content as a list of blocks and no ``cache_control`` marks."""
    content = message.get("content")
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    blocks = [{k: v for k, v in block.items() if k != "cache_control"} if isinstance(block, dict) else block
              for block in content or []]
    return {"role": message.get("role"), "content": blocks}


def _prompt_index(messages: list[dict[str, Any]], prompt: str) -> int:
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message["role"] == "user" and isinstance(message["content"], list) and \
                {"type": "text", "text": prompt} in message["content"]:
            return index
    raise AssertionError(f"the new prompt {prompt!r} is not in the request")


def _prompt_text(record: dict[str, Any]) -> Any:
    content = (record.get("message") or {}).get("content")
    if isinstance(content, list) and content and isinstance(content[-1], dict):
        return content[-1].get("text")
    return content
