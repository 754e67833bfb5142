"""Values a consumer can parse: every timestamp written into a continuity export is RFC 3339.
A branch the session gives no time for gets the documented "no time known" value (the Unix
epoch), with a time_unknown loss naming the branch."""

from __future__ import annotations

from datetime import datetime

import pytest

from asif_convert import Options, convert

from .conftest import ASIF_EXAMPLES

TIME_FIELDS = ("created_at", "updated_at")


def _times(export: dict) -> list[tuple[str, str]]:
    return [(f"{key}[{i}].{f}", rec[f]) for key in ("branches", "messages", "events", "checkpoints", "native_states",
                                                   "artifacts")
            for i, rec in enumerate(export.get(key) or []) for f in TIME_FIELDS if f in rec]


@pytest.mark.parametrize("residual", [True, False], ids=["residual", "no-residual"])
@pytest.mark.parametrize("example", ASIF_EXAMPLES, ids=lambda p: p.stem)
def test_every_continuity_timestamp_parses(example, residual):
    result = convert(example.read_bytes(), to="continuity", options=Options(residual=residual))
    for where, value in _times(result.document):
        try:
            datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            pytest.fail(f"{example.name}: {where} is {value!r}, not a timestamp")
    untimed = {b["branch_id"] for b in result.document.get("branches", []) if b["created_at"] == "1970-01-01T00:00:00Z"}
    said = {ref.id for loss in result.losses if loss.kind == "time_unknown" for ref in loss.references or ()}
    assert said == untimed

