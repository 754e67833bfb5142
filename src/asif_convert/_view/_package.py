"""ASIF packages: a ZIP (entries stored, not compressed) holding ``session.json``, the files of
its embedded resources stored by path, and ``asif-package.json``, an inventory of every other
member with its size and SHA-256.

Read for viewing only, in memory: nothing is extracted, no member name is used as a path on
disk, and every size is checked against the limits before a byte of it is read. Anything the
package format does not allow (compression, encryption, links, folders, names that climb out,
a member the inventory does not list, a digest that does not match) refuses the package."""

from __future__ import annotations

import hashlib
import io
import stat
import zipfile
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

import msgspec

from asif_convert._errors import InvalidInput, Problem
from asif_convert._limits import Limits

MAGIC = b"PK\x03\x04"
MANIFEST = "asif-package.json"
SESSION = "session.json"
PACKAGE_VERSION = "0.1"
MAX_MEMBERS = 1024


@dataclass
class Package:
    session: bytes  # session.json, as stored
    files: dict[str, bytes]  # every other inventoried member, by its name in the package


def is_package(data: bytes) -> bool:
    return data[:4] == MAGIC


def _refuse(name: str, path: str, message: str) -> InvalidInput:
    return InvalidInput([Problem(rule="package", path=path, message=message)], name)


def _check_name(name: str, where: str) -> str | None:
    """Why a member name is not a plain relative path, or None when it is."""
    parts = PurePosixPath(name).parts
    if not name or name.startswith("/") or "\\" in name or "\0" in name or name.endswith("/"):
        return f"{where} {name!r} is not a relative file name"
    if any(p in ("..", ".") for p in parts) or ":" in parts[0]:
        return f"{where} {name!r} climbs out of the package"
    return None


def read_package(data: bytes, name: str, limits: Limits | None = None) -> Package:
    limits = limits or Limits()
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError) as exc:
        raise _refuse(name, "", f"not a readable ZIP container: {exc}") from None
    with archive:
        members = archive.infolist()
        if len(members) > MAX_MEMBERS:
            raise _refuse(name, "", f"{len(members)} members; a package holds at most {MAX_MEMBERS}")
        files: dict[str, bytes] = {}
        folded: set[str] = set()
        total = 0
        for item in members:
            member = item.filename
            why = _check_name(member, "member")
            kind = stat.S_IFMT(item.external_attr >> 16)
            if why is None and (item.is_dir() or kind not in (0, stat.S_IFREG)):
                why = f"member {member!r} is not a regular file"
            if why is None and (item.compress_type != zipfile.ZIP_STORED or item.flag_bits & 1):
                why = f"member {member!r} is compressed or encrypted; package members are stored"
            if why is None and member.casefold() in folded:
                why = f"member {member!r} appears twice (names compare without case)"
            total += item.file_size
            if why is None and (item.file_size > limits.max_bytes or total > limits.max_bytes):
                why = f"member {member!r} takes the package past {limits.max_bytes:,} bytes (--max-bytes)"
            if why is not None:
                raise _refuse(name, "/" + member, why)
            folded.add(member.casefold())
            try:
                with archive.open(item) as fh:
                    content = fh.read(item.file_size + 1)
            except (zipfile.BadZipFile, RuntimeError, NotImplementedError, OSError) as exc:
                raise _refuse(name, "/" + member, f"cannot read member {member!r}: {exc}") from None
            if len(content) != item.file_size:
                raise _refuse(name, "/" + member, f"member {member!r} is not the size its entry states")
            files[member] = content
    return _inventoried(files, name)


def _inventoried(files: dict[str, bytes], name: str) -> Package:
    if MANIFEST not in files or SESSION not in files:
        raise _refuse(name, "", f"a package holds {SESSION} and {MANIFEST}; this one lacks "
                                f"{' and '.join(m for m in (SESSION, MANIFEST) if m not in files)}")
    try:
        manifest: Any = msgspec.json.decode(files[MANIFEST])
    except msgspec.DecodeError as exc:
        raise _refuse(name, "/" + MANIFEST, f"not valid JSON: {exc}") from None
    if not isinstance(manifest, dict) or manifest.get("package_version") != PACKAGE_VERSION \
            or manifest.get("session") != SESSION or not isinstance(manifest.get("files"), list):
        raise _refuse(name, "/" + MANIFEST, f"expected package_version {PACKAGE_VERSION!r}, session {SESSION!r} "
                                            "and a files list")
    listed: set[str] = set()
    for i, entry in enumerate(manifest["files"]):
        where = f"/{MANIFEST}/files/{i}"
        if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
            raise _refuse(name, where, "an inventory entry has path, bytes and sha256")
        member = entry["path"]
        why = _check_name(member, "inventoried path")
        if why is None and (member == MANIFEST or member in listed):
            why = f"inventoried path {member!r} is the manifest itself or listed twice"
        if why is None and member not in files:
            why = f"inventoried path {member!r} is not in the package"
        if why is None:
            content = files[member]
            size = entry.get("bytes")
            if not isinstance(size, int) or isinstance(size, bool) or size != len(content):
                why = f"{member!r} holds {len(content):,} bytes, the inventory says {size!r}"
            elif entry.get("sha256") != hashlib.sha256(content).hexdigest():
                why = f"{member!r} does not match its inventoried SHA-256"
        if why is not None:
            raise _refuse(name, where, why)
        listed.add(member)
    unlisted = sorted(set(files) - listed - {MANIFEST})
    if unlisted:
        raise _refuse(name, "/" + unlisted[0], f"member {unlisted[0]!r} is not in the inventory")
    session = files.pop(SESSION)
    files.pop(MANIFEST)
    return Package(session=session, files=files)
