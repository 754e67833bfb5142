"""Anthropic Messages content blocks. content_json is the block list, or a message object holding
it (``{"role", "content"}``, or the SDK's whole response ``Message`` with its id, model, stop
reason and usage, which the difference keeps).

* text (its citations a property of its part), thinking and redacted_thinking (private
  reasoning), image and document (a resource for every source: base64 and text embedded, the
  content of a ``content`` source embedded as JSON, a URL or a Files API id external, never
  fetched), search_result (a structured part), container_upload (an external resource);
* tool_use, server_tool_use (a tool the provider runs) and mcp_tool_use (a tool of an MCP
  server the provider calls) as tool calls; tool_result, mcp_tool_result and the server tools'
  results (web search, web fetch, code execution, bash and text-editor code execution, tool
  search) as tool results;
* any other block, or a known one in a shape this module cannot map, an opaque part in its place.
"""

from __future__ import annotations

from typing import Any

import msgspec

from asif_convert import ir
from asif_convert._dialects.common import (
    REASONING,
    Call,
    Pieces,
    Result,
    Split,
    block_type,
    embedded,
    embedded_text,
    external,
    opaque,
    opaque_value,
    provider_file,
)
from asif_convert._limits import json_in_text

NAME = "anthropic-messages"
PROVIDER = "anthropic"  # the server identity of the tools Anthropic runs itself
RESULT_OBJECT = f"{NAME}/tool_result-object"  # structured-part schema of a tool result's object content
SEARCH_RESULT = f"{NAME}/search_result"  # structured-part schema of a search_result block
# the result blocks of the tools the provider runs (advisor_tool_result: a beta); each one's
# content is a structured part of schema <NAME>/<block type>, and an error object (a type
# ending in _error) is an error outcome
SERVER_RESULTS = ("web_search_tool_result", "web_fetch_tool_result", "code_execution_tool_result",
                  "bash_code_execution_tool_result", "text_editor_code_execution_tool_result",
                  "tool_search_tool_result", "advisor_tool_result")
_CALLS = ("tool_use", "server_tool_use", "mcp_tool_use")
_RESULTS = ("tool_result", "mcp_tool_result", *SERVER_RESULTS)
# a tuple, not a set: a "type" that is an object or an array must not match (nor fail to hash)
_TYPES = ("text", "thinking", "redacted_thinking", "image", "document", "search_result", "container_upload",
          *_CALLS, *_RESULTS)
_MEDIA = ("image", "document", "container_upload")  # blocks that become a resource part


# the keys of a message object: a request's, or the SDK's response Message (a tuple: see _TYPES)
_MESSAGE_KEYS = ("role", "content", "id", "type", "model", "stop_reason", "stop_sequence", "stop_details", "usage",
                 "container", "diagnostics", "context_management")


def detect(content: Any) -> bool:
    """A non-empty list of typed blocks (or a message object around one), at least one of
    them a type this dialect knows. A message object has the Messages API's roles and keys
    only: one with a tool_call_id or tool_calls, say, is another dialect's."""
    if isinstance(content, dict):
        if content.get("role") not in ("user", "assistant") or not all(k in _MESSAGE_KEYS for k in content):
            return False
        content = content.get("content")
    blocks = content
    return (isinstance(blocks, list) and bool(blocks)
            and all(isinstance(b, dict) and isinstance(b.get("type"), str) for b in blocks)
            and any(b["type"] in _TYPES for b in blocks))


def split(content: Any, role: str, message_id: str) -> Split:
    parts: list[ir.Part] = []
    out = Split(dialect=NAME, parts=parts)
    wrapped = isinstance(content, dict)
    blocks = content["content"] if wrapped else content
    order = "".join(_block(b, out, message_id, parts) for b in blocks)
    out.exact = not wrapped and all(map(_exact, blocks))
    if wrapped:
        out.options["w"] = 1
    if order != "".join(sorted(order, key="pcr".index)):  # not all parts, then calls, then results
        out.options["o"] = order
    if not out.parts and (out.calls or out.results):
        out.parts = None
    return out


