"""The ASIF 0.4 session format plugin."""

from __future__ import annotations

from typing import Any

import msgspec

from asif_convert import ir
from asif_convert._codec import codec_for
from asif_convert._errors import Problem
from asif_convert._validation.schemas import ASIF_SCHEMA, schema_problems
from asif_convert._validation.semantic import check_semantics
from asif_convert.plugin import Context


class AsifFormat:
    name = "asif"
    description = "ASIF 0.4 session document (urn:asif:0.4:session)"
    extension = ".asif.json"
    namespace = None

    def detect(self, doc: Any) -> bool:
        return isinstance(doc, dict) and "asif_version" in doc

    def validate(self, doc: Any) -> list[Problem]:
        return schema_problems(ASIF_SCHEMA, doc) or check_semantics(doc)

    def read(self, doc: Any, ctx: Context) -> ir.Document:
        return codec_for(ctx.namespaces).load_document(doc)

    def write(self, doc: ir.Document, ctx: Context) -> Any:
        known = {loss.id for loss in doc.losses}
        added = [loss for loss in ctx.losses() if loss.id not in known]
        return codec_for(ctx.namespaces).dump_document(msgspec.structs.replace(doc, losses=doc.losses + added))


FORMAT = AsifFormat()
