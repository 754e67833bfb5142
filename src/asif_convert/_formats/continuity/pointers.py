"""Source pointers: every ASIF event names the export record it was read from, and every
continuity record written from ASIF names the ASIF records it came from.

With ``Options.source_pointers`` the pipeline carries the export itself as a resource (its id
is ``Context.source_id``), and each event's ``provenance.sources`` points into it with a JSON
Pointer (``/messages/3``, ``/events/0``): an auditor goes from any event to the exact record and
checks the resource's digest. The events a message is split into all point at that message.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from asif_convert import ir


class Pointers:
    """Where each record of the export is, by identity: records are found as they are read."""

    def __init__(self, raw: dict[str, Any], resource_id: str) -> None:
        self.resource_id = resource_id
        self.where = {id(rec): f"/{coll}/{i}" for coll in ("messages", "events", "native_states", "artifacts")
                      for i, rec in enumerate(raw.get(coll) or ())}

    def _source(self, rec: dict[str, Any]) -> ir.SourceRef:
        return ir.SourceRef(resource_id=self.resource_id,
                            locator=ir.Locator(syntax="json-pointer", value=self.where[id(rec)]))

    def point(self, events: list[ir.Event], rec: dict[str, Any]) -> None:
        source = self._source(rec)
        for ev in events:
            ev.provenance = msgspec.structs.replace(ev.provenance, sources=[source])

    def point_resource(self, res: ir.Resource, rec: dict[str, Any], reported: ir.Provenance) -> None:
        """A resource read from a native state, an artifact or (split out of) a message points
        at that record; its provenance says the export reported it, as an event's does."""
        base = res.provenance if isinstance(res.provenance, ir.Provenance) else reported
        res.provenance = msgspec.structs.replace(base, sources=[self._source(rec)])


# -- ASIF -> continuity: records that point back -------------------------------------------------
#
# Continuity has a free-form ``metadata`` object on the session, on branches and on artifacts
# only; messages, events, checkpoints and native states have none. With source pointers, every
# record written gets an entry in one native state of provider ``asif``, kind ``sources/1``:
# the ASIF document (name, size, SHA-256) and, by the record's JSON Pointer in the export, the
# JSON Pointers of the ASIF records it came from. Records with metadata also say it themselves,
# under the key ``asif_source``, unless that key is already taken. Reading an export back, that
# entry and exactly the values it lists are the converter's own (read through a declared type;
# anything else, a look-alike written by someone else included, is data and stays as it is), so
# they are taken out before the export is read and never become a record's metadata.

SOURCES = "sources/1"
KEY = "asif_source"
_STATE_ID = "asif:sources"
_WITH_METADATA = ("branches", "artifacts")  # and the session
_EXPORT_POINTER = re.compile(r"/session|/(?:branches|messages|events|checkpoints|native_states|artifacts)/\d+")
_ASIF_POINTER = re.compile(r"/session|/(?:branches|events|contexts|resources)/\d+")
_DIGEST = re.compile(r"[0-9a-f]{64}")


