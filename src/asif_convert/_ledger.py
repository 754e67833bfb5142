"""The loss ledger: collects every dropped or approximated field during one conversion."""

from __future__ import annotations

from asif_convert import ir
from asif_convert._mapping import MappingTable

_ABOUT = "\x1f"  # between a table key and a loss's subject in the ledger's own keys (no table key holds it)


class Ledger:
    """One loss per (kind, source field), with typed references to every affected entity (none
    for a field kept verbatim on its own record: the records that carry it are the list).

    Keys are mapping-table entries: a source field path (``messages[].status``) or a derived
    record (``+participants``). Kind, scope and explanation come from the table.
    """

    def __init__(self, table: MappingTable, stage: ir.LossStage = "translation", kind: str | None = None,
                 listing: bool = False) -> None:
        self.table = table
        self.stage = stage
        self.kind = kind  # one kind for every loss, where the table leaves the kind to the caller
        # Whether the records of a field kept on its own record are remembered: its loss never
        # lists them (they are the records that carry it), only the first release's form does
        # (``first_release_losses``); on a record-dense session they are a tenth of its size.
        self.listing = listing
        self._refs: dict[str, dict[tuple[str, str], None]] = {}
        self._unlisted: set[str] = set()  # entries whose records are not remembered
        self._built: list[ir.Loss] | None = None
        # the last reference added: a record's losses come together, and share one tuple (on a
        # record-dense session, a tuple per loss per record is about half the input's size)
        self._last: tuple[str, str] = ("", "")

    def add(self, key: str, ref_type: str | None = None, ref_id: str | None = None, *,
            about: str | None = None) -> None:
        """``about`` splits one table entry into one loss per subject (a block type, say): the
        loss id and explanation name it."""
        self._built = None
        entry = key if about is None else f"{key}{_ABOUT}{about}"
        refs = self._refs.get(entry)
        if refs is None:
            self.table.loss(key)  # a key the table lacks fails here, where the caller is, not at the end
            refs = self._refs[entry] = {}
            if not self.listing and self._kept_on_record(key) is not None:
                self._unlisted.add(entry)
        if ref_type is not None and ref_id is not None and entry not in self._unlisted:
            last = self._last
            if last[1] != ref_id or last[0] != ref_type:
                last = self._last = (ref_type, ref_id)
            refs[last] = None

    def losses(self) -> list[ir.Loss]:
        """The losses so far (built once per change: callers ask more than once)."""
        if self._built is None:
            self._built = self._build()
        return list(self._built)

    def absorb(self, other: Ledger, kept: set[str]) -> None:
        """Take the entries of ``other`` (same table and stage) whose loss id is in ``kept``."""
        for (entry, refs), loss in zip(other._refs.items(), other.losses(), strict=True):
            if loss.id not in kept:
                continue
            key, _, about = entry.partition(_ABOUT)
            self.add(key, about=about or None)
            for ref_type, ref_id in refs:
                self.add(key, ref_type, ref_id, about=about or None)

    def compact(self) -> dict[str, list[list[str]]]:
        """The losses as ``{key: [[type, id], ...]}``: with the same table and kind, ``add``
        rebuilds them exactly (how a conversion's own losses travel in a few bytes)."""
        return {key: [[t, i] for t, i in refs] for key, refs in self._refs.items()}

    def first_release_losses(self) -> list[ir.Loss]:
        """The same losses as the first release wrote them (every record listed), to recognize
        them in the documents it wrote; only a ledger made with ``listing`` has them."""
        if not self.listing:
            raise ValueError("the first release's losses list every record: make the ledger with listing=True")
        return self._build(first_release=True)

    def _build(self, first_release: bool = False) -> list[ir.Loss]:
        out = []
        for entry_key, refs in self._refs.items():
            key, _, about = entry_key.partition(_ABOUT)
            spec = self.table.loss(key)
            field = key[1:] if key.startswith("+") else key
            entry = self.table.derived.get(field) if key.startswith("+") else self.table.fields.get(key)
            said = (entry or {}).get("first_release_explanation", spec.explanation) if first_release \
                else spec.explanation
            if about:
                field = f"{field}:{about}"  # the loss's subject, in its id and explanation
            explanation = f"{field}: {said}"
            where = None if first_release else self._kept_on_record(key)
            if where is not None:  # the records are exactly those that carry it: no list of them
                refs = {}
                explanation += f" It is kept at {where} on every record that carries it."
            out.append(
                ir.Loss(
                    id=f"{self.stage}:{field}",
                    stage=self.stage,
                    kind=self.kind or spec.kind,
                    scope=spec.scope,
                    explanation=explanation,
                    references=[ir.LossRef(type=t, id=i) for t, i in refs] if refs else ir.UNSET,
                )
            )
        return out

    def _kept_on_record(self, key: str) -> str | None:
        """Where a field kept verbatim on its own record is kept (the entry's target), or None
        for a loss whose records must be listed (dropped, approximated, synthesized values)."""
        entry = self.table.derived.get(key[1:]) if key.startswith("+") else self.table.fields.get(key)
        kept = entry.get("kept_on_record", entry.get("rule") == "preserved") if entry else False
        if not kept:
            return None
        return kept if isinstance(kept, str) else str(entry.get("target", "its record"))  # type: ignore[union-attr]


def name_extensions(ledger: Ledger, key: str, written: list[ir.Event], own: str | None = None) -> None:
    """A loss (the table's ``key``) for each namespace of extensions the written events hold but
    ``own`` (the state of the format a writer gives back line for line), naming the events: a
    writer of a format with no place for them (an agent's transcript) says they stay behind."""
    for namespace, event_ids in ir.extensions_held(written, own).items():
        for event_id in event_ids:
            ledger.add(key, "event", event_id, about=namespace or '""')
