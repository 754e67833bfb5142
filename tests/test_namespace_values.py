"""No exit 3 from a hand-edited namespace: a valid document whose converter namespaces (the
``agent-continuity/1`` property of an ASIF record; the ``asif`` native states of a continuity
export) hold any JSON value, at the namespace or at any key inside it, converts, renders a
request, a page, a summary and a report, or is refused with its path: never an internal error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from asif_convert import Options, convert
from asif_convert._cli.app import app
from asif_convert._formats.continuity import state

from .conftest import ASIF_EXAMPLES, GOLDEN, ROOT

runner = CliRunner()
NAMESPACE = "agent-continuity/1"
PROVIDERS = ("anthropic-messages", "openai-chat", "openai-responses", "google-genai")
# one of each JSON type, and the shapes a reader might half expect
VALUES = [None, True, 0, -1.5, "", "x", [], [None], ["x"], {}, {"x": 1}, [{}]]

# today's documents, and a first release's (its older shapes: templates, members)
ASIF_DOCS = [json.loads(p.read_bytes()) for p in [*sorted(GOLDEN.glob("*.asif.json")),
                                                   *sorted((ROOT / "tests" / "fixtures" / "golden-v1").glob("*.json"))]]
# every key the continuity format's typed states declare: a document may hold any of them anywhere
KNOWN_KEYS = sorted({f for cls in vars(state).values() if isinstance(cls, type) and issubclass(cls, msgspec.Struct)
                     for f in cls.__struct_fields__})
# exports that carry the converter's own native states (residual, losses, carried records)
CONTINUITY_DOCS = [convert(p.read_bytes(), to="continuity").document for p in ASIF_EXAMPLES[:8]] + [
    convert(p.read_bytes(), to="continuity", options=Options(source_pointers=True, residual=residual)).document
    for p in ASIF_EXAMPLES[8:10] for residual in (True, False)]  # (back-pointers: the sources/1 state)


def _sites(doc: Any, want: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The paths of every value ``want(key, value)`` picks, anywhere in ``doc``."""
    out = []
    items = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else ()
    for key, value in items:
        if want(key, value):
            out.append((*path, key))
        out += _sites(value, want, (*path, key))
    return out


def _asif_sites(doc: Any) -> list[tuple[Any, ...]]:
    spaces = _sites(doc, lambda k, v: k == NAMESPACE)
    return spaces + [(*p, k) for p in spaces for k in _get(doc, p) if isinstance(_get(doc, p), dict)]


def _continuity_sites(doc: Any) -> list[tuple[Any, ...]]:
    states = [("native_states", i, "payload") for i, s in enumerate(doc.get("native_states", []))
              if s.get("provider") == "asif"]
    inner = [(*p, k) for p in states for k in _get(doc, p)] if states else []
    deeper = [(*p, k) for p in inner if isinstance(_get(doc, p), dict) for k in _get(doc, p)]
    return states + inner + deeper


def _get(doc: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        doc = doc[key]
    return doc


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    doc = json.loads(json.dumps(doc))
    _get(doc, path[:-1])[path[-1]] = value
    return doc


def _run_every_command(tmp: Path, doc: Any, fmt: str) -> None:
    src = tmp / f"in.{fmt}.json"
    src.write_text(json.dumps(doc))
    other = "continuity" if fmt == "asif" else "asif"
    commands = [["convert", str(src), "--to", other, "-o", str(tmp / "out.json")],
                ["convert", str(src), "--to", other, "--no-residual", "-o", str(tmp / "out2.json")],
                ["view", str(src), "-o", str(tmp / "page.html")],
                ["inspect", str(src)],
                ["diff", str(src), str(src)],
                ["validate", str(src)],
                *(["request", str(src), "--for", p, "--pending", "as-error", "-o", str(tmp / "r.json")]
                  for p in PROVIDERS)]
    for args in commands:
        res = runner.invoke(app, args)
        assert res.exit_code != 3, (args, res.output)
        assert "internal error" not in res.output, (args, res.output)


def _by_shape(sites: list[tuple[Any, ...]]) -> dict[tuple[Any, ...], list[tuple[Any, ...]]]:
    """Sites grouped by their path with list indices left out (("session", NAMESPACE),
    ("events", NAMESPACE, "dialect")...): a key of one kind of record is drawn as often as any
    other, however many records have it."""
    shapes: dict[tuple[Any, ...], list[tuple[Any, ...]]] = {}
    for site in sites:
        shapes.setdefault(tuple(k for k in site if not isinstance(k, int)), []).append(site)
    return shapes


def _draw_site(data: Any, docs: list[Any], sites: Any) -> tuple[Any, tuple[Any, ...]]:
    doc = data.draw(st.sampled_from(docs))
    shapes = _by_shape(sites(doc))
    shape = data.draw(st.sampled_from(sorted(shapes, key=repr)))
    return doc, data.draw(st.sampled_from(shapes[shape]))


@given(st.data())
def test_any_value_in_an_asif_documents_converter_namespace(tmp_path_factory, data):
    doc, path = _draw_site(data, ASIF_DOCS, _asif_sites)
    value = data.draw(st.sampled_from(VALUES))
    _run_every_command(tmp_path_factory.mktemp("ns"), _set(doc, path, value), "asif")


@given(st.data())
def test_any_declared_key_with_any_value_in_a_converter_namespace(tmp_path_factory, data):
    """A key the typed states declare, added (or replaced) where the document has none of it:
    in a namespace, or in a message's ``style`` or ``members``."""
    doc, path = _draw_site(data, ASIF_DOCS, lambda d: [p for p in _sites(d, lambda k, v: k == NAMESPACE)
                                                       if isinstance(_get(d, p), dict)])
    inner = data.draw(st.sampled_from([(), *((k,) for k in ("style", "members") if isinstance(
        _get(doc, path).get(k), dict))]))
    key = data.draw(st.sampled_from(KNOWN_KEYS))
    value = data.draw(st.sampled_from(VALUES))
    _run_every_command(tmp_path_factory.mktemp("ns"), _set(doc, (*path, *inner, key), value), "asif")


@given(st.data())
def test_any_value_in_an_exports_converter_states(tmp_path_factory, data):
    doc, path = _draw_site(data, [d for d in CONTINUITY_DOCS if _continuity_sites(d)], _continuity_sites)
    value = data.draw(st.sampled_from(VALUES))
    _run_every_command(tmp_path_factory.mktemp("ns"), _set(doc, path, value), "continuity")


def test_request_on_a_session_whose_continuity_record_is_not_an_object(tmp_path):
    """The case the issue names: a multi-branch session whose session["agent-continuity/1"] is
    null, a string, a list or a number."""
    doc = json.loads((GOLDEN / "05-forks.asif.json").read_bytes())
    for value in (None, "x", [1], 3):
        src = tmp_path / "s.asif.json"
        src.write_text(json.dumps(_set(doc, ("session", NAMESPACE), value)))
        res = runner.invoke(app, ["request", str(src), "--for", "anthropic-messages", "-o", str(tmp_path / "r.json")])
        assert res.exit_code in (0, 1, 4), res.output
