"""Whole-process benchmark of ``handoff``: a Claude Code transcript to Codex, and the rollout it
wrote back to Claude Code, against the msgspec floor of the same bytes.

    python benchmarks/handoff.py [--mb 50] [--reps 3] [--json OUT]

The transcript is made from the corpus's real Claude Code session (corpus/claude-code/tools/),
repeated with every uuid, message id and tool id renamed per copy and each copy's root chained
to the previous copy's last record, until it holds ``--mb`` MB: one long session, as a client
writes it. Each measurement is a fresh process under ``/usr/bin/time`` (wall seconds, peak RSS),
start-up included:

- ``floor``: ``python -c`` that decodes every line with msgspec, encodes it again and writes the
  lines (the least any reader and writer of these bytes does);
- ``handoff``: ``asif-convert handoff FILE --to codex|claude-code --cwd DIR`` with a temporary
  ``HOME`` (input read, converted, written into the agent's store).

The ratio is each hand-off's wall time over the floor of its own input in the same repetition;
the median over repetitions is reported, with peak RSS over the input's size.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import uuid
from pathlib import Path

from process import MB, timed

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SOURCE = next((ROOT / "corpus" / "claude-code" / "tools").glob("*.jsonl"))
FLOOR = ("import sys, msgspec\n"
         "dec, enc = msgspec.json.Decoder(), msgspec.json.Encoder()\n"
         "lines = [enc.encode(dec.decode(l)) for l in open(sys.argv[1], 'rb') if l.strip()]\n"
         "open(sys.argv[2], 'wb').write(b'\\n'.join(lines) + b'\\n')\n")


def transcript(path: Path, mb: float) -> Path:
    """A Claude Code transcript of ``mb`` MB (made once, kept under benchmarks/data/)."""
    if path.exists():
        return path
    lines = [line for line in SOURCE.read_text(encoding="utf-8").splitlines() if line.strip()]
    records = [json.loads(line) for line in lines]
    uuids = {r["uuid"] for r in records if isinstance(r.get("uuid"), str)}
    other = {m for line in lines for m in re.findall(r'"(toolu_[A-Za-z0-9_]+|msg_[A-Za-z0-9_]+)"', line)}
    pattern = re.compile("|".join(re.escape(i) for i in sorted(uuids | other, key=len, reverse=True)))
    roots = {r["uuid"] for r in records if r.get("parentUuid") is None and isinstance(r.get("uuid"), str)}
    last = next(r["uuid"] for r in reversed(records) if isinstance(r.get("uuid"), str))
    path.parent.mkdir(parents=True, exist_ok=True)
    written, copy, previous_last = 0, 0, None
    with path.open("w", encoding="utf-8") as out:
        while written < mb * MB:
            names = {i: str(uuid.uuid5(uuid.NAMESPACE_URL, f"{copy}:{i}")) if i in uuids else f"{i}_{copy}"
                     for i in uuids | other}
            for line in lines:
                record = json.loads(pattern.sub(lambda m, names=names: names[m.group()], line))
                if previous_last is not None and record.get("parentUuid") is None and \
                        any(names[root] == record.get("uuid") for root in roots):
                    record["parentUuid"] = previous_last
                text = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
                out.write(text)
                written += len(text.encode())
            previous_last, copy = names[last], copy + 1
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=50)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--data", default=str(HERE / "data"))
    ap.add_argument("--cli", default=shutil.which("asif-convert") or str(Path(sys.executable).parent / "asif-convert"))
    ap.add_argument("--json", help="also write the raw figures here")
    args = ap.parse_args(argv)
    source = transcript(Path(args.data) / f"claude-code-{args.mb:g}mb.jsonl", args.mb)
    runs: dict[str, list[dict[str, float]]] = {}
    for _ in range(args.reps):
        with tempfile.TemporaryDirectory() as tmp:
            home, project = Path(tmp) / "home", Path(tmp) / "project"
            project.mkdir()
            env = {"HOME": str(home), "PATH": "/usr/bin:/bin",
                   **({"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {})}
            leg_input = source
            for target in ("codex", "claude-code"):
                floor = timed([sys.executable, "-c", FLOOR, str(leg_input), str(Path(tmp) / "floor.jsonl")])
                run = timed([args.cli, "handoff", str(leg_input), "--to", target, "--cwd", str(project)], env=env)
                size = leg_input.stat().st_size
                runs.setdefault(target, []).append({**run, "floor": floor["wall"], "floor_rss_kib": floor["rss_kib"],
                                                    "ratio": run["wall"] / floor["wall"], "bytes": size})
                leg_input = next((home / ".codex" / "sessions").rglob("*.jsonl"))
    print(f"handoff of a {source.stat().st_size / MB:.1f} MB Claude Code transcript, {args.reps} reps (medians)")
    print("| leg | input MB | floor s | handoff s | ratio | peak RSS MB | RSS / input | floor RSS MB |")
    print("|---|---|---|---|---|---|---|---|")
    for target, rows in runs.items():
        med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
        name = "Claude Code → Codex" if target == "codex" else "Codex → Claude Code (the rollout written)"
        print(f"| {name} | {med['bytes'] / MB:.1f} | {med['floor']:.2f} | {med['wall']:.2f} | {med['ratio']:.1f}× "
              f"| {med['rss_kib'] / 1024:.0f} | {med['rss_kib'] * 1024 / med['bytes']:.1f}× "
              f"| {med['floor_rss_kib'] / 1024:.0f} |")
    if args.json:
        Path(args.json).write_text(json.dumps(runs, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
