"""Locate the data files (schemas, mapping tables) in a wheel or in a source checkout."""

from __future__ import annotations

from functools import cache
from pathlib import Path


@cache
def data_dir(kind: str) -> Path:
    """``kind`` is ``schemas`` or ``mappings``. Wheels carry them under ``asif_convert/_data``."""
    packaged = Path(__file__).parent / "_data" / kind
    if packaged.is_dir():
        return packaged
    checkout = Path(__file__).resolve().parents[2] / kind
    if checkout.is_dir():
        return checkout
    raise FileNotFoundError(f"asif-convert data folder {kind!r} is missing from the installation")


def schema_path(name: str) -> Path:
    return data_dir("schemas") / name


def mapping_path(name: str) -> Path:
    return data_dir("mappings") / name
