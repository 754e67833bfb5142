"""pytest fixtures for the real-client tests (loaded by tests/conftest.py as a plugin).

- ``mock_servers``: starts ``MockModelServer``s for a test and stops every one at teardown.
- ``claude_code``: the real Claude Code with a temporary HOME and project, talking to a mock
  Anthropic server; ``claude_code.resume(transcript)`` gives the request it sent after resuming.
- ``require_client(find)``: the client, or a skip saying why; under CI=true a failure instead.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from tests.agents.claude import ClaudeCode, ClientMissing, Resumed, find_claude, read_jsonl
from tests.agents.mock_server import AnthropicScript, Handler, MockModelServer, anthropic_routes

T = TypeVar("T")

SESSION_ID = "5e55a1d0-0000-4000-8000-000000000042"  # any id: --resume finds the file by its name
NEXT_PROMPT = "Please continue."


def require_client(find: Callable[[], T]) -> T:
    """``find()``'s client; a missing one skips the test, or fails it under CI=true."""
    try:
        return find()
    except ClientMissing as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true and {exc}")
        pytest.skip(str(exc))


@pytest.fixture
def mock_servers() -> Iterator[Callable[..., MockModelServer]]:
    started: list[MockModelServer] = []

    def start(routes: dict[str, Handler] | None = None, **kwargs: Any) -> MockModelServer:
        server = MockModelServer(routes, **kwargs).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


class ClaudeHarness:
    """The real client, a mock Anthropic server and its script, in one temporary folder."""

    def __init__(self, root: Path, server_start: Callable[..., MockModelServer]):
        self.script = AnthropicScript()
        self.server = server_start(anthropic_routes(self.script))
        self.client = ClaudeCode(root / "home", root / "project", self.server.base_url,
                                 require_client(find_claude))

    def resume(self, transcript: Path | bytes, session_id: str = SESSION_ID,
               files: dict[str, bytes] | None = None, prompt: str = NEXT_PROMPT) -> Resumed:
        """Resume ``transcript`` (with its subagent ``files``, see ClaudeCode.place) with ``prompt``:
        the first conversation request of that run."""
        placed = self.client.place(transcript, session_id, files)
        before = read_jsonl(placed)
        seen = len(self.script.conversation)
        run = self.client.resume(session_id, prompt).check()
        sent = self.script.conversation[seen:]
        assert not self.server.errors, self.server.errors
        assert sent, f"the client sent no conversation request\nstdout: {run.stdout}\nstderr: {run.stderr}"
        return Resumed(run, sent[0].body, prompt, before, read_jsonl(placed))


@pytest.fixture
def claude_code(tmp_path: Path, mock_servers: Callable[..., MockModelServer]) -> ClaudeHarness:
    return ClaudeHarness(tmp_path, mock_servers)
