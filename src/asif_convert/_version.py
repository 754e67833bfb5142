"""The distribution's version, in one place every layer may import. The build reads it from
here (pyproject.toml, ``[tool.hatch.version]``), so asking the installed metadata, which walks
every installed distribution, is never needed."""

__version__ = "0.1.0"
