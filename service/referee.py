"""The service layer: each use case reads "load, act, commit".

A :class:`Referee` loads a match from the store, settles what time (and bots) owe
it, applies one transition from :mod:`service.game`, and commits the new state with
its events in one version-checked step. A commit that loses a race is retried on
the fresh state (a bounded number of times), so no update is ever lost and a move
that has become illegal meanwhile is refused instead of applied twice.

Seat tokens are ``<match id>.<secret>``; only their SHA-256 is stored, and they are
compared in constant time.
"""

from __future__ import annotations

import hashlib
import hmac
import random
import secrets
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from service import game
from service.game import Match, PlayerSpec, Setup, Status, Transition
from service.rules import Rules, Tile
from service.rules.solver import Solution, solve
from service.store.matches import MatchStore, VersionConflict
from service.threads import cpu_bound

__all__ = [
    "Action",
    "BadToken",
    "Busy",
    "HintsOff",
    "Created",
    "IdempotencyMismatch",
    "MatchNotFound",
    "Moved",
    "Referee",
    "RefereeError",
    "StaleVersion",
    "TokenForAnotherMatch",
]

MAX_ATTEMPTS = 12
Action = Callable[[Match, int, float], Transition]


class RefereeError(Exception):
    """Base of the service layer's refusals (the game's own are ``game.GameError``)."""


class MatchNotFound(RefereeError, LookupError):
    """No match with that id (or it has expired)."""


class BadToken(RefereeError, PermissionError):
    """The seat token is missing or unknown."""


class TokenForAnotherMatch(RefereeError, PermissionError):
    """The token is valid, but for another match."""


class StaleVersion(RefereeError):
    """``If-Match`` names a version that is not the current one."""

    def __init__(self, current: int) -> None:
        super().__init__(f"the match is at version {current}")
        self.current = current


class IdempotencyMismatch(RefereeError, ValueError):
    """An ``Idempotency-Key`` reused for a different request."""


class HintsOff(RefereeError):
    """The match was created with hints turned off."""


class Busy(RefereeError):
    """The match kept changing under us; nothing was applied (retry)."""


@dataclass(frozen=True)
class Created:
    """A new match and the seats' tokens (shown once)."""

    match: Match
    tokens: tuple[str, ...]
    now: float


@dataclass(frozen=True)
class Moved:
    """The answer to a move: the match after it, the caller's drawn tiles, or a replay."""

    match: Match
    now: float
    seat: int
    drawn: tuple[Tile, ...] = ()
    replay: dict[str, Any] | None = None


@dataclass(frozen=True)
class Idempotency:
    """An ``Idempotency-Key`` and the fingerprint of the request that carried it."""

    key: str
    fingerprint: str


