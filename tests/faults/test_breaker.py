"""The store's circuit breakers (service/store/breaker.py), against a real Redis.

Nothing is timed: what a call cost is counted on the wire (redis-py's connections: the
commands sent, the socket timeouts waited), and the pause's own arithmetic runs on a clock
the test moves.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from service.config import Settings
from service.store import MatchStore, StoreUnavailable
from service.store import breaker as breaker_module
from service.store.breaker import Breakers
from tests.support.sockets import wait_for
from tests.support.wire import Wire


def failure(call: Any) -> BaseException | None:
    try:
        call()
    except Exception as error:  # the test looks at which
        return error
    return None


@pytest.mark.parametrize("fault", ["frozen", "stopped"])
def test_after_one_failure_calls_fail_at_once_until_the_pause_ends(
    own_redis, fault, monkeypatch
) -> None:
    server = own_redis()
    settings = Settings.from_env().with_overrides(
        {"redis_url": server.url, "redis_socket_timeout": 1.0, "redis_connect_timeout": 1.0}
    )
    store = MatchStore.open(settings)
    store.ping()
    wire = Wire().install(monkeypatch)
    if fault == "frozen":
        server.pause()
    else:
        server.stop()
    try:
        first = failure(lambda: store.load("some-match"))
        assert isinstance(first, StoreUnavailable)
        if fault == "frozen":
            # waited for once (one socket timeout), not sent again to wait twice
            assert wire["timeout"] == 1, wire
        else:
            assert wire["timeout"] == 0, wire  # refused at once
        wire.clear()
        later = failure(lambda: store.load("another-match"))
        assert isinstance(later, StoreUnavailable)
        assert wire == Counter(), wire  # not sent, no connection tried: the breaker is open
    finally:
        if fault == "frozen":
            server.resume()
        else:
            server.start()
    # the pause (one socket timeout) ends, and Redis is asked again
    wait_for(lambda: failure(lambda: store.load("some-match")) is None, "Redis never asked again")
    assert wire["send"] > 0
    assert store.load("some-match") is None


def test_an_answer_ends_the_pause_at_once() -> None:
    # A call sent before the pause (it was waiting on a frozen Redis) that gets its answer
    # once Redis is back shows the Redis is there: later calls need not wait out the pause.
    breakers = Breakers(pause=60)
    breakers.trip("redis:6379")
    with pytest.raises(StoreUnavailable):
        breakers.check("redis:6379")
    breakers.check("other:6379")  # another node is not paused
    breakers.answered("redis:6379")
    breakers.check("redis:6379")


class Clock:
    """``time.monotonic`` for the breakers, moved by the test."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


def test_only_a_call_sent_after_the_pause_began_can_start_another(monkeypatch) -> None:
    # Calls sent before a Redis froze time out one after another; the first one pauses the
    # address, and the later ones must not push the end of the pause further, or a Redis
    # back soon after the first failure would be left alone for up to two socket timeouts.
    clock = Clock()
    monkeypatch.setattr(breaker_module, "time", clock)
    breakers = Breakers(pause=0.3)
    address = "redis:6379"
    sent_before = clock.now
    clock.now += 0.01
    breakers.trip(address, clock.now)  # the first failure: paused
    clock.now += 0.2
    breakers.trip(address, sent_before)  # sent before the pause, failing within it
    with pytest.raises(StoreUnavailable):
        breakers.check(address)  # still paused
    clock.now += 0.15  # 0.35 s after the first failure: over, unless the old call extended it
    breakers.check(address)
    breakers.trip(address, clock.now)  # sent after the pause began: paused again
    with pytest.raises(StoreUnavailable):
        breakers.check(address)
