"""OpenAI Responses API items. content_json is one item or a list of them: messages and their
content parts, reasoning, function and custom tool calls and their outputs, the tools the
provider runs itself (web and file search, code interpreter, image generation, MCP; the item
holds the call and, once done, its outcome) and the client-run computer, shell and patch tools.

Every item becomes pieces in place: a message item its parts, reasoning a private-reasoning
part, a call item a tool call, an output item a tool result, a provider-run tool both; an item
this dialect has no ASIF home for is an opaque part. ``options["i"]`` keeps the item layout
when it is not the canonical one (one letter per item: ``m`` message, ``p`` an item that is one
part, ``c`` call, ``r`` output, ``s`` provider-run call with its outcome, ``t`` one without);
``options["b"]`` lists the calls whose id is their item's ``id`` (a tool search the provider
ran has no ``call_id``), so that an edited call id reaches the key it came from.
"""

from __future__ import annotations

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
    json_text,
    opaque,
    opaque_value,
    parse_arguments,
    provider_file,
)

NAME = "openai-responses"
PROVIDER = "openai"  # the server identity of the tools OpenAI runs itself

# The arguments of a call item: "json" a JSON string under "arguments", "input" the free-form
# string of a custom tool, "object" the value under "arguments", a tuple the item's keys that
# say what to do (gathered into an object).
ArgumentsForm = str | tuple[str, ...]

# client-run calls: item type -> (tool id, or None when the item names it, arguments form)
CALLS: dict[str, tuple[str | None, ArgumentsForm]] = {
    "function_call": (None, "json"),
    "custom_tool_call": (None, "input"),
    "computer_call": ("computer", ("action", "actions", "pending_safety_checks")),
    "local_shell_call": ("local_shell", ("action",)),
    "shell_call": ("shell", ("action", "environment")),
    "apply_patch_call": ("apply_patch", ("operation",)),
    "program": ("program", ("code", "fingerprint")),
    "tool_search_call": ("tool_search", "object"),
}
# provider-run tools: the item is the call and, once it is done, its outcome
SERVER_CALLS: dict[str, tuple[str | None, ArgumentsForm]] = {
    "web_search_call": ("web_search", ("action",)),
    "file_search_call": ("file_search", ("queries",)),
    "code_interpreter_call": ("code_interpreter", ("code", "container_id")),
    "image_generation_call": ("image_generation", ("action", "background", "output_format", "quality", "size")),
    "mcp_call": (None, "json"),
    "mcp_list_tools": ("mcp_list_tools", ("server_label",)),
}
# outputs of client-run calls: item type -> the key holding the output
OUTPUTS = {
    "function_call_output": "output",
    "custom_tool_call_output": "output",
    "computer_call_output": "output",
    "local_shell_call_output": "output",
    "shell_call_output": "output",
    "apply_patch_call_output": "output",
    "program_output": "result",
    "tool_search_output": "tools",
}
# items ASIF has no home for in a message's pieces: approvals (decisions), references to items
# stored elsewhere, tool lists, configuration changes and compacted (encrypted) history
NO_HOME = ("mcp_approval_request", "mcp_approval_response", "item_reference", "additional_tools",
           "configuration_update", "compaction", "compaction_trigger")
ITEM_TYPES = ("message", "reasoning", *CALLS, *SERVER_CALLS, *OUTPUTS, *NO_HOME)
_MESSAGE_KEYS = {"type", "id", "role", "content", "status", "phase"}
_FINISHED: dict[str, ir.ToolOutcome] = {"completed": "success", "failed": "error", "incomplete": "unknown"}
_STATUS = {"success": "completed", "error": "failed"}


def detect(content: Any) -> bool:
    """One item, or a list of items where at least one is a known item type (the others stay
    opaque in place). A message without ``type`` (or a null one, as the SDK dumps it) counts
    when it has ``role`` and ``content``
    (what fits OpenAI Chat too is claimed by that dialect first)."""
    items = content if isinstance(content, list) else [content]
    if not items or not all(isinstance(i, dict) and (isinstance(i.get("type"), str) or _untyped_message(i))
                            for i in items):
        return False
    return any(_untyped_message(i) or i["type"] in ITEM_TYPES for i in items)


