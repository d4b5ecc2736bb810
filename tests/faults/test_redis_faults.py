"""Faults under a real gunicorn: Redis killed (-9), stopped or frozen (SIGSTOP), and gunicorn
workers killed mid-request.

- Redis killed with SIGKILL under load (append-only file, fsync always), then restarted from
  its AOF: every acknowledged move is still in the log, the stored matches are whole, and the
  service recovers by itself (same gunicorn, same workers).
- Redis stopped, or frozen: every request answers 503 with Retry-After while Redis is still
  down (a request that waited for Redis would fail at its 30 s socket timeout), no worker
  times out, and requests succeed again once Redis is back.
- Freezes under load: every move a 503 left unknown is settled by resending it with its key.
- A worker killed with SIGKILL while requests are in flight leaves no half-applied move.

Two tests record bugs found here and since fixed: a long-poll on a frozen Redis used to hang for
~70 s, and a move could be applied although its answer was a 503 (the deadline index was written
after the commit and its failure was raised).

After a fault, each move whose outcome the client could not know (a 503, a dropped connection)
is resent with its Idempotency-Key: it is replayed, applied now, or refused, never applied twice,
and then the event log holds exactly the acknowledged moves (tests/faults/consistency.py).

Nothing is timed: each step waits for the event it needs (moves acknowledged, a 503 seen, the
service serving again), with a safety bound that only fails a hang. How fast the 503s come is
a latency, for a benchmark on a quiet machine, not for a test on a busy one.
"""

from __future__ import annotations

import random
import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from service.store import Keys
from tests.faults.consistency import (
    History,
    MoveLoad,
    Seat,
    check_stored_match,
    create_match,
    new_key,
)
from tests.support.gunicorn_process import GunicornProcess, Reply, http_request
from tests.support.redis_process import RedisProcess
from tests.support.sockets import wait_for

ANSWER = 30.0  # seconds: a request's socket timeout, so that a hang fails instead of stalling
LONG_POLL = 1.0  # seconds a long-poll in the tests asks to wait


def new_matches(web: GunicornProcess, count: int, *, seed: int = 7) -> list[list[Seat]]:
    """``count`` two-player matches dealt from the whole box (a seeded shuffle)."""
    matches = []
    for number in range(count):
        _, seats = create_match(web, [{"name": "Ann"}, {"name": "Bo"}], seed=seed + number)
        matches.append(seats)
    return matches


def wait_until_serving(web: GunicornProcess, *, streak: int = 6) -> None:
    """Poll until ``streak`` readiness probes in a row answer 200.

    One 200 shows only that the worker which answered is serving: each probe is a new
    connection, which may go to any worker, and each worker learns by itself that Redis is
    back (see ``Breakers`` in service/store/breaker.py). The probe asks Redis each time; a
    view may not (a worker's trusted copy, service/store/tracking.py).
    """
    served = [0]

    def probe() -> bool:
        reply = web.request("GET", "/readyz", timeout=ANSWER)
        assert reply.status in (200, 503), reply
        served[0] = served[0] + 1 if reply.status == 200 else 0
        return served[0] >= streak

    wait_for(probe, "the service is not serving again")


def acked_more(history: History, than: int) -> Callable[[], bool]:
    return lambda: len(history.acks) > than


def check_all(redis_client: Any, matches: list[list[Seat]], history: History) -> dict[str, int]:
    """Every match whole in Redis, and its log exactly its acknowledged moves."""
    totals = {"acknowledged": 0, "events": 0}
    for seats in matches:
        match_id = seats[0].match_id
        _, events = check_stored_match(redis_client, match_id)
        created = max(e["version"] for e in events if e["type"] == "game_started")
        counts = history.check(match_id, events, created_version=created)
        totals["acknowledged"] += counts["acknowledged"]
        totals["events"] += counts["events"]
    return totals


# --- (a) Redis killed with SIGKILL under load ------------------------------------------------


@pytest.mark.slow
def test_acknowledged_moves_survive_a_redis_kill_9_and_the_service_recovers(
    own_redis, start_gunicorn
) -> None:
    redis_server: RedisProcess = own_redis(appendonly=True)
    web = start_gunicorn(redis_server.url, workers=2, threads=4)
    workers = sorted(web.wait_workers())
    matches = new_matches(web, 4)
    history = History()
    load = MoveLoad(web, matches, history).start()
    try:
        wait_for(acked_more(history, 20), f"too little load before the kill: {load.statuses}")
        before_kill = len(history.acks)
        redis_server.kill()
        wait_for(lambda: load.statuses["503"] > 0, "no request saw Redis gone")
        redis_server.start()  # same port and folder: the data comes back from the AOF
        wait_until_serving(web)
        serving = len(history.acks)
        wait_for(acked_more(history, serving), "no move acknowledged after the restart")
    finally:
        load.stop()
    assert set(load.statuses) <= {"200", "503"}, load.statuses
    settled = load.settle_unknown()
    with redis_server.client() as redis_client:
        totals = check_all(redis_client, matches, history)
    assert totals["acknowledged"] > before_kill
    assert sorted(web.worker_pids()) == workers, "a worker was restarted"
    assert "WORKER TIMEOUT" not in web.log_text()
    print(f"statuses {dict(load.statuses)}, resent {settled}, {totals}")


