"""``GET /v1/matches/{id}/stream``: the public events as Server-Sent Events, from Redis.

The events are written straight into the store's keys (as the referee's commit writes them),
so these tests need nothing but Redis: the stream only reads the match's event stream.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from flask import Flask

from service.app import create_app
from service.game.codec import rules_to_dict
from service.rules import Rules
from service.store import Keys
from tests.support.contract import ContractClient

KEEPALIVE = 0.2
MATCH = "m4tchStream"


@pytest.fixture
def app(redis_url: str) -> Iterator[Flask]:
    app = create_app(
        {"redis_url": redis_url, "stream_keepalive_seconds": KEEPALIVE, "stream_max_seconds": 30}
    )
    app.test_client_class = ContractClient
    yield app


@pytest.fixture
def store(redis_client: Any) -> Any:
    """A plain Redis client on the app's Redis: it writes what a commit writes."""
    return redis_client


# What each event type's data holds, as the referee writes it (the contract checks each one).
TURN = {"next_seat": 1, "turn_deadline": None}
SAMPLE_DATA: dict[str, dict[str, Any]] = {
    "match_created": {"players": [{"seat": 0, "name": "Ann", "bot": False}], "rules": {}},
    "game_started": {
        "game_number": 1,
        "first_seat": 0,
        "dealt": [14, 14],
        "returned": [0, 0],
        "pool_count": 78,
        "table": [],
        "melded": [False, False],
        "turn_deadline": None,
    },
    "played": {"table": [["R7", "R8", "R9"]], "added": ["R7"], "went_out": False, **TURN},
    "drew": {"count": 1, **TURN},
    "game_over": {
        "game_number": 1,
        "reason": "went_out",
        "ending": "went_out",
        "winner": 0,
        "scores": [10, -10],
        "totals": [10, -10],
    },
    "match_finished": {"winner": 0, "totals": [10, -10], "games_won": [1, 0], "games_played": 1},
    "match_canceled": {"game_number": 1},
}
PER_SEAT = {"played", "drew"}


def event(version: int, kind: str, **data: Any) -> dict[str, Any]:
    sample = dict(SAMPLE_DATA[kind])
    if kind == "match_created":
        sample["rules"] = rules_to_dict(Rules())
    return {
        "type": kind,
        "version": version,
        "at": 1_700_000_000.0 + version,
        "seat": 0 if kind in PER_SEAT else None,
        "data": {**sample, **data},
    }


def commit(store: Any, *events: dict[str, Any], match_id: str = MATCH) -> None:
    """Append ``events`` to the match, as the referee's commit does."""
    keys = Keys(match_id)
    store.hset(keys.state, mapping={"v": events[-1]["version"], "s": "{}", "c": "test"})
    for e in events:
        store.xadd(keys.events, {"e": json.dumps(e), "c": "test"}, id=f"0-{e['version']}")


class Reader:
    """Reads SSE messages from a streamed test response, one at a time."""

    def __init__(self, response: Any) -> None:
        self.response = response
        self.chunks = iter(response.response)
        self.buffer = ""

    def message(self) -> dict[str, Any]:
        """The next message or comment block, parsed into its fields."""
        while "\n\n" not in self.buffer:
            chunk = next(self.chunks)
            self.buffer += chunk.decode() if isinstance(chunk, bytes) else chunk
        block, self.buffer = self.buffer.split("\n\n", 1)
        fields: dict[str, Any] = {"comments": []}
        for line in block.split("\n"):
            name, _, value = line.partition(": ")
            if name == "":
                fields["comments"].append(value)
            else:
                fields[name] = value
        return fields

    def event(self) -> dict[str, Any]:
        """The next message that carries an event, skipping comments."""
        while True:
            fields = self.message()
            if "data" in fields:
                return fields

    def ended(self) -> bool:
        """Whether the server closed the stream once what it buffered was read."""
        try:
            while True:
                chunk = next(self.chunks)
                self.buffer += chunk.decode() if isinstance(chunk, bytes) else chunk
        except StopIteration:
            return True

    def close(self) -> None:
        self.response.close()


