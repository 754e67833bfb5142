"""The ASIF 0.4 session format plugin."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgspec

from asif_convert import ir
from asif_convert._codec import codec_for
from asif_convert._errors import Problem
from asif_convert._jsonio import drained
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
        return codec_for(ctx.namespaces).load_document(doc, release=ctx.release_input)

    def write(self, doc: ir.Document, ctx: Context) -> Any:
        return codec_for(ctx.namespaces).dump_document(_with_losses(doc, ctx))

    def write_streamed(self, doc: ir.Document, ctx: Context) -> tuple[dict[str, Any], str, Iterator[Any]]:
        """What ``write`` builds, as the document without its events (an empty ``events``
        list in its place), the member's name, and the events one by one: the caller encodes
        them a slice at a time and never holds the whole output as JSON values. ``doc`` is
        used up: each event leaves its list once dumped, so the output's bytes take the memory
        the IR held."""
        codec = codec_for(ctx.namespaces)
        doc = _with_losses(doc, ctx)
        return codec.dump_document(doc, events=False), "events", map(codec.wire_event, drained(doc.events))


def _with_losses(doc: ir.Document, ctx: Context) -> ir.Document:
    """``doc`` with the conversion's losses after its own."""
    known = {loss.id for loss in doc.losses}
    added = [loss for loss in ctx.losses() if loss.id not in known]
    return msgspec.structs.replace(doc, losses=doc.losses + added)


FORMAT = AsifFormat()
