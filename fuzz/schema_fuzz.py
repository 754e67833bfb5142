"""Schema-driven fuzzing of both directions: documents drawn from the seed schemas themselves.

Continuity exports are drawn whole from the continuity schema (or a corpus export has some of
its values redrawn from it); ASIF sessions are corpus sessions with values redrawn from the ASIF
schema, optional members added from it, members dropped or records duplicated, or a session
drawn whole from the schema. Each case goes through ``convert`` with the default limits, as the
command line calls it, and must end as the command line would end with exit 0, 1 or 4, never 3
(nor any other exception). Every exit-0 output must pass its schema (ASIF: and the semantic
rules) and convert back to the input exactly (key sets, types, null vs absent).

    .venv/bin/python fuzz/schema_fuzz.py --profile deep            # 20,000 cases per direction
    .venv/bin/python fuzz/schema_fuzz.py --cases 500 --seed 7 --direction asif

See fuzz/README.md.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if __package__ in (None, ""):  # run as a script: import the generator beside it
    sys.path.insert(0, str(ROOT))

from asif_convert import ConversionError, convert  # noqa: E402
from asif_convert._registry import get  # noqa: E402
from asif_convert._validation.schemas import ASIF_SCHEMA, CONTINUITY_SCHEMA, load_schema  # noqa: E402
from fuzz.content_shapes import SHAPES  # noqa: E402
from fuzz.schema_draw import EDGE_STRINGS, SchemaDraw, canonical  # noqa: E402

PROFILES = {"ci": 150, "deep": 20_000}  # cases per direction
DIRECTIONS = ("continuity", "asif")  # the source format of a case
TARGET = {"continuity": "asif", "asif": "continuity"}
CORPUS = ROOT / "corpus"


def _json_files(*patterns: str) -> list[Any]:
    return [json.loads(p.read_bytes()) for pattern in patterns for p in sorted(CORPUS.glob(pattern))]


SEEDS = {"continuity": _json_files("continuity/*.json"),
         "asif": _json_files("asif/*.json", "golden/*.asif.json")}
# the free-form values of the corpus exports (content_json in provider dialects, payloads, ...):
# drawn with edge leaves wherever a schema says only "any JSON"
CONTENTS = [record[key] for doc in SEEDS["continuity"] for name in ("messages", "events", "checkpoints")
            for record in doc.get(name, []) for key in ("content_json", "payload", "summary") if key in record] \
    + SHAPES * 4  # (drawn as often as the corpus's own)


def _ids(rng: Any) -> list[str]:
    edge = rng.choice(["\U0001f600", "a/b", " ", "m1~event", "x" * 200, "\u00e9", "0", "main/call/0"])
    return ["s1", "main", "b2", "m1", "m2", "e1", "c1", "r1", "t1", edge]


def continuity_case(rng: Any) -> Any:
    """An export drawn from the continuity schema, or a corpus export with values redrawn from it."""
    pool = _ids(rng)
    draw = SchemaDraw(load_schema(CONTINUITY_SCHEMA), rng, pool, optional=rng.choice([0.0, 0.5, 1.0]),
                      contents=CONTENTS)
    if rng.random() < 0.25:
        doc = copy.deepcopy(rng.choice(SEEDS["continuity"]))
        _redraw(draw, doc, rng.randrange(1, 4))
        return doc
    doc = draw.value(draw.root)
    for message in doc["messages"]:  # provider content, where most of the mapping is
        if rng.random() < 0.6:
            message["content_json"] = draw.edged(copy.deepcopy(rng.choice(SHAPES)))
    session = doc["session"]["session_id"] if rng.random() < 0.9 else None
    for name in ("branches", "messages", "events", "checkpoints", "native_states", "artifacts"):
        for record in doc.get(name, []):
            if session is not None and rng.random() < 0.95:
                record["session_id"] = session
    return doc


def asif_case(rng: Any) -> Any:
    """A corpus session with values redrawn from the ASIF schema and records edited, or one drawn whole."""
    pool = _ids(rng)
    draw = SchemaDraw(load_schema(ASIF_SCHEMA), rng, pool, optional=rng.choice([0.0, 0.3, 1.0]),
                      contents=CONTENTS)
    if rng.random() < 0.25:
        return draw.value(draw.root)
    doc = copy.deepcopy(rng.choice(SEEDS["asif"]))
    for _ in range(rng.randrange(1, 4)):
        how = rng.choice(["redraw", "redraw", "fill", "drop", "duplicate", "re-id", "blank"])
        if how == "redraw":
            _redraw(draw, doc, 1)
        elif how == "fill":
            _fill(draw, doc)
        else:
            _edit(rng, doc, how, pool)
    return doc


def _paths(doc: Any) -> list[tuple[Any, ...]]:
    """Every path of ``doc``, in document order (the root's is ``()``)."""
    out: list[tuple[Any, ...]] = []
    stack: list[tuple[tuple[Any, ...], Any]] = [((), doc)]
    while stack:
        path, value = stack.pop()
        out.append(path)
        members = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        stack.extend(((*path, k), v) for k, v in reversed(list(members)))
    return out


def _parent(doc: Any, path: tuple[Any, ...]) -> Any:
    for step in path[:-1]:
        doc = doc[step]
    return doc


FIXED = {("format",), ("asif_version",)}  # what says which format a document is


def _redraw(draw: SchemaDraw, doc: Any, times: int) -> None:
    """Values at ``times`` drawn paths replaced by fresh draws from the schema at that place."""
    for _ in range(times):
        paths = [p for p in _paths(doc)[1:] if p not in FIXED]
        if not paths:
            return
        path = draw.rng.choice(paths)
        keywords, base = draw.at(doc, path)
        _parent(doc, path)[path[-1]] = draw.value(keywords, base, str(path[-1]) if isinstance(path[-1], str)
                                                  else str(path[-2]) if len(path) > 1 else "")


def _fill(draw: SchemaDraw, doc: Any) -> None:
    """Every optional member the schema names at one drawn object, drawn from it."""
    objects = [p for p in _paths(doc) if isinstance(_parent(doc, (*p, None)), dict)]
    path = draw.rng.choice(objects)
    target = _parent(doc, (*path, None))
    keywords, base = draw.at(doc, path)
    for name, sub in keywords.get("properties", {}).items():
        if name not in target:
            target[name] = draw.value(sub, base, name)


def _edit(rng: Any, doc: Any, how: str, pool: list[str]) -> None:
    paths = [p for p in _paths(doc)[1:] if p not in FIXED]
    if how == "blank":  # the edge of every string: empty, where one schema may allow it and the other not
        strings = [p for p in paths if isinstance(_parent(doc, p)[p[-1]], str)]
        if strings:
            path = rng.choice(strings)
            _parent(doc, path)[path[-1]] = ""
    elif how == "drop":
        path = rng.choice(paths)
        parent = _parent(doc, path)
        del parent[path[-1]]
    elif how == "duplicate":  # the same record twice: ids collide
        lists = [p for p in paths if isinstance(p[-1], int)]
        if lists:
            path = rng.choice(lists)
            parent = _parent(doc, path)
            parent.insert(path[-1], copy.deepcopy(parent[path[-1]]))
    else:  # a reference re-pointed: dangling, crossed or colliding
        refs = [p for p in paths if isinstance(p[-1], str) and (p[-1] == "id" or p[-1].endswith("_id"))]
        if refs:
            path = rng.choice(refs)
            strings = [v for p in paths if isinstance(v := _parent(doc, p)[p[-1]], str)][:200]
            _parent(doc, path)[path[-1]] = rng.choice(strings + pool + EDGE_STRINGS[:3])


# -- one case ---------------------------------------------------------------------------------


@dataclass
class Tally:
    """What a run did: cases by source format and exit code, and the findings."""

    cases: Counter[tuple[str, int]] = field(default_factory=Counter)
    schema_valid: Counter[str] = field(default_factory=Counter)
    known: Counter[str] = field(default_factory=Counter)  # KNOWN_OWN_LOSSES, by source format
    findings: list[tuple[str, str, bytes]] = field(default_factory=list)

    def summary(self) -> str:
        lines = []
        for src in DIRECTIONS:
            total = sum(n for (s, _), n in self.cases.items() if s == src)
            codes = ", ".join(f"exit {code}: {n}" for (s, code), n in sorted(self.cases.items()) if s == src)
            known = f"; {self.known[src]} known (edited losses of our own translation)" if self.known[src] else ""
            valid = self.schema_valid[src]
            lines.append(f"{src} -> {TARGET[src]}: {total} cases ({valid} schema-valid); {codes}{known}")
        lines.append(f"findings: {len(self.findings)}")
        lines += [f"  [{src}] {why}" for src, why, _ in self.findings[:20]]
        return "\n".join(lines)


def exit_code(exc: BaseException) -> int:
    """The command line's exit code for what ``convert`` raised (anything unexpected is exit 3)."""
    return exc.exit_code if isinstance(exc, ConversionError) else 3


def check(data: bytes, src: str) -> tuple[int, str | None]:
    """Convert ``data`` (a ``src`` document) as the command line does: its exit code and, when
    the outcome breaks the contract, why."""
    to = TARGET[src]
    try:
        result = convert(data, to=to, name="case.json")
    except Exception as exc:  # noqa: BLE001  (every exception is an outcome here)
        code = exit_code(exc)
        return code, None if code in (1, 4) else f"exit {code}: {type(exc).__name__}: {str(exc)[:300]}"
    out = json.loads(result.output)
    problems = [p for p in get(to).validate(out) if p.severity == "error"]
    if problems:
        return 0, f"exit 0 but the {to} output is invalid: {problems[0].rule} at {problems[0].path}: " \
                  f"{problems[0].message[:200]}"
    # An ASIF session that breaks a semantic rule converts with its problems as losses; it cannot
    # come back as it was, since an ASIF output never breaks a rule: the return trip writes a
    # valid session or refuses (exit 1). Continuity's referential problems come back as written.
    broken = src == "asif" and any(p.severity == "error" for p in result.warnings)
    try:
        back = convert(result.output, to=src, name="case.out.json")
    except Exception as exc:  # noqa: BLE001
        if broken and exit_code(exc) == 1:
            return 0, None
        return 0, f"the output does not convert back: exit {exit_code(exc)}: {str(exc)[:300]}"
    original, again = json.loads(data), json.loads(back.output)
    if not broken and canonical(again) != canonical(original):
        differ = sorted(k for k in original.keys() | again.keys()
                        if canonical(original.get(k)) != canonical(again.get(k)))
        if src == "asif" and differ == ["losses"] and _ours(original):
            return 0, KNOWN_OWN_LOSSES
        return 0, f"the round trip is not exact: {', '.join(differ)} differ"
    return 0, None


# A known limit, not a finding: the translation losses of a session asif-convert wrote from an
# export (its capture is the one reading that export gives) are brought up to date on the way
# back, so an edit of those losses does not survive ASIF -> continuity -> ASIF (see the report
# in fuzz/README.md). Counted apart, never silently.
KNOWN_OWN_LOSSES = "known: edited translation losses of asif-convert's own translation are re-derived"


def _ours(doc: Any) -> bool:
    capture = doc.get("capture")
    return isinstance(capture, dict) and isinstance(capture.get("producer"), dict) \
        and capture["producer"].get("name") == "asif-convert"


def run(cases: int, seed: int, directions: tuple[str, ...] = DIRECTIONS, tally: Tally | None = None,
        progress: bool = False) -> Tally:
    tally = tally or Tally()
    for src in directions:
        rng = random.Random(f"{seed}:{src}")
        make = continuity_case if src == "continuity" else asif_case
        started = time.monotonic()
        for n in range(cases):
            data = json.dumps(make(rng), ensure_ascii=rng.random() < 0.5).encode()
            if not any(p.rule == "schema" for p in get(src).validate(json.loads(data))):
                tally.schema_valid[src] += 1
            code, why = check(data, src)
            tally.cases[src, code] += 1
            if why == KNOWN_OWN_LOSSES:
                tally.known[src] += 1
            elif why is not None:
                tally.findings.append((src, why, data))
            if progress and (n + 1) % 1000 == 0:
                print(f"{src}: {n + 1} cases, {time.monotonic() - started:.0f} s, "
                      f"{len(tally.findings)} findings", file=sys.stderr, flush=True)
    return tally


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", choices=PROFILES, default="ci")
    parser.add_argument("--cases", type=int, help="cases per direction (default: the profile's)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--direction", choices=[*DIRECTIONS, "both"], default="both",
                        help="the source format of the cases")
    parser.add_argument("--findings", type=Path, help="folder to write each finding's input to")
    args = parser.parse_args(argv)
    directions = DIRECTIONS if args.direction == "both" else (args.direction,)
    started = time.monotonic()
    tally = run(args.cases or PROFILES[args.profile], args.seed, directions, progress=True)
    print(tally.summary())
    print(f"time: {time.monotonic() - started:.0f} s")
    if args.findings:
        args.findings.mkdir(parents=True, exist_ok=True)
        for i, (src, why, data) in enumerate(tally.findings):
            (args.findings / f"{i:04d}.{src}.json").write_bytes(data)
            (args.findings / f"{i:04d}.{src}.txt").write_text(why + "\n", encoding="utf-8")
    return 1 if tally.findings else 0


if __name__ == "__main__":
    sys.exit(main())
