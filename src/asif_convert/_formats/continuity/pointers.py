"""Source pointers: every ASIF event names the export record it was read from.

With ``Options.source_pointers`` the pipeline carries the export itself as a resource (its id
is ``Context.source_id``), and each event's ``provenance.sources`` points into it with a JSON
Pointer (``/messages/3``, ``/events/0``): an auditor goes from any event to the exact record and
checks the resource's digest. The events a message is split into all point at that message.
"""

from __future__ import annotations

from typing import Any

import msgspec

from asif_convert import ir


class Pointers:
    """Where each record of the export is, by identity: records are found as they are read."""

    def __init__(self, raw: dict[str, Any], resource_id: str) -> None:
        self.resource_id = resource_id
        self.where = {id(rec): f"/{coll}/{i}" for coll in ("messages", "events")
                      for i, rec in enumerate(raw.get(coll) or ())}

    def point(self, events: list[ir.Event], rec: dict[str, Any]) -> None:
        source = ir.SourceRef(resource_id=self.resource_id,
                              locator=ir.Locator(syntax="json-pointer", value=self.where[id(rec)]))
        for ev in events:
            ev.provenance = msgspec.structs.replace(ev.provenance, sources=[source])
