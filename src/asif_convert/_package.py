"""ASIF package transport 0.1: a session and the files it embeds by ``path``, in one ZIP.

A package is untrusted data like any document. :func:`read_package` checks the whole archive
before anything in it is used: every member is a plain stored (uncompressed, unencrypted)
regular file with a portable name that collides with no other; the manifest inventories every
other member with its exact size and SHA-256; and the session's embedded ``path`` resources are
exactly the members besides ``session.json`` and the manifest, with the bytes they declare.
Nothing is ever extracted: members are read into memory, within limits.

:func:`write_package` is deterministic: the same session and files give the same bytes (sorted
members, the 1980-01-01 timestamp, mode 0600, a manifest with sorted keys).

Problems are ``InvalidInput`` with rule ``package`` and a JSON pointer into the archive seen as
an object keyed by member name: ``/assets~1a.png`` is a member, ``/asif-package.json/files/2/sha256``
a value of the manifest, ``/session.json/resources/0/bytes`` a value of the session.
"""

from __future__ import annotations

import hashlib
import io
import re
import stat
import struct
from typing import TYPE_CHECKING, Any

import msgspec

from asif_convert import _jsonio as jsonio
from asif_convert._errors import InvalidInput, Problem, pointer
from asif_convert._limits import Limits, MiB
from asif_convert._validation.semantic.resources import path_problem

if TYPE_CHECKING:
    import zipfile

MANIFEST = "asif-package.json"
SESSION = "session.json"
PACKAGE_VERSION = "0.1"
RESERVED = frozenset({MANIFEST, SESSION})

# The declared limits of this reader (TRANSPORT.md leaves them to implementations). The archive
# as a whole is bounded by ``Limits.max_bytes`` (it is read like any input), and members never
# overlap, so the sum of their sizes is bounded by it too.
MAX_MEMBERS = 1024
MAX_FILE_BYTES = 256 * MiB

_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")  # a first member, or an empty archive
_LOCAL_HEADER = 30  # the fixed part of a ZIP local file header
_END_RECORD, _END_RECORD_SIZE = b"PK\x05\x06", 22  # the end-of-central-directory record: signature, fixed size
_STORED = 0  # the ZIP method of a member kept as is (zipfile.ZIP_STORED)
_SHA256 = re.compile(r"[0-9a-f]{64}")
_DATE = (1980, 1, 1, 0, 0, 0)


def is_package(data: bytes) -> bool:
    """Whether these bytes are a ZIP archive (a package, or something that claims to be)."""
    return data.startswith(_ZIP_MAGIC)


# Records of this module are msgspec Structs, not dataclasses: a dataclass takes about half a
# millisecond to create at import (its methods are generated and compiled), a Struct a hundredth.
class Package(msgspec.Struct):
    """A package whose every check passed."""

    session: bytes  # the exact bytes of session.json
    document: dict[str, Any]  # session.json decoded
    manifest: bytes  # the exact bytes of asif-package.json (what a signature covers)
    files: dict[str, bytes] = msgspec.field(default_factory=dict)  # every other member, by name


def _problem(message: str, *where: str | int) -> Problem:
    return Problem(rule="package", path=pointer(*where), message=message)


def read_package(data: bytes, name: str = "<input>", limits: Limits | None = None, *,
                 max_members: int = MAX_MEMBERS, max_file_bytes: int = MAX_FILE_BYTES) -> Package:
    """Check a package completely and return its members; raises ``InvalidInput`` naming every
    problem found (members first: nothing in a member is decoded unless the archive is sound)."""
    limits = limits or Limits()
    members = _members(data, name, limits, max_members, max_file_bytes)
    if MANIFEST not in members:
        raise InvalidInput([_problem(f"the package has no {MANIFEST} (its manifest)")], name)
    if SESSION not in members:
        raise InvalidInput([_problem(f"the package has no {SESSION}")], name)
    manifest = members.pop(MANIFEST)
    problems = _inventory_problems(_decode(manifest, MANIFEST, name, limits), members)
    if problems:
        raise InvalidInput(problems, name)
    session = members.pop(SESSION)
    doc = _decode(session, SESSION, name, limits)
    if not isinstance(doc, dict):
        raise InvalidInput([_problem("is not a JSON object", SESSION)], name)
    problems = _closure_problems(doc, members)
    if problems:
        raise InvalidInput(problems, name)
    return Package(session=session, document=doc, manifest=manifest, files=members)


