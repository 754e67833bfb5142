"""Start and stop the mock model server (tests/agents/mock_model.py) as a process on 127.0.0.1,
stopped by its pid; read back the requests it recorded."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MOCK = Path(__file__).with_name("mock_model.py")


@dataclass
class MockModel:
    port: int
    record: Path

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def requests(self, path: str | None = None) -> list[dict[str, Any]]:
        """The bodies of the requests recorded so far (of one endpoint path, when given)."""
        if not self.record.exists():
            return []
        entries = [json.loads(line) for line in self.record.read_text().splitlines() if line]
        return [e["body"] for e in entries if path is None or e["path"] == path]


@contextmanager
def mock_model(folder: Path, replies: list[list[dict[str, Any]]] | None = None) -> Iterator[MockModel]:
    """A mock model server answering with ``replies`` in order, running while the block runs."""
    folder.mkdir(parents=True, exist_ok=True)
    script, record, port_file = folder / "script.json", folder / "requests.jsonl", folder / "port"
    script.write_text(json.dumps(replies or []))
    for stale in (record, port_file):
        stale.unlink(missing_ok=True)
    process = subprocess.Popen([sys.executable, str(MOCK), "--script", str(script), "--record", str(record),
                                "--port-file", str(port_file)])
    try:
        deadline = time.monotonic() + 10
        while not port_file.exists():
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the mock model server did not start")
            time.sleep(0.02)
        yield MockModel(int(port_file.read_text()), record)
    finally:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
