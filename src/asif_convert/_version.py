"""The installed distribution's version, in one place every layer may import."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("asif-convert")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.0.0+unknown"
