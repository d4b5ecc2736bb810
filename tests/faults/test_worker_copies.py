"""Under gunicorn, the workers of one host share the states of their last commits
(``service/workers/shared_states.py``): a move that reaches a worker whose copy of the match another
worker made old is still one commit script, not a refused commit and a second one."""

from __future__ import annotations

import hashlib
import threading

import redis

from service.store.scripts import COMMIT
from tests.support.gunicorn_process import http_request

DRAFTS = 30


def commits_sent(client: redis.Redis, during) -> int:
    """How many times the commit script was sent (MONITOR) while ``during()`` ran."""
    digest = hashlib.sha1(COMMIT.encode()).hexdigest()
    seen: list[str] = []
    ready = threading.Event()
    done = threading.Event()

    def watch() -> None:
        with client.monitor() as monitor:
            ready.set()
            for command in monitor.listen():
                text = command["command"]
                if text == "PING" and done.is_set():
                    return
                seen.append(text)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    assert ready.wait(60), "the monitor never started"
    try:
        during()
    finally:
        done.set()
        client.ping()  # wakes the monitor so that it returns
        watcher.join(60)
    assert not any(text.startswith("EVAL ") for text in seen)  # the create loaded every script
    return sum(1 for text in seen if text.startswith("EVALSHA") and digest in text)


def test_moves_spread_over_two_workers_each_commit_once(redis_server, start_gunicorn) -> None:
    web = start_gunicorn(redis_server.url, workers=2)
    body = {
        "players": [{"name": "Ann"}, {"name": "Bo"}],
        "rules": {"turn_seconds": 0},
        "setup": {
            "racks": [["R1", "R2", "R3", "R4"], ["B1", "B2", "B3", "B4"]],
            "pool": ["K1", "K2", "K3"],
            "first_seat": 0,
        },
    }
    created = http_request(web.port, "POST", "/v1/matches", body).body
    path, ann = f"/v1/matches/{created['id']}", created["seats"][0]["token"]
    for _ in range(10):  # every worker has read the clock and holds a copy
        assert http_request(web.port, "GET", path, token=ann).status == 200
    tiles = [["R1"], ["R1", "R2"], ["R2", "R3"], ["R4"], None]

    def drafts() -> None:
        for n in range(DRAFTS):  # each on a new connection: the kernel picks the worker
            table = [] if tiles[n % 5] is None else [tiles[n % 5]]
            answer = http_request(web.port, "PUT", f"{path}/draft", {"table": table}, token=ann)
            assert answer.status == 200, answer.body
            assert answer.body["match"]["version"] == created["match"]["version"] + n + 1

    client = redis.Redis(port=redis_server.port, decode_responses=True)
    assert commits_sent(client, drafts) == DRAFTS  # without the table about 1.5 per draft
