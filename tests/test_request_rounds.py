"""``request`` keeps the conversation's shape: sessions with several tool rounds in one assistant
turn (a call made after seeing the result of the one before), parallel calls inside a round,
server tools and text between rounds, recorded in each of the four dialects and rendered for
each of the four targets, give the calls and results in the recorded order; texts keep their
places among them unless a loss names the reordering the target forces. On the diagonal (a
session rendered for the API it was recorded by) the whole sequence is the recorded one,
server blocks included."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import find, given
from hypothesis import strategies as st

import asif_convert
from tests import sdk_blocks as sb
from tests.request_rules import TARGETS, check_body, check_rules, conversation

_WORDS = st.text(alphabet="abcdefgh xyz", min_size=1, max_size=10).filter(str.strip)
_ARGS = st.dictionaries(st.sampled_from(["a", "q"]), st.integers(0, 9) | _WORDS, max_size=2)
_NAMES = ("search", "book", "get_weather")


@st.composite
def round_sessions(draw: Any) -> list[tuple[Any, ...]]:
    """A conversation of user texts and assistant turns. A turn is a list of rounds, each a list
    of steps in the order the model took them: ("text", t), ("server", n) (a tool the provider
    ran, answered in the turn), ("call", id, name, args), maybe a text said after them, then
    the round's results ("result", id, text), in any order; a turn may end with a text."""
    out: list[tuple[Any, ...]] = [("user", draw(_WORDS))]
    n = 0
    for _ in range(draw(st.integers(1, 2))):
        rounds = []
        for _ in range(draw(st.integers(1, 3))):
            steps: list[tuple[Any, ...]] = []
            for _ in range(draw(st.integers(0, 2))):
                n += 1
                steps.append(("text", draw(_WORDS)) if draw(st.booleans()) else ("server", n))
            calls = []
            for _ in range(draw(st.integers(1, 3))):
                n += 1
                calls.append(("call", f"call_{n}", draw(st.sampled_from(_NAMES)), draw(_ARGS)))
            steps += calls
            if draw(st.integers(0, 3)) == 0:  # said after its calls, in their turn
                steps.append(("text", draw(_WORDS)))
            answers = [("result", c[1], draw(_WORDS)) for c in calls]
            steps += draw(st.permutations(answers))
            rounds.append(steps)
        if draw(st.booleans()):
            rounds.append([("text", draw(_WORDS))])
        out.append(("assistant", rounds))
        out.append(("user", draw(_WORDS)))
    return out


# --- each dialect's recording ----------------------------------------------------------------------


def _server_blocks(dialect: str, n: int) -> list[Any]:
    if dialect == "anthropic-messages":
        return [{"type": "server_tool_use", "id": f"srvtoolu_{n}", "name": "web_search", "input": {"query": f"q{n}"}},
                {"type": "web_search_tool_result", "tool_use_id": f"srvtoolu_{n}", "content": []}]
    if dialect == "openai-responses":
        return [{"type": "web_search_call", "id": f"ws_{n}", "status": "completed",
                 "action": {"type": "search", "query": f"q{n}"}}]
    return [{"executable_code": {"code": f"print({n})", "language": "PYTHON"}},
            {"code_execution_result": {"outcome": "OUTCOME_OK", "output": str(n)}}]


def _assistant_block(dialect: str, step: tuple[Any, ...]) -> list[Any]:
    kind = step[0]
    if kind == "server":
        return _server_blocks(dialect, step[1])
    if kind == "text":
        return [{"anthropic-messages": {"type": "text", "text": step[1]},
                 "openai-responses": {"type": "message", "role": "assistant",
                                      "content": [{"type": "output_text", "text": step[1], "annotations": []}]},
                 "google-genai": {"text": step[1]}}[dialect]]
    _, cid, name, args = step
    return [{"anthropic-messages": {"type": "tool_use", "id": cid, "name": name, "input": args},
             "openai-responses": {"type": "function_call", "call_id": cid, "name": name, "arguments": json.dumps(args)},
             "google-genai": {"function_call": {"id": cid, "name": name, "args": args}}}[dialect]]


