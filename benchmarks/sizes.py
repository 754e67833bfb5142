"""Output sizes: how many bytes a conversion writes for its readers, and how many for itself.

    python benchmarks/sizes.py [--dense-messages 60000] [--bench-mb 10] [--json OUT]

Every size is of compact JSON (``msgspec.json.encode``), input and output alike, so formatting
never counts. Measured:

* continuity -> ASIF, on the corpus exports, on a benchmark export (``generate.py``, ``--bench-mb``
  MB) and on a record-dense export (``--dense-messages`` short messages, both dialects, forks):
  the output/input ratio; the share of the output held by ``losses``; the share held by the
  converter's own bookkeeping (every value under an ``agent-continuity/1`` key, anywhere);
* ASIF -> continuity, on the public ASIF examples: the output/input ratio.

The targets these figures are read against: ASIF <= 1.3x its input, losses <= 2 % of the
output, bookkeeping <= 8 % over the corpus exports, continuity <= 1.5x each public example.
Beside each ASIF ratio, ``bare`` is the ratio of the same document with no converter state and
no losses: the part of the output that ASIF's required fields alone cost for that input.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import msgspec

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(Path(__file__).parent))

import generate  # noqa: E402

from asif_convert import convert  # noqa: E402

NAMESPACE = "agent-continuity/1"


def compact(value: Any) -> int:
    return len(msgspec.json.encode(value))


def bookkeeping(value: Any, keys: bool = False) -> int:
    """Bytes of every value held under an ``agent-continuity/1`` key, at any depth; with
    ``keys``, the key itself too (its quotes, colon and comma)."""
    total = 0
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, sub in node.items():
                if key == NAMESPACE:
                    total += compact(sub) + (len(NAMESPACE) + 4 if keys else 0)
                else:
                    stack.append(sub)
        elif isinstance(node, list):
            stack.extend(node)
    return total


def bare(value: Any) -> Any:
    """``value`` without any ``agent-continuity/1`` key (and an ``extensions`` object left
    empty by that) and with no losses: what ASIF's own required shape costs for the input."""
    if isinstance(value, dict):
        out = {k: bare(v) for k, v in value.items() if k != NAMESPACE}
        if out.get("extensions") == {}:
            del out["extensions"]
        if "losses" in out and "asif_version" in out:
            out["losses"] = []
        return out
    if isinstance(value, list):
        return [bare(v) for v in value]
    return value


def to_asif(name: str, doc: Any) -> dict[str, Any]:
    data = msgspec.json.encode(doc)
    out = convert(data, to="asif", compact=True).document
    size = compact(out)
    return {"name": name, "input": len(data), "output": size, "ratio": size / len(data),
            "bare_ratio": compact(bare(out)) / len(data),
            "losses": compact(out.get("losses", [])), "losses_share": compact(out.get("losses", [])) / size,
            "bookkeeping": bookkeeping(out), "bookkeeping_share": bookkeeping(out) / size,
            "with_keys": bookkeeping(out, keys=True), "with_keys_share": bookkeeping(out, keys=True) / size,
            "loss_references": sum(len(loss.get("references", ())) for loss in out.get("losses", []))}


def to_continuity(name: str, doc: Any) -> dict[str, Any]:
    data = msgspec.json.encode(doc)
    size = compact(convert(data, to="continuity", compact=True).document)
    return {"name": name, "input": len(data), "output": size, "ratio": size / len(data)}


def dense_export(messages: int, seed: int = 11) -> dict[str, Any]:
    """A record-dense export (``generate.dense_export``) of ``messages`` short messages."""
    return generate.dense_export(seed=seed, messages=messages)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dense-messages", type=int, default=60_000)
    ap.add_argument("--bench-mb", type=float, default=10)
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args(argv)

    rows = [to_asif(p.stem, json.loads(p.read_bytes())) for p in sorted((ROOT / "corpus/continuity").glob("*.json"))]
    corpus = {"name": f"corpus ({len(rows)} exports)", **{k: sum(r[k] for r in rows) for k in
                                                ("input", "output", "losses", "bookkeeping", "with_keys",
                                                 "loss_references")},
              "bare_ratio": sum(r["bare_ratio"] * r["input"] for r in rows) / sum(r["input"] for r in rows)}
    corpus.update(ratio=corpus["output"] / corpus["input"], losses_share=corpus["losses"] / corpus["output"],
                  bookkeeping_share=corpus["bookkeeping"] / corpus["output"],
                  with_keys_share=corpus["with_keys"] / corpus["output"])
    big = []
    if args.bench_mb:
        big.append(to_asif(f"benchmark {args.bench_mb:g} MB", generate.continuity_export(int(args.bench_mb * 1e6))))
    if args.dense_messages:
        big.append(to_asif(f"dense {args.dense_messages} messages", dense_export(args.dense_messages)))
    back = [to_continuity(p.stem, json.loads(p.read_bytes())) for p in sorted((ROOT / "corpus/asif").glob("*.json"))]

    print("continuity -> ASIF (compact bytes)")
    print("(state: bytes of the values under agent-continuity/1; +keys: with the key itself;")
    print(" bare: the output/input ratio of the same document without any of it and without losses)")
    print(f"{'input':>40} {'in':>10} {'out':>10} {'ratio':>6} {'bare':>6} {'losses':>7} {'state':>7} {'+keys':>7} "
          f"{'refs':>7}")
    for r in [*rows, corpus, *big]:
        print(f"{r['name'][:40]:>40} {r['input']:>10} {r['output']:>10} {r['ratio']:>6.2f} {r['bare_ratio']:>6.2f} "
              f"{r['losses_share']:>7.1%} {r['bookkeeping_share']:>7.1%} {r['with_keys_share']:>7.1%} "
              f"{r['loss_references']:>7}")
    print("\nASIF -> continuity (compact bytes)")
    for r in back:
        print(f"{r['name'][:40]:>40} {r['input']:>10} {r['output']:>10} {r['ratio']:>6.2f}")
    print(f"{'max':>40} {'':>10} {'':>10} {max(r['ratio'] for r in back):>6.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps({"to_asif": [*rows, corpus, *big], "to_continuity": back}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