class DecodedCache:
    """The last decoded state of recent matches, per worker: a version never changes, so a
    match whose stored version is the cached one need not be sent or decoded again."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._entries: OrderedDict[str, tuple[Match, list[str]]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, match_id: str) -> tuple[Match, list[str]] | None:
        """The cached match and token hashes, or ``None``."""
        with self._lock:
            entry = self._entries.get(match_id)
            if entry is not None:
                self._entries.move_to_end(match_id)
            return entry

    def put(self, match_id: str, entry: tuple[Match, list[str]]) -> None:
        """Remember ``entry`` unless a newer version of the match is already cached."""
        with self._lock:
            held = self._entries.get(match_id)
            if held is None or held[0].version <= entry[0].version:
                self._entries[match_id] = entry
                self._entries.move_to_end(match_id)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)


@dataclass(frozen=True, slots=True)
class SteppingAside(game.Autoplay):
    """Bot turns and stalemate proofs whose searches run off the worker's event loop.

    A search usually takes a few milliseconds but may take its whole budget (seconds): the
    worker's other requests go on meanwhile (see :func:`service.threads.cpu_bound`).
    """

    def best_play(
        self, table: game.Table, rack: Counter[Tile], melded: bool, rules: Rules
    ) -> Solution:
        return cpu_bound(game.Autoplay.best_play, self, table, rack, melded, rules)

    def can_play(
        self, table: game.Table, rack: Counter[Tile], melded: bool, rules: Rules
    ) -> bool | None:
        return cpu_bound(game.Autoplay.can_play, self, table, rack, melded, rules)


@dataclass
class Referee:
    """Use cases over a :class:`MatchStore`; ``advance`` settles deadlines and bot turns."""

    store: MatchStore
    finished_ttl: int = 7 * 24 * 3600
    autoplay: game.Autoplay = field(default_factory=SteppingAside)
    hint_budget: float = 3.0
    on_events: Callable[[tuple[game.Event, ...]], None] | None = None
    _decoded: DecodedCache = field(default_factory=lambda: DecodedCache(2048), repr=False)

    # -- creating -----------------------------------------------------------------

    def create(
        self,
        players: Sequence[PlayerSpec],
        *,
        rules: Rules,
        seed: int | None = None,
        setup: Setup | None = None,
    ) -> Created:
        """Create, deal and store a match; raise ``game.InvalidMatch`` for bad players/rules."""
        match_id = secrets.token_urlsafe(12)
        now = self.store.now()
        if setup is not None:
            created = game.from_setup(
                match_id, players, rules=rules, setup=setup, now=now, seed=seed
            )
        else:
            created = game.new_match(
                match_id, players, rules=rules, rng=self._rng(seed, 1), now=now, seed=seed
            )
        tokens = tuple(f"{match_id}.{secrets.token_urlsafe(24)}" for _ in players)
        transition = created.then(lambda match: self.advance(match, now, True))
        self._commit(transition, None, [_digest(token) for token in tokens], None)
        return Created(transition.match, tokens, now)

    # -- reading ------------------------------------------------------------------

    def view(self, match_id: str, token: str | None) -> tuple[Match, int | None, float]:
        """Return the settled match, the seat ``token`` names (or ``None``) and the clock."""
        match, hashes, now = self._settled(match_id)
        seat = None if token is None else self._seat(match_id, hashes, token)
        return match, seat, now

    def advance(self, match: Match, now: float, moved: bool) -> Transition:
        """Settle deadlines, play bot turns, end a proven stalemate (see game.advance)."""
        return game.advance(match, now=now, moved=moved, autoplay=self.autoplay)

    def can_play(
        self, table: game.Table, rack: Counter[Tile], melded: bool, rules: Rules
    ) -> bool | None:
        """Whether a legal play exists, for refusing a pass (None: the solver gave up)."""
        return self.autoplay.can_play(table, rack, melded, rules)

    def hint(self, match_id: str, token: str | None) -> tuple[Match, int, Solution]:
        """The best play for the seat ``token`` opens; raise HintsOff when hints are off."""
        match, hashes, _ = self._settled(match_id)
        seat = self._seat(match_id, hashes, token)
        if not match.rules.hints:
            raise HintsOff("this match was created with hints turned off")
        if match.status is not Status.PLAYING:
            raise game.WrongPhase("there is no game being played to give a hint for")
        player = match.players[seat]
        # A search may take its whole budget: off the event loop (service/threads.py).
        solution = cpu_bound(
            solve,
            match.table,
            Counter(player.rack),
            melded=player.melded,
            rules=match.rules,
            time_budget=self.hint_budget,
        )
        return match, seat, solution

    def wait(self, match_id: str, version: int, *, timeout: float) -> None:
        """Block until the match is past ``version`` or ``timeout`` seconds have passed."""
        self.store.wait_after(match_id, version, timeout=timeout)

    def events(self, match_id: str, *, after: int, limit: int) -> list[dict[str, Any]]:
        """Return the public events after version ``after``; raise MatchNotFound."""
        if not self.store.exists(match_id):
            raise MatchNotFound(match_id)
        return self.store.events(match_id, after=after, limit=limit)

    # -- acting -------------------------------------------------------------------

    def act(
        self,
        match_id: str,
        token: str | None,
        action: Action,
        *,
        if_match: int | None = None,
        idempotency: Idempotency | None = None,
        describe: Callable[[Moved, int], dict[str, Any]] | None = None,
    ) -> Moved:
        """Apply ``action(match, seat, now)`` for the seat ``token`` opens, atomically.

        ``describe`` turns the result into the answer recorded for ``idempotency``.
        Raises the game's errors (nothing changed), StaleVersion, IdempotencyMismatch,
        BadToken, TokenForAnotherMatch, MatchNotFound, or Busy after repeated races.
        """
        for attempt in range(MAX_ATTEMPTS):
            match, hashes, now = self._settled(match_id)
            seat = self._seat(match_id, hashes, token)
            if idempotency is not None:
                replay = self._replay(match_id, seat, idempotency)
                if replay is not None:
                    return Moved(match, now, seat, replay=replay)
            if if_match is not None and if_match != match.version:
                raise StaleVersion(match.version)
            transition = self._apply(action, match, seat, now)
            moved = Moved(transition.match, now, seat, transition.drawn)
            record = None
            if idempotency is not None and describe is not None:
                key = self.store.idempotency_key(match_id, seat, idempotency.key)
                answer = {"fingerprint": idempotency.fingerprint, "answer": describe(moved, seat)}
                record = (key, answer)
            try:
                self._commit(transition, match.version, hashes, record)
            except VersionConflict:
                _back_off(attempt)
                continue
            return moved
        raise Busy(match_id)

    def settle_due(self, match_id: str) -> Match | None:
        """Settle what is owed to ``match_id`` (the sweeper's job); ``None`` if it is gone."""
        try:
            match, _, _ = self._settled(match_id)
        except MatchNotFound:
            self.store.schedule(match_id, None)
            return None
        return match

    # -- internals ----------------------------------------------------------------

    def _apply(self, action: Action, match: Match, seat: int, now: float) -> Transition:
        return action(match, seat, now).then(lambda after: self.advance(after, now, True))

    def _rng(self, seed: int | None, game_number: int) -> random.Random:
        if seed is None:
            return secrets.SystemRandom()
        return random.Random(f"{seed}:{game_number}")

    def rng_for(self, match: Match) -> random.Random:
        """The randomness for ``match``'s next game (seeded in test mode)."""
        return self._rng(match.seed, match.game_number + 1)

    def _load_with_time(self, match_id: str) -> tuple[Match, list[str], float]:
        """The stored match, decoded (or taken from the cache when its version is known)."""
        cached = self._decoded.get(match_id)
        stored, now = self.store.load_with_time(
            match_id, known_version=None if cached is None else cached[0].version
        )
        if stored is None:
            raise MatchNotFound(match_id)
        if stored.state is None and cached is not None:
            return cached[0], cached[1], now
        assert stored.state is not None
        match, hashes = game.from_dict(stored.state["m"]), list(stored.state["t"])
        self._decoded.put(match_id, (match, hashes))
        return match, hashes, now

    def _settled(self, match_id: str) -> tuple[Match, list[str], float]:
        """Load the match and commit whatever time and bots owe it by now."""
        for attempt in range(MAX_ATTEMPTS):
            match, hashes, now = self._load_with_time(match_id)
            transition = self.advance(match, now, False)
            if not transition.events:
                return match, hashes, now
            try:
                self._commit(transition, match.version, hashes, None)
            except VersionConflict:
                _back_off(attempt)
                continue
            return transition.match, hashes, now
        raise Busy(match_id)

    def _seat(self, match_id: str, hashes: list[str], token: str | None) -> int:
        if not token:
            raise BadToken("a seat token is required: send Authorization: Bearer <token>")
        digest = _digest(token)
        found = None
        for seat, stored in enumerate(hashes):
            if hmac.compare_digest(stored, digest):
                found = seat
        if found is not None:
            return found
        owner = token.partition(".")[0]
        if owner and owner != match_id and self._opens_other(owner, digest):
            raise TokenForAnotherMatch("this token belongs to another match")
        raise BadToken("the seat token is not valid for this match")

    def _opens_other(self, match_id: str, digest: str) -> bool:
        if len(match_id) > 64:
            return False
        stored = self.store.load(match_id)
        if stored is None:
            return False
        return stored.state is not None and any(
            hmac.compare_digest(h, digest) for h in stored.state["t"]
        )

    def _replay(self, match_id: str, seat: int, idempotency: Idempotency) -> dict[str, Any] | None:
        record = self.store.idempotent_answer(match_id, seat, idempotency.key)
        if record is None:
            return None
        if record["fingerprint"] != idempotency.fingerprint:
            raise IdempotencyMismatch(
                "this Idempotency-Key was used for a different request; use a new key"
            )
        answer: dict[str, Any] = record["answer"]
        return answer

    def _commit(
        self,
        transition: Transition,
        expected: int | None,
        hashes: list[str],
        record: tuple[str, dict[str, Any]] | None,
    ) -> None:
        match = transition.match
        finished = match.status is Status.FINISHED
        self.store.commit(
            match.id,
            expected_version=expected,
            version=match.version,
            state={"m": game.to_dict(match), "t": hashes},
            events=[(event.version, game.event_to_dict(event)) for event in transition.events],
            idempotency=record,
            ttl=self.finished_ttl if finished else 0,
            deadline=_next_due(match),
        )
        self._decoded.put(match.id, (match, hashes))
        if self.on_events is not None:
            self.on_events(transition.events)


def _back_off(attempt: int) -> None:
    """Sleep a short random while after losing a race, so racers spread out."""
    time.sleep(random.uniform(0, min(0.05, 0.002 * 2**attempt)))


def _next_due(match: Match) -> float | None:
    if match.status is not Status.PLAYING:
        return None
    if match.players[match.current_seat].bot:
        return match.turn_started
    return match.turn_deadline


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()
