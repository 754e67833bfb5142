"""The conversion pipeline: bytes -> reader -> IR -> writer -> bytes, validated at both edges."""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from asif_convert import _jsonio as jsonio
from asif_convert import ir
from asif_convert._artifacts import ArtifactFiles, source_resource
from asif_convert._errors import InternalError, InvalidInput, LossPolicyError, Problem, UsageError, pointer
from asif_convert._limits import Limits
from asif_convert._package import is_package, read_package, write_package
from asif_convert._registry import detect, get, namespaces
from asif_convert._validation.files import path_resource_problems
from asif_convert.plugin import Context, Format, Options

# Problems a conversion can never work around; the rest (referential) become losses unless strict.
FATAL_RULES = frozenset({"json", "schema", "io", "format"})


@dataclass
class Result:
    output: bytes
    document: Any  # the output as JSON values
    source_format: str
    target_format: str
    losses: list[ir.Loss]
    warnings: list[Problem] = field(default_factory=list)
    files: dict[str, bytes] = field(default_factory=dict)  # what an ASIF output embeds by path, by that path
    artifacts: dict[str, bytes] = field(default_factory=dict)  # embedded files, by their original location

    def loss_counts(self) -> Counter[str]:
        return Counter(loss.kind for loss in self.losses)


def load(data: bytes, *, source: str | None = None, name: str = "<input>",
         limits: Limits | None = None) -> tuple[Any, Format]:
    """Decode bytes (within ``limits``) and pick their format (``source`` forces one); an ASIF
    package is checked whole and its session returned."""
    raw, fmt, _ = _load(data, source, name, limits)
    return raw, fmt


def _load(data: bytes, source: str | None, name: str, limits: Limits | None) -> tuple[Any, Format, dict[str, bytes]]:
    """``load``, and the files of a package (empty for a plain document)."""
    files: dict[str, bytes] = {}
    if is_package(data):
        pkg = read_package(data, name, limits)
        raw, files = pkg.document, pkg.files
    else:
        raw = jsonio.decode(data, name, limits)
    fmt = get(source) if source else detect(raw)
    if fmt is None:
        raise InvalidInput([_unknown_format(raw)], name)
    if is_package(data) and fmt.name != "asif":
        raise InvalidInput([Problem(rule="package", path="/session.json", message=(
            f"a package carries an ASIF session, not a {fmt.name} document"))], name)
    return raw, fmt, files


def _unknown_format(raw: Any) -> Problem:
    expected = "expected an agent-continuity export (format: agent-continuity-export) or an ASIF session (asif_version)"
    if not isinstance(raw, dict):
        kind = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(type(raw), "a number")
        return Problem(rule="format", path="", message=f"the document is {kind}, not an object; {expected}")
    if "format" in raw:
        return Problem(rule="format", path="/format", message=f"unknown format {str(raw['format'])[:80]!r}; {expected}")
    return Problem(rule="format", path="", message=f"not a document of any installed format; {expected}")


def new_context(options: Options) -> Context:
    """A conversion's context, knowing the native namespaces of every installed format."""
    files = None
    if options.artifacts_root is not None:
        files = ArtifactFiles(options.artifacts_root, options.artifact_max_bytes, options.artifacts_max_total)
    return Context(options=options, namespaces=namespaces(), files=files)


