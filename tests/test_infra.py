"""The test infrastructure itself: real Redis servers, flushed between tests, and crashes."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis

from tests.support.redis_process import RedisProcess, RedisStartError

ROOT = Path(__file__).resolve().parents[1]


def test_the_session_server_answers_on_its_url(redis_server: RedisProcess, redis_url: str) -> None:
    assert redis_url == f"redis://127.0.0.1:{redis_server.port}/0"
    assert redis_server.pid is not None
    os.kill(redis_server.pid, 0)  # the process exists
    client = redis.Redis.from_url(redis_url)
    assert client.ping()
    client.close()


def test_a_value_set_can_be_read_back(
    redis_server: RedisProcess, redis_client: redis.Redis
) -> None:
    redis_client.set("match:1", "version 1")
    assert redis_client.get("match:1") == "version 1"
    _leave_keys_behind(redis_server)


def test_each_test_starts_with_every_database_empty(
    redis_server: RedisProcess, redis_url: str
) -> None:
    # The test above left keys in databases 0 and 3; the fixture flushed them.
    for db in (0, 3):
        client = redis.Redis(port=redis_server.port, db=db)
        assert client.dbsize() == 0
        client.close()
    _leave_keys_behind(redis_server)


def _leave_keys_behind(server: RedisProcess) -> None:
    for db in (0, 3):
        client = redis.Redis(port=server.port, db=db)
        client.set("left-over", "by an earlier test")
        client.close()


def test_the_server_runs_lua_scripts(redis_client: redis.Redis) -> None:
    # The store relies on EVAL (Redis 6.2 and up), not on Redis 7 Functions.
    script = "redis.call('SET', KEYS[1], ARGV[1]); return redis.call('INCR', KEYS[2])"
    assert redis_client.eval(script, 2, "state", "version", "{}") == 1
    assert redis_client.get("state") == "{}"


def test_an_acknowledged_write_survives_kill_9_with_the_append_only_file(tmp_path: Path) -> None:
    with RedisProcess(data_dir=tmp_path, appendonly=True) as server:
        client = server.client()
        client.set("match:7", "after the play")
        client.close()
        first_pid = server.pid

        server.kill()
        assert not server.running
        server.restart()

        assert server.pid != first_pid
        client = server.client()
        assert client.get("match:7") == "after the play"
        client.close()


def test_without_the_append_only_file_a_crash_loses_the_data(tmp_path: Path) -> None:
    with RedisProcess(data_dir=tmp_path) as server:
        client = server.client()
        client.set("match:7", "after the play")
        client.close()
        server.kill()
        server.restart()
        client = server.client()
        assert client.get("match:7") is None
        client.close()


def test_a_paused_server_times_out_and_answers_again_once_resumed(tmp_path: Path) -> None:
    with RedisProcess(data_dir=tmp_path) as server:
        client = server.client(socket_timeout=0.3)
        client.set("k", "v")
        server.pause()
        try:
            with pytest.raises(redis.TimeoutError):
                client.get("k")
        finally:
            server.resume()
        client.close()
        client = server.client(socket_timeout=2)
        assert client.get("k") == "v"
        client.close()


def test_a_server_that_cannot_start_reports_its_log(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        server = RedisProcess(data_dir=tmp_path, port=taken.getsockname()[1])
        with pytest.raises(RedisStartError, match="exited"):
            server.start(timeout=5)
        assert not server.running


def test_servers_die_with_the_process_that_started_them(tmp_path: Path) -> None:
    # A child Python starts a server, prints its pid, then is killed with SIGKILL: no atexit,
    # no finalizer runs, yet the server must not outlive it.
    code = (
        "import sys, time\n"
        "from tests.support.redis_process import RedisProcess\n"
        f"server = RedisProcess(data_dir={str(tmp_path)!r}).start()\n"
        "print(server.pid, flush=True)\n"
        "time.sleep(60)\n"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None
        server_pid = int(child.stdout.readline())
        os.kill(child.pid, signal.SIGKILL)
        child.wait(30)
        deadline = time.monotonic() + 30  # a safety bound: the loop ends at the event
        while _alive(server_pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(server_pid)
    finally:
        child.kill()
        child.wait()


def _alive(pid: int) -> bool:
    """Whether `pid` is a live process (a zombie counts as dead)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ", 1)[1][0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False
