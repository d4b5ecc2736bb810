"""Graceful shutdown: on SIGTERM gunicorn stops taking requests and answers those in flight;
long-polls and event streams end at once instead of holding the worker past its graceful
timeout (deploy/gunicorn.conf.py: 20 s), after which gunicorn would kill it."""

from __future__ import annotations

import os
import signal
import socket
import threading
import time

from service.store import Keys
from tests.support.gunicorn_process import GunicornProcess, http_request

# seconds: a long wait ends within about one second of SIGTERM (service/workers/threads.py)
PROMPT = 3.0


def serving_a_match(redis_server, start_gunicorn) -> tuple[GunicornProcess, dict]:
    """One gunicorn worker, and a new two-player match without a clock."""
    web = start_gunicorn(redis_server.url, workers=1, threads=4)
    body = {"players": [{"name": "Ann"}, {"name": "Bo"}], "rules": {"turn_seconds": 0}}
    return web, web.request("POST", "/v1/matches", body).body


def read_until_closed(stream: socket.socket) -> bytes:
    received = b""
    while chunk := stream.recv(65536):
        received += chunk
    return received


def test_on_sigterm_long_polls_answer_and_event_streams_end_at_once(
    redis_server, start_gunicorn
) -> None:
    web, created = serving_a_match(redis_server, start_gunicorn)
    path = f"/v1/matches/{created['id']}"
    version = created["match"]["version"]
    answers: list = []
    # A long-poll that would wait 10 s, and an event stream that would stay open for minutes.
    waiting = threading.Thread(
        target=lambda: answers.append(
            http_request(web.port, "GET", f"{path}?wait_version={version}&timeout=10", timeout=20)
        )
    )
    waiting.start()
    stream = socket.create_connection(("127.0.0.1", web.port), timeout=15)
    stream.sendall(f"GET {path}/stream HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    opened = b""
    while b"retry:" not in opened and (chunk := stream.recv(65536)):
        opened += chunk  # the head, then the stream's first message
    assert opened.startswith(b"HTTP/1.1 200") and b"retry:" in opened, opened
    time.sleep(0.5)  # the long-poll is waiting too

    told = time.monotonic()
    os.kill(web.pid, signal.SIGTERM)
    rest = read_until_closed(stream)
    stream_ended = time.monotonic() - told
    waiting.join(timeout=15)
    long_poll_answered = time.monotonic() - told
    while web.running and time.monotonic() - told < 15:
        time.sleep(0.05)
    stopped = time.monotonic() - told

    assert rest.endswith(b"0\r\n\r\n"), rest  # the stream's last chunk: it ended, not cut
    assert stream_ended < PROMPT, f"the stream ended {stream_ended:.1f} s after SIGTERM"
    assert answers and answers[0].status == 200, answers
    assert answers[0].body["version"] == version  # answered as it is: nothing happened
    assert long_poll_answered < PROMPT, f"the long-poll answered after {long_poll_answered:.1f} s"
    assert not web.running and stopped < PROMPT + 1, f"gunicorn ran {stopped:.1f} s on"
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
    ).encode()
    client = socket.create_connection(("127.0.0.1", web.port), timeout=15)
    client.sendall(head)
    time.sleep(0.5)  # the worker is reading it
    os.kill(web.pid, signal.SIGTERM)
    time.sleep(0.3)
    client.sendall(body)
    answer = read_until_closed(client)
    assert answer.startswith(b"HTTP/1.1 200"), answer[:300]
    with redis_server.client() as admin:
        after = admin.xrange(Keys(created["id"]).events, f"(0-{created['match']['version']}", "+")
    assert after, "answered 200, but the draw is not in the match's log"
    started = time.monotonic()
    while web.running and time.monotonic() - started < 15:
        time.sleep(0.1)
    assert not web.running
    assert "WORKER TIMEOUT" not in web.log_text()
