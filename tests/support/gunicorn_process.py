"""A real gunicorn serving the referee, run as a child process for tests, with its faults.

    with GunicornProcess(env={"REDIS_URL": server.url, "REFEREE_TEST_MODE": "1"}) as web:
        reply = web.request("GET", "/readyz")          # Reply(status, headers, body, elapsed)
        web.worker_pids()                              # the workers, as the master forked them
        web.kill_worker(pid)                           # SIGKILL one worker (the master respawns it)
        "WORKER TIMEOUT" in web.log_text()             # gunicorn's own log and the access log
    # leaving the block stops it (SIGTERM to the whole process group, SIGKILL if it lingers)

It runs ``gunicorn -c deploy/gunicorn.conf.py 'service.app:create_app()'`` from the repository
root on a free port of 127.0.0.1, in a process group of its own, with the environment given
(on top of the test process's). ``start()`` waits until every worker process exists and
``/healthz`` answers 200; ``wait_workers()`` also waits for their "Booting worker" lines (and,
after kills, for the replacements). Every started gunicorn is killed at interpreter exit; the
master dies with the thread that started it (Linux: PR_SET_PDEATHSIG); its workers notice their
parent is gone and exit on their own.

``request()`` sends exactly one HTTP request on a fresh connection and never retries it: a
test that counts acknowledged moves must know that each one was sent once. Only the standard
library is used to speak HTTP; each answer is validated against openapi.yaml
(``tests.support.contract``) before the test sees it.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from tests.support import contract
from tests.support.redis_process import free_port

__all__ = ["GunicornProcess", "GunicornStartError", "Reply", "StagedRequest", "http_request"]

ROOT = Path(__file__).resolve().parents[2]
_PR_SET_PDEATHSIG = 1


class GunicornStartError(RuntimeError):
    """gunicorn did not come up; the message holds the end of its log."""


@dataclass(frozen=True)
class Reply:
    """One HTTP answer: status, headers (lower-case names), JSON body (or None), seconds taken."""

    status: int
    headers: dict[str, str] = field(repr=False)
    body: Any = field(repr=False)
    elapsed: float

    def header(self, name: str, default: str | None = None) -> str | None:
        return self.headers.get(name.lower(), default)

    def __repr__(self) -> str:
        detail = ""
        if isinstance(self.body, dict) and "type" in self.body and "status" in self.body:
            detail = f" {self.body.get('type')}: {self.body.get('detail')}"
        return f"<Reply {self.status} in {self.elapsed:.3f} s{detail}>"


def http_request(
    port: int,
    method: str,
    path: str,
    body: Any = None,
    *,
    token: str | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: float = 30.0,
    raw_body: bytes | None = None,
) -> Reply:
    """Send one request to 127.0.0.1:``port`` on a new connection; never retried.

    ``body`` is sent as JSON; ``token`` as ``Authorization: Bearer``. Raises what
    http.client raises (a connection reset, a timeout...) when no answer comes back.
    """
    sent = dict(headers or {})
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    payload = raw_body
    if body is not None:
        payload = json.dumps(body).encode()
        sent.setdefault("Content-Type", "application/json")
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    started = time.monotonic()
    try:
        connection.request(method, path, body=payload, headers=sent)
        response = connection.getresponse()
        raw = response.read()
        elapsed = time.monotonic() - started
        answer_headers = {name.lower(): value for name, value in response.getheaders()}
    finally:
        connection.close()
    contract.check_http(method, path, sent, response.status, response.getheaders(), raw)
    data: Any = None
    if raw and "json" in answer_headers.get("content-type", ""):
        data = json.loads(raw)
    elif raw:
        data = raw.decode("utf-8", "replace")
    return Reply(response.status, answer_headers, data, elapsed)


class StagedRequest:
    """A request sent in two steps, so that many reach the server at the same moment.

    ``stage()`` connects and sends all of the request but its last byte (the server's
    thread then waits for it); ``finish()`` sends that byte and reads the answer. Releasing
    many staged requests together makes them race inside the service, not on the way to it.
    """

    def __init__(
        self,
        port: int,
        method: str,
        path: str,
        body: Any = None,
        *,
        token: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float = 30.0,
    ) -> None:
        payload = b"" if body is None else json.dumps(body).encode()
        self.method, self.path = method, path
        self.headers = {**(headers or {}), "Content-Type": "application/json"}
        lines = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Connection: close"]
        if token is not None:
            lines.append(f"Authorization: Bearer {token}")
        if body is not None:
            lines.append("Content-Type: application/json")
        lines.append(f"Content-Length: {len(payload)}")
        lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
        self.data = ("\r\n".join(lines) + "\r\n\r\n").encode() + payload
        self.port, self.timeout = port, timeout
        self.sock: socket.socket | None = None
        self.started = 0.0

    def stage(self) -> StagedRequest:
        self.sock = socket.create_connection(("127.0.0.1", self.port), timeout=self.timeout)
        self.sock.sendall(self.data[:-1])
        return self

    def release(self) -> None:
        """Send the last byte: the server can now act on the request."""
        assert self.sock is not None, "stage() first"
        self.started = time.monotonic()
        self.sock.sendall(self.data[-1:])

    def read(self) -> Reply:
        """Read the answer (after :meth:`release`) and close the connection."""
        assert self.sock is not None, "stage() first"
        try:
            response = http.client.HTTPResponse(self.sock, method="GET")
            response.begin()
            raw = response.read()
            elapsed = time.monotonic() - self.started
            answer_headers = {name.lower(): value for name, value in response.getheaders()}
        finally:
            self.sock.close()
        contract.check_http(
            self.method, self.path, self.headers, response.status, response.getheaders(), raw
        )
        data: Any = None
        if raw and "json" in answer_headers.get("content-type", ""):
            data = json.loads(raw)
        elif raw:
            data = raw.decode("utf-8", "replace")
        return Reply(response.status, answer_headers, data, elapsed)

    def finish(self) -> Reply:
        """:meth:`release`, then :meth:`read`."""
        self.release()
        return self.read()


def _die_with_parent() -> None:  # runs in the child between fork and exec
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


_live: weakref.WeakSet[GunicornProcess] = weakref.WeakSet()


@atexit.register
def _kill_all() -> None:
    for process in list(_live):
        process.kill()


class GunicornProcess:
    """One gunicorn (master + workers) serving the app on 127.0.0.1:<port>.

    ``env`` is added to the test process's environment (REDIS_URL, REFEREE_TEST_MODE...).
    ``workers``/``threads`` set WEB_CONCURRENCY/GUNICORN_THREADS; ``extra_args`` are more
    gunicorn command-line options (they override deploy/gunicorn.conf.py).
    """

    def __init__(
        self,
        *,
        env: Mapping[str, str] | None = None,
        workers: int = 2,
        threads: int = 8,
        port: int | None = None,
        log_level: str = "info",
        extra_args: tuple[str, ...] = (),
        log_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        self.port = port or free_port()
        self.workers = workers
        self.threads = threads
        self.extra_args = extra_args
        self.env = {
            **os.environ,
            "HOST": "127.0.0.1",
            "PORT": str(self.port),
            "WEB_CONCURRENCY": str(workers),
            "GUNICORN_THREADS": str(threads),
            "LOG_LEVEL": log_level,
            "PYTHONUNBUFFERED": "1",
            **(env or {}),
        }
        handle, name = tempfile.mkstemp(prefix=f"gunicorn-{self.port}-", suffix=".log", dir=log_dir)
        os.close(handle)
        self.log_path = Path(name)
        self._process: subprocess.Popen[bytes] | None = None

    def __repr__(self) -> str:
        state = f"pid={self.pid}" if self.running else "stopped"
        return f"<GunicornProcess 127.0.0.1:{self.port} {state}>"

    # --- what tests read ---------------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        """The master's process id while it runs."""
        return self._process.pid if self.running and self._process else None

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def log_text(self) -> str:
        """Everything gunicorn wrote so far (its error log and the access log)."""
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log_text().splitlines()[-lines:])

    def worker_pids(self) -> list[int]:
        """The pids of the master's live children (its workers), oldest first."""
        master = self.pid
        if master is None:
            return []
        children: list[int] = []
        try:
            text = Path(f"/proc/{master}/task/{master}/children").read_text()
            children = [int(part) for part in text.split()]
        except OSError:  # no /proc children file: scan every process's parent
            for entry in Path("/proc").iterdir():
                if entry.name.isdigit():
                    with contextlib.suppress(OSError, ValueError, IndexError):
                        stat = (entry / "stat").read_text()
                        if int(stat.rsplit(")", 1)[1].split()[1]) == master:
                            children.append(int(entry.name))
        return [pid for pid in children if _alive(pid)]

    def request(self, method: str, path: str, body: Any = None, **options: Any) -> Reply:
        """One request on a fresh connection (see :func:`http_request`)."""
        return http_request(self.port, method, path, body, **options)

    # --- life cycle --------------------------------------------------------------------------

    def start(self, *, timeout: float = 60.0) -> GunicornProcess:
        """Start gunicorn; wait for /healthz 200 and every worker booted; return self."""
        if self.running:
            raise RuntimeError(f"{self!r} is already running")
        command = [
            sys.executable,
            "-m",
            "gunicorn",
            "-c",
            "deploy/gunicorn.conf.py",
            *self.extra_args,
            "service.app:create_app()",
        ]
        preexec = _die_with_parent if sys.platform == "linux" else None
        with self.log_path.open("ab") as log:  # the child keeps its own copy of the file
            self._process = subprocess.Popen(
                command,
                cwd=ROOT,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=preexec,
            )
        _live.add(self)
        try:
            self.wait_ready(timeout=timeout)
        except BaseException:
            self.kill()
            raise
        return self

    def wait_ready(self, *, timeout: float = 30.0, path: str = "/healthz") -> None:
        """Wait until ``path`` answers 200 and ``workers`` workers are alive."""
        deadline = time.monotonic() + timeout
        while True:
            if not self.running:
                raise GunicornStartError(f"gunicorn exited:\n{self.log_tail()}")
            with contextlib.suppress(OSError, http.client.HTTPException):
                if (
                    len(self.worker_pids()) >= self.workers
                    and self.request("GET", path, timeout=2).status == 200
                ):
                    return
            if time.monotonic() > deadline:
                raise GunicornStartError(
                    f"gunicorn was not ready within {timeout} s:\n{self.log_tail()}"
                )
            time.sleep(0.05)

    def wait_workers(self, booted: int | None = None, *, timeout: float = 30.0) -> list[int]:
        """Wait until every worker is alive and ``booted`` workers (default: ``workers``) have
        been started over this gunicorn's life (a killed one is replaced); return their pids."""
        booted = self.workers if booted is None else booted
        deadline = time.monotonic() + timeout
        while True:
            pids = self.worker_pids()
            if len(pids) >= self.workers and self.log_text().count("Booting worker") >= booted:
                return pids
            if not self.running or time.monotonic() > deadline:
                raise GunicornStartError(
                    f"{self.workers} workers ({booted} booted in all) were not up within "
                    f"{timeout} s:\n{self.log_tail()}"
                )
            time.sleep(0.05)

    def kill_worker(self, pid: int) -> None:
        """SIGKILL one worker, as the OOM killer would; the master starts a new one."""
        if pid not in self.worker_pids():
            raise RuntimeError(f"{pid} is not a worker of {self!r}")
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)

    def stop(self, *, timeout: float = 15.0) -> None:
        """Stop gunicorn gracefully (SIGTERM to its group; SIGKILL after ``timeout`` seconds)."""
        process = self._process
        if process is None or process.poll() is not None:
            self._reap_group()
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
        self._reap_group()

    def kill(self) -> None:
        """SIGKILL the master and every worker (the whole process group)."""
        process = self._process
        if process is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        process.wait()

    def cleanup(self) -> None:
        """Kill gunicorn and remove its log file."""
        self.kill()
        _live.discard(self)
        self.log_path.unlink(missing_ok=True)

    def _reap_group(self) -> None:
        process = self._process
        if process is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)

    def __enter__(self) -> GunicornProcess:
        return self if self.running else self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()
        _live.discard(self)
        if exc_type is None:
            self.log_path.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"