def _untyped_message(item: dict[str, Any]) -> bool:
    return item.get("type") is None and isinstance(item.get("role"), str) and "content" in item \
        and item.keys() <= _MESSAGE_KEYS


def _kind(item: dict[str, Any]) -> str:
    return "message" if _untyped_message(item) else str(item["type"])


# -- split --------------------------------------------------------------------------------------


class _Reader:
    def __init__(self, message_id: str) -> None:
        self.mid = message_id
        self.parts: list[ir.Part] = []
        self.out = Split(dialect=NAME, parts=self.parts)
        self.layout: list[str] = []
        self.counts: list[int] = []  # parts of each message item
        self.strings: list[int] = []  # message items whose content is a string
        self.call_types: list[str] = []
        self.result_types: list[str] = []
        self.spaced = False

    def rid(self, kind: str) -> str:
        return f"{self.mid}/{kind}/{len(self.out.resources)}"

    def item(self, item: dict[str, Any]) -> None:
        kind = _kind(item)
        done = False
        if kind == "message":
            done = self.message(item)
        elif kind == "reasoning":
            self.parts.append(ir.StructuredPart(schema=REASONING, value=item))
            self.layout.append("p")
            done = True
        elif kind in CALLS:
            done = self.call(item, kind, CALLS[kind])
        elif kind in SERVER_CALLS:
            done = self.server_call(item, kind)
        elif kind in OUTPUTS:
            done = self.output(item, kind)
        if not done:  # an item of a type this dialect does not know, or not of its known shape
            self.parts.append(opaque(self.out, item, kind, self.rid("item")))
            self.layout.append("p")

    def message(self, item: dict[str, Any]) -> bool:
        body = item.get("content")
        if not isinstance(item.get("role"), str) or not (
                isinstance(body, str) or (isinstance(body, list) and all(isinstance(p, dict) for p in body))):
            return False
        if isinstance(body, str):
            self.strings.append(len(self.counts))
            self.parts.append(ir.TextPart(text=body))
            self.counts.append(1)
        else:
            for p in body:
                self.content_part(p, self.parts)
            self.counts.append(len(body))
        self.layout.append("m")
        return True

    def content_part(self, p: dict[str, Any], parts: list[ir.Part]) -> None:
        kind = p.get("type")
        if kind in ("input_text", "output_text") and isinstance(p.get("text"), str):
            notes = p.get("annotations")  # citations stay on the text they annotate
            parts.append(ir.TextPart(text=p["text"], unknown={"annotations": notes} if notes else {}))
            return
        if kind == "refusal" and isinstance(p.get("refusal"), str) and parts is self.parts:
            self.out.options.setdefault("q", []).append(len(parts))  # what the model said instead of answering
            parts.append(ir.TextPart(text=p["refusal"]))
            return
        res = self.media(p)
        if res is not None:
            self.out.resources.append(res)
            parts.append(ir.ResourcePart(resource_id=res.id))
            return
        parts.append(opaque(self.out, p, str(kind), self.rid("part")))

    def media(self, p: dict[str, Any]) -> ir.Resource | None:
        kind = p.get("type")
        if kind in ("input_image", "computer_screenshot"):
            rid = self.rid(str(kind))
            if isinstance(p.get("image_url"), str) and p["image_url"]:
                return _url(rid, p["image_url"])
            if isinstance(p.get("file_id"), str) and p["file_id"]:
                return provider_file(rid, p["file_id"])
        if kind == "input_file":
            rid = self.rid("input_file")
            res = None
            if isinstance(p.get("file_data"), str) and p["file_data"].startswith("data:"):
                res = _url(rid, p["file_data"])
            elif isinstance(p.get("file_url"), str) and p["file_url"]:
                res = external(rid, p["file_url"])
            elif isinstance(p.get("file_id"), str) and p["file_id"]:
                res = provider_file(rid, p["file_id"])
            if res is not None and isinstance(p.get("filename"), str):
                res.name = p["filename"]
            return res
        audio = p.get("input_audio")
        if kind == "input_audio" and isinstance(audio, dict) and isinstance(audio.get("data"), str) \
                and isinstance(audio.get("format"), str) and audio["format"]:
            return embedded(self.rid("input_audio"), f"audio/{audio['format']}", audio["data"])
        return None

    def arguments(self, item: dict[str, Any], form: ArgumentsForm) -> tuple[bool, Any, ir.ArgumentsStatus]:
        if form == "json":
            if not isinstance(item.get("arguments"), str):
                return False, None, "unknown"
            text = item["arguments"]
            arguments, status = parse_arguments(text)
            self.spaced = self.spaced or (status == "complete" and json_text(arguments, True) == text
                                          and json_text(arguments, False) != text)
            return True, arguments, status
        if form == "input":
            return isinstance(item.get("input"), str), item.get("input"), "complete"
        if form == "object":
            return "arguments" in item, item.get("arguments"), "complete"
        return True, {k: item[k] for k in form if k in item}, "complete"

    def call(self, item: dict[str, Any], kind: str, spec: tuple[str | None, ArgumentsForm],
             server: bool = False) -> bool:
        call_id = _id(item, "id" if server else "call_id")
        tool, form = spec
        name = item.get("name") if tool is None else tool
        ok, arguments, status = self.arguments(item, form)
        if not (ok and call_id and isinstance(name, str) and name):
            return False
        if not server and item.get("call_id") != call_id:  # (a tool search the provider ran: its item id)
            self.out.options.setdefault("b", []).append(len(self.out.calls))
        self.out.calls.append(Call(call_id=call_id, name=name, arguments=arguments, status=status,
                                   server=_server(item) if server or item.get("execution") == "server" else None))
        self.call_types.append(kind)
        if not server:
            self.layout.append("c")
        return True

    def server_call(self, item: dict[str, Any], kind: str) -> bool:
        if not self.call(item, kind, SERVER_CALLS[kind], server=True):
            return False
        call_id = self.out.calls[-1].call_id
        status = item.get("status") if isinstance(item.get("status"), str) else None
        # an MCP call's status is optional: one that holds its output or error is done
        answered = kind == "mcp_call" and "status" not in item \
            and (isinstance(item.get("output"), str) or item.get("error") is not None)
        if kind != "mcp_list_tools" and status not in _FINISHED and not answered:
            self.layout.append("t")  # still running: no outcome yet, and none is invented
            return True
        outcome: ir.ToolOutcome = "success" if answered else _FINISHED.get(status or "", "unknown")
        parts: list[ir.Part] = []
        if kind == "file_search_call" and item.get("results") is not None:
            parts.append(ir.StructuredPart(schema=f"{NAME}/file_search_call.results", value=item["results"]))
        elif kind == "code_interpreter_call" and isinstance(item.get("outputs"), list):
            for o in item["outputs"]:
                if isinstance(o, dict) and o.get("type") == "logs" and isinstance(o.get("logs"), str):
                    parts.append(ir.TextPart(text=o["logs"]))
                elif isinstance(o, dict) and o.get("type") == "image" and isinstance(o.get("url"), str) and o["url"]:
                    res = _url(self.rid("image"), o["url"])
                    self.out.resources.append(res)
                    parts.append(ir.ResourcePart(resource_id=res.id))
                else:
                    parts.append(opaque(self.out, o, f"{kind}.output", self.rid("part")))
        elif kind == "image_generation_call" and isinstance(item.get("result"), str):
            fmt = item.get("output_format") if isinstance(item.get("output_format"), str) else "png"
            image = embedded(self.rid("image"), f"image/{fmt}", item["result"])
            if image is not None:
                self.out.resources.append(image)
                parts.append(ir.ResourcePart(resource_id=image.id))
            if isinstance(item.get("revised_prompt"), str):  # what the model asked the image for
                parts.append(ir.TextPart(text=item["revised_prompt"]))
        elif kind == "mcp_call":
            if isinstance(item.get("output"), str):
                parts.append(ir.TextPart(text=item["output"]))
            if item.get("error") is not None:
                outcome = "error"
                parts.append(ir.StructuredPart(schema=f"{NAME}/mcp_call.error", value=item["error"]))
        elif kind == "mcp_list_tools":
            parts.append(ir.StructuredPart(schema=f"{NAME}/mcp_list_tools.tools", value=item.get("tools")))
            outcome = "success"
            if isinstance(item.get("error"), str):
                outcome = "error"
                parts.append(ir.TextPart(text=item["error"]))
        self.out.results.append(Result(call_id=call_id, outcome=outcome, parts=parts, server=_server(item)))
        self.result_types.append(kind)
        self.layout.append("s")
        return True

    def output(self, item: dict[str, Any], kind: str) -> bool:
        call_id = _id(item, "id" if kind == "local_shell_call_output" else "call_id")
        key = OUTPUTS[kind]
        if not call_id or (key not in item and kind != "apply_patch_call_output"):  # (its output is optional)
            return False
        body = item.get(key)
        parts: list[ir.Part] = []
        k = len(self.out.results)
        if isinstance(body, str):
            parts.append(ir.TextPart(text=body))
        elif kind in ("function_call_output", "custom_tool_call_output") and isinstance(body, list) \
                and all(isinstance(p, dict) for p in body):
            for p in body:
                self.content_part(p, parts)
            self.out.options.setdefault("l", []).append(k)  # an output written as a list of parts
        elif kind == "computer_call_output" and isinstance(body, dict) and (res := self.media(body)) is not None:
            self.out.resources.append(res)
            parts.append(ir.ResourcePart(resource_id=res.id))
        elif body is not None:
            parts.append(ir.StructuredPart(schema=f"{NAME}/{kind}", value=body))
        outcome: ir.ToolOutcome = "unknown"  # an output item says whether it was delivered, not how the tool did
        if kind == "apply_patch_call_output":
            outcome = _FINISHED.get(str(item.get("status")), "unknown")
        self.out.results.append(Result(call_id=call_id, outcome=outcome, parts=parts,
                                       server=PROVIDER if item.get("execution") == "server" else None))
        self.result_types.append(kind)
        self.layout.append("r")
        return True


