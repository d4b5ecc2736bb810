"""One gunicorn worker: open long-polls, streams and silent connections never hold up others
(the gevent worker, docs/ARCHITECTURE.md, "Worker model")."""

from __future__ import annotations

import socket
import threading
import time

from tests.support.gunicorn_process import http_request

QUICK = 1.0  # seconds: far less than any of the waits below


def one_slot(redis_server, start_gunicorn):
    return start_gunicorn(redis_server.url, workers=1)


def create(web) -> dict:
    body = {"players": [{"name": "Ann"}, {"name": "Bo"}], "rules": {"turn_seconds": 0}}
    return web.request("POST", "/v1/matches", body).body


def timed(call) -> tuple[object, float]:
    started = time.monotonic()
    answer = call()
    return answer, time.monotonic() - started


def test_open_long_polls_and_streams_leave_the_slot_to_other_requests(
    redis_server, start_gunicorn
) -> None:
    web = one_slot(redis_server, start_gunicorn)
    created = create(web)
    path = f"/v1/matches/{created['id']}"
    version = created["match"]["version"]
    answers: list = []
    waiting = [
        threading.Thread(
            target=lambda: answers.append(
                http_request(
                    web.port, "GET", f"{path}?wait_version={version}&timeout=5", timeout=15
                )
            )
        )
        for _ in range(3)
    ]
    stream = socket.create_connection(("127.0.0.1", web.port), timeout=10)
    stream.sendall(f"GET {path}/stream HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    for thread in waiting:
        thread.start()
    time.sleep(0.5)  # all of them waiting now
    reply, seconds = timed(lambda: web.request("GET", path, timeout=10))
    assert reply.status == 200
    assert seconds < QUICK
    stream.close()
    for thread in waiting:
        thread.join(15)
    assert [answer.status for answer in answers] == [200, 200, 200]


def test_silent_new_connections_leave_the_slot_to_other_requests(
    redis_server, start_gunicorn
) -> None:
    web = one_slot(redis_server, start_gunicorn)
    # Connections that send nothing (browsers open spare ones) wait without a slot.
    silent = [socket.create_connection(("127.0.0.1", web.port), timeout=10) for _ in range(3)]
    try:
        time.sleep(0.3)
        reply, seconds = timed(lambda: web.request("GET", "/readyz", timeout=10))
        assert reply.status == 200
        assert seconds < QUICK
    finally:
        for connection in silent:
            connection.close()


PIPELINED = 400


def test_a_connection_whose_requests_are_all_there_does_not_keep_the_worker_to_itself(
    redis_server, start_gunicorn
) -> None:
    """A greenlet runs until a read would block: a client that sent many requests at once
    (or a fast one whose next request is always there already) would be served to the end
    while every other connection waited. The worker lets the others run after each answer
    (``post_request`` in deploy/gunicorn.conf.py), so a request on another connection is
    answered long before the batch is. Neither touches Redis: only the worker's own turns
    decide the order."""
    web = start_gunicorn(redis_server.url, workers=1, env={"GUNICORN_ACCESS_LOG": "1"})
    batch = socket.create_connection(("127.0.0.1", web.port), timeout=10)
    other = socket.create_connection(("127.0.0.1", web.port), timeout=10)
    request = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
    batch.sendall(request * PIPELINED)
    other.sendall(b"HEAD /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert b" 200 " in other.recv(4096).split(b"\r\n", 1)[0] + b" "
    received = b""
    while received.count(b"HTTP/1.1 200") < PIPELINED:
        chunk = batch.recv(65536)
        assert chunk, "the batch connection closed early"
        received += chunk
    batch.close()
    other.close()
    deadline = time.monotonic() + 5
    while web.log_text().count('"GET /healthz') < PIPELINED and time.monotonic() < deadline:
        time.sleep(0.05)
    answered = [line for line in web.log_text().splitlines() if "/healthz" in line]
    position = next(n for n, line in enumerate(answered) if '"HEAD /healthz' in line)
    assert position < PIPELINED // 4, f"the other request was answered after {position}"
