"""Configurations, environments and resources: inner identity, references, embedded bytes, paths."""

from __future__ import annotations

import hashlib
import re
import unicodedata

from asif_convert._errors import pointer
from asif_convert._validation.semantic.index import Index, Report, as_dict, as_list, decode_embedded

_DEVICE_NAME = re.compile(r"(con|prn|aux|nul|com[1-9]|lpt[1-9])(\..*)?", re.IGNORECASE)
_UNPORTABLE = frozenset('<>"|?*')
MAX_PATH = 4096


def check(ix: Index, report: Report) -> None:
    configurations(ix, report)
    environments(ix, report)
    embedded(ix, report)
    paths(ix, report)
    memory(ix, report)


def configurations(ix: Index, report: Report) -> None:
    for c, config in enumerate(as_list(ix.doc.get("configurations"))):
        config = as_dict(config)
        cid = config.get("id")
        for field, key in (
            ("instructions", "id"),
            ("capabilities", "id"),
            ("policies", "id"),
            ("secret_requirements", "handle"),
        ):
            seen: set[str] = set()
            for k, item in enumerate(as_list(config.get(field))):
                value = as_dict(item).get(key)
                if value in seen:
                    report.add(
                        72,
                        pointer("configurations", c, field, k, key),
                        f"configuration '{cid}' lists {key} '{value}' twice in {field}",
                    )
                elif isinstance(value, str):
                    seen.add(value)
        for k, env in enumerate(as_list(config.get("environment_ids"))):
            if not ix.has("environments", env):
                report.add(
                    72,
                    pointer("configurations", c, "environment_ids", k),
                    f"configuration '{cid}' names environment '{env}', which is not in environments",
                )
        for k, capability in enumerate(as_list(config.get("capabilities"))):
            capability = as_dict(capability)
            for j, rid in enumerate(as_list(capability.get("resource_ids"))):
                if rid not in ix.resources:
                    report.add(
                        72,
                        pointer("configurations", c, "capabilities", k, "resource_ids", j),
                        f"capability '{capability.get('id')}' of configuration '{cid}' names "
                        f"resource '{rid}', which is not in resources",
                    )


def environments(ix: Index, report: Report) -> None:
    for e, env in enumerate(as_list(ix.doc.get("environments"))):
        env = as_dict(env)
        for j, rid in enumerate(as_list(env.get("resource_ids"))):
            if rid not in ix.resources:
                report.add(
                    73,
                    pointer("environments", e, "resource_ids", j),
                    f"environment '{env.get('id')}' names resource '{rid}', which is not in resources",
                )


def embedded(ix: Index, report: Report) -> None:
    """Inline content must match its declared size and digest; path content needs a base dir (not here)."""
    for r, resource in enumerate(as_list(ix.doc.get("resources"))):
        resource = as_dict(resource)
        raw, error = decode_embedded(resource)
        rid = resource.get("id")
        if error is not None:
            field = "text" if "text" in resource else "data"
            report.add(75, pointer("resources", r, field), f"resource '{rid}' {error}")
            continue
        if raw is None:
            continue
        if resource.get("bytes") != len(raw):
            report.add(
                75,
                pointer("resources", r, "bytes"),
                f"resource '{rid}' declares {resource.get('bytes')} bytes but its content has {len(raw)}",
            )
        digest = hashlib.sha256(raw).hexdigest()
        if resource.get("sha256") != digest:
            report.add(
                75,
                pointer("resources", r, "sha256"),
                f"resource '{rid}' declares sha256 {resource.get('sha256')} but its content hashes to {digest}",
            )


def path_problem(path: str) -> str | None:
    """Why a resource path is not a safe, portable path relative to the session directory."""
    if len(path) > MAX_PATH:
        return f"is longer than {MAX_PATH} characters"
    if path.startswith("/"):
        return "is absolute"
    if "\\" in path:
        return "contains a backslash; use forward slashes"
    if ":" in path:
        return "contains ':' (a drive letter or stream name)"
    for segment in path.split("/"):
        if segment in ("", ".", ".."):
            return "has an empty, '.' or '..' segment"
        if segment.endswith((" ", ".")):
            return f"has segment '{segment}' ending in a space or dot"
        if any(ord(ch) < 32 or ord(ch) == 127 or ch in _UNPORTABLE for ch in segment):
            return f"has segment '{segment}' with a control character or one of <>\"|?*"
        if _DEVICE_NAME.fullmatch(segment):
            return f"has segment '{segment}', a reserved device name"
    return None


def paths(ix: Index, report: Report) -> None:
    folded: dict[str, str] = {}
    for r, resource in enumerate(as_list(ix.doc.get("resources"))):
        path = as_dict(resource).get("path")
        if not isinstance(path, str):
            continue
        rid = as_dict(resource).get("id")
        problem = path_problem(path)
        if problem is not None:
            report.add(76, pointer("resources", r, "path"), f"resource '{rid}' path '{path}' {problem}")
            continue
        # Two different spellings of one file on case-insensitive or normalising file systems.
        key = unicodedata.normalize("NFC", path).casefold()
        other = folded.setdefault(key, path)
        if other != path:
            report.add(
                76,
                pointer("resources", r, "path"),
                f"resource '{rid}' path '{path}' collides with '{other}' when case and Unicode "
                "normalisation are ignored",
            )


def memory(ix: Index, report: Report) -> None:
    for r, resource in enumerate(as_list(ix.doc.get("resources"))):
        resource = as_dict(resource)
        if resource.get("purpose") == "session_memory" and "provenance" not in resource:
            report.add(
                77,
                pointer("resources", r),
                f"session_memory resource '{resource.get('id')}' needs provenance saying where the memory came from",
            )
