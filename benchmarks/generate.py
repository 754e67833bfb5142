"""Deterministic generator of realistic, large agent-continuity exports (and ASIF documents
made from them by conversion), for the benchmarks in ``run.py``.

    python benchmarks/generate.py 1 10 100 200 --out benchmarks/data [--seed 7] [--asif] [--compact]

For each size S (in MB, 1 MB = 1_000_000 bytes) it writes ``continuity-<S>mb.json``: one
coding-agent session of roughly S MB whose runs alternate between the two tool-use dialects
seen in the corpus (Anthropic content blocks -- thinking / text / tool_use / tool_result -- as in
corpus/continuity/03, and OpenAI chat messages with ``tool_calls`` / ``tool_call_id`` as in 04),
with run/tool events, forks (branches with ``parent_branch_id``, some forked from forks),
summary checkpoints at a message or event of their branch, native states and artifacts (one per
file the agent creates, with the real SHA-256 and size of the created text).

With ``--dense`` it writes the record-dense corpus instead, ``dense-continuity-<S>mb.json``
(and ``dense-asif-<S>mb.json``): the same session shape with one-line texts, so that about
1,250 short messages make a compact MB (60,000 messages are about 48 MB) and per-record work, not
text, sets the pace; seed 11 unless ``--seed`` says otherwise.

With ``--asif`` it also writes ``asif-<S>mb.json``: an ASIF 0.4 session of roughly S MB, made by
converting (validated) a continuity export generated with the same seed and scaled so that the
*ASIF* file is about S MB (ASIF is larger than its source: per-record losses, provenance, ...).

The output is a pure function of (seed, size, --compact): same arguments, same bytes. Files are
indented with 2 spaces like the corpus (``--compact`` for one line). Data never goes in git:
``benchmarks/data/`` is ignored, or use a folder under /tmp.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
import time
from pathlib import Path
from typing import Any

import msgspec

MB = 1_000_000
_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

_WORDS = (
    "the test parser fails because timezone offset module function returns value instead of expected list "
    "config loader reads environment variable default path cache entry is stale after restart so we retry "
    "request handler raises error when payload missing field schema migration adds column index on table "
    "build step compiles assets then uploads bundle checksum mismatch between local and remote artifact "
    "dependency version pinned older release breaks import fixture creates temporary directory cleanup "
    "runs after each case coverage report shows branch not exercised refactor extracts helper rename "
    "variable clarify intent add docstring update changelog bump minor version run linter format code"
).split()
_TOOLS_ANTHROPIC = ("bash", "str_replace_based_edit_tool", "web_search", "read_file")
_TOOLS_OPENAI = ("run_shell", "search_code", "get_file", "write_file", "search_papers")
_PATHS = ("src/app/config.py", "src/app/loader.py", "src/app/handlers.py", "tests/test_loader.py",
          "tests/test_handlers.py", "migrations/0042_add_index.sql", "docs/usage.md", "scripts/build.sh",
          "src/app/cache.py", "src/app/schema.py", "pyproject.toml", "ingest/validate.py")
_MODELS_ANTHROPIC = ("claude-sonnet-4-5", "claude-opus-4-1")
_MODELS_OPENAI = ("gpt-4.1-2025-04-14", "o4-mini-2025-04-16")


class _Text:
    """Cheap deterministic text: sentences and code/output lines drawn from pools built once."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.sentences = [self._sentence() for _ in range(3000)]
        self.lines = [self._line(i) for i in range(3000)]

    def _sentence(self) -> str:
        words = self.rng.choices(_WORDS, k=self.rng.randint(6, 22))
        s = " ".join(words)
        if self.rng.random() < 0.15:
            s += f" (see `{self.rng.choice(_PATHS)}` line {self.rng.randint(1, 900)})"
        if self.rng.random() < 0.05:
            s += " — naïve café ✓ 日本語 ok"  # some non-ASCII, as real transcripts have
        return s[0].upper() + s[1:] + "."

    def _line(self, i: int) -> str:
        r = self.rng.random()
        if r < 0.4:
            return f"{i % 999 + 1:6d}\t    {' '.join(self.rng.choices(_WORDS, k=self.rng.randint(2, 9)))}"
        if r < 0.7:
            return f"{self.rng.choice(_PATHS)}:{self.rng.randint(1, 500)}: {' '.join(self.rng.choices(_WORDS, k=6))}"
        if r < 0.85:
            return f'    {{"{self.rng.choice(_WORDS)}": {self.rng.randint(0, 10**6)}, "ok": true}}'
        return "PASSED tests/test_" + self.rng.choice(_WORDS) + ".py::test_" + "_".join(self.rng.choices(_WORDS, k=3))

    def prose(self, lo: int, hi: int) -> str:
        return " ".join(self.rng.choices(self.sentences, k=self.rng.randint(lo, hi)))

    def output(self, lo: int, hi: int) -> str:
        return "\n".join(self.rng.choices(self.lines, k=self.rng.randint(lo, hi)))