# --- (b) Redis stopped or frozen: fast 503s, then recovery ----------------------------------


Call = tuple[str, Callable[[], Reply]]


def requests_of_every_kind(web: GunicornProcess, seats: list[Seat]) -> list[Call]:
    """One request of each kind that needs Redis (reads, moves, creation, probes), named."""
    ann, bo = seats
    match = f"/v1/matches/{ann.match_id}"
    return [
        ("GET match as a seat", lambda: ann.view(timeout=ANSWER)),
        ("GET match", lambda: web.request("GET", match, timeout=ANSWER)),
        ("POST draw", lambda: ann.move("draw", timeout=ANSWER)),
        ("PUT draft, keyed", lambda: ann.move("draft", [["R1"]], key=new_key(), timeout=ANSWER)),
        (
            "POST play, If-Match",
            lambda: ann.move("play", [["R1", "R2", "R3"]], if_match=3, timeout=ANSWER),
        ),
        ("POST pass", lambda: bo.move("pass", timeout=ANSWER)),
        ("POST next-game", lambda: ann.move("next_game", timeout=ANSWER)),
        ("GET events", lambda: web.request("GET", f"{match}/events?after=0", timeout=ANSWER)),
        ("GET hint", lambda: web.request("GET", f"{match}/hint", token=ann.token, timeout=ANSWER)),
        (
            "POST matches",
            lambda: web.request(
                "POST", "/v1/matches", {"players": [{"name": "A"}, {"name": "B"}]}, timeout=ANSWER
            ),
        ),
        ("GET readyz", lambda: web.request("GET", "/readyz", timeout=ANSWER)),
    ]


def fire_together(calls: list[Call]) -> list[tuple[str, Reply | BaseException]]:
    """Run ``calls`` at once, one thread each; return the answers (or errors) in order."""
    answers: list[Reply | BaseException] = [RuntimeError("no answer")] * len(calls)
    barrier = threading.Barrier(len(calls))

    def run(index: int) -> None:
        barrier.wait()
        try:
            answers[index] = calls[index][1]()
        except BaseException as error:
            answers[index] = error

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(2 * ANSWER)
    return [(name, answer) for (name, _), answer in zip(calls, answers, strict=True)]


def one_at_a_time(calls: list[Call]) -> list[tuple[str, Reply | BaseException]]:
    answers: list[tuple[str, Reply | BaseException]] = []
    for name, call in calls:
        try:
            answers.append((name, call()))
        except BaseException as error:
            answers.append((name, error))
    return answers


# reads that may be answered from a worker's copy (a hint reads the match as a view does)
VIEWS = frozenset({"GET match as a seat", "GET match", "GET hint"})


def assert_503s(
    answers: list[tuple[str, Reply | BaseException]], *, copies: frozenset[str] = frozenset()
) -> list[float]:
    """Every call was answered (none waited for Redis past the socket timeout) with a 503
    problem with Retry-After; return the times taken, for the record.
    ``copies``: calls that may be answered from a worker's copy instead (a view or a hint, in
    the half second a copy is trusted after Redis last answered: service/store/tracking.py)."""
    failures = [(name, a) for name, a in answers if isinstance(a, BaseException)]
    assert not failures, failures
    replies = [(name, a) for name, a in answers if isinstance(a, Reply)]
    for name, reply in replies:
        if name in copies and reply.status == 200:
            continue
        assert reply.status == 503, (name, reply)
        assert reply.header("Retry-After", "").isdigit(), (name, reply)
        assert reply.header("Content-Type") == "application/problem+json", (name, reply)
        assert reply.body["type"].endswith(":storage-unavailable"), (name, reply)
    return [reply.elapsed for _, reply in replies]


def assert_a_move_succeeds(seats: list[Seat]) -> None:
    """The seat whose turn it is can share a draft (one tile of their rack)."""
    view = seats[0].view()
    assert view.status == 200, view
    seat = seats[view.body["current_seat"]]
    rack = seat.view().body["rack"]
    reply = seat.move("draft", [*view.body["table"], [rack[0]]], key=new_key())
    assert reply.status == 200, reply


