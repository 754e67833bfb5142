"""A session page's view model: the ASIF JSON form of one document, arranged for reading.

Everything here works on a document that passed the ASIF schema, yet treats its strings as
untrusted text: nothing is marked safe, the templates escape every value. Records get anchors
from their position (``e12``, ``b0``, ``l3``), never from their ids, so an id cannot collide with
the page's own element ids or smuggle anything into an attribute."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

# Where each loss reference type points: (document collection, anchor prefix).
COLLECTIONS = {
    "event": ("events", "e"),
    "branch": ("branches", "b"),
    "participant": ("participants", "p"),
    "resource": ("resources", "r"),
    "tool": ("tools", "t"),
    "checkpoint": ("checkpoints", "c"),
    "execution": ("executions", "x"),
    "context": ("contexts", "k"),
}
PREVIEW_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
PREVIEW_AUDIO_TYPES = frozenset({"audio/wav", "audio/x-wav", "audio/mpeg", "audio/ogg", "audio/webm", "audio/flac"})
TEXT_TYPES = frozenset({"application/json", "application/x-ndjson", "application/xml", "application/yaml"})
PREVIEW_TEXT_CHARS = 4000  # an inline text preview; the rest is summarized by its size
JSON_CHARS = 20000  # structured values beyond this are cut, with a note saying so
GIST_CHARS = 140  # the one-line summary of an event's data
PREVIEW_MEDIA_BYTES = 2 << 20  # larger embedded images and sounds are listed, not inlined


@dataclass
class Index:
    """Anchors of every record by (type, id), and the losses that name each record."""

    pre: str = ""  # prepended to every anchor, so two documents can share one page
    anchors: dict[tuple[str, str], str] = field(default_factory=dict)
    losses_of: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))

    def anchor(self, kind: str, rid: Any) -> str | None:
        return self.anchors.get((kind, rid)) if isinstance(rid, str) else None

    def badges(self, kind: str, rid: Any) -> list[dict[str, Any]]:
        """The losses naming a record, one badge per loss kind (count, first loss's anchor)."""
        groups: dict[str, dict[str, Any]] = {}
        for loss in self.losses_of.get((kind, rid), ()) if isinstance(rid, str) else ():
            group = groups.setdefault(loss["kind"], {"kind": loss["kind"], "anchor": loss["anchor"], "count": 0})
            group["count"] += 1
        return list(groups.values())


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(doc: dict[str, Any], key: str) -> list[Any]:
    value = doc.get(key)
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def build_index(doc: dict[str, Any], pre: str = "") -> Index:
    index = Index(pre=pre)
    for kind, (key, prefix) in COLLECTIONS.items():
        for i, rec in enumerate(_list(doc, key)):
            rid = rec.get("id")
            if isinstance(rid, str):
                index.anchors.setdefault((kind, rid), index.pre + f"{prefix}{i}")
    return index


def losses(doc: dict[str, Any], index: Index) -> list[dict[str, Any]]:
    """Each loss with its references resolved to anchors; fills ``index.losses_of``."""
    rows = []
    for i, loss in enumerate(_list(doc, "losses")):
        anchor = index.pre + f"l{i}"
        refs: list[dict[str, Any]] = []
        for ref in loss.get("references") or ():
            if not isinstance(ref, dict):
                continue
            kind, rid = str(ref.get("type", "")), ref.get("id")
            refs.append({"type": kind, "id": str(rid), "anchor": index.anchor(kind, rid)})
        row: dict[str, Any] = {"anchor": anchor, "id": str(loss.get("id", "")), "kind": str(loss.get("kind", "")),
               "stage": str(loss.get("stage", "")), "explanation": str(loss.get("explanation", "")),
               "scope": loss.get("scope"), "refs": refs}
        rows.append(row)
        for ref in refs:
            index.losses_of[(ref["type"], ref["id"])].append({"anchor": anchor, "kind": row["kind"]})
    return rows


def _json(value: Any) -> str:
    text = json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False)
    return text if len(text) <= JSON_CHARS else text[:JSON_CHARS] + f"\n… ({len(text) - JSON_CHARS:,} more characters)"


def resources(doc: dict[str, Any], index: Index, packaged: dict[str, bytes] | None = None) -> list[dict[str, Any]]:
    rows = []
    for i, res in enumerate(_list(doc, "resources")):
        rid = str(res.get("id", ""))
        path = res.get("path")
        rows.append({
            "anchor": index.pre + f"r{i}", "id": rid, "name": res.get("name"),
            "media_type": str(res.get("media_type", "")),
            "availability": str(res.get("availability", "")), "purpose": res.get("purpose"),
            "bytes": res.get("bytes"), "sha256": res.get("sha256"), "location": res.get("original_location"),
            "path": path, "packaged": packaged is not None and isinstance(path, str) and path in packaged,
            "explanation": res.get("explanation"),
            "preview": _preview(res, packaged or {}), "losses": index.badges("resource", rid),
        })
    return rows


