"""The service layer itself: the referee's use cases on the store, against a real Redis.

No HTTP here: these tests call the referee as the API does, and read Redis through the store
(or, to see what was sent, Redis's own command statistics).
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import redis

from service import game
from service.config import Settings
from service.game import NotYourTurn, PlayerSpec, Setup
from service.referee import (
    BadToken,
    Guards,
    Idempotency,
    IdempotencyMismatch,
    MatchNotFound,
    Referee,
    StaleVersion,
    TokenForAnotherMatch,
)
from service.rules import Rules, parse_tiles
from service.store import Change, Keys, MatchStore, Stale, StoreUnavailable
from service.store import matches as store_matches
from service.store.listing import indexed
from service.store.scripts import STATE_ARG, commit_argv, commit_keys
from service.store.topology import open_topology
from service.sweeper import Sweeper
from service.workers import shared_states
from tests.support.following import cut_while_following
from tests.support.redis_process import RedisProcess

ANN_BO = [PlayerSpec("Ann"), PlayerSpec("Bo")]
RACKS = [["R10", "R11", "R12", "K1"], ["B7", "B8", "B9", "O2"]]
POOL = ["R13", "O3", "O4", "O5", "O6"]
DRAFT = (parse_tiles(["R10", "R11", "R12"]),)
# Redis counts the commands a script runs too: these are the commit script's.
INSIDE_THE_COMMIT_SCRIPT = {"hget", "time", "zadd", "zrem", "hset", "xadd", "set", "expire"}
# Commands that are no request's own, which may land while a test counts: the invalidation
# connection's (service/store/tracking.py: opened on a thread of its own after the first view,
# then pinged), and the CLIENT SETNAME that names any connection as it opens.
TRACKING = {"ping", "client|id", "client|setname", "client|tracking", "client", "subscribe"}


@pytest.fixture
def settings(redis_url: str) -> Settings:
    return Settings(redis_url=redis_url)


@pytest.fixture
def referee(settings: Settings) -> Referee:
    return Referee(MatchStore.open(settings))


def another_worker(settings: Settings) -> Referee:
    """A referee of another process: a store (and a cache) of its own on the same Redis."""
    return Referee(MatchStore.open(settings))


def set_up(referee: Referee, *, turn_seconds: int = 0) -> tuple[str, tuple[str, ...]]:
    created = referee.create(
        ANN_BO, rules=Rules(turn_seconds=turn_seconds), setup=Setup.parse(RACKS, POOL)
    )
    return created.match.id, created.tokens


def commands(client: redis.Redis) -> dict[str, int]:
    """How many times Redis ran each command so far."""
    stats: dict[str, Any] = client.info("commandstats")
    return {name.removeprefix("cmdstat_"): int(value["calls"]) for name, value in stats.items()}


def sent_since(client: redis.Redis, before: dict[str, int]) -> dict[str, int]:
    """The commands run since ``before``, but for those of the workers' invalidation
    connections and of opening connections (``TRACKING``), which come and go on their own."""
    after = commands(client)
    return {
        name: n - before.get(name, 0)
        for name, n in after.items()
        if n != before.get(name, 0) and name not in TRACKING
    }


def test_a_match_is_created_read_and_moved_on_through_the_referee(referee: Referee) -> None:
    match_id, (ann, bo) = set_up(referee)
    match, seat, _ = referee.view(match_id, bo)
    assert (seat, match.current_seat) == (1, 0)
    moved = referee.draw(match_id, ann)
    assert moved.drawn == ("R13",)
    assert moved.version == match.version + 1
    assert moved.view["rack"] == ["R10", "R11", "R12", "R13", "K1"]
    events = referee.events(match_id, after=match.version, limit=10)
    assert [(e["type"], e["seat"]) for e in events] == [("drew", 0)]


def test_a_move_on_the_workers_current_copy_is_one_round_trip(
    referee: Referee, redis_client: redis.Redis
) -> None:
    match_id, (ann, _) = set_up(referee)
    referee.view(match_id, ann)  # the worker holds the current version now
    before = commands(redis_client)
    referee.save_draft(match_id, ann, DRAFT)
    sent = sent_since(redis_client, before)
    assert sent.pop("info", 0) <= 1  # how many replicas: asked once in a while
    assert sent.pop("evalsha") == 1  # the commit script, and nothing else from the client:
    assert set(sent) <= INSIDE_THE_COMMIT_SCRIPT, sent


def test_a_draft_on_an_anonymous_match_runs_only_the_commands_it_writes_with(
    referee: Referee, redis_client: redis.Redis
) -> None:
    """The commit script of a draft on a match no app owns, with no time limit: the version
    read, the clock checked, the state, the event, the two TTLs and the expiry written; the
    listings it was never in are not looked at, nor the deadline index (no deadline before or
    after): each call from a script costs Redis about 7,000 instructions."""
    match_id, (ann, _) = set_up(referee)
    referee.view(match_id, ann)  # the worker's copy: the commit checks its clock
    before = commands(redis_client)
    referee.save_draft(match_id, ann, DRAFT)
    sent = sent_since(redis_client, before)
    sent.pop("info", 0)
    assert sent == {
        "evalsha": 1, "hget": 1, "time": 1, "hset": 1, "xadd": 1, "expire": 2, "zadd": 1,
    }  # fmt: skip
    keys = Keys(match_id)
    assert 0 < redis_client.ttl(keys.state) <= referee.store.idle_ttl
    assert 0 < redis_client.ttl(keys.events) <= referee.store.idle_ttl


def test_a_commit_names_the_listing_keys_only_for_a_match_an_app_owns(referee: Referee) -> None:
    """Each key is an argument Redis makes a Lua string of (about 1,300 instructions): an
    anonymous match's commit names none of the listings' keys, which its script never touches,
    nor the seat's receipts when it keeps none."""
    match_id, _ = set_up(referee)
    loaded = referee.store.load(match_id)
    assert loaded is not None
    keys = Keys(match_id)
    ix, summary, expiry = keys.listing
    anonymous = Change(None, loaded.match, loaded.seats, (), loaded.now)
    listed = indexed(loaded.match, tag=keys.tag, updated_at=loaded.now, expires_at=None)
    named = commit_keys(anonymous, keys, listed)
    assert named == [keys.state, keys.events, keys.deadlines, expiry]  # no receipt either
    receipt: Any = (1, "k", None)  # only its seat is read here
    with_receipt = Change(None, loaded.match, loaded.seats, (), loaded.now, receipt=receipt)
    named = commit_keys(with_receipt, keys, listed)
    assert named == [keys.state, keys.events, keys.deadlines, expiry, keys.receipts(1)]
    owned = replace(loaded.match, owner="app-1")
    listed = indexed(owned, tag=keys.tag, updated_at=loaded.now, expires_at=None)
    named = commit_keys(Change(None, owned, loaded.seats, (), loaded.now), keys, listed)
    assert named[:7] == [keys.state, keys.events, keys.deadlines, expiry, keys.state, ix, summary]
    assert named[7:] == list(listed.keys) and listed.keys


