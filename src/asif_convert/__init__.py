"""asif-convert: agent-continuity exports <-> ASIF 0.4 sessions, through a neutral IR.

The public surface is this module, :mod:`asif_convert.ir`, :mod:`asif_convert.batch` and the
plugin API :mod:`asif_convert.plugin`; every other module is private and may change.
"""

from asif_convert._errors import (
    ConversionError,
    InternalError,
    InvalidInput,
    LossPolicyError,
    OutputError,
    Problem,
    UsageError,
)
from asif_convert._limits import Limits
from asif_convert._pipeline import Result, convert, ensure_valid, validate
from asif_convert._pipeline import load_session as load
from asif_convert._request.api import RequestResult, request
from asif_convert._version import __version__
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
    "RequestResult",
    "Result",
    "UsageError",
    "__version__",
    "convert",
    "ensure_valid",
    "load",
    "request",
    "validate",
]
