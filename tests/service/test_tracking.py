"""Views and hints that trust Redis's invalidations (``service/store/tracking.py``), on Redis.

A view asks Redis nothing while Redis has said nothing of the match; whatever changes it (a
commit from another worker, a flush, a lost connection, a Redis that stops answering) makes
the next view read Redis again. "Workers" here are stores of their own on the same Redis.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import pytest
import redis

from service.config import Settings
from service.game import PlayerSpec, Setup
from service.referee import MatchNotFound, Referee
from service.rules import Rules
from service.store import Keys, MatchStore
from service.store.topology import ClusterTopology
from service.store.tracking import Freshness
from tests.support.redis_process import RedisProcess

ANN_BO = [PlayerSpec("Ann"), PlayerSpec("Bo")]
RACKS = [["R10", "R11", "R12", "K1"], ["B7", "B8", "B9", "O2"]]
SAFETY = 30.0
"""Seconds after which a wait for an event fails: a bound on a broken test, never how long an
event may take (a loaded CI machine delays Redis's messages and the connection's threads)."""
POOL = ["R13", "O3", "O4", "O5", "O6", "O7", "O8", "O9", "B1", "B2", "B3", "B4"]


@pytest.fixture
def settings(redis_url: str) -> Settings:
    return Settings(redis_url=redis_url)


def worker(settings: Settings) -> Referee:
    return Referee(MatchStore.open(settings))


def set_up(referee: Referee) -> tuple[str, tuple[str, ...]]:
    created = referee.create(ANN_BO, rules=Rules(turn_seconds=0), setup=Setup.parse(RACKS, POOL))
    return created.match.id, created.tokens


def reads(client: redis.Redis) -> int:
    """How many reads of a match Redis has answered so far (the view's HMGET, the LOAD
    script)."""
    stats: dict[str, Any] = client.info("commandstats")
    return sum(
        int(stats.get(f"cmdstat_{name}", {}).get("calls", 0))
        for name in ("hmget", "evalsha", "eval")
    )


def view_until_trusted(referee: Referee, match_id: str, token: str, client: redis.Redis) -> int:
    """View until a view reads nothing from Redis (the invalidation connection has answered
    its first PING); the version seen."""
    deadline = time.monotonic() + SAFETY
    while time.monotonic() < deadline:
        before = reads(client)
        match, _, _ = referee.view(match_id, token)
        if reads(client) == before:
            return match.version
        time.sleep(0.01)
    raise AssertionError("every view read Redis")


def set_up_viewed(
    reader: Referee, client: redis.Redis, writer: Referee | None = None
) -> tuple[str, tuple[str, ...], int]:
    """A match set up by ``writer`` (the reader itself by default) that ``reader`` has viewed
    until it trusts its copy: the id, the seats' tokens and the version seen."""
    match_id, tokens = set_up(writer or reader)
    return match_id, tokens, view_until_trusted(reader, match_id, tokens[0], client)


def seen_soon(referee: Referee, match_id: str, token: str, version: int) -> None:
    """Views show ``version`` once Redis's message has arrived: it is sent as the change
    runs and written out in the same pass as the change's answer, in either order, so a view
    at once may come just before it. Views never show a version between."""
    deadline = time.monotonic() + SAFETY
    while True:
        match, _, _ = referee.view(match_id, token)
        if match.version == version:
            return
        assert match.version < version
        assert time.monotonic() < deadline, f"still version {match.version}, not {version}"


def key_came_after(freshness: Freshness, match_id: str, version: int, ticket: Any) -> None:
    """Wait until the worker has taken in a message that came after ``ticket`` (a question
    takes in every message that has arrived)."""
    deadline = time.monotonic() + SAFETY
    while freshness.ticket().seen <= ticket.seen:
        assert time.monotonic() < deadline, "Redis's message never came"
        freshness.confirms(match_id, version)


def gone_soon(referee: Referee, match_id: str, token: str) -> None:
    """Views say the match is gone once Redis's message has arrived (see seen_soon)."""
    deadline = time.monotonic() + SAFETY
    with pytest.raises(MatchNotFound):
        while time.monotonic() < deadline:
            referee.view(match_id, token)


def test_a_view_of_an_unchanged_match_asks_redis_nothing(
    settings: Settings, redis_client: redis.Redis
) -> None:
    referee = worker(settings)
    match_id, (ann, bo), version = set_up_viewed(referee, redis_client)
    before = reads(redis_client)
    for token in (ann, bo, ann):
        match, _, _ = referee.view(match_id, token)
        assert match.version == version
    assert reads(redis_client) == before


def test_a_change_by_another_worker_is_seen_by_the_next_view(
    settings: Settings, redis_client: redis.Redis
) -> None:
    reader, writer = worker(settings), worker(settings)
    match_id, (ann, bo), _ = set_up_viewed(reader, redis_client, writer)
    tokens = [ann, bo]
    for turn in range(8):
        moved = writer.draw(match_id, tokens[turn % 2])
        seen_soon(reader, match_id, ann, moved.version)  # without it, never
        view_until_trusted(reader, match_id, ann, redis_client)


