"""OpenAI Chat Completions messages: ``{"role", "content", "tool_calls", "tool_call_id", ...}``
with string or part-list content and tool calls whose arguments are a JSON string; also the
SDK's response message (``ChatCompletionMessage.to_dict()``: ``annotations``, ``audio``,
``refusal``, nulls spelled out).

* content parts: text; refusal (a text part, marked in the style); image_url, input_audio and
  file (a resource: inline data embedded, a URL or a file id external, never fetched); any other
  part an opaque part in its place;
* ``refusal``: a text part; ``annotations``: a property of the text part they annotate;
  ``audio`` (a reference to audio the provider holds): a resource part, its transcript a text part;
* ``tool_calls`` (function and custom) and the legacy ``function_call``: tool calls; a tool
  message (``tool_call_id``, string or part-list content): a tool result; a legacy function
  message (role ``function``, the function's ``name``, string or null content): the result of
  the function_call it answers (the reader ties it to the last call made before it on its
  branch, when that call is of this function and unanswered), else a message as it reads.
"""

from __future__ import annotations

from typing import Any

from asif_convert import ir
from asif_convert._dialects.common import (
    Call,
    Pieces,
    Result,
    Split,
    block_type,
    embedded,
    external,
    json_text,
    opaque,
    opaque_value,
    parse_arguments,
    provider_file,
)

NAME = "openai-chat"
_KEYS = {"role", "content", "tool_calls", "tool_call_id", "name", "refusal", "function_call", "audio", "annotations"}
_PART_TYPES = ("text", "image_url", "input_audio", "file", "refusal")  # a tuple: an unhashable "type" must not fail
# input_audio formats and their media types, both ways
_AUDIO = {"wav": "audio/wav", "mp3": "audio/mpeg"}
_AUDIO_FORMATS = {v: k for k, v in _AUDIO.items()}
# a resource's id says which part it came from (the renderer reads it back): <message id>/<segment>/<k>
_SEGMENTS = {"image_url": "image", "input_audio": "input_audio", "file": "file"}


def detect(content: Any) -> bool:
    if not (isinstance(content, dict) and isinstance(content.get("role"), str) and content.keys() <= _KEYS):
        return False
    body = content.get("content")
    parts_ok = body is None or isinstance(body, str) or (
        isinstance(body, list) and all(isinstance(p, dict) and isinstance(p.get("type"), str) for p in body)
        and (not body or any(p["type"] in _PART_TYPES for p in body)))
    calls = content.get("tool_calls")
    calls_ok = calls is None or (isinstance(calls, list) and all(_is_call(c) or _is_custom(c) for c in calls))
    return parts_ok and calls_ok


def _is_call(c: Any) -> bool:
    fn = c.get("function") if isinstance(c, dict) else None
    return (fn is not None and c.get("type", "function") == "function" and _nonempty(c.get("id"))
            and isinstance(fn, dict) and _nonempty(fn.get("name")) and isinstance(fn.get("arguments"), str))


def _is_custom(c: Any) -> bool:
    if not isinstance(c, dict):
        return False
    custom = c.get("custom")
    return (c.get("type") == "custom" and _nonempty(c.get("id")) and isinstance(custom, dict)
            and _nonempty(custom.get("name")) and isinstance(custom.get("input"), str))


def _nonempty(value: Any) -> bool:
    return isinstance(value, str) and value != ""


