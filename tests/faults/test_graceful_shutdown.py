"""Graceful shutdown: on SIGTERM gunicorn stops taking requests and answers those in flight;
long-polls and event streams end at once instead of holding the worker past its graceful
timeout (deploy/gunicorn.conf.py: 20 s), after which gunicorn would kill it.

No test here times anything: a long-poll asked to wait longer than the graceful timeout is
answered whole only if SIGTERM ended its wait (held, it would be cut when the worker is
killed), and each step waits for the event it needs (a connection accepted, a stream ended).
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket

from service.store import Keys
from tests.support.gunicorn_process import GunicornProcess
from tests.support.sockets import wait_for, wait_until_read

GRACEFUL_TIMEOUT = 20  # seconds: service/workers/gunicorn.py
LONG_POLL = 30  # seconds: longer than the graceful timeout (and the longest a client may ask)


def serving_a_match(redis_server, start_gunicorn) -> tuple[GunicornProcess, dict]:
    """One gunicorn worker, and a new two-player match without a clock. A body may take a
    minute to arrive (REQUEST_BODY_TIMEOUT): the test sends one after SIGTERM was handled."""
    web = start_gunicorn(redis_server.url, workers=1, threads=4, env={"REQUEST_BODY_TIMEOUT": "60"})
    body = {"players": [{"name": "Ann"}, {"name": "Bo"}], "rules": {"turn_seconds": 0}}
    return web, web.request("POST", "/v1/matches", body).body


def read_until_closed(connection: socket.socket) -> bytes:
    received = b""
    while chunk := connection.recv(65536):
        received += chunk
    return received


def send(port: int, request: str) -> socket.socket:
    """A new connection that has sent ``request``; its reads fail only well after gunicorn
    would have killed a worker that held it."""
    connection = socket.create_connection(("127.0.0.1", port), timeout=3 * GRACEFUL_TIMEOUT)
    connection.sendall(request.encode())
    return connection


def open_stream(port: int, path: str) -> socket.socket:
    """An event stream of the match at ``path``, read up to its first message."""
    stream = send(port, f"GET {path}/stream HTTP/1.1\r\nHost: x\r\n\r\n")
    opened = b""
    while b"retry:" not in opened and (chunk := stream.recv(65536)):
        opened += chunk  # the head, then the stream's first message
    assert opened.startswith(b"HTTP/1.1 200") and b"retry:" in opened, opened
    return stream


def followed(redis_server, match_id: str) -> bool:
    """Whether a worker follows the match's events (its reader's connection, named
    ``sse:<id>``, is open; a long-poll or a stream starts it once admitted)."""
    with redis_server.client() as admin:
        return any(c.get("name") == f"sse:{match_id}" for c in admin.client_list())


def wait_until_stopped(web: GunicornProcess) -> None:
    wait_for(lambda: not web.running, "gunicorn did not stop")


def test_on_sigterm_long_polls_answer_and_event_streams_end_at_once(
    redis_server, start_gunicorn
) -> None:
    web, created = serving_a_match(redis_server, start_gunicorn)
    path = f"/v1/matches/{created['id']}"
    version = created["match"]["version"]
    # A long-poll that would wait longer than the graceful timeout, and an event stream that
    # would stay open for minutes.
    poll = send(
        web.port,
        f"GET {path}?wait_version={version}&timeout={LONG_POLL} HTTP/1.1\r\n"
        "Host: x\r\nConnection: close\r\n\r\n",
    )
    wait_for(lambda: followed(redis_server, created["id"]), "the long-poll never waited")
    stream = open_stream(web.port, path)

    os.kill(web.pid, signal.SIGTERM)
    rest = read_until_closed(stream)
    answer = http.client.HTTPResponse(poll)  # type: ignore[arg-type]
    answer.begin()
    view = json.loads(answer.read())
    wait_until_stopped(web)

    assert rest.endswith(b"0\r\n\r\n"), rest  # the stream's last chunk: it ended, not cut
    assert answer.status == 200, view
    assert view["version"] == version  # answered as it is: nothing happened
    log = web.log_text()
    assert "WORKER TIMEOUT" not in log and "SIGKILL" not in log, log[-2000:]


def test_a_request_in_flight_when_gunicorn_is_told_to_stop_still_gets_its_answer(
    redis_server, start_gunicorn
) -> None:
    web, created = serving_a_match(redis_server, start_gunicorn)
    token = created["seats"][created["match"]["current_seat"]]["token"]
    # A request whose body is still on its way when SIGTERM arrives: the worker has taken it
    # and must answer it, not drop it.
    body = b"{}"
    head = (
        f"POST /v1/matches/{created['id']}/draw HTTP/1.1\r\nHost: x\r\n"
        f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    # A stream beside it ends once the worker has been told to stop.
    told = open_stream(web.port, f"/v1/matches/{created['id']}")
    client = send(web.port, head)
    wait_until_read(client, web.port)  # the worker is reading it
    os.kill(web.pid, signal.SIGTERM)
    read_until_closed(told)
    client.sendall(body)
    answer = read_until_closed(client)
    assert answer.startswith(b"HTTP/1.1 200"), answer[:300]
    with redis_server.client() as admin:
        after = admin.xrange(Keys(created["id"]).events, f"(0-{created['match']['version']}", "+")
    assert after, "answered 200, but the draw is not in the match's log"
    wait_until_stopped(web)
    assert "WORKER TIMEOUT" not in web.log_text()