def _content(res: dict[str, Any], packaged: dict[str, bytes]) -> bytes | None:
    """An embedded resource's bytes: its base64 ``data``, or its file in the package when the
    size and digest the resource states match. A path is looked up in the package, never on disk."""
    data, path = res.get("data"), res.get("path")
    if isinstance(data, str):
        try:
            return base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            return None
    if isinstance(path, str) and path in packaged:
        content = packaged[path]
        size, digest = res.get("bytes"), res.get("sha256")
        if (size is None or size == len(content)) and (digest is None or digest == hashlib.sha256(content).hexdigest()):
            return content
    return None


def _preview(res: dict[str, Any], packaged: dict[str, bytes]) -> dict[str, Any] | None:
    """An inline preview of an embedded image or sound (a data: URI of base64 this code made) or text."""
    media = str(res.get("media_type", "")).split(";")[0].strip().lower()
    text = res.get("text")
    if not isinstance(text, str):
        content = _content(res, packaged)
        if content is None:
            return None
        if media in PREVIEW_IMAGE_TYPES or media in PREVIEW_AUDIO_TYPES:
            if len(content) > PREVIEW_MEDIA_BYTES:
                return None
            uri = f"data:{media};base64," + base64.b64encode(content).decode("ascii")
            return {"kind": "image" if media in PREVIEW_IMAGE_TYPES else "audio", "uri": uri}
        if not (media.startswith("text/") or media in TEXT_TYPES):
            return None
        try:
            text = content.decode("utf-8")
        except UnicodeDecodeError:
            return None
    return {"kind": "text", "text": text[:PREVIEW_TEXT_CHARS], "more": max(len(text) - PREVIEW_TEXT_CHARS, 0)}


