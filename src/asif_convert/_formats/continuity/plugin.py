"""The agent-continuity format plugin: reader and writer, plus the residual that keeps
ASIF -> continuity -> ASIF exact."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

import msgspec

from asif_convert import _patch as patch
from asif_convert import ir
from asif_convert._artifacts import FileSource
from asif_convert._codec import Codec, codec_for
from asif_convert._errors import Problem
from asif_convert._formats.continuity import NAMESPACE, artifacts, pointers, reader, residual, state, writer
from asif_convert._jsonio import drained
from asif_convert._ledger import Ledger
from asif_convert._mapping import MappingTable, load_table
from asif_convert._validation.continuity import referential_problems
from asif_convert._validation.schemas import ASIF_SCHEMA, CONTINUITY_SCHEMA, schema_problems
from asif_convert._validation.semantic import check_semantics
from asif_convert.plugin import Context

READ_TABLE = "continuity-to-asif"  # the losses of reading an export
WRITE_TABLE = "asif-to-continuity"  # the losses of writing one

# IR collections of records keyed by id (coverage by scope), diffed record by record
_RECORDS = {"events": "id", "participants": "id", "branches": "id", "executions": "id", "contexts": "id",
            "tools": "id", "resources": "id", "checkpoints": "id", "coverage": "scope", "losses": "id"}

# ASIF collections whose records are referenced by type in losses
_REF_TYPES = {"events": "event", "participants": "participant", "branches": "branch", "executions": "execution",
              "contexts": "context", "configurations": "configuration", "tools": "tool", "resources": "resource",
              "environments": "environment", "checkpoints": "checkpoint"}


_FOREIGN = "(additional properties)"


class ContinuityFormat:
    name = "continuity"
    description = "agent-continuity export (format: agent-continuity-export)"
    extension = ".continuity.json"
    namespace = NAMESPACE

    @property
    def mapping_tables(self) -> tuple[MappingTable, ...]:
        return load_table(READ_TABLE), load_table(WRITE_TABLE)

    def detect(self, doc: Any) -> bool:
        return isinstance(doc, dict) and doc.get("format") == "agent-continuity-export"

    def validate(self, doc: Any) -> list[Problem]:
        return schema_problems(CONTINUITY_SCHEMA, doc) or referential_problems(doc)

    def read(self, doc: Any, ctx: Context) -> ir.Document:
        codec = codec_for(ctx.namespaces)
        consumed = pointers.consume(doc)  # our back-pointers into the ASIF document: no data
        raw, losses, diff, carried = residual.split(consumed)
        ctx.carries_target_records = carried.first_release or bool(carried.messages or carried.events)
        travelled = losses.get("losses", []) + _own_losses(codec, losses.get("ours"))
        # With a residual, the restored document carries its own losses: a scratch ledger keeps
        # the return trip's re-derivations out of it.
        ledger = ctx.ledger(READ_TABLE) if diff is None else Ledger(load_table(READ_TABLE))
        if consumed is not doc and not pointers.restored(doc):  # else the residual restores the document
            ledger.add("+back-pointers")
        # (only a document without a residual is read once: the residual may call for a second reading)
        restored = _plain_read(codec, raw, travelled, ledger, carried, ctx.files, ctx.source_id,
                               release=ctx.release_input and diff is None)
        if diff is None:
            return restored
        patched = _patched(codec, restored, diff, ctx.options.validate)
        if patched is None:  # edited since, or another export's: said, and the converter's records kept out
            return _set_aside(codec, doc, raw, travelled, carried, ctx)
        # This conversion's losses are those this reading derived that the restored document
        # still says (what the export holds beyond the document it restores, say).
        ctx.ledger(READ_TABLE).absorb(ledger, {loss.id for loss in patched.losses})
        return patched

    def write(self, doc: ir.Document, ctx: Context) -> Any:
        codec = codec_for(ctx.namespaces)
        ledger = ctx.ledger(WRITE_TABLE, kind="residual" if ctx.options.residual else "dropped")
        # A continuity state that is not of its declared shape is foreign: carried like any
        # property continuity has no field for.
        origins: dict[str, list[list[str]]] | None = {} if ctx.source_document is not None else None
        untimed: list[str] = []
        export, carried = writer.write(doc, codec, lambda ref_type, rid: ledger.add(_FOREIGN, ref_type, rid), origins,
                                       untimed)
        if untimed:  # reported for this conversion (not carried: the return trip rebuilds the value)
            times = ctx.ledger(READ_TABLE)
            for branch_id in untimed:
                times.add("+time-unknown", "branch", branch_id)
        replay = artifacts.Replay(doc, ctx.embedded)  # what an artifacts folder gave the reader, if any
        plain_ledger = Ledger(load_table(READ_TABLE))
        plain = _plain_read(codec, export, [], plain_ledger, residual.Carried(carried), replay)
        listing = partial(_listing_ledger, codec, export, carried, doc, ctx)  # this export, read again
        if carried:  # listed apart from the records: nothing in a record marks it as ASIF data
            export = residual.attach(export, residual.CARRIED, carried)
        doc = _first_release_losses(doc, plain, listing)
        doc = _implied_state(doc, plain)
        doc = _first_release_forks(codec, doc, plain, export)
        doc = _losses_said_since(doc, plain)
        _record_losses(_diff(codec, plain, doc), ledger)
        # Losses travel: the document's own that the return trip would not re-derive, and ours
        # when nothing else restores the document (with a residual, the return trip is exact:
        # ours would be read back only for the residual to take them out again).
        base_losses = [codec.dump(loss) for loss in plain.losses]
        own = [d for d in (codec.dump(loss) for loss in doc.losses) if d not in base_losses]
        ours = [] if ctx.options.residual else ledger.losses()
        travelled = own + [codec.dump(loss) for loss in ours]
        if travelled:  # ours by table key and records: the table says the rest on the way back
            payload: dict[str, Any] = {"losses": own}
            if ours:
                payload["ours"] = {"kind": ledger.kind, "fields": ledger.compact()}
            export = residual.attach(export, residual.LOSSES, payload)
        if ctx.options.residual:
            plain.losses = [codec.load_loss(d) for d in _merge_losses(_resolved(travelled, plain), base_losses)]
            diff = _diff(codec, plain, doc)  # against what read() will rebuild
            if diff:
                if not carried:  # listed empty: an export with a residual that lists none is the first release's
                    export = residual.attach(export, residual.CARRIED, {"messages": [], "events": []})
                export = residual.attach(export, residual.RESIDUAL, {"patch": diff})
        if origins is not None:  # last: read() takes them out first, so nothing above sees them
            export = pointers.back(export, origins, msgspec.convert(ctx.source_document, pointers.DocumentRef),
                                   restored=ctx.options.residual)
        return export

    def write_streamed(self, doc: ir.Document, ctx: Context) -> tuple[dict[str, Any], str, Iterator[Any]]:
        """What ``write`` builds, as the export with an empty ``messages`` list in its place, the
        member's name, and its messages one by one: the caller encodes them a slice at a time,
        each let go of once encoded, so the export's values and its bytes never coexist whole.
        (The export is built whole first: the residual is what reading it back differs by.)"""
        export = self.write(doc, ctx)
        messages, export["messages"] = export["messages"], []
        return export, "messages", drained(messages)


def _diff(codec: Codec, base: ir.Document, target: ir.Document) -> dict[str, Any] | None:
    """``patch.diff`` of the two documents as ASIF JSON, dumping only the records that differ:
    most records are equal, and msgspec compares them without leaving C."""
    swap: dict[str, list[Any]] = {name: [] for name in _RECORDS}
    out = patch.diff(codec.dump_document(msgspec.structs.replace(base, **swap)),
                     codec.dump_document(msgspec.structs.replace(target, **swap))) or {}
    for name, key in _RECORDS.items():
        a, b = getattr(base, name), getattr(target, name)
        if a != b:
            dump = codec.dump_event if name == "events" else codec.dump
            sub = _diff_records(a, b, key, dump)
            if sub:
                out.setdefault("{}", {})[name] = sub
    return out or None

def _first_release_losses(doc: ir.Document, plain: ir.Document, listing: Callable[[], Ledger]) -> ir.Document:
    """``doc`` with each loss that is exactly as the first release wrote it for this export
    (listing every record that carries a field kept on it) replaced by today's form of it, so
    that its documents convert back exactly; any other loss is the document's own. ``listing``
    reads the export again into a ledger that remembers every record, only when a loss of
    ``doc`` differs from today's form."""
    new = {loss.id: loss for loss in plain.losses}
    if all(loss.id not in new or loss == new[loss.id] for loss in doc.losses):
        return doc
    old = {loss.id: loss for loss in listing().first_release_losses()}
    losses = [new[loss.id] if old.get(loss.id) == loss and loss.id in new else loss for loss in doc.losses]
    return msgspec.structs.replace(doc, losses=losses) if losses != doc.losses else doc


