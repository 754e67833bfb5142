"""A fault-injecting HTTP proxy in front of a local S3 server, on 127.0.0.1: it answers errors,
closes connections halfway through a PUT, or holds a PUT half sent until its client goes away,
for the uploads of outputs (keys ending ``.asif.json``) it is told to; every other request goes
through unchanged."""

from __future__ import annotations

import contextlib
import http.client
import socket
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

SLOW_DOWN = (b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code>'
             b"<Message>Please reduce your request rate.</Message></Error>")
INTERNAL_ERROR = (b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code>'
                  b"<Message>We encountered an internal error. Please try again.</Message></Error>")
ACCESS_DENIED = (b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code>'
                 b"<Message>Access Denied</Message></Error>")

# what to do with an output's upload, given how many uploads of outputs came so far and how many
# of that key: "pass", "503", "500", "403", "close" (half the body sent on, then both connections
# closed), "hold" (half sent on, then held until the client goes away)
Plan = Callable[[int, int], str]


class FaultyProxy:
    def __init__(self, upstream: str, plan: Plan) -> None:
        self.upstream = urlsplit(upstream)
        self.plan = plan
        self.lock = threading.Lock()
        # conditional writes go on one at a time: S3 decides them atomically, moto's threaded
        # server checks and then writes, so two racing creates can both succeed under load
        self.conditional = threading.Lock()
        self.puts = 0  # uploads of outputs seen
        self.per_key: dict[str, int] = {}
        # ("list", path), ("head", key), ("get", key) and ("put", key) of outputs, as they came
        self.log: list[tuple[str, str]] = []
        self.faults: dict[str, int] = {}
        self.held = threading.Event()  # set while a PUT is held: its client's port is ``held_port``
        self.held_port = 0
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, name="s3-fault-proxy", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> FaultyProxy:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)

    def decide(self, method: str, path: str) -> str:
        key, _, query = path.partition("?")
        if method == "GET" and "list-type=2" in query:
            with self.lock:
                self.log.append(("list", path))
        elif method in ("GET", "HEAD"):
            with self.lock:
                self.log.append((method.lower(), key))
        if method != "PUT" or not key.endswith(".asif.json"):
            return "pass"
        with self.lock:
            self.log.append(("put", key))
            self.puts += 1
            self.per_key[key] = self.per_key.get(key, 0) + 1
            what = self.plan(self.puts, self.per_key[key])
            if what != "pass":
                self.faults[what] = self.faults.get(what, 0) + 1
            return what


def _handler(proxy: FaultyProxy) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def _any(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            what = proxy.decide(self.command, self.path)
            if what in ("503", "500", "403"):
                self._answer(int(what), {"403": ACCESS_DENIED, "500": INTERNAL_ERROR, "503": SLOW_DOWN}[what])
            elif what in ("close", "hold"):
                self._half(body, hold=what == "hold")
            else:
                self._forward(body)

        do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = _any

        def _answer(self, status: int, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/xml")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _half(self, body: bytes, *, hold: bool) -> None:
            """Send the request on with half its body, then close both connections (after the
            client went away, when held): the store never gets the whole object."""
            up = socket.create_connection((proxy.upstream.hostname, proxy.upstream.port), timeout=30)
            try:
                head = f"{self.command} {self.path} HTTP/1.1\r\n" + "".join(
                    f"{k}: {v}\r\n" for k, v in self.headers.items()) + "\r\n"
                up.sendall(head.encode("latin-1") + body[: len(body) // 2])
                if hold:
                    proxy.held_port = self.client_address[1]
                    proxy.held.set()
                    self.connection.settimeout(60)
                    try:
                        while self.connection.recv(65536):
                            pass
                    except OSError:
                        pass
            finally:
                up.close()
            self.close_connection = True

        def _forward(self, body: bytes) -> None:
            conditional = "If-None-Match" in self.headers or "If-Match" in self.headers
            with proxy.conditional if conditional else contextlib.nullcontext():
                self._send_on(body)

        def _send_on(self, body: bytes) -> None:
            conn = http.client.HTTPConnection(proxy.upstream.hostname, proxy.upstream.port, timeout=60)
            try:
                headers = {k: v for k, v in self.headers.items() if k.lower() != "connection"}
                conn.request(self.command, self.path, body=body if body else None, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
                self.send_response(resp.status)
                for k, v in resp.getheaders():
                    if k.lower() not in ("transfer-encoding", "connection", "content-length", "date", "server"):
                        self.send_header(k, v)
                self.send_header("Content-Length", resp.getheader("Content-Length") or str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)
            finally:
                conn.close()

    return Handler
