"""The converter's own state is read back through declared types: whatever a document holds in
the ``agent-continuity/1`` namespace or in the ``asif`` native states of an export, a value of
another shape is foreign data. It is kept where it stands, reported as a loss, and the conversion
goes on: never an exception, never exit 3, never an invalid output."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import assume, given, note
from hypothesis import strategies as st

from asif_convert import InvalidInput, Options, UsageError, convert
from asif_convert._pipeline import load_session
from asif_convert._registry import get

from .conftest import ASIF_EXAMPLES, CONTINUITY_FILES, ROOT, load_json
from .strategies import asif_sessions, json_scalars, json_values
from .test_roundtrip import asif_of, exact

NS = "agent-continuity/1"
ASIF = get("asif")
CONTINUITY = get("continuity")
FIXTURES = __import__("pathlib").Path(__file__).parent / "fixtures" / "golden-v1"
OLD_GOLDENS = sorted(FIXTURES.glob("*.asif.json"))

# The converter's own vocabulary: keys and values a hand edit (or a hostile document) might
# use to impersonate its state.
VOCABULARY = ("members", "template", "dialect", "msg", "call", "result", "res", "role", "text_content",
              "sequence", "status", "id", "session_id", "run_id", "branch_id_absent", "synthesized", "absent",
              "asif.piece/1", "asif.parts/1", "encode", "patch", "losses", "=", "{}", "[]", "-", "order", "key",
              "native_states_added", "parent_branch_id", "branch_id", "metadata", "summary", "provider", "kind")
vocab_json = st.recursive(
    st.one_of(json_scalars, st.sampled_from(VOCABULARY)),
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.one_of(st.sampled_from(VOCABULARY), st.text(max_size=4)), inner,
                                            max_size=4)),
    max_leaves=10,
)


def encode(doc: Any) -> bytes:
    return json.dumps(doc, ensure_ascii=False).encode()


def errors(fmt: Any, doc: Any) -> list:
    return [p for p in fmt.validate(doc) if p.severity == "error"]


def golden(name: str) -> dict[str, Any]:
    source = next(p for p in CONTINUITY_FILES if name in p.name)
    return json.loads(asif_of(source))


def state_of(event: dict[str, Any]) -> dict[str, Any]:
    return event["extensions"][NS]


def there_and_back(doc: dict[str, Any], residual: bool = True) -> tuple[Any, Any]:
    middle = convert(encode(doc), to="continuity", options=Options(residual=residual))
    assert errors(CONTINUITY, middle.document) == []
    back = convert(middle.output, to="asif")
    assert errors(ASIF, back.document) == []
    return middle, back


def _edit_session_string(doc):
    doc["session"][NS] = "a string"
    return None


def _edit_status_number(doc):
    doc["session"][NS] = {"status": 5}
    return None


def _edit_branch_true(doc):
    doc["branches"][0][NS] = True
    return ("branch", doc["branches"][0]["id"])


def _edit_sequence_string(doc):
    event = next(e for e in doc["events"] if NS in e.get("extensions", {}))
    state_of(event)["sequence"] = "3"
    return ("event", event["id"])


def first_release(name: str) -> dict[str, Any]:
    return load_json(next(p for p in OLD_GOLDENS if name in p.name))


def _edit_diff_shape(doc):
    event = next(e for e in doc["events"] if "dialect" in e.get("extensions", {}).get(NS, {}))
    state_of(event)["diff"] = {"#": {"0": 5}}
    return ("event", event["id"])


def _edit_style_order(doc):
    event = next(e for e in doc["events"] if "dialect" in e.get("extensions", {}).get(NS, {}))
    state_of(event)["style"] = {"o": "xyz"}
    return ("event", event["id"])


def _edit_members_missing(doc):
    event = next(e for e in doc["events"] if "dialect" in e.get("extensions", {}).get(NS, {}))
    state_of(event)["members"] = {"msg": event["id"], "call": ["nowhere"], "result": []}
    return ("event", event["id"])


def _edit_template_missing_part(doc):
    event = next(e for e in doc["events"] if "template" in e.get("extensions", {}).get(NS, {}))
    state_of(event)["template"] = [{"type": "text", "text": {"asif.piece/1": ["msg", 0, "parts", 7, "text"]}}]
    return ("event", event["id"])


def _edit_member_missing(doc):
    event = next(e for e in doc["events"] if "members" in e.get("extensions", {}).get(NS, {}))
    state_of(event)["members"]["call"] = ["nowhere"]
    return ("event", event["id"])


def _edit_member_of_two_groups(doc):
    anchors = [e for e in doc["events"] if "members" in e.get("extensions", {}).get(NS, {})]
    state_of(anchors[1])["members"] = copy.deepcopy(state_of(anchors[0])["members"])
    return ("event", anchors[1]["id"])


def _edit_event_list(doc):
    event = next(e for e in doc["events"] if NS in e.get("extensions", {}))
    event["extensions"][NS] = [1, 2]
    return ("event", event["id"])


def _edit_context_summary(doc):
    doc["contexts"][0][NS]["summary"] = "not an object"
    return ("context", doc["contexts"][0]["id"])


def _edit_resource_portable(doc):
    resource = next(r for r in doc["resources"] if NS in r)
    resource[NS]["portable"] = "yes"
    return ("resource", resource["id"])


def _edit_document_absent(doc):
    doc[NS] = {"absent": ["everything"]}
    return None


EDITS = {
    "03-anthropic": [_edit_session_string, _edit_status_number, _edit_branch_true, _edit_sequence_string,
                     _edit_diff_shape, _edit_style_order, _edit_members_missing, _edit_event_list],
    "first-release 03-anthropic": [_edit_template_missing_part, _edit_member_missing, _edit_member_of_two_groups],
    "08-checkpoints": [_edit_context_summary],
    "09-native-states": [_edit_resource_portable],
    "07-no-branches": [_edit_document_absent],
}


@pytest.mark.parametrize(("name", "edit"), [(n, e) for n, edits in EDITS.items() for e in edits],
                         ids=lambda v: getattr(v, "__name__", v))
@pytest.mark.parametrize("residual", [True, False])
def test_foreign_state_is_kept_and_reported(name, edit, residual):
    doc = first_release(name.split()[-1]) if name.startswith("first-release") else golden(name)
    ref = edit(doc)
    assert errors(ASIF, doc) == []
    middle, back = there_and_back(doc, residual)
    foreign = [loss for loss in middle.losses if loss.id.endswith("(additional properties)")]
    assert foreign, "a foreign state is reported"
    if ref is not None:
        assert any((r.type, r.id) == ref for loss in foreign for r in loss.references or ()), ref
    if residual and name.startswith("first-release"):  # the rest comes back in today's form
        edited = next(e for e in doc["events"] if e["id"] == ref[1])
        returned = next(e for e in back.document["events"] if e["id"] == ref[1])
        assert exact(edited, returned) == {}, "kept where it stands"
    elif residual:
        assert exact(doc, back.document) == {}, "kept where it stands"


@st.composite
def with_foreign_state(draw: st.DrawFn) -> dict[str, Any]:
    """A valid ASIF session (generated, or one the converter wrote) with arbitrary JSON put
    under the agent-continuity/1 key of one of its objects."""
    goldens = sorted((FIXTURES.parents[1].parent / "corpus" / "golden").glob("*.asif.json"))
    doc = copy.deepcopy(draw(st.one_of(asif_sessions(), st.sampled_from(goldens).map(load_json))))
    nodes = list(_objects(doc))
    owners = [n for n in nodes if NS in n]  # where the converter's state is: most worth breaking
    node = draw(st.sampled_from(owners if owners and draw(st.booleans()) else nodes))
    value = draw(vocab_json)
    if isinstance(node.get(NS), dict) and draw(st.booleans()):  # change one field of a real state
        node[NS] = {**node[NS], draw(st.sampled_from([*node[NS], *VOCABULARY])): value}
    else:
        node[NS] = value
    return doc


def _objects(value: Any):
    if isinstance(value, dict):
        yield value
        for v in value.values():
            yield from _objects(v)
    elif isinstance(value, list):
        for v in value:
            yield from _objects(v)


@given(with_foreign_state(), st.booleans())
def test_any_json_under_the_namespace_never_breaks_a_conversion(doc, residual):
    assume(errors(ASIF, doc) == [])
    note(json.dumps(doc, ensure_ascii=False))
    middle, back = there_and_back(doc, residual)  # raises on exit 3, asserts valid outputs
    if residual:
        assert exact(doc, back.document) == {}
    ids = [loss["id"] for loss in back.document.get("losses", [])]
    assert len(ids) == len(set(ids))


# -- the asif native states of an export -------------------------------------------------------


def _asif_state(export: dict[str, Any], kind: str) -> dict[str, Any]:
    return next(s for s in export["native_states"] if s["provider"] == "asif" and s["kind"] == kind)


def _middle(example) -> dict[str, Any]:
    return convert(example.read_bytes(), to="continuity").document


@pytest.mark.parametrize("payload", [
    "a string", {"patch": "x"}, {"patch": {"=": 1, "extra": 2}}, {"patch": {"{}": {"events": {"[]": {"x": 1}}}}},
], ids=str)
def test_a_foreign_residual_is_an_ordinary_native_state(payload):
    example = next(p for p in ASIF_EXAMPLES if "tool-call-completed" in p.name)
    export = _middle(example)
    _asif_state(export, "residual/1")["payload"] = payload
    back = convert(encode(export), to="asif")
    assert errors(ASIF, back.document) == []
    kept = [r for r in back.document["resources"] if r.get(NS, {}).get("kind") == "residual/1"]
    assert kept and json.loads(kept[0]["text"]) == payload


@pytest.mark.parametrize("payload", [
    {"patch": {"{}": {"session": {"=": 5}}}},  # applies, but restores an invalid session
    {"patch": {"{}": {"events": {"[]": {}, "order": ["nowhere"]}}}},
], ids=str)
def test_a_residual_that_restores_nothing_valid_is_set_aside_and_said(payload):
    """A residual of the converter's shape that does not restore a valid session from the
    export as it is (edited since, or another export's): a warning and a loss say so, and the
    converter's own records stay private (docs/decisions.md, 48)."""
    example = next(p for p in ASIF_EXAMPLES if "tool-call-completed" in p.name)
    export = _middle(example)
    _asif_state(export, "residual/1")["payload"] = payload
    back = convert(encode(export), to="asif")
    assert errors(ASIF, back.document) == []
    assert not [r for r in back.document["resources"] if r.get(NS, {}).get("provider") == "asif"]
    assert any(w.rule == "residual" and w.severity == "warning" for w in back.warnings)
    assert "translation:residual-set-aside" in {loss.id for loss in back.losses}
    for refused in (lambda: convert(encode(export), to="asif", options=Options(strict=True)),
                    lambda: load_session(encode(export), options=Options(strict=True))):  # (as request reads it)
        with pytest.raises(InvalidInput) as exc:
            refused()
        assert [p.rule for p in exc.value.problems] == ["residual"]


@pytest.mark.parametrize("payload", [
    {"losses": "x"}, {"losses": [{"id": "only-an-id"}]}, {"losses": [], "more": 1},
    {"ours": {"kind": "dropped", "fields": {"no such field": []}}},
    {"ours": {"kind": "lost", "fields": {}}}, {"ours": {"kind": "dropped", "fields": {"capture.id": [["", "x"]]}}},
], ids=str)
def test_foreign_travelled_losses_are_an_ordinary_native_state(payload):
    example = next(p for p in ASIF_EXAMPLES if "tool-call-completed" in p.name)
    export = convert(example.read_bytes(), to="continuity", options=Options(residual=False)).document
    _asif_state(export, "losses/1")["payload"] = payload
    back = convert(encode(export), to="asif")
    assert errors(ASIF, back.document) == []
    assert any(r.get(NS, {}).get("kind") == "losses/1" for r in back.document["resources"])


@pytest.mark.parametrize(("kind", "payload"), [
    ("losses/1", {}), ("losses/1", {"losses": []}), ("losses/1", {"native_states_added": True}),
    ("carried/1", {}), ("carried/1", {"native_states_added": True}), ("residual/1", {"patch": {}}),
], ids=str)
def test_an_asif_native_state_that_says_nothing_is_the_exports_own_and_comes_back(kind, payload):
    """The writer never writes an empty one: an export's own native state of provider asif with
    such a payload (schema-valid data) was taken for converter state and dropped on the way."""
    export = {"format": "agent-continuity-export", "session": _SID, "messages": [], "events": [], "checkpoints": [],
              "native_states": [{"state_id": "n", "session_id": "s", "provider": "asif", "kind": kind,
                                 "portable": False, "payload": payload}]}
    back = convert(convert(encode(export), to="asif").output, to="continuity").document
    assert back == export


def test_a_residual_beside_no_carried_records_does_not_make_the_export_the_first_releases():
    """An export with a residual and no carried/1 entry is read as the first release wrote it
    (every record may carry ASIF data): today's writer lists none explicitly, so a message whose
    content_json merely looks like ASIF parts stays what it says."""
    export = {"format": "agent-continuity-export", "session": _SID,
              "messages": [{"message_id": "m", "session_id": "s", "branch_id": "main", "role": "user",
                            "status": "complete", "content_json": {"asif.parts/1": []}, "text_content": "%",
                            "sequence": 1}],
              "events": [], "checkpoints": []}
    session = convert(encode(export), to="asif").document
    session["capture"]["started_at"] = "2026-01-01T00:00:00Z"  # something continuity cannot hold: a residual
    middle = convert(encode(session), to="continuity").output
    assert convert(middle, to="asif").document == session


def test_travelled_losses_with_one_id_twice_come_back_once():
    example = next(p for p in ASIF_EXAMPLES if "tool-call-completed" in p.name)
    export = convert(example.read_bytes(), to="continuity", options=Options(residual=False)).document
    loss = {"id": "vendor:twice", "stage": "capture", "kind": "vendor", "scope": "tools", "explanation": "said twice"}
    _asif_state(export, "losses/1")["payload"]["losses"] += [loss, {**loss, "explanation": "and again"}]
    back = convert(encode(export), to="asif").document
    ids = [loss["id"] for loss in back["losses"]]
    assert len(ids) == len(set(ids))


# -- documents written by earlier versions ------------------------------------------------------


@pytest.mark.parametrize("path", OLD_GOLDENS, ids=lambda p: p.name)
def test_documents_written_by_the_first_release_convert_back_exactly(path):
    """ASIF written from the corpus exports by the first release (kept as fixtures) still
    converts back to exactly the export it came from."""
    source = next(p for p in CONTINUITY_FILES if p.name == path.name.replace(".asif.json", ".json"))
    back = convert(path.read_bytes(), to="continuity")
    assert exact(load_json(source), back.document) == {}


def test_losses_an_earlier_version_did_not_say_yet_are_implied_for_our_own_translation():
    """Our translation of exactly this export (its capture id is the export's digest), lacking a
    translation loss today's reading derives, converts back to exactly the export; a document
    that is not ours keeps its losses as they are, through the residual."""
    source = next(p for p in CONTINUITY_FILES if p.name == "15-mixed-dialects.json")
    today = convert(source.read_bytes(), to="asif").document
    assert any(loss["id"] == "translation:dialect-unmapped-text" for loss in today["losses"])
    earlier = copy.deepcopy(today)
    earlier["losses"] = [loss for loss in today["losses"] if loss["id"] != "translation:dialect-unmapped-text"]
    assert exact(load_json(source), convert(encode(earlier), to="continuity").document) == {}
    theirs = copy.deepcopy(earlier)
    theirs["capture"]["id"] = "someone-else"
    middle = convert(encode(theirs), to="continuity")
    assert exact(theirs, convert(middle.output, to="asif").document) == {}


# -- the return trip without the residual --------------------------------------------------------


@st.composite
def edited_sessions(draw: st.DrawFn) -> dict[str, Any]:
    """A valid ASIF session with the edits a user makes and continuity cannot hold."""
    doc = copy.deepcopy(draw(st.one_of(asif_sessions(), st.sampled_from(ASIF_EXAMPLES).map(load_json))))
    messages = [e for e in doc["events"] if e["kind"] == "message"]
    if messages and draw(st.booleans()):
        draw(st.sampled_from(messages))["data"]["role"] = draw(st.sampled_from(["system", "developer", "tool"]))
    if draw(st.booleans()):
        doc["session"].pop("title", None)
    return doc


@given(edited_sessions())
def test_the_return_trip_without_residual_is_valid_asif(doc):
    assume(errors(ASIF, doc) == [])
    note(json.dumps(doc, ensure_ascii=False))
    _, back = there_and_back(doc, residual=False)
    ids = [loss["id"] for loss in back.document.get("losses", [])]
    assert len(ids) == len(set(ids))


# -- forks -------------------------------------------------------------------------------------


def test_the_fork_point_comes_from_the_childs_messages():
    """Events are numbered apart from messages: a child's event numbered 2 says nothing about
    where its messages (numbered from 4) diverged."""
    doc = load_json(next(p for p in CONTINUITY_FILES if "forks" in p.name))
    doc["events"][0]["sequence"] = 2  # evt-05-1, on the token-bucket branch
    forks = {b["id"]: b.get("fork") for b in convert(encode(doc), to="asif").document["branches"]}
    assert forks["br-05-alt-token-bucket"]["event_id"] == "msg-05-main-3"


def test_strict_refuses_every_parent_cycle():
    doc = load_json(next(p for p in CONTINUITY_FILES if "forks" in p.name))
    doc["branches"][0]["parent_branch_id"] = "br-05-alt-redis"  # main -> redis -> token-bucket -> main
    assert convert(encode(doc), to="asif").warnings  # converts, and says so
    with pytest.raises(InvalidInput) as info:
        convert(encode(doc), to="asif", options=Options(strict=True))
    assert {p.rule for p in info.value.problems} == {"CONT-PARENT-CYCLE"}
    assert {p.path for p in info.value.problems} == {f"/branches/{i}/parent_branch_id" for i in range(3)}


def test_losses_spelled_out_as_earlier_versions_wrote_them_are_read_the_same():
    example = next(p for p in ASIF_EXAMPLES if "tool-call-completed" in p.name)
    export = convert(example.read_bytes(), to="continuity", options=Options(residual=False)).document
    today = convert(encode(export), to="asif").document
    payload = _asif_state(export, "losses/1")["payload"]
    assert payload["ours"]["fields"]
    ours = {f"translation:{key}" for key in payload["ours"]["fields"]}
    spelled = [loss for loss in today["losses"] if loss["id"] in ours]
    _asif_state(export, "losses/1")["payload"] = {"losses": payload["losses"] + spelled}
    assert exact(today, convert(encode(export), to="asif").document) == {}


# -- inputs an outside sweep found ending in exit 3 ------------------------------------------

_SID = {"session_id": "s", "title": "t", "status": "active", "active_branch_id": "main"}
_SYNTH = {"mode": "synthetic", "producer": "p", "method": "m", "inputs": []}


def test_an_empty_run_id_names_no_execution_and_comes_back():
    export = {"format": "agent-continuity-export", "session": _SID,
              "messages": [{"message_id": "m", "session_id": "s", "role": "user", "status": "complete",
                            "text_content": "hi", "sequence": 1, "run_id": ""}],
              "events": [{"event_id": "e", "session_id": "s", "event_type": "x", "payload": {}, "run_id": ""}],
              "checkpoints": []}
    session = convert(json.dumps(export).encode(), to="asif")
    assert all("execution_id" not in e for e in json.loads(session.output)["events"])
    assert json.loads(convert(session.output, to="continuity").output) == export


def test_an_extension_value_with_a_non_string_event_type_is_foreign():
    doc = load_json(ROOT / "corpus" / "golden" / "11-message-statuses.asif.json")
    ext = next(e for e in doc["events"] if e["kind"] == "extension"
               and e["data"].get("type") == "agent-continuity.event/1")
    ext["data"]["value"]["event_type"] = 1.5
    back = convert(json.dumps(doc).encode(), to="continuity")
    assert exact(doc, json.loads(convert(back.output, to="asif").output)) == {}


@pytest.mark.parametrize("case", ["missing cause", "missing dependency"])
def test_carried_asif_records_that_name_what_the_export_lacks_stay_continuity_events(case):
    """Such a record is not valid on its own (an edit, or an export written without a residual
    from a session that lacked what it names): it stays an opaque continuity event, as an
    unbound result does, and the export converts (docs/decisions.md, 48)."""
    if case == "missing cause":
        event = {"event_id": "e2", "session_id": "s", "event_type": "asif.tool_call",
                 "payload": {"actor_id": "agent", "causes": [{"event_id": "e1"}], "provenance": _SYNTH,
                             "data": {"call_id": "c", "tool_id": "t", "arguments": {}, "arguments_status": "complete"}}}
    else:
        event = {"event_id": "w", "session_id": "s", "event_type": "asif.task_update",
                 "payload": {"actor_id": "agent", "causes": [], "provenance": _SYNTH,
                             "data": {"task_id": "write", "revision": 3, "status": "pending", "parts": [],
                                      "dependencies": ["gather"]}}}
    state = {"state_id": "asif:carried", "session_id": "s", "provider": "asif", "kind": "carried/1",
             "payload": {"events": [event["event_id"]]}, "portable": True}
    export = {"format": "agent-continuity-export", "session": _SID, "messages": [], "events": [event],
              "checkpoints": [], "native_states": [state]}
    session = convert(json.dumps(export).encode(), to="asif")
    [carried] = session.document["events"]
    assert carried["kind"] == "extension" and carried["data"]["value"]["event_type"] == event["event_type"]
    assert errors(ASIF, session.document) == []


def test_options_and_limits_of_the_wrong_type_are_a_usage_error():
    data = CONTINUITY_FILES[0].read_bytes()
    with pytest.raises(UsageError, match="options must be an asif_convert.Options"):
        convert(data, to="asif", options=1)  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        convert(data, to="asif", limits=1)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="artifacts_root must be a folder's path"):
        Options(artifacts_root=5)  # type: ignore[arg-type]


