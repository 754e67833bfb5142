"""What a conversion would cost without a part of its work: an upper bound on what making that
part cheaper can gain.

    python benchmarks/ablation.py benchmarks/data/dense-continuity-100mb.json [--reps 3] [--src CHECKOUT]

Converts the export to ASIF (no output validation, as the ≤ 3× target asks) with each part of
the reader's work left out in turn, alternated, and prints the best of ``--reps`` runs of each
next to the floor (``msgspec.json.decode`` + ``encode`` of the same bytes, in the same
process). An ablated run is not a valid conversion (its output says less); it is timed only:

- ``no dialect difference``: no message is rendered back and compared with its content_json;
- ``no dialects``: no content is split into parts, calls and results (every message read as
  text plus its content_json, as for content of no known dialect);
- ``trusted input``: ``--trusted-input`` (the input's value checks skipped; a real option).

``--src`` times another checkout (a folder with src/, schemas/, mappings/), compiled or not;
a compiled reader calls its own methods directly, so its parts cannot be left out: only the
full and trusted rows are timed then.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@contextmanager
def _replaced(owner: object, name: str, value: object) -> Iterator[None]:
    original = getattr(owner, name)
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, original)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--src", help="time this checkout (a folder with src/, schemas/, mappings/)")
    args = ap.parse_args(argv)
    if args.src:
        sys.path.insert(0, str(Path(args.src).resolve() / "src"))

    import msgspec

    from asif_convert import Limits, Options, convert
    from asif_convert._formats.continuity import reader

    data = Path(args.file).read_bytes()
    warm = (ROOT / "corpus" / "continuity" / "14-mixed-everything.json").read_bytes()
    convert(warm, to="asif")
    plain = Options(validate=False)

    def run(limits: Limits | None = None) -> None:
        convert(data, to="asif", options=plain, compact=True, limits=limits)

    def without(name: str, value: object) -> Callable[[], None]:
        def ablated() -> None:
            with _replaced(reader._Reader, name, value):
                run()
        return ablated

    variants: dict[str, Callable[[], None]] = {"full conversion": run}
    if str(reader.__file__).endswith(".py"):
        variants["no dialect difference"] = without("_difference", lambda *_: None)
        variants["no dialects"] = without("_split", lambda *_: None)
    variants["trusted input"] = lambda: run(Limits(trusted=True))
    best = dict.fromkeys(variants, float("inf"))
    floor = float("inf")
    for _ in range(args.reps):
        for label, variant in variants.items():
            gc.collect()
            gc.disable()  # as the command line runs
            started = time.perf_counter()
            variant()
            best[label] = min(best[label], time.perf_counter() - started)
            gc.enable()
        started = time.perf_counter()
        msgspec.json.encode(msgspec.json.decode(data))
        floor = min(floor, time.perf_counter() - started)

    print(f"{Path(args.file).name} -> asif, best of {args.reps}; floor {floor:.2f} s")
    print("| variant | s | × floor | saves |\n|---|---:|---:|---:|")
    for label, seconds in best.items():
        print(f"| {label} | {seconds:.2f} | {seconds / floor:.1f} | {best['full conversion'] - seconds:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
