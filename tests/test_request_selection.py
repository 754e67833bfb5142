"""What goes into a request: ``_request.selection.select`` on small IR sessions, the public
examples and generated sessions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import asif_convert
from asif_convert import InvalidInput, RequestRefused, ir
from asif_convert._codec import codec_for
from asif_convert._registry import namespaces
from asif_convert._request.selection import PERMISSIVE_SCHEMA, Input, select

from .strategies import asif_sessions

PROV = ir.Provenance(mode="observed", producer="test")


def ev(eid: str, seq: int, body: ir.Body, **kw: Any) -> ir.Event:
    return ir.Event(id=eid, sequence=seq, actor_id="a", body=body, provenance=PROV, **kw)


def msg(eid: str, seq: int, text: str, role: str = "user", **kw: Any) -> ir.Event:
    return ev(eid, seq, ir.Message(role=role, parts=[ir.TextPart(text=text)]), **kw)  # type: ignore[arg-type]


def call(eid: str, seq: int, call_id: str, tool: str = "t", args: Any = None, status: str = "complete",
         **kw: Any) -> ir.Event:
    return ev(eid, seq, ir.ToolCall(call_id=call_id, tool_id=tool, arguments=args or {},
                                    arguments_status=status), **kw)  # type: ignore[arg-type]


def result(eid: str, seq: int, call_id: str, index: int = 0, terminal: bool = True) -> ir.Event:
    return ev(eid, seq, ir.ToolResult(call_id=call_id, result_index=index, terminal=terminal,
                                      outcome="success" if terminal else "unknown", parts=[ir.TextPart(text="ok")]))


def branch(bid: str, *eids: str, fork: ir.Fork | None = None) -> ir.Branch:
    return ir.Branch(id=bid, event_ids=list(eids), head_event_id=eids[-1] if eids else None,
                     fork=fork if fork is not None else msgspec.UNSET)


def doc(events: list[ir.Event], branches: list[ir.Branch] | None = None, **kw: Any) -> ir.Document:
    return ir.Document(capture=ir.Capture(id="cap", producer=ir.Producer(name="p", version="1"),
                                          consistency="unknown", boundary="b"),
                       session=ir.Session(id="s"), events=events,
                       branches=branches if branches is not None else [branch("main", *(e.id for e in events))],
                       **kw)


def fork(parent: str, at: str | None, inclusive: bool = True, session: str = "s", capture: str = "cap") -> ir.Fork:
    return ir.Fork(session_id=session, capture_id=capture, branch_id=parent, event_id=at, inclusive=inclusive)


def ids(selection: Any) -> list[str]:
    return [i.id for i in selection.inputs]


def texts(selection: Any) -> list[str]:
    return [p.text for i in selection.inputs for p in i.parts if isinstance(p, ir.TextPart)]


# -- the branch history -----------------------------------------------------------------------------


def test_the_only_branch_is_selected_in_its_order():
    d = doc([msg("m1", 0, "hi"), msg("m2", 1, "hello", "assistant"), msg("m3", 2, "more")])
    s = select(d)
    assert (s.branch_id, s.context_id, ids(s)) == ("main", None, ["m1", "m2", "m3"])
    assert [i.role for i in s.inputs] == ["user", "assistant", "user"]
    assert s.inputs[1].source_events == (d.events[1],)


def test_a_fork_takes_the_parents_events_up_to_the_fork_point_inclusive_or_not():
    events = [msg("m1", 0, "a"), msg("m2", 1, "b"), msg("m3", 2, "c"), msg("x1", 3, "side")]
    main = branch("main", "m1", "m2", "m3")
    for inclusive, expected in ((True, ["m1", "m2", "x1"]), (False, ["m1", "x1"])):
        d = doc(events, [main, branch("side", "x1", fork=fork("main", "m2", inclusive))])
        assert ids(select(d, branch="side")) == expected


def test_nested_forks_are_followed_to_the_root_and_a_listed_prefix_is_taken_once():
    events = [msg("m1", 0, "a"), msg("m2", 1, "b"), msg("x1", 2, "c"), msg("y1", 3, "d"), msg("m3", 4, "e")]
    d = doc(events, [branch("main", "m1", "m2", "m3"),
                     branch("side", "m1", "m2", "x1", fork=fork("main", "m2")),  # lists the shared prefix too
                     branch("deep", "y1", fork=fork("side", "x1"))])
    assert ids(select(d, branch="deep")) == ["m1", "m2", "x1", "y1"]
    assert ids(select(d, branch="side")) == ["m1", "m2", "x1"]


def test_a_fork_at_null_starts_from_nothing():
    d = doc([msg("m1", 0, "a"), msg("x1", 1, "b")],
            [branch("main", "m1"), branch("side", "x1", fork=fork("main", None))])
    assert ids(select(d, branch="side")) == ["x1"]


def test_a_fork_from_another_capture_keeps_the_branch_and_names_the_missing_history():
    d = doc([msg("x1", 0, "b")], [branch("side", "x1", fork=fork("elsewhere", "e9", capture="other"))])
    s = select(d)
    assert ids(s) == ["x1"]
    assert [loss.kind for loss in s.losses] == ["history_outside_capture"]


@pytest.mark.parametrize(("branches", "path"), [
    ([branch("main", "m1"), branch("side", "x1", fork=fork("gone", "m1"))], "/branches/1/fork/branch_id"),
    ([branch("main", "m1"), branch("side", "x1", fork=fork("main", "nowhere"))], "/branches/1/fork/event_id"),
    ([branch("main", "m1", fork=fork("side", "x1")), branch("side", "x1", fork=fork("main", "m1"))],
     "/branches/1/fork/branch_id"),
    ([branch("main", "m1"), branch("side", "x1", "missing")], "/branches/1/event_ids/1"),
])
def test_a_broken_history_is_refused_with_its_pointer(branches, path):
    d = doc([msg("m1", 0, "a"), msg("x1", 1, "b")], branches)
    with pytest.raises(InvalidInput) as caught:
        select(d, branch="side")
    assert [p.path for p in caught.value.problems] == [path]
    assert caught.value.exit_code == 1


def test_unknown_branch_and_context_and_an_empty_history_are_refused():
    d = doc([msg("m1", 0, "a")], [branch("main", "m1"), branch("empty")])
    for kwargs, path, said in (({"branch": "nope"}, "/branches", "'main'"),
                               ({"context": "nope"}, "/contexts", "known contexts: none"),
                               ({"branch": "empty"}, "/branches/1/event_ids", "no message")):
        with pytest.raises(InvalidInput) as caught:
            select(d, **kwargs)
        assert caught.value.problems[0].path == path and said in caught.value.problems[0].message


def test_several_branches_without_an_active_one_ask_for_a_choice_and_a_head_checkpoint_decides():
    events = [msg("m1", 0, "a"), msg("x1", 1, "b")]
    branches = [branch("main", "m1"), branch("side", "x1", fork=fork("main", "m1"))]
    with pytest.raises(InvalidInput, match="--branch"):
        select(doc(events, branches))
    heads = [ir.Checkpoint(id="c1", branch_id="main", at_event_id="m1", knowledge="unknown", status="idle"),
             ir.Checkpoint(id="c2", branch_id="side", at_event_id="x1", knowledge="observed", status="active")]
    assert select(doc(events, branches, checkpoints=heads)).branch_id == "side"


def test_a_continuity_exports_active_branch_is_the_default():
    d = doc([msg("m1", 0, "a"), msg("x1", 1, "b")], [branch("main", "m1"), branch("side", "x1")])
    d.session = ir.Session(id="s", native={"agent-continuity/1": {"active_branch_id": "side"}})
    assert select(d).branch_id == "side"


# -- corrections, calls, compaction, other kinds ------------------------------------------------------


def test_a_correction_stands_where_the_history_has_it_and_the_original_leaves():
    d = doc([msg("m1", 0, "typo"), msg("m2", 1, "fixed", supersedes=ir.EventRef(event_id="m1"))])
    assert ids(select(d)) == ["m2"] and texts(select(d)) == ["fixed"]


def test_a_call_amendment_folds_into_its_originals_place_with_the_final_arguments():
    d = doc([msg("m1", 0, "go"), call("c1", 1, "k", args={"q": "pa"}, status="partial"), result("r1", 2, "k", 0, False),
             call("c2", 3, "k", args={"q": "part"}, supersedes=ir.EventRef(event_id="c1")), result("r2", 4, "k", 1)],
            tools=[ir.Tool(id="t", name="t", description="", input_schema={"type": "object"})])
    s = select(d)
    assert ids(s) == ["m1", "c1", "r1", "r2"]
    assert (s.inputs[1].arguments, s.inputs[1].arguments_status) == ({"q": "part"}, "complete")
    assert [e.id for e in s.inputs[1].source_events] == ["c1", "c2"]


def test_compaction_replaces_the_history_before_its_boundary_with_the_summary():
    summary = {"id": "sum", "kind": "message", "role": "user", "parts": [{"kind": "text", "text": "summary"}],
               "source_events": [{"event_id": "m1"}, {"event_id": "m2"}], "transformation": "summarized"}
    d = doc([msg("m1", 0, "a"), msg("m2", 1, "b", "assistant"),
             ev("k", 2, ir.ContextCheckpoint(context_id="packed", reason="compaction")), msg("m3", 3, "after")],
            contexts=[ir.Context(id="packed", branch_id="main", at_event_id="m2", purpose="continuation",
                                 fidelity="reconstructed", inputs=[summary])])
    s = select(d)
    assert ids(s) == ["sum", "m3"] and s.inputs[0].transformation == "summarized"
    assert "summarization" in [loss.kind for loss in s.losses]


def test_kinds_with_no_model_input_leave_a_loss_naming_each_event_and_bookkeeping_leaves_none():
    d = doc([msg("m1", 0, "a"), ev("t1", 1, ir.TaskUpdate(task_id="x", revision=1, status="pending", parts=[])),
             ev("n1", 2, ir.Note(parts=[ir.TextPart(text="fyi")], category="c")),
             ev("x1", 3, ir.ExecutionTransition(execution_id="e", status="running"))])
    s = select(d)
    assert ids(s) == ["m1"]
    assert [(loss.kind, [r.id for r in loss.references or ()]) for loss in s.losses] == [("omitted_event", ["t1"])]


# -- pending calls ----------------------------------------------------------------------------------


def open_call_doc() -> ir.Document:
    return doc([msg("m1", 0, "go"), call("c1", 1, "k"), msg("m2", 2, "waiting", "assistant")],
               tools=[ir.Tool(id="t", name="t", description="", input_schema={"type": "object"})])


def test_a_call_with_no_result_is_refused_by_default_naming_the_call_and_its_path():
    with pytest.raises(RequestRefused) as caught:  # (the document is valid: the request is refused)
        select(open_call_doc())
    [problem] = caught.value.problems
    assert problem.path == "/events/1" and "'k'" in problem.message and "--pending" in problem.message


def test_pending_drop_and_as_error():
    dropped = select(open_call_doc(), pending="drop")
    assert ids(dropped) == ["m1", "m2"] and [loss.kind for loss in dropped.losses] == ["pending_call_dropped"]
    answered = select(open_call_doc(), pending="as-error")
    assert ids(answered) == ["m1", "c1", "c1~pending-error", "m2"]
    added = answered.inputs[2]
    assert (added.kind, added.call_id, added.terminal, added.outcome) == ("tool_result", "k", True, "error")
    assert [loss.kind for loss in answered.losses] == ["synthesized_result"]


def test_pending_as_error_answers_each_call_after_its_last_input():
    # Two open calls, one with a progress result: each answer follows its own call's last input.
    d = doc([msg("m1", 0, "go"), call("c1", 1, "k"), call("c2", 2, "j"), result("r1", 3, "k", index=4, terminal=False),
             msg("m2", 4, "waiting", "assistant")])
    answered = select(d, pending="as-error")
    assert ids(answered) == ["m1", "c1", "c2", "c2~pending-error", "r1", "c1~pending-error", "m2"]
    assert [(i.call_id, i.result_index) for i in answered.inputs if i.id.endswith("~pending-error")] == [
        ("j", 0), ("k", 5)]


def test_pending_drop_names_every_event_it_leaves_out():
    # An amended call (two versions) answered only by a progress result: all three events leave.
    d = doc([msg("m1", 0, "go"), call("c1", 1, "k"), result("r1", 2, "k", terminal=False),
             call("c2", 3, "k", args={"q": 1}, supersedes=ir.EventRef(event_id="c1")), msg("m2", 4, "later")])
    dropped = select(d, pending="drop")
    assert ids(dropped) == ["m1", "m2"]
    [loss] = [loss for loss in dropped.losses if loss.kind == "pending_call_dropped"]
    assert [r.id for r in loss.references or ()] == ["c1", "c2", "r1"]


# -- contexts, configurations, tools ---------------------------------------------------------------


def context_doc(**context: Any) -> ir.Document:
    inputs = [{"id": "i1", "kind": "message", "role": "user", "parts": [{"kind": "text", "text": "q"}],
               "source_events": [{"event_id": "m1"}]},
              {"id": "i2", "kind": "tool_call", "role": "assistant", "parts": [], "source_events": [{"event_id": "c1"}],
               "call_id": "k", "tool_id": "t", "arguments": {"a": 1}, "arguments_status": "complete"},
              {"id": "i3", "kind": "tool_result", "role": "tool", "parts": [{"kind": "text", "text": "ok"}],
               "source_events": [{"event_id": "r1"}], "call_id": "k", "result_index": 0, "terminal": True,
               "outcome": "success"}]
    configurations = [{"id": f"cfg{n}", "knowledge": "declared", "instructions": [
        {"id": "i", "parts": [{"kind": "text", "text": f"be helpful {n}"}]}]} for n in (1, 2)]
    return doc([msg("m1", 0, "q"), call("c1", 1, "k"), result("r1", 2, "k"),
                ev("cc", 3, ir.ConfigurationChange(configuration_id="cfg2"))],
               contexts=[ir.Context(id="ctx", branch_id="main", at_event_id="r1", purpose="model_request",
                                    fidelity=context.pop("fidelity", "exact"), inputs=inputs, tool_ids=["t"],
                                    **context)],
               tools=[ir.Tool(id="t", name="t", description="", input_schema=True),
                      ir.Tool(id="u", name="u", description="", input_schema={"type": "object"})],
               extras={"configurations": configurations})


def test_a_context_gives_its_inputs_exactly_its_tools_and_its_configuration():
    s = select(context_doc(configuration_id="cfg1", fidelity="reconstructed"), context="ctx")
    assert (s.context_id, ids(s)) == ("ctx", ["i1", "i2", "i3"])
    assert (s.inputs[1].call_id, s.inputs[1].arguments, s.inputs[2].outcome) == ("k", {"a": 1}, "success")
    assert [e.id for e in s.inputs[0].source_events] == ["m1"]
    assert [p.text for p in s.instructions] == ["be helpful 1"]  # type: ignore[union-attr]
    assert [(t.id, t.input_schema) for t in s.tools] == [("t", PERMISSIVE_SCHEMA)]  # u is not among its tool_ids
    assert {loss.kind for loss in s.losses} == {"context_fidelity", "unknown_mapping"}


def test_the_branchs_latest_configuration_change_gives_the_instructions():
    s = select(context_doc())
    assert [p.text for p in s.instructions] == ["be helpful 2"]  # type: ignore[union-attr]
    assert [t.id for t in s.tools] == ["t", "u"]


def test_a_tool_known_only_by_its_calls_is_offered_with_a_permissive_schema_and_a_loss():
    d = doc([msg("m1", 0, "go"), call("c1", 1, "k", tool="ghost"), result("r1", 2, "k")])
    s = select(d)
    assert [(t.id, t.input_schema) for t in s.tools] == [("ghost", PERMISSIVE_SCHEMA)]
    assert [loss.kind for loss in s.losses] == ["synthesized_tool"]


def test_loss_ids_are_deterministic_and_unique():
    first, again = select(context_doc(), context="ctx"), select(context_doc(), context="ctx")
    assert [loss.id for loss in first.losses] == [loss.id for loss in again.losses]
    assert len({loss.id for loss in first.losses}) == len(first.losses)


# -- agreement with the ASIF reference's projection of a context ----------------------------------

REFERENCE = Path(__file__).parent / "fixtures" / "request-reference"
CORPUS = Path(__file__).parent.parent / "corpus" / "asif"
CODEC = codec_for(namespaces())


def as_context_input(i: Input) -> dict[str, Any]:
    """An Input back in the shape of an ASIF context input."""
    out: dict[str, Any] = {"id": i.id, "kind": i.kind, "role": i.role, "parts": [CODEC.dump_part(p) for p in i.parts],
                           "source_events": [{"event_id": e.id} for e in i.source_events]}
    for name in ("call_id", "tool_id", "arguments", "arguments_status", "result_index", "terminal", "outcome",
                 "transformation"):
        if getattr(i, name) is not None:
            out[name] = getattr(i, name)
    return out


@pytest.mark.parametrize("fixture", sorted(REFERENCE.glob("*.json")), ids=lambda p: p.stem)
def test_a_contexts_inputs_agree_with_the_reference(fixture):
    expected = json.loads(fixture.read_text())
    example, context = fixture.stem.split(".", 1)
    s = select(asif_convert.load(CORPUS / f"{example}.session.json"), context=context)
    assert [as_context_input(i) for i in s.inputs] == expected["inputs"]
    assert [t.id for t in s.tools] == [t["id"] for t in expected["tools"]]
    configuration = s.document.extras["configurations"]
    assert expected["configuration_id"] in (None, *(c["id"] for c in configuration))
    fidelity = [loss for loss in s.losses if loss.kind == "context_fidelity"]
    assert bool(fidelity) == (expected["fidelity"] != "exact")


def test_the_reference_fixtures_cover_the_examples_with_contexts_named_for_agreement():
    stems = {p.stem for p in REFERENCE.glob("*.json")}
    assert {"multi-agent-review.editor-context", "compaction-with-attachment.compacted"} <= stems


# -- generated sessions -------------------------------------------------------------------------------


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(asif_sessions(), st.sampled_from(["refuse", "drop", "as-error"]), st.data())
def test_selection_raises_only_its_refusals_and_carries_every_message_call_and_result(raw, pending, data):
    document = asif_convert.load(raw)
    bid = data.draw(st.sampled_from([b.id for b in document.branches]))
    try:
        s = select(document, branch=bid, pending=pending)
    except (InvalidInput, RequestRefused) as exc:
        assert exc.problems and all(p.path.startswith("/") for p in exc.problems)
        return
    carried = {e.id for i in s.inputs for e in i.source_events}
    named = {r.id for loss in s.losses for r in loss.references or ()}
    summarized = any(loss.kind == "summarization" for loss in s.losses)
    superseded = {e.supersedes.event_id for e in document.events if e.supersedes is not msgspec.UNSET}
    branch_ = next(b for b in document.branches if b.id == bid)
    for eid in branch_.event_ids:
        event = next(e for e in document.events if e.id == eid)
        if event.kind in ("message", "tool_call", "tool_result") and eid not in superseded and not summarized:
            assert eid in carried or eid in named, f"{eid} ({event.kind}) is neither carried nor named by a loss"
    assert len({i.id for i in s.inputs}) == len(s.inputs)
    if pending != "refuse":
        closed = {i.call_id for i in s.inputs if i.kind == "tool_result" and i.terminal}
        assert all(i.call_id in closed for i in s.inputs if i.kind == "tool_call")


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(asif_sessions(), st.data())
def test_every_recorded_context_is_selected_exactly_or_refused_as_invalid_input(raw, data):
    document = asif_convert.load(raw)
    if not document.contexts:
        return
    context = data.draw(st.sampled_from(document.contexts))
    try:
        s = select(document, context=context.id, pending="as-error")
    except InvalidInput:
        return
    recorded = [i["id"] for i in context.inputs]
    assert [i.id for i in s.inputs if not i.id.endswith("~pending-error")] == recorded


# -- the public typed load() ------------------------------------------------------------------------


def test_load_reads_every_supported_input_as_the_typed_session():
    path = CORPUS / "multi-agent-review.session.json"
    from_path = asif_convert.load(path)
    assert isinstance(from_path, ir.Document) and from_path.session.id
    assert asif_convert.load(path.read_bytes()) == from_path == asif_convert.load(json.loads(path.read_text()))
    package = asif_convert.convert(path, to="asif", package=True).output
    assert asif_convert.load(package).session.id == from_path.session.id
    export = asif_convert.load(Path(__file__).parent.parent / "corpus" / "continuity" / "05-forks.json")
    assert len(export.branches) == 3 and select(export, branch=export.branches[1].id).inputs


def test_load_refuses_as_convert_does():
    for bad in (b"{", b'{"asif_version": "0.4"}', b'{"format": "nope"}'):
        with pytest.raises(InvalidInput) as loaded:
            asif_convert.load(bad, name="x.json")
        with pytest.raises(InvalidInput) as converted:
            asif_convert.convert(bad, to="continuity", name="x.json")
        assert loaded.value.problems == converted.value.problems and loaded.value.exit_code == 1
    with pytest.raises(asif_convert.UsageError):
        asif_convert.load(42)  # type: ignore[arg-type]


def test_load_keeps_the_documents_losses_and_adds_what_reading_it_recorded():
    export = Path(__file__).parent.parent / "corpus" / "continuity" / "08-checkpoints.json"
    converted = asif_convert.convert(export, to="asif")
    assert [loss.id for loss in asif_convert.load(export).losses] == [loss.id for loss in converted.losses]


def test_a_real_continuity_export_with_forks_continues_its_active_branch():
    """Read through the continuity reader, not built by hand: the export's own active branch."""
    from asif_convert import request

    doc = json.loads((CORPUS.parent / "continuity/05-forks.json").read_text())
    result = request(json.dumps(doc).encode(), provider="openai-chat")
    assert doc["session"]["active_branch_id"] == "br-05-alt-token-bucket"
    sent = json.dumps(result.body)
    text = {m["message_id"]: json.dumps(m["text_content"])[1:-1] for m in doc["messages"]}
    assert text["msg-05-alt-7"] in sent and text["msg-05-main-3"] in sent  # its own, and its parent's before the fork
    assert text["msg-05-redis-7"] not in sent and text["msg-05-main-6"] not in sent


def test_pending_as_error_answers_calls_issued_together_after_all_of_them():
    # Two calls in a row with no result: the answers follow both, so the calls stay one round.
    d = doc([msg("m1", 0, "go"), call("c1", 1, "k"), call("c2", 2, "j"), msg("m2", 3, "next", "user")])
    answered = select(d, pending="as-error")
    assert ids(answered) == ["m1", "c1", "c2", "c1~pending-error", "c2~pending-error", "m2"]