@pytest.fixture
def serving(own_redis, start_gunicorn) -> tuple[RedisProcess, GunicornProcess, list[Seat]]:
    """A Redis, a gunicorn (2 workers) on it, warmed up, and a match between Ann and Bo.

    Each worker has a thread for every request the tests send at once (11), so that no
    request waits for a thread, whichever worker takes it: what is checked is the service's
    own handling of a missing Redis, not on queueing.
    """
    redis_server = own_redis(appendonly=True)
    web = start_gunicorn(redis_server.url, workers=2, threads=12)
    web.wait_workers()
    _, seats = create_match(
        web,
        [{"name": "Ann"}, {"name": "Bo"}],
        setup={"racks": [["R1", "R2", "R3", "K9"], ["B5", "B6"]], "pool": ["O1", "O2"]},
    )
    for _ in range(3):  # every worker has pooled connections to Redis before the fault
        assert all(
            isinstance(a, Reply) and a.status < 500
            for _, a in fire_together([("view", lambda: seats[0].view())] * 8)
        )
    return redis_server, web, seats


@pytest.mark.slow
@pytest.mark.parametrize("fault", ["stopped", "frozen"])
def test_without_redis_every_request_is_a_fast_503_and_service_comes_back(
    serving, fault: str
) -> None:
    redis_server, web, seats = serving
    workers = sorted(web.worker_pids())
    calls = requests_of_every_kind(web, seats)
    if fault == "stopped":
        redis_server.stop()
    else:
        redis_server.pause()
    try:
        # pooled connections go stale; a frozen Redis is silent, so views and hints may be
        # answered from a copy until half a second after Redis last answered
        times = assert_503s(
            fire_together(calls), copies=VIEWS if fault == "frozen" else frozenset()
        )
        times += assert_503s(fire_together(calls))  # new connections fail too
        times += assert_503s(one_at_a_time(calls[:4]))
        assert web.request("GET", "/healthz", timeout=ANSWER).status == 200
    finally:
        if fault == "stopped":
            redis_server.start()
        else:
            redis_server.resume()
    wait_until_serving(web)
    answers = one_at_a_time(calls)
    assert all(isinstance(a, Reply) and a.status < 500 for _, a in answers), answers
    assert_a_move_succeeds(seats)
    assert sorted(web.worker_pids()) == workers, "a worker was restarted"
    assert "WORKER TIMEOUT" not in web.log_text()
    times.sort()
    print(
        f"Redis {fault}: {len(times)} 503s, median {times[len(times) // 2]:.3f} s, "
        f"slowest {times[-1]:.3f} s"
    )


class SlowLongPoll(AssertionError):
    """A long-poll on a frozen Redis was not answered while Redis stayed frozen."""


@pytest.mark.slow
def test_a_long_poll_on_a_frozen_redis_is_answered_while_redis_stays_frozen(serving) -> None:
    redis_server, web, seats = serving
    view = seats[0].view()
    path = f"{seats[0].path()}?wait_version={view.body['version']}&timeout={LONG_POLL}"
    redis_server.pause()
    try:
        try:
            reply = http_request(web.port, "GET", path, timeout=ANSWER)
        except TimeoutError:
            raise SlowLongPoll(
                f"no answer in {ANSWER} s of a frozen Redis (asked to wait {LONG_POLL} s)"
            ) from None
    finally:
        redis_server.resume()
    assert reply.status in (200, 503), reply


@pytest.mark.slow
def test_moves_cut_off_by_a_freeze_are_settled_by_resending_them_with_their_key(
    own_redis, start_gunicorn
) -> None:
    """Freezes under load: whatever a 503 left unknown, resending the move with its
    Idempotency-Key settles it (replayed if it had been applied, else judged now), and the
    log then holds exactly the acknowledged moves, each once.

    (Some of those 503s turn out to have been applied: a commit Redis had run, or was yet
    to read, when it froze. See the next test for why the contract's "nothing was changed"
    cannot be promised for them.)
    """
    redis_server: RedisProcess = own_redis(appendonly=True)
    web = start_gunicorn(redis_server.url, workers=2, threads=8)
    matches = new_matches(web, 8)
    history = History()
    load = MoveLoad(web, matches, history).start()
    settled: Counter[str] = Counter()
    try:
        for _ in range(2):
            wait_for(acked_more(history, len(history.acks) + 5), "the load makes no move")
            refused = load.statuses["503"]
            redis_server.pause()
            # several clients cut off by the freeze, some with their move on its way
            wait_for(lambda: load.statuses["503"] >= refused + 4, "nothing saw Redis frozen")  # noqa: B023
            redis_server.resume()
            wait_for(acked_more(history, len(history.acks)), "no move acknowledged after")
            settled.update(load.settle_unknown())  # while the load goes on
    finally:
        if redis_server.running:
            redis_server.resume()
        load.stop()
    settled.update(load.settle_unknown())
    assert load.statuses["503"] > 0, load.statuses
    # 409: a client found its turn taken by a move of its own resent meanwhile.
    assert set(load.statuses) <= {"200", "409", "503"}, load.statuses
    with redis_server.client() as redis_client:
        totals = check_all(redis_client, matches, history)
    assert "WORKER TIMEOUT" not in web.log_text()
    print(f"statuses {dict(load.statuses)}; resent with their keys: {dict(settled)}; {totals}")