def _server(item: dict[str, Any]) -> str:
    """Who ran a provider-run tool: OpenAI, or the MCP server it called (``mcp:<label>``)."""
    label = item.get("server_label")
    if item.get("type") in ("mcp_call", "mcp_list_tools") and isinstance(label, str) and label:
        return f"mcp:{label}"
    return PROVIDER


def _id(item: dict[str, Any], key: str) -> str | None:
    value = item.get(key)
    if not (isinstance(value, str) and value) and key == "call_id" and item.get("type") == "tool_search_call":
        value = item.get("id")  # a provider-run tool search may have no call id
    return value if isinstance(value, str) and value else None


def _url(rid: str, url: str) -> ir.Resource:
    if url.startswith("data:"):
        head, sep, data = url[5:].partition(",")
        media_type, _, encoding = head.partition(";")
        if sep and encoding == "base64" and media_type:
            res = embedded(rid, media_type, data)
            if res is not None:
                return res
    return external(rid, url)


def split(content: Any, role: str, message_id: str) -> Split:
    reader = _Reader(message_id)
    items = content if isinstance(content, list) else [content]
    for item in items:
        reader.item(item)
    out, options = reader.out, reader.out.options
    if not isinstance(content, list):
        options["u"] = 1
    if reader.spaced:
        options["a"] = "spaced"
    if any(t != "function_call" for t in reader.call_types):
        options["t"] = reader.call_types
    if any(t != "function_call_output" for t in reader.result_types):
        options["y"] = reader.result_types
    if reader.strings:
        options["z"] = reader.strings
    part_items = [_is_item_part(p) for p in reader.parts]
    layout, counts = _canonical(part_items, reader.call_types, [c.call_id for c in out.calls],
                                [r.call_id for r in out.results])
    if "".join(reader.layout) != layout:
        options["i"] = "".join(reader.layout)
    if reader.counts != counts:
        options["j"] = reader.counts
    if not out.parts and (out.calls or out.results):
        out.parts = None
    return out


