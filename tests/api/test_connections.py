"""Caps on open event streams and long-polls (service/api/connections.py): beyond them a 429
or 503 problem with Retry-After, at once; a place is given back when its wait ends.

In one process (no gunicorn), the counts are the process's own; tests/faults/
test_live_connections.py checks them across gunicorn workers."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask

from service.app import create_app
from tests.support.contract import ContractClient


def new_app(redis_url: str, **overrides: Any) -> Flask:
    app = create_app({"redis_url": redis_url, "test_mode": True, **overrides})
    app.test_client_class = ContractClient
    return app


@pytest.fixture
def capped(redis_url: str) -> Iterator[Flask]:
    yield new_app(redis_url, max_streams_per_address=2, stream_keepalive_seconds=30)


def create(client: Any) -> dict[str, Any]:
    body = {"players": [{"name": "Ann"}, {"name": "Bo"}], "rules": {"turn_seconds": 0}}
    response = client.post("/v1/matches", json=body)
    assert response.status_code == 201
    return response.get_json()


def open_stream(client: Any, match_id: str, address: str = "198.51.100.1") -> Any:
    response = client.get(
        f"/v1/matches/{match_id}/stream",
        buffered=False,
        environ_overrides={"REMOTE_ADDR": address},
    )
    if response.status_code == 200:
        next(iter(response.response))  # the stream is under way
    return response


def test_streams_beyond_the_address_cap_get_a_429_with_retry_after(capped) -> None:
    client = capped.test_client()
    match_id = create(client)["id"]
    streams = [open_stream(client, match_id) for _ in range(2)]
    refused = open_stream(client, match_id)
    try:
        assert [s.status_code for s in streams] == [200, 200]
        assert refused.status_code == 429
        assert refused.headers["Retry-After"] == "1"
        problem = refused.get_json()
        assert problem["type"].endswith(":too-many-streams")
        assert "at most 2" in problem["detail"]
        # Another address has places of its own.
        other = open_stream(client, match_id, address="198.51.100.2")
        assert other.status_code == 200
        other.close()
    finally:
        for stream in streams:
            stream.close()


def test_a_closed_stream_gives_its_place_back(capped) -> None:
    client = capped.test_client()
    match_id = create(client)["id"]
    first, second = open_stream(client, match_id), open_stream(client, match_id)
    first.close()
    third = open_stream(client, match_id)
    try:
        assert third.status_code == 200
    finally:
        second.close()
        third.close()


def test_long_polls_count_against_the_cap_too(capped) -> None:
    client = capped.test_client()
    created = create(client)
    match_id, version = created["id"], created["match"]["version"]
    stream = open_stream(client, match_id)
    answers: list[Any] = []
    waiting = threading.Thread(
        target=lambda: answers.append(
            capped.test_client().get(
                f"/v1/matches/{match_id}?wait_version={version}&timeout=30",
                environ_overrides={"REMOTE_ADDR": "198.51.100.1"},
            )
        )
    )
    waiting.start()
    try:
        # The long-poll holds the address's second place once it waits (probing with streams
        # of the same address instead raced it: a probe open as it came made it a 429).
        counts = capped.extensions["open_streams"]
        deadline = time.monotonic() + 30  # a safety bound: the loop ends once it waits
        while counts.by_address("198.51.100.1") < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        refused = open_stream(client, match_id)
        assert refused.status_code == 429
        polled = client.get(
            f"/v1/matches/{match_id}?wait_version={version}&timeout=1",
            environ_overrides={"REMOTE_ADDR": "198.51.100.1"},
        )
        assert polled.status_code == 429
        assert polled.headers["Retry-After"] == "1"
        seats = created["seats"]
        mover = seats[created["match"]["current_seat"]]["token"]
        drew = client.post(
            f"/v1/matches/{match_id}/draw", headers={"Authorization": f"Bearer {mover}"}
        )
        assert drew.status_code == 200  # a new version: the long-poll answers now
    finally:
        stream.close()
        waiting.join(60)
    assert [answer.status_code for answer in answers] == [200]


def test_streams_beyond_the_worker_cap_get_a_503_with_retry_after(redis_url) -> None:
    app = new_app(redis_url, max_streams_per_worker=1, max_streams_per_address=0)
    client = app.test_client()
    match_id = create(client)["id"]
    first = open_stream(client, match_id)
    refused = open_stream(client, match_id, address="198.51.100.9")
    try:
        assert first.status_code == 200
        assert refused.status_code == 503
        assert refused.headers["Retry-After"] == "1"
        assert refused.get_json()["type"].endswith(":server-busy")
    finally:
        first.close()


def test_with_the_cap_off_one_address_may_open_many_streams(redis_url) -> None:
    app = new_app(redis_url, max_streams_per_address=0)
    client = app.test_client()
    match_id = create(client)["id"]
    streams = [open_stream(client, match_id) for _ in range(100)]
    try:
        assert {s.status_code for s in streams} == {200}
    finally:
        for stream in streams:
            stream.close()
