"""One gunicorn worker: open long-polls, streams and silent connections never hold up others
(the gevent worker, docs/ARCHITECTURE.md, "Worker model").

Nothing is timed: a request is shown not to wait behind the others by being answered while
they still wait (a long-poll asked to wait 30 s, a connection that sends nothing), in that
order, whatever the machine's speed.
"""

from __future__ import annotations

import socket
import threading

from tests.support.gunicorn_process import http_request
from tests.support.sockets import SAFETY, still_open, wait_for, wait_until_accepted

LONG_POLL = 30  # seconds: the longest a client may ask a long-poll to wait


def one_slot(redis_server, start_gunicorn):
    return start_gunicorn(redis_server.url, workers=1)


def create(web) -> dict:
    body = {"players": [{"name": "Ann"}, {"name": "Bo"}], "rules": {"turn_seconds": 0}}
    return web.request("POST", "/v1/matches", body).body


def followed(redis_server, match_id: str) -> bool:
    """Whether the worker follows the match's events (its reader connection, ``sse:<id>``)."""
    with redis_server.client() as admin:
        return any(c.get("name") == f"sse:{match_id}" for c in admin.client_list())


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
                    web.port,
                    "GET",
                    f"{path}?wait_version={version}&timeout={LONG_POLL}",
                    timeout=SAFETY,
                )
            )
        )
        for _ in range(3)
    ]
    stream = socket.create_connection(("127.0.0.1", web.port), timeout=SAFETY)
    stream.sendall(f"GET {path}/stream HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    for thread in waiting:
        thread.start()
    wait_until_accepted(stream, web.port)
    wait_for(lambda: followed(redis_server, created["id"]), "nothing waits on the match")
    reply = web.request("GET", path, timeout=SAFETY)
    assert reply.status == 200
    assert answers == []  # answered while every long-poll still waits (for 30 s)
    assert still_open(stream)
    # A move ends the long-polls' wait.
    seat = created["match"]["current_seat"]
    token = created["seats"][seat]["token"]
    assert web.request("POST", f"{path}/draw", {}, token=token).status == 200
    stream.close()
    for thread in waiting:
        thread.join(SAFETY)
    assert [answer.status for answer in answers] == [200, 200, 200]
    assert all(answer.body["version"] > version for answer in answers)


def test_silent_new_connections_leave_the_slot_to_other_requests(
    redis_server, start_gunicorn
) -> None:
    # Connections that send nothing (browsers open spare ones) wait without a slot: a request
    # is answered while the worker holds all of them, none dropped yet (they would be after
    # REQUEST_HEAD_TIMEOUT, a minute here: a loaded machine may take the default 5 s).
    web = start_gunicorn(redis_server.url, workers=1, env={"REQUEST_HEAD_TIMEOUT": "60"})
    silent = [socket.create_connection(("127.0.0.1", web.port), timeout=SAFETY) for _ in range(3)]
    try:
        for connection in silent:
            wait_until_accepted(connection, web.port)
        reply = web.request("GET", "/readyz", timeout=SAFETY)
        assert reply.status == 200
        assert all(still_open(connection) for connection in silent)
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
    wait_for(
        lambda: web.log_text().count('"GET /healthz') >= PIPELINED, "the access log is not whole"
    )
    answered = [line for line in web.log_text().splitlines() if "/healthz" in line]
    position = next(n for n, line in enumerate(answered) if '"HEAD /healthz' in line)
    assert position < PIPELINED // 4, f"the other request was answered after {position}"
