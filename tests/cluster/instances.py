"""Real gunicorn instances of the referee, and a small HTTP client for them (stdlib only).

    with Instance(env={"REDIS_CLUSTER_NODES": nodes, "REFEREE_TEST_MODE": "1"}) as a:
        status, headers, body = a.request("GET", "/readyz")

Each instance is ``gunicorn -c deploy/gunicorn.conf.py 'service.app:create_app()'`` on a free
port, started in a process group of its own and stopped with it (SIGTERM, then SIGKILL).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import Any

from tests.support.redis_process import free_port

__all__ = ["Instance"]

ROOT = Path(__file__).resolve().parents[2]


class Instance:
    """One gunicorn serving the app on 127.0.0.1:<free port>."""

    def __init__(self, *, env: dict[str, str], workers: int = 2, threads: int = 8) -> None:
        self.port = free_port()
        self.env = {
            **os.environ,
            "HOST": "127.0.0.1",
            "PORT": str(self.port),
            "WEB_CONCURRENCY": str(workers),
            "GUNICORN_THREADS": str(threads),
            "LOG_LEVEL": "warning",
            **env,
        }
        handle, name = tempfile.mkstemp(prefix="gunicorn-", suffix=".log")
        os.close(handle)
        self.log_path = Path(name)
        self.process: subprocess.Popen[bytes] | None = None
        self._local = threading.local()

    def __repr__(self) -> str:
        return f"<Instance 127.0.0.1:{self.port}>"

    def start(self, *, timeout: float = 30.0) -> Instance:
        """Start gunicorn and wait until ``/readyz`` answers 200; return self."""
        command = [sys.executable, "-m", "gunicorn", "-c", "deploy/gunicorn.conf.py"]
        with self.log_path.open("wb") as log:  # the child keeps its own copy of the file
            self.process = subprocess.Popen(
                [*command, "service.app:create_app()"],
                cwd=ROOT,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"gunicorn exited:\n{self.log_tail()}")
            with contextlib.suppress(OSError, http.client.HTTPException):
                if self.request("GET", "/readyz", fresh=True)[0] == 200:
                    return self
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"gunicorn was not ready in {timeout} s:\n{self.log_tail()}")
            time.sleep(0.1)

    def stop(self) -> None:
        """Stop gunicorn and its workers (the whole process group)."""
        process = self.process
        if process is None or process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()

    def log_tail(self, lines: int = 30) -> str:
        """The end of gunicorn's output."""
        text = self.log_path.read_text(errors="replace")
        return "\n".join(text.splitlines()[-lines:])

    def __enter__(self) -> Instance:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()
        self.log_path.unlink(missing_ok=True)

    # --- HTTP ----------------------------------------------------------------------------

    def request(
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