def split(content: dict[str, Any], role: str, message_id: str) -> Split:
    parts: list[ir.Part] = []
    out = Split(dialect=NAME, parts=parts)
    body = content.get("content")
    call_id = content.get("tool_call_id")
    if isinstance(call_id, str) and call_id and (body is None or isinstance(body, str | list)):
        # a tool result: its content is the result's parts
        result = Result(call_id=call_id, outcome="unknown", parts=[])
        out.results.append(result)
        if isinstance(body, str):
            result.parts.append(ir.TextPart(text=body))
        elif isinstance(body, list):
            for p in body:
                _part(p, out, message_id, result.parts)
            out.options["p"] = 1  # content as a part list
    elif isinstance(body, str):
        parts.append(ir.TextPart(text=body))
    elif isinstance(body, list):
        for p in body:
            _part(p, out, message_id, parts)
        if len(body) == 1 and parts and isinstance(parts[0], ir.TextPart) and "q" not in out.options:
            out.options["p"] = 1  # one text part, written as a list
    annotations = content.get("annotations")
    if isinstance(annotations, list) and isinstance(body, str) and not out.results:
        parts[0].unknown = {"annotations": annotations}  # (a string body is the first part) what they annotate
    refusal = content.get("refusal")
    if isinstance(refusal, str) and not out.results:
        out.options["r"] = len(parts)  # what the model said instead of answering: a text part too
        parts.append(ir.TextPart(text=refusal))
    audio = content.get("audio")
    if isinstance(audio, dict) and _nonempty(audio.get("id")) and not out.results:
        # audio the provider holds for the conversation, by id; its transcript is what it says
        res = provider_file(f"{message_id}/audio/{len(out.resources)}", audio["id"])
        res.explanation = "Audio held by the model provider, referenced by its id; never fetched."
        out.resources.append(res)
        out.options["v"] = len(parts)
        parts.append(ir.ResourcePart(resource_id=res.id))
        if isinstance(audio.get("transcript"), str):
            out.options["x"] = len(parts)
            parts.append(ir.TextPart(text=audio["transcript"]))
    _calls(content, out, message_id)
    if content.get("role") == "function" and _nonempty(content.get("name")) \
            and (body is None or isinstance(body, str)) and not out.results and not out.calls:
        out.answers = content["name"]  # the legacy result of a function_call: it names the function, not the call
    out.exact = _exact(content, role, out)
    if not out.parts and (out.calls or out.results):
        out.parts = None
    return out


_TOOL_MESSAGE = ["role", "tool_call_id", "content"]
_CALL, _FUNCTION = ["id", "type", "function"], ["name", "arguments"]


def _exact(content: dict[str, Any], role: str, out: Split) -> bool:
    """Whether ``render`` gives this message back as it is: a tool message with text content,
    or a message of the record's role with text (or null) content and, if any, function tool
    calls whose arguments are written as the rendering writes them, each with exactly the keys
    the rendering writes, in its order. Anything else is rendered to find out."""
    keys = list(content)
    if out.results:
        return keys == _TOOL_MESSAGE and content["role"] == "tool" and isinstance(content["content"], str)
    if keys[:2] != ["role", "content"] or content["role"] != role or not (
            isinstance(content["content"], str) or content["content"] is None):
        return False
    if keys == ["role", "content"]:
        return True
    calls = content["tool_calls"] if keys == ["role", "content", "tool_calls"] else None
    if not calls or len(calls) != len(out.calls):  # (an empty list is not written back)
        return False
    spaced = out.options.get("a") == "spaced"
    return all(list(c) == _CALL and c["type"] == "function" and list(c["function"]) == _FUNCTION
               and call.status == "complete" and json_text(call.arguments, spaced) == c["function"]["arguments"]
               for c, call in zip(calls, out.calls, strict=True))


def _calls(content: dict[str, Any], out: Split, message_id: str) -> None:
    spaced = False
    for c in content.get("tool_calls") or ():
        if c.get("type") == "custom":  # free-form input: the arguments are that string
            out.options.setdefault("c", []).append(len(out.calls))
            out.calls.append(Call(call_id=c["id"], name=c["custom"]["name"], arguments=c["custom"]["input"],
                                  status="complete"))
            continue
        arguments, status = parse_arguments(c["function"]["arguments"])
        spaced = spaced or _spaced(arguments, status, c["function"]["arguments"])
        out.calls.append(Call(call_id=c["id"], name=c["function"]["name"], arguments=arguments, status=status))
    legacy = content.get("function_call")
    if isinstance(legacy, dict) and _nonempty(legacy.get("name")) and isinstance(legacy.get("arguments"), str) \
            and not out.results:
        # the legacy form of one tool call: it has no id, so the call is named after its message
        arguments, status = parse_arguments(legacy["arguments"])
        spaced = spaced or _spaced(arguments, status, legacy["arguments"])
        out.calls.append(Call(call_id=f"{message_id}/function_call", name=legacy["name"], arguments=arguments,
                              status=status))
        out.by_name = out.calls[-1].call_id  # what the next function message answers
        out.options["f"] = 1
    if spaced:
        out.options["a"] = "spaced"


