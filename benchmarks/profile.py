"""Profile one conversion: a pyinstrument call tree plus the time the cyclic garbage collector
took (measured with ``gc.callbacks``), and a flat top-N by own time.

    pip install pyinstrument          # into the venv, for your own use; not a project dependency
    python benchmarks/profile.py benchmarks/data/continuity-10mb.json --to asif [--validate] [--html out.html]

``--src`` profiles another checkout (a folder with src/, schemas/, mappings/), as in run.py.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file")
    ap.add_argument("--to", required=True, choices=("asif", "continuity"))
    ap.add_argument("--validate", action="store_true")
    ap.add_argument("--no-gc", action="store_true", help="disable the cyclic GC during the call (to compare)")
    ap.add_argument("--html", help="also write pyinstrument's HTML report here")
    ap.add_argument("--top", type=int, default=25, help="rows of the flat own-time table")
    ap.add_argument("--src", help="profile this checkout instead of the installed package")
    args = ap.parse_args(argv)
    if args.src:
        sys.path.insert(0, str(Path(args.src).resolve() / "src"))

    from pyinstrument import Profiler

    from asif_convert import Options, convert

    warm = (Path(__file__).resolve().parent.parent / "corpus" / "continuity" / "14-mixed-everything.json").read_bytes()
    convert(convert(warm, to="asif").output, to="continuity")
    data = Path(args.file).read_bytes()

    gc_time = [0.0]
    gc_runs = [0, 0, 0]
    mark = [0.0]

    def on_gc(phase: str, info: dict) -> None:
        if phase == "start":
            mark[0] = time.perf_counter()
        else:
            gc_time[0] += time.perf_counter() - mark[0]
            gc_runs[info["generation"]] += 1

    gc.collect()
    gc.callbacks.append(on_gc)
    if args.no_gc:
        gc.disable()
    profiler = Profiler(interval=0.001)
    profiler.start()
    started, cpu = time.perf_counter(), time.process_time()
    convert(data, to=args.to, options=Options(validate=args.validate), compact=True)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    profiler.stop()
    gc.callbacks.remove(on_gc)
    gc.enable()

    print(profiler.output_text(unicode=False, color=False))
    print(f"wall {wall:.3f}s  cpu {cpu:.3f}s  cyclic GC {gc_time[0]:.3f}s "
          f"({100 * gc_time[0] / wall:.0f}% of wall; collections gen0/1/2 = {gc_runs})")
    print(_flat(profiler, args.top))
    if args.html:
        Path(args.html).write_text(profiler.output_html())
    return 0


def _flat(profiler, top: int) -> str:
    """Own time per function (file:function), summed over the whole tree."""
    own: dict[str, float] = {}

    def label(frame) -> str:
        return f"{Path(frame.file_path_short or '<built-in>').as_posix()}:{frame.function}"

    def walk(frame) -> None:
        kids = frame.children
        if not kids or frame.function == "[self]":
            # pyinstrument keeps a function's own time in a synthetic "[self]" child
            target = frame.parent if frame.function == "[self]" and frame.parent else frame
            own[label(target)] = own.get(label(target), 0.0) + frame.time
            return
        for child in kids:
            walk(child)

    walk(profiler.last_session.root_frame())
    total = sum(own.values()) or 1.0
    rows = sorted(own.items(), key=lambda kv: -kv[1])[:top]
    return "own time, top functions:\n" + "\n".join(f"  {t:7.3f}s {100 * t / total:5.1f}%  {name}" for name, t in rows)


if __name__ == "__main__":
    sys.exit(main())