def _block(b: dict[str, Any], out: Split, mid: str, parts: list[ir.Part], top: bool = True) -> str:
    """Map one block into the pieces; returns what it became: a part (p), a call (c), a result (r)."""
    kind = b["type"]
    if kind == "text" and isinstance(b.get("text"), str):
        # citations stay attached to the text they support, as a property of its part
        cited = {"citations": b["citations"]} if "citations" in b else {}
        parts.append(ir.TextPart(text=b["text"], unknown=cited))
        return "p"
    if kind in ("thinking", "redacted_thinking"):
        parts.append(ir.StructuredPart(schema=REASONING, value=b))
        return "p"
    if kind == "search_result" and isinstance(b.get("content"), list):
        parts.append(ir.StructuredPart(schema=SEARCH_RESULT, value=b))
        return "p"
    if kind in _MEDIA:
        rid = f"{mid}/{kind}/{len(out.resources)}"
        res = _media(b["source"], rid) if isinstance(b.get("source"), dict) \
            else provider_file(rid, b["file_id"]) if kind == "container_upload" and _nonempty(b.get("file_id")) \
            else None
        if res is not None:
            if kind == "document" and _nonempty(b.get("title")):  # (what the API shows the model of it)
                res.name = b["title"]
            out.resources.append(res)
            parts.append(ir.ResourcePart(resource_id=res.id))
            return "p"
    if top and kind in _CALLS and _nonempty(b.get("id")) and _nonempty(b.get("name")) and "input" in b \
            and (kind != "mcp_tool_use" or _nonempty(b.get("server_name"))):  # (ASIF ids are never empty)
        server = PROVIDER if kind == "server_tool_use" else f"mcp:{b['server_name']}" if kind == "mcp_tool_use" \
            else None
        if server is not None:
            out.options.setdefault("s" if kind == "server_tool_use" else "m", []).append(len(out.calls))
        out.calls.append(Call(call_id=b["id"], name=b["name"], arguments=b["input"], status="complete",
                              server=server))
        return "c"
    if top and kind in ("tool_result", "mcp_tool_result") and _nonempty(b.get("tool_use_id")):
        _result(b, out, mid)
        return "r"
    if top and kind in SERVER_RESULTS and _nonempty(b.get("tool_use_id")) and "content" in b:
        body = b["content"]
        failed = isinstance(body, dict) and isinstance(body.get("type"), str) and body["type"].endswith("_error")
        out.results.append(Result(call_id=b["tool_use_id"], outcome="error" if failed else "success",
                                  parts=[ir.StructuredPart(schema=f"{NAME}/{kind}", value=body)], server=PROVIDER))
        return "r"
    parts.append(opaque(out, b, block_type(b), f"{mid}/opaque/{len(out.resources)}"))
    return "p"


# the keys, in order, of the blocks the rendering gives back exactly (see ``_exact``)
_TEXT, _CITED_TEXT = ["type", "text"], ["type", "text", "citations"]
_TOOL_USE = ["type", "id", "name", "input"]
_TOOL_RESULT, _TOOL_ERROR = ["type", "tool_use_id", "content"], ["type", "tool_use_id", "content", "is_error"]
# a result block's keys in the rendering's order, and the letter each has in a recorded order
_RESULT_KEYS = _TOOL_ERROR
_RESULT_KEY_ORDER = "tuce"
_RESULT_KEY_LETTERS = dict(zip(_RESULT_KEYS, _RESULT_KEY_ORDER, strict=True))
_RESULT_KEY_NAMES = dict(zip(_RESULT_KEY_ORDER, _RESULT_KEYS, strict=True))


def _exact(b: dict[str, Any]) -> bool:
    """Whether ``render`` gives this (top-level) block back as it is: a part ``_exact_part``
    vouches for, a tool_use, or a tool_result whose content is a text or a list of such parts
    and whose is_error, if any, is a boolean, each with exactly the keys the rendering writes,
    in its order (a result's order, in any: the split records it). ``_block`` maps each of them
    to one piece whose rendering is that block; anything else is rendered to find out."""
    kind = b["type"]
    if kind == "tool_use":
        return list(b) == _TOOL_USE and _nonempty(b["id"]) and _nonempty(b["name"])
    if kind == "tool_result":
        keys = sorted(b, key=lambda key: _RESULT_KEYS.index(key) if key in _RESULT_KEYS else -1)
        if not ((keys == _TOOL_RESULT or (keys == _TOOL_ERROR and type(b["is_error"]) is bool))
                and _nonempty(b["tool_use_id"])):
            return False
        content = b["content"]
        return isinstance(content, str) or (isinstance(content, list) and all(
            isinstance(x, dict) and isinstance(x.get("type"), str) and _exact_part(x) for x in content))
    return _exact_part(b)


def _exact_part(b: dict[str, Any]) -> bool:
    """Whether a block that becomes a part renders back as it is: a text (with or without
    citations; exactly those keys, in that order), or a reasoning or search_result block (the
    part holds the block itself)."""
    kind = b["type"]
    if kind == "text":
        keys = list(b)
        return (keys == _TEXT or keys == _CITED_TEXT) and isinstance(b["text"], str)
    return kind in ("thinking", "redacted_thinking") or (kind == "search_result" and isinstance(b.get("content"), list))