def _parts(parts: Any, index: Index, res_by_id: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for part in parts if isinstance(parts, list) else ():
        if not isinstance(part, dict):
            continue
        kind = part.get("kind")
        if kind == "text":
            out.append({"kind": "text", "text": str(part.get("text", ""))})
        elif kind == "structured":
            schema = str(part.get("schema", ""))
            out.append({"kind": "reasoning" if "reasoning" in schema.lower() else "structured", "schema": schema,
                        "json": _json(part.get("value"))})
        elif kind in ("resource", "opaque"):
            rid = str(part.get("resource_id", ""))
            out.append({"kind": kind, "resource_id": rid, "anchor": index.anchor("resource", rid),
                        "resource": res_by_id.get(rid), "description": part.get("description"),
                        "semantic_type": part.get("semantic_type"), "reason": part.get("reason")})
        else:
            out.append({"kind": "structured", "schema": f"part of kind {kind!r}", "json": _json(part)})
    return out


def events(doc: dict[str, Any], index: Index, resource_rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every event, ready for the timeline, with tool calls and results paired by call id."""
    res_by_id = {r["id"]: r for r in resource_rows}
    participants = {p.get("id"): p for p in _list(doc, "participants")}
    tools = {t.get("id"): t for t in _list(doc, "tools")}
    raw = _list(doc, "events")
    calls: dict[str, str] = {}
    results: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for i, ev in enumerate(raw):
        data = _obj(ev.get("data"))
        call_id = data.get("call_id")
        if ev.get("kind") == "tool_call" and isinstance(call_id, str):
            calls.setdefault(call_id, index.pre + f"e{i}")
        elif ev.get("kind") == "tool_result" and isinstance(call_id, str):
            results[call_id].append({"anchor": index.pre + f"e{i}", "outcome": str(data.get("outcome", ""))})
    rows = []
    for i, ev in enumerate(raw):
        data = _obj(ev.get("data"))
        eid, kind = str(ev.get("id", "")), str(ev.get("kind", ""))
        actor = participants.get(ev.get("actor_id")) or {}
        prov = _obj(ev.get("provenance"))
        row: dict[str, Any] = {
            "anchor": index.pre + f"e{i}", "id": eid, "kind": kind, "sequence": ev.get("sequence"),
            "time": ev.get("time"),
            "actor": str(ev.get("actor_id", "")), "actor_kind": actor.get("kind"),
            "provenance": str(prov.get("mode", "")), "role": data.get("role"),
            "parts": _parts([*(data.get("parts") or ()), *(data.get("prompt") or ()), *(data.get("answer") or ())],
                            index, res_by_id),
            "losses": index.badges("event", eid), "details": None, "gist": None,
        }
        call_id = data.get("call_id")
        if kind == "tool_call":
            tool = tools.get(data.get("tool_id")) or {}
            row["tool"] = str(tool.get("name") or data.get("tool_id", ""))
            row["tool_anchor"] = index.anchor("tool", data.get("tool_id"))
            row["arguments"] = _json(data.get("arguments"))
            row["arguments_status"] = data.get("arguments_status")
            row["results"] = results.get(call_id, []) if isinstance(call_id, str) else []
            row["call_id"] = call_id
        elif kind == "tool_result":
            row["call_anchor"] = calls.get(call_id) if isinstance(call_id, str) else None
            row["call_id"] = call_id
            row["outcome"] = data.get("outcome")
        elif kind not in ("message",):
            rest = {k: v for k, v in data.items() if k not in ("parts", "prompt", "answer")}
            row["details"] = _json(rest) if rest else None
            row["gist"] = (f"{data.get('type')} {_gist(data.get('value'))}" if kind == "extension"
                           else _gist(rest))
        rows.append(row)
    return rows


def _gist(value: Any) -> str:
    """One line that says what a non-message event is, before its details are opened."""
    text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    return text if len(text) <= GIST_CHARS else text[:GIST_CHARS - 1] + "…"


def branches(doc: dict[str, Any], index: Index, event_rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each branch with its events in order, its fork point and its depth in the branch tree.

    A branch either names its fork (``fork``) and lists only its own events, or lists its whole
    history: then the longest run of first events it shares with an earlier branch is that
    branch's history, drawn there once, and the branch is shown as forked after it. Any other
    event listed by several branches is drawn once (at its first place) and referred to after;
    events on no branch are gathered at the end so nothing in the document goes unseen."""
    by_id: dict[str, dict[str, Any]] = {}
    for row in event_rows:
        by_id.setdefault(row["id"], row)
    raw = _list(doc, "branches")
    lists = [[e for e in br.get("event_ids") or ()] for br in raw]
    parent: dict[str, str | None] = {}
    rows = []
    drawn: set[str] = set()
    for i, br in enumerate(raw):
        bid = str(br.get("id", ""))
        fork: dict[str, Any] | None = _obj(br.get("fork")) or None
        shared = 0
        if fork is None:
            shared, j = _shared_history(lists, i)
            if shared:
                fork = {"branch_id": raw[j].get("id"), "event_id": lists[i][shared - 1], "inclusive": True}
        parent_id = fork.get("branch_id") if fork and fork.get("session_id") in (None, _session_id(doc)) else None
        parent.setdefault(bid, parent_id if isinstance(parent_id, str) else None)
        items: list[dict[str, Any]] = []
        for eid in lists[i][shared:]:
            found = by_id.get(eid) if isinstance(eid, str) else None
            if found is None:
                items.append({"missing": str(eid)})
            elif eid in drawn:
                items.append({"shared": found})
            else:
                drawn.add(eid)
                items.append({"event": found})
        drawn.update(e for e in lists[i][:shared] if isinstance(e, str))
        head = br.get("head_event_id")
        rows.append({
            "anchor": index.pre + f"b{i}", "id": bid, "items": items, "count": len(items), "shared": shared,
            "head": head, "head_anchor": index.anchor("event", head),
            "fork": None if fork is None else {
                "branch": str(fork.get("branch_id", "")),
                "branch_anchor": index.anchor("branch", fork.get("branch_id")),
                "event": fork.get("event_id"), "event_anchor": index.anchor("event", fork.get("event_id")),
                "inclusive": fork.get("inclusive"), "session": fork.get("session_id"),
                "foreign": fork.get("session_id") not in (None, _session_id(doc))},
            "losses": index.badges("branch", bid),
        })
    for row in rows:
        row["depth"] = _depth(row["id"], parent)
    loose = [{"event": r} for r in event_rows if r["id"] not in drawn and r is by_id.get(r["id"])]
    loose += [{"event": r} for r in event_rows if r is not by_id.get(r["id"])]  # duplicate ids
    if loose:
        rows.append({"anchor": index.pre + "b-loose", "id": None, "items": loose, "count": len(loose), "shared": 0,
                     "head": None, "head_anchor": None, "fork": None, "losses": [], "depth": 0})
    return _tree_order(rows, parent)


def _shared_history(lists: list[list[Any]], i: int) -> tuple[int, int]:
    """The longest run of first events branch ``i`` shares with an earlier branch, and that branch."""
    best, best_j = 0, -1
    for j in range(i):
        n = 0
        for a, b in zip(lists[i], lists[j], strict=False):
            if a != b:
                break
            n += 1
        if n > best:
            best, best_j = n, j
    return best, best_j


def _session_id(doc: dict[str, Any]) -> Any:
    session = doc.get("session")
    return session.get("id") if isinstance(session, dict) else None


def _depth(bid: str, parent: dict[str, str | None]) -> int:
    depth, seen = 0, {bid}
    while (up := parent.get(bid)) is not None and up in parent and up not in seen:
        seen.add(up)
        bid, depth = up, depth + 1
    return depth


def _tree_order(rows: list[dict[str, Any]], parent: dict[str, str | None]) -> list[dict[str, Any]]:
    """Depth-first: each branch right after the branch it forked from (document order among siblings)."""
    children: dict[str | None, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        up = parent.get(row["id"]) if row["id"] is not None else None
        children[up if up in parent and row["depth"] > 0 else None].append(row)
    ordered: list[dict[str, Any]] = []
    seen: set[int] = set()

    def visit(row: dict[str, Any]) -> None:
        if id(row) in seen:
            return
        seen.add(id(row))
        ordered.append(row)
        for child in children.get(row["id"], []) if row["id"] is not None else ():
            visit(child)

    for row in children[None]:
        visit(row)
    for row in rows:  # a cycle of forks leaves some unreached: keep them all the same
        visit(row)
    return ordered


def session_model(doc: dict[str, Any], *, name: str, source_format: str, converted: bool,
                  packaged: dict[str, bytes] | None = None) -> dict[str, Any]:
    """Everything the session template shows; ``packaged`` holds a package's resource files."""
    index = build_index(doc)
    loss_rows = losses(doc, index)
    resource_rows = resources(doc, index, packaged)
    event_rows = events(doc, index, resource_rows)
    branch_rows = branches(doc, index, event_rows)
    session = _obj(doc.get("session"))
    capture = _obj(doc.get("capture"))
    producer = _obj(capture.get("producer"))
    by_kind: dict[str, int] = defaultdict(int)
    for row in loss_rows:
        by_kind[row["kind"]] += 1
    return {
        "name": name, "source_format": source_format, "converted": converted,
        "package": None if packaged is None else len(packaged),
        "asif_version": doc.get("asif_version"),
        "session": {"id": session.get("id"), "title": session.get("title"),
                    "objective": _parts(session.get("objective"), index, {r["id"]: r for r in resource_rows}),
                    "lineage": [ln for ln in session.get("lineage") or () if isinstance(ln, dict)]},
        "capture": {"id": capture.get("id"), "producer": producer.get("name"), "version": producer.get("version"),
                    "consistency": capture.get("consistency"), "boundary": capture.get("boundary")},
        "counts": {"events": len(event_rows), "branches": len(_list(doc, "branches")),
                   "participants": len(_list(doc, "participants")), "tools": len(_list(doc, "tools")),
                   "resources": len(resource_rows), "losses": len(loss_rows)},
        "coverage": [{"scope": str(c.get("scope", "")), "status": str(c.get("status", "")),
                      "detail": str(c.get("detail", ""))} for c in _list(doc, "coverage")],
        "participants": [{"anchor": index.pre + f"p{i}", "id": str(p.get("id", "")), "kind": p.get("kind"),
                          "name": p.get("name"), "losses": index.badges("participant", p.get("id"))}
                         for i, p in enumerate(_list(doc, "participants"))],
        "tools": [{"anchor": index.pre + f"t{i}", "id": str(t.get("id", "")), "name": t.get("name"),
                   "description": t.get("description"), "losses": index.badges("tool", t.get("id"))}
                  for i, t in enumerate(_list(doc, "tools"))],
        "branches": branch_rows, "resources": resource_rows, "losses": loss_rows,
        "losses_by_kind": sorted(by_kind.items(), key=lambda kv: (-kv[1], kv[0])),
        "other_records": _other_records(doc, index),
    }


def _other_records(doc: dict[str, Any], index: Index) -> list[dict[str, Any]]:
    """Checkpoints, executions and contexts: shown as JSON so a loss that names them has a target."""
    out = []
    for kind in ("checkpoint", "execution", "context"):
        key, prefix = COLLECTIONS[kind]
        for i, rec in enumerate(_list(doc, key)):
            rid = str(rec.get("id", ""))
            out.append({"anchor": index.pre + f"{prefix}{i}", "type": kind, "id": rid, "json": _json(rec),
                        "losses": index.badges(kind, rid)})
    return out