class _Session:
    def __init__(self, seed: int, target: int) -> None:
        self.rng = random.Random(seed)
        self.text = _Text(self.rng)
        self.target = target
        self.sid = f"ses-bench-{seed}"
        self.t = 1767225600.0  # 2026-01-01T00:00:00Z
        self.size = 0  # running estimate of the encoded size
        self.msg_seq = self.evt_seq = 0
        self.n_run = self.n_cp = self.n_state = self.n_art = self.n_branch = 0
        self.main = "br-main"
        self.branches: list[dict[str, Any]] = [self._branch(self.main, None, "main", "active", {"default": True})]
        self.by_id = {self.main: self.branches[0]}
        self.messages: list[dict[str, Any]] = []
        self.events: list[dict[str, Any]] = []
        self.checkpoints: list[dict[str, Any]] = []
        self.native_states: list[dict[str, Any]] = []
        self.artifacts: list[dict[str, Any]] = []
        self.last_on: dict[str, str] = {}  # branch id -> id of its last record

    # -- helpers ---------------------------------------------------------------------------

    def _id(self, prefix: str, n: int = 24) -> str:
        return prefix + "".join(self.rng.choices(_ALNUM, k=n))

    def _now(self, lo: float = 0.5, hi: float = 20.0) -> str:
        self.t += self.rng.uniform(lo, hi)
        whole = int(self.t)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole))
        if self.rng.random() < 0.5:
            return f"{stamp}.{int((self.t - whole) * 1000):03d}Z"
        return stamp + "Z"

    def _add(self, coll: list[dict[str, Any]], rec: dict[str, Any]) -> dict[str, Any]:
        coll.append(rec)
        # compact size plus an allowance for 2-space indentation (measured on this generator's
        # records: about 1.12x); the final size is reported exactly
        self.size += len(msgspec.json.encode(rec))
        return rec

    def _branch(self, bid: str, parent: str | None, name: str, status: str, meta: dict) -> dict[str, Any]:
        now = self._now(0, 0)
        return {"branch_id": bid, "session_id": self.sid, "parent_branch_id": parent, "name": name,
                "status": status, "metadata": meta, "created_at": now, "updated_at": now}

    def message(self, branch: str, run: str | None, role: str, content: Any, text: str, **extra: Any) -> dict:
        self.msg_seq += 1
        rec: dict[str, Any] = {"message_id": f"msg-{self.msg_seq:07d}", "session_id": self.sid, "run_id": run,
                               "branch_id": branch, "role": role,
                               "status": "partial" if self.rng.random() < 0.01 else "complete"}
        if content is not None:
            rec["content_json"] = content
        rec["text_content"] = text
        rec.update(extra)
        if self.rng.random() < 0.05:
            rec["idempotency_key"] = self._id("idem-", 16)
        rec["sequence"] = self.msg_seq
        rec["created_at"] = self._now()
        self.last_on[branch] = rec["message_id"]
        return self._add(self.messages, rec)

    def event(self, branch: str, run: str | None, event_type: str, payload: dict[str, Any]) -> dict:
        self.evt_seq += 1
        rec = {"event_id": f"evt-{self.evt_seq:07d}", "session_id": self.sid, "run_id": run, "branch_id": branch,
               "sequence": self.evt_seq, "event_type": event_type, "payload": payload,
               "created_at": self._now(0.1, 2)}
        if self.rng.random() < 0.03:
            rec["sha256"] = hashlib.sha256(msgspec.json.encode(payload)).hexdigest()
        self.last_on[branch] = rec["event_id"]
        return self._add(self.events, rec)

    def artifact(self, branch: str, run: str, path: str, content: str) -> None:
        self.n_art += 1
        data = content.encode()
        rec = {"artifact_id": f"art-{self.n_art:06d}", "session_id": self.sid, "run_id": run, "branch_id": branch,
               "kind": "source" if path.endswith((".py", ".sql", ".sh")) else "document", "path": path,
               "sha256": hashlib.sha256(data).hexdigest() if self.rng.random() < 0.9 else None,
               "size_bytes": len(data), "metadata": {"lines": content.count("\n") + 1, "tool": "editor"},
               "created_at": self._now(0, 1)}
        self._add(self.artifacts, rec)

    def tool_work(self, name: str) -> tuple[dict[str, Any], str, bool, tuple[str, str] | None]:
        """(input, result text, is_error, created file) of one tool call."""
        created = None
        if name in ("bash", "run_shell"):
            args: dict[str, Any] = {"command": f"python -m pytest {self.rng.choice(_PATHS)} -x -q"}
            if self.rng.random() < 0.3:
                args["timeout"] = 120
        elif name in ("str_replace_based_edit_tool", "write_file") and self.rng.random() < 0.35:
            path = self.rng.choice(_PATHS)
            body = self.text.output(5, 60) + "\n"
            args = {"command": "create", "path": path, "file_text": body}
            created = (path, body)
        elif name == "str_replace_based_edit_tool":
            args = {"command": "str_replace", "path": self.rng.choice(_PATHS),
                    "old_str": self.text.output(1, 4), "new_str": self.text.output(1, 5)}
        else:
            args = {"query": self.text.prose(1, 1)[:80], "limit": self.rng.randint(3, 10)}
        error = self.rng.random() < 0.08
        result = ("Error: " + self.text.prose(1, 2)) if error else self.text.output(2, 120)
        if created and not error:
            result = f"File created successfully at: {created[0]}"
        return args, result, error, created if not error else None

    # -- one run (a user turn and the agent's tool loop) --------------------------------------

    def run(self, branch: str) -> None:
        self.n_run += 1
        run = f"run-{self.n_run:06d}"
        anthropic = self.n_run % 2 == 1  # the two dialects alternate run by run
        prompt = self.text.prose(1, 6)
        if anthropic:
            user = self.message(branch, None, "user", [{"type": "text", "text": prompt}], prompt)
            model = self.rng.choice(_MODELS_ANTHROPIC)
            self.event(branch, run, "run.started", {"model": model, "max_tokens": 8192, "trigger": "user_message",
                                                    "message_id": user["message_id"]})
        else:
            self.message(branch, None, "user", {"role": "user", "content": prompt}, prompt)
            model = self.rng.choice(_MODELS_OPENAI)
            self.event(branch, run, "run.started", {"model": model, "api": "chat.completions",
                                                    "tools": list(_TOOLS_OPENAI)})
        in_tok = out_tok = 0
        for _ in range(self.rng.randint(1, 6)):
            n_calls = 1 if self.rng.random() < 0.8 else 2
            names = [self.rng.choice(_TOOLS_ANTHROPIC if anthropic else _TOOLS_OPENAI) for _ in range(n_calls)]
            calls = [(self._id("toolu_01" if anthropic else "call_"), name, *self.tool_work(name)) for name in names]
            say = self.text.prose(1, 3)
            if anthropic:
                blocks: list[dict[str, Any]] = []
                if self.rng.random() < 0.5:
                    blocks.append({"type": "thinking", "thinking": self.text.prose(1, 5),
                                   "signature": self._id("Eq", 160)})
                blocks.append({"type": "text", "text": say})
                blocks += [{"type": "tool_use", "id": cid, "name": name, "input": args}
                           for cid, name, args, *_ in calls]
                self.message(branch, run, "assistant", blocks, say, provider_message_id=self._id("msg_01"))
            else:
                quiet = self.rng.random() < 0.5
                content = {"role": "assistant", "content": None if quiet else say,
                           "tool_calls": [{"id": cid, "type": "function",
                                           "function": {"name": name, "arguments": msgspec.json.encode(args).decode()}}
                                          for cid, name, args, *_ in calls]}
                self.message(branch, run, "assistant", content, "" if quiet else say,
                             provider_message_id=self._id("chatcmpl-", 29))
            for cid, name, _args, result, error, created in calls:
                key = "tool_use_id" if anthropic else "tool_call_id"
                self.event(branch, run, "tool.started", {key: cid, "name": name})
                if anthropic:
                    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": cid}
                    block["content"] = result if self.rng.random() < 0.7 else [{"type": "text", "text": result}]
                    if error or self.rng.random() < 0.5:
                        block["is_error"] = error
                    content = [block]
                else:
                    content = {"role": "tool", "tool_call_id": cid, "content": result}
                self.message(branch, run, "tool", content, result)
                done = {key: cid, "name": name, "duration_ms": self.rng.randint(3, 90_000)}
                if name in ("bash", "run_shell"):
                    done["exit_code"] = 1 if error else 0
                self.event(branch, run, "tool.finished", done)
                if created:
                    self.artifact(branch, run, *created)
            in_tok += self.rng.randint(1_000, 40_000)
            out_tok += self.rng.randint(50, 3_000)
        final = self.text.prose(1, 8)
        if anthropic:
            self.message(branch, run, "assistant", [{"type": "text", "text": final}], final,
                         provider_message_id=self._id("msg_01"))
            self.event(branch, run, "run.completed", {"usage": {"input_tokens": in_tok, "output_tokens": out_tok},
                                                      "stop_reason": "end_turn"})
        elif self.rng.random() < 0.1:  # a plain message: text_content only, no content_json
            self.message(branch, run, "assistant", None, final)
            self.event(branch, run, "run.completed", {"finish_reason": "stop"})
        else:
            self.message(branch, run, "assistant", {"role": "assistant", "content": final, "refusal": None}, final,
                         provider_message_id=self._id("chatcmpl-", 29))
            self.event(branch, run, "run.completed", {
                "finish_reason": "stop",
                "usage": {"prompt_tokens": in_tok, "completion_tokens": out_tok, "total_tokens": in_tok + out_tok}})
        self.by_id[branch]["updated_at"] = self.messages[-1]["created_at"]

    def checkpoint(self, branch: str) -> None:
        self.n_cp += 1
        files = sorted(set(self.rng.choices(_PATHS, k=3)))
        rec = {"checkpoint_id": f"cp-{self.n_cp:06d}", "session_id": self.sid, "branch_id": branch,
               "parent_event_id": self.last_on.get(branch),
               "summary": {"text": self.text.prose(3, 10), "open_tasks": [self.text.prose(1, 1)[:60]],
                           "files": files, "metrics": {"messages": self.msg_seq, "events": self.evt_seq}},
               "token_estimate": self.rng.randint(1_000, 150_000),
               "created_by": "compactor/v2" if self.rng.random() < 0.8 else None, "created_at": self._now(0, 2)}
        self._add(self.checkpoints, rec)

    def native_state(self) -> None:
        self.n_state += 1
        if self.n_state % 2:
            rec = {"state_id": f"ns-{self.n_state:06d}", "session_id": self.sid, "provider": "anthropic",
                   "kind": "prompt_cache", "payload": {"breakpoints": sorted(self.rng.sample(range(1, 400), 3)),
                                                       "cached_tokens": self.rng.randint(1_000, 90_000), "ttl_s": 300},
                   "portable": False, "created_at": self._now(0, 1)}
        else:
            rec = {"state_id": f"ns-{self.n_state:06d}", "session_id": self.sid, "provider": "agent-continuity",
                   "kind": "todo_list", "payload": [{"task": self.text.prose(1, 1)[:50], "done": self.rng.random() < .5}
                                                    for _ in range(self.rng.randint(2, 6))],
                   "portable": True, "created_at": self._now(0, 1)}
        self._add(self.native_states, rec)

    def fork(self) -> str:
        self.n_branch += 1
        forks = [b["branch_id"] for b in self.branches[1:]]
        parent = self.rng.choice(forks) if forks and self.rng.random() < 0.25 else self.main
        bid = f"br-fork-{self.n_branch:04d}"
        rec = self._branch(bid, parent, f"try-{self.rng.choice(_WORDS)}-{self.n_branch}",
                           self.rng.choice(("paused", "archived")),
                           {"forked_after_sequence": self.msg_seq, "reason": self.text.prose(1, 1)[:70]})
        self.branches.append(rec)
        self.by_id[bid] = rec
        self.size += len(msgspec.json.encode(rec))
        return bid

    # -- the whole export ---------------------------------------------------------------------

    def build(self) -> dict[str, Any]:
        budget = self.target / 1.12  # compact bytes that indent to about the target
        branch = self.main
        fork_left = 0
        while self.size < budget:
            if fork_left == 0:
                branch = self.main
                if self.n_run > 2 and self.rng.random() < 0.04:
                    branch, fork_left = self.fork(), self.rng.randint(1, 4)
            else:
                fork_left -= 1
            self.run(branch)
            if self.rng.random() < 0.08:
                self.checkpoint(branch)
            if self.rng.random() < 0.04:
                self.native_state()
        session = {"session_id": self.sid, "title": "Benchmark session: refactor the config loader and its tests",
                   "status": "active", "active_branch_id": self.main,
                   "metadata": {"agent": "coding-agent", "repo": {"url": "https://github.com/acme/app", "dirty": True},
                                "labels": ["benchmark", "synthetic"]}}
        return {"format": "agent-continuity-export", "session": session, "branches": self.branches,
                "messages": self.messages, "events": self.events, "checkpoints": self.checkpoints,
                "native_states": self.native_states, "artifacts": self.artifacts}


