"""What the fault and soak tests check: a stored match is whole, and its history is the moves
that were acknowledged, each once.

Read straight from Redis (not through the service under test):

- :func:`check_stored_match`: the event stream is one gap-free chain 1..N (entry ``0-n`` holds
  the event of version ``n``), the state's version is N, racks + pool + table are the tiles that
  were dealt, no tile of a draft comes from nowhere.
- :class:`History`: every move a client saw acknowledged (a 2xx), with the version its answer
  carried; :meth:`History.check` matches them against the event log (see its docstring).

Also a tiny HTTP driver for a real gunicorn (:class:`Seat`), shared by the tests under
tests/faults and tests/soak.
"""

from __future__ import annotations

import http.client
import json
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from service.game import from_dict
from service.game.codec import to_dict_format_1
from service.rules import TileSet, full_set, parse_tiles
from service.store import Keys, archive
from tests.game.support import all_tiles
from tests.support.gunicorn_process import GunicornProcess, Reply, StagedRequest

__all__ = [
    "AUTOMATIC_AFTER_MOVE",
    "EVENT_OF_MOVE",
    "Ack",
    "History",
    "MoveLoad",
    "Seat",
    "Sent",
    "check_stored_match",
    "create_match",
    "dealt_tiles",
    "new_key",
    "stored_events",
    "stored_state",
]

# The event a move's request produces, and the events that may follow it in the same commit.
EVENT_OF_MOVE = {
    "play": "played",
    "draw": "drew",
    "pass": "passed",
    "draft": "draft_updated",
    "next_game": "game_started",
}
AUTOMATIC_AFTER_MOVE = frozenset({"game_over", "match_finished"})
MOVE_EVENTS = frozenset({"played", "drew", "passed", "draft_updated"})


def stored_state(redis_client: Any, match_id: str) -> tuple[int, dict[str, Any]]:
    """The stored version and match state (the ``m`` part: racks, pool, table...), in the
    plain names of format 1 whatever format it is stored in."""
    version, state = redis_client.hmget(Keys(match_id).state, "v", "s")
    assert version is not None and state is not None, f"match {match_id} is not stored"
    return int(version), to_dict_format_1(from_dict(json.loads(state)["m"]))


def stored_events(redis_client: Any, match_id: str) -> list[dict[str, Any]]:
    """Every event of the stored log: those packed into the state hash, then those of the
    stream, checking that entry ``0-n`` holds version ``n``."""
    packed = redis_client.hget(Keys(match_id).state, "a")
    events = [json.loads(line) for line in archive.unpack(packed or "")]
    for entry_id, fields in redis_client.xrange(Keys(match_id).events, "-", "+"):
        event = json.loads(fields["e"])
        assert entry_id == f"0-{event['version']}", (entry_id, event)
        events.append(event)
    return events


def dealt_tiles(
    racks: Iterable[Iterable[str]], pool: Iterable[str], table: Iterable[Iterable[str]] = ()
) -> Counter[Any]:
    """The tiles of a set-up deal (racks + pool + table)."""
    tiles: Counter[Any] = Counter()
    for group in (*racks, pool, *table):
        tiles.update(parse_tiles(list(group)))
    return tiles


def _tiles_in(state: dict[str, Any]) -> Counter[Any]:
    return all_tiles(from_dict(state))


