"""What a format plugin provides, and the registry that finds them (built-ins and entry points)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from importlib.metadata import entry_points
from typing import Any, Protocol

from .. import ir
from ..errors import Problem
from ..ledger import Ledger
from ..mapping import load_table

ENTRY_POINT_GROUP = "asif_convert.formats"


@dataclass
class Options:
    strict: bool = False  # referential problems in the input are errors, not losses
    residual: bool = True  # the continuity writer carries what it cannot express
    validate: bool = True  # validate what the writer produced
    on_loss: str = "warn"  # ignore | warn | error: what a recorded loss means for the conversion
    fail_on: frozenset[str] = frozenset()  # loss kinds that refuse the conversion whatever on_loss says


@dataclass
class Context:
    """One conversion's shared state: options, and the loss ledgers its reader and writer opened."""

    options: Options
    ledgers: list[Ledger] = field(default_factory=list)

    def ledger(self, table: str, kind: str | None = None) -> Ledger:
        """A new ledger whose losses this conversion reports."""
        ledger = Ledger(load_table(table), kind=kind)
        self.ledgers.append(ledger)
        return ledger

    def losses(self) -> list[ir.Loss]:
        return [loss for ledger in self.ledgers for loss in ledger.losses()]


class Format(Protocol):
    name: str  # "asif", "continuity"
    description: str
    extension: str  # ".asif.json"
    namespace: str | None  # where its format-only fields live in IR ``native``

    def detect(self, doc: Any) -> bool: ...

    def validate(self, doc: Any) -> list[Problem]:
        """Every problem of a parsed document (schema, then referential/semantic)."""

    def read(self, doc: Any, ctx: Context) -> ir.Document: ...

    def write(self, doc: ir.Document, ctx: Context) -> Any: ...


@cache
def registry() -> dict[str, Format]:
    from .asif import FORMAT as ASIF
    from .continuity.plugin import FORMAT as CONTINUITY

    found: dict[str, Format] = {f.name: f for f in (CONTINUITY, ASIF)}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        fmt = ep.load()
        found.setdefault(fmt.name, fmt)
    return found


def get(name: str) -> Format:
    try:
        return registry()[name]
    except KeyError:
        raise KeyError(f"unknown format {name!r}; installed: {', '.join(sorted(registry()))}") from None


def detect(doc: Any) -> Format | None:
    return next((f for f in registry().values() if f.detect(doc)), None)


def namespaces() -> frozenset[str]:
    return frozenset(f.namespace for f in registry().values() if f.namespace)
