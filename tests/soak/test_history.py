"""A soak: eight matches played at once over HTTP against a real gunicorn, by scripted
clients that make legal moves (the hint endpoint), illegal ones, moves out of turn, drafts,
retries with the same Idempotency-Key (one after the other, and two at once), moves guarded by
If-Match, long polls, and turns left to time out. Every 2xx answer is logged with the version
it carried; afterwards each match's history is checked against its event log:

- the events are one gap-free chain 1..N, and the stored state is at version N, with every
  tile dealt still in racks + pool + table;
- every acknowledged move is in the log exactly once (type, seat, place), a move guarded by
  ``If-Match: v`` produced version v + 1, and a retried key never produced a second event;
- nothing unacknowledged is in the log: every play, draw, pass, draft and next game by a
  human seat was acknowledged to a client, except the draws and passes of timed-out turns;
- no answer was a 5xx (nor any status outside the contract's refusals).
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.faults.consistency import (
    History,
    Seat,
    check_stored_match,
    create_match,
    dealt_tiles,
    new_key,
    stored_events,
)
from tests.support.contract import validate_events
from tests.support.gunicorn_process import GunicornProcess, Reply

DRIVE_SECONDS = 20.0  # how long the clients play
MAX_REQUESTS = 300  # per client
TURN_SECONDS = 2  # for the timed matches
REFUSALS = {409, 412, 422}

SMALL = {  # a set-up that ends game 1 in a few turns (no initial meld threshold)
    "racks": [["R1", "R2", "R3", "R4", "K5", "K6"], ["B7", "B8", "B9", "O10", "O11", "O12"]],
    "pool": ["K1", "K2", "K3", "O1", "O2", "O3", "J"],
    "first_seat": 0,
}


@dataclass
class MatchPlan:
    """One match of the soak: how it is created and who plays it."""

    players: list[dict[str, Any]]
    rules: dict[str, Any]
    extra: dict[str, Any]
    seats: list[Seat] = field(default_factory=list)
    match_id: str = ""
    created_version: int = 0

    @property
    def bots(self) -> frozenset[int]:
        return frozenset(i for i, p in enumerate(self.players) if p.get("bot"))

    @property
    def timed(self) -> bool:
        return bool(self.rules.get("turn_seconds"))


def plans() -> list[MatchPlan]:
    two = [{"name": "Ann"}, {"name": "Bo"}]
    with_bot = [{"name": "Ann"}, {"name": "Bo"}, {"name": "Bot", "bot": True}]
    return [
        *(MatchPlan(two, {"rounds": 1}, {"seed": 100 + i}) for i in range(3)),
        MatchPlan(two, {"initial_meld_points": 0}, {"setup": SMALL}),
        *(MatchPlan(with_bot, {}, {"seed": 200 + i}) for i in range(2)),
        MatchPlan(two, {"turn_seconds": TURN_SECONDS}, {"seed": 300}),
        MatchPlan(two, {"turn_seconds": TURN_SECONDS, "initial_meld_points": 0}, {"setup": SMALL}),
    ]


class Tally:
    """What the clients saw, shared by every client thread."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.counts: Counter[str] = Counter()
        self.unexpected: list[str] = []

    def count(self, what: str, n: int = 1) -> None:
        with self.lock:
            self.counts[what] += n

    def wrong(self, text: str) -> None:
        with self.lock:
            self.unexpected.append(text)


