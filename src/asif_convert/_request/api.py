"""``request``: a captured session as the request body of one provider's API, to continue it there.

Reading the document and selecting its inputs is the selection's (``selection.py``); each
provider module renders a ``Selection`` into the keyword arguments of its SDK's create call
(minus the model and sampling settings). Never a model call, never the network."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from asif_convert import ir
from asif_convert._errors import InvalidInput, LossPolicyError, Problem, RequestRefused, UsageError
from asif_convert._limits import Limits
from asif_convert._pipeline import DocumentInput, Loaded, read_session
from asif_convert._registry import loss_kinds
from asif_convert._request import anthropic, google_genai, openai_chat, openai_responses
from asif_convert._request.selection import Pending, Selection, select
from asif_convert.plugin import Options

Renderer = Callable[[Selection], tuple[dict[str, Any], list[ir.Loss]]]
# the targets, by the names the continuity dialects have (``asif-convert formats``)
PROVIDERS: dict[str, Renderer] = {
    anthropic.NAME: anthropic.render,
    openai_chat.NAME: openai_chat.render,
    openai_responses.NAME: openai_responses.render,
    google_genai.NAME: google_genai.render,
}
PENDING = ("refuse", "drop", "as-error")
# where each body holds the conversation: a request with none continues nothing
CONVERSATION = {anthropic.NAME: "messages", openai_chat.NAME: "messages", openai_responses.NAME: "input",
                google_genai.NAME: "contents"}


@dataclass(frozen=True)
class RequestResult:
    """The request body (the create call's keyword arguments, without model and sampling
    settings) and what the request could not carry, stage ``translation``."""

    body: dict[str, Any]
    losses: list[ir.Loss]
    warnings: list[Problem] = field(default_factory=list)  # the input's problems that did not refuse it

    def loss_counts(self) -> Counter[str]:
        return Counter(loss.kind for loss in self.losses)


def request(data: DocumentInput, *, provider: str, context: str | None = None, branch: str | None = None,
            pending: Pending = "refuse", options: Options | None = None, name: str = "<input>",
            limits: Limits | None = None) -> RequestResult:
    """The request that continues the session ``data`` (either format) on ``provider`` (one of
    ``PROVIDERS``): ``context`` renders one recorded context's inputs, ``branch`` a branch's
    history (default: the active branch). Raises ``UsageError`` for an unknown provider or
    pending mode, ``InvalidInput`` for a broken document or history (or an unknown context or
    branch), ``RequestRefused`` for a valid one that gives no request as asked (a tool call with
    no recorded result, nothing left to continue from), ``LossPolicyError`` when ``options``
    refuse a loss. A problem's path is the input's own: a continuity export's record
    (``/messages/3``), not the ASIF form's."""
    options = options or Options()
    if provider not in PROVIDERS:
        raise UsageError(f"unknown provider {provider!r}; known providers: {', '.join(PROVIDERS)}")
    if pending not in PENDING:
        raise UsageError(f"unknown pending mode {pending!r}; known modes: {', '.join(PENDING)}")
    unknown = sorted(options.fail_on - loss_kinds().keys()) if options.fail_on else []
    if unknown:
        raise UsageError(f"unknown loss kind {', '.join(map(repr, unknown))} in fail_on; known kinds: "
                         f"{', '.join(loss_kinds())}")
    # (the reader's own losses say how the IR holds the document: the conversion's, not the request's)
    loaded = read_session(data, options=options, name=name, limits=limits, records=True)
    try:
        selection = select(loaded.document, context=context, branch=branch, pending=pending, name=loaded.name)
    except (InvalidInput, RequestRefused) as exc:
        raise type(exc)([_pointed(p, loaded) for p in exc.problems], exc.source) from None
    body, rendered = PROVIDERS[provider](selection)
    losses = [*selection.losses, *rendered]
    if not body[CONVERSATION[provider]]:
        raise RequestRefused([_pointed(Problem(rule="request", path=selection.path, message=(
            f"nothing is left to continue from on {provider}: every input is an instruction (sent as the "
            f"system instruction) or was left out ({', '.join(sorted({loss.kind for loss in losses})) or 'no loss'}); "
            "a request needs at least one message")), loaded)], loaded.name)
    refused = Counter(loss.kind for loss in losses if options.on_loss == "error" or loss.kind in options.fail_on)
    if refused:
        raise LossPolicyError(dict(sorted(refused.items())), loaded.name)
    return RequestResult(body=body, losses=losses, warnings=loaded.warnings)



_EVENT = re.compile(r"/events/(\d+)")
_HISTORY = re.compile(r"/branches/\d+/event_ids")
_MEMBER = re.compile(r"/(call|result)/\d+$")  # an event split from a message (``<message id>/call/0``)


def _pointed(problem: Problem, loaded: Loaded) -> Problem:
    """A problem pointed at the document the user has: an event of the IR read from a
    continuity export's message or event is that record (``/messages/3``), a branch's history
    its messages, an event read from a line of JSON Lines that line; not the ASIF form."""
    if loaded.records and _HISTORY.fullmatch(problem.path):  # (a branch's event_ids are the ASIF form's)
        return msgspec.structs.replace(problem, path="/messages")
    found = _EVENT.fullmatch(problem.path) if loaded.records or loaded.lines else None
    if found is None or int(found.group(1)) >= len(loaded.document.events):
        return problem
    eid = loaded.document.events[int(found.group(1))].id
    if eid in loaded.lines:  # (a record of JSON Lines: its line)
        return msgspec.structs.replace(problem, path="", line=loaded.lines[eid])
    where = loaded.records.get(eid) or loaded.records.get(_MEMBER.sub("", eid))
    return msgspec.structs.replace(problem, path=where) if where is not None else problem
