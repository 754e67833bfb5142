"""Validation at both edges: JSON schemas (fast path first), continuity references and ASIF
semantic rules. The library entry points take bytes or an already parsed document."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import InvalidInput, Problem


def validate(document: bytes | dict[str, Any], *, format: str | None = None, base_dir: Path | None = None,
             name: str = "<input>") -> list[Problem]:
    """Every problem of a document (errors and warnings); [] when it is clean.

    ``format`` forces the format instead of detecting it; ``base_dir`` enables checking
    embedded ASIF resources stored by path, inside that directory only."""
    from ..convert import load
    from ..formats.base import detect, get
    from .files import path_resource_problems

    if isinstance(document, bytes | bytearray):
        try:
            raw, fmt = load(bytes(document), source=format, name=name)
        except InvalidInput as exc:
            return exc.problems
    else:
        raw, fmt = document, get(format) if format else detect(document)
        if fmt is None:
            return [Problem(rule="format", path="", message="not a document of any installed format")]
    problems = fmt.validate(raw)
    if base_dir is not None and fmt.name == "asif" and not any(p.rule == "schema" for p in problems):
        problems += path_resource_problems(raw, base_dir)
    return problems


def ensure_valid(document: bytes | dict[str, Any], **kwargs: Any) -> None:
    """Raise ``InvalidInput`` with every error of the document; warnings do not raise."""
    errors = [p for p in validate(document, **kwargs) if p.severity == "error"]
    if errors:
        raise InvalidInput(errors, kwargs.get("name", "<input>"))
