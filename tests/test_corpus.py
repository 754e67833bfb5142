"""Every corpus export converts to a valid ASIF session, deterministically, as the golden file says."""

from __future__ import annotations

import json
import os

from asif_convert import convert
from asif_convert._registry import get
from asif_convert._validation.schemas import ASIF_SCHEMA, schema_problems

from .conftest import CONTINUITY_FILES, GOLDEN


def golden_path(src):
    return GOLDEN / (src.stem + ".asif.json")


def test_corpus_is_not_empty():
    assert len(CONTINUITY_FILES) >= 10


def test_converts_to_valid_asif(continuity_file):
    result = convert(continuity_file.read_bytes(), to="asif", name=continuity_file.name)
    doc = json.loads(result.output)
    assert schema_problems(ASIF_SCHEMA, doc) == []
    assert get("asif").validate(doc) == []


def test_conversion_is_deterministic(continuity_file):
    data = continuity_file.read_bytes()
    assert convert(data, to="asif").output == convert(data, to="asif").output


def test_matches_golden(continuity_file):
    """Regenerate with ASIF_UPDATE_GOLDEN=1 after an intended change, and review the diff."""
    out = convert(continuity_file.read_bytes(), to="asif").output
    path = golden_path(continuity_file)
    if os.environ.get("ASIF_UPDATE_GOLDEN"):
        GOLDEN.mkdir(exist_ok=True)
        path.write_bytes(out)
    assert path.read_bytes() == out


def test_no_golden_without_source():
    sources = {p.stem for p in CONTINUITY_FILES}
    assert {p.name.removesuffix(".asif.json") for p in GOLDEN.glob("*.asif.json")} == sources