def _listing_ledger(codec: Codec, export: dict[str, Any], carried: dict[str, Any], doc: ir.Document,
                    ctx: Context) -> Ledger:
    ledger = Ledger(load_table(READ_TABLE), listing=True)
    _plain_read(codec, export, [], ledger, residual.Carried(carried), artifacts.Replay(doc, ctx.embedded))
    return ledger


def _losses_said_since(doc: ir.Document, plain: ir.Document) -> ir.Document:
    """``doc`` with the translation losses today's reading of the export derives and ``doc``
    lacks put in, where ``doc`` is our translation of exactly this export (its capture is the
    one today's reading gives, named by the export's digest): an earlier version that did not
    say them yet wrote it, and they say nothing of the document's own. Documents of anyone
    else keep their losses as they are."""
    if not isinstance(doc.capture, ir.Capture) or doc.capture != plain.capture:
        return doc
    have = {loss.id for loss in doc.losses}
    if all(loss.id in have for loss in plain.losses):
        return doc
    losses = list(doc.losses)
    at = 0
    for loss in plain.losses:
        if loss.id in have:
            at = next(k for k, mine in enumerate(losses) if mine.id == loss.id) + 1
        elif loss.id.startswith("translation:"):
            losses.insert(at, loss)
            at += 1
    return msgspec.structs.replace(doc, losses=losses)