def _is_item_part(part: ir.Part | dict[str, Any]) -> bool:
    """Whether a part is an item of its own (reasoning, an opaque item), not message content."""
    if isinstance(part, dict):
        return (part.get("kind") == "structured" and part.get("schema") == REASONING) \
            or (part.get("kind") == "opaque" and "/item/" in str(part.get("resource_id", "")))
    return (isinstance(part, ir.StructuredPart) and part.schema == REASONING) \
        or (isinstance(part, ir.OpaquePart) and "/item/" in part.resource_id)


def _canonical(part_items: list[bool], call_types: list[str], call_ids: list[str],
               result_ids: list[str]) -> tuple[str, list[int]]:
    """The item layout the rendering takes by default: reasoning and other one-part items and one
    message per run of content parts, in order, then the calls (a provider-run one with its
    outcome), then the other outputs."""
    layout: list[str] = []
    counts: list[int] = []
    for is_item in part_items:
        if is_item:
            layout.append("p")
        elif layout and layout[-1] == "m":
            counts[-1] += 1
        else:
            layout.append("m")
            counts.append(1)
    pending = list(result_ids)
    for k, call_id in enumerate(call_ids):
        kind = call_types[k] if k < len(call_types) else "function_call"
        if kind in SERVER_CALLS:
            if call_id in pending:
                pending.remove(call_id)
                layout.append("s")
            else:
                layout.append("t")
        else:
            layout.append("c")
    layout += ["r"] * len(pending)
    return "".join(layout), counts


