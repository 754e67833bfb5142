"""Claude Code transcripts: a large transcript whole-process against the msgspec floor on the same
lines, and ``batch`` over many sessions in the client's own layout.

    python benchmarks/claude_code.py [--mb 50] [--reps 3] [--sessions 1000] [--instructions] [--json OUT]

- ``generate(path, mb)``: a deterministic transcript of the shapes the client writes (prompts,
  responses split into one record per block sharing ``message.id``, tool results with their
  ``toolUseResult``, progress, queue and last-prompt records), about ``mb`` MB.
- ``floor``: ``python -c`` that reads the file, decodes and encodes every line with msgspec and
  writes them: the least any reader of these lines does. ``floor, values held``: the same, every
  line decoded before any is encoded (``FLOOR_HELD``), as a converter of the whole session and
  the document floor must; the conversions are also given against it (``x_floor_held``).
- ``convert`` / ``convert+validate``: ``asif-convert convert FILE --to asif -o OUT --compact``
  with ``--no-validate``, and without it; ``back``: the ASIF output written as claude-code again
  (``--no-validate``). Each a fresh process under ``/usr/bin/time`` (wall, CPU, peak RSS),
  the median of ``--reps``, each ratio against the floor of its own repetition.
- ``continuity, standard export`` / ``continuity, the transcript's records per MB`` /
  ``continuity, the transcript's JSON values per MB``: the continuity reader
  (``from-continuity --compact --no-validate``) in the same repetitions, on the generator's
  standard export of the same size and on compact ones with as many records, or as many JSON
  values (``json_nodes``), per MB as the transcript (``continuity_twin``), each against the
  floor of its own file: the multiple a transcript's is to be set beside (``records_per_mb``
  and ``json_values_per_mb`` say each file's density).
- ``batch``: ``--sessions`` small sessions (a tenth with a ``subagents/`` folder) in
  ``projects/<project>/`` folders, ``asif-convert batch projects -o OUT --to asif -q --no-resume``
  at ``-j 1`` and ``-j 2``: files per second (best of ``--reps``).
- ``--instructions``: instead of times, the instructions each conversion and floor executes
  (valgrind; within 0.3 % from run to run at 50 MB): the multiples without the machine's noise.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import msgspec

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from generate import continuity_export, dense_export  # noqa: E402  (beside this file)
from generate import encode as encode_export  # noqa: E402
from process import FLOOR as DOCUMENT_FLOOR  # noqa: E402
from process import timed  # noqa: E402

MB = 1_000_000
FLOOR = ("import sys, msgspec\n"
         "d, e = msgspec.json.Decoder(), msgspec.json.Encoder()\n"
         "lines = [e.encode(d.decode(x)) for x in open(sys.argv[1], 'rb').read().split(b'\\n') if x.strip()]\n"
         "open(sys.argv[2], 'wb').write(b'\\n'.join(lines) + b'\\n')\n")
# The same work with every value held before any is encoded, as a converter of the whole session
# must (the parent tree and the branches need all records) and as the document floor does: the
# floor above encodes each line while its values are still in the CPU's caches and frees them.
FLOOR_HELD = ("import sys, msgspec\n"
              "d, e = msgspec.json.Decoder(), msgspec.json.Encoder()\n"
              "values = [d.decode(x) for x in open(sys.argv[1], 'rb').read().split(b'\\n') if x.strip()]\n"
              "open(sys.argv[2], 'wb').write(b'\\n'.join(map(e.encode, values)) + b'\\n')\n")
SESSION = "5e55i0n0-0000-4000-8000-000000000000".replace("i", "1")
_FILE = "import sys\n\n" + "".join(f"def f{i}(x):\n    return x * {i}  # line {i}\n\n" for i in range(60))


def _records(session: str, turns: int, cwd: str = "/home/dev/project") -> list[dict]:
    """``turns`` turns of a coding session: a prompt, a response of thinking, text and a Read call,
    its result (the file, twice: the text and the client's toolUseResult), a progress record, the
    final answer; a queue operation and a last-prompt record around each."""
    out: list[dict] = []
    parent = None
    n = 0

    def env(kind: str, **rest: object) -> dict:
        nonlocal parent, n
        n += 1
        uuid = f"{session[:24]}{n:012d}"
        rec = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": cwd, "sessionId": session,
               "version": "2.1.197", "gitBranch": "main", "type": kind, **rest, "uuid": uuid,
               "timestamp": f"2026-01-01T{n // 3600 % 24:02d}:{n // 60 % 60:02d}:{n % 60:02d}.000Z"}
        parent = uuid
        return rec

    usage = {"input_tokens": 1200, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 800,
             "output_tokens": 90, "service_tier": "standard"}
    for t in range(turns):
        out.append({"type": "queue-operation", "operation": "enqueue", "timestamp": "2026-01-01T00:00:00.000Z",
                    "sessionId": session, "content": f"step {t}"})
        out.append(env("user", message={"role": "user", "content": f"Please look at module {t} and fix f{t % 60}."}))
        mid, call = f"msg_{session[:8]}{t:08d}", f"toolu_{session[:8]}{t:08d}"
        for block in ({"type": "thinking", "thinking": f"Module {t} needs a look. " * 8, "signature": "EqQB" * 20},
                      {"type": "text", "text": f"I'll read module {t} first."},
                      {"type": "tool_use", "id": call, "name": "Read", "input": {"file_path": f"{cwd}/m{t}.py"}}):
            out.append(env("assistant", message={"id": mid, "type": "message", "role": "assistant",
                                                 "model": "claude-sonnet-4-5", "content": [block],
                                                 "stop_reason": None, "stop_sequence": None, "usage": usage},
                           requestId=f"req_{t}"))
        numbered = "".join(f"{i + 1}\t{line}\n" for i, line in enumerate(_FILE.splitlines()))
        out.append(env("user", message={"role": "user", "content": [
            {"tool_use_id": call, "type": "tool_result", "content": numbered}]},
            toolUseResult={"type": "text", "file": {"filePath": f"{cwd}/m{t}.py", "content": _FILE,
                                                    "numLines": 180, "startLine": 1, "totalLines": 180}}))
        out.append(env("progress", data={"type": "hook_progress", "hookEvent": "PostToolUse", "hookName": "lint"},
                       toolUseID=call))
        out.append(env("assistant", message={"id": mid + "b", "type": "message", "role": "assistant",
                                             "model": "claude-sonnet-4-5",
                                             "content": [{"type": "text", "text": f"Fixed f{t % 60}."}],
                                             "stop_reason": "end_turn", "stop_sequence": None, "usage": usage}))
        out.append({"type": "last-prompt", "lastPrompt": f"step {t}", "leafUuid": parent, "sessionId": session})
    return out


def _write(path: Path, records: list[dict]) -> None:
    path.write_bytes(b"".join(json.dumps(r, separators=(",", ":")).encode() + b"\n" for r in records))


def generate(path: Path, mb: float) -> None:
    one = len(b"".join(json.dumps(r).encode() for r in _records(SESSION, 10))) / 10
    _write(path, _records(SESSION, max(1, int(mb * MB / one))))


def records_per_mb(path: Path) -> float:
    """A file's records per MB: a transcript's lines, an export's list items (messages, events...)."""
    data = path.read_bytes()
    if path.suffix == ".jsonl":
        count = sum(1 for line in data.split(b"\n") if line.strip())
    else:
        count = sum(len(v) for v in json.loads(data).values() if isinstance(v, list))
    return count / (len(data) / MB)


def json_nodes(value: Any) -> int:
    """How many JSON values ``value`` holds, itself included, an object's keys counted as
    values: what decoding, walking and encoding it costs, each node one step."""
    count, stack = 0, [value]
    while stack:
        item = stack.pop()
        count += 1
        if type(item) is dict:
            count += len(item)
            stack.extend(item.values())
        elif type(item) is list:
            stack.extend(item)
    return count


def nodes_per_mb(path: Path) -> float:
    """A file's JSON values per MB (``json_nodes``): a transcript's lines', an export's."""
    data = path.read_bytes()
    values = [msgspec.json.decode(line) for line in data.split(b"\n") if line.strip()] \
        if path.suffix == ".jsonl" else [msgspec.json.decode(data)]
    return sum(map(json_nodes, values)) / (len(data) / MB)


def continuity_twin(path: Path, mb: float, density: float, nodes: bool = False) -> None:
    """A compact continuity export of about ``mb`` MB with ``density`` records per MB (a
    transcript's), or with ``nodes``, that many JSON values per MB (``json_nodes``): the
    generator's session with its texts cut to the length that gives that density, found on
    small samples. The continuity reader's multiple on it is the one to set beside the
    transcript's: a reader's multiple of the floor grows with the structure per byte (its work
    is per record and per value, the floor's mostly per byte)."""
    def density_of(chars: int) -> float:
        doc = dense_export(seed=11, messages=3000, chars=chars, compact=True)
        count = json_nodes(doc) if nodes else sum(len(v) for v in doc.values() if isinstance(v, list))
        return count / (len(encode_export(doc, True)) / MB)

    lo, hi = 40, 20_000  # text lengths: density falls as they grow
    while hi - lo > 8:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if density_of(mid) > density else (lo, mid)
    path.write_bytes(encode_export(dense_export(int(mb * MB), chars=hi, compact=True), True))


def generate_projects(root: Path, sessions: int) -> None:
    """``sessions`` sessions of a few turns, ten per project folder; every tenth with a subagent."""
    for k in range(sessions):
        sid = f"{k:08d}-0000-4000-8000-000000000000"
        folder = root / f"-home-dev-project-{k // 10}"
        folder.mkdir(parents=True, exist_ok=True)
        _write(folder / f"{sid}.jsonl", _records(sid, 3))
        if k % 10 == 0:
            (folder / sid / "subagents").mkdir(parents=True)
            _write(folder / sid / "subagents" / "agent-a1.jsonl",
                   [dict(r, isSidechain=True, agentId="a1") for r in _records(sid[:9] + "a", 1)])


def _floor(code: str, source: Path, out: Path | str) -> list[str]:
    return [sys.executable, "-c", code, str(source), str(out)]


def _to_asif(cli: str, path: Path, out: Path | str) -> list[str]:
    """The transcript's conversion the target is about."""
    return [cli, "convert", str(path), "--to", "asif", "-o", str(out), "--compact", "--no-validate"]


def _from_continuity(cli: str, export: Path, out: Path | str) -> list[str]:
    return [cli, "from-continuity", str(export), "-o", str(out), "--compact", "--no-validate"]


def _ratios(got: list[dict], floors: list[dict], key: str) -> list[float]:
    """Each repetition's figure ``key`` over its floor's in the same repetition."""
    return [r[key] / f[key] for r, f in zip(got, floors, strict=True)]


def large(cli: str, path: Path, reps: int, beside: dict[str, Path]) -> dict:
    """The transcript's conversions, and the continuity reader on each export of ``beside``, in
    every repetition, each against the floor of its own file in that repetition."""
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        asif, back, floor = Path(tmp) / "o.asif.json", Path(tmp) / "o.jsonl", Path(tmp) / "floor"
        runs: dict[str, list[dict]] = {k: [] for k in ("floor", "floor, values held", "convert", "convert+validate",
                                                       "back")}
        for name in beside:
            runs[f"{name} floor"], runs[name] = [], []
        for _ in range(reps):
            runs["floor"].append(timed(_floor(FLOOR, path, floor)))
            runs["floor, values held"].append(timed(_floor(FLOOR_HELD, path, floor)))
            runs["convert"].append(timed(_to_asif(cli, path, asif)))
            runs["convert+validate"].append(timed([cli, "convert", str(path), "--to", "asif", "-o", str(asif),
                                                   "--compact"]))
            runs["back"].append(timed([cli, "convert", str(asif), "--to", "claude-code", "-o", str(back),
                                       "--no-validate"]))
            for name, export in beside.items():
                runs[f"{name} floor"].append(timed(_floor(DOCUMENT_FLOOR, export, floor)))
                runs[name].append(timed(_from_continuity(cli, export, asif)))
        out["exact"] = back.read_bytes() == path.read_bytes()
    density = {source: round(records_per_mb(source)) for source in (path, *beside.values())}
    values = {source: round(nodes_per_mb(source)) for source in (path, *beside.values())}
    for name, got in runs.items():
        source = beside.get(name.removesuffix(" floor"), path)
        floors = runs[f"{name.removesuffix(' floor')} floor"] if source is not path else runs["floor"]
        ratios, cpu = _ratios(got, floors, "wall"), _ratios(got, floors, "cpu")
        out[name] = {"wall": statistics.median(r["wall"] for r in got), "x_floor": statistics.median(ratios),
                     "cpu": statistics.median(r["cpu"] for r in got), "cpu_x_floor": statistics.median(cpu),
                     "rss_x_input": statistics.median(r["rss_kib"] * 1024 / source.stat().st_size for r in got),
                     "records_per_mb": density[source], "json_values_per_mb": values[source],
                     "ratios": [round(r, 2) for r in ratios]}
        if source is path and not name.startswith("floor"):  # (the transcript's, also against the held floor)
            held = runs["floor, values held"]
            out[name]["x_floor_held"] = statistics.median(_ratios(got, held, "wall"))
            out[name]["cpu_x_floor_held"] = statistics.median(_ratios(got, held, "cpu"))
    return out


def instructions(cli: str, path: Path, beside: dict[str, Path]) -> dict:
    """Instructions executed (valgrind's count: within 0.3 % from run to run at 50 MB, where
    times on a shared machine move by 10 % and more) by the transcript's conversion and each
    floor of its lines, and by the continuity reader and the floor of each export; the
    multiples of each."""
    def count(cmd: list[str]) -> int:
        with tempfile.TemporaryDirectory() as tmp:  # (each output, named "o", is written there)
            got = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
                                  *cmd], capture_output=True, text=True, cwd=tmp)
        found = re.search(r"I\s+refs:\s+([\d,]+)", got.stderr)  # (valgrind 3.21 writes "I refs:")
        if got.returncode != 0 or found is None:
            raise RuntimeError(f"{' '.join(cmd)} under valgrind failed ({got.returncode}):\n{got.stderr[-2000:]}")
        return int(found.group(1).replace(",", ""))
    path = path.resolve()
    floor, held = count(_floor(FLOOR, path, "o")), count(_floor(FLOOR_HELD, path, "o"))
    convert = count(_to_asif(cli, path, "o"))
    out: dict[str, Any] = {"convert": {"instructions": convert, "x_floor": convert / floor,
                                       "x_floor_held": convert / held, "floor": floor, "floor, values held": held,
                                       "input_bytes": path.stat().st_size}}
    for name, export in beside.items():
        doc_floor = count(_floor(DOCUMENT_FLOOR, export.resolve(), "o"))
        reader = count(_from_continuity(cli, export.resolve(), "o"))
        out[name] = {"instructions": reader, "x_floor": reader / doc_floor, "floor": doc_floor,
                     "input_bytes": export.stat().st_size}
    return out


