"""Batch migration: many files converted in parallel, resumable, with a streamed JSONL manifest.

The pieces, each usable on its own:

- :func:`discover` walks the sources (files, directories, glob patterns) lazily, in a stable order,
  and never follows a symlink out of the source roots.
- :func:`output_path` maps a file's path relative to its source root to a path under OUTDIR that
  cannot escape it.
- :class:`Manifest` appends one JSON line per file as results arrive, and tells a rerun what it
  may skip; :func:`read_manifest` reads one.
- :func:`migrate` runs it all on any :class:`concurrent.futures.Executor` (local processes by
  default, a Dask cluster through ``Client.get_executor()``), with a bounded number of tasks in
  flight. Workers read their input and write their output themselves; only small
  :class:`FileResult` records travel back, so memory is bounded by the largest single file.
  Local workers die with their parent, and one run at a time may use an OUTDIR.

See docs/batch.md for the manifest's fields and the resume rules.
"""

from asif_convert.batch._discover import Found, Refused, check_sources, discover
from asif_convert.batch._manifest import Manifest, read_manifest
from asif_convert.batch._paths import output_name, output_path
from asif_convert.batch._records import (
    DEFAULT_PATTERN,
    FAILED,
    INTERNAL,
    INVALID,
    MANIFEST_NAME,
    OK,
    POLICY,
    REFUSED,
    STATUSES,
    UNCHANGED,
    UNWRITABLE,
    ClusterLost,
    FileResult,
    UsageError,
)
from asif_convert.batch._scheduler import (
    MAX_WORKERS,
    clean_stale_temps,
    default_workers,
    local_executor,
    migrate,
    settings_key,
)
from asif_convert.batch._summary import Progress, Report, Summary
from asif_convert.batch._worker import convert_file

__all__ = [
    "MAX_WORKERS",
    "DEFAULT_PATTERN",
    "FAILED",
    "INTERNAL",
    "INVALID",
    "MANIFEST_NAME",
    "OK",
    "POLICY",
    "REFUSED",
    "STATUSES",
    "UNCHANGED",
    "UNWRITABLE",
    "ClusterLost",
    "FileResult",
    "Found",
    "Manifest",
    "Progress",
    "Refused",
    "Report",
    "Summary",
    "UsageError",
    "check_sources",
    "clean_stale_temps",
    "convert_file",
    "default_workers",
    "discover",
    "local_executor",
    "migrate",
    "output_name",
    "output_path",
    "read_manifest",
    "settings_key",
]
