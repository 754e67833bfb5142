"""A mock model server for the real coding-agent clients: 127.0.0.1 only, an ephemeral port.

It records every request (path, headers, decoded JSON body) and answers each POST from a route
table: a route is a handler ``(Recorded) -> Reply``. The Anthropic Messages route is here; a
Codex ``/v1/responses`` handler plugs in the same way (``MockModelServer(routes={...})``).

A handler usually answers from a script: an ordered list of replies the test or the corpus
script wrote, consumed one per request the handler accepts. Requests that are no part of the
conversation (a client asking for a title, a quota probe) are answered by a handler's fallback,
so a script stays a list of the turns that matter.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Recorded:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any  # the decoded JSON body; the raw text when it is not JSON; None when empty


@dataclass
class Reply:
    """What the server answers: a JSON body, or server-sent events when ``events`` is set."""

    status: int = 200
    json_body: Any = None
    events: list[tuple[str, Any]] | None = None  # (event name, JSON data), in order
    headers: dict[str, str] = field(default_factory=dict)


Handler = Callable[[Recorded], Reply]


def not_found(request: Recorded) -> Reply:
    return Reply(status=404, json_body={"type": "error", "error": {"type": "not_found_error",
                                                                    "message": request.path}})


class MockModelServer:
    """A threaded HTTP server on 127.0.0.1 with an ephemeral port; ``stop()`` ends it.

    ``routes`` maps a request path (without query) to its handler; any other path gets ``default``
    (404 unless given). ``requests`` holds every request received, in arrival order.
    """

    def __init__(self, routes: dict[str, Handler] | None = None, default: Handler = not_found):
        self.routes: dict[str, Handler] = dict(routes or {})
        self.default = default
        self.requests: list[Recorded] = []
        self.errors: list[str] = []  # handler failures, so a test can show them
        self._lock = threading.Lock()
        self._httpd = _QuietServer(("127.0.0.1", 0), _make_handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="mock-model-server",
                                        daemon=True)

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> MockModelServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=10)

    def __enter__(self) -> MockModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def requests_to(self, path: str) -> list[Recorded]:
        with self._lock:
            return [r for r in self.requests if r.path == path]

    def answer(self, request: Recorded) -> Reply:
        with self._lock:
            self.requests.append(request)
        handler = self.routes.get(request.path, self.default)
        try:
            return handler(request)
        except Exception as exc:  # a broken script must show, not hang the client
            self.errors.append(f"{request.path}: {type(exc).__name__}: {exc}")
            return Reply(status=500, json_body={"type": "error", "error": {
                "type": "api_error", "message": f"mock: {type(exc).__name__}: {exc}"}})


class _QuietServer(ThreadingHTTPServer):
    """A client closing its connection early (it got what it needed) is no error worth a trace."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


