"""The declarative mapping tables in ``mappings/``: one source of truth for where each field goes
and which loss it produces. The converter takes its loss vocabulary from here."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from typing import Any

from .resources import mapping_path


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
        """The loss a field (``messages[].status``) or a derived record (``+participants``) produces."""
        entry = self.derived[key[1:]] if key.startswith("+") else self.fields[key]
        return LossSpec(kind=entry["loss"], scope=entry["scope"], explanation=entry["explanation"])


@cache
def load_table(name: str) -> MappingTable:
    with mapping_path(f"{name}.toml").open("rb") as fh:
        raw = tomllib.load(fh)
    return MappingTable(
        name=name,
        meta=raw.get("meta", {}),
        kinds=raw.get("kinds", {}),
        fields=raw.get("fields", {}),
        derived=raw.get("derived", {}),
    )