def test_a_commits_short_fields_go_as_one_header_and_are_written_as_sent(
    referee: Referee, redis_client: redis.Redis
) -> None:
    """Each argument costs the worker about 1,100 instructions to pack and Redis about 1,300:
    the version replaced, the new one, the commit id, the TTL, the deadline, the match id, the
    clock, the events' count and the expiry go as one header, split by the script, and what it
    writes of them is what was sent."""
    match_id, _ = set_up(referee)
    loaded = referee.store.load(match_id)
    assert loaded is not None
    moved = game.save_draft(loaded.match, 0, DRAFT, now=loaded.now)
    change = Change(loaded.match.version, moved.match, loaded.seats, moved.events, loaded.now)
    keys = Keys(match_id)
    ttl = referee.store.ttl_of(change.match)
    listed = indexed(change.match, tag=keys.tag, updated_at=change.now, expires_at=change.now + ttl)
    argv = commit_argv(change, keys, ttl=ttl, receipts_ttl=60, listed=listed)
    # the header, the state, no receipt, the event's version and JSON; an anonymous match
    # has no listing item nor app to notify: nothing after the events
    assert len(argv) == 5 and argv[2:4] == ["", str(change.match.version)]
    _, before, version, commit_id, sent_ttl, _, sent_id, events, expires = argv[0].split("\n")
    assert (before, version, commit_id, sent_id, events) == (
        str(change.before), str(change.match.version), change.commit_id, match_id, "1",
    )  # fmt: skip
    assert referee.store.commit(change) is None
    assert redis_client.hmget(keys.state, ["v", "c"]) == [version, commit_id]
    assert redis_client.hget(keys.state, "s") == argv[STATE_ARG].decode()
    [(_, fields)] = redis_client.xrange(keys.events, f"0-{version}", f"0-{version}")
    assert fields == {"e": argv[4].decode(), "c": commit_id}
    assert 0 < redis_client.ttl(keys.state) <= int(sent_ttl) == ttl
    assert redis_client.zscore(keys.listing[2], match_id) == float(expires)


