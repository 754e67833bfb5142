"""asif-convert: agent-continuity exports <-> ASIF 0.4 sessions, through a neutral IR."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("asif-convert")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.0.0+unknown"

from .convert import Result, convert  # noqa: E402
from .errors import ConversionError, InternalError, InvalidInput, Problem  # noqa: E402
from .formats.base import Options  # noqa: E402
from .limits import Limits  # noqa: E402
from .validation import ensure_valid, validate  # noqa: E402

__all__ = ["ConversionError", "InternalError", "InvalidInput", "Limits", "Options", "Problem", "Result", "convert",
           "ensure_valid", "validate", "__version__"]
