"""The store's circuit breakers (service/store/breaker.py), against a real Redis."""

from __future__ import annotations

import time

import pytest

from service.config import Settings
from service.store import MatchStore, StoreUnavailable
from service.store.breaker import Breakers


def timed(call) -> tuple[BaseException | None, float]:
    started = time.monotonic()
    try:
        call()
    except Exception as error:  # the test looks at which
        return error, time.monotonic() - started
    return None, time.monotonic() - started


@pytest.mark.parametrize("fault", ["frozen", "stopped"])
def test_after_one_failure_calls_fail_at_once_until_the_pause_ends(own_redis, fault) -> None:
    server = own_redis()
    settings = Settings.from_env().with_overrides(
        {"redis_url": server.url, "redis_socket_timeout": 1.0, "redis_connect_timeout": 1.0}
    )
    store = MatchStore.open(settings)
    store.ping()
    if fault == "frozen":
        server.pause()
    else:
        server.stop()
    try:
        first, first_seconds = timed(lambda: store.load("some-match"))
        assert isinstance(first, StoreUnavailable)
        if fault == "frozen":
            assert 0.9 <= first_seconds < 1.9  # one socket timeout (1 s), not two
        later, later_seconds = timed(lambda: store.load("another-match"))
        assert isinstance(later, StoreUnavailable)
        assert later_seconds < 0.5  # not sent: the breaker is open (sent, it would wait 1 s)
    finally:
        if fault == "frozen":
            server.resume()
        else:
            server.start()
    time.sleep(1.1)  # the pause (one socket timeout) is over
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


def test_only_a_call_sent_after_the_pause_began_can_start_another() -> None:
    # Calls sent before a Redis froze time out one after another; the first one pauses the
    # address, and the later ones must not push the end of the pause further, or a Redis
    # back soon after the first failure would be left alone for up to two socket timeouts.
    breakers = Breakers(pause=0.3)
    address = "redis:6379"
    sent_before = time.monotonic()
    time.sleep(0.01)
    breakers.trip(address, time.monotonic())  # the first failure: paused
    time.sleep(0.2)
    breakers.trip(address, sent_before)  # sent before the pause, failing within it
    time.sleep(0.15)  # 0.35 s after the first failure: over, unless the old call extended it
    breakers.check(address)
    breakers.trip(address, time.monotonic())  # sent after the pause began: paused again
    with pytest.raises(StoreUnavailable):
        breakers.check(address)
