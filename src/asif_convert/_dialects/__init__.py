"""Content dialects: the provider message structures found in ``content_json``.

A dialect splits one continuity message into IR pieces (message parts, tool calls, tool
results, resources) and the style options the provider varies, and renders pieces back into
its canonical content_json (what the provider's API would hold for them). What makes a
message's content_json differ from that rendering is kept as a typed difference
(``difference.py``): edits of the pieces travel, and a canonical message keeps nothing.

A dialect maps block by block: a block it does not know stays an opaque part in its place
(``common.opaque``), and everything beside it is mapped. Content that fits no dialect is not
split. Content that fits several goes to the one that leaves the fewest blocks opaque; on a
tie, to the first in ``_DIALECTS`` (an OpenAI Chat user message of text parts is also an
Anthropic message object: it is read as Anthropic, and both render it the same).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from asif_convert._dialects import anthropic, google_genai, openai, openai_responses
from asif_convert._dialects.common import (
    PLACEHOLDER,
    REASONING,
    Pieces,
    Split,
    answering,
    fill,
    members,
)

__all__ = ["NAMES", "PLACEHOLDER", "REASONING", "Pieces", "Split", "answering", "fill", "members", "order", "refusals",
           "render", "restate", "split"]

# The order settles ties (docs/dialects-detection.md): OpenAI Chat before Responses, so an untyped
# message both read alike is a Chat message.
_DIALECTS = (anthropic, openai, openai_responses, google_genai)
NAMES = tuple(d.NAME for d in _DIALECTS)
_BY_NAME = {d.NAME: d for d in _DIALECTS}


def split(content: Any, role: str, message_id: str, awaiting: Sequence[tuple[str, str]] = ()) -> Split | None:
    """The content's pieces in the dialect that fits it best, else None. ``awaiting``: the calls
    of an earlier model turn its responses may answer by name (``Split.turn``); only Gen AI
    pairs so, the others name the call they answer."""
    best: Split | None = None
    for dialect in _DIALECTS:
        if dialect.detect(content):
            found = google_genai.split(content, role, message_id, awaiting) if dialect is google_genai \
                else dialect.split(content, role, message_id)
            if best is None or len(found.opaque) < len(best.opaque):
                best = found
            if not best.opaque:
                break
    return best


def render(name: str, pieces: Pieces, options: dict[str, Any]) -> Any:
    """The canonical content_json of dialect ``name`` for ``pieces``."""
    return _BY_NAME[name].render(pieces, options)


def order(name: str, options: dict[str, Any], parts: list[Any], call_ids: list[str],
          result_ids: list[str]) -> list[tuple[str, int]]:
    """The pieces of one message of dialect ``name`` in the order its content held them, as
    (``p`` part | ``c`` call | ``r`` result, index), from the style ``split`` kept (a split lists
    a message's parts, then its calls, then its results). A dialect that keeps no order holds
    them in that canonical order (OpenAI Chat: content, then tool calls)."""
    if name == openai_responses.NAME:
        return openai_responses.order(options, parts, call_ids, result_ids)
    letters = options.get("o") if name in (anthropic.NAME, google_genai.NAME) else None
    sizes = {"p": len(parts), "c": len(call_ids), "r": len(result_ids)}
    taken = dict.fromkeys(sizes, 0)
    out: list[tuple[str, int]] = []
    for letter in (letters if isinstance(letters, str) else ""):
        if taken.get(letter, sizes.get(letter, 0)) < sizes.get(letter, 0):
            out.append((letter, taken[letter]))
            taken[letter] += 1
    return out + [(letter, k) for letter in "pcr" for k in range(taken[letter], sizes[letter])]


def refusals(name: str, options: dict[str, Any]) -> set[int]:
    """The indices of a message's parts that are the model's refusal (OpenAI Chat and Responses
    mark them in the style; the part is its text)."""
    marked: list[Any] = []
    if name == openai.NAME:
        marked = [options["r"]] if isinstance(options.get("r"), int) else []
        marked += options.get("q") or []
    elif name == openai_responses.NAME:
        marked = list(options.get("q") or ())
    return {k for k in marked if isinstance(k, int)}


def restate(name: str, content: Any, pieces: Pieces) -> Any:
    """A first release's filled template with what the pieces say where the template kept a
    literal (a dialect of that release: Anthropic Messages, OpenAI Chat); others as they are."""
    restated = getattr(_BY_NAME.get(name), "restate", None)
    return restated(content, pieces) if restated is not None else content