def _spaced(arguments: Any, status: str, text: str) -> bool:
    return status == "complete" and json_text(arguments, True) == text and json_text(arguments, False) != text


def _part(p: dict[str, Any], out: Split, mid: str, parts: list[ir.Part]) -> None:
    kind = p["type"]
    if kind == "text" and isinstance(p.get("text"), str):
        parts.append(ir.TextPart(text=p["text"]))
        return
    if kind == "refusal" and isinstance(p.get("refusal"), str) and parts is out.parts:
        out.options.setdefault("q", []).append(len(parts))  # a refusal part: shown as text
        parts.append(ir.TextPart(text=p["refusal"]))
        return
    res = _media(p, f"{mid}/{_SEGMENTS.get(kind, kind)}/{len(out.resources)}")
    if res is not None:
        out.resources.append(res)
        # a file's name is something the reader sees: the part's description says it too
        parts.append(ir.ResourcePart(resource_id=res.id, description=res.name))
        return
    parts.append(opaque(out, p, block_type(p), f"{mid}/opaque/{len(out.resources)}"))


def _media(p: dict[str, Any], rid: str) -> ir.Resource | None:
    kind, body = p["type"], p.get(p["type"])
    if not isinstance(body, dict):
        return None
    if kind == "image_url" and _nonempty(body.get("url")):
        return _data_url(body["url"], rid) if body["url"].startswith("data:") else external(rid, body["url"])
    if kind == "input_audio" and isinstance(body.get("data"), str) and body.get("format") in _AUDIO:
        return embedded(rid, _AUDIO[body["format"]], body["data"])
    if kind == "file" and body.keys() <= {"file_id", "file_data", "filename"}:
        if _nonempty(body.get("file_id")) and "file_data" not in body:
            res = provider_file(rid, body["file_id"])
        elif isinstance(body.get("file_data"), str) and "file_id" not in body:
            data = body["file_data"]
            found = _data_url(data, rid) if data.startswith("data:") \
                else embedded(rid, "application/octet-stream", data)
            if found is None:
                return None
            res = found
        else:
            return None
        if isinstance(body.get("filename"), str):
            res.name = body["filename"]
        return res
    return None


def _data_url(url: str, rid: str) -> ir.Resource | None:
    head, sep, data = url[5:].partition(",")
    media_type, _, encoding = head.partition(";")
    if sep and encoding == "base64" and media_type:
        return embedded(rid, media_type, data)
    return None


# -- canonical rendering ------------------------------------------------------------------------


def render(pieces: Pieces, options: dict[str, Any]) -> Any:
    """The message the Chat Completions API would hold for these pieces, in ``options``' style."""
    if pieces.results and not pieces.parts and not pieces.calls and options.get("k"):
        return _function_message(pieces.results[0], pieces)
    if pieces.results and not pieces.parts and not pieces.calls:
        result = pieces.results[0]
        out: dict[str, Any] = {"role": "tool", "tool_call_id": result["call_id"]}
        parts = result.get("parts", [])
        if options.get("p"):
            out["content"] = [b for p in parts for b in _render_part(p, pieces)]
        else:
            texts = [p["text"] for p in parts if p["kind"] == "text"]
            if texts:
                out["content"] = "".join(texts)
        return out
    out = {"role": pieces.role}
    parts = list(pieces.parts)
    taken = _take(parts, options, ("r", "v", "x"))  # the parts that are the message's refusal and audio
    refusals = set(options.get("q", ()))
    if len(parts) == 1 and parts[0]["kind"] == "text" and not options.get("p") and not refusals:
        out["content"] = parts[0]["text"]
        if "annotations" in parts[0]:
            out["annotations"] = parts[0]["annotations"]
    elif parts:
        out["content"] = [b for k, p in enumerate(parts) for b in
                          ([{"type": "refusal", "refusal": p["text"]}] if k in refusals and p["kind"] == "text"
                           else _render_part(p, pieces))]
    else:
        out["content"] = None
    if "r" in taken:
        out["refusal"] = taken["r"]["text"]
    if "v" in taken:
        res = pieces.resources.get(taken["v"]["resource_id"], {})
        out["audio"] = {"id": res.get("locator", "")}
        if "x" in taken:
            out["audio"]["transcript"] = taken["x"]["text"]
    _render_calls(pieces, options, out)
    return out


