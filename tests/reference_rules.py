"""The public reference reader's package checks, restated independently of src/ (so that a
package we write is judged by rules we did not write the writer against): its limits, its
member and name rules, its inventory and its resource closure. Returns the first rule broken,
or None when the package passes."""

from __future__ import annotations

import hashlib
import io
import json
import re
import stat
import zipfile

DOCUMENT_LIMIT = 16 * 1024 * 1024
RESOURCE_LIMIT = 64 * 1024 * 1024
TOTAL_LIMIT = 256 * 1024 * 1024
MEMBER_LIMIT = 1024
MANIFEST = "asif-package.json"
SESSION = "session.json"
_DEVICE = re.compile(r"(con|prn|aux|nul|com[1-9]|lpt[1-9])(\..*)?", re.IGNORECASE)


def name_broken(name: object) -> str | None:
    if not isinstance(name, str) or not name:
        return "empty name"
    if len(name) > 4096 or name.startswith("/") or "\\" in name or ":" in name:
        return "unsafe name"
    for segment in name.split("/"):
        if segment in ("", ".", "..") or segment[-1] in " .":
            return "unsafe segment"
        if any(ord(c) < 32 or c in '<>"|?*' for c in segment):
            return "nonportable segment"
        if _DEVICE.fullmatch(segment):
            return "device name"
    return None


def broken_rule(raw: bytes) -> str | None:
    if len(raw) > TOTAL_LIMIT + DOCUMENT_LIMIT:
        return "archive too large"
    members: dict[str, bytes] = {}
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as archive:
            entries = archive.infolist()
            if len(entries) > MEMBER_LIMIT:
                return "too many members"
            seen_folded: set[str] = set()
            total = 0
            for entry in entries:
                name = entry.filename
                if name_broken(name) or entry.orig_filename != name or "\0" in name:
                    return f"bad name {name!r}"
                if name.casefold() in seen_folded:
                    return f"colliding name {name!r}"
                seen_folded.add(name.casefold())
                if entry.is_dir() or stat.S_IFMT(entry.external_attr >> 16) not in (0, stat.S_IFREG):
                    return f"not a regular file {name!r}"
                if entry.compress_type != zipfile.ZIP_STORED or entry.flag_bits & 1:
                    return f"compressed or encrypted {name!r}"
                cap = DOCUMENT_LIMIT if name in (MANIFEST, SESSION) else RESOURCE_LIMIT
                total += entry.file_size
                if entry.file_size > cap or total > TOTAL_LIMIT:
                    return f"too large {name!r}"
                with archive.open(entry) as fh:
                    content = fh.read(cap + 1)
                if len(content) != entry.file_size:
                    return f"size mismatch {name!r}"
                members[name] = content
    except (zipfile.BadZipFile, RuntimeError, NotImplementedError):
        return "not a ZIP"
    if MANIFEST not in members or SESSION not in members:
        return "metadata missing"
    manifest = json.loads(members[MANIFEST])
    if manifest.get("package_version") != "0.1" or manifest.get("session") != SESSION:
        return "manifest version"
    listed: set[str] = set()
    for record in manifest.get("files") or []:
        path = record.get("path")
        if name_broken(path) or path == MANIFEST or path in listed or path not in members:
            return f"inventory path {path!r}"
        listed.add(path)
        size = record.get("bytes")
        if type(size) is not int or size != len(members[path]):
            return f"inventory size {path!r}"
        if record.get("sha256") != hashlib.sha256(members[path]).hexdigest():
            return f"inventory digest {path!r}"
    if listed != set(members) - {MANIFEST}:
        return "unlisted member"
    for a in members:
        if any(b.startswith(a + "/") for b in members):
            return f"file/folder collision {a!r}"
    session = json.loads(members[SESSION])
    expected = {SESSION, MANIFEST}
    for resource in session.get("resources", []):
        if resource.get("availability") == "embedded" and "path" in resource:
            path = resource["path"]
            if name_broken(path) or path in (SESSION, MANIFEST) or path not in members:
                return f"resource path {path!r}"
            content = members[path]
            if len(content) != resource.get("bytes") or hashlib.sha256(content).hexdigest() != resource.get("sha256"):
                return f"resource integrity {path!r}"
            expected.add(path)
    if expected != set(members):
        return "unrelated members"
    return None
