"""The Codex CLI rollout format (``$CODEX_HOME/sessions/.../rollout-*.jsonl``), line-oriented.

Both generations: the ``{timestamp, type, payload}`` lines, and the mid-2025 legacy file (a bare
header, then bare Responses items). Reading: ``reader``; writing: ``writer``; docs/codex.md.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from asif_convert import ir
from asif_convert._formats.codex import fresh, reader, writer
from asif_convert.plugin import Context, Lines, MappingTable, Problem, load_mapping

__all__ = ["FORMAT", "CodexFormat"]


_JSON_TYPES = {bool: "a boolean", int: "a number", float: "a number", list: "an array", dict: "an object",
               type(None): "null"}


class CodexFormat:
    name = "codex"
    description = "Codex CLI rollout (JSONL under $CODEX_HOME/sessions/)"
    extension = ".jsonl"
    namespace = reader.NAMESPACE
    shape = "lines"
    files = "inline"  # (a file the session names by path is written in the parts that use it)

    @property
    def mapping_tables(self) -> tuple[MappingTable, ...]:
        """Its loss vocabulary (reading and writing), so ``--fail-on`` and ``formats`` know it."""
        return _tables()

    def detect(self, first: Any) -> bool:
        # the decoded first records of a line-oriented input (a JSON document is not a rollout)
        return isinstance(first, list) and bool(first) and reader.generation(first[0]) is not None

    def validate(self, lines: Lines) -> list[Problem]:
        # the lines that are not records (not JSON, cut) are reported by the caller, once
        problems: list[Problem] = []
        if not lines.records:
            return [Problem(rule="schema", path="", message="the rollout has no complete line")]
        number, first = lines.records[0]
        gen = reader.generation(first)
        if gen is None:
            problems.append(Problem(rule="schema", path="", line=number,
                                    message="the first line is neither a session_meta line nor a legacy header"))
            return problems
        meta = first["payload"] if gen == "rollout" else first
        if not (isinstance(meta.get("id"), str) and meta["id"]):
            found = "missing" if "id" not in meta else "empty" if meta["id"] == "" else \
                f"{_JSON_TYPES.get(type(meta['id']), 'another value')}, not a string"
            problems.append(Problem(rule="schema", path="/payload/id" if gen == "rollout" else "/id", line=number,
                                    message=f"the session id is {found}: expected a non-empty string"))
        return problems

    def record_lines(self, doc: ir.Document, lines: Lines) -> dict[str, int]:
        """The line each event was read from: its id says it (``line-<n>``, ``line-<n>/...``)."""
        return {ev.id: number for ev in doc.events if (number := reader.line_of(ev.id)) is not None}

    def read(self, lines: Lines, ctx: Context) -> ir.Document:
        return reader.Reader(lines, ctx).read()

    def write(self, doc: ir.Document, ctx: Context) -> list[Any]:
        return writer.write(doc, ctx)


@cache
def _tables() -> tuple[MappingTable, ...]:
    return load_mapping(reader.TABLE_PATH), load_mapping(fresh.TABLE_PATH)


FORMAT = CodexFormat()