def _decode(content: bytes, member: str, name: str, limits: Limits) -> Any:
    """A member's JSON; its problems' paths start with the member's name."""
    try:
        return jsonio.decode(content, name, limits)
    except InvalidInput as exc:
        raise InvalidInput([msgspec.structs.replace(p, path=pointer(member) + p.path) for p in exc.problems],
                           name) from None


def _members(data: bytes, name: str, limits: Limits, max_members: int, max_file_bytes: int) -> dict[str, bytes]:
    """Every member's bytes, after checking the archive's structure and every name."""
    import zipfile  # (and its compressors: only for a package, which few conversions read or write)

    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            items = archive.infolist()
            if len(items) > max_members:
                raise InvalidInput([_problem(f"the package has {len(items):,} members, more than the limit of "
                                             f"{max_members:,}")], name)
            problems = (_structure_problems(items, max_file_bytes) + _name_problems([i.orig_filename for i in items])
                        + _local_header_problems(data, items) + _trailing_problems(data, archive.comment))
            if problems:
                raise InvalidInput(problems, name)
            members = {}
            for item in items:
                with archive.open(item) as fh:
                    content = fh.read(item.file_size + 1)
                if len(content) != item.file_size:
                    raise InvalidInput([_problem(f"holds {len(content)} bytes, not the {item.file_size} its "
                                                 "directory entry declares", item.filename)], name)
                members[item.filename] = content
            return members
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError, ValueError) as exc:
        raise InvalidInput([_problem(f"not a readable ZIP archive ({exc})")], name) from None
    except RuntimeError as exc:  # zipfile's word for an encrypted member it cannot open
        raise InvalidInput([_problem(f"not a readable ZIP archive ({exc})")], name) from None


def _structure_problems(items: list[zipfile.ZipInfo], max_file_bytes: int) -> list[Problem]:
    problems = []
    for item in items:
        where = item.orig_filename
        kind = stat.S_IFMT(item.external_attr >> 16)
        if item.filename.endswith("/"):  # (ZipInfo.is_dir() fails on an empty name: _name_problems says it)
            problems.append(_problem("is a directory entry; a package holds only files", where))
        elif kind not in (0, stat.S_IFREG):
            what = "a symbolic link" if kind == stat.S_IFLNK else "not a regular file"
            problems.append(_problem(f"is {what}; a package holds only regular files", where))
        if item.flag_bits & 0x1:
            problems.append(_problem("is encrypted; packages are never encrypted", where))
        if item.compress_type != _STORED:
            problems.append(_problem(f"is compressed (method {item.compress_type}); package members are "
                                     "stored uncompressed", where))
        elif item.compress_size != item.file_size:
            problems.append(_problem(f"is stored with {item.compress_size} bytes but declares {item.file_size}",
                                     where))
        limit = max_file_bytes if item.orig_filename not in RESERVED else None
        if limit is not None and item.file_size > limit:
            problems.append(_problem(f"is {item.file_size:,} bytes, more than the limit of {limit:,} per file",
                                     where))
    # Members whose data overlap (one byte range claimed by several entries) make a small archive
    # hold huge contents: refused, whatever the names.
    end = 0
    for item in sorted(items, key=lambda i: i.header_offset):
        if item.header_offset < end:
            problems.append(_problem("overlaps the member before it in the archive", item.orig_filename))
        end = max(end, item.header_offset + _LOCAL_HEADER + item.compress_size)
    return problems