def test_a_hint_of_an_unchanged_match_asks_redis_nothing(
    settings: Settings, redis_client: redis.Redis
) -> None:
    referee = worker(settings)
    match_id, (ann, bo), version = set_up_viewed(referee, redis_client)
    before = reads(redis_client)
    hints = [referee.hint(match_id, token) for token in (ann, bo)]
    assert reads(redis_client) == before
    assert [match.version for match, _ in hints] == [version, version]
    # Ann's R10 R11 R12 is an initial meld of 33; Bo's B7 B8 B9, 24, is not
    assert [solution.found for _, solution in hints] == [True, False]


def test_a_hint_after_another_workers_move_is_for_the_rack_that_move_left(
    settings: Settings, redis_client: redis.Redis
) -> None:
    reader, writer = worker(settings), worker(settings)
    match_id, (ann, _), _ = set_up_viewed(reader, redis_client, writer)
    moved = writer.draw(match_id, ann)  # Ann draws R13
    seen_soon(reader, match_id, ann, moved.version)
    match, solution = reader.hint(match_id, ann)
    assert match.version == moved.version
    assert solution.placed.total() == 4  # R10 R11 R12 R13: the tile drawn counts


def test_a_worker_trusts_its_own_commit_only_until_redis_names_the_key(
    settings: Settings, redis_client: redis.Redis
) -> None:
    referee = worker(settings)
    match_id, (ann, _), _ = set_up_viewed(referee, redis_client)
    moved = referee.draw(match_id, ann)
    match, _, _ = referee.view(match_id, ann)
    assert match.version == moved.version
    # the key came back on the connection (this worker's own commit): Redis is read once more
    assert view_until_trusted(referee, match_id, ann, redis_client) == moved.version


def test_a_write_outside_the_referee_is_seen_too(
    settings: Settings, redis_client: redis.Redis
) -> None:
    referee = worker(settings)
    match_id, (ann, _), _ = set_up_viewed(referee, redis_client)
    redis_client.delete(Keys(match_id).state)
    gone_soon(referee, match_id, ann)


def test_a_flush_forgets_every_match(settings: Settings, redis_client: redis.Redis) -> None:
    referee = worker(settings)
    match_id, (ann, _), _ = set_up_viewed(referee, redis_client)
    redis_client.flushall()
    gone_soon(referee, match_id, ann)


def test_after_the_connection_is_lost_views_read_redis_until_it_is_back(
    settings: Settings, redis_client: redis.Redis
) -> None:
    reader, writer = worker(settings), worker(settings)
    match_id, (ann, bo), _ = set_up_viewed(reader, redis_client, writer)
    assert redis_client.client_kill_filter(_type="pubsub") >= 1  # every worker's
    moved = writer.draw(match_id, ann)  # Redis cannot tell the reader now
    match, _, _ = reader.view(match_id, ann)  # so it asks Redis
    assert match.version == moved.version
    # a new connection, after a second, and views are trusted again
    view_until_trusted(reader, match_id, ann, redis_client)
    # and Redis tells the new connection: the reads are tracked for it now
    moved = writer.draw(match_id, bo)
    seen_soon(reader, match_id, ann, moved.version)


def test_a_read_under_way_when_its_key_changes_is_not_trusted(
    settings: Settings, redis_client: redis.Redis
) -> None:
    reader, writer = worker(settings), worker(settings)
    match_id, (ann, _), version = set_up_viewed(reader, redis_client, writer)
    freshness = reader.store.freshness
    ticket = freshness.ticket()  # a read is sent now ...
    writer.draw(match_id, ann)  # ... and another worker commits before its answer is marked
    key_came_after(freshness, match_id, version, ticket)
    assert not freshness.confirms(match_id, version)
    freshness.mark(match_id, version, ticket)  # the answer of the read: the old version
    assert not freshness.confirms(match_id, version)


def test_a_connection_that_stops_answering_is_not_trusted(
    redis_url: str, redis_server: RedisProcess
) -> None:
    freshness = Freshness(
        lambda: redis.Redis.from_url(
            redis_url, decode_responses=True, single_connection_client=True, socket_timeout=2
        ),
        trust=0.3,
        ping=0.05,
    )
    deadline = time.monotonic() + SAFETY
    while not freshness.confirms("m1", 3):  # connected, and PING answered
        assert time.monotonic() < deadline, "never trusted"
        freshness.mark("m1", 3, freshness.ticket())
        time.sleep(0.02)
    redis_server.pause()  # Redis answers no PING until it goes on
    try:
        deadline = time.monotonic() + SAFETY
        while freshness.confirms("m1", 3):  # a PING goes unanswered: no longer trusted
            assert time.monotonic() < deadline, "still trusted while Redis answers nothing"
            time.sleep(0.02)
    finally:
        redis_server.resume()
    # the same connection answers again and lost nothing: trusted again
    deadline = time.monotonic() + SAFETY
    while not freshness.confirms("m1", 3):
        assert time.monotonic() < deadline, "not trusted again"
        time.sleep(0.02)
    freshness.close()