def order(options: dict[str, Any], parts: list[ir.Part], call_ids: list[str],
          result_ids: list[str]) -> list[tuple[str, int]]:
    """The pieces in the order the items held them, as (``p`` part | ``c`` call | ``r`` result,
    index): the layout ``render`` follows (a provider-run call with its outcome is the call, then
    its result); pieces the layout does not place follow in the canonical order."""
    part_items = [_is_item_part(p) for p in parts]
    layout, counts = _canonical(part_items, list(options.get("t") or ()), call_ids, result_ids)
    layout = options.get("i") or layout
    counts = list(options["j"]) if "j" in options else []
    out: list[tuple[str, int]] = []
    np = nc = messages = 0
    free = list(range(len(result_ids)))
    for letter in layout:
        if letter == "m":
            n = counts[messages] if messages < len(counts) else None
            messages += 1
            start = np
            while np < len(parts) and (np - start < n if n is not None else not part_items[np]):
                out.append(("p", np))
                np += 1
        elif letter == "p" and np < len(parts):
            out.append(("p", np))
            np += 1
        elif letter in "cst" and nc < len(call_ids):
            out.append(("c", nc))
            answer = next((k for k in free if result_ids[k] == call_ids[nc]), None) if letter == "s" else None
            if answer is not None:
                free.remove(answer)
                out.append(("r", answer))
            nc += 1
        elif letter == "r" and free:
            out.append(("r", free.pop(0)))
    return out + [("p", k) for k in range(np, len(parts))] + [("c", k) for k in range(nc, len(call_ids))] \
        + [("r", k) for k in free]


# -- canonical rendering ------------------------------------------------------------------------


