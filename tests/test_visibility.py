"""Every text a reader of the conversation would see is ASIF semantics: each string of a
message's content_json and text_content is found in the data of the ASIF message, tool_call or
tool_result events made from that record (or in a file they attach: an embedded resource a
resource part names), or a loss references the record.

Strings that only identify or describe the shape (block types, ids, roles, media types,
signatures and base64 payloads) are not texts; JSON argument strings count by their values.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
from hypothesis import given, note

from asif_convert import convert

from .conftest import CONTINUITY_FILES, load_json
from .strategies import json_strings
from .test_canonical_content import dialect_messages

NS = "agent-continuity/1"
# keys whose string values name or shape a block rather than say something to a reader
_NOT_TEXT = {"type", "id", "tool_use_id", "tool_call_id", "call_id", "role", "media_type", "mime_type",
             "signature", "data", "file_data", "encrypted_content", "url", "file_id", "format", "detail",
             "cache_control",
             "name", "status", "model", "stop_reason", "stop_sequence", "service_tier", "object",
             "mimeType", "outcome"}  # (Gen AI: a media type in camelCase; a code result's outcome, an enum)


def _texts(value: Any, key: str | None = None) -> list[str]:
    """The strings of ``value`` a reader would see (a JSON text counts by its values)."""
    if isinstance(value, str):
        if key in _NOT_TEXT or not value.strip():
            return []
        if value.lstrip()[:1] in ("{", "["):
            try:
                return _texts(msgspec.json.decode(value))
            except msgspec.DecodeError:
                pass
        return [value]
    if isinstance(value, dict):
        return [t for k, v in value.items() for t in _texts(v, k)]
    if isinstance(value, list):
        return [t for v in value for t in _texts(v, key)]
    return []


def unseen(export: dict[str, Any], asif: dict[str, Any]) -> list[tuple[str, str]]:
    """(message id, text) of every text of the export's messages that ASIF readers cannot see."""
    referenced = {r["id"] for loss in asif["losses"] for r in loss.get("references", ()) if r["type"] == "event"}
    semantic = ("message", "tool_call", "tool_result")
    anchors: dict[str, str] = {}  # record id -> its first event (renamed on a collision)
    for ev in asif["events"]:
        if ev["kind"] not in semantic:  # (an event record's, whose id a message may share)
            continue
        state = ev.get("extensions", {}).get(NS)
        anchors.setdefault(state.get("id", ev["id"]) if isinstance(state, dict) else ev["id"], ev["id"])
    out = []
    for rec in export["messages"]:
        anchor = anchors.get(rec["message_id"])
        if anchor is None:
            out.append((rec["message_id"], "<no event>"))
            continue
        mine = [e for e in asif["events"] if e["id"] == anchor or e["id"].startswith(anchor + "/")]
        if referenced.intersection(e["id"] for e in mine):
            continue
        events = [e for e in mine if e["kind"] in semantic]
        # a file the message attaches is an embedded resource its parts name (ASIF: files always
        # use resources), so a document given as text or content blocks is read there, and its
        # title is the resource's name
        attached = {p["resource_id"] for e in events for p in e["data"].get("parts", ()) if p["kind"] == "resource"}
        seen = "\x00".join([*(s for e in events for s in json_strings(e["data"], keys=True)),
                             *(r.get(k, "") for r in asif["resources"] if r["id"] in attached
                               for k in ("text", "name"))])
        for text in _texts(rec.get("content_json")) + _texts(rec["text_content"]):
            if text not in seen:
                out.append((rec["message_id"], text))
    return out


@pytest.mark.parametrize("path", CONTINUITY_FILES, ids=lambda p: p.stem)
def test_every_text_of_the_corpus_is_visible(path):
    export = load_json(path)
    asif = convert(json.dumps(export).encode(), to="asif").document
    assert unseen(export, asif) == []


@given(dialect_messages())
def test_every_text_of_dialect_content_is_visible_or_named(doc):
    note(json.dumps(doc))
    asif = convert(json.dumps(doc).encode(), to="asif").document
    assert unseen(doc, asif) == []
