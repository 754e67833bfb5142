"""atheris (libFuzzer) harness for asif-convert: any bytes in, only ``InvalidInput`` out.

Each input is converted to both targets (ASIF and continuity), with small limits so a run
spends its time on structure rather than on size. A finding is any exception other than
``InvalidInput`` -- including ``InternalError`` (asif-convert produced an invalid document), a
``RecursionError``, or a crash/timeout/out-of-memory of the process. See fuzz/README.md.

    .venv/bin/python fuzz/fuzz_convert.py /tmp/asif-fuzz/corpus -max_total_time=1800

Half of the mutations are structure-aware (decode the JSON, change one node, encode again:
delete, duplicate or retype a member, swap in boundary values, copy a subtree elsewhere,
duplicate a key in the text); the other half are libFuzzer's byte-level mutations.
"""

from __future__ import annotations

import random
import sys

import atheris

with atheris.instrument_imports(include=["asif_convert"]):
    import importlib
    import pkgutil

    import asif_convert
    from asif_convert import Limits, convert
    from asif_convert._errors import InvalidInput

    # import every module now, so that those the pipeline imports lazily are instrumented too
    for _module in pkgutil.walk_packages(asif_convert.__path__, "asif_convert."):
        if not _module.name.endswith(("_cli", ".cli", ".docs")):
            importlib.import_module(_module.name)

import msgspec  # noqa: E402  (not instrumented: C)

LIMITS = Limits(max_bytes=1 << 20, max_depth=64, max_string=1 << 16)
TARGETS = ("asif", "continuity")


def TestOneInput(data: bytes) -> None:  # noqa: N802  (the name atheris expects)
    for target in TARGETS:
        try:
            convert(data, to=target, limits=LIMITS)
        except InvalidInput:
            pass


# -- structure-aware mutations ------------------------------------------------------------------

_BOUNDARY = [None, True, False, 0, -1, 1, 2**53 - 1, 2**53, -(2**53), 1.0, 0.5, -0.0, 1e308, "", "x" * 300,
             "\u0000", "\ud7ff\ue000", "../../etc/passwd", "/dev/zero", "C:\\\\x", "agent-continuity-export",
             "0.4", [], {}, [None], {"": None}]


def _nodes(value, path=()):
    yield path, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _nodes(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _nodes(v, (*path, i))


def _fresh(value):
    return msgspec.json.decode(msgspec.json.encode(value))


def _get(doc, path):
    for step in path:
        doc = doc[step]
    return doc


def _mutate_tree(doc, rng: random.Random):
    nodes = list(_nodes(doc))
    path, value = rng.choice(nodes)
    op = rng.randrange(6)
    if not path:
        return _fresh(rng.choice(_BOUNDARY)) if op == 0 else doc
    parent, key = _get(doc, path[:-1]), path[-1]
    if op == 0 and isinstance(parent, dict):
        del parent[key]
    elif op == 0 and isinstance(parent, list):
        parent.pop(key)
    elif op == 1:
        parent[key] = _fresh(rng.choice(_BOUNDARY))
    elif op == 2:  # retype: string <-> number <-> list <-> object
        parent[key] = {str: lambda v: len(v), int: str, float: str, list: lambda v: dict(enumerate(v)),
                       dict: lambda v: list(v.values())}.get(type(value), lambda v: [v])(value)
        if isinstance(parent[key], dict):
            parent[key] = {str(k): v for k, v in parent[key].items()}
    elif op == 3:  # copy another subtree here
        parent[key] = _fresh(rng.choice(nodes)[1])
    elif op == 4 and isinstance(parent, list):
        parent.insert(key, _fresh(value))
    elif op == 4 and isinstance(parent, dict):
        parent[f"{key}_"] = _fresh(value)
    elif isinstance(value, str) and value:
        parent[key] = value[: rng.randrange(len(value))] + chr(rng.choice((0, 0x7F, 0xE9, 0x2028, 0x1F600)))
    return doc


def _duplicate_a_key(data: bytes, rng: random.Random) -> bytes:
    """Text-level: repeat one ``"key": value`` member (msgspec would silently keep the last)."""
    at = data.find(b'":', rng.randrange(max(1, len(data))))
    start = data.rfind(b'"', 0, data.rfind(b'"', 0, at + 1))
    end = data.find(b",", at)
    if at < 0 or start < 0 or end < 0:
        return data
    return data[:end] + b"," + data[start:end] + data[end:]


def CustomMutator(data: bytes, max_size: int, seed: int) -> bytes:  # noqa: N802
    rng = random.Random(seed)
    if rng.random() < 0.5:
        try:
            doc = msgspec.json.decode(data)
        except (msgspec.DecodeError, RecursionError):
            doc = None
        if doc is not None:
            if rng.random() < 0.1:
                out = _duplicate_a_key(data, rng)
            else:
                for _ in range(rng.randint(1, 3)):
                    doc = _mutate_tree(doc, rng)
                out = msgspec.json.encode(doc)
                if rng.random() < 0.5:
                    out = msgspec.json.format(out, indent=rng.choice((0, 1, 2)))
            if len(out) <= max_size:
                return out
    return atheris.Mutate(data, max_size)


def main() -> None:
    atheris.Setup(sys.argv, TestOneInput, custom_mutator=CustomMutator)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
