"""Google Gen AI ``Content``: ``{"role", "parts"}``, in the SDK's snake_case dump
(``function_call``, ``inline_data``) or the REST API's camelCase (``functionCall``,
``inlineData``). A part holds one datum (text, inline data, a file, a function call or
response, code the model ran and its result, a server-side tool call or response) and
modifiers (``thought``, ``thought_signature``, media metadata).

Thoughts are private-reasoning parts, kept whole. A thought signature on any other part is a
private-reasoning part of its own, ``{"thought_signature": ...}``, just before what it signs;
the rendering puts it back on that part. Function calls without an id get
``<message id>/function_call/<k>``. A function response without an id answers the id-less call
of its name in the model turn before it, the first of that name not yet answered: that is how
the API pairs them (a model turn's calls are answered by the next user turn's responses, by name
and in order; ids are optional), so the link is the protocol's, not a guess (docs/decisions.md,
40). The reader hands those calls to the split (``awaiting``), and the rendering leaves the id
out again. A response with no such call stays a structured part (schema
``google-genai/function_response``) of the message.
A code execution result without an id answers the code just before it (the API documents that
it always follows it).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from asif_convert import ir
from asif_convert._dialects.common import (
    REASONING,
    Call,
    Pieces,
    Result,
    Split,
    embedded,
    external,
    opaque,
    opaque_value,
)

NAME = "google-genai"
PROVIDER = "google"  # the server identity of the tools Google runs itself (code execution, server-side tools)
DATA = ("text", "inline_data", "file_data", "function_call", "function_response", "executable_code",
        "code_execution_result", "tool_call", "tool_response")
# what qualifies a part's datum (kept by the difference when not rendered)
MODIFIERS = ("thought", "thought_signature", "video_metadata", "media_resolution", "part_metadata",
             "media_processing", "speech_metadata", "document_metadata", "spreadsheet_metadata", "audio_metadata")
SIGNATURES = ("thought_signature", "thoughtSignature")
# modifiers that qualify a text or a medium: properties of its ASIF part (parts are open objects)
QUALIFIERS = tuple(m for m in MODIFIERS if m not in ("thought", "thought_signature"))
_OUTCOMES: dict[str, ir.ToolOutcome] = {"OUTCOME_OK": "success", "OUTCOME_FAILED": "error",
                                        "OUTCOME_DEADLINE_EXCEEDED": "error"}
_CODES = {"success": "OUTCOME_OK", "error": "OUTCOME_FAILED"}


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(w.title() for w in rest)


def _snake(key: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", lambda m: "_" + m.group(1).lower(), key)


def _get(d: dict[str, Any], key: str) -> Any:
    value = d.get(key)
    return value if value is not None else d.get(camel(key))


def detect(content: Any) -> bool:
    """A ``Content``: an object of ``parts`` (and ``role``) where at least one part holds a datum
    this dialect knows (the others stay opaque in place)."""
    if not (isinstance(content, dict) and isinstance(content.get("parts"), list) and content.keys() <= {"role", "parts"}
            and isinstance(content.get("role", ""), str)):
        return False
    parts = content["parts"]
    return bool(parts) and all(isinstance(p, dict) for p in parts) and any(_datum(p) is not None for p in parts)


def _datum(part: dict[str, Any]) -> str | None:
    """The one datum key (snake_case) of a part of known shape, else None. A field whose value
    is null is unset (the SDK's model_dump spells out every field)."""
    keys = [_snake(k) for k, v in part.items() if v is not None]
    data = [k for k in keys if k in DATA]
    if len(data) != 1 or len(set(keys)) != len(keys) or not all(k in DATA or k in MODIFIERS for k in keys):
        return None
    return data[0]


def _unknown_key(part: dict[str, Any]) -> str:
    """What an unmapped part holds, for its semantic type: its first set field this dialect does
    not know, else its first set field (snake_case)."""
    keys = [_snake(k) for k, v in part.items() if v is not None]
    return next((k for k in keys if k not in DATA and k not in MODIFIERS), keys[0] if keys else "empty")


class _Reader:
    def __init__(self, message_id: str, awaiting: Sequence[tuple[str, str]] = ()) -> None:
        self.mid = message_id
        self.awaiting = list(awaiting)  # (call id, name) of the id-less calls a response may answer, in order
        self.parts: list[ir.Part] = []
        self.out = Split(dialect=NAME, parts=self.parts)
        self.order: list[str] = []
        self.call_kinds: list[str] = []
        self.result_kinds: list[str] = []
        self.current: dict[str, Any] = {}
        self.code_call: str | None = None  # the call of the last executable code, answered by the result after it

    def part(self, p: dict[str, Any]) -> None:
        datum = _datum(p)
        if datum is None or not self.datum(p, datum):
            kind = datum or _unknown_key(p)
            self.parts.append(opaque(self.out, p, kind, f"{self.mid}/part/{len(self.out.resources)}"))
            self.order.append("p")

    def datum(self, p: dict[str, Any], datum: str) -> bool:
        value = _get(p, datum)
        self.current = p
        if _get(p, "thought") is True:
            self.parts.append(ir.StructuredPart(schema=REASONING, value=p))
            self.order.append("p")
            return True
        mapped = self.mapped(datum, value)
        if mapped is None:
            return False
        signature = next((k for k in SIGNATURES if p.get(k) is not None), None)
        if signature is not None:  # what the model signed stays with it, apart from visible content
            self.parts.append(ir.StructuredPart(schema=REASONING, value={signature: p[signature]}))
            self.order.append("p")
        letter, apply = mapped
        apply()
        self.order.append(letter)
        qualifiers = {k: v for k, v in p.items() if _snake(k) in QUALIFIERS and v is not None}
        if qualifiers and datum in ("text", "inline_data", "file_data"):
            self.parts[-1].unknown = qualifiers
        return True

    def mapped(self, datum: str, value: Any) -> tuple[str, Any] | None:
        """(piece letter, how to add it) for a datum of known shape, else None."""
        if datum == "text" and isinstance(value, str):
            return "p", lambda: self.parts.append(ir.TextPart(text=value))
        if not isinstance(value, dict):
            return None
        rid = f"{self.mid}/{datum}/{len(self.out.resources)}"
        if datum in ("inline_data", "file_data"):
            res = self.media(datum, value, rid)
            if res is None:
                return None

            def add_media() -> None:
                self.out.resources.append(res)
                self.parts.append(ir.ResourcePart(resource_id=res.id))
            return "p", add_media
        if datum in ("function_call", "executable_code", "tool_call"):
            return self.call(datum, value)
        return self.result(datum, value)

    def answered(self, name: Any) -> str | None:
        """The id of the call an id-less function response of ``name`` answers: the first call of
        that name among those awaiting an answer (taken: the next response of the name answers
        the next call), else None."""
        k = next((k for k, (_, called) in enumerate(self.awaiting) if called == name), None)
        return None if k is None else self.awaiting.pop(k)[0]

    def response_part(self, p: Any) -> ir.Part:
        """A part of a function response (inline or file data) as a resource part, else opaque."""
        rid = f"{self.mid}/function_response/{len(self.out.resources)}"
        datum = _datum(p) if isinstance(p, dict) else None
        value = _get(p, datum) if datum in ("inline_data", "file_data") else None
        res = self.media(str(datum), value, rid) if isinstance(value, dict) else None
        if res is None:
            return opaque(self.out, p, "function_response.part", rid)
        self.out.resources.append(res)
        qualifiers = {k: v for k, v in p.items() if _snake(k) in QUALIFIERS and v is not None}
        return ir.ResourcePart(resource_id=res.id, unknown=qualifiers)

    def media(self, datum: str, value: dict[str, Any], rid: str) -> ir.Resource | None:
        mime = _get(value, "mime_type")
        res = None
        if datum == "inline_data" and isinstance(value.get("data"), str) and isinstance(mime, str) and mime:
            res = embedded(rid, mime, value["data"])
        elif datum == "file_data" and isinstance(_get(value, "file_uri"), str) and _get(value, "file_uri"):
            res = external(rid, _get(value, "file_uri"))
            if isinstance(mime, str) and mime:
                res.media_type = mime
        if res is not None and isinstance(_get(value, "display_name"), str):
            res.name = _get(value, "display_name")
        return res

    def call(self, datum: str, value: dict[str, Any]) -> tuple[str, Any] | None:
        k = len(self.out.calls)
        call_id = value.get("id")
        if datum == "function_call":
            name, arguments = value.get("name"), value.get("args", {})
            if not (isinstance(name, str) and name):
                return None
        elif datum == "executable_code":
            if not isinstance(value.get("code"), str):
                return None
            name, arguments = "code_execution", {key: value[key] for key in ("code", "language") if key in value}
        else:
            tool_type = _get(value, "tool_type")
            name = tool_type.lower() if isinstance(tool_type, str) and tool_type else "server_tool"
            arguments = value.get("args", {})
        derived = not (isinstance(call_id, str) and call_id)
        if derived:
            call_id = f"{self.mid}/{datum}/{k}"
        assert isinstance(call_id, str)

        def add() -> None:
            self.out.calls.append(Call(call_id=call_id, name=name, arguments=arguments, status="complete",
                                       server=None if datum == "function_call" else PROVIDER))
            self.call_kinds.append(datum)
            if derived:
                self.out.options.setdefault("d", []).append(k)  # an id the part does not have
            self.code_call = call_id if datum == "executable_code" else None
        return "c", add

    def result(self, datum: str, value: dict[str, Any]) -> tuple[str, Any] | None:
        call_id = value.get("id")
        derived = False
        if not (isinstance(call_id, str) and call_id):
            if datum == "code_execution_result" and self.code_call is not None:
                call_id, derived = self.code_call, True
            elif datum == "function_response" and (call_id := self.answered(value.get("name"))) is not None:
                derived = True
            else:  # a response that names no call: its data, as they are, in the message
                whole = self.current
                return "p", lambda: self.parts.append(ir.StructuredPart(schema=f"{NAME}/{datum}", value=whole))
        parts: list[ir.Part] = []
        outcome: ir.ToolOutcome = "unknown"
        if datum == "code_execution_result":
            outcome = _OUTCOMES.get(str(value.get("outcome")), "unknown")
            if isinstance(value.get("output"), str):
                parts.append(ir.TextPart(text=value["output"]))
        else:
            response = value.get("response")
            if isinstance(response, dict):
                # the SDK's convention: "output" for what the function returned, "error" for a failure
                outcome = "error" if "error" in response and "output" not in response \
                    else "success" if "output" in response else "unknown"
                parts.append(ir.StructuredPart(schema=f"{NAME}/{datum}.response", value=response))
            media = value.get("parts")
            for p in media if isinstance(media, list) else ():  # media the function returned
                parts.append(self.response_part(p))
        k = len(self.out.results)

        def add() -> None:
            self.out.results.append(Result(call_id=call_id, outcome=outcome, parts=parts,
                                           server=None if datum == "function_response" else PROVIDER))
            self.result_kinds.append(datum)
            if derived:
                self.out.options.setdefault("g", []).append(k)
            self.code_call = None
        return "r", add


def split(content: dict[str, Any], role: str, message_id: str, awaiting: Sequence[tuple[str, str]] = ()) -> Split:
    """``awaiting``: (call id, name) of the id-less function calls of the model turn before this
    message that no response has answered yet, in order (the reader keeps them per branch)."""
    reader = _Reader(message_id, awaiting if role != "assistant" else ())
    for p in content["parts"]:
        reader.part(p)
    out, options = reader.out, reader.out.options
    if role == "assistant":  # a model turn: its id-less function calls are what the next responses answer
        out.turn = [(c.call_id, c.name) for k, c in enumerate(out.calls)
                    if k in options.get("d", ()) and reader.call_kinds[k] == "function_call"]
    if any(_snake(k) != k or any(_snake(n) != n for n in (v if isinstance(v, dict) else {}))
           for p in content["parts"] for k, v in p.items() if _snake(k) in DATA or k in SIGNATURES):
        options["h"] = 1  # the REST API's camelCase
    if any(k != "function_call" for k in reader.call_kinds):
        options["t"] = reader.call_kinds
    if any(k != "function_response" for k in reader.result_kinds):
        options["y"] = reader.result_kinds
    order = "".join(reader.order)
    if order != "".join(sorted(order, key="pcr".index)):
        options["o"] = order
    if not out.parts and (out.calls or out.results):
        out.parts = None
    return out


# -- canonical rendering ------------------------------------------------------------------------


def _signature(part: dict[str, Any]) -> dict[str, Any] | None:
    value = part.get("value")
    if part["kind"] == "structured" and part.get("schema") == REASONING and isinstance(value, dict) \
            and len(value) == 1 and next(iter(value)) in SIGNATURES:
        return value
    return None


def render(pieces: Pieces, options: dict[str, Any]) -> Any:
    """The ``Content`` the Gen AI API would hold for these pieces, in ``options``' style."""
    key = camel if options.get("h") else (lambda k: k)
    call_kinds, result_kinds = list(options.get("t") or ()), list(options.get("y") or ())
    derived_calls, derived_results = set(options.get("d", ())), set(options.get("g", ()))
    rendered: list[Any] = []
    signature: dict[str, Any] | None = None

    def put(items: list[Any]) -> None:
        nonlocal signature
        for item in items:
            if signature is not None and isinstance(item, dict):
                item = {**item, **signature}
                signature = None
            rendered.append(item)

    def part(p: dict[str, Any]) -> None:
        nonlocal signature
        held = _signature(p)
        if held is not None:
            if signature is not None:
                rendered.append(signature)
            signature = held
        else:
            put(_part(p, pieces, key))

    def call(k: int, c: dict[str, Any]) -> None:
        kind = call_kinds[k] if k < len(call_kinds) else "function_call"
        put([_call(c, kind, k in derived_calls, key)])

    def result(k: int, r: dict[str, Any]) -> None:
        kind = result_kinds[k] if k < len(result_kinds) else "function_response"
        put([_result(r, kind, k in derived_results, key, pieces)])

    queues = {"p": list(enumerate(pieces.parts)), "c": list(enumerate(pieces.calls)),
              "r": list(enumerate(pieces.results))}
    handlers = {"p": lambda k, v: part(v), "c": call, "r": result}
    for letter in options.get("o") or "":
        if queues[letter]:
            handlers[letter](*queues[letter].pop(0))
    for letter in "pcr":  # in the canonical order, and what an edit added
        while queues[letter]:
            handlers[letter](*queues[letter].pop(0))
    if signature is not None:
        rendered.append(signature)
    return {"role": "model" if pieces.role == "assistant" else "user", "parts": rendered}


def _part(part: dict[str, Any], pieces: Pieces, key: Any) -> list[Any]:
    qualifiers = {k: v for k, v in part.items() if _snake(k) in QUALIFIERS}
    blocks = _datum_of(part, pieces, key)
    return [{**b, **qualifiers} if qualifiers and isinstance(b, dict) else b for b in blocks]


def _datum_of(part: dict[str, Any], pieces: Pieces, key: Any) -> list[Any]:
    kind = part["kind"]
    if kind == "text":
        return [{"text": part["text"]}]
    if kind == "structured":
        return [part["value"]]
    if kind == "opaque":
        return opaque_value(part, pieces.resources)
    if kind == "resource":
        res = pieces.resources.get(part["resource_id"])
        if res is None:
            return []
        if res.get("availability") == "embedded" and "data" in res:
            value = {"data": res["data"]}
        else:
            value = {key("file_uri"): res.get("locator", "")}
        if "name" in res:
            value[key("display_name")] = res["name"]
        value[key("mime_type")] = res["media_type"]
        return [{key("inline_data" if "data" in value else "file_data"): value}]
    return []


def _call(call: dict[str, Any], kind: str, derived: bool, key: Any) -> dict[str, Any]:
    arguments = call.get("arguments")
    value: dict[str, Any] = {} if derived else {"id": call["call_id"]}
    if kind == "executable_code":
        if isinstance(arguments, dict):
            value.update(arguments)
    elif kind == "tool_call":
        value[key("tool_type")] = call["tool_id"].upper()
        value["args"] = arguments
    else:
        value["name"] = call["tool_id"]
        value["args"] = arguments
    return {key(kind): value}


def _result(result: dict[str, Any], kind: str, derived: bool, key: Any, pieces: Pieces) -> dict[str, Any]:
    parts = result.get("parts", [])
    value: dict[str, Any] = {} if derived else {"id": result["call_id"]}
    name = pieces.names.get(result["call_id"]) if kind == "function_response" else None
    if name is not None:  # the tool's name (a difference keeps one the response gave otherwise)
        value["name"] = name
    if kind == "code_execution_result":
        outcome = _CODES.get(result.get("outcome", ""))
        if outcome is not None:
            value["outcome"] = outcome
        texts = [p["text"] for p in parts if p["kind"] == "text"]
        if texts:
            value["output"] = "".join(texts)
    else:
        values = [p["value"] for p in parts if p["kind"] == "structured"]
        if values:
            value["response"] = _response(values[0], result.get("outcome"))
        media = [b for p in parts if p["kind"] in ("resource", "opaque") for b in _part(p, pieces, key)]
        if media:
            value["parts"] = media
    return {key(kind): value}


def _response(response: Any, outcome: Any) -> Any:
    """A function_response's response in the SDK's convention for ``outcome``: what the function
    returned under "output", a failure under "error". A response that says the other outcome
    (an edit of the outcome) has its key renamed in its place; one with both keys or neither
    says no outcome of its own, and stays as it is."""
    if not isinstance(response, dict) or ("output" in response) == ("error" in response):
        return response
    rename = {"error": ("output", "error"), "success": ("error", "output")}.get(outcome)
    if rename is None or rename[0] not in response:
        return response
    return {rename[1] if k == rename[0] else k: v for k, v in response.items()}
