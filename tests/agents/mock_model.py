"""A scripted mock model server for the coding-agent clients, on 127.0.0.1 only.

Run as a process (``python tests/agents/mock_model.py --script S --record R --port-file P``) so a
test can stop it by its pid. Every request is appended to the record file as one JSON line
(``{"method", "path", "body"}``); each model request is answered with the next reply of the
script (a JSON list; once it runs out, a plain text "done"). A reply is a list of items in the
wire form of the endpoint the client called: Responses output items for ``/v1/responses``.
Endpoints are handlers in ``HANDLERS``: one per provider wire, each turning one reply into the
server-sent events of that wire.
"""

from __future__ import annotations

import argparse
import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

Events = list[tuple[str, dict[str, Any]]]

DONE_TEXT = "done"


def responses_events(items: list[dict[str, Any]], number: int) -> Events:
    """OpenAI Responses streaming: created, one output_item.done per item, completed."""
    rid = f"resp_mock_{number}"
    events: Events = [("response.created", {"type": "response.created", "response": {"id": rid}})]
    for index, item in enumerate(items):
        events.append(("response.output_item.done",
                       {"type": "response.output_item.done", "output_index": index, "item": item}))
    usage = {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 10,
             "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 110}
    events.append(("response.completed",
                   {"type": "response.completed", "response": {"id": rid, "usage": usage}}))
    return events


def responses_text(text: str) -> list[dict[str, Any]]:
    return [{"type": "message", "role": "assistant", "id": "msg_mock_done",
             "content": [{"type": "output_text", "text": text, "annotations": []}]}]


# path -> (events of one reply, the reply once the script has run out)
HANDLERS: dict[str, tuple[Callable[[list[dict[str, Any]], int], Events], list[dict[str, Any]]]] = {
    "/v1/responses": (responses_events, responses_text(DONE_TEXT)),
}


class Script:
    """The replies, handed out in order to the model requests, under a lock (clients send
    requests from several threads)."""

    def __init__(self, replies: list[list[dict[str, Any]]], record: Path) -> None:
        self.replies = list(replies)
        self.record = record
        self.count = 0
        self.lock = threading.Lock()

    def take(self, entry: dict[str, Any]) -> tuple[list[dict[str, Any]] | None, int]:
        with self.lock:
            with self.record.open("a", encoding="utf-8") as out:
                out.write(json.dumps(entry) + "\n")
            self.count += 1
            return (self.replies.pop(0) if self.replies else None), self.count


def make_handler(script: Script) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
            return

        def _empty(self, status: int) -> None:
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_GET(self) -> None:
            # a WebSocket upgrade is refused with 426 so the client falls back to HTTPS at once
            if self.headers.get("Upgrade", "").lower() == "websocket":
                self._empty(426)
                return
            self._empty(404)

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length", "0") or 0))
            path = self.path.split("?", 1)[0]
            try:
                body = json.loads(raw)
            except ValueError:
                body = raw.decode("utf-8", "replace")
            if path not in HANDLERS:
                script.record.open("a").write(json.dumps({"method": "POST", "path": path, "body": body}) + "\n")
                self._empty(404)
                return
            reply, number = script.take({"method": "POST", "path": path, "body": body})
            render, fallback = HANDLERS[path]
            events = render(fallback if reply is None else reply, number)
            data = "".join(f"event: {name}\ndata: {json.dumps(value)}\n\n" for name, value in events).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--script", type=Path, help="a JSON list of replies")
    parser.add_argument("--record", type=Path, required=True)
    parser.add_argument("--port-file", type=Path, required=True)
    args = parser.parse_args()
    replies = json.loads(args.script.read_text()) if args.script else []
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(Script(replies, args.record)))
    tmp = args.port_file.with_suffix(".tmp")
    tmp.write_text(str(server.server_address[1]))
    tmp.replace(args.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
