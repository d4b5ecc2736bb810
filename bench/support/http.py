"""The benchmarks' one HTTP client: a keep-alive connection to the server under test."""

from __future__ import annotations

import http.client
import json
import subprocess
import time
from pathlib import Path
from typing import Any

__all__ = ["Client"]


class Client:
    """One keep-alive connection to ``127.0.0.1:port``; :meth:`call` answers the decoded body
    (and raises on a status of 300 or more), :meth:`timed` a GET's latency too."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def call(
        self, method: str, path: str, body: Any = None, token: str | None = None, **headers: str
    ) -> Any:
        """Send ``body`` as JSON, with ``token`` as the bearer and ``headers``."""
        if body is not None:
            headers["Content-Type"] = "application/json"
        if token:
            headers["Authorization"] = f"Bearer {token}"
        payload = None if body is None else json.dumps(body)
        self.connection.request(method, path, body=payload, headers=headers)
        response = self.connection.getresponse()
        data = response.read()
        if response.status >= 300:
            raise RuntimeError(f"{method} {path}: {response.status} {data[:300]!r}")
        return json.loads(data) if data else None

    def timed(self, path: str, **headers: str) -> tuple[float, Any]:
        """A GET's latency in seconds, and its decoded body."""
        started = time.perf_counter()
        answer = self.call("GET", path, **headers)
        return time.perf_counter() - started, answer

    def wait_ready(self, process: subprocess.Popen[bytes], log: Path) -> None:
        """Return once ``/readyz`` answers; exit when ``process`` died or 30 s went by."""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise SystemExit(f"gunicorn exited:\n{log.read_text(errors='replace')[-2000:]}")
            try:
                self.call("GET", "/readyz")
                return
            except (OSError, http.client.HTTPException, RuntimeError):
                self.connection.close()
                time.sleep(0.1)
        raise SystemExit("gunicorn was not ready within 30 s")
