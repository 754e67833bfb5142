"""The hand-off: any supported session, written where a coding agent looks for it, so that the
agent continues it.

* Codex CLI: ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`` (``CODEX_HOME``, else
  ``~/.codex``), resumed with ``codex resume <id>``;
* Claude Code: ``$CLAUDE_CONFIG_DIR/projects/<cwd, every non-alphanumeric character a
  hyphen>/<id>.jsonl`` (``CLAUDE_CONFIG_DIR``, else ``~/.claude``), resumed with
  ``claude --resume <id>`` inside that cwd.

The session gets a new id (a UUID derived from the input's bytes and the target, or the one the
caller gives), the file is never written over an existing one (an exclusive link of a finished
temporary file: whole or not at all), and the path stays inside the store. Past tool calls keep
their recorded names: both clients send calls to tools they lack as recorded (docs/handoff.md).
"""

from __future__ import annotations

import hashlib
import os
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from asif_convert import ir
from asif_convert._errors import OutputError, UsageError
from asif_convert._formats.claude_code import NAMESPACE as CLAUDE_NAMESPACE
from asif_convert._formats.codex import fresh
from asif_convert._formats.codex.reader import NAMESPACE as CODEX_NAMESPACE
from asif_convert._limits import Limits
from asif_convert._lines import encode_lines
from asif_convert._pipeline import read_session, writing_context, written_as
from asif_convert._registry import get
from asif_convert.plugin import Options

TARGETS = ("claude-code", "codex")
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


@dataclass(frozen=True)
class Handoff:
    target: str
    session_id: str
    path: Path  # where the session is (or, dry, would be) written
    cwd: Path
    command: str  # what continues it
    losses: list[ir.Loss]  # reading the input, then writing the target's file
    written: bool


def store(target: str, env: Mapping[str, str]) -> Path:
    """The target client's own folder, as the client finds it from its environment."""
    variable, default = ("CODEX_HOME", ".codex") if target == "codex" else ("CLAUDE_CONFIG_DIR", ".claude")
    if env.get(variable):
        return Path(env[variable])
    home = env.get("HOME")
    if not home:
        raise UsageError(f"cannot tell where {target} keeps its sessions: neither {variable} nor HOME is set")
    return Path(home) / default


def new_id(data: bytes, target: str) -> str:
    """A session id derived from the input's bytes and the target: the same hand-off twice names
    the same file, which is then refused rather than written twice."""
    digest = hashlib.sha256(data).hexdigest()
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"asif-convert:handoff:{target}:{digest}"))


def handoff(path: Path, target: str, *, cwd: Path, env: Mapping[str, str], session_id: str | None = None,
            dry_run: bool = False, limits: Limits | None = None, artifacts_root: Path | None = None) -> Handoff:
    """Write ``path``'s session as a new session of ``target`` in its store (found from ``env``),
    to be resumed in ``cwd``. ``artifacts_root``: the folder whose files the session embeds by
    path (the parts that show them carry them inline)."""
    if target not in TARGETS:
        raise UsageError(f"unknown target {target!r}; choose one of {', '.join(TARGETS)}")
    if session_id is not None and not _UUID.match(session_id):
        raise UsageError(f"session id {session_id!r} is not a lowercase UUID, which both clients require")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise OutputError(f"cannot read {path}: {exc.strerror or exc}") from None
    loaded = read_session(data, name=str(path), limits=limits)
    doc = loaded.document
    sid = session_id or new_id(data, target)
    cwd = Path(os.path.abspath(cwd))
    ctx, not_carried = writing_context(loaded, get(target), Options(artifacts_root=artifacts_root),
                                       limits or Limits())
    lines = written_as(str(path), _lines, doc, ctx, target, sid, cwd)
    root = store(target, env)
    where = _destination(root, target, sid, cwd, lines)
    command = f"cd {_quoted(cwd)} && " + (f"codex resume {sid}" if target == "codex" else f"claude --resume {sid}")
    if not dry_run:
        _write_new(root, where, encode_lines(lines, limits or Limits(), str(path)))
    return Handoff(target, sid, where, cwd, command, [*doc.losses, *ctx.losses(), *not_carried], not dry_run)


def _lines(doc: ir.Document, ctx: Any, target: str, sid: str, cwd: Path) -> list[Any]:
    """The target's lines for a new session ``sid``: always written as a new session (a session
    read from the target itself too), never as the file it was read from."""
    if target == "codex":
        return fresh.write(doc, ctx, session_id=sid, cwd=str(cwd))
    native = {k: v for k, v in doc.native.items() if k not in (CLAUDE_NAMESPACE, CODEX_NAMESPACE)}
    fresh_doc = msgspec.structs.replace(doc, session=msgspec.structs.replace(doc.session, id=sid), native=native)
    return list(get("claude-code").write(fresh_doc, ctx))


def _destination(root: Path, target: str, sid: str, cwd: Path, lines: list[Any]) -> Path:
    if target == "claude-code":
        return root / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(cwd)) / f"{sid}.jsonl"
    stamp = str(lines[0]["payload"]["timestamp"])  # the session's first time (fresh.write)
    day, time = stamp[:10], stamp[11:19].replace(":", "-")
    if not re.match(r"^\d{4}-\d{2}-\d{2}$", day) or not re.match(r"^\d{2}-\d{2}-\d{2}$", time):
        day, time = "1970-01-01", "00-00-00"
    return root / "sessions" / day.replace("-", "/") / f"rollout-{day}T{time}-{sid}.jsonl"


def _write_new(root: Path, where: Path, data: bytes) -> None:
    """``data`` at ``where`` inside ``root``, whole, never over an existing file; the folders on
    the way are made, none of them a link (so the file stays inside the store)."""
    if where.exists():
        raise OutputError(f"{where} already exists: a session with this id is there; nothing was written "
                          "(give another --session-id)")
    try:
        folder = root
        _folder(folder, parents=True)
        for step in where.parent.relative_to(root).parts:
            folder = folder / step
            if folder.is_symlink():
                raise OutputError(f"{folder} is a link: the session would leave {root}; nothing was written")
            _folder(folder)
        temp = where.with_name(f".{where.name}.{os.getpid()}.tmp")
        try:
            temp.write_bytes(data)
            os.link(temp, where)  # fails if the name exists: never written over
        except FileExistsError:
            raise OutputError(f"{where} already exists: nothing was written") from None
        finally:
            temp.unlink(missing_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot write the session under {root}: {exc.strerror or exc}; nothing was written") \
            from None


def _folder(path: Path, parents: bool = False) -> None:
    """``path`` made a folder, or refused when something else (a file) is in the way."""
    try:
        path.mkdir(parents=parents, exist_ok=True)
    except FileExistsError:  # (exist_ok: it exists and is no folder)
        raise OutputError(f"{path} is not a folder: the session cannot be written under it; "
                          "nothing was written") from None


def _quoted(path: Path) -> str:
    text = str(path)
    return text if re.match(r"^[A-Za-z0-9_./-]+$", text) else "'" + text.replace("'", "'\\''") + "'"