def test_with_tracking_off_every_view_reads_redis(
    settings: Settings, redis_client: redis.Redis
) -> None:
    listening = len(redis_client.client_list(_type="pubsub"))  # other tests' stores
    referee = worker(replace(settings, redis_tracking=False))
    match_id, (ann, _) = set_up(referee)
    for _ in range(3):
        before = reads(redis_client)
        referee.view(match_id, ann)
        assert reads(redis_client) == before + 1
    assert len(redis_client.client_list(_type="pubsub")) <= listening  # none of its own


def test_a_cluster_has_no_node_that_sees_every_change() -> None:
    topology = ClusterTopology(Settings(redis_cluster_nodes="127.0.0.1:1"))
    assert topology.tracking_client() is None
    freshness = Freshness(topology.tracking_client)
    freshness.mark("m1", 3, freshness.ticket())
    assert not freshness.confirms("m1", 3)


def test_a_redis_that_refuses_tracking_turns_it_off_for_good(
    redis_url: str, redis_client: redis.Redis, caplog: pytest.LogCaptureFixture
) -> None:
    # a user that may read and write keys but not turn tracking on (as an ACL may have it)
    redis_client.acl_setuser(
        "no-tracking",
        enabled=True,
        passwords=["+secret"],
        keys=["*"],
        channels=["*"],
        commands=["+@all", "-client"],
    )
    try:
        freshness = Freshness(
            lambda: redis.Redis.from_url(
                redis_url,
                username="no-tracking",
                password="secret",
                decode_responses=True,
                single_connection_client=True,
            )
        )
        deadline = time.monotonic() + SAFETY
        while freshness.enabled:
            assert time.monotonic() < deadline, "still trying"
            freshness.confirms("m1", 3)
            time.sleep(0.02)
        assert freshness.ticket().connection == 0  # nothing is marked any more
        refusals = [r for r in caplog.records if "no client tracking here" in r.getMessage()]
        assert len(refusals) == 1
    finally:
        redis_client.acl_deluser("no-tracking")


def test_only_what_a_worker_has_viewed_is_tracked(
    settings: Settings, redis_client: redis.Redis
) -> None:
    """A write costs Redis no message unless a worker has viewed the match since it last
    changed: Redis tracks the keys read on tracked connections, not every match key."""
    writer, reader = worker(settings), worker(settings)
    match_id, (ann, bo) = set_up(writer)
    writer.draw(match_id, ann)
    writer.view(match_id, ann)  # settles nothing, and this worker's first view loads
    assert redis_client.info("stats")["tracking_total_keys"] == 0
    view_until_trusted(reader, match_id, ann, redis_client)
    assert redis_client.info("stats")["tracking_total_keys"] == 1  # the state, read tracked
    moved = writer.draw(match_id, bo)  # Redis tells the reader, once, and forgets the key
    seen_soon(reader, match_id, ann, moved.version)  # the message in, read again (tracked)
    assert redis_client.info("stats")["tracking_total_keys"] == 1


def test_a_match_a_worker_reads_for_the_first_time_is_trusted_from_its_next_view(
    settings: Settings, redis_client: redis.Redis
) -> None:
    """A worker that holds no copy of a match (another worker dealt it, or the worker's copies
    of other matches pushed it out) reads it on a tracked connection, so the next view asks
    Redis nothing: before, that read was the load script, which Redis does not track for the
    worker, and the second view read the match again."""
    reader, writer = worker(settings), worker(settings)
    seen, (watcher, _), _ = set_up_viewed(reader, redis_client, writer)
    for _ in range(50):  # until trust held across the two views (a loaded machine may drop it)
        match_id, (ann, _) = set_up(writer)
        view_until_trusted(reader, seen, watcher, redis_client)
        before = reads(redis_client)
        first, _, _ = reader.view(match_id, ann)
        read_first = reads(redis_client) - before
        before = reads(redis_client)
        again, _, _ = reader.view(match_id, ann)
        if reads(redis_client) == before:
            assert read_first == 1
            assert again.version == first.version
            return
    raise AssertionError("the second view of a match read Redis every time")


def test_a_worker_whose_views_are_all_of_matches_it_never_held_opens_its_invalidations(
    settings: Settings, redis_client: redis.Redis
) -> None:
    """The invalidation connection opens at a read of a match the worker holds no copy of too
    (only a view of a held copy opened it, so a worker serving more matches than it held
    copies of never tracked a read); the reads after it are tracked."""
    reader, writer = worker(settings), worker(settings)
    for _ in range(2):  # the first view loads (and reads the clock); the second reads
        match_id, (ann, _) = set_up(writer)
        reader.view(match_id, ann)
    deadline = time.monotonic() + SAFETY
    while reader.store.freshness.ticket().connection == 0:
        assert time.monotonic() < deadline, "no invalidation connection was opened"
        time.sleep(0.01)
    for _ in range(50):  # until trust held across the two views (a loaded machine may drop it)
        match_id, (ann, _) = set_up(writer)
        reader.view(match_id, ann)  # read on a tracked connection, the version marked
        before = reads(redis_client)
        reader.view(match_id, ann)
        if reads(redis_client) == before:
            return
    raise AssertionError("the second view of a match read Redis every time")
