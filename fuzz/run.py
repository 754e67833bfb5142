"""Run fuzz_convert.py for a wall-clock budget, restarting after each finding, and summarise.

    .venv/bin/python fuzz/run.py --minutes 30 [--work /tmp/asif-fuzz] [--max-len 262144]

libFuzzer stops at the first finding (and its -fork mode does not work with atheris), so this
runs it in a loop: each finding is kept in WORK/artifacts/ and the run resumes from the
corpus it has grown so far (WORK/corpus, seeded from corpus/continuity and corpus/asif). At the
end it prints the total executions, executions per second, corpus size and the findings.
Everything it writes is under WORK (never in the repository).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HARNESS = ROOT / "fuzz" / "fuzz_convert.py"
_RUNS = re.compile(r"^#(\d+)\s", re.MULTILINE)
_DONE = re.compile(r"Done (\d+) runs in (\d+) second")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=30.0)
    ap.add_argument("--work", type=Path, default=Path("/tmp/asif-fuzz"))
    ap.add_argument("--max-len", type=int, default=256 * 1024)
    ap.add_argument("--timeout", type=int, default=20, help="seconds per input before it counts as a hang")
    args = ap.parse_args(argv)

    corpus, artifacts, logs = (args.work / d for d in ("corpus", "artifacts", "logs"))
    for d in (corpus, artifacts, logs):
        d.mkdir(parents=True, exist_ok=True)
    seeds = sorted((ROOT / "corpus" / "continuity").glob("*.json")) + sorted((ROOT / "corpus" / "asif").glob("*.json"))
    for seed in seeds:
        target = corpus / f"seed-{seed.parent.name}-{seed.name}"
        if not target.exists():
            shutil.copyfile(seed, target)

    deadline = time.monotonic() + args.minutes * 60
    total_runs, segments = 0, 0
    started = time.monotonic()
    while (remaining := int(deadline - time.monotonic())) > 5:
        segments += 1
        log = logs / f"segment-{segments:03d}.log"
        cmd = [sys.executable, str(HARNESS), str(corpus), f"-max_total_time={remaining}", f"-max_len={args.max_len}",
               f"-timeout={args.timeout}", "-rss_limit_mb=3072", f"-artifact_prefix={artifacts}/",
               "-print_final_stats=1"]
        with log.open("wb") as fh:
            code = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, cwd=args.work).returncode
        text = log.read_text(errors="replace")
        done = _DONE.search(text)
        runs = int(done[1]) if done else max((int(n) for n in _RUNS.findall(text)), default=0)
        total_runs += runs
        print(f"segment {segments}: exit {code}, {runs} runs", flush=True)
        if runs == 0:
            time.sleep(10)  # the harness did not start (say, a source file mid-edit): do not spin
    elapsed = time.monotonic() - started
    findings = sorted(p.name for p in artifacts.iterdir())
    print(f"total: {total_runs} executions in {elapsed:.0f} s ({total_runs / max(elapsed, 1):.1f} exec/s), "
          f"{segments} segments, corpus {len(list(corpus.iterdir()))} files, {len(findings)} findings")
    for name in findings:
        print(f"  {artifacts / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
