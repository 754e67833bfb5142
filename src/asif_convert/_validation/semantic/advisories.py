"""Checks the spec states but neither the rules digest (section 5) nor the reference validator makes.

Each is reported as a warning (``ASIF-Wnnn``), so a document's validity verdict stays the same
as the reference's while the reader still learns about the fault:

- W001: a branch ``fork`` names this capture (its session and capture ids) but a parent branch
  that is not among its branches. A fork naming another session or capture is bound externally
  and is never resolved here.
- W002: a fork point (``fork.event_id``) that is not on the parent branch the fork names.
- W003: an event ``extensions`` key that is not namespaced. The spec gives no grammar; the
  reading here (see docs/validator.md) is that a namespaced key qualifies a name: at least two
  non-empty segments separated by ``.`` or ``/`` (``example.annotation/1``,
  ``vendor.flag``, ``agent-continuity/1``), and no whitespace. A bare word such as ``label``
  is not namespaced and could be claimed by a later ASIF version.
"""

from __future__ import annotations

import re

from asif_convert._errors import pointer
from asif_convert._validation.semantic.index import Index, Report, as_dict, as_list

_NAMESPACED = re.compile(r"[^\s./]+(?:[./][^\s./]+)+")


def check(ix: Index, report: Report) -> None:
    forks(ix, report)
    extension_keys(ix, report)


def forks(ix: Index, report: Report) -> None:
    session_id = as_dict(ix.doc.get("session")).get("id")
    capture_id = as_dict(ix.doc.get("capture")).get("id")
    for b, branch in enumerate(as_list(ix.doc.get("branches"))):
        branch = as_dict(branch)
        fork = branch.get("fork")
        if not isinstance(fork, dict) or fork.get("session_id") != session_id or fork.get("capture_id") != capture_id:
            continue  # no fork, or a parent in another capture: bound externally
        parent, point = fork.get("branch_id"), fork.get("event_id")
        if not isinstance(parent, str) or not ix.has("branches", parent) or parent == branch.get("id"):
            report.add(
                "ASIF-W001",
                pointer("branches", b, "fork", "branch_id"),
                f"branch '{branch.get('id')}' forks from branch '{parent}' of this capture, which is not "
                "another of its branches; name the parent's session and capture if it lives elsewhere",
                warning=True,
            )
        elif point is not None and point not in ix.branch_positions(parent):
            report.add(
                "ASIF-W002",
                pointer("branches", b, "fork", "event_id"),
                f"branch '{branch.get('id')}' forks from branch '{parent}' at event '{point}', "
                "which is not on that branch",
                warning=True,
            )


def extension_keys(ix: Index, report: Report) -> None:
    namespaced: dict[str, bool] = {}  # a producer repeats its few keys on every event: match each once
    for i, event in enumerate(ix.events):
        extensions = event.get("extensions")
        if not isinstance(extensions, dict):
            continue
        for key in extensions:
            ok = namespaced.get(key)
            if ok is None:
                ok = namespaced[key] = _NAMESPACED.fullmatch(key) is not None
            if not ok:
                report.add(
                    "ASIF-W003",
                    pointer("events", i, "extensions", key),
                    f"event '{event.get('id')}' has extension key '{key}', which is not namespaced "
                    "(for example 'example.annotation/1'); a later ASIF version may claim a bare name",
                    warning=True,
                )