class Client:
    """A scripted player for one seat: reads, decides, acts, and logs what was acknowledged."""

    def __init__(
        self,
        plan: MatchPlan,
        seat: Seat,
        history: History,
        tally: Tally,
        rng: random.Random,
        until: float,
    ) -> None:
        self.plan, self.seat, self.history, self.tally = plan, seat, history, tally
        self.rng, self.until = rng, until
        self.requests = 0
        self.dawdles = 1 if plan.timed else 0

    # --- sending ------------------------------------------------------------------------------

    def send(
        self, move: str, table: list[list[str]] | None, version: int, *, allowed: set[int]
    ) -> Reply | None:
        """Send ``move`` with random guards; log a 2xx; maybe retry with the same key."""
        if_match = version if self.rng.random() < 0.3 else None
        key = new_key() if self.rng.random() < 0.45 else None
        if key is not None and self.rng.random() < 0.12:
            return self.send_twice_at_once(move, table, if_match, key, allowed)
        reply = self.act(move, table, if_match, key, allowed)
        if reply is not None and key is not None and self.rng.random() < 0.5:
            again = self.act(move, table, if_match, key, allowed)
            if again is not None:
                self.check_retry(reply, again)
        return reply

    def act(
        self,
        move: str,
        table: list[list[str]] | None,
        if_match: int | None,
        key: str | None,
        allowed: set[int],
    ) -> Reply | None:
        self.requests += 1
        try:
            reply = self.seat.move(move, table, if_match=if_match, key=key)
        except OSError as error:
            self.tally.wrong(f"{move}: no answer ({error!r})")
            return None
        self.tally.count(f"{move} {reply.status}")
        if 200 <= reply.status < 300:
            ack = self.seat.ack(move, reply, if_match=if_match, key=key)
            self.history.record(ack)
            if ack.replayed:
                self.tally.count("replayed")
            if if_match is not None:
                self.tally.count("if_match acknowledged")
        elif reply.status not in allowed | REFUSALS:
            self.tally.wrong(f"{move} {table} if_match={if_match} key={key}: {reply!r}")
        return reply

    def check_retry(self, first: Reply, again: Reply) -> None:
        """A retry with the same key: a recorded success is replayed, byte for byte."""
        if 200 <= first.status < 300:
            if not (
                again.status == first.status
                and again.header("Idempotent-Replayed") == "true"
                and again.header("ETag") == first.header("ETag")
                and again.body == first.body
            ):
                self.tally.wrong(f"retry of {first!r} answered {again!r}")
        elif again.header("Idempotent-Replayed") == "true":
            self.tally.wrong(f"a refused move was replayed: {first!r} then {again!r}")

    def send_twice_at_once(
        self,
        move: str,
        table: list[list[str]] | None,
        if_match: int | None,
        key: str,
        allowed: set[int],
    ) -> Reply | None:
        """The same keyed request twice at the same moment: it acts at most once."""
        answers: list[Reply | None] = [None, None]
        barrier = threading.Barrier(2)

        def run(index: int) -> None:
            barrier.wait()
            answers[index] = self.act(move, table, if_match, key, allowed)

        threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        first, second = answers
        self.tally.count("sent twice at once")
        if first is None or second is None:
            return first or second
        successes = [a for a in answers if a is not None and 200 <= a.status < 300]
        if successes:
            fresh = [a for a in successes if a.header("Idempotent-Replayed") != "true"]
            etags = {a.header("ETag") for a in successes}
            if len(fresh) != 1 or len(etags) != 1:
                self.tally.wrong(f"one key sent twice at once acted {len(fresh)} times: {answers}")
        return first

    # --- deciding -----------------------------------------------------------------------------

    def run(self) -> None:
        try:
            while time.monotonic() < self.until and self.requests < MAX_REQUESTS:
                if not self.step():
                    return
        except Exception as error:  # report, do not hang the test
            self.tally.wrong(f"client {self.seat.seat} of {self.plan.match_id} crashed: {error!r}")

    def step(self) -> bool:
        """One read and (maybe) one move; False once the match is finished."""
        self.requests += 1
        reply = self.seat.view()
        if reply.status != 200:
            self.tally.wrong(f"view: {reply!r}")
            return False
        view = reply.body
        version, me = view["version"], self.seat.seat
        if view["status"] == "finished":
            return False
        if view["status"] == "game_over":
            if self.rng.random() < 0.5:
                self.send("next_game", None, version, allowed=set())
            else:
                time.sleep(0.02)
            return True
        if view["current_seat"] != me:
            self.while_waiting(view)
            return True
        if self.dawdles and self.rng.random() < 0.05:
            self.dawdles -= 1
            self.tally.count("dawdled")
            time.sleep(TURN_SECONDS + 0.3)  # the next read settles the timeout
            return True
        self.my_turn(view)
        return True

    def while_waiting(self, view: dict[str, Any]) -> None:
        roll = self.rng.random()
        version = view["version"]
        if roll < 0.1:
            # Out of turn: refused (409; 412 with a stale If-Match), unless the turn came
            # round meanwhile, and then it is a move like any other.
            move = self.rng.choice(["draw", "pass", "play"])
            table = [*view["table"], ["R1", "R2", "R3"]] if move == "play" else None
            self.send(move, table, version, allowed=set())
        elif roll < 0.35:
            self.requests += 1
            reply = self.seat.web.request(
                "GET", f"{self.seat.path()}?wait_version={version}&timeout=0.5"
            )
            self.tally.count(f"long poll {reply.status}")
            if reply.status not in (200, 304):
                self.tally.wrong(f"long poll: {reply!r}")
        else:
            time.sleep(self.rng.uniform(0.005, 0.03))

    def my_turn(self, view: dict[str, Any]) -> None:
        version, rack, table = view["version"], view["rack"], view["table"]
        roll = self.rng.random()
        if roll < 0.12 and rack:
            junk = self.rng.sample(rack, k=min(len(rack), self.rng.randint(1, 4)))
            self.send("play", [*table, junk], version, allowed=set())
        elif roll < 0.25 and rack:
            extra = self.rng.sample(rack, k=min(len(rack), self.rng.randint(1, 2)))
            self.send("draft", [*table, extra], version, allowed=set())
        else:
            self.requests += 1
            hint = self.seat.web.request("GET", f"{self.seat.path()}/hint", token=self.seat.token)
            if hint.status != 200:
                self.tally.count(f"hint {hint.status}")
                if hint.status not in REFUSALS:
                    self.tally.wrong(f"hint: {hint!r}")
                return
            if hint.body["table"] is not None:
                self.send("play", hint.body["table"], version, allowed=set())
            elif view["pool_count"]:
                self.send("draw", None, version, allowed=set())
            else:
                self.send("pass", None, version, allowed=set())


