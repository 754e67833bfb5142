"""The declarative mapping tables in ``mappings/``: one source of truth for where each field goes
and which loss it produces. The converter takes its loss vocabulary from here."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import msgspec

from asif_convert._resources import mapping_path

# The built-in tables parsed once, as JSON (``mappings/compiled/``, written by
# ``python -m asif_convert._docs``): Python's TOML parser takes about 20 ms for the larger
# table, a tenth of a small conversion; decoding the same values from JSON, under 1 ms. Each
# names the digest of the TOML it was made from, and one that does not match is not used. The
# TOML parser itself (about 1.5 ms to import, its regular expressions compiled) is imported only
# where a TOML is parsed: a stale compiled table, writing them, a plugin's own table.
COMPILED = "compiled"


@dataclass(frozen=True)
class LossSpec:
    kind: str
    scope: str
    explanation: str


@dataclass(frozen=True)
class MappingTable:
    name: str
    meta: dict[str, Any]
    kinds: dict[str, str]  # loss kind -> what it means
    fields: dict[str, dict[str, Any]]  # source field path -> {target, rule, loss?, ...}
    derived: dict[str, dict[str, Any]]  # records synthesized on the target side

    def loss(self, key: str) -> LossSpec:
        """The loss a field (``messages[].status``) or a derived record (``+participants``) produces.

        Where an entry names no kind or scope, the table's ``meta.loss`` and the scope of the
        field's top-level collection (``meta.scopes``) apply."""
        entries, name = (self.derived, key[1:]) if key.startswith("+") else (self.fields, key)
        if name not in entries:
            raise KeyError(f"mapping table {self.name!r} has no {'derived record' if key.startswith('+') else 'field'} "
                           f"{name!r}")
        entry = entries[name]
        root = key.lstrip("+").split(".")[0].split("[")[0]
        scope = entry.get("scope") or self.meta.get("scopes", {}).get(root, "conversation")
        return LossSpec(kind=entry.get("loss") or self.meta.get("loss", "unmapped_field"), scope=scope,
                        explanation=entry.get("explanation") or f"no {self.meta.get('to', 'target')} field holds it.")


@cache
def load_table(name: str) -> MappingTable:
    """A built-in table of ``mappings/`` by name (``continuity-to-asif``): from its compiled
    form where that was made from the TOML as it is."""
    source = mapping_path(f"{name}.toml").read_bytes()
    try:
        compiled = msgspec.json.decode(mapping_path(f"{COMPILED}/{name}.json").read_bytes())
    except (OSError, msgspec.DecodeError):
        compiled = None
    if isinstance(compiled, dict) and compiled.get("toml_sha256") == hashlib.sha256(source).hexdigest():
        return _table(name, compiled["table"])
    import tomllib  # (a stale compiled table: see COMPILED)

    return _table(name, tomllib.loads(source.decode("utf-8")))


def compiled_table(name: str) -> bytes:
    """The compiled form of built-in table ``name``, as ``mappings/compiled/`` holds it."""
    import tomllib  # (see COMPILED: only to write the compiled tables)

    source = mapping_path(f"{name}.toml").read_bytes()
    table = tomllib.loads(source.decode("utf-8"))
    return msgspec.json.format(msgspec.json.encode({"toml_sha256": hashlib.sha256(source).hexdigest(),
                                                    "table": table}), indent=1) + b"\n"


def load_mapping(path: str | os.PathLike[str]) -> MappingTable:
    """A mapping table from a TOML file (how plugins bring their own loss vocabulary)."""
    import tomllib  # (see COMPILED: a plugin's own table)

    path = Path(path)
    with path.open("rb") as fh:
        raw = tomllib.load(fh)
    return _table(path.name.removesuffix(".toml"), raw)


def _table(name: str, raw: dict[str, Any]) -> MappingTable:
    return MappingTable(
        name=name,
        meta=raw.get("meta", {}),
        kinds=raw.get("kinds", {}),
        fields=raw.get("fields", {}),
        derived=raw.get("derived", {}),
    )

