"""A commit whose kept connection was lost before its first answer (service/store/commitlink.py,
``MatchStore.commit``), against a real redis-server: the same commit goes again at once on a
connection the pool checks, is recognised if it had run, and is applied once; the node's
breaker is not tripped, as it was not when every kept connection was checked before use."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis

from service.config import Settings
from service.game import PlayerSpec, Setup
from service.referee import Guards, Idempotency, Referee
from service.rules import Rules, parse_tiles
from service.store import MatchStore
from tests.support.cutting_proxy import CuttingProxy
from tests.support.redis_process import RedisProcess

RACKS = [["R10", "R11", "R12", "K1"], ["B7", "B8", "B9", "O2"]]
POOL = ["R13", "O3", "O4", "O5", "O6"]
DRAFTS = [(parse_tiles(tiles),) for tiles in (["R10", "R11", "R12"], ["R10", "R11", "K1"])]


@pytest.fixture
def proxy(redis_server: RedisProcess, redis_url: str) -> Iterator[CuttingProxy]:
    with CuttingProxy(redis_server.port) as proxy:
        yield proxy


def referee_on(url: str) -> Referee:
    return Referee(MatchStore.open(Settings(redis_url=url)))


def started(referee: Referee, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str, list[object]]:
    """A match whose commits have kept a connection (a draft committed after its creation),
    and the list the store's breaker trips are recorded in from now on."""
    created = referee.create(
        [PlayerSpec("Ann"), PlayerSpec("Bo")], rules=Rules(), setup=Setup.parse(RACKS, POOL)
    )
    match_id, ann = created.match.id, created.tokens[0]
    referee.save_draft(match_id, ann, DRAFTS[0])
    trips: list[object] = []
    breakers = referee.store.breakers
    monkeypatch.setattr(breakers, "trip", lambda *args: trips.append(args))
    return match_id, ann, trips


def drafts_logged(referee: Referee, match_id: str) -> int:
    return sum(e["type"] == "draft_updated" for e in referee.events(match_id, after=0, limit=100))


def test_a_commit_that_ran_and_lost_its_answer_with_its_kept_connection_is_applied_once(
    proxy: CuttingProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    referee = referee_on(f"redis://127.0.0.1:{proxy.port}/0")
    match_id, ann, trips = started(referee, monkeypatch)
    logged = drafts_logged(referee, match_id)
    key = Guards(idempotency=Idempotency("draft-2", "fingerprint"))
    proxy.cut_answer_to(b"EVALSHA")  # the next commit runs, and its connection closes unanswered
    moved = referee.save_draft(match_id, ann, DRAFTS[1], guards=key)
    assert proxy.cut.is_set(), "no answer was cut"
    assert not moved.replayed  # its own receipt, found by the send again: this request's move
    assert drafts_logged(referee, match_id) == logged + 1  # once
    assert trips == []
    again = referee.save_draft(match_id, ann, DRAFTS[1], guards=key)
    assert again.replayed and again.version == moved.version
    assert drafts_logged(referee, match_id) == logged + 1


def test_a_commit_on_a_kept_connection_redis_closed_is_applied_without_tripping_the_breaker(
    redis_url: str, redis_client: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    referee = referee_on(redis_url)
    match_id, ann, trips = started(referee, monkeypatch)
    logged = drafts_logged(referee, match_id)
    assert redis_client.client_kill_filter(_type="normal", skipme=True) >= 1  # as a restart
    ran = _evalsha_calls(redis_client)
    moved = referee.save_draft(match_id, ann, DRAFTS[1])
    assert not moved.replayed
    assert _evalsha_calls(redis_client) == ran + 1  # the closed connection's send never ran
    assert drafts_logged(referee, match_id) == logged + 1
    assert trips == []


def _evalsha_calls(client: redis.Redis) -> int:
    stats = client.info("commandstats")
    return int(stats.get("cmdstat_evalsha", {}).get("calls", 0))
