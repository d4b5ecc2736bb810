"""Concurrent calls sharing round trips: the batcher alone (threads, no Redis), then the
store's commits through it against a real Redis (service/store/batching.py)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from service import game
from service.config import Settings
from service.referee import Referee
from service.store import Change, MatchStore, Stale
from service.store.batching import Batcher
from service.workers.serving import serving as being_served
from tests.service.test_referee_on_redis import DRAFT, commands, sent_since, set_up
from tests.support.redis_process import RedisProcess


class Gate:
    """A ``send`` for a batcher that records each batch and holds the first until opened."""

    def __init__(self, answer: Callable[[int], int | BaseException] = lambda item: item * 7):
        self.batches: list[list[int]] = []
        self.answer = answer
        self.held = threading.Event()  # the first batch is being sent
        self.open = threading.Event()

    def __call__(self, items: Sequence[int]) -> list[int | BaseException]:
        self.batches.append(list(items))
        if len(self.batches) == 1:
            self.held.set()
            assert self.open.wait(30)
        return [self.answer(item) for item in items]


def return_when_queued(batcher: Batcher[Any, Any], count: int) -> None:
    """Wait until ``count`` calls are queued behind the batch being sent."""
    deadline = time.monotonic() + 30  # a safety bound: the loop ends at the event
    while batcher.waiting() < count and time.monotonic() < deadline:
        time.sleep(0.001)


def outcomes_after(threads: list[threading.Thread], outcomes: dict[int, Any]) -> dict[int, Any]:
    for thread in threads:
        thread.join(10)
        assert not thread.is_alive()
    return outcomes


def interrupted() -> BaseException:
    return ConnectionError("interrupted")


def test_a_call_alone_is_sent_at_once_in_a_batch_of_its_own() -> None:
    sent: list[list[int]] = []

    def send(items: Sequence[int]) -> list[int]:
        sent.append(list(items))
        return [item + 1 for item in items]

    batcher: Batcher[int, int] = Batcher(send, interrupted=interrupted)
    assert [batcher(3), batcher(4)] == [4, 5]
    assert sent == [[3], [4]]
    assert (batcher.batches, batcher.calls) == (2, 2)


def test_calls_made_while_a_batch_is_out_go_together_in_the_next_each_with_its_answer() -> None:
    gate = Gate()
    batcher: Batcher[int, int] = Batcher(gate, interrupted=interrupted)
    first = threading.Thread(target=batcher, args=(100,))
    first.start()
    assert gate.held.wait(30)
    later = list(range(1, 13))
    outcomes: dict[int, Any] = {}
    threads = [
        threading.Thread(target=lambda item=item: outcomes.update({item: batcher(item)}))
        for item in later
    ]
    for thread in threads:
        thread.start()
    return_when_queued(batcher, len(later))
    gate.open.set()
    first.join(10)
    outcomes_after(threads, outcomes)
    assert outcomes == {item: item * 7 for item in later}
    assert gate.batches[0] == [100]
    assert sorted(gate.batches[1]) == later  # one round trip for all twelve
    assert len(gate.batches) == 2


def test_a_batch_holds_at_most_most_calls() -> None:
    gate = Gate()
    batcher: Batcher[int, int] = Batcher(gate, interrupted=interrupted, most=5)
    first = threading.Thread(target=batcher, args=(100,))
    first.start()
    assert gate.held.wait(30)
    outcomes: dict[int, Any] = {}
    threads = [
        threading.Thread(target=lambda item=item: outcomes.update({item: batcher(item)}))
        for item in range(12)
    ]
    for thread in threads:
        thread.start()
    return_when_queued(batcher, 12)
    gate.open.set()
    first.join(10)
    outcomes_after(threads, outcomes)
    assert outcomes == {item: item * 7 for item in range(12)}
    assert [len(batch) for batch in gate.batches] == [1, 5, 5, 2]


def test_each_call_gets_its_own_error_and_the_others_their_answers() -> None:
    def answer(item: int) -> int | BaseException:
        return ValueError(f"refused {item}") if item % 3 == 0 else item * 7

    gate = Gate(answer)
    batcher: Batcher[int, int] = Batcher(gate, interrupted=interrupted)
    first = threading.Thread(target=batcher, args=(100,))
    first.start()
    assert gate.held.wait(30)
    threads_outcomes: dict[int, Any] = {}

    def one(item: int) -> None:
        try:
            threads_outcomes[item] = batcher(item)
        except ValueError as error:
            threads_outcomes[item] = str(error)

    threads = [threading.Thread(target=one, args=(item,)) for item in range(1, 10)]
    for thread in threads:
        thread.start()
    return_when_queued(batcher, 9)
    gate.open.set()
    first.join(10)
    outcomes_after(threads, threads_outcomes)
    assert threads_outcomes == {
        item: f"refused {item}" if item % 3 == 0 else item * 7 for item in range(1, 10)
    }


def call_all_released(
    batcher: Batcher[int, int], items: range, release: threading.Event
) -> dict[int, Any]:
    outcomes: dict[int, Any] = {}

    def one(item: int) -> None:
        try:
            outcomes[item] = batcher(item)
        except BaseException as error:  # the test looks at which
            outcomes[item] = error

    threads = [threading.Thread(target=one, args=(item,)) for item in items]
    for thread in threads:
        thread.start()
    return_when_queued(batcher, len(items))
    release.set()
    return outcomes_after(threads, outcomes)


class Killed(BaseException):
    """What interrupts a leader mid-send (as gevent's GreenletExit would)."""


@pytest.mark.parametrize(
    "failure, leader_gets, others_get",
    [
        (TimeoutError("no answer"), TimeoutError, TimeoutError),  # the round trip's error
        (Killed(), Killed, ConnectionError),  # the leader killed: the others have no answer
    ],
)
def test_when_a_batch_fails_its_calls_get_the_failure_and_the_lead_passes_on(
    failure: BaseException, leader_gets: type, others_get: type
) -> None:
    batches: list[list[int]] = []
    held, release = threading.Event(), threading.Event()

    def send(items: Sequence[int]) -> list[int]:
        batches.append(list(items))
        if len(batches) == 1:
            held.set()
            assert release.wait(30)
        if len(batches) == 2:
            raise failure
        return [item * 7 for item in items]

    batcher: Batcher[int, int] = Batcher(send, interrupted=interrupted)
    first = threading.Thread(target=batcher, args=(100,))
    first.start()
    assert held.wait(30)
    outcomes = call_all_released(batcher, range(1, 7), release)
    first.join(10)
    leader = batches[1][0]
    assert isinstance(outcomes.pop(leader), leader_gets)
    assert all(isinstance(outcome, others_get) for outcome in outcomes.values()), outcomes
    assert batcher(8) == 56  # the lead was passed on: the next call is sent
    assert batches[-1] == [8]


def test_the_first_caller_lets_the_others_join_before_it_sends() -> None:
    sent: list[list[int]] = []
    outcomes: dict[int, Any] = {}
    threads: list[threading.Thread] = []

    def send(items: Sequence[int]) -> list[int]:
        sent.append(list(items))
        return [item * 7 for item in items]

    def gather() -> None:  # others reach the batcher while the first lets them run
        if threads:
            return
        for item in range(1, 4):
            thread = threading.Thread(target=lambda i=item: outcomes.update({i: batcher(i)}))
            threads.append(thread)
            thread.start()
        return_when_queued(batcher, 4)  # the first caller is queued too, as its batch's head

    batcher: Batcher[int, int] = Batcher(send, interrupted=interrupted, gather=gather)
    assert batcher(100) == 700
    outcomes_after(threads, outcomes)
    assert outcomes == {1: 7, 2: 14, 3: 21}
    assert sent == [[100, 1, 2, 3]]


def test_the_batcher_refuses_an_empty_batch_size() -> None:
    with pytest.raises(ValueError):
        Batcher(lambda items: list(items), interrupted=interrupted, most=0)
    with pytest.raises(ValueError):
        Batcher(lambda items: list(items), interrupted=interrupted, in_flight=0)


class HeldGates:
    """A ``send`` that records each batch and holds every batch until opened, counting the
    batches on their way at once."""

    def __init__(self) -> None:
        self.batches: list[list[int]] = []
        self.open = threading.Event()
        self.out = 0
        self.most_out = 0
        self.lock = threading.Lock()

    def __call__(self, items: Sequence[int]) -> list[int]:
        with self.lock:
            self.batches.append(list(items))
            self.out += 1
            self.most_out = max(self.most_out, self.out)
        assert self.open.wait(30)
        with self.lock:
            self.out -= 1
        return [item * 7 for item in items]

    def wait_for_batches(self, count: int) -> None:
        deadline = time.monotonic() + 30  # a safety bound: the loop ends at the event
        while len(self.batches) < count and time.monotonic() < deadline:
            time.sleep(0.001)


@pytest.mark.parametrize("in_flight", [1, 2, 3])
def test_up_to_in_flight_batches_go_at_once_and_the_rest_queue(in_flight: int) -> None:
    # Each of the first in_flight callers sends at once, its batch on its way while the others
    # are (before, a second waited for the first to come back); the callers after them queue
    # and go together when one comes back.
    gates = HeldGates()
    batcher: Batcher[int, int] = Batcher(gates, interrupted=interrupted, in_flight=in_flight)
    outcomes: dict[int, Any] = {}

    def call(item: int) -> None:
        outcomes[item] = batcher(item)

    first = [threading.Thread(target=call, args=(100 + n,)) for n in range(in_flight)]
    for number, thread in enumerate(first, 1):
        thread.start()
        gates.wait_for_batches(number)  # sent at once, the others still out
    assert gates.batches == [[100 + n] for n in range(in_flight)]
    later = [threading.Thread(target=call, args=(item,)) for item in range(1, 6)]
    for thread in later:
        thread.start()
    return_when_queued(batcher, 5)
    assert len(gates.batches) == in_flight  # no more than in_flight batches are out
    gates.open.set()
    outcomes_after(first + later, outcomes)
    assert outcomes == {
        item: item * 7 for item in [100 + n for n in range(in_flight)] + [1, 2, 3, 4, 5]
    }
    assert gates.most_out == in_flight
    assert sorted(gates.batches[in_flight]) == [1, 2, 3, 4, 5]  # the queued ones together
    assert len(gates.batches) == in_flight + 1
    assert not batcher.sending and batcher.waiting() == 0


def test_callers_beyond_a_batch_start_the_next_while_a_batch_is_free() -> None:
    # Eight queued behind one batch, at most three a batch, two out at once: when the first
    # comes back, its caller's successor takes three and hands the next three to another
    # leader at once, since a second batch may be out.
    gates = HeldGates()
    batcher: Batcher[int, int] = Batcher(gates, interrupted=interrupted, most=3, in_flight=2)
    outcomes: dict[int, Any] = {}
    threads = [threading.Thread(target=lambda: outcomes.update({0: batcher(0)}))]
    threads[0].start()
    gates.wait_for_batches(1)
    blocker = threading.Thread(target=lambda: outcomes.update({99: batcher(99)}))
    blocker.start()
    gates.wait_for_batches(2)
    for item in range(1, 9):
        thread = threading.Thread(target=lambda item=item: outcomes.update({item: batcher(item)}))
        threads.append(thread)
        thread.start()
    return_when_queued(batcher, 8)
    gates.open.set()
    outcomes_after([*threads, blocker], outcomes)
    assert outcomes == {item: item * 7 for item in [*range(9), 99]}
    assert sorted(len(batch) for batch in gates.batches[2:]) == [2, 3, 3]
    assert gates.most_out == 2
    assert not batcher.sending and batcher.waiting() == 0


# -- the store's commits, against a real Redis -------------------------------------------------


def drafted(referee: Referee, match_id: str) -> Change:
    """A draft of Ann's on the stored match, ready to commit."""
    loaded = referee.store.load(match_id)
    assert loaded is not None
    moved = game.save_draft(loaded.match, 0, DRAFT, now=loaded.now)
    return Change(loaded.match.version, moved.match, loaded.seats, moved.events, loaded.now)


def commit_all(store: MatchStore, changes: list[Change]) -> list[Any]:
    outcomes: list[Any] = [None] * len(changes)

    def one(at: int) -> None:
        try:
            outcomes[at] = store.commit(changes[at])
        except Exception as error:  # the test looks at which
            outcomes[at] = error

    threads = [threading.Thread(target=one, args=(at,)) for at in range(len(changes))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return outcomes


def test_commits_made_while_redis_is_busy_share_a_round_trip_and_each_applies_once(
    tmp_path,
) -> None:
    with RedisProcess(data_dir=tmp_path / "redis") as server:
        commits_pile_up_then_share_a_round_trip(server)


def commits_pile_up_then_share_a_round_trip(server: RedisProcess) -> None:
    referee = Referee(MatchStore.open(Settings(redis_url=server.url, redis_socket_timeout=5.0)))
    commits = referee.store.commits
    assert commits is not None
    commits.in_flight = 1  # one batch on its way at a time: the rest queue behind it (below)
    first = drafted(referee, set_up(referee)[0])
    matches = [set_up(referee)[0] for _ in range(16)]
    changes = [drafted(referee, match_id) for match_id in matches]
    rival = drafted(referee, matches[0])  # the same version of the first match: one wins
    client = server.client()
    before = commands(client)
    batches = commits.batches
    server.pause()  # Redis cannot answer: the first commit waits, the others pile up
    try:
        leading = threading.Thread(target=referee.store.commit, args=(first,))
        leading.start()
        deadline = time.monotonic() + 30  # a safety bound: the loop ends at the event
        while not (commits.sending and commits.waiting() == 0):  # its batch is on its way
            assert time.monotonic() < deadline
            time.sleep(0.001)
        outcome: list[Any] = []
        committing = threading.Thread(
            target=lambda: outcome.extend(commit_all(referee.store, [*changes, rival]))
        )
        committing.start()
        return_when_queued(commits, len(changes) + 1)
    finally:
        server.resume()
    committing.join(30)
    leading.join(30)
    assert sum(o is None for o in outcome) == len(changes), outcome  # each applied, the rival lost:
    assert sum(isinstance(o, Stale) for o in outcome) == 1  # one of the two on match 0
    assert len(outcome) == len(changes) + 1
    assert commits.batches - batches == 2  # the first alone, then all 17 together
    sent = sent_since(client, before)
    assert sent.get("evalsha") == len(changes) + 2
    for match_id in matches:
        loaded = referee.store.load(match_id)
        assert loaded is not None and loaded.match.draft is not None
        events = referee.store.events(match_id, after=0, limit=100)
        assert [e["type"] for e in events].count("draft_updated") == 1


def test_a_batch_falls_back_whole_when_redis_forgot_the_script(redis_url, redis_client) -> None:
    referee = Referee(MatchStore.open(Settings(redis_url=redis_url)))
    matches = [set_up(referee)[0] for _ in range(4)]
    changes = [drafted(referee, match_id) for match_id in matches]
    redis_client.script_flush()  # as after a restart: each is refused by its digest, unrun
    outcomes = commit_all(referee.store, changes)
    assert outcomes == [None] * len(changes)
    for match_id in matches:
        events = referee.store.events(match_id, after=0, limit=100)
        assert [e["type"] for e in events].count("draft_updated") == 1


@pytest.mark.parametrize(("serving", "batched"), [(1, False), (0, True), (3, True)])
def test_a_commit_goes_through_the_batcher_unless_its_request_is_the_only_one_served(
    redis_url: str, monkeypatch: pytest.MonkeyPatch, serving: int, batched: bool
) -> None:
    referee = Referee(MatchStore.open(Settings(redis_url=redis_url)))
    commits = referee.store.commits
    assert commits is not None
    match_id = set_up(referee)[0]
    change = drafted(referee, match_id)
    batches = commits.batches
    monkeypatch.setattr(being_served, "count", serving)
    assert referee.store.commit(change) is None  # applied, alone or in a batch of one
    assert commits.batches - batches == (1 if batched else 0)
    loaded = referee.store.load(match_id)
    assert loaded is not None and loaded.match.version == change.match.version
    assert loaded.match.draft is not None


# -- greenlets killed while they wait (gevent, as gunicorn's workers run it) --------------------

GREENLETS = r"""
from gevent import monkey

monkey.patch_all()

import gevent
from gevent.event import Event

from service.store.batching import Batcher

sent = []
greenlets = {}
on_its_way, queued = Event(), Event()


def send(items):
    sent.append(list(items))
    if len(sent) == 1:
        on_its_way.set()
        queued.wait()  # on its way until the others queue behind it (events, not time)
        greenlets[3].kill(block=False)  # the lead is about to be handed to 3
    return [item * 7 for item in items]


batcher = Batcher(send, interrupted=lambda: ConnectionError("interrupted"))
answers = {}


def call(item):
    answers[item] = batcher(item)


greenlets[1] = gevent.spawn(call, 1)
on_its_way.wait()  # 1 leads, its batch on its way
for item in (2, 3, 4):
    greenlets[item] = gevent.spawn(call, item)
while batcher.waiting() < 3:
    gevent.sleep(0)  # 2, 3 and 4 wait behind it
greenlets[2].kill()  # killed while it waits: its call goes unsent
queued.set()
gevent.joinall(list(greenlets.values()), timeout=30)
late = gevent.with_timeout(30, batcher, 9, timeout_value="stuck")
print(sent, sorted(answers.items()), late)

# a first caller killed while it lets the others run, before it took its batch
gathering = Batcher(
    lambda items: [item * 7 for item in items],
    interrupted=lambda: ConnectionError("interrupted"),
    gather=lambda: gevent.sleep(0),
)
first = gevent.spawn(gathering, 1)
gevent.sleep(0)  # it runs up to its gather, then this goes on
first.kill()
print(gevent.with_timeout(30, gathering, 5, timeout_value="stuck"), gathering.waiting())
"""


def test_callers_killed_while_waiting_leave_the_batcher_working() -> None:
    # 2 is killed while it waits (its call is dropped); 3 is killed just as the lead is handed
    # to it (it passes the lead to 4); a call after all this is still answered. Then a first
    # caller is killed before it sends: the next call is answered, and nothing is left queued.
    done = subprocess.run(
        [sys.executable, "-c", GREENLETS],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).resolve().parents[2],
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["[[1], [4], [9]] [(1, 7), (4, 28)] 63", "35 0"], done
