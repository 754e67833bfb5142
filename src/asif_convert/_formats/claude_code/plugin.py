"""The claude-code format: Claude Code's session transcripts, one JSON record per line."""

from __future__ import annotations

from itertools import repeat
from typing import Any

from asif_convert import ir
from asif_convert._errors import Problem
from asif_convert._formats.claude_code import NAMESPACE, TABLE, reader, records, writer
from asif_convert._lines import Lines
from asif_convert._mapping import MappingTable, load_table
from asif_convert.plugin import Context

# Record types of every client since 1.0 (agent-sessions.md): one of them with an envelope key
# among the first records tells a transcript.
_TYPES = ("user", "assistant", "system", "summary", "progress", "file-history-snapshot", "queue-operation",
          "last-prompt", "attachment", "permission-mode", "custom-title", "ai-title")
_ENVELOPE = ("uuid", "sessionId", "leafUuid", "messageId")


class ClaudeCodeFormat:
    name = "claude-code"
    description = "Claude Code session transcript (JSON Lines, ~/.claude/projects/*/*.jsonl)"
    extension = ".jsonl"
    namespace = NAMESPACE
    shape = "lines"
    files = "inline"  # (a file the session names by path is written in the parts that use it)

    @property
    def mapping_tables(self) -> tuple[MappingTable, ...]:
        return (load_table(TABLE),)

    def detect(self, first: list[Any]) -> bool:
        return any(isinstance(v, dict) and v.get("type") in _TYPES and any(k in v for k in _ENVELOPE) for v in first)

    def validate(self, lines: Lines) -> list[Problem]:
        """A record is a JSON object; anything inside it the reader cannot map is kept verbatim."""
        problems = [Problem(rule="schema", path="", line=line, message=(
            "expected a Claude Code record (a JSON object with a type)")) for line, v in lines.records
            if not isinstance(v, dict)]
        if not lines.records:
            problems.append(Problem(rule="schema", path="", message=(
                "no complete record: the transcript is empty" if not lines.problems else
                "no complete record: nothing but its cut or broken lines")))
        return problems or _broken_chain(lines)  # (a record that is no object refuses the file already)

    def companions(self, file_name: str, lines: Lines) -> tuple[list[str], list[str]]:
        """The files that belong with a session (its subagents' transcripts): folders to list, files to read."""
        return reader.companions(file_name, lines)

    def record_lines(self, doc: ir.Document, lines: Lines) -> dict[str, int]:
        """The line of the session's own file each event was read from: its record's, by the
        uuid its id was made of (``<uuid>`` or ``<uuid>#<n>``), else the line of the group's
        first record (not a subagent's file: those lines are another file's)."""
        by_uuid: dict[str, int] = {}
        for line, v in lines.records:
            if isinstance(v, dict) and isinstance(v.get("uuid"), str):
                by_uuid.setdefault(v["uuid"], line)
        out = {}
        for home, members in records.groups(doc.events):
            slot = home.r[0]
            if slot.f is not None or not 0 <= slot.n < len(lines.records):
                continue
            for ev in members:
                out[ev.id] = by_uuid.get(ev.id.partition("#")[0], lines.records[slot.n][0])
        return out

    def read(self, lines: Lines, ctx: Context) -> ir.Document:
        return reader.read(lines, ctx.ledger(TABLE), release=ctx.release_input)

    def write(self, doc: ir.Document, ctx: Context) -> list[Any]:
        return writer.write(doc, ctx.ledger(TABLE), ctx.warnings, ctx.embedded)


FORMAT = ClaudeCodeFormat()


def _broken_chain(lines: Lines) -> list[Problem]:
    """A warning for the first record whose ``parentUuid`` names no record of the file (an edited
    or spliced transcript): ``claude --resume`` follows the chain only back to it, so the records
    before are not part of the history it continues (another branch of the session). Every
    record is an object here; the sets are made in C (any member may be any JSON value)."""
    values = [v for _, v in lines.records]
    try:
        uuids = set(map(dict.get, values, repeat("uuid")))
        named = set(map(dict.get, values, repeat("parentUuid")))
    except TypeError:  # (a uuid or parent that is an array or object: found one at a time)
        uuids = {u for v in values if isinstance(u := v.get("uuid"), str)}
        named = {p for v in values if isinstance(p := v.get("parentUuid"), str)}
    dangling = {p for p in named - uuids if isinstance(p, str)}
    if not dangling:
        return []
    at = [(line, v["parentUuid"]) for line, v in lines.records if isinstance(v.get("parentUuid"), str)
          and v["parentUuid"] in dangling]
    line, parent = at[0]
    more = f" ({len(at) - 1} other record(s) too)" if len(at) > 1 else ""
    return [Problem(rule="parent-chain", path="/parentUuid", line=line, severity="warning", message=(
        f"parentUuid {parent!r} names no record of this transcript{more}: the history Claude Code "
        "continues starts here, the records before it are another branch"))]