def _implied_state(doc: ir.Document, plain: ir.Document) -> ir.Document:
    """``doc`` with each event's continuity state replaced by today's form of it, where the two
    say the same of the export just written: the first release's state of a split message (a
    template of its content_json, with its members) against today's (a difference from the
    rendering), and values the writer implies (a message's status ``complete``, its sequence
    when it is its position) written out against left out. Not data of the document's own."""
    today = {e.id: e.native.get(NAMESPACE) for e in plain.events}
    events, changed = [], False
    for ev in doc.events:
        old, new = ev.native.get(NAMESPACE), today.get(ev.id)
        if isinstance(old, dict) and isinstance(new, dict) and old != new and _same_state(old, new):
            ev = msgspec.structs.replace(ev, native={**ev.native, NAMESPACE: new})
            changed = True
        events.append(ev)
    return msgspec.structs.replace(doc, events=events) if changed else doc


def _same_state(old: dict[str, Any], new: dict[str, Any]) -> bool:
    # a foreign state (a sequence of 0, a status no enum has) was not written into the export:
    # it implies nothing, and only the residual brings it back
    implied = ("status", "sequence") if state.decode(old, state.EventState) is not None else ()
    said = {k: v for k, v in old.items() if not (k in implied and k not in new)}
    if "template" in said and "dialect" in new:
        return _without_group(said) == _without_group(new)
    return said == new


def _without_group(state: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in state.items() if k not in writer.GROUP_KEYS or k == "text_content"}


_FORK_LOSSES = ("translation:fork-point-inferred", "translation:fork-point-unknown")


