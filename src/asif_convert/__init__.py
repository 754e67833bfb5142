"""asif-convert: agent-continuity exports <-> ASIF 0.4 sessions, through a neutral IR.

The public surface is this module, :mod:`asif_convert.ir`, :mod:`asif_convert.batch` and the
plugin API :mod:`asif_convert.plugin`; every other module is private and may change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from asif_convert._errors import (
    ConversionError,
    InternalError,
    InvalidInput,
    LossPolicyError,
    OutputError,
    Problem,
    RequestRefused,
    UsageError,
)
from asif_convert._limits import Limits
from asif_convert._version import __version__

if TYPE_CHECKING:
    from asif_convert._pipeline import Result, convert, dump, ensure_valid, validate
    from asif_convert._pipeline import load_session as load
    from asif_convert._request.api import RequestResult, request
    from asif_convert.plugin import Options

__all__ = [
    "ConversionError",
    "InternalError",
    "InvalidInput",
    "Limits",
    "LossPolicyError",
    "Options",
    "OutputError",
    "Problem",
    "RequestRefused",
    "RequestResult",
    "Result",
    "UsageError",
    "__version__",
    "convert",
    "dump",
    "ensure_valid",
    "load",
    "request",
    "validate",
]


def __getattr__(name: str) -> Any:
    """The pipeline and the plugin API, imported on first use: every ``asif_convert`` module
    runs this one first, and the command line's start (``--help``, the modules of the one
    command it runs) must not wait for every format and validator (docs/decisions.md, 35)."""
    if name in ("Result", "convert", "dump", "ensure_valid", "validate"):
        from asif_convert import _pipeline

        return getattr(_pipeline, name)
    if name == "load":
        from asif_convert import _pipeline

        return _pipeline.load_session
    if name in ("request", "RequestResult"):
        from asif_convert._request import api

        return getattr(api, name)
    if name == "Options":
        from asif_convert import plugin

        return plugin.Options
    raise AttributeError(f"module 'asif_convert' has no attribute {name!r}")