def follow(
    client: ContractClient, path: str = f"/v1/matches/{MATCH}/stream", **kwargs: Any
) -> Reader:
    response = client.get(path, buffered=False, **kwargs)
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.mimetype == "text/event-stream"
    assert "no-cache" in response.headers["Cache-Control"]
    return Reader(response)


def test_each_event_is_a_message_with_its_version_as_id_and_its_type_as_event(
    client, store
) -> None:
    commit(store, event(1, "match_created"), event(2, "game_started", game_number=1))
    reader = follow(client)
    first, second = reader.event(), reader.event()
    reader.close()
    assert (first["id"], first["event"]) == ("1", "match_created")
    assert (second["id"], second["event"]) == ("2", "game_started")
    assert json.loads(second["data"]) == event(2, "game_started", game_number=1)


def test_the_stream_starts_with_a_retry_delay_for_eventsource(client, store) -> None:
    commit(store, event(1, "match_created"))
    reader = follow(client)
    opening = reader.message()
    reader.close()
    assert opening["retry"].isdigit()


def test_last_event_id_resumes_after_that_version(client, store) -> None:
    commit(store, *(event(v, "drew", count=1) for v in range(1, 6)))
    reader = follow(client, headers={"Last-Event-ID": "3"}, query_string={"after": "1"})
    assert reader.event()["id"] == "4"
    reader.close()


def test_after_resumes_when_there_is_no_last_event_id(client, store) -> None:
    commit(store, *(event(v, "drew", count=1) for v in range(1, 6)))
    reader = follow(client, query_string={"after": "4"})
    assert reader.event()["id"] == "5"
    reader.close()


def test_a_keep_alive_comment_comes_while_nothing_happens(client, store) -> None:
    commit(store, event(1, "match_created"))
    reader = follow(client, query_string={"after": "1"})
    reader.message()  # the opening: retry delay
    assert reader.message()["comments"] == ["keep-alive"]
    reader.close()


def test_an_event_committed_while_the_client_waits_arrives(client, store) -> None:
    commit(store, event(1, "match_created"))
    reader = follow(client, query_string={"after": "1"})
    later = threading.Timer(0.3, commit, args=(store, event(2, "played", added=["R7"])))
    later.start()
    try:
        arrived = reader.event()
    finally:
        later.join()
        reader.close()
    assert arrived["id"] == "2"
    assert json.loads(arrived["data"])["data"]["added"] == ["R7"]


def test_another_instance_sees_the_events_one_instance_commits(client, redis_url) -> None:
    other = redis.Redis.from_url(redis_url, decode_responses=True)  # another process's
    commit(other, event(1, "match_created"), event(2, "drew", count=1))
    reader = follow(client, query_string={"after": "1"})
    assert reader.event()["event"] == "drew"
    reader.close()


def test_the_stream_ends_once_the_match_is_finished_and_sent(client, store) -> None:
    commit(store, event(1, "match_created"), event(2, "game_over"), event(3, "match_finished"))
    reader = follow(client, query_string={"after": "1"})
    assert [reader.event()["event"], reader.event()["event"]] == ["game_over", "match_finished"]
    assert reader.ended()


def test_the_stream_of_a_canceled_match_ends_with_its_cancellation(client, store) -> None:
    commit(store, event(1, "match_created"), event(2, "match_canceled", game_number=1))
    reader = follow(client, query_string={"after": "1"})
    assert reader.event()["event"] == "match_canceled"
    assert reader.ended()
    response = client.get(f"/v1/matches/{MATCH}/stream", headers={"Last-Event-ID": "2"})
    assert response.status_code == 204


def test_asking_again_after_the_last_event_of_a_finished_match_is_a_204(client, store) -> None:
    commit(store, event(1, "match_created"), event(2, "match_finished"))
    response = client.get(f"/v1/matches/{MATCH}/stream", headers={"Last-Event-ID": "2"})
    assert response.status_code == 204


