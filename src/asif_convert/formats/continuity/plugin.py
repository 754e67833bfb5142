"""The agent-continuity format plugin."""

from __future__ import annotations

from typing import Any

from ... import ir
from ...errors import Problem
from ...validation.continuity import referential_problems
from ...validation.schemas import CONTINUITY_SCHEMA, schema_problems
from ..base import Context
from . import NAMESPACE, reader


class ContinuityFormat:
    name = "continuity"
    description = "agent-continuity export (format: agent-continuity-export)"
    extension = ".continuity.json"
    namespace = NAMESPACE

    def detect(self, doc: Any) -> bool:
        return isinstance(doc, dict) and doc.get("format") == "agent-continuity-export"

    def validate(self, doc: Any) -> list[Problem]:
        return schema_problems(CONTINUITY_SCHEMA, doc) or referential_problems(doc)

    def read(self, doc: Any, ctx: Context) -> ir.Document:
        return reader.read(doc, ctx.source_bytes, ctx.ledger)

    def write(self, doc: ir.Document, ctx: Context) -> Any:
        raise NotImplementedError("writing agent-continuity exports is not available yet")


FORMAT = ContinuityFormat()
