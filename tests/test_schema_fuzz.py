"""The schema-driven fuzzer (fuzz/schema_fuzz.py) in the suite: its ``ci`` profile, seeded, and a
hypothesis property over the same generator. Documents drawn from the two schemas end in exit 0,
1 or 4, never 3; every exit-0 output passes its schema (ASIF: and the semantic rules) and converts
back exactly. The ``deep`` profile (20,000 cases per direction) is run by hand: fuzz/README.md."""

from __future__ import annotations

import json
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from asif_convert._validation.schemas import ASIF_SCHEMA, CONTINUITY_SCHEMA, load_schema, schema_problems
from fuzz.schema_draw import SchemaDraw
from fuzz.schema_fuzz import DIRECTIONS, KNOWN_OWN_LOSSES, PROFILES, asif_case, check, continuity_case, run


def test_the_ci_profile_finds_nothing():
    tally = run(PROFILES["ci"], seed=0)
    assert tally.findings == [], tally.summary()
    for src in DIRECTIONS:  # the draws reach both outcomes, so the profile tests something
        assert tally.cases[src, 0] > 0 and tally.schema_valid[src] > 0, tally.summary()
    assert tally.cases["asif", 1] > 0, tally.summary()


@settings(max_examples=40)
@given(st.randoms(use_true_random=False), st.sampled_from(DIRECTIONS))
def test_documents_drawn_from_the_schemas_never_end_in_exit_3(rng, src):
    doc = (continuity_case if src == "continuity" else asif_case)(rng)
    code, why = check(json.dumps(doc, ensure_ascii=False).encode(), src)
    assert code in (0, 1, 4)
    assert why in (None, KNOWN_OWN_LOSSES), why


def test_whole_draws_from_the_schemas_are_mostly_valid():
    """A draw that misses its schema tests only the refusal: the generator must mostly hit it
    (every continuity draw; most ASIF ones, whose ``not`` and conditions it meets only in part)."""
    for name, least in ((CONTINUITY_SCHEMA, 40), (ASIF_SCHEMA, 28)):
        valid = 0
        for seed in range(40):
            draw = SchemaDraw(load_schema(name), random.Random(seed), ["a", "b"], optional=0.5)
            valid += schema_problems(name, draw.value(draw.root)) == []
        assert valid >= least, (name, valid)
