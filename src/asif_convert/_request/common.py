"""What every request renderer shares: the losses it records, ids and names fitted to an API's
syntax, the media a resource part stands for, and the history arranged so that each tool call's
result follows it (what every provider's API demands).

A renderer turns a ``Selection`` (provider-neutral inputs) into the keyword arguments of one
provider's create call; every adaptation it makes is a ``translation`` loss (kinds in
mappings/request.toml, explained per provider in docs/request.md).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import msgspec

from asif_convert import _dialects as dialects
from asif_convert import ir
from asif_convert._dialects import REASONING
from asif_convert._request.selection import PERMISSIVE_SCHEMA, Input, Selection

GOOGLE_RESPONSE = "google-genai/function_response.response"  # a Gemini function response's object
# A server-run call and its result that go back as the target API's own blocks: one assistant
# input holding those blocks (a structured part of this schema, never seen outside a renderer)
NATIVE = "asif-convert.request/native-blocks"
_CONTINUITY = "agent-continuity/1"  # where the continuity reader names the dialect a message was read from
# a tool name every API takes (Gemini: a letter or _ first; all: at most 64 of these)
NAME_SYNTAX = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")
# the APIs that refuse a text of whitespace only (Anthropic: "text content blocks must contain
# non-whitespace text"; Gemini refuses an empty text part and is not known to take a blank one);
# every API refuses an empty message, and Anthropic and Gemini an empty text
_BLANK_REFUSED = ("anthropic-messages", "google-genai")
# who issues the file ids each API takes (OpenAI's Files API serves Chat and Responses alike)
_ISSUER = {"anthropic-messages": "Anthropic", "openai-chat": "OpenAI", "openai-responses": "OpenAI",
           "google-genai": "Google"}


class Refusal(ir.TextPart, kw_only=True, tag="refusal"):
    """A text the model said instead of answering, as OpenAI marks it (a refusal): a text part
    to every renderer, and Chat's own refusal where the API takes one. Made only by
    ``in_recorded_order`` from the recorded style; never written."""


@dataclass
class Media:
    """What a resource part stands for, in the terms every API shares."""

    source: Literal["base64", "url", "file", "text"]
    media_type: str
    value: str  # the base64 data, the URL, the provider's file id, or the text
    name: str | None = None
    rid: str = ""  # the resource's id

    @property
    def image(self) -> bool:
        """An image, as far as its media type (or, referenced, its resource's id) says."""
        return self.media_type.startswith("image/") or "image" in self.rid


@dataclass
class Renderer:
    """A renderer's state: the selection, the target's name, and the losses so far (one per kind
    and subject, with every input it touched)."""

    selection: Selection
    target: str
    # the target's own blocks for a server-run call and its recorded result, or None when the
    # API has none for them (see ``arrange``); a renderer without one sends them as text
    native: Callable[[Renderer, Input, Input], list[dict[str, Any]] | None] | None = None
    _losses: dict[tuple[str, str], tuple[str, dict[str, None]]] = field(default_factory=dict)
    _ids: dict[str, str] = field(default_factory=dict)
    _names: dict[str, str] = field(default_factory=dict)
    _own_names: dict[str, str] = field(default_factory=dict)  # tool id -> its name, where another tool has it
    _events: dict[str, ir.Event] | None = None

    def __post_init__(self) -> None:
        self.resources = {r.id: r for r in self.selection.document.resources}
        self.tools = {t.id: t for t in self.selection.document.tools}
        self.tools_by_name = {t.name for t in self.selection.document.tools if pattern_free(t.name)}
        # the tools offered under a name an earlier offered tool has: each gets a name of its own
        first: dict[str, str] = {}
        self.shared_name = {t.id for t in self.selection.tools if not isinstance(t.server_identity, str)
                            and first.setdefault(t.name, t.id) != t.id}
        self.server_calls = {i.call_id for i in self.selection.inputs if i.kind == "tool_call"
                             and isinstance(getattr(self.tools.get(i.tool_id or ""), "server_identity", None), str)}

    def events(self) -> dict[str, ir.Event]:
        """The document's events by id."""
        if self._events is None:
            self._events = {e.id: e for e in self.selection.document.events}
        return self._events

    def _recorded(self, item: Input) -> dict[str, Any]:
        """What a continuity reader recorded of the message an input came from ({} if none)."""
        event = self.events().get(origin(item))
        native = event.native.get(_CONTINUITY) if event is not None else None
        return native if isinstance(native, dict) else {}

    def recorded_by(self, item: Input) -> str | None:
        """The dialect (API) the message an input came from was read from, if a continuity
        reader recorded one: only that API takes back its own server blocks and citations."""
        dialect = self._recorded(item).get("dialect")
        return dialect if isinstance(dialect, str) else None

    def speaker(self, item: Input) -> str | None:
        """The name a recorded message gives its speaker (an OpenAI Chat participant ``name``)."""
        if item.kind != "message" or self.recorded_by(item) != "openai-chat":
            return None
        diff = self._recorded(item).get("diff")
        top = diff.get("{}") if isinstance(diff, dict) else None
        said = top.get("name") if isinstance(top, dict) else None
        return said["="] if isinstance(said, dict) and isinstance(said.get("="), str) else None

    def recorded_fields(self, item: Input) -> list[tuple[str, Any]]:
        """The fields of the recorded message's blocks that the reader kept only in its record
        of how the message was written (a block's role or title the parts do not hold), as
        (name, value): the parts are all a request is made of, so these are not sent."""
        out: list[tuple[str, Any]] = []
        pending = [self._recorded(item).get("diff")]
        while pending:
            patch = pending.pop()
            if not isinstance(patch, dict):
                continue
            for name, sub in (patch.get("{}") or {}).items():
                if isinstance(sub, dict) and "=" in sub:
                    out.append((name, sub["="]))
            pending += [v for key in ("{}", "#", "[]") if isinstance(patch.get(key), dict)
                        for v in patch[key].values()]
        return out

    # -- losses -------------------------------------------------------------------------------

    def loss(self, kind: str, subject: str, explanation: str, ref: str | None = None) -> None:
        """One loss per (kind, subject); ``ref`` (an input's id) is added to its references."""
        entry = self._losses.setdefault((kind, subject), (explanation, {}))
        if ref is not None:
            entry[1][ref] = None

    def losses(self) -> list[ir.Loss]:
        out = []
        for (kind, subject), (explanation, refs) in self._losses.items():
            out.append(ir.Loss(id=f"request:{self.target}:{kind}:{subject}", stage="translation", kind=kind,
                               explanation=f"{self.target}: {explanation}",
                               references=[ir.LossRef(type="event", id=r) for r in refs] if refs else msgspec.UNSET))
        return out

    # -- ids and names ----------------------------------------------------------------------------

    def fit_id(self, call_id: str, pattern: re.Pattern[str] | None, ref: str) -> str:
        """``call_id`` if the API's id syntax takes it, else a deterministic id of that syntax
        (the same for every use of one id, distinct for distinct ids)."""
        if pattern is None or pattern.fullmatch(call_id):
            return call_id
        if call_id not in self._ids:
            self._ids[call_id] = f"call_{_digest(call_id)}"
            self.loss("id_rewritten", call_id, f"tool call id {call_id!r} does not fit the API's id syntax; it is "
                      f"sent as {self._ids[call_id]!r}, its call and results alike", ref)
        return self._ids[call_id]

    def fit_name(self, name: str, pattern: re.Pattern[str], ref: str | None = None) -> str:
        """A tool name in the API's syntax ``[A-Za-z_][A-Za-z0-9_-]{0,63}`` (what all four take)."""
        if pattern.fullmatch(name):
            return name
        if name not in self._names:
            cleaned = re.sub(r"[^A-Za-z0-9_-]", "_", name)
            if not cleaned[:1].isalpha() and cleaned[:1] != "_":
                cleaned = f"t_{cleaned}"
            fitted = f"{cleaned[:55]}_{_digest(name)[:8]}" if len(cleaned) > 64 or cleaned != name else cleaned
            taken = {v for k, v in self._names.items() if k != name} | set(self.tools_by_name)
            if fitted in taken:  # two names never meet: not even a rewritten one and a tool's own
                fitted = f"{cleaned[:40]}_{_digest(name)}"
            self._names[name] = fitted
            self.loss("name_rewritten", name, f"tool name {name!r} does not fit the API's name syntax; it is sent "
                      f"as {fitted!r} in the tool list and every call", ref)
        return self._names[name]

    def sent_name(self, tool_id: str | None, ref: str | None = None) -> str:
        """The name a tool is defined and called by: its own, fitted to the API's syntax; a tool
        with the name of a tool offered before it gets one of its own (an API takes one definition
        per name, and its calls must not read as the other tool's)."""
        name = self.fit_name(self.tool_name(tool_id), NAME_SYNTAX, ref)
        if tool_id not in self.shared_name:
            return name
        if tool_id not in self._own_names:
            own = self._own_names[tool_id] = f"{name[:55]}_{_digest(tool_id)[:8]}"
            self.loss("name_rewritten", f"shared:{tool_id}", f"tool {tool_id!r} has the name {name!r} of a tool "
                      f"offered before it; it is sent as {own!r} in the tool list and every call", ref)
        return self._own_names[tool_id]

    def tool_name(self, tool_id: str | None) -> str:
        tool = self.tools.get(tool_id or "")
        return tool.name if tool is not None else tool_id or "unknown"

    # -- parts ----------------------------------------------------------------------------------

    def media(self, part: ir.ResourcePart, item: Input | None = None) -> Media | None:
        """What a resource part stands for, or None; with ``item``, a part that gives nothing the
        target may take is dropped, its loss saying why: a file id is valid only at the provider
        that issued it (the API its message was recorded by), so it goes nowhere else."""
        res = self.resources.get(part.resource_id)
        m = _media(res) if res is not None else None
        if item is None or (m is not None and m.source != "file"):
            return m
        if res is None:
            self.drop(part, item, "its resource is not in the session")
            return None
        if m is None:
            self.drop(part, item, f"its resource ({res.availability}) records neither its content nor a locator")
            return None
        issuer = _ISSUER.get(self.recorded_by(item) or "")
        if issuer != _ISSUER[self.target]:
            self.drop(part, item, "it is a provider's file id, valid only at the API that issued it" + (
                f" ({issuer})" if issuer else "; the session does not say which API that was"))
            return None
        return m

    def data_url(self, m: Media) -> str:
        return f"data:{m.media_type};base64,{m.value}"

    def sent(self, part: ir.TextPart, item: Input) -> bool:
        """Whether a text is sent: an empty one says nothing and is not (an API refuses an empty
        text; no loss), nor is one of whitespace only where the API refuses it (a loss)."""
        if part.text and (part.text.strip() or self.target not in _BLANK_REFUSED):
            if isinstance(part, Refusal):
                self.loss("refusal_as_text", "text", "a refusal (what the model said instead of answering) is sent "
                          "as plain text: the API has no refusal marker in this place", item.id)
            return True
        self.cited(part, item)
        if part.text:
            self.loss("part_dropped", "whitespace text", "a text of whitespace only is not sent: the API refuses "
                      "a text with no other character", item.id)
        return False

    def texts(self, item: Input, why: str) -> list[str]:
        """The texts of an input whose target takes text only; every other part is a loss."""
        return [text for p in item.parts if (text := self.text(p, item, why)) is not None]

    def text(self, part: ir.Part, item: Input, why: str) -> str | None:
        """One part of ``item`` as text, where the target takes text only; None, with its loss,
        for a part that is not sent (a renderer asks part by part: no copy of the input each)."""
        if isinstance(part, ir.TextPart):
            if not self.sent(part, item):
                return None
            self.cited(part, item)
            return part.text
        if (origin := reasoning_of(part)) is not None:
            self.loss("reasoning_dropped", origin, "private reasoning is not sent here: the API takes no "
                      "reasoning in this place", item.id)
            return None
        if (text := self.as_text(part, item)) is not None:
            return text
        self.drop(part, item, why)
        return None

    def drop(self, part: ir.Part, item: Input, why: str) -> None:
        """A part not sent; one loss per reason (a loss's explanation holds for every input it names)."""
        what = part.semantic_type if isinstance(part, ir.OpaquePart) else type(part).__name__
        self.loss("part_dropped", f"{what}: {why}", f"a {what} part is not sent: {why}", item.id)

    def as_text(self, part: ir.Part, item: Input) -> str | None:
        """A part the target has no block for, as the JSON text of what it holds (with a loss);
        None for one that holds nothing readable (an opaque block, an unresolvable resource)."""
        if isinstance(part, ir.StructuredPart) and part.schema == GOOGLE_RESPONSE and isinstance(part.value, dict) \
                and len(part.value) == 1 and isinstance(part.value.get("output", part.value.get("error")), str):
            return str(next(iter(part.value.values())))  # Gemini's convention for a text result: the text
        if isinstance(part, ir.StructuredPart):
            self.loss("part_as_text", part.schema, f"structured content of schema {part.schema!r} has no block of "
                      "its own in the API; it is sent as its JSON text", item.id)
            return msgspec.json.encode(part.value).decode()
        return None

    def cited(self, part: ir.TextPart, item: Input) -> None:
        """A loss for the citations of a text the target does not carry (an empty or null list
        cites nothing: no loss)."""
        if part.unknown.get("citations") or part.unknown.get("annotations"):
            self.loss("citations_dropped", "text", "the citations of a text are not sent (a request's text "
                      "carries none the API would take from another response); the text is", item.id)


def _media(res: ir.Resource) -> Media | None:
    name = res.name if isinstance(res.name, str) else None
    if res.availability == "embedded" and isinstance(res.data, str):
        return Media("base64", res.media_type, res.data, name, res.id)
    if res.availability == "embedded" and isinstance(res.text, str):
        return Media("text", res.media_type, res.text, name, res.id)
    if res.availability == "external" and isinstance(res.locator, str) and res.locator:
        return Media("url" if "://" in res.locator else "file", res.media_type, res.locator, name, res.id)
    return None


def reasoning_of(part: ir.Part) -> str | None:
    """Which API a private-reasoning part came from (its block's shape), or None for another part."""
    if not isinstance(part, ir.StructuredPart) or part.schema != REASONING or not isinstance(part.value, dict):
        return None
    kind = part.value.get("type")
    if kind in ("thinking", "redacted_thinking"):
        return "anthropic-messages"
    if kind == "reasoning":
        return "openai-responses"
    if "thought" in part.value or "thought_signature" in part.value or "thoughtSignature" in part.value:
        return "google-genai"
    return "unknown"


def arrange(r: Renderer) -> list[Input]:
    """The inputs in the order the session recorded them, grouped into rounds: a round is the
    calls the assistant issued together (with what it said among them in its turn), closed by
    their results, one per call, right after it. A call made after a result of the round was
    recorded opens the next round, so it never moves before that result. A result recorded
    after other inputs moves up to close its round (``result_moved``). A call of a tool someone
    else ran, and its result, become one assistant input of the target's own blocks where
    ``r.native`` has them, else assistant text; a result whose call is not in the request, a
    user message."""
    inputs = _server_inputs(r, in_recorded_order(r, r.selection.inputs))
    for i in inputs:
        _unsent_fields(r, i)
    calls = {i.call_id for i in inputs if i.kind == "tool_call"}
    results: dict[str, list[Input]] = {}
    place: dict[int, int] = {}  # where each result stands among the inputs (by identity: no scan per result)
    for k, i in enumerate(inputs):
        if i.kind == "tool_result" and i.call_id in calls:
            results.setdefault(i.call_id or "", []).append(i)
            place[id(i)] = k
    out: list[Input] = []
    run: list[Input] = []  # the calls of the current round
    answered = False  # whether a result of the round was recorded yet (a call after it opens the next)
    called: set[str | None] = set()

    round_ids: set[str | None] = set()  # the call ids of the current round

    def close(k: int, i: Input) -> None:
        nonlocal run, answered
        round_ids.clear()
        for a in (a for c in run for a in results.get(c.call_id or "", []) if place[id(a)] > k):
            r.loss("result_moved", "tool_result", "a tool result recorded after other inputs is sent right "
                   "after its call's round, where the API wants it", a.id)
        answers = [results[c.call_id or ""] for c in run if c.call_id in results]
        answers.sort(key=lambda found: place[id(found[0])])  # in the order they were recorded
        out.extend(_one_result(r, found) for found in answers)
        run, answered = [], False

    for k, i in enumerate(inputs):
        if i.kind == "tool_call":
            if answered:
                close(k, i)
            run.append(i)
            round_ids.add(i.call_id)
            out.append(i)
            called.add(i.call_id)
        elif i.kind == "tool_result" and i.call_id in calls:
            if i.call_id not in called:  # (an edited document, or a context's inputs out of order)
                r.loss("result_moved", "tool_result before its call", "a tool result recorded before its "
                       "call is sent right after the call, where the API wants it", i.id)
            answered = answered or i.call_id in round_ids
        elif i.kind == "tool_result":
            r.loss("orphan_result", "tool_result", "a tool result whose call is not in the request is sent as a "
                   "user message: the API takes a result only as the answer to a call", i.id)
            if run:
                close(k, i)
            out.append(replace(i, kind="message", role="user"))
        else:
            if run and not (side(i) == "assistant" and not answered and origin(i) == origin(run[-1])):
                close(k, i)  # (what the assistant said in the turn of its calls stays in that turn)
            out.append(i)
    if run:
        close(len(inputs), inputs[-1])
    return out


def in_recorded_order(r: Renderer, inputs: tuple[Input, ...] | list[Input]) -> list[Input]:
    """The inputs with the pieces of each recorded message in the order the message held them
    (a reader lists a message's parts, then its calls, then its results; the style it kept says
    how they were interleaved): a message's parts are cut where a call or result stood among
    them. A refusal the style marks becomes a ``Refusal``."""
    out: list[Input] = []
    k = 0
    while k < len(inputs):
        j = k + 1
        anchor = origin(inputs[k])
        while j < len(inputs) and origin(inputs[j]) == anchor:
            j += 1
        out += _recorded_group(r, list(inputs[k:j]))
        k = j
    return out


def _recorded_group(r: Renderer, group: list[Input]) -> list[Input]:
    recorded = r._recorded(group[0])
    dialect, style = recorded.get("dialect"), recorded.get("style")
    if not isinstance(dialect, str) or not isinstance(style, dict):
        return group
    events = r.events()
    anchor = origin(group[0])
    found = recorded.get("members")
    members = found if _members_shape(found) else dialects.members(anchor, events) if anchor in events else None
    if members is None:
        return group
    message = next((i for i in group if i.kind == "message" and i.source_events
                    and i.source_events[0].id == members["msg"]), None)
    refused = dialects.refusals(dialect, style) if message is not None else set()
    if refused and message is not None:
        parts = tuple(Refusal(text=p.text) if k in refused and type(p) is ir.TextPart else p
                      for k, p in enumerate(message.parts))
        group = [replace(i, parts=parts) if i is message else i for i in group]
        message = next(i for i in group if i.kind == "message" and i.source_events
                       and i.source_events[0].id == members["msg"])
    if len(group) == 1:
        return group
    return _interleaved(group, message, members, dialect, style, events)


def _members_shape(found: Any) -> bool:
    return isinstance(found, dict) and (found.get("msg") is None or isinstance(found.get("msg"), str)) \
        and all(isinstance(found.get(key), list) and all(isinstance(e, str) for e in found[key])
                for key in ("call", "result"))


def _interleaved(group: list[Input], message: Input | None, members: dict[str, Any], dialect: str,
                 style: dict[str, Any], events: dict[str, ir.Event]) -> list[Input]:
    """One recorded message's inputs in the order ``dialects.order`` gives; any input or part it
    does not place keeps its place after them."""
    place = {(letter, k): e for letter, key in (("c", "call"), ("r", "result")) for k, e in enumerate(members[key])}
    # (a result made for a call that has none carries the call's event: it is no member)
    by_event = {i.source_events[0].id: i for i in group if i.source_events and i is not message
                and isinstance(i.source_events[0].body, ir.ToolCall if i.kind == "tool_call" else ir.ToolResult)}
    call_ids = [_call_of(events.get(e)) for e in members["call"]]
    result_ids = [_call_of(events.get(e)) for e in members["result"]]
    held = message.source_events[0].body if message is not None else None
    parts = list(held.parts) if isinstance(held, ir.Message) else []
    whole = message is not None and len(parts) != len(message.parts)  # (a context's input may differ)
    out: list[Input] = []
    segment: list[ir.Part] = []
    placed: set[int] = set()
    for letter, k in dialects.order(dialect, style, parts, call_ids, result_ids):
        if letter == "p" and message is not None and not whole:
            segment.append(message.parts[k])
            continue
        if letter == "p" and message is not None and id(message) not in placed:
            out.append(message)
            placed.add(id(message))
            continue
        if segment and message is not None:
            out.append(replace(message, parts=tuple(segment)))
            segment = []
        i = by_event.get(place.get((letter, k), ""))
        if i is not None and id(i) not in placed:
            out.append(i)
            placed.add(id(i))
    if segment and message is not None:
        out.append(replace(message, parts=tuple(segment)))
    if message is not None and not whole:
        placed.add(id(message))
    return out + [i for i in group if id(i) not in placed]


def _call_of(event: ir.Event | None) -> str:
    body = event.body if event is not None else None
    return body.call_id if isinstance(body, ir.ToolCall | ir.ToolResult) else ""


def _unsent_fields(r: Renderer, i: Input) -> None:
    """A loss for what a recorded message's blocks said that its parts do not hold: an item of
    another role folded into the message (a Responses developer item in a user message), a
    document's title or context."""
    if i.kind != "message":
        return
    speaker = r.speaker(i)
    if speaker is not None and not (r.target == "openai-chat" and i.role != "tool"):
        r.loss("speaker_dropped", speaker, "the name a recorded message gives its speaker is not sent: the API "
               "has no place for it here", i.id)
    for name, value in r.recorded_fields(i):
        if name == "role" and isinstance(value, str) and value != i.role:
            r.loss("role_adapted", value, f"a {value} item recorded within a {i.role} message is sent as that "
                   "message's text: the session holds it as such", i.id)
        elif name in ("title", "context") and any(isinstance(p, ir.ResourcePart) for p in i.parts):
            r.loss("media_adapted", f"document {name}", f"a document's {name}, recorded with its message, is not "
                   "sent: the session's resource does not hold it", i.id)


def _server_inputs(r: Renderer, inputs: list[Input]) -> list[Input]:
    """The selection's inputs with every server-run call and result in the form the target takes.
    A pair goes back as the target's own blocks, at the call's place, only when this API recorded
    both, the call's one result is terminal and in the same turn (right after the call, or in the
    message that holds it: a reader lists a message's calls before its results, and a turn may
    hold several server calls and client calls; Anthropic demands a server_tool_use answered in
    its turn), and ``r.native`` has blocks for what they hold; anything else is text, never a
    block with fields the session does not have."""
    results: dict[str | None, list[int]] = {}
    for k, i in enumerate(inputs):
        if i.kind == "tool_result":
            results.setdefault(i.call_id, []).append(k)
    out: list[Input] = []
    taken: set[int] = set()  # the places of results already sent with their calls
    for k, i in enumerate(inputs):
        if k in taken:
            continue
        if not server_run(r, i):
            out.append(i)
            continue
        found = results.get(i.call_id, []) if i.kind == "tool_call" else []
        after = inputs[found[0]] if len(found) == 1 and found[0] > k else None
        blocks = None
        if r.native is not None and after is not None and (found[0] == k + 1 or record(after) == record(i)) \
                and after.terminal and after.source_events \
                and all(isinstance(e.body, ir.ToolResult) for e in after.source_events) \
                and r.recorded_by(i) == r.recorded_by(after) == r.target:  # (a synthesized result is no record)
            blocks = r.native(r, i, after)
        if blocks is None or after is None:
            out.append(_server_as_text(r, i))
            continue
        out.append(Input(id=i.id, kind="message", role="assistant", parts=(ir.StructuredPart(
            schema=NATIVE, value=blocks),), source_events=i.source_events + after.source_events))
        taken.add(found[0])
    return out


def native_blocks(part: ir.Part) -> list[dict[str, Any]] | None:
    """The target's own blocks a server-run call and its result became (see ``_server_inputs``)."""
    if isinstance(part, ir.StructuredPart) and part.schema == NATIVE and isinstance(part.value, list):
        return part.value
    return None


def _server_as_text(r: Renderer, item: Input) -> Input:
    return Input(id=item.id, kind="message", role="assistant", parts=(ir.TextPart(text=server_text(r, item)),),
                 source_events=item.source_events)


def _one_result(r: Renderer, answers: list[Input]) -> Input:
    if len(answers) == 1:
        return answers[0]
    for a in answers:
        r.loss("results_merged", "tool_result", "a tool call with several results (progress, then a terminal "
               "one) is answered once, their parts in order", a.id)
    last = next((a for a in reversed(answers) if a.terminal), answers[-1])
    return replace(last, parts=tuple(p for a in answers for p in a.parts))


Rendered = tuple[Input, list[dict[str, Any]]]  # an input and the blocks (or parts) it became


def side(i: Input) -> str:
    """Which side of the conversation an input is on: ``assistant`` (its messages and calls) or
    ``user`` (everything else)."""
    return "assistant" if i.kind == "tool_call" or (i.kind == "message" and i.role == "assistant") else "user"


def turns(r: Renderer, rendered: list[Rendered]) -> list[tuple[str, list[dict[str, Any]]]]:
    """The blocks of consecutive inputs of one side, as one turn, for APIs whose roles alternate
    (an input that became no block, whose loss says why, takes no turn); a message merged into
    the turn before it is a loss."""
    out: list[tuple[str, list[dict[str, Any]]]] = []
    last: Input | None = None
    for i, blocks in rendered:
        if not blocks:
            unsaid(r, i)
            continue
        if out and out[-1][0] == side(i):
            out[-1][1].extend(blocks)
            if i.kind == "message" and last is not None and record(last) != record(i):
                r.loss("turns_merged", "message", "consecutive inputs of one side are sent as one turn, since "
                       "the API's roles alternate; their order is kept", i.id)
        else:
            out.append((side(i), list(blocks)))
        last = i
    return out


def unsaid(r: Renderer, i: Input) -> None:
    """A loss for a message left out because it has nothing to say (another left with no block
    has a loss for each part it dropped)."""
    if i.kind == "message" and not any(_said(p) for p in i.parts):
        r.loss("part_dropped", "empty message", "a message with nothing to say (no parts, or only empty "
               "text) is not sent: an API refuses an empty message", i.id)


def _said(part: ir.Part) -> bool:
    return not isinstance(part, ir.TextPart) or bool(part.text)


def record(i: Input) -> str:
    """The recorded message an input came from: a reader that splits one message into several
    events names them ``<id>``, ``<id>/call/<k>``, ``<id>/result/<k>`` (the continuity reader's
    dialects); putting them back together in one turn loses nothing."""
    return _MEMBER.sub("", i.id)


_MEMBER = re.compile(r"/(call|result)/\d+$")


def origin(i: Input) -> str:
    """The id of the recorded message an input came from, by its first source event (a context's
    input has an id of its own), else by its id."""
    return _MEMBER.sub("", i.source_events[0].id) if i.source_events else record(i)


def role_as_user(r: Renderer, item: Input, why: str) -> None:
    r.loss("role_adapted", item.role, f"a {item.role} message {why}", item.id)


def call_arguments(r: Renderer, item: Input) -> dict[str, Any]:
    """A call's arguments as the object every API but Chat and Responses wants."""
    args = item.arguments
    if item.arguments_status not in (None, "complete") or args is None:
        r.loss("arguments_adapted", "partial", "a tool call whose arguments are partial or unknown is sent with "
               "empty arguments", item.id)
        return {}
    if not isinstance(args, dict):
        r.loss("arguments_adapted", "non_object", "a tool call whose arguments are not a JSON object is sent "
               "with them under the key \"value\"", item.id)
        return {"value": args}
    return args


def json_arguments(r: Renderer, item: Input) -> str:
    """A call's arguments as the JSON text OpenAI's APIs take: a JSON object's, as the model
    writes them (the same adaptation as ``call_arguments``, with its loss)."""
    return msgspec.json.encode(call_arguments(r, item)).decode()


def offered(r: Renderer) -> list[tuple[str, ir.Tool]]:
    """The tools to define, by fitted name: a tool someone else runs (a provider's server tool,
    an MCP server's) is not the caller's to define."""
    out: list[tuple[str, ir.Tool]] = []
    for tool in r.selection.tools:
        if isinstance(tool.server_identity, str):
            r.loss("tool_not_offered", tool.id, f"tool {tool.name!r} is run by {tool.server_identity!r}, not by "
                   "the caller: it is not defined as a function; its calls in the history are sent as text, or "
                   "as the API's own blocks where this API recorded them")
            continue
        out.append((r.sent_name(tool.id), tool))
    return out


def schema(tool: ir.Tool) -> Any:
    """A tool's input schema (the selection gives one to every tool; a schema is an object)."""
    return tool.input_schema if isinstance(tool.input_schema, dict) else dict(PERMISSIVE_SCHEMA)


def server_run(r: Renderer, item: Input) -> bool:
    """Whether a call (or a result) is of a tool someone else runs (see ``offered``)."""
    if item.kind == "tool_call":
        tool = r.tools.get(item.tool_id or "")
        return tool is not None and isinstance(tool.server_identity, str)
    return item.call_id in r.server_calls


def server_text(r: Renderer, item: Input) -> str:
    """A server-run call or result as text: the API has no block for another runtime's tools (nor,
    on the API that ran it, for a pair whose blocks were not all recorded, or not in one turn)."""
    if item.kind == "tool_call":
        r.loss("server_tool_as_text", "tool_call", "a call of a tool the provider (or an MCP server) ran is sent "
               "as text: the API takes calls only of the tools the request defines, and its own server blocks "
               "only as it recorded them, whole and answered in their turn", item.id)
        return f"[{r.tool_name(item.tool_id)} called with {msgspec.json.encode(item.arguments).decode()}]"
    r.loss("server_tool_as_text", "tool_result", "the result of a tool the provider (or an MCP server) ran is sent "
           "as text", item.id)
    texts = []
    for p in item.parts:
        if isinstance(p, ir.TextPart | ir.StructuredPart):
            texts.append(p.text if isinstance(p, ir.TextPart) else msgspec.json.encode(p.value).decode())
        else:
            r.drop(p, item, "a server tool's result sent as text carries its text and structured content only")
    return f"[result ({item.outcome}): {' '.join(t for t in texts if t)}]"


def pattern_free(name: str) -> bool:
    """Whether a tool's name is sent as it is (it fits every API's name syntax)."""
    return NAME_SYNTAX.fullmatch(name) is not None


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:24]