def test_a_deadline_the_version_before_had_is_not_written_again_and_a_new_one_is(
    referee: Referee, redis_client: redis.Redis
) -> None:
    match_id, (ann, bo) = set_up(referee, turn_seconds=60)
    keys = Keys(match_id)
    match, _, _ = referee.view(match_id, ann)
    assert match.turn_deadline is not None
    assert redis_client.zscore(keys.deadlines, match_id) == match.turn_deadline
    before = commands(redis_client)
    referee.save_draft(match_id, ann, DRAFT)  # a draft leaves the turn's deadline as it was
    sent = sent_since(redis_client, before)
    assert sent.get("zadd") == 1  # the expiry's, not the deadline's
    assert redis_client.zscore(keys.deadlines, match_id) == match.turn_deadline
    referee.draw(match_id, ann)  # Bo's turn: a new deadline, written
    drawn, _, _ = referee.view(match_id, bo)
    assert drawn.turn_deadline is not None and drawn.turn_deadline != match.turn_deadline
    assert redis_client.zscore(keys.deadlines, match_id) == drawn.turn_deadline


def test_a_kept_receipt_lives_the_receipts_ttl_or_the_matchs_when_shorter(
    settings: Settings, redis_client: redis.Redis
) -> None:
    store = MatchStore.open(settings)
    store.idempotency_ttl, store.idle_ttl = 500, 100_000
    referee = Referee(store)
    match_id, (ann, bo) = set_up(referee)
    drew = referee.draw(match_id, ann, guards=Guards(idempotency=Idempotency("k-1", "draw")))
    held = Keys(match_id).receipts(0)
    assert 400 < redis_client.ttl(held) <= 500
    kept = store.receipt(match_id, 0, "k-1")  # "<version>:<g|u>:<sealed>" in the hash
    assert kept is not None and (kept.version, kept.drawn) == (drew.version, drew.drawn)
    assert redis_client.hget(held, "k-1").startswith(f"{drew.version}:u:")
    store.idle_ttl = 300
    bo_draft = (parse_tiles(["B7", "B8", "B9"]),)
    drafted = referee.save_draft(
        match_id, bo, bo_draft, guards=Guards(idempotency=Idempotency("k-2", "d"))
    )
    held = Keys(match_id).receipts(1)
    assert 200 < redis_client.ttl(held) <= 300
    assert redis_client.hget(held, "k-2").startswith(f"{drafted.version}:u:")