def render(pieces: Pieces, options: dict[str, Any]) -> Any:
    """The items the Responses API would hold for these pieces, in ``options``' style."""
    call_types = list(options.get("t") or ())
    result_types = list(options.get("y") or ())
    part_items = [_is_item_part(p) for p in pieces.parts]
    default_layout, default_counts = _canonical(part_items, call_types, [c["call_id"] for c in pieces.calls],
                                                [r["call_id"] for r in pieces.results])
    layout = options.get("i") or default_layout
    counts = list(options["j"]) if "j" in options else default_counts
    refusals = set(options.get("q", ()))
    strings = set(options.get("z", ()))
    spaced = options.get("a") == "spaced"
    as_list = set(options.get("l", ()))
    by_item_id = set(options.get("b", ()))  # calls whose id is their item's id, not a call_id
    parts = list(enumerate(pieces.parts))
    calls = list(enumerate(pieces.calls))
    results = list(enumerate(pieces.results))
    items: list[Any] = []
    messages = 0

    def message(n: int | None) -> None:
        nonlocal messages
        taken: list[tuple[int, dict[str, Any]]] = []
        while parts and (len(taken) < n if n is not None else not part_items[parts[0][0]]):
            taken.append(parts.pop(0))
        items.append(_message(taken, pieces, refusals, messages in strings))
        messages += 1

    def server_result(call: dict[str, Any]) -> tuple[int, dict[str, Any]] | None:
        for entry in results:
            if entry[1]["call_id"] == call["call_id"]:
                results.remove(entry)
                return entry
        return None

    for letter in layout:
        if letter == "m" and (parts or (counts and messages < len(counts) and counts[messages] == 0)):
            message(counts[messages] if messages < len(counts) and "j" in options else None)
        elif letter == "p" and parts:
            items += _item_part(parts.pop(0)[1], pieces)
        elif letter in "cst" and calls:
            k, call = calls.pop(0)
            kind = call_types[k] if k < len(call_types) else "function_call"
            answer = server_result(call) if letter == "s" and kind in SERVER_CALLS else None
            items.append(_call(call, kind, answer[1] if answer else None, pieces, spaced, k in by_item_id))
        elif letter == "r" and results:
            k, result = results.pop(0)
            kind = result_types[k] if k < len(result_types) else "function_call_output"
            items.append(_output(result, kind if kind in OUTPUTS else "function_call_output", pieces, k in as_list))
    # pieces an edit added, in the canonical order
    while parts:
        if part_items[parts[0][0]]:
            items += _item_part(parts.pop(0)[1], pieces)
        else:
            message(None)
    for k, call in calls:
        kind = call_types[k] if k < len(call_types) else "function_call"
        answer = server_result(call) if kind in SERVER_CALLS else None
        items.append(_call(call, kind, answer[1] if answer else None, pieces, spaced, k in by_item_id))
    for k, result in results:
        kind = result_types[k] if k < len(result_types) else "function_call_output"
        items.append(_output(result, kind if kind in OUTPUTS else "function_call_output", pieces, k in as_list))
    if options.get("u") and len(items) == 1:
        return items[0]
    return items


def _item_part(part: dict[str, Any], pieces: Pieces) -> list[Any]:
    if part["kind"] == "structured":
        return [part["value"]]
    if part["kind"] == "opaque":
        return opaque_value(part, pieces.resources)
    return [_message([(0, part)], pieces, set(), False)]


def _message(parts: list[tuple[int, dict[str, Any]]], pieces: Pieces, refusals: set[int], string: bool) -> Any:
    role = pieces.role if pieces.role in ("user", "assistant", "system", "developer") else "user"
    text_type = "output_text" if role == "assistant" else "input_text"
    if string and len(parts) == 1 and parts[0][1]["kind"] == "text":
        return {"type": "message", "role": role, "content": parts[0][1]["text"]}
    content = []
    for k, part in parts:
        if k in refusals and part["kind"] == "text":
            content.append({"type": "refusal", "refusal": part["text"]})
        else:
            content += _content(part, pieces, text_type)
    return {"type": "message", "role": role, "content": content}


def _content(part: dict[str, Any], pieces: Pieces, text_type: str = "input_text") -> list[Any]:
    kind = part["kind"]
    if kind == "text":
        block: dict[str, Any] = {"type": text_type, "text": part["text"]}
        if text_type == "output_text":
            block["annotations"] = part.get("annotations", [])
        return [block]
    if kind == "structured":
        return [part["value"]]
    if kind == "opaque":
        return opaque_value(part, pieces.resources)
    if kind == "resource":
        res = pieces.resources.get(part["resource_id"])
        return [] if res is None else [_media(res)]
    return []


def _source(res: dict[str, Any]) -> tuple[str, str]:
    """(key, value) of a resource as a content part names it: a data URL, a URL or a file id."""
    if res.get("availability") == "embedded" and "data" in res:
        return "data", f"data:{res['media_type']};base64,{res['data']}"
    locator = str(res.get("locator", ""))
    return ("url", locator) if locator.startswith(("http://", "https://", "data:")) else ("file_id", locator)


