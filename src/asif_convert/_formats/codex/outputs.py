"""Codex tool outputs: always strings, in three encodings, none with an error flag.

* JSON inside the string: ``{"output": "...", "metadata": {"exit_code": N, "duration_seconds": S}}``
  (mid-2025 clients): the text is ``output``; the metadata is kept to write the string back;
* plain text: ``Exit code: N\\nWall time: ...\\nOutput:\\n...`` (the shell tool);
* unified exec: ``...Process exited with code N\\n...Output:\\n...`` (``exec_command``).

The last two are what the model read: the text is the whole string. The outcome comes from the
exit code where the string (or an ``exec_command_end``/``patch_apply_end`` line) says one.
"""

from __future__ import annotations

import json
import re
from typing import Any

from asif_convert import ir
from asif_convert._limits import beyond_safe_integers, json_in_text

_EXIT = re.compile(r"^(?:Exit code: |Process exited with code )(-?\d+)$")
_HEADER_LINES = 6  # the exit code is in the header, before "Output:"


def encode_json(text: str, metadata: Any) -> str:
    """The JSON encoding as Codex writes it (serde_json: compact, non-ASCII as is)."""
    return json.dumps({"output": text, "metadata": metadata}, ensure_ascii=False, separators=(",", ":"))


def decode(output: str) -> tuple[str, Any, int | None]:
    """(the text, the JSON encoding's metadata or None, the exit code the string reports)."""
    if output.startswith('{"output":'):
        try:
            value = json_in_text(output)  # (nested too deep, or a number beyond a double: plain text)
        except ValueError:
            value = None
        if isinstance(value, dict) and value.keys() == {"output", "metadata"} and isinstance(value["output"], str) \
                and not beyond_safe_integers(value) and encode_json(value["output"], value["metadata"]) == output:
            metadata = value["metadata"]
            code = metadata.get("exit_code") if isinstance(metadata, dict) else None
            return value["output"], metadata, code if type(code) is int else None
    for line in output.split("\n", _HEADER_LINES)[:_HEADER_LINES]:
        if line == "Output:":
            break
        found = _EXIT.match(line)
        if found:
            return output, None, int(found.group(1))
    return output, None, None


def outcome(code: int | None) -> ir.ToolOutcome:
    return "unknown" if code is None else "success" if code == 0 else "error"