class DocumentRef(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    """The ASIF input: its file's name, size and SHA-256; ``member`` when it was a package (the
    pointers are into that member)."""

    name: str
    bytes: int
    sha256: str
    member: str | None = None


class SourcesPayload(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    document: DocumentRef
    records: dict[str, list[str]]  # export record pointer -> the ASIF records it came from
    metadata: list[str] = []  # the records whose metadata holds the pointer (KEY)
    created: list[str] = []  # ... in a metadata object written only for it
    native_states_added: bool = False  # the export had no native_states before this entry
    restored: bool = False  # written with the residual: reading the export back restores the document


def back(export: dict[str, Any], origins: dict[str, list[list[str]]], document: DocumentRef,
         restored: bool) -> dict[str, Any]:
    """A copy of ``export`` whose records point back at the ASIF records they came from
    (``origins``: by collection, in order, as the writer recorded them); ``restored`` when the
    export holds what restores the document (written with its residual)."""
    out = dict(export)
    records = {"/session": ["/session"]}
    for coll, came in origins.items():
        records.update((f"/{coll}/{k}", ptrs) for k, ptrs in enumerate(came) if ptrs)
    payload = SourcesPayload(document=document, records=records, restored=restored)
    owners: list[tuple[str, dict[str, Any]]] = [("/session", out)]
    for coll in _WITH_METADATA:
        if isinstance(out.get(coll), list):
            out[coll] = [dict(rec) for rec in out[coll]]
            owners += [(f"/{coll}/{k}", rec) for k, rec in enumerate(out[coll])]
    out["session"] = dict(out["session"])
    for ptr, holder in owners:
        rec = holder["session"] if ptr == "/session" else holder
        meta = rec.get("metadata")
        if ptr not in records or (meta is not None and (not isinstance(meta, dict) or KEY in meta)):
            continue  # the key is the record's own: never written over
        if meta is None:
            payload.created.append(ptr)
        rec["metadata"] = {**(meta or {}), KEY: _value(payload, ptr)}
        payload.metadata.append(ptr)
    states = out.get("native_states")
    payload.native_states_added = states is None
    taken = {s.get("state_id") for s in states or ()}
    state_id = _STATE_ID
    while state_id in taken:
        state_id += "~"
    entry = {"state_id": state_id, "session_id": out["session"]["session_id"], "provider": "asif", "kind": SOURCES,
             "payload": msgspec.to_builtins(payload), "portable": True}
    out["native_states"] = [*(states or ()), entry]
    return out


def consume(raw: dict[str, Any]) -> dict[str, Any]:
    """``raw`` without the source pointers a conversion to continuity wrote into it: the
    ``sources/1`` entry (the first one, when it has the declared shape) and the metadata values
    it lists, where they are exactly what it says. Anything else is left as data."""
    k, payload = _entry(raw)
    if payload is None:
        return raw
    states = raw["native_states"]
    out = dict(raw)
    rest = states[:k] + states[k + 1:]
    if rest or not payload.native_states_added:
        out["native_states"] = rest
    else:
        del out["native_states"]
    for ptr in payload.metadata:
        coll, _, index = ptr[1:].partition("/")
        if coll == "session":
            out["session"] = _without_pointer(out["session"], payload, ptr)
        elif isinstance(out.get(coll), list) and int(index) < len(out[coll]):
            out[coll] = list(out[coll])
            out[coll][int(index)] = _without_pointer(out[coll][int(index)], payload, ptr)
    return out


def restored(raw: dict[str, Any]) -> bool:
    """Whether the export's pointers were written beside what restores the ASIF document."""
    return bool((payload := _entry(raw)[1]) and payload.restored)


def _entry(raw: dict[str, Any]) -> tuple[int, SourcesPayload | None]:
    """The position and payload of the export's ``sources/1`` entry (the first), or None."""
    states = raw.get("native_states")
    if not isinstance(states, list):
        return -1, None
    k = next((i for i, s in enumerate(states) if isinstance(s, dict) and s.get("provider") == "asif"
              and s.get("kind") == SOURCES), None)
    if k is None:
        return -1, None
    return k, _payload(states[k].get("payload"))


def _value(payload: SourcesPayload, ptr: str) -> dict[str, Any]:
    """What a record's metadata holds under KEY: the session names the document whole."""
    doc = payload.document
    head = msgspec.to_builtins(doc) if ptr == "/session" else {"sha256": doc.sha256}
    return {**head, "pointer": payload.records[ptr][0]}


def _without_pointer(rec: Any, payload: SourcesPayload, ptr: str) -> Any:
    meta = rec.get("metadata") if isinstance(rec, dict) else None
    if not isinstance(meta, dict) or meta.get(KEY) != _value(payload, ptr):
        return rec  # edited since, or never ours: data
    rest = {key: v for key, v in meta.items() if key != KEY}
    out = dict(rec)
    if rest or ptr not in payload.created:
        out["metadata"] = rest
    else:
        del out["metadata"]
    return out


def _payload(value: Any) -> SourcesPayload | None:
    """The payload through its declared type, or None (foreign)."""
    try:
        payload = msgspec.convert(value, SourcesPayload)
    except msgspec.ValidationError:
        return None
    ok = (_DIGEST.fullmatch(payload.document.sha256) and payload.document.bytes >= 0
          and all(_EXPORT_POINTER.fullmatch(p) and v and all(_ASIF_POINTER.fullmatch(a) for a in v)
                  for p, v in payload.records.items())
          and set(payload.created) <= set(payload.metadata) <= set(payload.records)
          and all(p == "/session" or p.split("/")[1] in _WITH_METADATA for p in payload.metadata))
    return payload if ok else None