def _function_message(result: dict[str, Any], pieces: Pieces) -> dict[str, Any]:
    """The legacy function message of a result: the function's name (its call's tool) and the
    result's texts as its content (null when it has none)."""
    texts = [p["text"] for p in result.get("parts", []) if p["kind"] == "text"]
    return {"role": "function", "name": pieces.names.get(result["call_id"], ""),
            "content": "".join(texts) if texts else None}


def _take(parts: list[dict[str, Any]], options: dict[str, Any], keys: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """Remove from ``parts`` those the style names by position (as the reader counted them,
    each before the next was added) when they still have the kind they had."""
    kinds = {"r": "text", "v": "resource", "x": "text"}
    at = {k: options[k] for k in keys if isinstance(options.get(k), int)}
    found = {k: parts[i] for k, i in at.items() if i < len(parts) and parts[i]["kind"] == kinds[k]}
    for i in sorted((at[k] for k in found), reverse=True):
        del parts[i]
    return found


def _render_calls(pieces: Pieces, options: dict[str, Any], out: dict[str, Any]) -> None:
    spaced = options.get("a") == "spaced"
    calls = list(pieces.calls)
    legacy = calls.pop() if options.get("f") and calls else None
    custom = set(options.get("c", ()))
    if calls:
        out["tool_calls"] = [
            {"id": c["call_id"], "type": "custom", "custom": {"name": c["tool_id"], "input": c.get("arguments")}}
            if k in custom else
            {"id": c["call_id"], "type": "function",
             "function": {"name": c["tool_id"], "arguments": json_text(c.get("arguments"), spaced)}}
            for k, c in enumerate(calls)]
    if legacy is not None:
        out["function_call"] = {"name": legacy["tool_id"], "arguments": json_text(legacy.get("arguments"), spaced)}


def _render_part(part: dict[str, Any], pieces: Pieces) -> list[Any]:
    kind = part["kind"]
    if kind == "text":
        return [{"type": "text", "text": part["text"]}]
    if kind == "structured":
        return [part["value"]]
    if kind == "opaque":
        return opaque_value(part, pieces.resources)
    if kind == "resource":
        res = pieces.resources.get(part["resource_id"])
        return [] if res is None else [_resource_part(res, part.get("description"))]
    return []


def _resource_part(res: dict[str, Any], description: str | None) -> dict[str, Any]:
    """The part of a resource: a file when the reader's resource id says so (its filename the
    part's description), audio for inline wav or mp3 audio, else an image."""
    embedded_data = res.get("availability") == "embedded" and "data" in res
    if "/file/" in res["id"]:
        body: dict[str, Any] = {}
        if embedded_data:
            data = res["data"]
            body["file_data"] = data if res["media_type"] == "application/octet-stream" \
                else f"data:{res['media_type']};base64,{data}"
        else:
            body["file_id"] = res.get("locator", "")
        if description is not None:
            body["filename"] = description
        return {"type": "file", "file": body}
    if embedded_data and res["media_type"] in _AUDIO_FORMATS:
        audio = {"data": res["data"], "format": _AUDIO_FORMATS[res["media_type"]]}
        return {"type": "input_audio", "input_audio": audio}
    if embedded_data:
        url = f"data:{res['media_type']};base64,{res['data']}"
    else:
        url = res.get("locator", "")
    return {"type": "image_url", "image_url": {"url": url}}


def restate(content: Any, pieces: Pieces) -> Any:
    """A first release's template, filled, with each call's function name as the ASIF records
    now say it (those documents kept it verbatim: docs/decisions.md, 48)."""
    names = {c["call_id"]: c["tool_id"] for c in pieces.calls}
    calls = content.get("tool_calls") if isinstance(content, dict) else None
    for call in calls if isinstance(calls, list) else ():
        if isinstance(call, dict) and call.get("id") in names:
            for key in ("function", "custom"):
                if isinstance(call.get(key), dict) and "name" in call[key]:
                    call[key]["name"] = names[call["id"]]
    return content