def test_a_move_on_a_copy_pushed_out_of_the_decoded_ones_is_one_round_trip(
    settings: Settings, redis_client: redis.Redis
) -> None:
    """A worker holding more matches than decoded copies keeps the others as their stored
    state (service/store/copies.py): a move on one is decoded from it, with no load first."""
    referee = Referee(MatchStore(open_topology(settings), cache_size=1))
    match_id, (ann, _) = set_up(referee)
    referee.view(match_id, ann)  # the worker holds the current version now
    set_up(referee)  # another match: the first is pushed out of the decoded copies
    before = commands(redis_client)
    moved = referee.save_draft(match_id, ann, DRAFT)
    sent = sent_since(redis_client, before)
    assert sent.pop("info", 0) <= 1
    assert sent.pop("evalsha") == 1  # the commit script, and no load script before it
    assert set(sent) <= INSIDE_THE_COMMIT_SCRIPT, sent
    assert moved.version == referee.view(match_id, ann)[0].version


def test_a_move_on_a_match_the_worker_holds_no_copy_of_reads_it_with_no_script(
    referee: Referee, settings: Settings, redis_client: redis.Redis
) -> None:
    """A match dealt and moved by another worker: this one reads it as a view does (one
    ``HMGET``, not the load script) and commits it with its clock estimate checked."""
    referee.store.now()  # the worker has read the shared clock (as after its first request)
    other = another_worker(settings)
    match_id, (ann, bo) = set_up(other)
    other.save_draft(match_id, ann, DRAFT)
    before = commands(redis_client)
    moved = referee.draw(match_id, ann)
    sent = sent_since(redis_client, before)
    assert sent.pop("info", 0) <= 2  # the statistics read before, the replicas asked once
    assert sent.pop("hmget") == 1  # the read
    assert sent.pop("evalsha") == 1  # the commit script, and no load script before it
    assert set(sent) <= INSIDE_THE_COMMIT_SCRIPT, sent
    assert moved.drawn == ("R13",)
    assert other.view(match_id, bo)[0].version == moved.version
    with pytest.raises(NotYourTurn):  # judged on such a read, then again on a fresh load
        another_worker(settings).draw(match_id, ann)


def test_a_view_of_the_workers_current_copy_is_one_read_and_no_script(
    settings: Settings, redis_client: redis.Redis
) -> None:
    # Without Redis's invalidations (REDIS_TRACKING=0, or a cluster): see test_tracking.py.
    referee = Referee(MatchStore.open(replace(settings, redis_tracking=False)))
    match_id, (ann, _) = set_up(referee)
    first, _, _ = referee.view(match_id, ann)  # the worker holds the current version now
    before = commands(redis_client)
    match, seat, now = referee.view(match_id, ann)
    sent = sent_since(redis_client, before)
    assert sent.pop("info", 0) <= 1  # the statistics read before
    assert sent == {"hmget": 1}
    assert (match, seat) == (first, 0)
    assert abs(now - referee.store.now()) < 0.1  # the worker's estimate of the shared clock


def test_a_view_after_another_workers_move_shows_that_move(
    referee: Referee, settings: Settings
) -> None:
    match_id, (ann, bo) = set_up(referee)
    referee.view(match_id, bo)
    moved = another_worker(settings).draw(match_id, ann)
    match, _, _ = referee.view(match_id, bo)
    assert (match.version, match.current_seat) == (moved.version, 1)
    assert referee.view(match_id, ann)[0].players[0].rack == parse_tiles(
        ["R10", "R11", "R12", "R13", "K1"]
    )


def test_a_turn_settled_on_a_clock_estimate_that_is_off_is_settled_on_the_shared_clock(
    referee: Referee,
) -> None:
    match_id, (ann, _) = set_up(referee, turn_seconds=1)
    match, _, _ = referee.view(match_id, ann)
    shared = referee.store.now()
    # This worker believes it is 30 s later than it is: its view would time the turn out.
    referee.store._clock = (shared + 30, time.monotonic())
    seen, _, now = referee.view(match_id, ann)
    assert abs(now - referee.store.now()) < 0.1  # the commit was refused and the clock read
    assert (seen.version, seen.current_seat) == (match.version, 0)  # nothing ran out


