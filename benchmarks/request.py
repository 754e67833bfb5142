"""`request` for the last turn of a large session against `to-continuity` on it, and the floor
(raw msgspec decode + encode), each in a fresh subprocess: wall time and peak RSS.

    .venv/bin/python benchmarks/request.py --sizes 10 100
    .venv/bin/python benchmarks/request.py --sizes 10 --src /tmp/before   # another checkout (src/, schemas/, mappings/)

The input is the generated ASIF session (benchmarks/generate.py, through run.py's
``ensure_files``); "the last turn" is the active branch's history rendered for each provider
(the whole history the next model call takes). Results go to RESULTS.md by hand."""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from run import _env, _label, ensure_files  # noqa: E402

CONFIGS = ("floor", "to-continuity", "anthropic-messages", "openai-chat", "openai-responses", "google-genai")


def worker(config: str, path: str) -> dict[str, float]:
    import msgspec

    data = Path(path).read_bytes()
    started = time.perf_counter()
    if config == "floor":
        msgspec.json.encode(msgspec.json.decode(data))
    elif config == "to-continuity":
        from asif_convert import convert
        convert(data, to="continuity", compact=True)
    else:
        from asif_convert import Options, request
        from asif_convert._jsonio import encode
        encode(request(data, provider=config, branch="br-main", pending="drop",
                       options=Options(on_loss="ignore")).body)
    seconds = time.perf_counter() - started
    return {"seconds": seconds, "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=float, nargs="+", default=[10.0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--src", help="measure the asif-convert of this checkout (a folder with src/, schemas/, "
                        "mappings/), for a before and after of one working tree")
    parser.add_argument("--worker", nargs=2)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(*args.worker)))
        return 0
    data = HERE / "data"
    data.mkdir(exist_ok=True)
    ensure_files(args.sizes, data, 7, args.src)
    print("| size | config | median s | x floor | x to-continuity | peak MiB |\n|---|---|---|---|---|---|")
    for mb in args.sizes:
        path = data / f"asif-{_label(mb)}mb.json"
        runs: dict[str, list[dict[str, float]]] = {c: [] for c in CONFIGS}
        for _ in range(args.reps):  # alternated, so that a shared machine's load falls on all alike
            for config in CONFIGS:
                out = subprocess.run([sys.executable, __file__, "--worker", config, str(path)], check=True,
                                     capture_output=True, text=True, env=_env(args.src)).stdout
                runs[config].append(json.loads(out.strip().splitlines()[-1]))
        median = {c: sorted(r["seconds"] for r in rs)[len(rs) // 2] for c, rs in runs.items()}
        for config in CONFIGS:
            peak = max(r["peak_mib"] for r in runs[config])
            print(f"| {mb:g} MB | {config} | {median[config]:.2f} | {median[config] / median['floor']:.1f} | "
                  f"{median[config] / median['to-continuity']:.2f} | {peak:.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