def create(web: GunicornProcess, plan: MatchPlan) -> None:
    created, seats = create_match(web, plan.players, rules=plan.rules, **plan.extra)
    plan.seats, plan.match_id = seats, created["id"]
    plan.created_version = created["match"]["version"]


def http_events(web: GunicornProcess, match_id: str) -> list[dict[str, Any]]:
    """The whole public event log, page by page."""
    events: list[dict[str, Any]] = []
    while True:
        reply = web.request("GET", f"/v1/matches/{match_id}/events?after={len(events)}&limit=50")
        assert reply.status == 200, reply
        validate_events(reply.body)  # each event against its schema in openapi.yaml
        page = reply.body["events"]
        if not page:
            return events
        events += page


@pytest.mark.slow
def test_concurrent_matches_keep_exactly_the_acknowledged_history(
    redis_server, redis_url, shared_gunicorn
) -> None:
    web = shared_gunicorn(redis_url, workers=3, threads=6)
    history, tally = History(), Tally()
    matches = plans()
    for plan in matches:
        create(web, plan)
    until = time.monotonic() + DRIVE_SECONDS
    clients = [
        Client(plan, seat, history, tally, random.Random(f"{number}:{seat.seat}"), until)
        for number, plan in enumerate(matches)
        for seat in plan.seats
        if seat.seat not in plan.bots
    ]
    threads = [threading.Thread(target=client.run, daemon=True) for client in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(DRIVE_SECONDS + 60)
        assert not thread.is_alive(), "a client is stuck"

    assert not tally.unexpected, tally.unexpected[:10]
    summary: Counter[str] = Counter()
    with redis_server.client() as redis_client:
        for plan in matches:
            # Settle whatever time owes the match, so the log is final, then compare.
            assert web.request("GET", f"/v1/matches/{plan.match_id}").status == 200
            dealt = None
            if "setup" in plan.extra:
                dealt = dealt_tiles(SMALL["racks"], SMALL["pool"])
            state, events = check_stored_match(redis_client, plan.match_id, dealt)
            assert (
                http_events(web, plan.match_id)
                == events
                == stored_events(redis_client, plan.match_id)
            )
            counts = history.check(
                plan.match_id, events, bots=plan.bots, created_version=plan.created_version
            )
            summary.update(counts)
            summary.update(e["type"] for e in events)
            summary["games"] += state["game_number"]
    summary.update(tally.counts)
    print(dict(sorted(summary.items())))
    assert "WORKER TIMEOUT" not in web.log_text()
    # The soak did what it is for (else a pass would prove little).
    assert summary["acknowledged"] >= 150, summary
    assert summary["replayed"] >= 5 and summary["sent twice at once"] >= 2, summary
    assert summary["if_match acknowledged"] >= 5, summary
    assert summary["turn_timed_out"] >= 1 and summary["game_over"] >= 1, summary
    refusals = sum(
        n for what, n in tally.counts.items() if what.split()[-1] in {"409", "412", "422"}
    )
    assert refusals >= 20, summary
    assert any(what.endswith(" 412") for what in tally.counts), summary
    assert any(what.endswith(" 422") for what in tally.counts), summary