def _media(res: dict[str, Any]) -> dict[str, Any]:
    rid = res["id"]
    how, value = _source(res)
    if "/input_audio/" in rid and how == "data":
        return {"type": "input_audio", "input_audio": {"data": res["data"], "format": res["media_type"][6:]}}
    if "/input_file/" in rid:
        out = {"type": "input_file", {"data": "file_data", "url": "file_url"}.get(how, "file_id"): value}
        if "name" in res:
            out["filename"] = res["name"]
        return out
    kind = "computer_screenshot" if "/computer_screenshot/" in rid else "input_image"
    return {"type": kind, "file_id" if how == "file_id" else "image_url": value}


def _call(call: dict[str, Any], kind: str, result: dict[str, Any] | None, pieces: Pieces, spaced: bool,
          by_item_id: bool = False) -> Any:
    server = kind in SERVER_CALLS
    tool, form = (SERVER_CALLS if server else CALLS).get(kind, (None, "json"))
    arguments = call.get("arguments")
    out: dict[str, Any] = {"type": kind, "id" if server or by_item_id else "call_id": call["call_id"]}
    if tool is None:
        out["name"] = call["tool_id"]
    if form == "json":
        out["arguments"] = json_text(arguments, spaced)
    elif form == "input":
        out["input"] = arguments if isinstance(arguments, str) else json_text(arguments, spaced)
    elif form == "object":
        out["arguments"] = arguments
    elif isinstance(arguments, dict):
        out.update(arguments)
    if result is not None:
        out.update(_server_outcome(kind, result, pieces))
    return out


def _server_outcome(kind: str, result: dict[str, Any], pieces: Pieces) -> dict[str, Any]:
    parts = result.get("parts", [])
    texts = [p["text"] for p in parts if p["kind"] == "text"]
    values = [p["value"] for p in parts if p["kind"] == "structured"]
    out: dict[str, Any] = {}
    if kind == "file_search_call" and values:
        out["results"] = values[0]
    elif kind == "code_interpreter_call":
        outputs: list[Any] = []
        for p in parts:
            if p["kind"] == "text":
                outputs.append({"type": "logs", "logs": p["text"]})
            elif p["kind"] == "resource" and (res := pieces.resources.get(p["resource_id"])) is not None:
                outputs.append({"type": "image", "url": _source(res)[1]})
            elif p["kind"] == "opaque":
                outputs += opaque_value(p, pieces.resources)
        out["outputs"] = outputs
    elif kind == "image_generation_call":
        for p in parts:
            if p["kind"] == "resource" and (res := pieces.resources.get(p["resource_id"])) is not None \
                    and "data" in res:
                out["result"] = res["data"]
        if texts:
            out["revised_prompt"] = "".join(texts)
    elif kind == "mcp_call":
        if texts:
            out["output"] = "".join(texts)
        if values:
            out["error"] = values[0]
    elif kind == "mcp_list_tools":
        out["tools"] = values[0] if values else []
        if texts:
            out["error"] = "".join(texts)
        return out  # no status field
    status = _STATUS.get(result.get("outcome", ""))
    if status is not None:
        out["status"] = status
    return out


def _output(result: dict[str, Any], kind: str, pieces: Pieces, as_list: bool) -> Any:
    out: dict[str, Any] = {"type": kind, "id" if kind == "local_shell_call_output" else "call_id": result["call_id"]}
    parts = result.get("parts", [])
    key = OUTPUTS[kind]
    if len(parts) == 1 and parts[0]["kind"] == "text" and not as_list:
        out[key] = parts[0]["text"]
    elif kind == "computer_call_output" and len(parts) == 1 and parts[0]["kind"] == "resource" \
            and (res := pieces.resources.get(parts[0]["resource_id"])) is not None:
        out[key] = _media(res)
    elif len(parts) == 1 and parts[0]["kind"] == "structured" and not as_list:
        out[key] = parts[0]["value"]
    elif parts or kind != "apply_patch_call_output":
        out[key] = [b for p in parts for b in _content(p, pieces)]
    if kind == "apply_patch_call_output" and (status := _STATUS.get(result.get("outcome", ""))) is not None:
        out["status"] = status
    return out
