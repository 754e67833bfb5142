"""Benchmark asif-convert against raw msgspec speed on large exports (not part of the test suite).

    python benchmarks/run.py --sizes 1 10 100 200 [--configs all] [--data benchmarks/data]
                             [--reps-small 5] [--json results.json] [--validation-max-mb 1000]

For each size S it uses (generating them first when missing, see generate.py)
``continuity-<S>mb.json`` and ``asif-<S>mb.json``, and times, each configuration in a *fresh
subprocess* (so caches, allocator state and peak memory of one never leak into another):

====================  ====================================================================
config                what is timed (inside the worker, after imports and a warm-up)
====================  ====================================================================
floor                 ``msgspec.json.decode`` + ``msgspec.json.encode`` of the input file
convert               ``convert(data, to=..., options=Options(validate=False), compact=True)``
                      (input validation -- schema + referential/semantic -- always runs)
convert+validate      the same with ``validate=True`` (output schema + semantic/referential)
schema-rs             jsonschema-rs ``is_valid`` of the decoded file against its own schema
                      (``validation.schemas._fast``: the fast path ``schema_problems`` takes)
semantic              ASIF file: ``check_semantics``; continuity file: ``referential_problems``
py-jsonschema         python-jsonschema ``iter_errors`` over the decoded file (the slow path
                      used only to explain an invalid document); files <= --pyjsonschema-max-mb
====================  ====================================================================

Directions: ``from-continuity`` converts continuity-S to ASIF; ``to-continuity`` converts
asif-S to continuity. The validation components are timed on the direction's input file: the
continuity schema and referential checks for ``from-continuity``; the ASIF schema and semantic
rules for ``to-continuity``, which ``convert`` runs on its input on every call. The ASIF file of
size S is about the size of from-continuity's output, so those rows also show what
``validate=True`` adds to from-continuity.

Timing: wall clock (``time.perf_counter``) and CPU time of the worker (``time.process_time``,
less sensitive to other load on a busy machine), each the median of ``--reps-small`` repetitions for files
under 50 MB, of ``--reps-large`` (default 1) above. The conversion is called with ``compact=True``
so that its encode matches the floor's; ``--indent`` times the library default (indented output,
one extra ``msgspec.json.format`` pass) instead.

Ratios: every repetition of a configuration is followed, in the same worker, by one floor call
on the same bytes, and the ratio of that pair is taken; the table reports the median of those
ratios. Machines here change speed from one minute to the next (by 30 % or more); a pair
measured seconds apart shares the weather, two processes minutes apart do not. The ``floor``
row is still run in its own process, for its memory and absolute time.

Memory: ``ru_maxrss`` of the worker process (Linux: KiB; the peak resident set over the whole
process life) read after the first repetition, minus its resident set (``VmRSS``) measured after
imports and the warm-up, just before the input file is read. So "peak extra" counts the input
bytes, the decoded document, the IR, the output and every temporary, and the ratio is peak
extra / input file size.

The table prints times, paired ratios to the floor, and
the memory ratio. ``--json`` also saves the raw numbers.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
MB = 1_000_000
CONFIGS = ("floor", "convert", "convert+validate", "schema-rs", "semantic", "py-jsonschema")
DIRECTIONS = {"from-continuity": ("continuity", "asif"), "to-continuity": ("asif", "continuity")}
WARMUP = HERE.parent / "corpus" / "continuity" / "14-mixed-everything.json"


# -- worker: one configuration on one file, in its own process --------------------------------

def _rss_kib() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def worker(config: str, path: str, target: str, reps: int, indent: bool) -> dict:
    import msgspec

    import asif_convert
    from asif_convert import Options, convert
    from asif_convert._validation import schemas
    from asif_convert._validation.continuity import referential_problems
    from asif_convert._validation.semantic import check_semantics

    kind = "asif" if Path(path).name.removeprefix("dense-").startswith("asif") else "continuity"
    schema = schemas.ASIF_SCHEMA if kind == "asif" else schemas.CONTINUITY_SCHEMA

    # warm-up: compile validators, load mapping tables, fill the codec's plan caches
    warm = WARMUP.read_bytes()
    asif_warm = convert(warm, to="asif").output
    convert(asif_warm, to="continuity")
    schemas._fast(schema)
    if config == "py-jsonschema":
        schemas._full(schema)
    gc.collect()
    baseline = _rss_kib()

    data = Path(path).read_bytes()
    doc = None
    if config in ("schema-rs", "semantic", "py-jsonschema"):
        doc = msgspec.json.decode(data)  # untimed: these time the validator alone

    def once() -> None:
        if config == "floor":
            msgspec.json.encode(msgspec.json.decode(data))
        elif config in ("convert", "convert+validate"):
            convert(data, to=target, options=Options(validate=config == "convert+validate"), compact=not indent)
        elif config == "schema-rs":
            assert schemas._fast(schema).is_valid(doc)
        elif config == "semantic":
            problems = check_semantics(doc) if kind == "asif" else referential_problems(doc)
            assert not [p for p in problems if p.severity == "error"], problems[:3]
        elif config == "py-jsonschema":
            assert next(schemas._full(schema).iter_errors(doc), None) is None
        else:
            raise SystemExit(f"unknown config {config!r}")

    def floor() -> None:
        msgspec.json.encode(msgspec.json.decode(data))

    # Each repetition times the configuration and then the floor, back to back: the ratio of the
    # pair is what is reported, so that a machine slowing down or speeding up between
    # processes moves both. Peak memory is read after the first configuration call, before any
    # floor call of this process could raise it.
    times, cpu, ratios, cpu_ratios = [], [], [], []
    peak = None
    for _ in range(reps):
        wall, spent = _timed(once)
        if peak is None:
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        times.append(wall)
        cpu.append(spent)
        if config != "floor":
            floor_wall, floor_cpu = _timed(floor)
            ratios.append(wall / floor_wall)
            cpu_ratios.append(spent / floor_cpu)
    out = {"package": str(Path(asif_convert.__file__).parent), "times": times, "median": statistics.median(times),
           "cpu_times": cpu, "cpu_median": statistics.median(cpu), "size": len(data),
           "baseline_kib": baseline, "peak_kib": peak, "extra_bytes": max(0, peak - baseline) * 1024}
    if ratios:
        out.update(ratios=ratios, ratio=statistics.median(ratios), cpu_ratios=cpu_ratios,
                   cpu_ratio=statistics.median(cpu_ratios))
    return out


def _timed(call) -> tuple[float, float]:
    started, started_cpu = time.perf_counter(), time.process_time()
    call()
    return time.perf_counter() - started, time.process_time() - started_cpu


# -- driver -----------------------------------------------------------------------------------

def _label(mb: float) -> str:
    return f"{mb:g}".replace(".", "_")


def _env(src: str | None) -> dict[str, str]:
    """The environment of every child: with ``--src``, that checkout's ``src/`` comes first."""
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(Path(src).resolve() / "src"), env.get("PYTHONPATH")) if p)
    return env