def _make_handler(server: MockModelServer) -> type[BaseHTTPRequestHandler]:
    class _Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read .requests
            pass

        def _recorded(self) -> Recorded:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            body: Any = None
            if raw:
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = raw.decode("utf-8", "replace")
            return Recorded(self.command, self.path.split("?", 1)[0],
                            {k.lower(): v for k, v in self.headers.items()}, body)

        def _respond(self) -> None:
            reply = server.answer(self._recorded())
            if reply.events is not None:
                payload = b"".join(sse(name, data) for name, data in reply.events)
                content_type = "text/event-stream"
            else:
                payload = json.dumps(reply.json_body).encode() if reply.json_body is not None else b""
                content_type = "application/json"
            self.send_response(reply.status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            for key, value in reply.headers.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(payload)
            self.wfile.flush()

        do_POST = do_GET = do_PUT = do_DELETE = do_HEAD = _respond

    return _Handler


def sse(name: str, data: Any) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


# -- Anthropic Messages ------------------------------------------------------------------------

MODEL = "claude-sonnet-4-5-20250929"


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool_use(tool_id: str, name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}


def thinking(value: str, signature: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": value, "signature": signature}


def anthropic_message(blocks: Iterable[dict[str, Any]], message_id: str, model: str = MODEL,
                      stop_reason: str | None = None) -> dict[str, Any]:
    """A whole Messages API response for ``blocks``; the stop reason follows from them."""
    content = list(blocks)
    if stop_reason is None:
        stop_reason = "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn"
    return {"id": message_id, "type": "message", "role": "assistant", "model": model,
            "content": content, "stop_reason": stop_reason, "stop_sequence": None,
            "usage": {"input_tokens": 100, "output_tokens": 20, "cache_creation_input_tokens": 0,
                      "cache_read_input_tokens": 0}}


def anthropic_events(message: dict[str, Any]) -> list[tuple[str, Any]]:
    """The server-sent events that stream ``message`` as the Messages API does."""
    start = dict(message, content=[], stop_reason=None,
                 usage=dict(message["usage"], output_tokens=1))
    events: list[tuple[str, Any]] = [("message_start", {"type": "message_start", "message": start})]
    for index, block in enumerate(message["content"]):
        first, delta = _block_start_and_delta(block)
        events.append(("content_block_start", {"type": "content_block_start", "index": index,
                                               "content_block": first}))
        for piece in delta:
            events.append(("content_block_delta", {"type": "content_block_delta", "index": index,
                                                   "delta": piece}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(("message_delta", {"type": "message_delta",
                                     "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                                     "usage": {"output_tokens": message["usage"]["output_tokens"]}}))
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def _block_start_and_delta(block: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    kind = block["type"]
    if kind == "text":
        return {"type": "text", "text": ""}, [{"type": "text_delta", "text": block["text"]}]
    if kind == "tool_use":
        return (dict(block, input={}),
                [{"type": "input_json_delta", "partial_json": json.dumps(block["input"])}])
    if kind == "thinking":
        return ({"type": "thinking", "thinking": "", "signature": ""},
                [{"type": "thinking_delta", "thinking": block["thinking"]},
                 {"type": "signature_delta", "signature": block["signature"]}])
    return block, []


def anthropic_reply(request: Recorded, message: dict[str, Any]) -> Reply:
    """``message`` streamed when the request asks for a stream, whole otherwise."""
    body = request.body if isinstance(request.body, dict) else {}
    if body.get("stream"):
        return Reply(events=anthropic_events(message))
    return Reply(json_body=message)


class AnthropicScript:
    """Answers ``POST /v1/messages`` from a script of assistant turns.

    ``turns`` are lists of content blocks, or ``{"content": blocks, "usage": {...}}`` to report other
    token counts, or callables that build either from the request body; one per conversation
    request, in order. The reply's model is the requested one unless ``model`` is given. A request
    ``is_side(body)`` says is no part of the conversation (by default: one without tools, such as
    a title request) gets ``side_text`` instead and consumes nothing. When the script is used up,
    the reply is ``done_text``.
    """

    def __init__(self, turns: Iterable[Any] = (), side_text: str = "Mock title", done_text: str = "Done.",
                 is_side: Callable[[Any], bool] | None = None, model: str | None = None):
        self.turns = list(turns)
        self.side_text = side_text
        self.done_text = done_text
        self.is_side = is_side or _no_tools
        self.model = model
        self.conversation: list[Recorded] = []  # the requests that consumed (or outran) the script
        self._count = 0
        self._lock = threading.Lock()

    def __call__(self, request: Recorded) -> Reply:
        body = request.body if isinstance(request.body, dict) else {}
        model = self.model or body.get("model") or MODEL
        with self._lock:
            self._count += 1
            message_id = f"msg_mock{self._count:04d}"
            if self.is_side(body):
                return anthropic_reply(request, anthropic_message([text(self.side_text)], message_id, model))
            self.conversation.append(request)
            turn = self.turns.pop(0) if self.turns else [text(self.done_text)]
        if callable(turn):
            turn = turn(body)
        fields = turn if isinstance(turn, dict) else {"content": turn}
        message = anthropic_message(fields["content"], message_id, model)
        message["usage"].update(fields.get("usage", {}))
        return anthropic_reply(request, message)


def _no_tools(body: Any) -> bool:
    return not (isinstance(body, dict) and body.get("tools"))


def anthropic_routes(script: AnthropicScript) -> dict[str, Handler]:
    """The routes a Claude Code run needs: messages from the script, token counts estimated."""
    return {"/v1/messages": script, "/v1/messages/count_tokens": _count_tokens}


def _count_tokens(request: Recorded) -> Reply:
    return Reply(json_body={"input_tokens": len(json.dumps(request.body)) // 4})


# -- OpenAI Responses (Codex CLI) ----------------------------------------------------------------


def responses_text(value: str, item_id: str = "msg_mock_done") -> dict[str, Any]:
    return {"type": "message", "role": "assistant", "id": item_id,
            "content": [{"type": "output_text", "text": value, "annotations": []}]}


def responses_events(items: list[dict[str, Any]], response_id: str) -> list[tuple[str, Any]]:
    """A Responses stream: created, one output_item.done per item, completed (with usage)."""
    events: list[tuple[str, Any]] = [("response.created", {"type": "response.created",
                                                           "response": {"id": response_id}})]
    for index, item in enumerate(items):
        events.append(("response.output_item.done",
                       {"type": "response.output_item.done", "output_index": index, "item": item}))
    usage = {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 10,
             "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 110}
    events.append(("response.completed", {"type": "response.completed",
                                          "response": {"id": response_id, "usage": usage}}))
    return events


class ResponsesScript:
    """Answers ``POST /v1/responses`` from a script of replies (lists of output items), one per
    request, in order; once it runs out, ``done_text``. A WebSocket upgrade on the same path is
    refused with 426, so Codex falls back to HTTPS at once."""

    def __init__(self, replies: Iterable[list[dict[str, Any]]] = (), done_text: str = "done"):
        self.replies = list(replies)
        self.done_text = done_text
        self.conversation: list[Recorded] = []
        self._lock = threading.Lock()

    def __call__(self, request: Recorded) -> Reply:
        if request.method != "POST":
            upgrade = request.headers.get("upgrade", "").lower() == "websocket"
            return Reply(status=426 if upgrade else 404)
        with self._lock:
            self.conversation.append(request)
            number = len(self.conversation)
            items = self.replies.pop(0) if self.replies else [responses_text(self.done_text)]
        return Reply(events=responses_events(items, f"resp_mock{number:04d}"))


def responses_routes(script: ResponsesScript) -> dict[str, Handler]:
    return {"/v1/responses": script}
