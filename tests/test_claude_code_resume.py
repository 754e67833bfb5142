"""The real Claude Code is the judge of sessions of other formats written as its transcripts: every
text, call and result of the written history arrives, in order, in the request the client sends
after resuming the file; and every message, call and result of the session's active branch was
either written or is named by a loss."""

from __future__ import annotations

import json

import pytest

from asif_convert import InvalidInput, convert
from asif_convert._pipeline import load_session
from asif_convert.ir import continued_branch

from .conftest import ASIF_EXAMPLES, CONTINUITY_FILES

SESSIONS = [*CONTINUITY_FILES, *ASIF_EXAMPLES]
_CONVERSATION = ("message", "tool_call", "tool_result")


def _blocks(records: list[dict]) -> list[tuple[str, dict]]:
    return [(r["message"]["role"], b) for r in records for b in r["message"]["content"]]


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.stem)
def test_the_client_resumes_what_was_written_and_losses_name_the_rest(path, claude_code):
    try:
        result = convert(path.read_bytes(), to="claude-code", name=path.name)
    except InvalidInput as exc:
        assert "nothing in this session can be a Claude Code transcript" in str(exc)
        return
    written = [json.loads(line) for line in result.output.splitlines()]
    resumed = claude_code.resume(result.output, written[0]["sessionId"])
    sent = [(m["role"], b) for m in resumed.history() for b in m["content"]]
    assert sent == _blocks(written)

    doc = load_session(path.read_bytes())
    branch = continued_branch(doc)
    assert branch is not None
    by_id = {e.id: e for e in doc.events}
    named = {ref.id for loss in result.losses for ref in loss.references or ()}
    texts = json.dumps(_blocks(written))
    for eid in branch.event_ids:
        ev = by_id[eid]
        if ev.kind not in _CONVERSATION or eid in named:
            continue
        body = ev.body
        if ev.kind == "message":
            shown = [p.text for p in body.parts if hasattr(p, "text") and p.text]
            assert all(json.dumps(t)[1:-1] in texts for t in shown), eid
        else:
            assert json.dumps(body.call_id) in texts, eid
