"""Real gunicorn instances of the referee, with a keep-alive HTTP client (stdlib only).

    with Instance(env={"REDIS_CLUSTER_NODES": nodes, "REFEREE_TEST_MODE": "1"}) as a:
        status, headers, body = a.call("GET", "/readyz")

An instance is a :class:`tests.support.gunicorn_process.GunicornProcess` (its start, stop and
log); :meth:`Instance.call` reuses one connection per thread, as a client library would.
"""

from __future__ import annotations

import http.client
import json
import threading
from typing import Any

from tests.support.gunicorn_process import GunicornProcess

__all__ = ["Instance"]


class Instance(GunicornProcess):
    """One gunicorn serving the app on 127.0.0.1:<free port>."""

    def __init__(self, *, env: dict[str, str], workers: int = 2, threads: int = 8) -> None:
        super().__init__(env=env, workers=workers, threads=threads, log_level="warning")
        self._local = threading.local()

    # --- HTTP ----------------------------------------------------------------------------

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        token: str | None = None,
        headers: dict[str, str] | None = None,
        fresh: bool = False,
    ) -> tuple[int, dict[str, str], Any]:
        """Send one request; return (status, headers, JSON body or None).

        Each thread keeps one keep-alive connection per instance; ``fresh`` uses a new one.
        """
        sent = dict(headers or {})
        if token is not None:
            sent["Authorization"] = f"Bearer {token}"
        payload = None
        if body is not None:
            payload = json.dumps(body).encode()
            sent["Content-Type"] = "application/json"
        for attempt in (1, 2):
            connection = self._connection(fresh=fresh or attempt == 2)
            try:
                connection.request(method, path, body=payload, headers=sent)
                response = connection.getresponse()
                raw = response.read()
            except (ConnectionError, http.client.HTTPException):
                connection.close()
                self._local.connection = None
                if attempt == 2:
                    raise
                continue
            if fresh:
                connection.close()
            data = (
                json.loads(raw)
                if raw and "json" in response.getheader("Content-Type", "")
                else None
            )
            return response.status, {k.lower(): v for k, v in response.getheaders()}, data
        raise AssertionError("unreachable")

    def _connection(self, *, fresh: bool) -> http.client.HTTPConnection:
        if fresh:
            return http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        connection: http.client.HTTPConnection | None = getattr(self._local, "connection", None)
        if connection is None:
            connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            self._local.connection = connection
        return connection
