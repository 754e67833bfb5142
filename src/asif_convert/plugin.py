"""The plugin API: what a format provides, and what the pipeline hands it.

A format is any object with the attributes and methods of :class:`Format`. Built-in formats
and third-party ones are equal: a distribution registers its format under the entry-point group
``asif_convert.formats``, and the registry loads it. A minimal plugin::

    from pathlib import Path

    from asif_convert import ir
    from asif_convert.plugin import Context, InvalidInput, Problem, load_mapping

    TABLE = load_mapping(Path(__file__).with_name("my-format-to-asif.toml"))

    class MyFormat:
        name = "my-format"
        description = "My runtime's session log"
        extension = ".my.json"
        namespace = "my-format/1"          # where its format-only fields live in IR ``native``
        mapping_tables = (TABLE,)          # their loss kinds become known to --fail-on

        def detect(self, doc): return isinstance(doc, dict) and doc.get("kind") == "my-format"
        def validate(self, doc): return []                     # list[Problem]
        def read(self, doc, ctx: Context) -> ir.Document:
            ledger = ctx.ledger(TABLE)                         # losses reported for this conversion
            ...
        def write(self, doc: ir.Document, ctx: Context): ...   # JSON values

    FORMAT = MyFormat()

A format of JSON Lines (one JSON value per line, as coding agents write their transcripts)
says ``shape = "lines"``; then ``detect`` gets the decoded values of the first complete records
(up to 20), ``validate`` and ``read`` get a :class:`Lines` (the records with their line numbers,
and what was wrong with the other lines, which the pipeline reports itself), and ``write``
returns the list of the output's line values, which the pipeline encodes one per line::

    class MyLog:
        name, description, extension, namespace = "my-log", "My agent's log", ".jsonl", "my-log/1"
        shape = "lines"

        def detect(self, first): return bool(first) and isinstance(first[0], dict) and "my_log" in first[0]
        def validate(self, lines: Lines): return []                        # Problem(line=...) each
        def read(self, lines: Lines, ctx: Context) -> ir.Document: ...     # lines.records: [(line, value)]
        def write(self, doc: ir.Document, ctx: Context) -> list: ...      # one JSON value per line

Formats depend on this module, :mod:`asif_convert.ir` and the shared content dialects only,
never on each other or on the registry.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from asif_convert import ir
from asif_convert._artifacts import MAX_ARTIFACT_BYTES, MAX_ARTIFACTS_TOTAL, ArtifactFiles
from asif_convert._errors import ConversionError, InvalidInput, Problem, UsageError
from asif_convert._ledger import Ledger
from asif_convert._limits import size_limit_problem
from asif_convert._lines import Lines, Record
from asif_convert._mapping import MappingTable, load_mapping, load_table

ENTRY_POINT_GROUP = "asif_convert.formats"

__all__ = ["ENTRY_POINT_GROUP", "Context", "ConversionError", "Format", "InvalidInput", "Ledger", "Lines",
           "MappingTable", "Options", "Problem", "Record", "UsageError", "load_mapping", "shape"]

LOSS_POLICIES = ("ignore", "warn", "error")


@dataclass(frozen=True)
class Options:
    """What the caller asked of one conversion."""

    strict: bool = False  # referential problems in the input are errors, not losses
    residual: bool = True  # the continuity writer carries what it cannot express
    validate: bool = True  # validate what the writer produced
    on_loss: str = "warn"  # ignore | warn | error: what a recorded loss means for the conversion
    fail_on: frozenset[str] = frozenset()  # loss kinds that refuse the conversion whatever on_loss says
    # Where artifact files may be read (None: no file is ever opened), and how much of them.
    artifacts_root: Path | None = None
    artifact_max_bytes: int = MAX_ARTIFACT_BYTES
    artifacts_max_total: int = MAX_ARTIFACTS_TOTAL
    # A folder inside artifacts_root that holds the files, reached without following a link
    # (a batch's per-export artifacts folder); None: artifacts_root itself.
    artifacts_folder: str | None = None
    source_pointers: bool = False  # carry the input as a resource; every event points at its record

    def __post_init__(self) -> None:
        if self.on_loss not in LOSS_POLICIES:
            raise UsageError(f"on_loss {self.on_loss!r} is not one of {', '.join(LOSS_POLICIES)}")
        for name in ("artifact_max_bytes", "artifacts_max_total"):
            problem = size_limit_problem(name, getattr(self, name))
            if problem is not None:
                raise UsageError(problem)
        kinds = (self.fail_on,) if isinstance(self.fail_on, str) else self.fail_on  # one kind, or several
        object.__setattr__(self, "fail_on", frozenset(kinds))
        if self.artifacts_root is not None and not isinstance(self.artifacts_root, str | os.PathLike):
            raise UsageError(f"artifacts_root must be a folder's path (str or os.PathLike), not "
                             f"{type(self.artifacts_root).__name__}")


@dataclass
class Context:
    """One conversion's shared state: the options, the native namespaces of every installed
    format (an ASIF property named after one is that format's home, not unknown data), and the
    loss ledgers the reader and the writer opened."""

    options: Options
    namespaces: frozenset[str]
    ledgers: list[Ledger] = field(default_factory=list)
    files: ArtifactFiles | None = None  # artifact files, inside Options.artifacts_root only
    embedded: dict[str, bytes] = field(default_factory=dict)  # bytes of the files a document embeds by path
    source_id: str | None = None  # with Options.source_pointers: the id of the input's own resource
    # with Options.source_pointers, writing continuity from ASIF: the input's name, bytes and sha256
    source_document: dict[str, Any] | None = None
    # The input carries records of the target format verbatim (an export carrying ASIF events a
    # continuity writer put there): an output that breaks the target's rules may break them
    # where those records do, which is the input's fault, not the converter's.
    carries_target_records: bool = False
    # The caller reads the input document once, through Format.read, and never looks at it again
    # (convert() does): a reader may let go of its records as it reads them, so that the IR takes
    # the memory the input held. Off for any other caller.
    release_input: bool = False
    # What a reader noticed that does not refuse the input but must be said (a residual set
    # aside): they join the input's warnings (Result.warnings)
    warnings: list[Problem] = field(default_factory=list)

    def ledger(self, table: str | MappingTable, kind: str | None = None) -> Ledger:
        """A new ledger whose losses this conversion reports. ``table`` is a mapping table a
        plugin loaded with :func:`load_mapping`, or the name of a built-in one."""
        ledger = Ledger(load_table(table) if isinstance(table, str) else table, kind=kind)
        self.ledgers.append(ledger)
        return ledger

    def losses(self) -> list[ir.Loss]:
        return [loss for ledger in self.ledgers for loss in ledger.losses()]


class Format(Protocol):
    """A format plugin. Its four attributes may be plain class attributes."""

    @property
    def name(self) -> str:
        """``asif``, ``continuity``: unique among installed formats."""
        ...

    @property
    def description(self) -> str: ...

    @property
    def extension(self) -> str:
        """What its files end with: ``.asif.json``."""
        ...

    @property
    def namespace(self) -> str | None:
        """Where its format-only fields live in IR ``native`` (None, or absent: it has none)."""
        ...

    def detect(self, doc: Any) -> bool:
        """Whether a parsed JSON document is of this format (cheap: look at a marker key); for a
        format of ``shape = "lines"``, the values of the first complete records (up to 20)."""
        ...

    def validate(self, doc: Any) -> list[Problem]:
        """Every problem of a parsed document (schema, then referential/semantic)."""
        ...

    def read(self, doc: Any, ctx: Context) -> ir.Document: ...

    def write(self, doc: ir.Document, ctx: Context) -> Any: ...


def shape(fmt: Format) -> str:
    """``"lines"`` for a format of JSON Lines, ``"document"`` (an absent ``shape``) for one JSON document."""
    return "lines" if getattr(fmt, "shape", "document") == "lines" else "document"


def files_inline(fmt: Format) -> bool:
    """Whether a format's output carries the files its session embeds by path inline, in the
    parts that use them (optional attribute ``files = "inline"``: an agent's transcript, one file
    with nothing beside it), rather than as files beside it (an ASIF package or folder, a
    continuity export's artifacts)."""
    return getattr(fmt, "files", "beside") == "inline"


def mapping_tables(fmt: Format) -> tuple[MappingTable, ...]:
    """The mapping tables a format declares (optional attribute ``mapping_tables``)."""
    return tuple(getattr(fmt, "mapping_tables", ()))

