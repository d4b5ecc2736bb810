"""SPEC section 3: ``GET /v1/feed``, one resumable SSE stream of an app's notifications, and
``turn.expiring`` sent by the sweeper's clock."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import redis

from service.referee import Referee
from service.store import MatchStore
from service.sweeper import Sweeper
from tests.api.test_stream import Reader, wait_until
from tests.api.test_webhooks import KEYS, MOBILE, PARTNER, key, owned, racks

pytestmark = pytest.mark.usefixtures("redis_url")


@pytest.fixture
def app_overrides() -> dict[str, Any]:
    return {
        "test_mode": True,
        "api_keys": KEYS,
        "stream_keepalive_seconds": 0.2,
        "stream_max_seconds": 60,
    }


def open_feed(client: Any, last_event_id: str | None = None, app_key: str = MOBILE) -> Reader:
    headers = key(app_key)
    if last_event_id is not None:
        headers["Last-Event-ID"] = last_event_id
    response = client.get("/v1/feed", headers=headers, buffered=False)
    assert response.status_code == 200
    assert response.mimetype == "text/event-stream"
    reader = Reader(response)
    first = reader.message()
    assert first["retry"] == "2000"
    return reader


def messages(reader: Reader, count: int, *, timeout: float = 60.0) -> list[dict[str, Any]]:
    """The next ``count`` messages (keep-alive comments skipped)."""
    found: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    while len(found) < count:
        assert time.monotonic() < deadline, f"only {len(found)} of {count} messages came"
        message = reader.message()
        if "data" in message:
            message["body"] = json.loads(message["data"])
            found.append(message)
    return found


def play_round(matches: list[tuple[dict[str, Any], list[Any]]]) -> None:
    """Every match's current seat draws once."""
    for created, seats in matches:
        current = seats[0].view().get_json()["current_seat"]
        assert seats[current].draw().status_code == 200, created["id"]


def identity(message: dict[str, Any]) -> tuple[str, str, int]:
    body = message["body"]
    return body["data"]["match_id"], body["type"], body["data"]["version"]


def test_the_feed_carries_every_event_of_the_app_and_resumes_without_gaps_or_repeats(
    client,
) -> None:
    feed = open_feed(client)
    matches = [owned(client) for _ in range(6)]  # ids spread over several shards
    play_round(matches)
    first = messages(feed, 12)
    assert {m["event"] for m in first} == {"turn.started"}
    assert {m["body"]["data"]["match_id"] for m in first} == {c["id"] for c, _ in matches}
    for created, _ in matches:
        versions = [
            m["body"]["data"]["version"]
            for m in first
            if m["body"]["data"]["match_id"] == created["id"]
        ]
        assert versions == sorted(versions) and len(versions) == 2
    feed.response.close()
    # while nobody listens: two more rounds and a cancel
    play_round(matches)
    play_round(matches)
    assert (
        client.post(f"/v1/matches/{matches[0][0]['id']}/cancel", headers=key()).status_code == 200
    )
    # resume after the 7th message: the 8th to the 12th again, then what came meanwhile
    resumed_feed = open_feed(client, last_event_id=first[6]["id"])
    resumed = messages(resumed_feed, 5 + 12 + 1)
    seen = [identity(m) for m in first[:7] + resumed]
    assert len(seen) == len(set(seen)) == 7 + 18, "a repeat"
    # order across matches is not kept, only per match: the 8th to 12th come again among them
    assert {identity(m) for m in first[7:]} <= {identity(m) for m in resumed}
    assert "match.canceled" in {identity(m)[1] for m in resumed}
    for created, _ in matches:
        versions = [
            v for match_id, kind, v in seen if match_id == created["id"] and kind == "turn.started"
        ]
        assert versions == sorted(versions) and len(versions) == 4, "a gap"
    # nothing more than that came
    resumed_feed.response.close()
    again = open_feed(client, last_event_id=resumed[-1]["id"])
    assert "data" not in again.message()  # a keep-alive: nothing new
    again.response.close()


def test_the_feed_is_the_apps_own(client) -> None:
    theirs = open_feed(client, app_key=PARTNER)
    owned(client)
    owned(client, ("Pat", "p-1"), ("Quinn", "p-2"), app_key=PARTNER)
    [only] = messages(theirs, 1)
    assert only["body"]["data"]["ref"] in ("p-1", "p-2")
    theirs.response.close()


@pytest.mark.parametrize(
    "bad", ["", "x" * 40, ".".join(["1-0"] * 33), ".".join(["a"] * 32), "1--2", "1-2.", "-1"]
)
def test_a_malformed_last_event_id_is_400(client, bad: str) -> None:
    response = client.get("/v1/feed", headers={**key(), "Last-Event-ID": bad})
    assert response.status_code == 400


def test_last_event_id_0_reads_everything_the_feed_keeps(client) -> None:
    created, seats = owned(client)
    assert seats[0].view().status_code == 200
    [started] = messages(open_feed(client, last_event_id="0"), 1)
    assert started["body"]["data"]["match_id"] == created["id"]