def test_a_redis_that_forgot_the_scripts_is_sent_them_whole_and_the_move_lands_once(
    referee: Referee, redis_client: redis.Redis
) -> None:
    match_id, (ann, bo) = set_up(referee)
    referee.view(match_id, ann)
    redis_client.script_flush()  # as after a restart, or a failover to a replica
    before = commands(redis_client)
    moved = referee.draw(match_id, ann)
    sent = sent_since(redis_client, before)
    assert (sent.get("evalsha"), sent.get("eval")) == (1, 1)  # refused by its digest: nothing ran
    assert moved.drawn == ("R13",)
    assert [e["type"] for e in referee.events(match_id, after=0, limit=100)].count("drew") == 1
    before = commands(redis_client)
    referee.draw(match_id, bo)
    assert "eval" not in sent_since(redis_client, before)  # known again: by its digest only


def test_with_a_replica_a_commit_by_digest_falls_back_whole_and_still_waits_for_it(
    redis_url: str, redis_client: redis.Redis, tmp_path: Path
) -> None:
    replica = RedisProcess(data_dir=tmp_path / "replica").start()
    try:
        primary = redis_client.connection_pool.connection_kwargs
        replica.client().replicaof(primary["host"], primary["port"])
        deadline = time.monotonic() + 30  # a safety bound: the loop ends at the event
        while replica.client().info("replication").get("master_link_status") != "up":
            assert time.monotonic() < deadline, "the replica did not connect"
            time.sleep(0.05)
        # This test counts the commands a commit sends, not how fast a replica acknowledges:
        # a patient wait keeps a busy machine (a fresh CI run missed the 500 ms default) from
        # turning the count into a timing test.
        patient = Settings(redis_url=redis_url, redis_wait_timeout_ms=10_000)
        referee = Referee(MatchStore.open(patient))
        match_id, (ann, _) = set_up(referee)
        redis_client.script_flush()
        before = commands(redis_client)
        moved = referee.draw(match_id, ann)  # answered only once a replica has it
        sent = sent_since(redis_client, before)
        assert (sent.get("evalsha"), sent.get("eval"), sent.get("wait")) == (1, 1, 2)
        assert moved.drawn == ("R13",)
        key = Keys(match_id).events
        assert replica.client(decode_responses=True).xlen(key) == redis_client.xlen(key)
    finally:
        replica.cleanup()


def test_a_move_on_a_copy_another_worker_made_old_is_computed_again_not_refused(
    referee: Referee, settings: Settings
) -> None:
    match_id, (ann, bo) = set_up(referee)
    referee.view(match_id, ann)  # this worker's copy: Ann to play
    other = another_worker(settings)
    other.draw(match_id, ann)  # now Bo's turn, unknown to this worker
    moved = referee.draw(match_id, bo)  # judged on the fresh match, not the old copy
    assert moved.drawn == ("O3",)
    with pytest.raises(NotYourTurn):
        referee.draw(match_id, bo)