def check_stored_match(
    redis_client: Any, match_id: str, dealt: Counter[Any] | None = None
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Assert the stored match is whole; return its state and events.

    ``dealt``: the tiles of game 1 (a set-up deal); later games, and matches created
    without a set-up, hold the whole box.
    """
    version, state = stored_state(redis_client, match_id)
    events = stored_events(redis_client, match_id)
    versions = [event["version"] for event in events]
    if versions != list(range(1, len(events) + 1)):
        missing = sorted(set(range(1, max(versions, default=0) + 1)) - set(versions))
        repeated = len(versions) - len(set(versions))
        raise AssertionError(
            f"{match_id}: the event versions are not 1..N: missing {missing}, "
            f"{repeated} repeated, in order: {versions == sorted(versions)}"
        )
    assert version == len(events) == state["version"], (
        f"{match_id}: state version {version} (in state {state['version']}), {len(events)} events"
    )
    box = full_set(TileSet(state["rules"]["tile_set"]))
    expected = dealt if dealt is not None and state["game_number"] == 1 else box
    held = _tiles_in(state)
    assert held == expected, (
        f"{match_id}: tiles not conserved: extra {dict(held - expected)}, "
        f"missing {dict(expected - held)}"
    )
    if state["draft"] is not None and state["status"] == "playing":
        draft = Counter(t for s in state["draft"] for t in parse_tiles(s))
        table = Counter(t for s in state["table"] for t in parse_tiles(s))
        rack = Counter(parse_tiles(state["players"][state["current_seat"]]["rack"]))
        assert not table - draft, f"{match_id}: the draft lost table tiles"
        assert not (draft - table) - rack, f"{match_id}: the draft holds tiles from nowhere"
    return state, events


# --- the history of acknowledged moves -----------------------------------------------------


@dataclass(frozen=True)
class Ack:
    """A move a client saw answered 2xx: who, what, and the version the answer carried."""

    match_id: str
    seat: int
    move: str  # a key of EVENT_OF_MOVE
    version: int  # the answer's ETag: the version after the move (and what followed it)
    if_match: int | None = None
    key: str | None = None  # the Idempotency-Key it carried
    replayed: bool = False  # the answer had Idempotent-Replayed: true
    body: Any = field(default=None, compare=False, repr=False)


class History:
    """A thread-safe log of acknowledged moves, and the checker that holds them to the log."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.acks: list[Ack] = []

    def record(self, ack: Ack) -> None:
        with self._lock:
            self.acks.append(ack)

    def of(self, match_id: str) -> list[Ack]:
        with self._lock:
            return [ack for ack in self.acks if ack.match_id == match_id]

    def check(
        self,
        match_id: str,
        events: list[dict[str, Any]],
        *,
        bots: frozenset[int] = frozenset(),
        created_version: int,
        exhaustive: bool = True,
        unknown: Iterable[tuple[int, str]] = (),
    ) -> dict[str, int]:
        """Hold the acknowledged moves of ``match_id`` to its event log; return counts.

        - every acknowledged move is in the log exactly once: walking back from the
          version its answer carried, past the events that may follow a move in the
          same commit (game_over, match_finished, bot turns), the first event is that
          move (its type and seat); two acknowledgements never claim one event;
        - a move sent with ``If-Match: v`` produced version ``v + 1``;
        - a replayed answer (same Idempotency-Key) carries the version of the first
          answer, and claims no event of its own;
        - with ``exhaustive``, nothing unacknowledged is in the log: every ``played``,
          ``drew``, ``passed``, ``draft_updated`` by a human seat, and every
          ``game_started`` after the match's creation, is claimed by one acknowledged
          move, except the ``drew``/``passed`` that settle a timed-out turn; ``unknown``
          lists ``(seat, move)`` sent without a key whose outcome the client could not know
          (a 503): each may account for one event of its kind by its seat, no more.
        """
        acks = self.of(match_id)
        by_version = {event["version"]: event for event in events}
        claimed: dict[int, Ack] = {}
        first_answer: dict[tuple[int, str], Ack] = {}
        for ack in acks:
            if ack.replayed:
                continue
            version = self._locate(ack, by_version, bots)
            assert version not in claimed, (
                f"{match_id}: two acknowledged moves claim event {version}: "
                f"{claimed[version]} and {ack}"
            )
            claimed[version] = ack
            if ack.if_match is not None:
                assert version == ack.if_match + 1, (
                    f"{match_id}: {ack} was sent with If-Match {ack.if_match} "
                    f"but produced version {version}"
                )
            if ack.key is not None:
                assert (ack.seat, ack.key) not in first_answer, (
                    f"{match_id}: Idempotency-Key {ack.key} acted twice: "
                    f"{first_answer[(ack.seat, ack.key)]} and {ack}"
                )
                first_answer[(ack.seat, ack.key)] = ack
        replays = 0
        for ack in acks:
            if not ack.replayed:
                continue
            replays += 1
            original = first_answer.get((ack.seat, ack.key or ""))
            assert original is not None, f"{match_id}: replay {ack} of an answer never given"
            assert ack.version == original.version, (
                f"{match_id}: replay {ack} carries another version than {original}"
            )
            if original.body is not None and ack.body is not None:
                assert ack.body == original.body, f"{match_id}: replay {ack} changed the answer"
        if exhaustive:
            maybe = Counter((seat, EVENT_OF_MOVE[move]) for seat, move in unknown)
            for event in events:
                if not self._needs_ack(event, by_version, bots, created_version):
                    continue
                if event["version"] not in claimed and maybe[(event["seat"], event["type"])] > 0:
                    maybe[(event["seat"], event["type"])] -= 1  # an unknown outcome: applied
                    continue
                assert event["version"] in claimed, (
                    f"{match_id}: event {event['version']} ({event['type']} by seat "
                    f"{event['seat']}) was never acknowledged to any client"
                )
        return {"acknowledged": len(claimed), "replayed": replays, "events": len(events)}

    @staticmethod
    def _automatic(event: dict[str, Any], bots: frozenset[int]) -> bool:
        """An event that may follow a move in the same commit."""
        if event["type"] in AUTOMATIC_AFTER_MOVE:
            return True
        return event["seat"] in bots and event["type"] in MOVE_EVENTS

    def _locate(self, ack: Ack, by_version: dict[int, dict[str, Any]], bots: frozenset[int]) -> int:
        version = ack.version
        while version in by_version and self._automatic(by_version[version], bots):
            version -= 1
        event = by_version.get(version)
        wanted = EVENT_OF_MOVE[ack.move]
        assert event is not None, f"{ack.match_id}: acknowledged {ack} is not in the log"
        assert event["type"] == wanted, (
            f"{ack.match_id}: acknowledged {ack} should be a {wanted} event at version "
            f"{version}, the log has {event}"
        )
        if ack.move != "next_game":
            assert event["seat"] == ack.seat, (
                f"{ack.match_id}: acknowledged {ack} is by seat {ack.seat}, the log has {event}"
            )
        previous = by_version.get(version - 1)
        assert not (
            wanted == "drew"
            and previous is not None
            and previous["type"] == "turn_timed_out"
            and previous["seat"] == ack.seat
        ), f"{ack.match_id}: acknowledged {ack} matches a timeout's draw, not a move"
        assert not (wanted == "passed" and event["data"].get("timed_out")), (
            f"{ack.match_id}: acknowledged {ack} matches a timed-out pass"
        )
        return version

    @staticmethod
    def _needs_ack(
        event: dict[str, Any],
        by_version: dict[int, dict[str, Any]],
        bots: frozenset[int],
        created_version: int,
    ) -> bool:
        if event["type"] == "game_started":
            return event["version"] > created_version
        if event["type"] not in MOVE_EVENTS or event["seat"] in bots:
            return False
        if event["type"] == "passed" and event["data"].get("timed_out"):
            return False
        previous = by_version.get(event["version"] - 1)
        return not (
            event["type"] == "drew"
            and previous is not None
            and previous["type"] == "turn_timed_out"
            and previous["seat"] == event["seat"]
        )


# --- driving a real gunicorn -----------------------------------------------------------------


def create_match(
    web: GunicornProcess,
    players: list[dict[str, Any]],
    *,
    rules: dict[str, Any] | None = None,
    **extra: Any,
) -> tuple[dict[str, Any], list[Seat]]:
    """Create a match over HTTP; return the 201 body and a :class:`Seat` per player."""
    body = {"players": players, "rules": {"turn_seconds": 0, **(rules or {})}, **extra}
    reply = web.request("POST", "/v1/matches", body)
    assert reply.status == 201, reply.body
    created = reply.body
    seats = [Seat(web, created["id"], s["seat"], s["token"]) for s in created["seats"]]
    return created, seats


class Seat:
    """One seat of a match on a real gunicorn; every call is one request, never retried."""

    def __init__(self, web: GunicornProcess, match_id: str, seat: int, token: str) -> None:
        self.web, self.match_id, self.seat, self.token = web, match_id, seat, token

    def path(self, action: str = "") -> str:
        return f"/v1/matches/{self.match_id}" + (f"/{action}" if action else "")

    def view(self, *, timeout: float = 30.0) -> Reply:
        return self.web.request("GET", self.path(), token=self.token, timeout=timeout)

    def request_for(
        self,
        move: str,
        table: list[list[str]] | None = None,
        *,
        if_match: int | None = None,
        key: str | None = None,
    ) -> tuple[str, str, Any, dict[str, str]]:
        """The method, path, JSON body and headers of ``move`` with the guards given."""
        headers: dict[str, str] = {}
        if if_match is not None:
            headers["If-Match"] = f'"{if_match}"'
        if key is not None:
            headers["Idempotency-Key"] = key
        method, action = {
            "play": ("POST", "play"),
            "draw": ("POST", "draw"),
            "pass": ("POST", "pass"),
            "draft": ("PUT", "draft"),
            "next_game": ("POST", "next-game"),
        }[move]
        body = {"table": table} if move in ("play", "draft") else None
        return method, self.path(action), body, headers

    def move(
        self,
        move: str,
        table: list[list[str]] | None = None,
        *,
        if_match: int | None = None,
        key: str | None = None,
        timeout: float = 30.0,
    ) -> Reply:
        """Send ``move`` (play, draw, pass, draft, next_game) with the guards given."""
        method, path, body, headers = self.request_for(move, table, if_match=if_match, key=key)
        return self.web.request(
            method, path, body, token=self.token, headers=headers, timeout=timeout
        )

    def staged(
        self,
        move: str,
        table: list[list[str]] | None = None,
        *,
        if_match: int | None = None,
        key: str | None = None,
    ) -> StagedRequest:
        """``move`` as a :class:`StagedRequest`, to release together with others."""
        method, path, body, headers = self.request_for(move, table, if_match=if_match, key=key)
        return StagedRequest(self.web.port, method, path, body, token=self.token, headers=headers)

    def ack(self, move: str, reply: Reply, *, if_match: int | None, key: str | None) -> Ack:
        """The :class:`Ack` of a 2xx ``reply`` to ``move``."""
        etag = (reply.header("ETag") or "").strip('"')
        return Ack(
            self.match_id,
            self.seat,
            move,
            int(etag),
            if_match=if_match,
            key=key,
            replayed=reply.header("Idempotent-Replayed") == "true",
            body=reply.body,
        )


def new_key() -> str:
    return uuid.uuid4().hex


# --- a load of keyed moves, and settling what faults left unknown ----------------------------


@dataclass
class Sent:
    """A move whose outcome the client could not know (a 5xx or no answer): resent later."""

    seat: Seat
    move: str
    table: list[list[str]] | None
    key: str | None  # None: sent without a key, so it cannot be resent safely
    answer: str  # "503", or the exception's name


class MoveLoad:
    """Client threads, one per match, making keyed moves (drafts and draws) as fast as they
    can, logging 2xx answers in ``history`` and moves of unknown outcome in ``unknown``.

    Every move carries an ``Idempotency-Key``, so that after a fault each unknown move can be
    resent with its key (:meth:`settle_unknown`): it is then either replayed (it had been
    applied), applied now, or refused, and never applied twice.
    """

    def __init__(
        self,
        web: GunicornProcess,
        matches: list[list[Seat]],
        history: History,
        *,
        keyed: Callable[[int], bool] = lambda number: True,
    ):
        self.web, self.matches, self.history = web, matches, history
        self.keyed = keyed  # which clients (by match number) send an Idempotency-Key
        self.unknown: list[Sent] = []
        self.unkeyed_unknown: list[Sent] = []  # kept apart: never resent
        self.without_retry_after = 0  # 503 answers that did not say when to retry
        self.crashes: list[str] = []
        self.statuses: Counter[str] = Counter()
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []

    def start(self) -> MoveLoad:
        for number, seats in enumerate(self.matches):
            thread = threading.Thread(target=self._drive, args=(number, seats), daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def stop(self, timeout: float = 60.0) -> None:
        """Stop the clients; fail if one is stuck or crashed."""
        self.stopping.set()
        for thread in self._threads:
            thread.join(timeout)
            assert not thread.is_alive(), "a client thread is stuck"
        assert not self.crashes, self.crashes

    def _drive(self, number: int, seats: list[Seat]) -> None:
        try:
            self._play(number, seats)
        except Exception as error:  # noted, so that a dead client cannot go unseen
            with self._lock:
                self.crashes.append(f"client of {seats[0].match_id}: {error!r}")

    def _count(self, outcome: str) -> None:
        with self._lock:
            self.statuses[outcome] += 1

    def _play(self, number: int, seats: list[Seat]) -> None:
        turn: int | None = None
        rack: list[str] = []
        pool = 1
        step = 0
        while not self.stopping.is_set():
            step += 1
            if turn is None:
                try:  # whose turn, then that seat's rack
                    reply = seats[0].view(timeout=30)
                    self._count(str(reply.status))
                    if reply.status == 200 and reply.body["status"] != "playing":
                        return
                    if reply.status == 200:
                        turn, pool = reply.body["current_seat"], reply.body["pool_count"]
                        reply = seats[turn].view(timeout=30)
                        self._count(str(reply.status))
                except (OSError, http.client.HTTPException) as error:
                    self._count(type(error).__name__)
                    reply = None
                if reply is None or reply.status != 200:
                    turn = None
                    self.stopping.wait(0.02)
                    continue
                rack = reply.body["rack"]
            seat = seats[turn]
            if pool and (step + number) % 3 == 0:
                move, table = "draw", None
            else:
                move, table = "draft", [[rack[step % len(rack)]]]
            key = new_key() if self.keyed(number) else None
            try:
                reply = seat.move(move, table, key=key, timeout=30)
            except (OSError, http.client.HTTPException) as error:
                self._count(type(error).__name__)
                self._unknown(Sent(seat, move, table, key, type(error).__name__))
                turn = None
                continue
            self._count(str(reply.status))
            if reply.status == 503 and not (reply.header("Retry-After") or "").isdigit():
                with self._lock:
                    self.without_retry_after += 1
            if 200 <= reply.status < 300:
                self.history.record(seat.ack(move, reply, if_match=None, key=key))
                view = reply.body["match"]
                if view["status"] != "playing":
                    return
                turn, pool = view["current_seat"], view["pool_count"]
                if turn != seat.seat:
                    turn = None  # read the next seat's rack
            else:
                if reply.status >= 500:
                    self._unknown(Sent(seat, move, table, key, str(reply.status)))
                    self.stopping.wait(0.05)
                turn = None

    def _unknown(self, sent: Sent) -> None:
        with self._lock:
            (self.unknown if sent.key is not None else self.unkeyed_unknown).append(sent)

    def settle_unknown(self) -> dict[str, int]:
        """Resend every move of unknown outcome with its key; record those that acted.

        Returns how many had been applied before (``replayed``; for a move answered 503,
        that contradicts "503: nothing was changed"), were applied now, or were refused.
        May run while the load goes on (each match's client thread then races the resend).
        """
        outcome: Counter[str] = Counter()
        with self._lock:
            pending, self.unknown = self.unknown, []
        for sent in pending:
            reply = self._resend(sent, outcome)
            assert reply.status < 500, f"resending {sent} once the store is back: {reply}"
            if 200 <= reply.status < 300:
                ack = sent.seat.ack(sent.move, reply, if_match=None, key=sent.key)
                outcome["replayed" if ack.replayed else "applied_now"] += 1
                if ack.replayed and sent.answer == "503":
                    outcome["applied_after_503"] += 1
                # The first answer to this key was lost: the replay stands for it.
                self.history.record(replace(ack, replayed=False))
            else:
                outcome[f"refused_{reply.status}"] += 1
        return dict(outcome)

    def _resend(self, sent: Sent, outcome: Counter[str], *, patience: float = 30.0) -> Reply:
        """Resend ``sent`` with its key as a client should: on a 503, again after the
        ``Retry-After`` it gives, for up to ``patience`` seconds.

        (A worker whose last call to Redis failed just before Redis came back answers 503
        for up to ``REDIS_SOCKET_TIMEOUT`` more, shorter than the ``Retry-After`` it sends.)
        """
        give_up = time.monotonic() + patience
        while True:
            reply = sent.seat.move(sent.move, sent.table, key=sent.key, timeout=30)
            wait = reply.header("Retry-After", "")
            if reply.status != 503 or not wait.isdigit() or time.monotonic() > give_up:
                return reply
            outcome["waited_retry_after"] += 1
            time.sleep(int(wait))