def convert(data: bytes, *, to: str, source: str | None = None, options: Options | None = None,
            name: str = "<input>", compact: bool = False, limits: Limits | None = None,
            package: bool = False) -> Result:
    """Convert one document to the format ``to``; raises a ``ConversionError`` subclass on failure.

    The input may be an ASIF package; with ``package`` the output is one (``to`` must be ASIF)."""
    options = options or Options()
    dst = get(to)
    if package and dst.name != "asif":
        raise UsageError(f"a package carries an ASIF session; {dst.name} output cannot be packaged")
    raw, src, files = _load(data, source, name, limits)
    problems = src.validate(raw)
    fatal = [p for p in problems if options.strict or p.rule in FATAL_RULES]
    if fatal:
        raise InvalidInput(fatal, name)

    ctx = new_context(options)
    source_doc = None
    if options.source_pointers:
        if src.name != "continuity" or dst.name != "asif":
            raise UsageError("source pointers are written from a continuity export to ASIF only")
        source_doc = source_resource(data, name, packaged=package)
        ctx.source_id = source_doc.id
    doc = src.read(raw, ctx)
    del raw  # the decoded input is no longer needed: let it go before the output is built
    files = {**files, **(ctx.files.served if ctx.files else {})}
    if source_doc is not None:
        doc.resources.append(source_doc)
        if isinstance(source_doc.path, str):
            files[source_doc.path] = data
    ctx.embedded = files
    artifacts = {r.original_location: files[r.path] for r in doc.resources
                 if r.availability == "embedded" and isinstance(r.path, str) and r.path in files
                 and isinstance(r.original_location, str)}
    out = dst.write(doc, ctx)
    del doc  # nor is the IR: the output holds what it needs, and validating and encoding it is the peak
    if options.validate:
        bad = [p for p in dst.validate(out) if p.severity == "error"]
        if bad and {(p.rule, p.path) for p in bad} <= {(p.rule, p.path) for p in problems}:
            raise InvalidInput(problems, name)  # the input's own problems, carried into the output: not a bug
        if bad:
            raise InternalError(f"asif-convert produced an invalid {dst.name} document from {name} "
                                f"({len(bad)} problems, first {bad[0].render()}); nothing was written. "
                                "Please report this bug.", bad)
    losses = ctx.losses()
    _apply_loss_policy(losses, options, name)
    output = jsonio.encode(out, compact=compact)
    embedded = {path: files[path] for path in _path_resources(out) if path in files} if dst.name == "asif" else {}
    if package:
        output = write_package(output, packaged_files(out, files, name, ctx.files))
    return Result(output=output, document=out, source_format=src.name, target_format=dst.name, losses=losses,
                  warnings=problems, files=embedded, artifacts=artifacts)


def _path_resources(doc: dict[str, Any]) -> dict[str, int]:
    """The paths of the resources an ASIF document embeds by path, with the index of the first."""
    out: dict[str, int] = {}
    for r, res in enumerate(doc.get("resources") or ()):
        if res.get("availability") == "embedded" and isinstance(res.get("path"), str):
            out.setdefault(res["path"], r)
    return out


def packaged_files(doc: dict[str, Any], files: dict[str, bytes], name: str,
                   folder: ArtifactFiles | None = None) -> dict[str, bytes]:
    """The bytes of every resource ``doc`` embeds by path: a package must carry each one. Those
    not at hand are read from ``folder`` (the user's --artifacts-root) when there is one, and
    must have the size and digest their resource declares."""
    problems, out = [], {}
    for path, r in _path_resources(doc).items():
        content = files.get(path)
        why = "its bytes are not at hand to package (name the folder that holds it with --artifacts-root)"
        if content is None and folder is not None:
            got = folder.read(path)
            content, why = (got, "") if isinstance(got, bytes) else (None, f"it is not packaged: {got.reason}")
            res = doc["resources"][r]
            if content is not None and (len(content), hashlib.sha256(content).hexdigest()) != (
                    res.get("bytes"), res.get("sha256")):
                content, why = None, "the file in the artifacts folder differs from its declared bytes and sha256"
        if content is None:
            problems.append(Problem(rule="package", path=pointer("resources", r, "path"),
                                    message=f"embeds '{path}' by path, but {why}"))
        else:
            out[path] = content
    if problems:
        raise InvalidInput(problems, name)
    return out


def _apply_loss_policy(losses: list[ir.Loss], options: Options, name: str) -> None:
    refused = Counter(loss.kind for loss in losses
                      if options.on_loss == "error" or loss.kind in options.fail_on)
    if refused:
        raise LossPolicyError(dict(sorted(refused.items())), name)


def validate(document: bytes | dict[str, Any], *, format: str | None = None, base_dir: Path | None = None,
             name: str = "<input>") -> list[Problem]:
    """Every problem of a document (errors and warnings); [] when it is clean.

    ``format`` forces the format instead of detecting it; ``base_dir`` enables checking
    embedded ASIF resources stored by path, inside that directory only."""
    if isinstance(document, bytes | bytearray):
        try:
            raw, fmt = load(bytes(document), source=format, name=name)
        except InvalidInput as exc:
            return exc.problems
    else:
        raw, found = document, get(format) if format else detect(document)
        if found is None:
            return [_unknown_format(raw)]
        fmt = found
    problems = fmt.validate(raw)
    if base_dir is not None and fmt.name == "asif" and not any(p.rule == "schema" for p in problems):
        problems += path_resource_problems(raw, base_dir)
    return problems


def ensure_valid(document: bytes | dict[str, Any], **kwargs: Any) -> None:
    """Raise ``InvalidInput`` with every error of the document; warnings do not raise."""
    errors = [p for p in validate(document, **kwargs) if p.severity == "error"]
    if errors:
        raise InvalidInput(errors, kwargs.get("name", "<input>"))
