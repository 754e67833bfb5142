"""The conversion pipeline: bytes -> reader -> IR -> writer -> bytes, validated at both edges."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from . import ir, jsonio
from .errors import InternalError, InvalidInput, LossPolicyError, Problem
from .formats.base import Context, Format, Options, detect, get

# Problems a conversion can never work around; the rest (referential) become losses unless strict.
FATAL_RULES = frozenset({"json", "schema", "io", "format"})


@dataclass
class Result:
    output: bytes
    document: Any  # the output as JSON values
    source_format: str
    target_format: str
    losses: list[ir.Loss]
    warnings: list[Problem] = field(default_factory=list)

    def loss_counts(self) -> Counter[str]:
        return Counter(loss.kind for loss in self.losses)


def load(data: bytes, *, source: str | None = None, name: str = "<input>") -> tuple[Any, Format]:
    """Decode bytes and pick their format (``source`` forces one)."""
    raw = jsonio.decode(data, name)
    fmt = get(source) if source else detect(raw)
    if fmt is None:
        raise InvalidInput([Problem(rule="format", path="", message="not a document of any installed format "
                                    "(expected an agent-continuity export or an ASIF session)")], name)
    return raw, fmt


def convert(data: bytes, *, to: str, source: str | None = None, options: Options | None = None,
            name: str = "<input>", compact: bool = False) -> Result:
    options = options or Options()
    raw, src = load(data, source=source, name=name)
    dst = get(to)
    problems = src.validate(raw)
    fatal = [p for p in problems if options.strict or p.rule in FATAL_RULES]
    if fatal:
        raise InvalidInput(fatal, name)

    ctx = Context(options=options)
    doc = src.read(raw, ctx)
    out = dst.write(doc, ctx)
    if options.validate:
        bad = [p for p in dst.validate(out) if p.severity == "error"]
        if bad:
            raise InternalError(f"asif-convert produced an invalid {dst.name} document from {name}; "
                                "nothing was written. Please report this bug.", bad)
    losses = ctx.losses()
    _apply_loss_policy(losses, options, name)
    return Result(output=jsonio.encode(out, compact=compact), document=out, source_format=src.name,
                  target_format=dst.name, losses=losses, warnings=problems)


def _apply_loss_policy(losses: list[ir.Loss], options: Options, name: str) -> None:
    refused = Counter(loss.kind for loss in losses
                      if options.on_loss == "error" or loss.kind in options.fail_on)
    if refused:
        raise LossPolicyError(dict(sorted(refused.items())), name)
