"""service.threads.ElasticPool: few jobs running at once, in order; long waits step aside."""

from __future__ import annotations

import threading
import time
from concurrent.futures import wait

import pytest

from service.threads import ElasticPool, long_wait

TIMEOUT = 10


class Tracker:
    """Counts the jobs running at once and remembers the order they started in."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.running = 0
        self.most = 0
        self.started: list[int] = []

    def job(self, number: int, seconds: float = 0.01) -> int:
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
            self.started.append(number)
        time.sleep(seconds)
        with self.lock:
            self.running -= 1
        return number * 2


@pytest.fixture
def make_pool():
    pools: list[ElasticPool] = []

    def make(active: int, maximum: int) -> ElasticPool:
        pool = ElasticPool(active, maximum, name="test")
        pools.append(pool)
        return pool

    yield make
    for pool in pools:
        pool.shutdown(wait=True, cancel_futures=True)


def test_jobs_give_their_results_and_errors_to_their_futures(make_pool) -> None:
    pool = make_pool(2, 4)
    tracker = Tracker()
    futures = [pool.submit(tracker.job, n) for n in range(10)]
    assert [f.result(TIMEOUT) for f in futures] == [n * 2 for n in range(10)]
    failing = pool.submit(lambda: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        failing.result(TIMEOUT)


@pytest.mark.parametrize("active", [1, 3])
def test_no_more_than_active_jobs_run_at_once_and_they_start_in_order(make_pool, active) -> None:
    pool = make_pool(active, 16)
    tracker = Tracker()
    futures = [pool.submit(tracker.job, n) for n in range(24)]
    wait(futures, TIMEOUT)
    assert tracker.most == active
    if active == 1:
        assert tracker.started == list(range(24))
    # Queued jobs wait for a slot instead of each getting a thread.
    assert pool.threads <= active + 1


def test_a_long_wait_lets_the_next_job_run(make_pool) -> None:
    pool = make_pool(1, 4)
    release = threading.Event()

    def waiting() -> str:
        with long_wait():
            assert release.wait(TIMEOUT)
        return "waited"

    first = pool.submit(waiting)
    second = pool.submit(lambda: "ran")
    assert second.result(TIMEOUT) == "ran"  # with its slot held, the first would block this
    assert not first.done()
    release.set()
    assert first.result(TIMEOUT) == "waited"


def test_back_from_a_long_wait_a_job_finishes_before_queued_jobs_start(make_pool) -> None:
    pool = make_pool(1, 4)
    order: list[str] = []
    waited, holding = threading.Event(), threading.Event()

    def waiting() -> None:
        with long_wait():
            assert waited.wait(TIMEOUT)
        order.append("back")

    def busy() -> None:
        holding.set()
        time.sleep(0.2)  # holds the only slot when the first job's wait ends
        order.append("busy")

    first = pool.submit(waiting)
    second = pool.submit(busy)
    assert holding.wait(TIMEOUT)
    waited.set()
    time.sleep(0.05)
    third = pool.submit(lambda: order.append("queued"))
    wait([first, second, third], TIMEOUT)
    assert order == ["busy", "back", "queued"]


def test_without_a_long_wait_the_next_job_waits_for_the_slot(make_pool) -> None:
    pool = make_pool(1, 4)
    release = threading.Event()
    first = pool.submit(lambda: release.wait(TIMEOUT))
    second = pool.submit(lambda: "ran")
    time.sleep(0.2)
    assert not second.done()
    release.set()
    assert second.result(TIMEOUT) == "ran"
    assert first.result(TIMEOUT) is True


def test_waits_are_bounded_by_the_most_threads(make_pool) -> None:
    pool = make_pool(1, 2)
    release = threading.Event()

    def waiting() -> None:
        with long_wait():
            release.wait(TIMEOUT)

    waits = [pool.submit(waiting) for _ in range(2)]
    late = pool.submit(lambda: "ran")
    time.sleep(0.2)
    assert not late.done()  # both threads are waiting: no third thread
    assert pool.threads == 2
    release.set()
    assert late.result(TIMEOUT) == "ran"
    wait(waits, TIMEOUT)


def test_long_wait_outside_a_pool_does_nothing() -> None:
    with long_wait():
        pass


def test_after_shutdown_nothing_more_is_taken(make_pool) -> None:
    pool = make_pool(2, 4)
    assert pool.submit(lambda: 1).result(TIMEOUT) == 1
    pool.shutdown(wait=True)
    with pytest.raises(RuntimeError):
        pool.submit(lambda: 2)


def test_active_must_be_between_one_and_the_most_threads() -> None:
    for active, maximum in ((0, 4), (5, 4)):
        with pytest.raises(ValueError):
            ElasticPool(active, maximum)


def test_a_job_on_an_idle_pool_always_runs_after_quick_submits(make_pool) -> None:
    # Two submits in a row while one thread is idle: the second must not count that thread
    # as woken again (it is already on its way), or later a lone job waits for nobody.
    pool = make_pool(3, 3)
    release = threading.Event()
    busy = pool.submit(release.wait, TIMEOUT)
    assert pool.submit(lambda: None).result(TIMEOUT) is None  # a second thread, now idle
    time.sleep(0.01)
    quick = [pool.submit(time.sleep, 0.001) for _ in range(2)]
    release.set()
    _, waiting = wait([busy, *quick], TIMEOUT)
    assert not waiting
    time.sleep(0.01)  # every thread idle again
    assert pool.submit(lambda: "ran").result(TIMEOUT) == "ran"


def test_a_stream_closed_by_another_thread_takes_no_slot_there(make_pool) -> None:
    pool = make_pool(1, 4)

    def stream():
        with long_wait():
            yield "event"

    def start() -> object:
        messages = stream()
        next(messages)  # the wait begins in the pool's thread, which gives its slot up
        return messages

    messages = pool.submit(start).result(TIMEOUT)
    messages.close()  # closed here, outside the pool: nothing to take back
    assert pool.submit(lambda: "ran").result(TIMEOUT) == "ran"
    assert pool._slots == 1


def test_the_referees_searches_give_up_the_slot(make_pool, monkeypatch) -> None:
    from service import game
    from service.bootstrap import bootstrap

    searching, release = threading.Event(), threading.Event()

    def slow_search(self, *args):  # stands in for a search that takes its whole budget
        searching.set()
        assert release.wait(TIMEOUT)
        return False

    monkeypatch.setattr(game.Autoplay, "can_play", slow_search)
    pool = make_pool(1, 4)
    autoplay = bootstrap({"redis_url": "redis://127.0.0.1:1/0"}).referee.autoplay  # as wired
    search = pool.submit(autoplay.can_play, (), {}, False, None)
    assert searching.wait(TIMEOUT)
    assert pool.submit(lambda: "ran").result(TIMEOUT) == "ran"
    release.set()
    assert search.result(TIMEOUT) is False