def batch(cli: str, sessions: int, reps: int, workers: list[int]) -> dict:
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "projects"
        generate_projects(root, sessions)
        for j in workers:
            best = min(_batch_once(cli, root, Path(tmp) / f"out{j}", j) for _ in range(reps))
            out[f"-j {j}"] = {"seconds": best, "files_per_s": sessions / best}
        made = sorted((Path(tmp) / f"out{workers[0]}").rglob("*.asif.json"))
        out["outputs"] = len(made)
    return out


def _batch_once(cli: str, root: Path, outdir: Path, j: int) -> float:
    t0 = time.perf_counter()
    subprocess.run([cli, "batch", str(root), "-o", str(outdir), "--to", "asif", "-j", str(j), "-q", "--no-resume"],
                   check=True)
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=50)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--sessions", type=int, default=1000)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--data", default=str(HERE / "data"))
    ap.add_argument("--cli", default=shutil.which("asif-convert") or str(Path(sys.executable).parent / "asif-convert"))
    ap.add_argument("--json", help="also write the raw figures here")
    ap.add_argument("--instructions", action="store_true", help="instead of timing, count the instructions of "
                    "the conversions and floors (valgrind; a few minutes at 50 MB)")
    args = ap.parse_args(argv)
    if args.instructions and shutil.which("valgrind") is None:
        ap.error("--instructions counts with valgrind, which is not installed (apt-get install valgrind)")
    data = Path(args.data)
    data.mkdir(exist_ok=True)
    path = data / f"claude-code-{args.mb:g}mb.jsonl"
    if not path.exists():
        generate(path, args.mb)
    beside = {"continuity, standard export": data / f"continuity-{args.mb:g}mb.json",
              "continuity, the transcript's records per MB": data / f"continuity-twin-{args.mb:g}mb.json",
              "continuity, the transcript's JSON values per MB": data / f"continuity-node-twin-{args.mb:g}mb.json"}
    if not beside["continuity, standard export"].exists():
        beside["continuity, standard export"].write_bytes(encode_export(continuity_export(int(args.mb * MB))))
    if not beside["continuity, the transcript's records per MB"].exists():
        continuity_twin(beside["continuity, the transcript's records per MB"], args.mb, records_per_mb(path))
    if not beside["continuity, the transcript's JSON values per MB"].exists():
        continuity_twin(beside["continuity, the transcript's JSON values per MB"], args.mb, nodes_per_mb(path),
                        nodes=True)
    figures: dict[str, Any] = {"input_bytes": path.stat().st_size}
    if args.instructions:
        figures["instructions"] = instructions(args.cli, path, beside)
    else:
        figures.update(large=large(args.cli, path, args.reps, beside),
                       batch=batch(args.cli, args.sessions, args.reps, args.workers), sessions=args.sessions,
                       cpus=os.cpu_count())
    print(json.dumps(figures, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
