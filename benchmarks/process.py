"""Whole-process benchmark: the ``asif-convert`` command against a ``python -c`` msgspec floor.

    python benchmarks/process.py --sizes 10 [--corpora standard,dense] [--reps 3] [--json OUT]

What a user sees: each measurement is a fresh process run under ``/usr/bin/time -f "%e %U %S %M"``
(wall seconds, user and system CPU seconds, peak resident set in KiB), imports and start-up
included. For every input file and repetition, in this order, back to back:

- ``floor``: ``python -c`` that reads the file, ``msgspec.json.decode`` + ``encode``, and
  writes the bytes to a file;
- ``convert``: ``asif-convert from-continuity|to-continuity FILE -o OUT --compact --no-validate``
  (input limits and input validation on, as always; output validation off);
- ``convert+validate``: the same without ``--no-validate``;
- ``trusted`` (with ``--trusted``): ``convert`` with ``--trusted-input``;
- ``baseline`` (with ``--baseline DIR``): ``convert`` run from another checkout (an earlier
  commit, say), in the same repetition as the rest: a before/after pair under the same load;
  and ``baseline+validate``, its ``convert+validate``, unless ``--no-validate-only``.

Each conversion's ratio is taken against the floor of its own repetition (seconds apart, so the
machine's drift moves both), and the median over repetitions is reported; RSS is the median
peak over the input file size, with the floor's beside it. Inputs are the generator's files
(``generate.py``; ``dense-`` for the record-dense corpus), made when missing.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
MB = 1_000_000
FLOOR = ("import sys, msgspec\n"
         "data = open(sys.argv[1], 'rb').read()\n"
         "open(sys.argv[2], 'wb').write(msgspec.json.encode(msgspec.json.decode(data)))\n")
COMMANDS = {"from-continuity": ("continuity", "from-continuity"), "to-continuity": ("asif", "to-continuity")}


def _label(mb: float) -> str:
    return f"{mb:g}".replace(".", "_")


def timed(cmd: list[str], env: dict[str, str] | None = None) -> dict[str, float]:
    with tempfile.NamedTemporaryFile("r", suffix=".time") as fh:
        proc = subprocess.run(["/usr/bin/time", "-o", fh.name, "-f", "%e %U %S %M", *cmd],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
        wall, user, system, rss = fh.read().split()[-4:]
    return {"wall": float(wall), "cpu": float(user) + float(system), "rss_kib": int(rss)}


def ensure(path: Path, mb: float, dense: bool) -> None:
    if path.exists():
        return
    cmd = [sys.executable, str(HERE / "generate.py"), f"{mb:g}", "--out", str(path.parent)]
    cmd += ["--dense"] if dense else []
    cmd += ["--asif", "--no-continuity"] if path.name.removeprefix("dense-").startswith("asif") else []
    print("generating:", " ".join(cmd[1:]), file=sys.stderr)
    subprocess.run(cmd, check=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", nargs="+", type=float, default=[10], help="MB")
    ap.add_argument("--corpora", default="standard,dense")
    ap.add_argument("--directions", default="from-continuity,to-continuity")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--no-validate-only", action="store_true", help="skip convert+validate")
    ap.add_argument("--trusted", action="store_true", help="also time --trusted-input")
    ap.add_argument("--data", default=str(HERE / "data"))
    ap.add_argument("--cli", default=shutil.which("asif-convert") or str(Path(sys.executable).parent / "asif-convert"))
    ap.add_argument("--json", help="also write the raw figures here")
    ap.add_argument("--src", help="run the command from this checkout's src/ (a copy with src/, schemas/, "
                                  "mappings/, e.g. `git archive HEAD src schemas mappings`), not the working tree")
    ap.add_argument("--baseline", help="also time `convert` (and `convert+validate`) from this checkout (as "
                                       "--src), in every repetition")
    ap.add_argument("--max-bytes", default=None, help="passed to the command (inputs above 512M need it)")
    args = ap.parse_args(argv)
    env = _env(args.src)

    rows = []
    out = Path(tempfile.mkdtemp(prefix="asif-bench-"))
    try:
        for mb in args.sizes:
            for corpus in args.corpora.split(","):
                for direction in args.directions.split(","):
                    source, command = COMMANDS[direction]
                    prefix = "dense-" if corpus == "dense" else ""
                    path = Path(args.data) / f"{prefix}{source}-{_label(mb)}mb.json"
                    ensure(path, mb, corpus == "dense")
                    configs = {"convert": (["--no-validate"], env)}
                    if not args.no_validate_only:
                        configs["convert+validate"] = ([], env)
                    if args.trusted:
                        configs["trusted"] = (["--no-validate", "--trusted-input"], env)
                    if args.baseline:
                        configs["baseline"] = (["--no-validate"], _env(args.baseline))
                        if not args.no_validate_only:
                            configs["baseline+validate"] = ([], _env(args.baseline))
                    runs: dict[str, list[dict[str, float]]] = {"floor": [], **{c: [] for c in configs}}
                    for _ in range(args.reps):
                        runs["floor"].append(timed([sys.executable, "-c", FLOOR, str(path), str(out / "floor.json")]))
                        for config, (extra, config_env) in configs.items():
                            cmd = [args.cli, command, str(path), "-o", str(out / "out.json"), "--compact", *extra]
                            if args.max_bytes:
                                cmd += ["--max-bytes", args.max_bytes]
                            runs[config].append(timed(cmd, config_env))
                    size = path.stat().st_size
                    floor = runs["floor"]
                    row = {"corpus": corpus, "direction": direction, "mb": mb, "size": size,
                           "floor_wall": statistics.median(r["wall"] for r in floor),
                           "floor_rss": statistics.median(r["rss_kib"] for r in floor) * 1024 / size, "runs": runs}
                    for config in configs:
                        pairs = list(zip(runs[config], floor, strict=True))
                        row[config] = {
                            "wall": statistics.median(r["wall"] for r, _ in pairs),
                            "ratio": statistics.median(r["wall"] / f["wall"] for r, f in pairs),
                            "cpu_ratio": statistics.median(r["cpu"] / f["cpu"] for r, f in pairs),
                            "rss": statistics.median(r["rss_kib"] for r, _ in pairs) * 1024 / size,
                            "ratios": [round(r["wall"] / f["wall"], 2) for r, f in pairs],
                        }
                    rows.append(row)
                    print(line(row, configs), file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    print(table(rows))
    if args.json:
        Path(args.json).write_text(json.dumps({"argv": sys.argv[1:], "rows": rows}, indent=1))
    return 0


def _env(src: str | None) -> dict[str, str] | None:
    return {**os.environ, "PYTHONPATH": str(Path(src).resolve() / "src")} if src else None


def line(row: dict, configs: dict) -> str:
    parts = [f"{row['corpus']:8s} {row['direction']:15s} {row['size'] / MB:6.1f} MB floor {row['floor_wall']:.2f}s "
             f"rss {row['floor_rss']:.1f}x"]
    parts += [f"{c} {row[c]['wall']:.2f}s = {row[c]['ratio']:.2f}x {row[c]['ratios']} rss {row[c]['rss']:.1f}x"
              for c in configs]
    return " | ".join(parts)


def table(rows: list[dict]) -> str:
    configs = [c for c in ("convert", "convert+validate", "trusted", "baseline", "baseline+validate")
               if any(c in r for r in rows)]
    head = "| corpus | direction | file MB | floor s | floor RSS x input | " + " | ".join(
        f"{c} s | {c} x floor (wall) | x floor (CPU) | RSS x input" for c in configs) + " |"
    lines = [head, "|" + "---|" * (5 + 4 * len(configs))]
    for r in rows:
        cells = [r["corpus"], r["direction"], f"{r['size'] / MB:.1f}", f"{r['floor_wall']:.2f}",
                 f"{r['floor_rss']:.1f}"]
        for c in configs:
            got = r.get(c)
            cells += ([f"{got['wall']:.2f}", f"{got['ratio']:.2f}", f"{got['cpu_ratio']:.2f}", f"{got['rss']:.1f}"]
                      if got else ["", "", "", ""])
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
