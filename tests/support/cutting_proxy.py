"""A TCP proxy in front of a real redis-server that can lose one answer: the request reaches
Redis and runs, and the client's connection is closed before Redis's answer gets to it (as when
Redis is killed, or the connection cut, between running a command and its answer arriving).

    with CuttingProxy(redis_port) as proxy:
        client = redis.Redis(port=proxy.port)
        proxy.cut_answer_to(b"EVALSHA")  # the next request holding these bytes: run, unanswered

Only the standard library; each connection is two threads copying bytes.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from threading import Event
from types import TracebackType

__all__ = ["CuttingProxy"]


class CuttingProxy:
    """Forwards connections on ``self.port`` to ``127.0.0.1:upstream`` (see the module)."""

    def __init__(self, upstream: int) -> None:
        self.upstream = upstream
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._marker: bytes | None = None
        self.cut = threading.Event()  # set once an answer was held back and its connection cut
        self.connections = 0  # client connections accepted so far
        self._sockets: list[socket.socket] = []
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def cut_answer_to(self, marker: bytes) -> None:
        """The next request holding ``marker`` goes to Redis, and its connection is closed
        when Redis answers, the answer dropped."""
        with self._lock:
            self._marker = marker
            self.cut.clear()

    def close(self) -> None:
        self._closed = True
        self._listener.close()
        with self._lock:
            for sock in self._sockets:
                _close(sock)

    def __enter__(self) -> CuttingProxy:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            server = socket.create_connection(("127.0.0.1", self.upstream))
            armed = threading.Event()  # this connection's next answer is to be cut
            with self._lock:
                self.connections += 1
                self._sockets += [client, server]
            pumps = ((self._requests, (client, server)), (self._answers, (server, client)))
            for pump, ends in pumps:
                threading.Thread(target=pump, args=(*ends, armed), daemon=True).start()

    def _requests(self, client: socket.socket, server: socket.socket, armed: Event) -> None:
        while True:
            try:
                data = client.recv(65536)
            except OSError:
                data = b""
            if not data:
                _close(server)
                return
            with self._lock:
                if self._marker is not None and self._marker in data:
                    self._marker = None
                    armed.set()
            try:
                server.sendall(data)
            except OSError:
                _close(client)
                return

    def _answers(self, server: socket.socket, client: socket.socket, armed: Event) -> None:
        while True:
            try:
                data = server.recv(65536)
            except OSError:
                data = b""
            if not data or armed.is_set():
                if data:  # told before the client can see its connection closed
                    self.cut.set()
                _close(client)
                _close(server)
                return
            try:
                client.sendall(data)
            except OSError:
                _close(server)
                return


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()