def _local_header_problems(data: bytes, items: list[zipfile.ZipInfo]) -> list[Problem]:
    """A member's local header must say what its directory entry says: a reader that trusts the
    local header (a streaming one) would otherwise see another archive than this check did, an
    encrypted member or one compressed otherwise. (zipfile compares the names itself.)"""
    problems = []
    for item in items:
        header = data[item.header_offset:item.header_offset + _LOCAL_HEADER]
        if len(header) < _LOCAL_HEADER or not header.startswith(b"PK\x03\x04"):
            problems.append(_problem("has no local header where its directory entry says", item.orig_filename))
            continue
        flags, method = struct.unpack_from("<HH", header, 6)
        if flags & 0x1 and not item.flag_bits & 0x1:
            problems.append(_problem("is encrypted in its local header (not in the central directory); packages "
                                     "are never encrypted", item.orig_filename))
        if method != item.compress_type:
            problems.append(_problem(f"is compressed with method {method} in its local header but "
                                     f"{item.compress_type} in the central directory", item.orig_filename))
    return problems


def _trailing_problems(data: bytes, comment: bytes) -> list[Problem]:
    """A package ends with its end-of-central-directory record and that record's comment: bytes
    after it are no part of the archive (a reader could take them for another one)."""
    end = data.rfind(_END_RECORD)  # the record zipfile read: the last one (it found one, or it refused)
    extra = len(data) - (end + _END_RECORD_SIZE + len(comment))
    if end < 0 or extra <= 0:
        return []
    return [_problem(f"the package has {extra:,} bytes after the end of its ZIP archive; a package ends with "
                     "its end-of-central-directory record")]


def _name_problems(names: list[str]) -> list[Problem]:
    """Portable names only, and none that two file systems could confuse: duplicates, names
    equal after case folding, or a file whose name is another member's folder."""
    problems = []
    folded: dict[str, str] = {}
    for name in names:
        why = "contains a NUL character" if "\0" in name else path_problem(name) if name else "is empty"
        if why is not None:
            problems.append(_problem(f"member name {name!r} {why}", name))
            continue
        key = name.casefold()
        if key in folded:
            same = "appears twice" if folded[key] == name else f"differs only in case from {folded[key]!r}"
            problems.append(_problem(f"member name {name!r} {same}", name))
        folded.setdefault(key, name)
    folders = {key[: i] for key in folded for i, ch in enumerate(key) if ch == "/"}
    for key in sorted(folders & folded.keys()):
        problems.append(_problem(f"member {folded[key]!r} is a file and also the folder of other members",
                                 folded[key]))
    return problems


def _inventory_problems(manifest: Any, members: dict[str, bytes]) -> list[Problem]:
    """The manifest says exactly what every other member is: its size and its SHA-256."""
    if not isinstance(manifest, dict):
        return [_problem("is not a JSON object", MANIFEST)]
    problems = []
    unknown = sorted(set(manifest) - {"package_version", "session", "files"})
    problems += [_problem("is not a field of a package manifest 0.1", MANIFEST, key) for key in unknown]
    if manifest.get("package_version") != PACKAGE_VERSION:
        problems.append(_problem(f"must be {PACKAGE_VERSION!r} (the only package transport version this reader "
                                 f"knows), not {manifest.get('package_version')!r}", MANIFEST, "package_version"))
    if manifest.get("session") != SESSION:
        problems.append(_problem(f"must be {SESSION!r}", MANIFEST, "session"))
    records = manifest.get("files")
    if not isinstance(records, list):
        return problems + [_problem("must be an array of file records", MANIFEST, "files")]
    listed: set[str] = set()
    for i, record in enumerate(records):
        problems += _record_problems(record, i, members, listed)
    for name in sorted(set(members) - listed):
        problems.append(_problem(f"member {name!r} is not listed in the manifest", name))
    return problems


