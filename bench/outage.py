"""Benchmark: how fast the service answers when Redis goes away, and when it is told to stop.

Run as ``python bench/outage.py`` (``make bench`` runs it); ``--strict`` exits 1 when a target
is missed. It starts its own Redis and gunicorn (``deploy/gunicorn.conf.py``, test mode, 2
workers) on free ports of 127.0.0.1. These are the latencies the fault tests
(tests/faults/test_redis_faults.py, test_graceful_shutdown.py) check only by order, so that
they hold on a loaded machine: measure them here, on a quiet one.

- Redis stopped, then frozen (SIGSTOP): a view, a draw and ``/readyz``, each 10 times on a new
  connection: every answer a 503, the slowest within 1.5 s.
- Redis frozen: a long-poll asking to wait 1 s answers within 2.5 s (it once hung for ~70 s).
- SIGTERM to a gunicorn with an event stream and a long-poll (asked to wait 30 s) open: both
  end within 3 s, and gunicorn is gone within 4 s (its graceful timeout is 20 s).
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.gunicorn_process import GunicornProcess, http_request
from tests.support.redis_process import RedisProcess

FAST_503 = 1.5  # seconds: the slowest 503 when Redis is gone
LONG_POLL = 1.0  # seconds a long-poll asks to wait on a frozen Redis
LONG_POLL_TARGET = LONG_POLL + FAST_503
ENDED = 3.0  # seconds from SIGTERM to a stream's end and a long-poll's answer
STOPPED = 4.0  # seconds from SIGTERM to gunicorn gone


def new_match(web: GunicornProcess) -> dict:
    body = {"players": [{"name": "Ann"}, {"name": "Bo"}], "rules": {"turn_seconds": 0}}
    return web.request("POST", "/v1/matches", body).body  # type: ignore[no-any-return]


def timed_503s(web: GunicornProcess, created: dict) -> list[float]:
    """Each request's seconds; every answer must be a 503."""
    path = f"/v1/matches/{created['id']}"
    seat = created["match"]["current_seat"]
    token = created["seats"][seat]["token"]
    times = []
    for _ in range(10):
        for method, target, body in (
            ("GET", path, None),
            ("POST", f"{path}/draw", {}),
            ("GET", "/readyz", None),
        ):
            started = time.perf_counter()
            reply = http_request(web.port, method, target, body, token=token, timeout=60)
            times.append(time.perf_counter() - started)
            if reply.status != 503:
                raise SystemExit(f"{method} {target}: {reply!r}, not a 503")
    return times


def redis_away(redis_server: RedisProcess, web: GunicornProcess, created: dict) -> list[str]:
    missed = []
    for fault in ("stopped", "frozen"):
        if fault == "stopped":
            redis_server.stop()
        else:
            redis_server.pause()
        try:
            times = sorted(timed_503s(web, created))
            version = created["match"]["version"]
            path = f"/v1/matches/{created['id']}?wait_version={version}&timeout={LONG_POLL}"
            started = time.perf_counter()
            http_request(web.port, "GET", path, timeout=60)
            long_poll = time.perf_counter() - started
        finally:
            if fault == "stopped":
                redis_server.start()
            else:
                redis_server.resume()
        print(
            f"Redis {fault}: {len(times)} 503s, median {times[len(times) // 2]:.3f} s, "
            f"slowest {times[-1]:.3f} s (target {FAST_503} s); a {LONG_POLL} s long-poll "
            f"answered in {long_poll:.3f} s (target {LONG_POLL_TARGET} s)"
        )
        if times[-1] > FAST_503:
            missed.append(f"Redis {fault}: a 503 took {times[-1]:.2f} s")
        if long_poll > LONG_POLL_TARGET:
            missed.append(f"Redis {fault}: the long-poll took {long_poll:.2f} s")
        deadline = time.monotonic() + 30
        while web.request("GET", "/readyz").status != 200:
            if time.monotonic() > deadline:
                raise SystemExit("the service did not serve again")
            time.sleep(0.05)
    return missed


def read_until_closed(connection: socket.socket) -> None:
    while connection.recv(65536):
        pass


def sigterm(web: GunicornProcess, created: dict) -> list[str]:
    path = f"/v1/matches/{created['id']}"
    version = created["match"]["version"]
    poll = socket.create_connection(("127.0.0.1", web.port), timeout=60)
    poll.sendall(
        f"GET {path}?wait_version={version}&timeout=30 HTTP/1.1\r\nHost: x\r\n"
        "Connection: close\r\n\r\n".encode()
    )
    stream = socket.create_connection(("127.0.0.1", web.port), timeout=60)
    stream.sendall(f"GET {path}/stream HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    opened = b""
    while b"retry:" not in opened:
        opened += stream.recv(65536)
    time.sleep(0.5)  # the long-poll waits too (a benchmark may wait; a test may not)
    assert web.pid is not None
    told = time.perf_counter()
    os.kill(web.pid, signal.SIGTERM)
    read_until_closed(stream)
    stream_ended = time.perf_counter() - told
    read_until_closed(poll)
    poll_answered = time.perf_counter() - told
    while web.running and time.perf_counter() - told < 30:
        time.sleep(0.02)
    stopped = time.perf_counter() - told
    print(
        f"SIGTERM: the stream ended after {stream_ended:.3f} s, the long-poll answered after "
        f"{poll_answered:.3f} s (target {ENDED} s), gunicorn gone after {stopped:.3f} s "
        f"(target {STOPPED} s)"
    )
    missed = []
    if max(stream_ended, poll_answered) > ENDED:
        missed.append(f"SIGTERM: a long wait ended after {max(stream_ended, poll_answered):.2f} s")
    if stopped > STOPPED:
        missed.append(f"SIGTERM: gunicorn ran {stopped:.2f} s on")
    return missed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        redis_server = RedisProcess(data_dir=Path(folder) / "redis")
        redis_server.start()
        try:
            env = {"REDIS_URL": redis_server.url, "REFEREE_TEST_MODE": "1", "RATE_LIMIT": ""}
            with GunicornProcess(env=env, workers=2, log_dir=folder) as web:
                missed = redis_away(redis_server, web, new_match(web))
            with GunicornProcess(env=env, workers=1, log_dir=folder) as web:
                missed += sigterm(web, new_match(web))
        finally:
            redis_server.cleanup()
    for line in missed:
        print(f"MISSED {line}")
    if missed and args.strict:
        sys.exit(1)


if __name__ == "__main__":
    main()
