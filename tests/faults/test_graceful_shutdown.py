"""Graceful shutdown: on SIGTERM gunicorn stops taking requests but finishes those in flight."""

from __future__ import annotations

import os
import signal
import threading
import time

from tests.support.gunicorn_process import http_request


def test_a_request_in_flight_when_gunicorn_is_told_to_stop_still_gets_its_answer(
    redis_server, start_gunicorn
) -> None:
    web = start_gunicorn(redis_server.url, workers=1, threads=4)
    created = web.request(
        "POST",
        "/v1/matches",
        {
            "players": [{"name": "Ann"}, {"name": "Bo"}],
            "rules": {"turn_seconds": 0},
            "setup": {"racks": [["R1"], ["K1"]], "pool": ["O1", "O2"]},
        },
    ).body
    path = f"/v1/matches/{created['id']}"
    version = created["match"]["version"]
    answers: list = []
    # A long-poll that will be waiting when SIGTERM arrives, and is answered by a move after it.
    waiting = threading.Thread(
        target=lambda: answers.append(
            http_request(web.port, "GET", f"{path}?wait_version={version}&timeout=10", timeout=20)
        )
    )
    waiting.start()
    time.sleep(0.5)
    os.kill(web.pid, signal.SIGTERM)
    time.sleep(0.3)
    token = created["seats"][0]["token"]
    # The master no longer accepts connections, so the move goes straight to Redis's side:
    # a second gunicorn on the same Redis applies it, as another instance would.
    other = start_gunicorn(redis_server.url, workers=1, threads=2)
    moved = other.request("POST", f"{path}/draw", headers={"Authorization": f"Bearer {token}"})
    assert moved.status == 200
    waiting.join(timeout=15)
    assert answers and answers[0].status == 200
    assert answers[0].body["version"] > version
    started = time.monotonic()
    while web.running and time.monotonic() - started < 15:
        time.sleep(0.1)
    assert not web.running
    assert "WORKER TIMEOUT" not in web.log_text()
