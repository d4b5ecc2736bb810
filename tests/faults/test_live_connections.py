"""Live connections against real gunicorn: floods of event streams, half-sent requests
(slowloris), the caps and their answers, resuming after a worker dies, and a graceful stop
with thousands of streams open (service/api/connections.py, service/fanout.py, docs/ARCHITECTURE.md,
"Worker model")."""

from __future__ import annotations

import contextlib
import os
import resource
import selectors
import signal
import socket
import time

import pytest

from tests.support.gunicorn_process import GunicornProcess, http_request
from tests.support.sockets import SAFETY, wait_for, wait_until_read

ANSWER = 30.0  # seconds: a socket timeout, so that a hang fails the test instead of stalling it


def raise_open_files(wanted: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        limit = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, hard))


def create(web: GunicornProcess) -> dict:
    body = {"players": [{"name": "Ann"}, {"name": "Bo"}], "rules": {"turn_seconds": 0}}
    created = web.request("POST", "/v1/matches", body).body
    assert "id" in created, created
    return created


def open_stream(
    port: int, match_id: str, *, headers: dict[str, str] | None = None
) -> tuple[socket.socket, int, bytes]:
    """Send a stream request; return the socket, the status and what came with the head."""
    stream = socket.create_connection(("127.0.0.1", port), timeout=ANSWER)
    extra = "".join(f"{name}: {value}\r\n" for name, value in (headers or {}).items())
    stream.sendall(f"GET /v1/matches/{match_id}/stream HTTP/1.1\r\nHost: x\r\n{extra}\r\n".encode())
    received = b""
    while b"\r\n\r\n" not in received:
        chunk = stream.recv(65536)
        if not chunk:
            break
        received += chunk
    status = int(received.split(b" ", 2)[1]) if received.startswith(b"HTTP/1.1 ") else 0
    length = int(header(received, "Content-Length") or 0)
    while len(received.split(b"\r\n\r\n", 1)[1]) < length:
        chunk = stream.recv(65536)
        if not chunk:
            break
        received += chunk
    return stream, status, received


def header(head: bytes, name: str) -> str | None:
    for line in head.split(b"\r\n\r\n", 1)[0].split(b"\r\n")[1:]:
        key, _, value = line.decode("latin-1").partition(":")
        if key.strip().lower() == name.lower():
            return value.strip()
    return None


def read_events(stream: socket.socket, until_id: int, received: bytes = b"") -> list[int]:
    """Read the stream until the message with id ``until_id``; return the ids seen.

    ``received`` is what came with the head (the first messages may come with it)."""
    seen: list[int] = []
    buffer = received.split(b"\r\n\r\n", 1)[-1]
    while True:
        *lines, buffer = buffer.split(b"\n")
        seen += [int(line[4:]) for line in lines if line.startswith(b"id: ")]
        if until_id in seen:
            return seen
        chunk = stream.recv(65536)
        assert chunk, f"the stream ended after ids {seen}"
        buffer += chunk


def still_serving(web: GunicornProcess, created: dict) -> None:
    """/readyz, the meld check and a move all answer (a hang fails at the socket timeout)."""
    assert web.request("GET", "/readyz", timeout=ANSWER).status == 200
    meld = web.request("POST", "/v1/meld-check", {"sets": [["R10", "R11", "R12"]]}, timeout=ANSWER)
    assert meld.status == 200, meld
    seat = created["match"]["current_seat"]
    drawn = web.request(
        "POST",
        f"/v1/matches/{created['id']}/draw",
        {},
        token=created["seats"][seat]["token"],
        timeout=ANSWER,
    )
    assert drawn.status == 200, drawn


@pytest.mark.slow
def test_a_flood_of_streams_from_one_address_gets_429s_at_once_and_the_service_answers(
    redis_server, start_gunicorn
) -> None:
    raise_open_files(2000)
    # MAX_STREAMS_PER_ADDRESS: 64 by default; keep-alive comments every 15 s.
    web = start_gunicorn(redis_server.url, workers=2)
    watched, played = create(web), create(web)
    opened = [open_stream(web.port, watched["id"]) for _ in range(300)]
    try:
        statuses = [status for _, status, _ in opened]
        # Two workers may each admit the 64th at the same instant: at most one more.
        assert 64 <= statuses.count(200) <= 65, statuses
        assert statuses.count(429) == 300 - statuses.count(200), sorted(set(statuses))
        refused = next(head for _, status, head in opened if status == 429)
        assert header(refused, "Retry-After") == "1"
        assert b"too-many-streams" in refused
        still_serving(web, played)
    finally:
        for stream, _, _ in opened:
            stream.close()
    # Their places are given back as soon as the server sees the clients leave (not at the
    # next keep-alive comment, 15 s on): the same address may open 64 streams again.
    again: list[socket.socket] = []
    deadline = time.monotonic() + SAFETY
    try:
        while len(again) < 64 and time.monotonic() < deadline:
            stream, status, _ = open_stream(web.port, watched["id"])
            if status == 200:
                again.append(stream)
            else:
                stream.close()
                time.sleep(0.2)
        assert len(again) == 64
    finally:
        for stream in again:
            stream.close()