def continuity_export(size_bytes: int, seed: int = 7) -> dict[str, Any]:
    return _Session(seed, size_bytes).build()


def dense_export(size_bytes: int | None = None, seed: int = 11, messages: int | None = None, chars: int = 40,
                 compact: bool = False) -> dict[str, Any]:
    """A record-dense export: the session shape above (both dialects, forks, some from forks)
    with texts of at most ``chars`` characters (one line by default), so that records, not text,
    make its size; grown until it holds ``messages`` messages, or until it is about
    ``size_bytes`` indented, or compact with ``compact`` (short records indent to about 1.41x
    their compact size; 60,000 messages are about 48 MB compact)."""
    session = _Session(seed, 1 << 62)
    if chars > 40:  # texts of their usual length, cut
        prose, output = session.text.prose, session.text.output
        session.text.prose = lambda lo, hi: prose(lo, hi)[:chars]  # type: ignore[method-assign]
        session.text.output = lambda lo, hi: output(lo, hi)[:chars]  # type: ignore[method-assign]
    else:
        session.text.prose = lambda lo, hi: session.text._sentence()[:chars]  # type: ignore[method-assign]
        session.text.output = lambda lo, hi: session.text.lines[0][:chars]  # type: ignore[method-assign]
    session.target = 0
    # compact bytes (that indent to about the size)
    budget = (size_bytes if compact else size_bytes / 1.41) if size_bytes is not None else 0
    branch, fork_left = session.main, 0
    while (len(session.messages) < messages) if messages is not None else (session.size < budget):
        if fork_left == 0:
            branch = session.main
            if session.n_run > 2 and session.rng.random() < 0.04:
                branch, fork_left = session.fork(), session.rng.randint(1, 4)
        else:
            fork_left -= 1
        session.run(branch)
    return session.build()  # size already reached: adds the session and returns the records


