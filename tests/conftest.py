from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "corpus"
CONTINUITY_FILES = sorted((CORPUS / "continuity").glob("*.json"))
ASIF_EXAMPLES = sorted((CORPUS / "asif").glob("*.json"))
GOLDEN = CORPUS / "golden"


def load_json(path: Path):
    return json.loads(path.read_bytes())


@pytest.fixture(params=CONTINUITY_FILES, ids=lambda p: p.stem)
def continuity_file(request) -> Path:
    return request.param