# -- the agent formats' own state ------------------------------------------------------------

# A transcript and a rollout whose events hold every kind of state their readers write (homes
# with differences and style options; line wrappers, styles, differences, output encodings).
AGENT_FILES = {"claude-code": ROOT / "corpus" / "claude-code" / "tools" / "74065a23-6f82-500a-981f-470694a8a047.jsonl",
               "codex": ROOT / "corpus" / "codex" / "parallel.jsonl"}
_AGENT_ASIF: dict[str, dict[str, Any]] = {}
# Values of the shapes the state uses, in the wrong places: where a crash would hide.
_STATE_VALUES = st.one_of(
    st.sampled_from([-1, 2**53 - 1, 3.0, "zz", "pcq", [1], [[1]], [{}], {"=": 1, "k": 3}, {"{}": 7}, {"-": 3},
                     {"#": "a"}, {"k": [[1]]}, {"l": 3}, {"w": "x"}, {"o": "z"}, {"keys": 3}, {"extra": 5},
                     {"str": 2}, {"n": -1}, []]),
    json_values(6))


def _agent_asif(fmt: str) -> dict[str, Any]:
    if fmt not in _AGENT_ASIF:
        _AGENT_ASIF[fmt] = json.loads(convert(AGENT_FILES[fmt].read_bytes(), to="asif").output)
    return copy.deepcopy(_AGENT_ASIF[fmt])