def _result(b: dict[str, Any], out: Split, mid: str) -> None:
    """A tool_result or mcp_tool_result block: its content (a string, a block list, an object)
    becomes the result's parts, its is_error the outcome."""
    outcome: ir.ToolOutcome = "error" if b.get("is_error") is True else "success"
    server = None
    k = len(out.results)
    if b["type"] == "mcp_tool_result":
        out.options.setdefault("n", []).append(k)
        server = next((c.server for c in out.calls if c.call_id == b["tool_use_id"] and c.server), "mcp")
    result = Result(call_id=b["tool_use_id"], outcome=outcome, parts=[], server=server)
    out.results.append(result)
    order = "".join(_RESULT_KEY_LETTERS.get(key, "?") for key in b)
    if "?" not in order and order != "".join(sorted(order, key=_RESULT_KEY_ORDER.index)):
        keyed = out.options.setdefault("R", [])  # (the client writes tool_use_id first)
        keyed += [""] * (k - len(keyed)) + [order]
    if b.get("is_error") is False:
        out.options.setdefault("e", []).append(k)  # says is_error: false, where absent means the same
    body = b.get("content")
    if isinstance(body, str):
        result.parts.append(ir.TextPart(text=body))
    elif isinstance(body, list) and all(isinstance(x, dict) and isinstance(x.get("type"), str) for x in body):
        for x in body:
            _block(x, out, mid, result.parts, top=False)
        out.options.setdefault("l", []).append(k)  # content as a block list, not a string
    elif isinstance(body, dict):  # an object: what the tool returned, as structured data
        result.parts.append(ir.StructuredPart(schema=RESULT_OBJECT, value=body))


def _nonempty(value: Any) -> bool:
    return isinstance(value, str) and value != ""


def _media(source: dict[str, Any], rid: str) -> ir.Resource | None:
    kind = source.get("type")
    if kind == "base64" and isinstance(source.get("data"), str) and isinstance(source.get("media_type"), str):
        return embedded(rid, source["media_type"], source["data"])
    if kind == "url" and _nonempty(source.get("url")):
        return external(rid, source["url"])
    if kind == "file" and _nonempty(source.get("file_id")):
        return provider_file(rid, source["file_id"])
    if kind == "text" and isinstance(source.get("data"), str) and _nonempty(source.get("media_type")) \
            and source["media_type"] != CONTENT_MEDIA_TYPE:
        return embedded_text(rid, source["media_type"], source["data"])
    if kind == "content" and isinstance(source.get("content"), str | list):
        # a document given as content blocks: the resource holds them as JSON, as they were
        return embedded_text(rid, CONTENT_MEDIA_TYPE, msgspec.json.encode(source["content"]).decode())
    return None


CONTENT_MEDIA_TYPE = "application/json"  # the resource of a document whose source is of type content


# -- canonical rendering ------------------------------------------------------------------------


def render(pieces: Pieces, options: dict[str, Any]) -> Any:
    """The content_json the Messages API would hold for these pieces, in ``options``' style."""
    parts = [b for p in pieces.parts for b in _part(p, pieces)]
    server, mcp = set(options.get("s", ())), set(options.get("m", ()))
    calls = [{"type": "server_tool_use" if k in server else "mcp_tool_use" if k in mcp else "tool_use",
              "id": c["call_id"], "name": c["tool_id"], "input": c.get("arguments")}
             for k, c in enumerate(pieces.calls)]
    as_list = set(options.get("l", ()))
    explicit = set(options.get("e", ()))
    mcp_results = set(options.get("n", ()))
    orders = options.get("R", ())
    results = [_render_result(r, pieces, k in as_list, k in explicit, k in mcp_results,
                              orders[k] if k < len(orders) else "")
               for k, r in enumerate(pieces.results)]
    order = options.get("o")
    if order:
        queues = {"p": iter(parts), "c": iter(calls), "r": iter(results)}
        blocks = [b for kind in order if (b := next(queues[kind], None)) is not None]
        blocks += [*queues["p"], *queues["c"], *queues["r"]]  # pieces an edit added
    else:
        blocks = parts + calls + results
    return {"role": pieces.role, "content": blocks} if options.get("w") else blocks


def _part(part: dict[str, Any], pieces: Pieces) -> list[Any]:
    kind = part["kind"]
    if kind == "text":
        block = {"type": "text", "text": part["text"]}
        if "citations" in part:
            block["citations"] = part["citations"]
        return [block]
    if kind == "structured":
        return [part["value"]]
    if kind == "opaque":
        return opaque_value(part, pieces.resources)
    if kind == "resource":
        res = pieces.resources.get(part["resource_id"])
        return [] if res is None else [_resource_block(res)]
    return []  # a part this dialect has no block for: the residual or a loss says so


