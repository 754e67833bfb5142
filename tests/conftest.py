from __future__ import annotations

import json
from pathlib import Path

import pytest

# The real coding-agent clients and their mock model server (tests/agents/).
pytest_plugins = ["tests.agents.fixtures"]

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


# -- hypothesis profiles for tests/test_properties.py -------------------------------------------
# ``ci`` (the default) is bounded and derandomized, so CI runs are fast and reproducible;
# ``deep`` runs many more examples. Choose with ASIF_HYPOTHESIS_PROFILE=ci|deep.
import os  # noqa: E402

from hypothesis import HealthCheck, Phase, settings  # noqa: E402

_SUPPRESSED = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much,
               HealthCheck.large_base_example]
settings.register_profile("ci", max_examples=75, deadline=None, derandomize=True, database=None,
                          suppress_health_check=_SUPPRESSED, print_blob=True)
settings.register_profile("deep", max_examples=1000, deadline=None, suppress_health_check=_SUPPRESSED,
                          phases=list(Phase), print_blob=True)
settings.load_profile(os.environ.get("ASIF_HYPOTHESIS_PROFILE", "ci"))