def _places(value: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place inside ``value`` (``value`` itself too): the keys and indices down to it."""
    out = [at]
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, inner in items:
        out += _places(inner, (*at, key))
    return out


@pytest.mark.parametrize("fmt", sorted(AGENT_FILES))
@given(data=st.data())
def test_an_edited_agent_state_is_data_never_a_crash(fmt, data):
    """Any value anywhere in the session's or an event's ``claude-code/1`` or ``codex/1`` state
    (an edited document): a transcript or rollout, or a refusal that names the input; never an
    exception of ours (exit 3). A state of another shape than the reader writes is not followed."""
    doc = _agent_asif(fmt)
    ns = f"{fmt}/1"
    holders = [doc[ns], *(ev["extensions"][ns] for ev in doc["events"] if ns in (ev.get("extensions") or {}))]
    state = data.draw(st.sampled_from(holders))
    place = data.draw(st.sampled_from(_places(state)[1:]))
    value = data.draw(_STATE_VALUES)
    target = state
    for key in place[:-1]:
        target = target[key]
    target[place[-1]] = value
    note(f"{place} = {value!r}")
    try:
        written = convert(json.dumps(doc).encode(), to=fmt)
    except InvalidInput:
        return
    assert written.output.strip()


def test_kept_lines_that_no_longer_open_a_rollout_make_a_fresh_one():
    """An edit that takes the session's header out of the kept lines: the session is written
    as any other session is (a header made for it, with its losses), not as an invalid rollout."""
    doc = _agent_asif("codex")
    doc["codex/1"]["kept"] = [entry for entry in doc["codex/1"]["kept"] if entry[0] != 0]
    written = convert(json.dumps(doc).encode(), to="codex")
    first = json.loads(written.output.splitlines()[0])
    assert first["type"] == "session_meta" and first["payload"]["originator"] == "asif-convert"


def test_an_edited_line_count_writes_what_the_rollout_holds():
    """A rollout's line count is data: a count far past its lines writes the same rollout,
    without counting up to it."""
    doc = _agent_asif("codex")
    first = convert(json.dumps(doc).encode(), to="codex").output
    doc["codex/1"]["lines"] = 2**53 - 1
    assert convert(json.dumps(doc).encode(), to="codex").output == first


def test_a_foreign_line_state_is_not_followed_and_a_warning_names_it():
    """A line state of another shape than the reader writes: the line is written from its events
    alone, and one warning names the first such event (and how many more), where it is."""
    doc = _agent_asif("codex")
    assert not [w for w in convert(json.dumps(doc).encode(), to="codex").warnings if w.rule == "native-state"]
    edited = [k for k, ev in enumerate(doc["events"]) if "codex/1" in (ev.get("extensions") or {})][1:3]
    for k in edited:
        doc["events"][k]["extensions"]["codex/1"] = {"w": "not a wrapper"}
    written = convert(json.dumps(doc).encode(), to="codex")
    [warning] = [w for w in written.warnings if w.rule == "native-state"]
    assert warning.severity == "warning" and warning.path == f"/events/{edited[0]}/extensions/codex~11"
    assert repr(doc["events"][edited[0]]["id"]) in warning.message and "1 other line" in warning.message
    assert len(written.output.splitlines()) == len(AGENT_FILES["codex"].read_bytes().splitlines())


@pytest.mark.parametrize("value", ["x", 1, [1], True, None])
@pytest.mark.parametrize("target", ["codex", "claude-code"])
def test_a_native_state_of_another_shape_at_the_root_or_the_session_is_data(value, target):
    """An outside sweep found both agent writers reading a session-level ``agent-continuity/1``
    (the active branch a continuity export names) and a root ``codex/1`` (a rollout's kept lines)
    as objects whatever they were: exit 3."""
    doc = json.loads(convert(ROOT / "corpus" / "continuity" / "05-forks.json", to="asif").output)
    assert len(doc["branches"]) > 1  # (the branch the session names is looked up then)
    doc["session"]["agent-continuity/1"] = value
    doc["codex/1"] = value
    try:
        written = convert(json.dumps(doc).encode(), to=target)
    except InvalidInput:
        return
    assert written.output.strip()
