"""Bank clocks on a real Redis Cluster: flag falls settled on every master, by the sweeper with
nobody polling and by the test-mode clock, in order."""

from __future__ import annotations

import time
from typing import Any

import pytest

from service.bootstrap import bootstrap
from service.game import PlayerSpec
from service.rules import Clock, ClockType, Rules
from service.store import Keys
from service.sweeper import Sweeper

pytestmark = pytest.mark.cluster

ONE_SECOND_BANK = Rules(clock=Clock(ClockType.BANK, bank_seconds=1), turn_seconds=0)
PLAYERS = [PlayerSpec("Ann"), PlayerSpec("Bo"), PlayerSpec("Cy")]


@pytest.fixture
def services(redis_cluster_nodes: str) -> Any:
    return bootstrap({"redis_cluster_nodes": redis_cluster_nodes, "test_mode": True})


def test_the_sweeper_settles_flag_falls_on_every_master_with_nobody_polling(services) -> None:
    referee, store = services.referee, services.store
    ids = [referee.create(PLAYERS, rules=ONE_SECOND_BANK).match.id for _ in range(12)]
    masters = {store.topology.node_of(Keys(match_id).state) for match_id in ids}
    assert len(masters) > 1  # the matches are spread over the cluster
    sweeper = Sweeper(referee)
    settled: dict[str, list[str]] = {}
    give_up = time.monotonic() + 60
    while len(settled) < len(ids):  # wait for every flag, not for a time
        assert time.monotonic() < give_up, f"flags never fell: {set(ids) - set(settled)}"
        sweeper.sweep_once()
        for match_id in set(ids) - set(settled):
            types = [e["type"] for e in store.events(match_id, after=0, limit=100)]
            if "flag_fell" in types:
                settled[match_id] = types
        time.sleep(0.1)
    for types in settled.values():
        first = types.index("turn_timed_out")
        assert types[first : first + 2] == ["turn_timed_out", "flag_fell"]


def test_the_test_mode_clock_lets_every_flag_fall_in_order_on_the_cluster(services) -> None:
    referee = services.referee
    rules = Rules(clock=Clock(ClockType.BANK, bank_seconds=30), turn_seconds=0)
    for _ in range(6):
        match_id = referee.create(PLAYERS, rules=rules).match.id
        match, _ = referee.advance_clock(match_id, 100)
        result = match.outcomes[-1]
        assert result.outcome.reason.value == "flag"
        assert len(match.flagged) == 2 and result.outcome.winner not in match.flagged
        events = services.store.events(match_id, after=0, limit=100)
        fell = [e for e in events if e["type"] == "flag_fell"]
        assert [e["at"] for e in fell] == sorted(e["at"] for e in fell)
        assert fell[1]["at"] - fell[0]["at"] == pytest.approx(30)