def _result_block(dialect: str, step: tuple[Any, ...], names: dict[str, str]) -> Any:
    _, cid, text = step
    return {"anthropic-messages": {"type": "tool_result", "tool_use_id": cid, "content": text},
            "openai-responses": {"type": "function_call_output", "call_id": cid, "output": text},
            "google-genai": {"function_response": {"id": cid, "name": names[cid],
                                                   "response": {"output": text}}}}[dialect]


def _user(dialect: str, text: str) -> Any:
    return {"anthropic-messages": [{"type": "text", "text": text}], "openai-chat": {"role": "user", "content": text},
            "openai-responses": [{"type": "message", "role": "user",
                                  "content": [{"type": "input_text", "text": text}]}],
            "google-genai": {"role": "user", "parts": [{"text": text}]}}[dialect]


def recorded(dialect: str, session: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """The steps as the dialect records them: Chat runs no server tools and says an assistant
    message's text before its calls."""
    out: list[tuple[Any, ...]] = []
    for turn in session:
        if turn[0] == "user":
            out.append(("user", turn[1]))
            continue
        for steps in turn[1]:
            if dialect == "openai-chat":
                steps = [s for s in steps if s[0] == "text"] + [s for s in steps if s[0] in ("call", "result")]
            out += steps
    return out


def export_in(dialect: str, session: list[tuple[Any, ...]], packed: bool = False) -> dict[str, Any]:
    """The session recorded as a continuity export in ``dialect``: one assistant message per round
    and the results in the next message (Anthropic and Gen AI: with the user's next text); with
    ``packed``, a Responses turn is one record of all its items (as Codex writes them)."""
    messages: list[tuple[str, Any]] = []
    names: dict[str, str] = {}
    pending: list[Any] = []  # results not yet recorded (they open the next user message)
    for turn in session:
        if turn[0] == "user":
            messages.append(("user", _user(dialect, turn[1])))
            if pending and dialect in ("anthropic-messages", "google-genai"):
                body = messages.pop()
                messages.append(("user", pending + body[1] if dialect == "anthropic-messages"
                                 else {"role": "user", "parts": pending + body[1]["parts"]}))
            pending = []
            continue
        items: list[Any] = []
        for steps in turn[1]:
            names |= {s[1]: s[2] for s in steps if s[0] == "call"}
            said = [s for s in steps if s[0] != "result"]
            answers = [s for s in steps if s[0] == "result"]
            if dialect == "openai-chat":
                texts = [s[1] for s in said if s[0] == "text"]
                content: dict[str, Any] = {"role": "assistant", "content": " ".join(texts) if len(texts) == 1 else
                                           [{"type": "text", "text": t} for t in texts] if texts else None}
                calls = [{"id": s[1], "type": "function", "function": {"name": s[2], "arguments": json.dumps(s[3])}}
                         for s in said if s[0] == "call"]
                if calls:
                    content["tool_calls"] = calls
                messages.append(("assistant", content))
                messages += [("tool", {"role": "tool", "tool_call_id": s[1], "content": s[2]}) for s in answers]
                continue
            blocks = [b for s in said for b in _assistant_block(dialect, s)]
            results = [_result_block(dialect, s, names) for s in answers]
            if dialect == "openai-responses" and packed:
                items += blocks + results
                continue
            if pending:  # (Anthropic and Gen AI: the results before, in a message of their own)
                messages.append(("user", pending if dialect == "anthropic-messages" else
                                 {"role": "user", "parts": pending}))
                pending = []
            messages.append(("assistant", {"role": "model", "parts": blocks} if dialect == "google-genai" else blocks))
            if dialect == "openai-responses":
                if results:
                    messages.append(("tool", results))
            else:
                pending = results
        if items:
            messages.append(("assistant", items))
    return sb.export(*messages)


# --- the sequence a body holds -----------------------------------------------------------------------


def sequence(target: str, body: dict[str, Any]) -> list[tuple[Any, ...]]:
    """The texts (user or assistant), calls, results and server blocks of a body, in order."""
    out: list[tuple[Any, ...]] = []
    for entry in conversation(target, body):
        if entry[0] == "text":
            out.append(("user", entry[2]) if entry[1] == "user" else ("text", entry[2]))
        elif entry[0] == "call":
            out.append(("call", entry[1], entry[2], entry[3]))
        else:
            out.append(("result", entry[1], entry[3]))
    servers = _servers(target, body)
    return [s for s in out if s[0] != "text" or not s[1].startswith("[")] if not servers else \
        _with_servers(out, servers)


def _servers(target: str, body: dict[str, Any]) -> list[Any]:
    """Where a target's own server blocks stand: (index among the conversation's entries, n)."""
    found: list[Any] = []
    k = 0
    if target == "anthropic-messages":
        for m in body["messages"]:
            for b in m["content"]:
                if b["type"] == "server_tool_use":
                    found.append((k, int(b["id"].removeprefix("srvtoolu_"))))
                k += b["type"] in ("text", "tool_use", "tool_result")
    elif target == "openai-responses":
        for item in body["input"]:
            if item["type"] == "web_search_call":
                found.append((k, int(item["id"].removeprefix("ws_"))))
            k += item["type"] in ("function_call", "function_call_output") or (
                item["type"] == "message" and not isinstance(item["content"], list)) or (
                item["type"] == "message" and len([x for x in item["content"] if "text" in x]))
    elif target == "google-genai":
        for c in body["contents"]:
            for p in c["parts"]:
                if "executable_code" in p:
                    found.append((k, int(p["executable_code"]["code"][6:-1])))
                k += any(key in p for key in ("text", "function_call", "function_response"))
    return found


def _with_servers(out: list[tuple[Any, ...]], servers: list[Any]) -> list[tuple[Any, ...]]:
    merged: list[tuple[Any, ...]] = []
    rest = list(servers)
    for k, entry in enumerate(out):
        while rest and rest[0][0] == k:
            merged.append(("server", rest.pop(0)[1]))
        merged.append(entry)
    return merged + [("server", n) for _, n in rest]


def _exchanges(seq: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    return [s for s in seq if s[0] in ("call", "result")]


@pytest.mark.parametrize("dialect", TARGETS)
@given(session=round_sessions(), packed=st.booleans())
def test_tool_rounds_keep_their_recorded_order_on_every_target(dialect, session, packed):
    doc = export_in(dialect, session, packed)
    want = recorded(dialect, session)
    for target in TARGETS:
        result = asif_convert.request(json.dumps(doc).encode(), provider=target)
        check_body(target, result.body)
        check_rules(target, result.body)
        got = sequence(target, result.body)
        kinds = {loss.kind for loss in result.losses}
        assert _exchanges(got) == _exchanges(want), (target, kinds)  # no loss reorders calls and results
        assert "result_moved" not in kinds
        said = [s for s in want if s[0] != "server" or (target == dialect)]
        if target == dialect:  # identity, as a sequence: server blocks natively, in their places
            assert got == said, target
            assert kinds <= {"synthesized_tool", "unknown_mapping", "tool_not_offered"}, kinds
        elif "order_adapted" in kinds:  # the target forced texts before calls: a loss says so
            assert [s for s in got if s[0] != "server"] != said and target == "openai-chat"
            assert [s for s in got if s[0] in ("user", "text")] == [s for s in said if s[0] in ("user", "text")]
        else:
            assert got == said, (target, kinds)
            if any(s[0] == "server" for s in want):
                assert "server_tool_as_text" in kinds


# --- the shapes, one by one ------------------------------------------------------------------------

_FLIGHT = [("user", "book a flight"),
           ("assistant", [[("text", "searching"), ("call", "call_1", "search", {"q": "a"}), ("result", "call_1", "F1")],
                          [("call", "call_2", "book", {"q": "F1"}), ("call", "call_3", "search", {}),
                           ("result", "call_3", "none"), ("result", "call_2", "booked")],
                          [("text", "done")]]),
           ("user", "thanks")]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dialect", TARGETS)
def test_a_call_made_after_a_result_comes_after_it(dialect, target):
    """Search, see the result, then book what it found (with a parallel search): the booking
    follows the search's result, the two calls of the second round stay together, their results
    in the recorded order."""
    result = asif_convert.request(json.dumps(export_in(dialect, _FLIGHT)).encode(), provider=target)
    check_rules(target, result.body)
    assert _exchanges(sequence(target, result.body)) == [
        ("call", "call_1", "search", {"q": "a"}), ("result", "call_1", "F1"),
        ("call", "call_2", "book", {"q": "F1"}), ("call", "call_3", "search", {}),
        ("result", "call_3", "none"), ("result", "call_2", "booked")]
    if target in ("anthropic-messages", "google-genai"):  # a round is an assistant turn, its results the next
        key, turns = ("messages", "content") if target == "anthropic-messages" else ("contents", "parts")
        assert len(result.body[key]) == 7  # user, round 1, results, round 2, results + nothing, "done", user
    assert "result_moved" not in {loss.kind for loss in result.losses}


def test_texts_and_server_blocks_keep_their_order_in_the_turn():
    """A server tool's blocks, then the text citing them, then a call: sent back to Anthropic in
    that order (a split lists a message's texts first; the recorded order puts them back)."""
    session = [("user", "q"), ("assistant", [[("server", 7), ("text", "found it"), ("call", "call_1", "search", {}),
                                              ("result", "call_1", "r")]]), ("user", "ok")]
    for dialect in ("anthropic-messages", "openai-responses", "google-genai"):
        result = asif_convert.request(json.dumps(export_in(dialect, session)).encode(), provider=dialect)
        assert sequence(dialect, result.body) == recorded(dialect, session), dialect


def test_a_text_after_a_call_goes_before_it_in_chat_with_a_loss():
    session = [("user", "q"), ("assistant", [[("call", "call_1", "search", {}), ("text", "let me see"),
                                              ("result", "call_1", "r")]]), ("user", "ok")]
    doc = json.dumps(export_in("anthropic-messages", session)).encode()
    chat = asif_convert.request(doc, provider="openai-chat")
    assert chat.body["messages"][1] == {"role": "assistant", "content": [{"type": "text", "text": "let me see"}],
                                        "tool_calls": [{"id": "call_1", "type": "function", "function": {
                                            "name": "search", "arguments": "{}"}}]}
    assert "order_adapted" in {loss.kind for loss in chat.losses}
    for target in ("anthropic-messages", "openai-responses", "google-genai"):  # these take it where it was
        result = asif_convert.request(doc, provider=target)
        assert sequence(target, result.body) == recorded("anthropic-messages", session)
        assert "order_adapted" not in {loss.kind for loss in result.losses}


def test_the_generator_makes_sequential_rounds():
    found = find(round_sessions(), lambda s: any(t[0] == "assistant" and sum(
        any(x[0] == "call" for x in r) for r in t[1]) >= 2 and any(
        sum(x[0] == "call" for x in r) >= 2 for r in t[1]) for t in s))
    assert found


def test_a_recorded_context_keeps_its_rounds_too():
    """A context's inputs (ids of their own, each naming its event) in the recorded order: the
    booking still follows the search's result."""
    session = [("user", "book"), ("assistant", [[("call", "call_1", "search", {}), ("result", "call_1", "F1")],
                                                [("call", "call_2", "book", {}), ("result", "call_2", "ok")]]),
               ("user", "thanks")]
    asif = json.loads(asif_convert.convert(json.dumps(export_in("anthropic-messages", session)).encode(),
                                           to="asif").output)
    inputs = []
    for event in asif["events"]:
        data = event["data"]
        entry = {"id": f"in-{event['id']}", "kind": event["kind"], "source_events": [{"event_id": event["id"]}],
                 "parts": data.get("parts", []), "role": data.get("role", {"tool_call": "assistant"}.get(
                     event["kind"], "tool"))}
        entry |= {k: data[k] for k in ("call_id", "tool_id", "arguments", "arguments_status", "result_index",
                                       "terminal", "outcome") if k in data}
        inputs.append(entry)
    asif["configurations"] = [{"id": "cfg", "knowledge": "effective", "instructions": [], "capabilities": [],
                               "policies": [], "secret_requirements": []}]
    asif["contexts"] = [{"id": "ctx", "branch_id": asif["branches"][0]["id"], "at_event_id": asif["events"][-1]["id"],
                         "purpose": "continuation", "fidelity": "exact", "inputs": inputs, "configuration_id": "cfg",
                         "tool_ids": [t["id"] for t in asif["tools"]], "request_parameters": {}}]
    for target in TARGETS:
        result = asif_convert.request(json.dumps(asif).encode(), provider=target, context="ctx")
        check_rules(target, result.body)
        assert _exchanges(sequence(target, result.body)) == _exchanges(recorded("anthropic-messages", session))
