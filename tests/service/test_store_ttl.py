"""How long the store keeps a match after a change (``MatchStore.ttl_of``): the idle TTL, or
the finished one once the match is over when that is shorter; 0 (never expires) for a TTL
that is 0."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from service import game
from service.config import Settings
from service.game import PlayerSpec, Status
from service.rules import Rules
from service.store import MatchStore

PLAYING = game.new_match(
    "m0", [PlayerSpec("Ann"), PlayerSpec("Bo")], rules=Rules(), rng=random.Random(3), now=1.0
).match


def expected(idle: int, finished: int, over: bool) -> int:
    """The rule as the docstring states it: the least of the TTLs that apply and are set."""
    kept = [ttl for ttl in [idle] + ([finished] if over else []) if ttl > 0]
    return min(kept) if kept else 0


@pytest.mark.parametrize("idle", [0, 60, 3600])
@pytest.mark.parametrize("finished", [0, 60, 3600])
@pytest.mark.parametrize("status", [Status.PLAYING, Status.FINISHED, Status.CANCELED])
def test_a_match_is_kept_for_the_least_of_the_ttls_that_apply(
    idle: int, finished: int, status: Status
) -> None:
    store = MatchStore.open(Settings(redis_url="redis://127.0.0.1:1"))  # nothing connects
    store.idle_ttl, store.finished_ttl = idle, finished
    match = replace(PLAYING, status=status)
    assert store.ttl_of(match) == expected(idle, finished, match.is_over)
