"""Running totals of a batch in constant memory, the progress protocol, and migrate's report."""

from __future__ import annotations

import heapq
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from asif_convert._errors import EXIT_INTERNAL, EXIT_INVALID_INPUT, EXIT_LOSS_POLICY, EXIT_OK, display_name
from asif_convert.batch._records import (
    FAILED,
    INTERNAL,
    INVALID,
    OK,
    POLICY,
    REFUSED,
    STATUSES,
    UNWRITABLE,
    FileResult,
)


@dataclass
class Summary:
    """Running totals of a batch, in constant memory (top lists are bounded)."""

    top: int = 10
    counts: Counter[str] = field(default_factory=Counter)
    loss_counts: Counter[str] = field(default_factory=Counter)  # losses by kind, over converted files
    loss_files: Counter[str] = field(default_factory=Counter)  # files with at least one loss of a kind
    input_bytes: int = 0  # of the files read (converted or failed)
    output_bytes: int = 0
    slowest: list[tuple[float, str]] = field(default_factory=list)  # a min-heap of the top slowest
    failures: list[FileResult] = field(default_factory=list)  # the first ``top * 5`` failures
    total_files: int = 0
    total_bytes: int = 0
    counted: bool = False  # whether total_files is known (a run stopped while counting does not know)
    started: float = field(default_factory=time.perf_counter)
    elapsed: float = 0.0
    interrupted: bool = False

    def add(self, rec: FileResult) -> None:
        self.counts[rec.status] += 1
        self.input_bytes += rec.input_bytes or 0
        if rec.status == OK:
            self.output_bytes += rec.output_bytes or 0
            self.loss_counts.update(rec.losses)
            self.loss_files.update(rec.losses.keys())
            item = (rec.seconds.get("total", 0.0), rec.input)
            if len(self.slowest) < self.top:
                heapq.heappush(self.slowest, item)
            elif item > self.slowest[0]:
                heapq.heapreplace(self.slowest, item)
        elif rec.status in FAILED and len(self.failures) < self.top * 5:
            self.failures.append(rec)
        self.elapsed = time.perf_counter() - self.started

    @property
    def done(self) -> int:
        return sum(self.counts.values())

    @property
    def remaining(self) -> int | None:
        """The files not reached (None while they are not counted)."""
        return max(0, self.total_files - self.done) if self.counted else None

    @property
    def failed(self) -> int:
        return sum(self.counts[s] for s in FAILED)

    def slowest_files(self) -> list[tuple[float, str]]:
        return sorted(self.slowest, reverse=True)

    def report(self) -> dict[str, Any]:
        """The run as JSON-ready data (``batch --report``): counts by status, the files not reached
        (when interrupted), bytes, losses by kind, the failures kept (``top * 5``), the time."""
        return {
            "files": self.total_files,
            "counts": {status: self.counts[status] for status in STATUSES},
            "interrupted": self.interrupted,
            "not_reached": self.remaining if self.interrupted else 0,
            "input_bytes": self.input_bytes,
            "output_bytes": self.output_bytes,
            "loss_counts": dict(self.loss_counts.most_common()),
            "loss_files": dict(self.loss_files.most_common()),
            "failed": self.failed,
            "failures": [{"input": display_name(rec.input), "output": rec.output, "status": rec.status,
                          "error": rec.error} for rec in self.failures],
            "seconds": round(self.elapsed, 3),
        }

    @property
    def exit_code(self) -> int:
        """3 if any internal error, else 1 if any input was invalid or refused or any output could
        not be written, else 4 if the loss policy refused any, else 0."""
        if self.counts[INTERNAL]:
            return EXIT_INTERNAL
        if self.counts[INVALID] or self.counts[REFUSED] or self.counts[UNWRITABLE]:
            return EXIT_INVALID_INPUT
        if self.counts[POLICY]:
            return EXIT_LOSS_POLICY
        return EXIT_OK


class Progress(Protocol):
    """A display of a batch's progress. It may also have ``found(total_files, total_bytes)``:
    then, when the sources are object storage (listed as the files convert), it is called once
    before ``start`` (with zeros, and ``start`` gets zeros too) and again as each file is found."""

    def start(self, total_files: int, total_bytes: int, workers: int | None) -> None: ...

    def advance(self, rec: FileResult) -> None: ...

    def stop(self) -> None: ...


@dataclass
class Report:
    """What :func:`migrate` returns: the per-file results (unless ``keep_results=False``) and the
    running summary (counts, losses by kind, slowest files, first failures, exit code)."""

    results: list[FileResult]
    summary: Summary
    manifest: Path | str | None  # a str for a URL

    @property
    def exit_code(self) -> int:
        return self.summary.exit_code