def _first_release_forks(codec: Codec, doc: ir.Document, plain: ir.Document, export: dict[str, Any]) -> ir.Document:
    """``doc`` with the fork points the first release inferred (from messages and events alike)
    replaced by today's inference, when its forks and fork losses are exactly the first
    release's: they carry nothing continuity does not say, and its documents convert back
    exactly. Any other fork point is the document's own and travels in the residual."""
    forks = {b.id: b.fork for b in doc.branches}
    if forks == {b.id: b.fork for b in plain.branches}:
        return doc
    ledger = Ledger(load_table(READ_TABLE), listing=True)
    raw, _, _, carried = residual.split(export)
    old = reader.read(raw, reader.canonical_digest(raw), ledger, codec, carried=carried, first_release_forks=True)
    if forks != {b.id: b.fork for b in old.branches}:
        return doc
    old_losses = [loss for loss in ledger.first_release_losses() if loss.id in _FORK_LOSSES]
    if [loss for loss in doc.losses if loss.id in _FORK_LOSSES] != old_losses:
        return doc
    new_forks = {b.id: b.fork for b in plain.branches}
    branches = [msgspec.structs.replace(b, fork=new_forks.get(b.id, b.fork)) for b in doc.branches]
    at = next((k for k, loss in enumerate(doc.losses) if loss.id in _FORK_LOSSES), len(doc.losses))
    kept = [loss for loss in doc.losses if loss.id not in _FORK_LOSSES]
    losses = kept[:at] + [loss for loss in plain.losses if loss.id in _FORK_LOSSES] + kept[at:]
    return msgspec.structs.replace(doc, branches=branches, losses=losses)


