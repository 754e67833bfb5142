"""Content dialects: the provider message structures found in ``content_json``.

A dialect splits one continuity message into IR pieces (message parts, tool calls, tool
results, resources) and the style options the provider varies, and renders pieces back into
its canonical content_json (what the provider's API would hold for them). What makes a
message's content_json differ from that rendering is kept as a typed difference
(``difference.py``): edits of the pieces travel, and a canonical message keeps nothing.
Unrecognized content is not split.
"""

from __future__ import annotations

from typing import Any

from asif_convert._formats.continuity.dialects import anthropic, google_genai, openai, openai_responses
from asif_convert._formats.continuity.dialects.common import (
    EXECUTED_BY,
    PLACEHOLDER,
    REASONING,
    Pieces,
    Split,
    fill,
    members,
)

__all__ = ["EXECUTED_BY", "NAMES", "PLACEHOLDER", "REASONING", "Pieces", "Split", "fill", "members", "render",
           "split"]

# Detection precedence: the first dialect whose detect accepts a content_json splits it (see
# docs/dialects-detection.md). OpenAI Chat comes before Responses: a message without "type"
# that fits both is a Chat message.
_DIALECTS = (anthropic, openai, openai_responses, google_genai)
NAMES = tuple(d.NAME for d in _DIALECTS)
_BY_NAME = {d.NAME: d for d in _DIALECTS}


def split(content: Any, role: str, message_id: str) -> Split | None:
    for dialect in _DIALECTS:
        if dialect.detect(content):
            return dialect.split(content, role, message_id)
    return None


def render(name: str, pieces: Pieces, options: dict[str, Any]) -> Any:
    """The canonical content_json of dialect ``name`` for ``pieces``."""
    return _BY_NAME[name].render(pieces, options)
