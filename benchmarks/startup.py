"""Start-up: a whole ``asif-convert`` process on a small file, against a ``python -c`` floor.

    python benchmarks/startup.py [--reps 20] [--baseline DIR] [--json OUT]

What a user calling the command once per file pays. Every repetition runs, back to back:

- ``floor`` for each input: ``python -c`` that reads the file, ``msgspec.json.decode`` +
  ``encode``, and writes the bytes to a file (Python's start and msgspec's import included);
- ``from-continuity IN -o OUT`` on the continuity export and ``to-continuity IN -o OUT`` on
  the ASIF document, with the command's defaults (input and output validation, indented);
- ``--help`` (the group's list of commands);
- with ``--baseline DIR``, the same three from another checkout (a folder with ``src/``,
  ``schemas/``, ``mappings/``: ``git archive REV src schemas mappings | tar -x -C DIR``).

Each process is timed by the wall clock around it (fork and exec included, as for the floor).
A conversion's ratio is taken against the floor of the same repetition and input, seconds
apart, so the machine's drift moves both; the median over repetitions is reported, with the
median seconds. ``--help`` is reported in seconds (target: at most 0.2 s); the conversions
as multiples of the floor (target: at most 3x). Bytecode is written by one untimed run of
each command first, as an installed package has it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONTINUITY = ROOT / "corpus" / "continuity" / "14-mixed-everything.json"  # the largest bundled export
ASIF = ROOT / "corpus" / "asif" / "continuation-action-specific.session.json"  # 37 KB
FLOOR = ("import sys, msgspec\n"
         "data = open(sys.argv[1], 'rb').read()\n"
         "open(sys.argv[2], 'wb').write(msgspec.json.encode(msgspec.json.decode(data)))\n")
CLI = "from asif_convert._cli.app import run; run()"  # what the console script runs
HELP_TARGET_S = 0.2
RATIO_TARGET = 3.0


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system) of one process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{err.decode()[-2000:]}")
    return elapsed, usage.ru_utime + usage.ru_stime


def _env(src: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPATH": str(Path(src).resolve() / "src")} if src else env


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--continuity", type=Path, default=CONTINUITY)
    ap.add_argument("--asif", type=Path, default=ASIF)
    ap.add_argument("--src", help="run the command from this checkout's src/ (default: the installed one)")
    ap.add_argument("--baseline", help="also run every command from this checkout, in every repetition")
    ap.add_argument("--json", help="also write the raw figures here")
    args = ap.parse_args(argv)

    py = sys.executable
    out = Path(tempfile.mkdtemp(prefix="asif-startup-"))
    sides = {"": _env(args.src), **({"baseline ": _env(args.baseline)} if args.baseline else {})}
    commands = {
        "from-continuity": ["from-continuity", str(args.continuity), "-o", str(out / "o.asif.json")],
        "to-continuity": ["to-continuity", str(args.asif), "-o", str(out / "o.json")],
        "--help": ["--help"],
    }
    floors = {"from-continuity": args.continuity, "to-continuity": args.asif}
    for env in sides.values():  # bytecode, and a first look at the files
        for cmd in commands.values():
            timed([py, "-c", CLI, *cmd], env)
    runs: dict[str, list[tuple[float, float]]] = {}
    for _ in range(args.reps):
        for name, cmd in commands.items():
            if name in floors:
                runs.setdefault(f"floor {name}", []).append(
                    timed([py, "-c", FLOOR, str(floors[name]), str(out / "floor.json")], _env(None)))
            for side, env in sides.items():
                runs.setdefault(side + name, []).append(timed([py, "-c", CLI, *cmd], env))
    for path in out.iterdir():
        path.unlink()
    out.rmdir()

    print(f"{args.reps} repetitions; inputs: {args.continuity.name} ({args.continuity.stat().st_size / 1e3:.1f} kB), "
          f"{args.asif.name} ({args.asif.stat().st_size / 1e3:.1f} kB)")
    print("| command | median wall s | median x floor, wall (same repetition) | min-max | median CPU s "
          "| x floor, CPU | target (wall) |")
    print("|---|---:|---:|---:|---:|---:|---|")
    ok = True
    for name in commands:
        for side in sides:
            times = runs[side + name]
            wall, cpu = statistics.median(t for t, _ in times), statistics.median(c for _, c in times)
            if name in floors:
                pairs = list(zip(times, runs[f"floor {name}"], strict=True))
                ratios = [t / f for (t, _), (f, _) in pairs]
                ratio = statistics.median(ratios)
                met = ratio <= RATIO_TARGET
                shown, spread = f"{ratio:.2f}", f"{min(ratios):.2f}-{max(ratios):.2f}"
                cpu_ratio = f"{statistics.median(c / f for (_, c), (_, f) in pairs):.2f}"
                target = f"<= {RATIO_TARGET:g}x"
            else:
                met = wall <= HELP_TARGET_S
                shown = spread = cpu_ratio = ""
                target = f"<= {HELP_TARGET_S} s"
            ok = ok and (met or bool(side))
            verdict = ("met" if met else "NOT met") if not side else "(before)"
            print(f"| {side}{name} | {wall:.3f} | {shown} | {spread} | {cpu:.3f} | {cpu_ratio} | {target}: {verdict} |")
    for name, path in floors.items():
        floor = runs[f"floor {name}"]
        print(f"| floor {name} ({path.name}) | {statistics.median(t for t, _ in floor):.3f} | 1 | | "
              f"{statistics.median(c for _, c in floor):.3f} | 1 | |")
    if args.json:
        Path(args.json).write_text(json.dumps({"argv": sys.argv[1:], "runs": runs}, indent=1))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
