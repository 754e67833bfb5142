"""The ASIF 0.4 session format plugin."""

from __future__ import annotations

from functools import cached_property
from typing import Any

import msgspec

from ... import ir
from ...errors import Problem
from ...validation.schemas import ASIF_SCHEMA, schema_problems
from ..base import Context, namespaces
from .codec import Codec


class AsifFormat:
    name = "asif"
    description = "ASIF 0.4 session document (urn:asif:0.4:session)"
    extension = ".asif.json"
    namespace = None

    @cached_property
    def codec(self) -> Codec:
        return Codec(namespaces())

    def detect(self, doc: Any) -> bool:
        return isinstance(doc, dict) and "asif_version" in doc

    def validate(self, doc: Any) -> list[Problem]:
        from ...validation.semantic import check_semantics

        return schema_problems(ASIF_SCHEMA, doc) or check_semantics(doc)

    def read(self, doc: Any, ctx: Context) -> ir.Document:
        return self.codec.load_document(doc)

    def write(self, doc: ir.Document, ctx: Context) -> Any:
        known = {loss.id for loss in doc.losses}
        added = [loss for loss in ctx.losses() if loss.id not in known]
        return self.codec.dump_document(msgspec.structs.replace(doc, losses=doc.losses + added))


FORMAT = AsifFormat()