def ensure_files(sizes: list[float], data: Path, seed: int, src: str | None, prefix: str = "") -> None:
    for mb in sizes:
        need = [k for k in ("continuity", "asif") if not (data / f"{prefix}{k}-{_label(mb)}mb.json").exists()]
        if not need:
            continue
        cmd = [sys.executable, str(HERE / "generate.py"), f"{mb:g}", "--out", str(data)]
        cmd += ["--dense"] if prefix else ["--seed", str(seed)]
        if "asif" in need:
            cmd.append("--asif")
        if "continuity" not in need:
            cmd.append("--no-continuity")
        print("generating:", " ".join(cmd[1:]), file=sys.stderr)
        subprocess.run(cmd, check=True, env=_env(src))


def run_one(config: str, path: Path, target: str, reps: int, indent: bool, timeout: float,
            src: str | None) -> dict:
    cmd = [sys.executable, __file__, "--worker", config, str(path), "--target", target, "--reps", str(reps)]
    if indent:
        cmd.append("--indent")
    started = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=_env(src))
    if proc.returncode != 0:
        raise RuntimeError(f"{config} on {path.name} failed:\n{proc.stderr[-3000:]}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["wall"] = time.perf_counter() - started
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", nargs="+", type=float, default=[1, 10, 100, 200], help="MB")
    ap.add_argument("--configs", default="all", help=f"comma list of {', '.join(CONFIGS)} (floor always runs)")
    ap.add_argument("--directions", default="all", help="comma list of from-continuity, to-continuity")
    ap.add_argument("--data", default=str(HERE / "data"), help="folder of generated files (default benchmarks/data)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--dense", action="store_true", help="the record-dense corpus (dense-*.json, generate.py --dense)")
    ap.add_argument("--reps-small", type=int, default=5, help="repetitions (median) for files < 50 MB")
    ap.add_argument("--reps-large", type=int, default=1, help="repetitions for files >= 50 MB")
    ap.add_argument("--pyjsonschema-max-mb", type=float, default=10, help="run python-jsonschema up to this size")
    ap.add_argument("--validation-max-mb", type=float, default=float("inf"),
                    help="run convert+validate only up to this size (to bound the run time)")
    ap.add_argument("--indent", action="store_true", help="time conversions with indented output (library default)")
    ap.add_argument("--timeout", type=float, default=1800, help="per-configuration timeout, seconds")
    ap.add_argument("--json", help="also write the raw results here")
    ap.add_argument("--src", help="benchmark the asif-convert of this checkout (a folder with src/, schemas/, "
                                  "mappings/; e.g. a snapshot of a working tree) instead of the installed one")
    # internal: one configuration in a fresh process
    ap.add_argument("--worker", nargs=2, metavar=("CONFIG", "FILE"), help=argparse.SUPPRESS)
    ap.add_argument("--target", help=argparse.SUPPRESS)
    ap.add_argument("--reps", type=int, default=1, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.worker:
        print(json.dumps(worker(args.worker[0], args.worker[1], args.target, args.reps, args.indent)))
        return 0

    configs = list(CONFIGS) if args.configs == "all" else ["floor"] + [
        c for c in args.configs.split(",") if c and c != "floor"]
    unknown = set(configs) - set(CONFIGS)
    if unknown:
        ap.error(f"unknown configs: {', '.join(sorted(unknown))}")
    directions = list(DIRECTIONS) if args.directions == "all" else args.directions.split(",")
    data = Path(args.data)
    prefix = "dense-" if args.dense else ""
    ensure_files(args.sizes, data, args.seed, args.src, prefix)

    results = []
    for mb in args.sizes:
        for direction in directions:
            source, target = DIRECTIONS[direction]
            path = data / f"{prefix}{source}-{_label(mb)}mb.json"
            size = path.stat().st_size
            reps = args.reps_small if size < 50 * MB else args.reps_large
            for config in configs:
                if config == "py-jsonschema" and mb > args.pyjsonschema_max_mb:
                    continue
                if config == "convert+validate" and mb > args.validation_max_mb:
                    continue
                r = run_one(config, path, target, reps, args.indent, args.timeout, args.src)
                r.update(mb=mb, direction=direction, config=config, file=path.name, reps=reps)
                results.append(r)
                print(f"  {direction:16s} {mb:>5g} MB  {config:17s} {r['median']:9.3f}s cpu {r['cpu_median']:8.3f}s  "
                      f"peak+{r['extra_bytes'] / MB:8.1f} MB  (worker {r['wall']:.1f}s)", file=sys.stderr, flush=True)

    print(table(results))
    if args.json:
        Path(args.json).write_text(json.dumps({"argv": sys.argv[1:], "results": results}, indent=1))
    return 0


def table(results: list[dict]) -> str:
    lines = ["| direction | size | file MB | config | reps | wall (s) | wall × floor | CPU (s) | CPU × floor "
             "| peak extra MB | × input |",
             "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        wall = f"{r['ratio']:.1f}" if "ratio" in r else "1.0"
        cpu = f"{r['cpu_ratio']:.1f}" if "cpu_ratio" in r else "1.0"
        lines.append(f"| {r['direction']} | {r['mb']:g} MB | {r['size'] / MB:.1f} | {r['config']} | {r['reps']} | "
                     f"{r['median']:.3f} | {wall} | {r['cpu_median']:.3f} | {cpu} | {r['extra_bytes'] / MB:.1f} | "
                     f"{r['extra_bytes'] / r['size']:.1f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