def _resource_block(res: dict[str, Any]) -> dict[str, Any]:
    """The block of a resource part: what the reader's resource id says it came from (a
    document, a container upload, else an image), its source from the resource's fields."""
    rid = res["id"]
    if "/container_upload/" in rid:
        return {"type": "container_upload", "file_id": res.get("locator", "")}
    media = "document" if res["media_type"] == "application/pdf" or "/document/" in rid else "image"
    source: dict[str, Any]
    if res.get("availability") == "embedded" and "data" in res:
        source = {"type": "base64", "media_type": res["media_type"], "data": res["data"]}
    elif res.get("availability") == "embedded" and isinstance(res.get("text"), str):
        source = _text_source(res)
    elif "://" in res.get("locator", "://"):
        source = {"type": "url", "url": res.get("locator", "")}
    else:  # an id of the provider's Files API
        source = {"type": "file", "file_id": res["locator"]}
    return titled({"type": media, "source": source}, res.get("name"))


def titled(block: dict[str, Any], name: Any) -> dict[str, Any]:
    """A media block with its resource's name as its title, when it is a document (the API
    shows the model a document's title; an image has none) and the name is a non-empty string."""
    if block["type"] == "document" and isinstance(name, str) and name:
        block["title"] = name
    return block


def _text_source(res: dict[str, Any]) -> dict[str, Any]:
    if res["media_type"] == CONTENT_MEDIA_TYPE:
        try:
            return {"type": "content", "content": json_in_text(res["text"])}
        except ValueError:
            pass  # an edit that is no longer JSON: the text as it is
    return {"type": "text", "media_type": res["media_type"], "data": res["text"]}


def _render_result(result: dict[str, Any], pieces: Pieces, as_list: bool, explicit: bool,
                   mcp: bool, order: str = "") -> dict[str, Any]:
    parts = result.get("parts", [])
    if len(parts) == 1 and parts[0]["kind"] == "structured" and parts[0]["schema"].startswith(f"{NAME}/") \
            and parts[0]["schema"].removeprefix(f"{NAME}/") in SERVER_RESULTS:
        return {"type": parts[0]["schema"].removeprefix(f"{NAME}/"), "tool_use_id": result["call_id"],
                "content": parts[0]["value"]}
    out: dict[str, Any] = {"type": "mcp_tool_result" if mcp else "tool_result", "tool_use_id": result["call_id"]}
    if len(parts) == 1 and parts[0]["kind"] == "text" and not as_list:
        out["content"] = parts[0]["text"]
    elif len(parts) == 1 and parts[0]["kind"] == "structured" and parts[0]["schema"] == RESULT_OBJECT \
            and isinstance(parts[0]["value"], dict) and not as_list:
        out["content"] = parts[0]["value"]
    elif parts or as_list:
        out["content"] = [b for p in parts for b in _part(p, pieces)]
    if result.get("outcome") == "error":
        out["is_error"] = True
    elif explicit:
        out["is_error"] = False
    if order:  # the keys in the original's order (an edit's new key after them)
        out = {**{_RESULT_KEY_NAMES[c]: out[_RESULT_KEY_NAMES[c]] for c in order if _RESULT_KEY_NAMES[c] in out},
               **out}
    return out


def restate(content: Any, pieces: Pieces) -> Any:
    """A first release's template, filled, with what the ASIF records now say where the template
    held it as a literal: each call block's tool name, and each result's error flag (its
    outcome). Those documents kept the two verbatim, so an edit of either did not reach the
    content (docs/decisions.md, 48)."""
    blocks = content.get("content") if isinstance(content, dict) else content
    names = {c["call_id"]: c["tool_id"] for c in pieces.calls}
    outcomes = {r["call_id"]: r.get("outcome") for r in pieces.results}
    for block in blocks if isinstance(blocks, list) else ():
        if not isinstance(block, dict):
            continue
        if block.get("type") in ("tool_use", "server_tool_use", "mcp_tool_use") and block.get("id") in names:
            block["name"] = names[block["id"]]
        elif block.get("type") in ("tool_result", "mcp_tool_result") and block.get("tool_use_id") in outcomes:
            outcome = outcomes[block["tool_use_id"]]
            if outcome == "error":
                block["is_error"] = True
            elif outcome == "success" and "is_error" in block:
                block["is_error"] = False
    return content
