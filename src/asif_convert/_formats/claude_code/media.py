"""A resource as a content block the Messages API takes (what Claude Code sends it): an image
(JPEG, PNG, GIF, WebP) or a PDF, as base64 or by URL; a text document as a text-source
document (its media type then text/plain). Anything else has no block: the writer leaves it out
with a loss saying why."""

from __future__ import annotations

from typing import Any

from asif_convert import ir
from asif_convert._dialects import anthropic

IMAGES = ("image/jpeg", "image/png", "image/gif", "image/webp")
PDF = "application/pdf"


def block(res: ir.Resource | None) -> tuple[dict[str, Any] | None, str]:
    """The block, and what was adapted (""), or None and why it has none. A document keeps its
    resource's name as its title (what the model is shown of it; an image block has no name)."""
    made, adapted = _block(res)
    return (anthropic.titled(made, res.name) if made is not None and res is not None else made), adapted


def _block(res: ir.Resource | None) -> tuple[dict[str, Any] | None, str]:
    if res is None:
        return None, "its resource is not in the session"
    mt = res.media_type
    if res.availability == "embedded" and isinstance(res.data, str):
        if mt in IMAGES or mt == PDF:
            kind = "image" if mt in IMAGES else "document"
            return {"type": kind, "source": {"type": "base64", "media_type": mt, "data": res.data}}, ""
        return None, f"the API takes no {mt} media"
    if res.availability == "embedded" and isinstance(res.text, str):
        adapted = "" if mt == "text/plain" else f"a {mt} text document is written as text/plain"
        return {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": res.text}}, adapted
    locator = res.locator if isinstance(res.locator, str) else ""
    if res.availability == "external" and locator.startswith(("https://", "http://")):
        if mt in IMAGES or mt == PDF:
            return {"type": "image" if mt in IMAGES else "document", "source": {"type": "url", "url": locator}}, ""
        return None, f"the API takes no {mt} media by URL"
    return None, f"its content is not in the session ({res.availability})"
