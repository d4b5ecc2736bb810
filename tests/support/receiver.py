"""A webhook receiver for tests: a real HTTP server on loopback, in the test process.

Every request is recorded (arrival time, headers, body); ``behave`` decides each answer:
``(status, headers, body, delay)``; the default answers 204 at once.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["Received", "Receiver", "receiver", "verify_signature"]


@dataclass(frozen=True)
class Received:
    at: float
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def id(self) -> str:
        return self.headers["webhook-id"]


Answer = tuple[int, dict[str, str], bytes, float]


@dataclass
class Receiver:
    url: str
    received: list[Received] = field(default_factory=list)
    behave: Callable[[Received], Answer] = lambda _: (204, {}, b"", 0.0)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def wait_for(
        self, count: int, *, timeout: float = 60.0, where: Callable[[Received], bool] | None = None
    ) -> list[Received]:
        """The requests received (those ``where`` accepts) once there are ``count``."""
        deadline = time.monotonic() + timeout
        while True:
            with self.lock:
                found = [r for r in self.received if where is None or where(r)]
            if len(found) >= count or time.monotonic() > deadline:
                return found
            time.sleep(0.02)


def verify_signature(secret: str, received: Received) -> bool:
    """The Standard Webhooks check, written here from the specification (not the package the
    service signs with): HMAC-SHA256 of ``id.timestamp.body`` keyed by the secret's bytes."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{received.headers['webhook-id']}.{received.headers['webhook-timestamp']}.".encode()
    expected = hmac.new(key, signed + received.body, hashlib.sha256).digest()
    for part in received.headers["webhook-signature"].split(" "):
        version, _, signature = part.partition(",")
        if version == "v1" and hmac.compare_digest(base64.b64decode(signature), expected):
            return True
    return False


@contextmanager
def receiver() -> Iterator[Receiver]:
    """A receiver listening on 127.0.0.1 on a free port until the block ends."""
    holder: dict[str, Receiver] = {}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(length)
            if len(body) < length:
                # The sender went away mid-body (a dispatcher killed while it sent): no
                # receiver would take a cut-off request as a delivery, so it is not recorded.
                self.close_connection = True
                return
            got = Received(
                time.time(),
                self.path,
                {k.lower(): v for k, v in self.headers.items()},
                body,
            )
            hook = holder["r"]
            with hook.lock:
                hook.received.append(got)
            status, headers, answer, delay = hook.behave(got)
            if delay:
                time.sleep(delay)
            try:
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(answer)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(answer)
            except OSError:
                pass  # the dispatcher cut us off

        def log_message(self, *args: Any) -> None:
            pass

    class Server(ThreadingHTTPServer):
        request_queue_size = 256  # socketserver's 5 drops SYNs under load: 1 s retransmits

    server = Server(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    holder["r"] = Receiver(f"http://127.0.0.1:{server.server_address[1]}/hook")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield holder["r"]
    finally:
        server.shutdown()
        server.server_close()