def _own_losses(codec: Codec, ours: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The losses a conversion to continuity recorded, rebuilt from their table keys."""
    if not ours:
        return []
    ledger = Ledger(load_table(WRITE_TABLE), kind=ours["kind"])
    for key, refs in ours["fields"].items():
        ledger.add(key)
        for ref_type, rid in refs:
            ledger.add(key, ref_type, rid)
    return [codec.dump(loss) for loss in ledger.losses()]


def _patched(codec: Codec, restored: ir.Document, diff: dict[str, Any], check: bool) -> ir.Document | None:
    """The document the residual restores, or None when the patch does not apply to what the
    export holds (it was edited, or belongs to another export) or restores an invalid session."""
    try:
        out = patch.apply(codec.dump_document(restored), diff)
        if not isinstance(out, dict) or (check and _invalid(out)):
            return None
        return codec.load_document(out)
    except (KeyError, IndexError, TypeError, AttributeError, ValueError, msgspec.ValidationError):
        return None


def _invalid(doc: dict[str, Any]) -> bool:
    problems = schema_problems(ASIF_SCHEMA, doc) or check_semantics(doc)
    return any(p.severity == "error" for p in problems)


def _set_aside(codec: Codec, doc: dict[str, Any], raw: dict[str, Any], travelled: list[dict[str, Any]],
               carried: residual.Carried, ctx: Context) -> ir.Document:
    """The export read without a residual that does not restore a valid session from it as it
    is now (it was edited since, or belongs to another export): a warning and a loss say so,
    and the converter's own records (residual, losses, carried list) are not shown as the
    session's resources (docs/decisions.md, 48)."""
    at = next((i for i, s in enumerate(doc.get("native_states") or ()) if s.get("provider") == "asif"
               and s.get("kind") == residual.RESIDUAL), 0)
    ctx.warnings.append(Problem(rule="residual", path=f"/native_states/{at}/payload", severity="warning", message=(
        "the residual does not restore a valid session from this export as it is now (edited since it was "
        "written, or another export's): it is set aside, and what only it held is not restored")))
    ledger = ctx.ledger(READ_TABLE)
    ledger.add("+residual-set-aside")
    return _plain_read(codec, raw, travelled, ledger, carried, ctx.files, ctx.source_id)


def _plain_read(codec: Codec, raw: dict[str, Any], travelled: list[dict[str, Any]], ledger: Ledger,
                carried: residual.Carried, files: FileSource | None = None,
                source_id: str | None = None, release: bool = False) -> ir.Document:
    doc = reader.read(raw, reader.canonical_digest(raw), ledger, codec, files=files, source_id=source_id,
                      carried=carried, release=release)
    arrived = [codec.load_loss(loss) for loss in _merge_losses([], _resolved(travelled, doc))]
    ids = {loss.id for loss in arrived}
    doc.losses = arrived + [loss for loss in ledger.losses() if loss.id not in ids]
    return doc


def _record_losses(diff: dict[str, Any] | None, ledger: Ledger) -> None:
    """Each difference the return trip would show without the residual is a loss."""
    for path, ids in patch.changed_paths(diff):
        if path[0] == "losses":
            continue  # losses travel in their own entry
        ref_type = _REF_TYPES.get(path[0])
        ledger.add(_table_key(path, ledger.table.fields), ref_type, ids[0] if ids and ref_type else None)


def _resolved(losses: list[dict[str, Any]], doc: ir.Document) -> list[dict[str, Any]]:
    """Travelled losses, with references to entities that did not travel moved into the
    explanation: ASIF requires every loss reference to resolve."""
    if not losses:  # (the set below names every record of the document)
        return []
    present = {(_REF_TYPES[name], e.id) for name in _REF_TYPES if hasattr(doc, name) for e in getattr(doc, name)}
    present |= {(_REF_TYPES[name], e["id"]) for name in ("configurations", "environments")
                for e in doc.extras.get(name, ())}
    checked = set(_REF_TYPES.values())
    out = []
    for loss in losses:
        refs = loss.get("references") or []
        kept = [r for r in refs if r["type"] not in checked or (r["type"], r["id"]) in present]
        if len(kept) < len(refs):
            gone = ", ".join(f"{r['type']} {r['id']!r}" for r in refs if r not in kept)
            loss = {**loss, "explanation": f"{loss['explanation']} (not carried: {gone})"}
            if kept:
                loss["references"] = kept
            else:
                del loss["references"]
                loss.setdefault("scope", "conversation")
        out.append(loss)
    return out


def _diff_records(a: list[Any], b: list[Any], key: str, dump: Any) -> dict[str, Any] | None:
    ids_a, ids_b = [getattr(r, key) for r in a], [getattr(r, key) for r in b]
    if len(set(ids_a)) < len(ids_a) or len(set(ids_b)) < len(ids_b):  # not keyed: compare whole lists
        return patch.diff([dump(r) for r in a], [dump(r) for r in b])
    by_id = dict(zip(ids_a, a, strict=True))
    edits = {}
    for rid, record in zip(ids_b, b, strict=True):
        old = by_id.get(rid)
        if old is None:
            edits[rid] = {"=": dump(record)}
        elif old != record and (sub := patch.diff(dump(old), dump(record))):
            edits[rid] = sub
    out: dict[str, Any] = {"[]": edits}
    if ids_a != ids_b:
        out["order"] = ids_b
    if key != "id":
        out["key"] = key
    return out if edits or "order" in out else None


def _merge_losses(first: list[dict[str, Any]], then: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Both lists, a loss id at most once (the first wins): ASIF loss ids are unique."""
    out, ids = [], set()
    for loss in (*first, *then):
        if loss["id"] not in ids:
            ids.add(loss["id"])
            out.append(loss)
    return out


def _table_key(path: tuple[str, ...], fields: dict[str, Any]) -> str:
    """The mapping-table entry for a changed path: the longest declared prefix; a step into a
    property the schema does not declare is an additional property."""
    key = ""
    for step in path:
        nxt = key + "[]" if step == "[]" else (f"{key}.{step}" if key else step)
        if nxt.removesuffix("[]") not in fields and nxt not in fields:
            if key and fields.get(key.removesuffix("[]"), {}).get("rule") == "container":
                return "(additional properties)"
            break
        key = nxt
    return key.removesuffix("[]") or "(additional properties)"


FORMAT = ContinuityFormat()