def test_an_unknown_match_is_a_404_problem(client) -> None:
    response = client.get("/v1/matches/nope/stream")
    assert response.status_code == 404
    assert response.content_type == "application/problem+json"


@pytest.mark.parametrize("header", ["x", "-1", "1.5", "", " 7", "1_0"])
def test_a_last_event_id_that_is_not_a_version_is_a_400_problem(client, store, header) -> None:
    commit(store, event(1, "match_created"))
    response = client.get(f"/v1/matches/{MATCH}/stream", headers={"Last-Event-ID": header})
    assert response.status_code == 400
    assert response.content_type == "application/problem+json"


def test_storage_down_is_a_503_with_retry_after(redis_server) -> None:
    app = create_app({"redis_url": "redis://127.0.0.1:1/0"})
    app.test_client_class = ContractClient
    response = app.test_client().get(f"/v1/matches/{MATCH}/stream")
    assert response.status_code == 503
    assert response.headers["Retry-After"] == "1"


def stream_connections(store: Any) -> int:
    """How many stream connections Redis sees (each is named ``sse:<match id>``)."""
    return sum(1 for c in store.client_list() if c.get("name", "").startswith("sse:"))


def wait_until(condition: Any, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def test_the_streams_of_a_match_share_one_reader_closed_when_the_last_client_leaves(
    client, store
) -> None:
    assert wait_until(lambda: stream_connections(store) == 0)  # earlier tests' readers are gone
    commit(store, event(1, "match_created"))
    readers = [follow(client, query_string={"after": "1"}) for _ in range(3)]
    for reader in readers:
        assert reader.message()["comments"] == ["following events after 1"]
    commit(store, event(2, "drew", count=1))
    for reader in readers:
        # the event, whether or not a keep-alive comment (every 0.2 s) came first
        assert reader.event()["id"] == "2"  # one read fed all three
    # one connection (a reader that reconnected may show its old one a moment longer)
    assert wait_until(lambda: stream_connections(store) == 1)
    readers[0].close()
    readers[1].close()
    commit(store, event(3, "drew", count=1))
    assert readers[2].event()["id"] == "3"  # one client still follows the match
    assert wait_until(lambda: stream_connections(store) == 1)
    readers[2].close()
    assert wait_until(lambda: stream_connections(store) == 0)


def test_keep_alive_comments_keep_their_pace_while_reads_wake_more_often(redis_url) -> None:
    # Reads block at most WAKE_SECONDS, so that a stream notices the worker stopping; the
    # keep-alive comments still come once per keep-alive time, not once per read.
    app = create_app({"redis_url": redis_url, "stream_keepalive_seconds": 2.5})
    app.test_client_class = ContractClient
    commit(redis.Redis.from_url(redis_url, decode_responses=True), event(1, "match_created"))
    reader = follow(app.test_client(), query_string={"after": "1"})
    reader.message()  # the opening
    started = time.monotonic()
    assert reader.message()["comments"] == ["keep-alive"]
    # not once per read (every WAKE_SECONDS) but once per keep-alive time; the upper bound
    # only says it came (a loaded machine may deliver it late, never early)
    assert 2.3 < time.monotonic() - started < 30
    reader.close()


def test_a_stream_ends_soon_after_the_worker_is_told_to_stop(redis_url, stop_soon) -> None:
    # A keep-alive time far longer than the test: the stream must not wait for it to end (a
    # stream that waited would send its keep-alive comment first, and end 30 s later).
    app = create_app(
        {"redis_url": redis_url, "stream_keepalive_seconds": 60, "stream_max_seconds": 90}
    )
    app.test_client_class = ContractClient
    commit(redis.Redis.from_url(redis_url, decode_responses=True), event(1, "match_created"))
    reader = follow(app.test_client(), query_string={"after": "1"})
    reader.message()  # the opening
    stop_soon()
    assert reader.ended()
    assert "keep-alive" not in reader.buffer  # ended before its first keep-alive was due
    assert "data" not in reader.buffer  # nothing more was sent: the match did not move