def test_the_feed_needs_a_key(client) -> None:
    assert client.get("/v1/feed").status_code == 401


@pytest.fixture
def sweeper(app: Any) -> Iterator[Sweeper]:
    referee: Referee = app.extensions["referee"]
    running = Sweeper(referee, interval=0.05)
    thread = threading.Thread(target=running.run, daemon=True)
    thread.start()
    try:
        yield running
    finally:
        running.stop()
        thread.join(timeout=10)


def test_turn_expiring_comes_by_the_sweepers_clock_only_for_a_turn_still_running(
    client, sweeper
) -> None:
    feed = open_feed(client)
    store: MatchStore = client.application.extensions["store"]
    # 11 s turns: the warning is due when 10 s are left, 1 s after the turn began
    created, seats = owned(client, rules={"turn_seconds": 11}, setup=racks("R1 R2 K5", "K1 K2 K7"))
    started, expiring = messages(feed, 2, timeout=60)
    assert started["event"] == "turn.started" and expiring["event"] == "turn.expiring"
    assert expiring["body"]["data"] == started["body"]["data"]
    assert started["body"]["data"]["match_id"] == created["id"]
    deadline = started["body"]["data"]["deadline"]
    assert deadline - 10.5 <= store.now() <= deadline
    # a turn that ends before its warning is due is never warned of
    other, other_seats = owned(
        client, rules={"turn_seconds": 11}, setup=racks("R1 R2 K5", "K1 K2 K7")
    )
    assert other_seats[0].draw().status_code == 200
    got = messages(feed, 3, timeout=60)
    kinds = [(m["event"], m["body"]["data"]["match_id"], m["body"]["data"]["seat"]) for m in got]
    assert kinds == [
        ("turn.started", other["id"], 0),
        ("turn.started", other["id"], 1),
        ("turn.expiring", other["id"], 1),
    ]
    feed.response.close()
    assert seats  # the first match's turn goes on


def feed_connections(redis_url: str, app: str) -> int:
    """The connections Redis sees reading ``app``'s feed (each is named ``feed:<app>``)."""
    admin = redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        return sum(1 for c in admin.client_list() if c.get("name") == f"feed:{app}")
    finally:
        admin.close()


def test_the_listeners_of_one_app_share_one_reader_closed_when_the_last_leaves(
    client, redis_url
) -> None:
    assert wait_until(lambda: feed_connections(redis_url, "mobile") == 0)  # earlier tests'
    feeds = [open_feed(client) for _ in range(5)]
    created, seats = owned(client)
    # every listener gets the match's first turn, read once for all of them
    for feed in feeds:
        [started] = messages(feed, 1)
        assert started["body"]["data"]["match_id"] == created["id"]
    assert feed_connections(redis_url, "mobile") == 1
    # one resumes from the start while the others listen: it catches up, then goes on live
    # with them, with no repeat
    late = open_feed(client, last_event_id="0")
    caught_up = messages(late, 1)
    assert identity(caught_up[0]) == identity(started)
    play_round([(created, seats)])  # the seat whose turn it is draws
    for feed in [*feeds, late]:
        [turn] = messages(feed, 1)
        assert turn["event"] == "turn.started" and turn["body"]["data"]["version"] > 1
    assert feed_connections(redis_url, "mobile") == 1
    for feed in feeds[:-1]:
        feed.response.close()
    late.response.close()
    assert feed_connections(redis_url, "mobile") == 1  # one listener is still there
    feeds[-1].response.close()
    assert wait_until(lambda: feed_connections(redis_url, "mobile") == 0)


def test_the_outbox_keeps_compact_entries_and_still_serves_those_stored_whole(
    client, redis_url
) -> None:
    created, seats = owned(client)
    raw = redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        [outbox] = [
            key
            for key in raw.scan_iter("*:out:mobile")
            if any(fields["m"] == created["id"] for _, fields in raw.xrange(key))
        ]
        [(_, fields)] = [e for e in raw.xrange(outbox) if e[1]["m"] == created["id"]]
        assert set(fields) == {"m", "c"} and fields["c"].startswith('["s",')
        # an entry written before the compact form (type and whole body) reads as it did
        old = {"type": "match.canceled", "timestamp": "2026-01-01T00:00:00.000Z", "data": {}}
        old["data"] = {"match_id": created["id"], "version": 99}
        raw.xadd(outbox, {"m": created["id"], "t": "match.canceled", "b": json.dumps(old)})
    finally:
        raw.close()
    started, canceled = messages(open_feed(client, last_event_id="0"), 2)
    assert started["event"] == "turn.started"
    assert started["body"]["data"] == {
        "match_id": created["id"],
        "version": created["match"]["version"],
        "seat": created["match"]["current_seat"],
        "ref": ["u-ann", "u-bo"][created["match"]["current_seat"]],
        "deadline": started["body"]["data"]["deadline"],
    }
    assert canceled["event"] == "match.canceled" and canceled["body"] == old
    assert seats