def _record_problems(record: Any, i: int, members: dict[str, bytes], listed: set[str]) -> list[Problem]:
    at = (MANIFEST, "files", i)
    if not isinstance(record, dict) or set(record) != {"path", "bytes", "sha256"}:
        return [_problem("must be an object with exactly path, bytes and sha256", *at)]
    path, size, digest = record["path"], record["bytes"], record["sha256"]
    if not isinstance(path, str) or path == MANIFEST:
        return [_problem(f"must name a member other than {MANIFEST}", *at, "path")]
    if path in listed:
        return [_problem(f"lists {path!r} a second time", *at, "path")]
    listed.add(path)
    if path not in members:
        return [_problem(f"lists {path!r}, which is not in the package", *at, "path")]
    problems = []
    content = members[path]
    if not isinstance(size, int) or isinstance(size, bool) or size != len(content):
        problems.append(_problem(f"declares {size!r} bytes but member {path!r} has {len(content)}", *at, "bytes"))
    if not isinstance(digest, str) or not _SHA256.fullmatch(digest):
        problems.append(_problem("must be a lowercase hexadecimal SHA-256", *at, "sha256"))
    elif digest != hashlib.sha256(content).hexdigest():
        problems.append(_problem(f"does not match the SHA-256 of member {path!r}", *at, "sha256"))
    return problems


def _closure_problems(doc: dict[str, Any], files: dict[str, bytes]) -> list[Problem]:
    """The members besides the session and the manifest are exactly the session's embedded
    ``path`` resources, each with the bytes it declares."""
    problems = []
    used: set[str] = set()
    resources = doc.get("resources")
    for r, res in enumerate(resources if isinstance(resources, list) else ()):
        if not isinstance(res, dict) or res.get("availability") != "embedded" or not isinstance(res.get("path"), str):
            continue
        path = res["path"]
        at = (SESSION, "resources", r)
        if path in RESERVED:
            problems.append(_problem(f"{path!r} is reserved for the package itself", *at, "path"))
            continue
        if path not in files:
            problems.append(_problem(f"names {path!r}, which is not in the package", *at, "path"))
            continue
        used.add(path)
        content = files[path]
        if res.get("bytes") != len(content):
            problems.append(_problem(f"declares {res.get('bytes')!r} bytes but member {path!r} has {len(content)}",
                                     *at, "bytes"))
        if res.get("sha256") != hashlib.sha256(content).hexdigest():
            problems.append(_problem(f"does not match the SHA-256 of member {path!r}", *at, "sha256"))
    for path in sorted(set(files) - used):
        problems.append(_problem(f"member {path!r} is no embedded resource of the session", path))
    return problems


def manifest_bytes(session: bytes, files: dict[str, bytes]) -> bytes:
    """The manifest of a package of ``session`` and ``files``."""
    contents = {SESSION: session, **files}
    return encode_manifest([(path, len(content), hashlib.sha256(content).hexdigest())
                            for path, content in contents.items()])


def encode_manifest(inventory: list[tuple[str, int, str]]) -> bytes:
    """A manifest from its inventory of (path, bytes, sha256): compact JSON with sorted keys, records
    sorted by path and a final newline (the form the reference writer produces, so that equal
    contents give equal manifests, and equal signatures)."""
    records = [{"bytes": size, "path": path, "sha256": digest} for path, size, digest in sorted(inventory)]
    return jsonio.encode({"files": records, "package_version": PACKAGE_VERSION, "session": SESSION}, compact=True)


def write_package(session: bytes, files: dict[str, bytes] | None = None) -> bytes:
    """The package of ``session`` (exact bytes) and the files its embedded resources name.

    Raises ``InvalidInput`` when a name is not portable, reserved or colliding; the session's
    own resource closure is the caller's to guarantee (it is checked by :func:`read_package`)."""
    files = dict(files or {})
    problems = [_problem(f"{name!r} is reserved for the package itself", name) for name in files if name in RESERVED]
    problems += _name_problems(list(files))
    if len(files) + 2 > MAX_MEMBERS:
        problems.append(_problem(f"a package holds at most {MAX_MEMBERS:,} members; this one would have "
                                 f"{len(files) + 2:,}"))
    if problems:
        raise InvalidInput(problems, "<package>")
    import zipfile  # (see _members)

    members = {**files, SESSION: session, MANIFEST: manifest_bytes(session, files)}
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED) as archive:
        for name, content in sorted(members.items()):
            info = zipfile.ZipInfo(name, date_time=_DATE)
            info.create_system = 3  # Unix, so that the mode below means what it says
            info.external_attr = (stat.S_IFREG | 0o600) << 16
            info.compress_type = zipfile.ZIP_STORED
            archive.writestr(info, content)
    return out.getvalue()
