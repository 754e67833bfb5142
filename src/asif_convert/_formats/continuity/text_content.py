"""A split message's ``text_content`` as a function of its text parts, so an edited part reaches it.

Runtimes fill ``text_content`` from the texts of a message in a few ways: all of them run
together (what the writer implies), some of them (the answer without its refusal, say), or
joined by a line break or a space. When it is one of these, the message's state says which
texts and which separator instead of holding the text itself; anything else is kept as written.
"""

from __future__ import annotations

SEPARATORS = ("", "\n", "\n\n", " ")


def pick(texts: list[str], text: str) -> tuple[list[int], str] | None:
    """(indices of ``texts``, separator) whose join, in order, is ``text``; None when there are
    none (an empty ``text`` says nothing and is kept as written)."""
    if not text:
        return None
    for sep in SEPARATORS:
        taken: list[int] = []
        pos = 0
        for i, piece in enumerate(texts):
            candidate = (sep if taken else "") + piece
            if piece and text.startswith(candidate, pos):
                taken.append(i)
                pos += len(candidate)
        if pos == len(text):
            return taken, sep
    return None


def join(texts: list[str], indices: list[int] | None, sep: str) -> str:
    """The texts at ``indices`` joined by ``sep``; all of them run together when the state
    names none, or when an edit removed one it names."""
    if indices is None or any(i >= len(texts) for i in indices):
        return "".join(texts)
    return sep.join(texts[i] for i in indices)