@pytest.mark.slow
def test_half_sent_requests_hold_nothing_and_are_dropped_after_the_head_timeout(
    redis_server, start_gunicorn
) -> None:
    raise_open_files(2000)
    web = start_gunicorn(redis_server.url, workers=2, env={"REQUEST_HEAD_TIMEOUT": "2"})
    created = create(web)
    slow = []
    for _ in range(300):
        connection = socket.create_connection(("127.0.0.1", web.port), timeout=ANSWER)
        connection.sendall(b"GET /readyz HTTP/1.1\r\nHost: x\r\nX-a: ")
        slow.append(connection)
    try:
        still_serving(web, created)
        # Each is closed by the server once its head has not arrived in time, unanswered.
        for connection in slow:
            assert connection.recv(65536) == b""
    finally:
        for connection in slow:
            connection.close()


def test_a_body_that_does_not_arrive_in_time_is_dropped_unanswered(
    redis_server, start_gunicorn
) -> None:
    # 5 s for a body: time enough for this test to send the rest of one once the worker has
    # read its first part, on a loaded machine too.
    web = start_gunicorn(redis_server.url, workers=1, env={"REQUEST_BODY_TIMEOUT": "5"})
    body = b'{"sets": [["R10", "R11", "R12"]]}'
    head = (
        "POST /v1/meld-check HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    slow = socket.create_connection(("127.0.0.1", web.port), timeout=ANSWER)
    slow.sendall(head + body[:5])  # and the rest never comes
    # A body sent in parts within the time is answered as usual.
    parts = socket.create_connection(("127.0.0.1", web.port), timeout=ANSWER)
    parts.sendall(head + body[:5])
    wait_until_read(parts, web.port)  # the worker waits for the rest
    parts.sendall(body[5:])
    try:
        assert parts.recv(65536).startswith(b"HTTP/1.1 200")
        assert slow.recv(65536) == b""  # closed, no answer
        assert web.request("GET", "/readyz").status == 200
    finally:
        slow.close()
        parts.close()


def test_streams_beyond_the_worker_cap_get_a_503_and_long_polls_count_too(
    redis_server, start_gunicorn
) -> None:
    web = start_gunicorn(
        redis_server.url,
        workers=1,
        env={"MAX_STREAMS_PER_WORKER": "3", "MAX_STREAMS_PER_ADDRESS": "0"},
    )
    created = create(web)
    # The long-poll first: it takes its place before it starts following the match, which
    # Redis shows (the worker's reader connection, sse:<id>).
    waiting = socket.create_connection(("127.0.0.1", web.port), timeout=ANSWER)
    version = created["match"]["version"]
    waiting.sendall(
        f"GET /v1/matches/{created['id']}?wait_version={version}&timeout=30 HTTP/1.1\r\n"
        "Host: x\r\n\r\n".encode()
    )
    with redis_server.client() as admin:
        wait_for(
            lambda: any(c.get("name") == f"sse:{created['id']}" for c in admin.client_list()),
            "the long-poll never waited",
        )
    opened = [open_stream(web.port, created["id"]) for _ in range(2)]
    try:
        assert [status for _, status, _ in opened] == [200, 200]
        stream, status, head = open_stream(web.port, created["id"])
        stream.close()
        assert status == 503, head
        assert header(head, "Retry-After") == "1"
        assert b"server-busy" in head
        waiting.close()
        assert web.request("GET", "/readyz").status == 200  # requests are not capped
    finally:
        for stream, _, _ in opened:
            stream.close()


def test_the_address_cap_counts_over_every_worker_and_frees_a_dead_workers_places(
    redis_server, start_gunicorn
) -> None:
    web = start_gunicorn(redis_server.url, workers=2, env={"MAX_STREAMS_PER_ADDRESS": "4"})
    created = create(web)
    opened = [open_stream(web.port, created["id"]) for _ in range(12)]
    statuses = [status for _, status, _ in opened]
    assert 4 <= statuses.count(200) <= 5 and statuses.count(429) == 12 - statuses.count(200)
    # Workers killed with their streams open: their replacements do not inherit the counts.
    for pid in web.worker_pids():
        web.kill_worker(pid)
    web.wait_workers(booted=4)
    for stream, _, _ in opened:
        stream.close()
    again = [open_stream(web.port, created["id"]) for _ in range(4)]
    try:
        assert [status for _, status, _ in again] == [200] * 4
    finally:
        for stream, _, _ in again:
            stream.close()


def test_behind_a_trusted_proxy_the_cap_counts_the_forwarded_address(
    redis_server, start_gunicorn
) -> None:
    web = start_gunicorn(
        redis_server.url,
        workers=1,
        env={"MAX_STREAMS_PER_ADDRESS": "2", "TRUSTED_PROXIES": "1"},
    )
    created = create(web)
    first = {"X-Forwarded-For": "203.0.113.7"}
    opened = [open_stream(web.port, created["id"], headers=first) for _ in range(3)]
    other = open_stream(web.port, created["id"], headers={"X-Forwarded-For": "203.0.113.8"})
    try:
        assert [status for _, status, _ in opened] == [200, 200, 429]
        assert other[1] == 200
    finally:
        for stream, _, _ in [*opened, other]:
            stream.close()


def test_a_stream_resumes_with_last_event_id_after_its_worker_is_killed(
    redis_server, start_gunicorn
) -> None:
    web = start_gunicorn(redis_server.url, workers=1)
    created = create(web)
    match_id, version = created["id"], created["match"]["version"]
    stream, status, received = open_stream(web.port, match_id)
    assert status == 200
    assert read_events(stream, version, received)[-1] == version
    web.kill_worker(web.worker_pids()[0])
    with contextlib.suppress(OSError):
        while stream.recv(65536):
            pass  # the connection dies with its worker
    stream.close()
    web.wait_workers(booted=2)
    web.wait_ready()
    # Moves made while the client was away.
    for _ in range(2):
        match = web.request("GET", f"/v1/matches/{match_id}").body
        seat = match["current_seat"]
        token = created["seats"][seat]["token"]
        drawn = web.request("POST", f"/v1/matches/{match_id}/draw", {}, token=token)
        assert drawn.status == 200, drawn
    latest = web.request("GET", f"/v1/matches/{match_id}").body["version"]
    resumed, status, received = open_stream(
        web.port, match_id, headers={"Last-Event-ID": str(version)}
    )
    try:
        assert status == 200
        assert read_events(resumed, latest, received) == list(range(version + 1, latest + 1))
    finally:
        resumed.close()


@pytest.mark.slow
def test_sigterm_with_thousands_of_streams_open_ends_each_of_them_and_stops_in_time(
    redis_server, start_gunicorn
) -> None:
    count = 2000
    raise_open_files(2 * count + 200)
    web = start_gunicorn(redis_server.url, workers=2, env={"MAX_STREAMS_PER_ADDRESS": "0"})
    matches = [create(web)["id"] for _ in range(20)]
    selector = selectors.DefaultSelector()
    streams = []
    for number in range(count):
        stream, status, received = open_stream(web.port, matches[number % len(matches)])
        for _ in range(3):  # a busy machine may stall Redis past its timeout: a 503, retried
            if status != 503:
                break
            stream.close()
            time.sleep(float(header(received, "Retry-After") or 1))
            stream, status, received = open_stream(web.port, matches[number % len(matches)])
        assert status == 200, received
        stream.setblocking(False)
        selector.register(stream, selectors.EVENT_READ, bytearray(received))
        streams.append(stream)
    told = time.monotonic()
    os.kill(web.pid, signal.SIGTERM)
    endings: list[bytes] = []
    while len(endings) < count and time.monotonic() - told < SAFETY:
        for key, _ in selector.select(timeout=1):
            try:
                chunk = key.fileobj.recv(65536)  # type: ignore[union-attr]
            except ConnectionResetError:
                chunk = b""
            if chunk:
                key.data.extend(chunk)
            else:
                selector.unregister(key.fileobj)
                endings.append(bytes(key.data))
    # Held past the graceful timeout (20 s), they would be cut, which the log would say too.
    assert len(endings) == count, f"{count - len(endings)} streams still open after SIGTERM"
    cut = [ending[-200:] for ending in endings if not ending.endswith(b"0\r\n\r\n")]
    assert not cut, f"{len(cut)} streams were cut instead of ended, e.g. {cut[0]!r}"
    wait_for(lambda: not web.running, "gunicorn did not stop")
    log = web.log_text()
    assert "WORKER TIMEOUT" not in log and "graceful timeout" not in log, log[-2000:]
    for stream in streams:
        stream.close()


def test_a_refused_stream_is_answered_on_a_connection_that_stays_usable(
    redis_server, start_gunicorn
) -> None:
    web = start_gunicorn(redis_server.url, workers=1, env={"MAX_STREAMS_PER_ADDRESS": "1"})
    created = create(web)
    stream, status, _ = open_stream(web.port, created["id"])
    try:
        assert status == 200
        refused = http_request(web.port, "GET", f"/v1/matches/{created['id']}/stream")
        assert refused.status == 429
        assert refused.header("Content-Type") == "application/problem+json"
        assert refused.body["type"].endswith(":too-many-streams")
    finally:
        stream.close()
