"""The loss ledger: collects every dropped or approximated field during one conversion."""

from __future__ import annotations

from asif_convert import ir
from asif_convert._mapping import MappingTable


class Ledger:
    """One loss per (kind, source field), with typed references to every affected entity.

    Keys are mapping-table entries: a source field path (``messages[].status``) or a derived
    record (``+participants``). Kind, scope and explanation come from the table.
    """

    def __init__(self, table: MappingTable, stage: ir.LossStage = "translation", kind: str | None = None) -> None:
        self.table = table
        self.stage = stage
        self.kind = kind  # one kind for every loss, where the table leaves the kind to the caller
        self._refs: dict[str, dict[tuple[str, str], None]] = {}
        self._built: list[ir.Loss] | None = None

    def add(self, key: str, ref_type: str | None = None, ref_id: str | None = None) -> None:
        self._built = None
        refs = self._refs.get(key)
        if refs is None:
            self.table.loss(key)  # a key the table lacks fails here, where the caller is, not at the end
            refs = self._refs[key] = {}
        if ref_type is not None and ref_id is not None:
            refs[(ref_type, ref_id)] = None

    def losses(self) -> list[ir.Loss]:
        """The losses so far (built once per change: callers ask more than once)."""
        if self._built is None:
            self._built = self._build()
        return list(self._built)

    def _build(self) -> list[ir.Loss]:
        out = []
        for key, refs in self._refs.items():
            spec = self.table.loss(key)
            field = key[1:] if key.startswith("+") else key
            out.append(
                ir.Loss(
                    id=f"{self.stage}:{field}",
                    stage=self.stage,
                    kind=self.kind or spec.kind,
                    scope=spec.scope,
                    explanation=f"{field}: {spec.explanation}",
                    references=[ir.LossRef(type=t, id=i) for t, i in refs] if refs else ir.UNSET,
                )
            )
        return out
