"""Artifact files embedded as ASIF resources, when the user names the folder they live in.

The export gives an artifact's ``path`` and, maybe, its ``sha256`` and ``size_bytes``. With
``Options.artifacts_root`` the file is asked of ``Context.files`` (which opens nothing outside
that folder), checked against what the export declares, and the resource becomes ``embedded``
with ``bytes``, ``sha256`` and ``path`` (the artifact's own relative path). A file that is
missing, refused or different from what the export declares stays ``unavailable``: the
resource's explanation says why, and a loss of its own kind is recorded.

Writing continuity back, :class:`Replay` tells the reader again what the folder gave it, from
the document itself (embedded bytes, or the explanation of a refusal), so that the return trip
re-derives the same resources and losses and the export comes back byte for byte.
"""

from __future__ import annotations

import hashlib
from typing import Any

from asif_convert import ir
from asif_convert._artifacts import FileSource, Refusal
from asif_convert._ledger import Ledger

RESERVED = frozenset({"session.json", "asif-package.json"})  # a package's own members
_PREFIX = {
    "missing": "The artifact's file is missing from the artifacts folder: ",
    "refused": "The artifact's file was refused, never read: ",
    "mismatch": "The artifact's file differs from what the export declares, so it was not embedded: ",
}
_LOSS = {"missing": "+artifact-missing", "refused": "+artifact-refused", "mismatch": "+artifact-mismatch"}


def embed(res: ir.Resource, rec: dict[str, Any], files: FileSource | None, ledger: Ledger,
          ref: tuple[str, str]) -> bool:
    """Make ``res`` an embedded resource of the artifact's file; False when it stays unavailable."""
    path = rec["path"]
    got = None if files is None else files.read(path)
    if got is None:
        return False  # no folder was named (or the replay knows nothing of this artifact)
    if isinstance(got, bytes) and path in RESERVED:
        got = Refusal("refused", f"{path!r} is a package's own member name")
    if isinstance(got, bytes):
        got = _mismatch(rec, got) or got
    if isinstance(got, Refusal):
        res.explanation = f"{_PREFIX[got.kind]}{got.reason}."
        ledger.add(_LOSS[got.kind], *ref)
        return False
    res.availability = "embedded"
    res.path, res.bytes, res.sha256 = path, len(got), hashlib.sha256(got).hexdigest()
    res.explanation = ir.UNSET
    return True


def _mismatch(rec: dict[str, Any], content: bytes) -> Refusal | None:
    digest = hashlib.sha256(content).hexdigest()
    size, sha = rec.get("size_bytes"), rec.get("sha256")
    wrong = []
    if isinstance(size, int) and size != len(content):
        wrong.append(f"the export declares {size} bytes, the file has {len(content)}")
    if isinstance(sha, str) and sha.lower() != digest:
        wrong.append(f"the export declares sha256 {sha[:64]}, the file hashes to {digest}")
    return Refusal("mismatch", "; ".join(wrong)) if wrong else None


class Replay:
    """What the artifacts folder gave the reader, told again from a document read with it."""

    def __init__(self, doc: ir.Document, embedded: dict[str, bytes]) -> None:
        self.known: dict[str, bytes | Refusal] = {}
        for r in doc.resources:
            where = r.original_location
            if r.purpose != "artifact" or not isinstance(where, str):
                continue
            if r.availability == "embedded" and isinstance(r.path, str) and r.path in embedded:
                self.known[where] = embedded[r.path]
            elif isinstance(r.explanation, str) and r.explanation.endswith("."):
                for kind, prefix in _PREFIX.items():
                    if r.explanation.startswith(prefix):
                        self.known[where] = Refusal(kind, r.explanation[len(prefix):-1])

    def read(self, path: str) -> bytes | Refusal | None:
        return self.known.get(path)
