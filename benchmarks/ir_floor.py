"""What the IR alone costs: the lower bound of any conversion through it, next to the floor.

    python benchmarks/ir_floor.py benchmarks/data/dense-continuity-100mb.json [--reps 3] [--src DIR]

In one process (no start-up), the median of ``--reps`` runs of each, on an agent-continuity export:

- ``floor``: ``msgspec.json.decode`` + ``encode`` of the file's bytes;
- ``ir``: decode, then one IR event per message and event record, built from the IR's own
  nodes (a message with its text part and its content_json as a structured part, or an
  extension holding the event's type and payload; the record's id, time and run; one shared
  provenance), and the list encoded by msgspec. No dialects, ledger, ordering, branches or
  native fields: less than any real conversion does, carrying the same content;
- ``ir+checks``: ``ir`` with the checks every conversion makes by default: the input's value
  checks (``check_value``: depth, integers, strings, duplicate keys), the continuity schema and
  references (``validate``), and the output's limits (``check_output``);
- ``convert``: ``asif_convert.convert(data, to="asif", compact=True)`` without output validation.

Prints seconds and multiples of the floor. ``ir+checks`` is what the design costs before it
does any of the work of a conversion.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--src", help="measure this checkout's src/ instead of the installed package")
    args = ap.parse_args(argv)
    if args.src:
        sys.path.insert(0, str(Path(args.src).resolve() / "src"))

    import msgspec

    from asif_convert import Options, convert, ir
    from asif_convert._formats.continuity.plugin import FORMAT as CONTINUITY
    from asif_convert._limits import Limits, check_output, check_value

    data = Path(args.file).read_bytes()
    limits = Limits(max_bytes=max(len(data), Limits().max_bytes))
    encode = msgspec.json.Encoder().encode
    provenance = ir.Provenance(mode="reported", producer="asif-convert")

    def build(doc: dict[str, Any]) -> list[ir.Event]:
        events = []
        for k, m in enumerate(doc["messages"]):
            parts: list[ir.Part] = [ir.TextPart(text=m["text_content"])]
            if "content_json" in m:
                parts.append(ir.StructuredPart(schema="content_json", value=m["content_json"]))
            events.append(ir.Event(id=m["message_id"], sequence=k, actor_id=m["role"], provenance=provenance,
                                   body=ir.Message(role=m["role"], parts=parts), time=m["created_at"],
                                   execution_id=m.get("run_id") or msgspec.UNSET))
        for k, e in enumerate(doc["events"], start=len(events)):
            value = {"event_type": e["event_type"], "payload": e["payload"]}
            events.append(ir.Event(id=e["event_id"], sequence=k, actor_id="runtime", provenance=provenance,
                                   body=ir.Extension(type="event", value=value, interpretation_required=False),
                                   time=e["created_at"], execution_id=e.get("run_id") or msgspec.UNSET))
        return events

    def floor() -> None:
        encode(msgspec.json.decode(data))

    def ir_only() -> None:
        encode(build(msgspec.json.decode(data)))

    def ir_checked() -> None:
        doc = msgspec.json.decode(data)
        check_value(data, doc, limits, args.file)
        if CONTINUITY.validate(doc):
            raise SystemExit(f"{args.file} is not a valid export")
        events = build(doc)
        check_output(encode(events), events, limits, args.file)

    def real() -> None:
        convert(data, to="asif", compact=True, limits=limits, options=Options(validate=False))

    runs: dict[str, Callable[[], None]] = {"floor": floor, "ir": ir_only, "ir+checks": ir_checked, "convert": real}
    times: dict[str, list[float]] = {name: [] for name in runs}
    gc.disable()  # as the command line runs a conversion
    for _ in range(args.reps):
        for name, run in runs.items():  # alternated, so the machine's drift moves every row
            started = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - started)
    base = statistics.median(times["floor"])
    print(f"{Path(args.file).name} ({len(data) / 1e6:.1f} MB), median of {args.reps}")
    print("| run | s | x floor |\n|---|---:|---:|")
    for name, spent in times.items():
        print(f"| {name} | {statistics.median(spent):.3f} | {statistics.median(spent) / base:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
