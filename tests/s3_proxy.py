"""A loopback HTTP proxy in front of the S3 server: counts requests by kind (PUT, GET, HEAD, LIST, DELETE,
POST), and on demand fails chosen
requests (HTTP 500/503, a reset connection), delays them, or drops the conditional-create header (a store
without If-None-Match)."""

from __future__ import annotations

import http.client
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

# (method, path) -> an action: ("status", 503) | ("reset", None) | ("delay", seconds) | None (pass through)
Rule = Callable[[str, str], "tuple[str, float] | None"]


@dataclass
class S3Proxy:
    upstream: str
    counts: Counter = field(default_factory=Counter)
    rule: Rule | None = None
    strip_conditional: bool = False
    latency_s: float = 0.0
    server: ThreadingHTTPServer | None = None

    @property
    def endpoint(self) -> str:
        assert self.server is not None
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> S3Proxy:
        proxy = self
        up = urlsplit(self.upstream)

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                proxy.counts["LIST" if self.command == "GET" and "list-type=" in self.path else self.command] += 1
                action = proxy.rule(self.command, self.path) if proxy.rule else None
                if proxy.latency_s:
                    time.sleep(proxy.latency_s)
                if action is not None and action[0] == "delay":
                    time.sleep(action[1])
                if action is not None and action[0] == "reset":
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                    self.connection.close()
                    self.close_connection = True
                    return
                if action is not None and action[0] == "status":
                    payload = b"<Error><Code>InternalError</Code></Error>"
                    self.send_response(int(action[1]))
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
                if proxy.strip_conditional:
                    headers = {k: v for k, v in headers.items() if k.lower() not in ("if-none-match", "if-match")}
                conn = http.client.HTTPConnection(up.hostname, up.port, timeout=60)
                conn.request(self.command, self.path, body=body, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
                self.send_response(resp.status)
                for key, value in resp.getheaders():
                    if key.lower() not in ("transfer-encoding", "connection", "content-length"):
                        self.send_header(key, value)
                # a HEAD answer has no body but tells the object's length (readers size files by it)
                head_length = resp.getheader("Content-Length") if self.command == "HEAD" else None
                self.send_header("Content-Length", head_length or str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)
                conn.close()

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _forward  # noqa: N815

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
