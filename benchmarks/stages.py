"""Where one conversion's time goes, stage by stage, next to the floor of the same file.

    python benchmarks/stages.py benchmarks/data/continuity-10mb.json --to asif [--validate] [--reps 3]

Runs ``convert`` ``--reps`` times with a timer around each stage of the pipeline (and a few
parts of them) and prints the run with the shortest total: seconds and the multiple of the floor
(``msgspec.json.decode`` + ``encode`` of the same bytes, timed right after). Stages nest: a row's
time includes the rows that name it in "inside". Unlike ``profile.py`` it adds no per-call overhead
beyond the timed functions, so the figures add up to the real total.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# (module, attribute path, label, the label of the stage it runs inside, if any)
STAGES = (
    ("asif_convert._pipeline", "_read", "load", ""),
    ("asif_convert._limits", "_walk", "limits: depth, integers, strings", "load"),
    ("asif_convert._limits", "_may_have_duplicates", "limits: duplicate keys", "load"),
    ("asif_convert._formats.continuity.plugin", "ContinuityFormat.validate", "validate continuity", ""),
    ("asif_convert._formats.asif", "AsifFormat.validate", "validate ASIF", ""),
    ("asif_convert._formats.asif", "schema_problems", "ASIF schema (jsonschema-rs)", "validate ASIF"),
    ("asif_convert._formats.asif", "check_semantics", "ASIF semantic rules", "validate ASIF"),
    ("asif_convert._formats.continuity.plugin", "ContinuityFormat.read", "read continuity", ""),
    ("asif_convert._formats.asif", "AsifFormat.read", "read ASIF", ""),
    ("asif_convert._formats.asif", "AsifFormat.write", "write ASIF", ""),
    ("asif_convert._formats.asif", "AsifFormat.write_streamed", "write ASIF (all but the events)", ""),
    ("asif_convert._formats.continuity.plugin", "ContinuityFormat.write", "write continuity", ""),
    ("asif_convert._formats.continuity.writer", "write", "the export", "write continuity"),
    ("asif_convert._formats.continuity.plugin", "_diff", "residual diffs", "write continuity"),
    ("asif_convert._formats.continuity.plugin", "_plain_read", "continuity reader",
     "read continuity; write continuity (what the return trip reads)"),
    ("asif_convert._formats.continuity.reader", "canonical_digest", "capture digest", "continuity reader"),
    ("asif_convert._formats.continuity.reader", "_Reader._events", "messages and events", "continuity reader"),
    ("asif_convert._jsonio", "encode", "encode", ""),
    ("asif_convert._jsonio", "encode_streamed", "encode, a slice of events at a time", ""),
    ("asif_convert._jsonio", "check_output", "output limits", "encode, a slice of events at a time"),
    ("asif_convert._pipeline", "check_output", "output limits (whole output)", ""),
)


def _instrument(spent: dict[str, float]) -> None:
    for module_name, path, label, _ in STAGES:
        owner = importlib.import_module(module_name)
        *parents, name = path.split(".")
        for part in parents:
            owner = getattr(owner, part, None)
        original = getattr(owner, name, None)
        if original is None:  # renamed or gone in the checkout measured: its row stays empty
            print(f"note: no {module_name}.{path} to time", file=sys.stderr)
            continue

        def timed(*args, _original=original, _label=label, **kwargs):
            started = time.perf_counter()
            try:
                return _original(*args, **kwargs)
            finally:
                spent[_label] += time.perf_counter() - started

        setattr(owner, name, timed)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file")
    ap.add_argument("--to", required=True, choices=("asif", "continuity"))
    ap.add_argument("--validate", action="store_true", help="validate the output too")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--src", help="time this checkout (a folder with src/, schemas/, mappings/)")
    ap.add_argument("--gc", action="store_true", help="leave the cyclic GC on (the CLI turns it off)")
    args = ap.parse_args(argv)
    if args.src:
        sys.path.insert(0, str(Path(args.src).resolve() / "src"))

    import msgspec

    from asif_convert import Options, convert

    warm = (ROOT / "corpus" / "continuity" / "14-mixed-everything.json").read_bytes()
    convert(convert(warm, to="asif").output, to="continuity")
    spent: dict[str, float] = defaultdict(float)
    _instrument(spent)
    data = Path(args.file).read_bytes()

    best = None
    for _ in range(args.reps):
        spent.clear()
        gc.collect()
        if not args.gc:
            gc.disable()
        started = time.perf_counter()
        convert(data, to=args.to, options=Options(validate=args.validate), compact=True)
        total = time.perf_counter() - started
        gc.enable()
        started = time.perf_counter()
        msgspec.json.encode(msgspec.json.decode(data))
        floor = time.perf_counter() - started
        if best is None or total < best[0]:
            best = (total, floor, dict(spent))

    total, floor, stages = best
    print(f"{Path(args.file).name} -> {args.to}{' (validated)' if args.validate else ''}: "
          f"{total:.3f} s = {total / floor:.1f}x the floor ({floor:.3f} s)")
    print("| stage | inside | s | x floor |\n|---|---|---:|---:|")
    for _, _, label, parent in STAGES:
        if label in stages:
            print(f"| {label} | {parent} | {stages[label]:.3f} | {stages[label] / floor:.2f} |")
    top = sum(stages[label] for _, _, label, parent in STAGES if label in stages and not parent)
    print(f"| other (loss policy, releasing memory, ...) | | {total - top:.3f} | {(total - top) / floor:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
