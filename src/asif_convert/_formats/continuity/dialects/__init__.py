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

from asif_convert._formats.continuity.dialects import anthropic, openai
from asif_convert._formats.continuity.dialects.common import PLACEHOLDER, REASONING, Pieces, Split, fill, members

__all__ = ["NAMES", "PLACEHOLDER", "REASONING", "Pieces", "Split", "fill", "members", "render", "split"]

_DIALECTS = (anthropic, openai)
NAMES = tuple(d.NAME for d in _DIALECTS)


def split(content: Any, role: str, message_id: str) -> Split | None:
    for dialect in _DIALECTS:
        if dialect.detect(content):
            return dialect.split(content, role, message_id)
    return None


def render(name: str, pieces: Pieces, options: dict[str, Any]) -> Any:
    """The canonical content_json of dialect ``name`` for ``pieces``."""
    dialect = anthropic if name == anthropic.NAME else openai
    return dialect.render(pieces, options)
