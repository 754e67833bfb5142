"""From input bytes (or manifest records) to a page's HTML text."""

from __future__ import annotations

from typing import Any

from asif_convert._compare import comparable, differences
from asif_convert._errors import InvalidInput, Problem
from asif_convert._limits import Limits
from asif_convert._package import is_package, read_package
from asif_convert._pipeline import convert, load
from asif_convert._view._diff import align, change_rows, header
from asif_convert._view._html import render
from asif_convert._view._session import session_model
from asif_convert.plugin import Options

MAX_PROBLEMS = 50  # problems listed on a page; the count says how many there are


def as_asif(data: bytes, name: str, limits: Limits | None = None) -> tuple[dict[str, Any], str, list[Problem]]:
    """The document in its ASIF JSON form, its own format, and its (non-fatal) problems.

    An ASIF document is checked, not rewritten; any other format is converted in memory, so the
    page also shows the losses that conversion records."""
    raw, fmt = load(data, name=name, limits=limits)
    if fmt.name == "asif":
        problems = fmt.validate(raw)
        if any(p.rule in ("json", "schema") for p in problems):
            raise InvalidInput([p for p in problems if p.rule in ("json", "schema")], name)
        return raw, fmt.name, problems
    result = convert(data, to="asif", name=name, options=Options(), limits=limits)
    return result.document, fmt.name, result.warnings


def unpack(data: bytes, name: str, limits: Limits | None = None) -> tuple[bytes, dict[str, bytes] | None]:
    """A document's bytes, and a package's resource files when ``data`` is an ASIF package."""
    if is_package(data):
        package = read_package(data, name, limits)
        return package.session, package.files
    return data, None


def session_page(data: bytes, name: str, limits: Limits | None = None) -> str:
    """The page of one document (ASIF as it is, an ASIF package, any other format converted in memory)."""
    data, packaged = unpack(data, name, limits)
    doc, source_format, problems = as_asif(data, name, limits)
    if packaged is not None and source_format != "asif":
        raise InvalidInput([Problem(rule="package", path="/session.json",
                                    message=f"a package holds an ASIF session, not a {source_format} document")], name)
    model = session_model(doc, name=name, source_format=source_format, converted=source_format != "asif",
                          packaged=packaged)
    model["problems"] = [p.render() for p in problems[:MAX_PROBLEMS]]
    model["problem_count"] = len(problems)
    return render("session.html.j2", m=model)


def diff_page(data_a: bytes, name_a: str, data_b: bytes, name_b: str, limits: Limits | None = None) -> str:
    """Two documents side by side. Of one format, they are compared as they are (as ``diff`` does);
    of two formats, each is taken in its ASIF form, so B = A converted shows no difference."""
    data_a, data_b = unpack(data_a, name_a, limits)[0], unpack(data_b, name_b, limits)[0]
    (doc_a, fmt_a, _), (doc_b, fmt_b, _) = as_asif(data_a, name_a, limits), as_asif(data_b, name_b, limits)
    if fmt_a == fmt_b:
        raw_a, raw_b = (comparable(load(data, name=name, limits=limits)[0])
                        for data, name in ((data_a, name_a), (data_b, name_b)))
        changes = differences(raw_a, raw_b, fmt_a)
        basis = f"Both are {fmt_a} documents, compared as they are, records matched by id."
    else:
        changes = differences(doc_a, doc_b, "asif")
        basis = (f"A is {fmt_a} and B is {fmt_b}: each is compared in its ASIF form (converted in memory), "
                 "records matched by id.")
    return render("diff.html.j2", a=header(doc_a, name_a, fmt_a), b=header(doc_b, name_b, fmt_b),
                  total=len(changes), changes=change_rows(changes), basis=basis, rows=align(doc_a, doc_b))