def encode(doc: Any, compact: bool = False) -> bytes:
    data = msgspec.json.encode(doc)
    return (data if compact else msgspec.json.format(data, indent=2)) + b"\n"


def asif_document(size_bytes: int, seed: int = 7, compact: bool = False, dense: bool = False) -> bytes:
    """An ASIF document of about ``size_bytes``: a continuity export (record-dense with
    ``dense``) scaled by the measured expansion of conversion, then converted (with output
    validation)."""
    from asif_convert import Options, convert
    from asif_convert._limits import Limits

    export = dense_export if dense else continuity_export
    probe = encode(export(min(size_bytes, MB), seed), compact)
    grow = len(convert(probe, to="asif", compact=compact).output) / len(probe)
    source = encode(export(int(size_bytes / grow), seed), compact)
    limits = Limits(max_bytes=max(2 * len(source), Limits().max_bytes))  # a 1 GB input is above the default
    return convert(source, to="asif", options=Options(validate=True), compact=compact, limits=limits).output


def _label(mb: float) -> str:
    return f"{mb:g}".replace(".", "_")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sizes", nargs="+", type=float, help="sizes in MB (1 MB = 10^6 bytes)")
    ap.add_argument("--out", default=str(Path(__file__).parent / "data"),
                    help="output folder (default: benchmarks/data)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--asif", action="store_true", help="also write asif-<S>mb.json (made by conversion)")
    ap.add_argument("--no-continuity", action="store_true", help="write only the ASIF documents")
    ap.add_argument("--compact", action="store_true", help="one-line JSON instead of 2-space indentation")
    ap.add_argument("--dense", action="store_true",
                    help="the record-dense corpus instead (dense-continuity-<S>mb.json, dense-asif-<S>mb.json)")
    args = ap.parse_args(argv)
    seed = args.seed if not args.dense or args.seed != 7 else 11  # each corpus keeps its own default seed
    prefix = "dense-" if args.dense else ""
    export = dense_export if args.dense else continuity_export
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for mb in args.sizes:
        started = time.perf_counter()
        if not args.no_continuity:
            path = out / f"{prefix}continuity-{_label(mb)}mb.json"
            data = encode(export(int(mb * MB), seed), args.compact)
            path.write_bytes(data)
            print(f"{path}: {len(data) / MB:.1f} MB in {time.perf_counter() - started:.1f}s", file=sys.stderr)
        if args.asif:
            started = time.perf_counter()
            path = out / f"{prefix}asif-{_label(mb)}mb.json"
            data = asif_document(int(mb * MB), seed, args.compact, dense=args.dense)
            path.write_bytes(data)
            print(f"{path}: {len(data) / MB:.1f} MB in {time.perf_counter() - started:.1f}s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