def test_a_copy_another_worker_of_the_host_published_spares_the_second_round_trip(
    referee: Referee, settings: Settings, redis_client: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the host's table of states (gunicorn maps it), a worker whose copy another
    worker made old computes on that worker's state: one script, no conflict, no reload."""
    table = shared_states.StateTable(rows=2)
    table.assign()
    monkeypatch.setattr(shared_states, "_table", table)
    match_id, (ann, bo) = set_up(referee)
    referee.view(match_id, ann)  # this worker's copy: Ann to play
    other = another_worker(settings)
    table.row = 1  # the other worker's process writes its own row of the table
    other.draw(match_id, ann)  # Bo's turn now, published by the other worker
    table.row = 0
    before = commands(redis_client)
    moved = referee.draw(match_id, bo)
    assert moved.drawn == ("O3",)
    sent = sent_since(redis_client, before)
    assert sent.get("evalsha") == 1 and "eval" not in sent  # the commit alone
    with pytest.raises(NotYourTurn):
        referee.draw(match_id, bo)


def test_a_kept_copy_the_table_has_a_newer_version_of_is_not_decoded(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker whose copy of a match is kept as its stored state (pushed out of the decoded
    ones) and made old by another worker's published commit decodes only the newer state."""
    table = shared_states.StateTable(rows=2)
    table.assign()
    monkeypatch.setattr(shared_states, "_table", table)
    decoded: list[str] = []
    decode = store_matches._copy_of

    def counted(state: str | bytes) -> tuple[game.Match, tuple[str, ...]]:
        copy = decode(state)
        decoded.append(copy[0].id)
        return copy

    monkeypatch.setattr(store_matches, "_copy_of", counted)
    referee = Referee(MatchStore(open_topology(settings), cache_size=1, kept_states=4))
    match_id, (ann, bo) = set_up(referee)
    set_up(referee)  # pushes the first match's copy out of the decoded one: kept as stored
    table.row = 1  # the other worker's process writes its own row of the table
    another_worker(settings).draw(match_id, ann)  # Bo's turn now, published
    table.row = 0
    decoded.clear()
    assert referee.draw(match_id, bo).drawn == ("O3",)
    assert decoded == [match_id]  # the newer state only, not the kept one before it


def test_without_the_table_a_copy_made_old_costs_a_conflict_and_a_second_commit(
    referee: Referee, settings: Settings, redis_client: redis.Redis
) -> None:
    """What the table spares (the referee is right either way)."""
    assert shared_states.current() is None
    match_id, (ann, bo) = set_up(referee)
    referee.view(match_id, ann)
    another_worker(settings).draw(match_id, ann)
    before = commands(redis_client)
    assert referee.draw(match_id, bo).drawn == ("O3",)
    assert sent_since(redis_client, before).get("evalsha") == 2  # refused as stale, then again


def test_a_commit_sent_twice_is_applied_once(referee: Referee) -> None:
    match_id, _ = set_up(referee)
    loaded = referee.store.load(match_id)
    assert loaded is not None
    moved = game.draw(loaded.match, 0, now=loaded.now)
    change = Change(loaded.match.version, moved.match, loaded.seats, moved.events, loaded.now)
    assert referee.store.commit(change) is None
    assert referee.store.commit(change) is None  # its answer lost, sent again: recognised
    events = referee.store.events(match_id, after=loaded.match.version)
    assert [e["type"] for e in events] == ["drew"]
    again = Change(loaded.match.version, moved.match, loaded.seats, moved.events, loaded.now)
    with pytest.raises(Stale):  # the same move computed anew is another commit: refused
        referee.store.commit(again)


def test_an_idempotency_key_replays_the_first_answer_and_refuses_another_request(
    referee: Referee, settings: Settings
) -> None:
    match_id, (ann, _) = set_up(referee)
    key = Idempotency("k-1", "fingerprint-of-draw")
    first = referee.draw(match_id, ann, guards=Guards(idempotency=key))
    again = another_worker(settings).draw(match_id, ann, guards=Guards(idempotency=key))
    assert again.replayed and (again.version, again.drawn, again.view) == (
        first.version,
        first.drawn,
        first.view,
    )
    with pytest.raises(IdempotencyMismatch):
        referee.save_draft(
            match_id, ann, DRAFT, guards=Guards(idempotency=Idempotency("k-1", "another"))
        )
    assert len(referee.events(match_id, after=0, limit=100)) == first.version


def test_if_match_on_an_old_version_is_refused_with_the_current_one(referee: Referee) -> None:
    match_id, (ann, bo) = set_up(referee)
    match, _, _ = referee.view(match_id, ann)
    referee.draw(match_id, ann)
    with pytest.raises(StaleVersion) as refused:
        referee.draw(match_id, bo, guards=Guards(if_match=match.version))
    assert refused.value.current == match.version + 1


def test_tokens_are_checked_against_the_match(referee: Referee) -> None:
    match_id, (ann, _) = set_up(referee)
    _, (other_ann, _) = set_up(referee)
    with pytest.raises(BadToken):
        referee.draw(match_id, None)
    with pytest.raises(BadToken):
        referee.draw(match_id, match_id + ".forged")
    with pytest.raises(TokenForAnotherMatch):
        referee.draw(match_id, other_ann)
    with pytest.raises(MatchNotFound):
        referee.view("no-such-match", ann)


def test_a_passed_deadline_is_settled_by_the_sweeper_from_its_shard(
    referee: Referee, settings: Settings
) -> None:
    match_id, _ = set_up(referee, turn_seconds=1)
    keys = Keys(match_id)
    assert referee.store.topology.client.zscore(keys.deadlines, match_id) is not None
    time.sleep(1.2)
    sweeper = Sweeper(another_worker(settings))
    assert sweeper.sweep_once() >= 1
    events = referee.events(match_id, after=0, limit=100)
    assert "turn_timed_out" in [e["type"] for e in events]


def test_following_yields_events_as_they_are_committed_and_ends_with_the_match(
    referee: Referee,
) -> None:
    match_id, (ann, _) = set_up(referee)
    created, _, _ = referee.view(match_id, ann)
    following = referee.follow(match_id, after=created.version, wake=0.1)
    assert following is not None
    assert next(following) == []  # nothing yet: a wake-up to send a keep-alive
    referee.draw(match_id, ann)
    batch = next(following)
    assert [(e.version, e.type.value) for e in batch] == [(created.version + 1, "drew")]
    following.close()


def test_a_stream_starts_at_the_last_event_and_not_at_all_once_the_match_is_over(
    referee: Referee,
) -> None:
    created = referee.create(
        ANN_BO, rules=Rules(), setup=Setup.parse(RACKS, POOL), owner="app-1"
    ).match
    assert referee.stream_start(created.id, after=0) == created.version
    assert referee.stream_start(created.id, after=created.version) == created.version  # live
    canceled, _ = referee.cancel(created.id, app="app-1")
    assert referee.stream_start(created.id, after=0) == canceled.version
    assert referee.stream_start(created.id, after=canceled.version - 1) == canceled.version
    assert referee.stream_start(created.id, after=canceled.version) is None
    assert referee.follow(created.id, after=canceled.version, wake=0.1) is None
    with pytest.raises(MatchNotFound):
        referee.stream_start("no-such-match", after=0)


def test_a_move_whose_turn_ran_out_after_its_if_match_is_refused_and_the_time_stands(
    referee: Referee,
) -> None:
    match_id, (_, bo) = set_up(referee, turn_seconds=1)
    seen, _, _ = referee.view(match_id, bo)  # Ann's turn: Bo decides on this version
    assert seen.current_seat == 0
    time.sleep(1.2)  # Ann's turn runs out (nothing stored yet): a penalty, then Bo's turn
    with pytest.raises(StaleVersion):  # not Bo's draw on a turn he never saw
        referee.draw(match_id, bo, guards=Guards(if_match=seen.version))
    match, _, _ = referee.view(match_id, bo)
    assert match.version > seen.version and match.current_seat == 1  # the timeout stands
    assert (
        referee.draw(match_id, bo, guards=Guards(if_match=match.version)).version
        == match.version + 1
    )


def test_a_follower_whose_connection_is_lost_ends_at_once_and_does_not_retry(
    referee: Referee,
) -> None:
    """A stream resumes with Last-Event-ID: its reader ends as its connection goes (on a
    cluster too: tests/cluster/test_cluster_store.py)."""
    match_id, (ann, _) = set_up(referee)
    created, _, _ = referee.view(match_id, ann)
    store = referee.store
    outcome = cut_while_following(store, store.topology.client, match_id, created.version)
    assert isinstance(outcome, StoreUnavailable), outcome
