"""Run the real Codex CLI (pinned in tests/agents/package.json) against the mock model server:
always with a temporary CODEX_HOME and HOME, inside a temporary project folder, no network.

``resume`` places a rollout where Codex looks for it
(``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl``), runs
``codex exec ... resume <id> "<prompt>"`` and returns the ``input`` of the first request Codex
sent: the history it resumed, between its own developer and context messages.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.agents.claude import ClientMissing
from tests.agents.fixtures import require_client
from tests.agents.mock_server import MockModelServer, ResponsesScript, responses_routes

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / "tests" / "agents" / "node_modules" / ".bin" / "codex"
CODEX = BIN if BIN.exists() else None
PROVIDER = "mock"
MODEL = "gpt-5-codex"


def find_codex() -> Path:
    """The pinned Codex binary, or ClientMissing saying how to install it."""
    if CODEX is None:
        raise ClientMissing(f"Codex CLI is not installed at {BIN}: npm ci --prefix tests/agents --no-audit --no-fund")
    return CODEX


def require_codex() -> Path:
    """The pinned client; skipped where it is not installed, a failure under CI=true."""
    return require_client(find_codex)


def provider_config(server: MockModelServer, provider: str) -> list[str]:
    """``-c`` options that send provider ``provider`` to the mock server. Codex resumes a rollout
    only under its recorded provider; the built-in ``openai`` can only be re-based."""
    base = f"{server.base_url}/v1"
    if provider == "openai":
        return ["-c", f'openai_base_url="{base}"']
    return ["-c", f'model_provider="{provider}"',
            "-c", f'model_providers.{provider}={{name="{provider}",base_url="{base}",'
                  'wire_api="responses",env_key="OPENAI_API_KEY"}']


@dataclass
class Sandbox:
    """A temporary home, CODEX_HOME and project folder."""

    root: Path

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def codex_home(self) -> Path:
        return self.home / ".codex"

    @property
    def project(self) -> Path:
        return self.root / "project"

    def make(self) -> Sandbox:
        for folder in (self.codex_home, self.project):
            folder.mkdir(parents=True, exist_ok=True)
        return self

    def env(self) -> dict[str, str]:
        return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.home),
                "CODEX_HOME": str(self.codex_home), "OPENAI_API_KEY": "sk-test", "LANG": "C.UTF-8",
                "TZ": "UTC", "NO_COLOR": "1"}

    def rollouts(self) -> list[Path]:
        return sorted((self.codex_home / "sessions").rglob("rollout-*.jsonl"))


def run(sandbox: Sandbox, server: MockModelServer, args: list[str], *, provider: str = PROVIDER,
        model: str = MODEL, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    command = [str(require_codex()), "exec", "--skip-git-repo-check", *provider_config(server, provider),
               "-m", model, *args]
    return subprocess.run(command, cwd=sandbox.project, env=sandbox.env(), capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def place(sandbox: Sandbox, session_id: str, data: bytes, day: str = "2025/01/02",
          stamp: str = "2025-01-02T03-04-05") -> Path:
    path = sandbox.codex_home / "sessions" / day / f"rollout-{stamp}-{session_id}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def meta_of(data: bytes) -> dict[str, Any]:
    """The first line's session_meta payload."""
    first = json.loads(data.split(b"\n", 1)[0])
    return first["payload"] if first.get("type") == "session_meta" else first


def resume(tmp: Path, data: bytes, *, prompt: str = "next prompt", session_id: str | None = None,
           provider: str | None = None) -> list[dict[str, Any]]:
    """Resume rollout ``data`` in the real Codex; the ``input`` of the first request it sent."""
    meta = meta_of(data)
    session_id = session_id or meta["id"]
    sandbox = Sandbox(tmp).make()
    place(sandbox, session_id, data)
    return resume_placed(sandbox, session_id, provider or meta.get("model_provider") or PROVIDER, prompt)


def resume_placed(sandbox: Sandbox, session_id: str, provider: str = "openai",
                  prompt: str = "next prompt") -> list[dict[str, Any]]:
    """Resume session ``session_id`` already in the sandbox's CODEX_HOME; the ``input`` of the
    first request Codex sent."""
    script = ResponsesScript()
    with MockModelServer(responses_routes(script)) as server:
        done = run(sandbox, server, ["resume", session_id, prompt], provider=provider)
    if not script.conversation:
        raise AssertionError(f"Codex sent no request (exit {done.returncode}): {done.stderr[-2000:]}")
    return list(script.conversation[0].body["input"])