class AppliedAfter503(AssertionError):
    """A move answered 503 ("nothing was changed") was applied all the same."""


@pytest.mark.slow
def test_a_move_answered_503_was_not_applied(serving) -> None:
    """A move answered 503 was not applied, even when only the deadline index fails.

    Here the match's own keys answer but its indexes do not: ZADD is denied to the service's
    Redis user, nothing else. The commit script writes the indexes (the deadline, the listing,
    the expiry: in the match's own shard, on every topology) before the match, so the move
    fails whole (503, nothing applied). A draft keeps the turn's deadline, which its commit does
    not write again: the first index it writes is the match's expiry.
    """
    redis_server, web, _ = serving
    _, (ann, _bo) = create_match(
        web,
        [{"name": "Ann"}, {"name": "Bo"}],
        rules={"turn_seconds": 60},  # each change of the match writes its next deadline
        setup={"racks": [["R1", "R2", "R3", "K9"], ["B5", "B6"]], "pool": ["O1", "O2"]},
    )
    with redis_server.client() as admin:
        admin.execute_command("ACL", "SETUSER", "default", "-zadd")
        key = new_key()
        try:
            before = ann.view().body["version"]
            reply = ann.move("draft", [["R1", "R2", "R3"]], key=key)
            events = admin.xrange(Keys(ann.match_id).events, f"(0-{before}", "+")
        finally:
            admin.execute_command("ACL", "SETUSER", "default", "+zadd")
    if reply.status != 503:
        assert reply.status == 200, reply
        assert events, "answered 200 but the move is not in the log"
        return
    assert reply.header("Retry-After"), reply
    if events:
        again = ann.move("draft", [["R1", "R2", "R3"]], key=key)
        raise AppliedAfter503(
            f"answered {reply!r}, yet the move is in the log ({len(events)} new event); "
            f"resent with its key it is replayed: {again.header('Idempotent-Replayed')}"
        )


# --- (c) a worker killed mid-request --------------------------------------------------------


@pytest.mark.slow
def test_a_worker_killed_mid_request_leaves_no_half_applied_move(own_redis, start_gunicorn) -> None:
    redis_server: RedisProcess = own_redis()
    web = start_gunicorn(redis_server.url, workers=3, threads=4)
    web.wait_workers()
    matches = new_matches(web, 6)
    history = History()
    rng = random.Random(5)
    load = MoveLoad(web, matches, history).start()
    killed = []
    try:
        # Kill until at least 4 workers died and 2 moves were cut off (at most 12 kills),
        # each once the load goes on (moves acknowledged since the last kill).
        while len(killed) < 12 and (len(killed) < 4 or len(load.unknown) < 2):
            web.wait_workers(3 + len(killed))  # the master started a new one for each
            wait_for(acked_more(history, len(history.acks) + 5), "the load makes no move")
            victim = rng.choice(web.worker_pids())
            web.kill_worker(victim)
            killed.append(victim)
        web.wait_workers(3 + len(killed))
        wait_for(acked_more(history, len(history.acks)), "no move acknowledged after")
    finally:
        load.stop()
    cut = sum(n for outcome, n in load.statuses.items() if not outcome.isdigit())
    assert cut > 0, f"no request was in flight when a worker died: {load.statuses}"
    assert all(o == "200" or not o.isdigit() for o in load.statuses), load.statuses
    settled = load.settle_unknown()
    assert sum(settled.values()) > 0, f"no move was cut off by a kill: {load.statuses}"
    with redis_server.client() as redis_client:
        totals = check_all(redis_client, matches, history)
    assert len(web.worker_pids()) == 3
    assert web.request("GET", "/readyz").status == 200
    print(f"killed {killed}; statuses {dict(load.statuses)}; resent {settled}; {totals}")
