"""Content dialects: the provider message structures found in ``content_json``.

A dialect splits one continuity message into IR pieces (message parts, tool calls, tool
results, resources) and a *template*: the content_json with every mapped value replaced by a
placeholder that points into those pieces. Filling the template from the IR gives the content
back exactly, and edits made to the pieces travel. Unrecognized content is not split.
"""

from __future__ import annotations

from typing import Any

from asif_convert._formats.continuity.dialects import anthropic, openai
from asif_convert._formats.continuity.dialects.common import PLACEHOLDER, REASONING, Split, fill

__all__ = ["PLACEHOLDER", "REASONING", "Split", "fill", "split"]

_DIALECTS = (anthropic, openai)


def split(content: Any, role: str, message_id: str) -> Split | None:
    for dialect in _DIALECTS:
        if dialect.detect(content):
            return dialect.split(content, role, message_id)
    return None

