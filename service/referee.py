"""The service layer: one method per use case, each reading "load, act, commit".

A :class:`Referee` loads a match from the :class:`~service.store.MatchStore`, settles what time
(and bots) owe it, applies one transition from :mod:`service.game`, and commits the new state
with its events in one version-checked step. A commit that loses a race is computed again on
the fresh state (a bounded number of times), so no update is lost and a move that has become
illegal meanwhile is refused instead of applied twice.

A move is first computed on the worker's cached copy of the match: when that copy is still
current the commit is the only round trip to Redis; when it is not, the commit's answer
carries the fresh state and the move is computed again. A refusal is only given on a state
read fresh from Redis.

Seat tokens are ``<match id>.<secret>``; only their SHA-256 is stored, and they are compared
in constant time.

Exception tree (beside :class:`service.game.GameError` and
:class:`service.rules.IllegalTurn`, the game's own refusals)::

    RefereeError
    ├── MatchNotFound          match-not-found      no such match (or it expired)
    ├── BadToken               unauthorized         the seat token is missing or unknown
    ├── TokenForAnotherMatch   forbidden            a token of another match
    ├── StaleVersion           stale-version        If-Match names an old version
    ├── IdempotencyMismatch    idempotency-key-reused   a key reused for another request
    ├── HintsOff               hints-off            the match has hints turned off
    ├── NotOwner               not-owner            the app's key, but another app's match
    ├── SeatRequired           seat-required        the app's key, but which seat leaves?
    └── Busy                   busy                 the match kept changing; nothing applied

The owner's use cases (an app's key): :meth:`Referee.list_matches`, :meth:`~Referee.reissue_token`,
:meth:`~Referee.leave`, :meth:`~Referee.cancel`, :meth:`~Referee.rematch`.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import random
import secrets
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, ClassVar

from service import game
from service.game import EventType, Match, PlayerSpec, Setup, Status, Transition
from service.rules import IllegalTurn, Rules, Tile
from service.rules.solver import Solution, solve
from service.store import Change, Loaded, MatchStore, Page, Receipt, Stale, StoredEvent

__all__ = [
    "Action",
    "BadToken",
    "Busy",
    "Created",
    "HintsOff",
    "Idempotency",
    "LAST_EVENTS",
    "IdempotencyMismatch",
    "MatchNotFound",
    "Moved",
    "NotOwner",
    "Rematched",
    "SeatRequired",
    "Referee",
    "RefereeError",
    "Runner",
    "StaleVersion",
    "TokenForAnotherMatch",
]

MAX_ATTEMPTS = 12
LAST_EVENTS = frozenset({EventType.MATCH_FINISHED, EventType.MATCH_CANCELED})
"""The events after which nothing more happens to a match (streams end there)."""
Action = Callable[[Match, int, float], Transition]
Runner = Callable[[Callable[[], Any]], Any]
"""Runs a solver search (``runner(work)`` returns ``work()``): the worker model decides how,
e.g. off its request threads, since a search may take its whole budget."""


def run_inline(work: Callable[[], Any]) -> Any:
    """The plain :data:`Runner`: run the search here and now."""
    return work()


class RefereeError(Exception):
    """Base of the service layer's refusals; ``kind`` is the stable code of each."""

    kind: ClassVar[str] = "referee-error"


class MatchNotFound(RefereeError, LookupError):
    """No match with that id (or it has expired)."""

    kind = "match-not-found"


class BadToken(RefereeError, PermissionError):
    """The seat token is missing or unknown."""

    kind = "unauthorized"


class TokenForAnotherMatch(RefereeError, PermissionError):
    """The token is valid, but for another match."""

    kind = "forbidden"


class StaleVersion(RefereeError):
    """``If-Match`` names a version that is not the current one."""

    kind = "stale-version"

    def __init__(self, current: int) -> None:
        super().__init__(
            f"If-Match names an old version; the match is at version {current}: "
            "reload it and decide again"
        )
        self.current = current


class IdempotencyMismatch(RefereeError, ValueError):
    """An ``Idempotency-Key`` reused for a different request."""

    kind = "idempotency-key-reused"


class HintsOff(RefereeError):
    """The match was created with hints turned off."""

    kind = "hints-off"


class NotOwner(RefereeError, PermissionError):
    """A valid app key, but the match belongs to another app (or to none)."""

    kind = "not-owner"


class SeatRequired(RefereeError, ValueError):
    """The app's key asks a seat to leave without saying which."""

    kind = "seat-required"


class Busy(RefereeError):
    """The match kept changing under us; nothing was applied (retry)."""

    kind = "busy"


@dataclass(frozen=True)
class Created:
    """A new match and the seats' tokens (shown once)."""

    match: Match
    tokens: tuple[str, ...]
    now: float


@dataclass(frozen=True)
class Moved:
    """The answer to a move: the version it made, the match as the mover sees it, the tile
    codes the mover drew; ``replayed`` when it is the kept first answer to its key."""

    version: int
    render: Callable[[], dict[str, Any]]  # the view, made only when asked for (see ``view``)
    drawn: tuple[str, ...] = ()
    replayed: bool = False

    @property
    def view(self) -> dict[str, Any]:
        """The match as the mover sees it (an answer with ``Prefer: return=minimal`` never
        asks, and the view is not made)."""
        return self.render()


@dataclass(frozen=True)
class Rematched:
    """A rematch, whether this call created it, and fresh tokens for the seats it shows."""

    match: Match
    tokens: dict[int, str]
    created: bool
    now: float


@dataclass(frozen=True)
class Idempotency:
    """An ``Idempotency-Key`` and the fingerprint of the request that carried it."""

    key: str
    fingerprint: str


@dataclass(frozen=True, slots=True)
class SteppingAside(game.Autoplay):
    """Bot turns and stalemate proofs, each run through ``run`` (see :data:`Runner`)."""

    run: Runner = run_inline

    def best_play(
        self, table: game.Table, rack: Counter[Tile], melded: bool, rules: Rules
    ) -> Solution:
        solution: Solution = self.run(
            lambda: game.Autoplay.best_play(self, table, rack, melded, rules)
        )
        return solution

    def can_play(
        self, table: game.Table, rack: Counter[Tile], melded: bool, rules: Rules
    ) -> bool | None:
        found: bool | None = self.run(
            lambda: game.Autoplay.can_play(self, table, rack, melded, rules)
        )
        return found


@dataclass
class Referee:
    """The use cases over a :class:`MatchStore` (see the module)."""

    store: MatchStore
    autoplay: game.Autoplay = field(default_factory=SteppingAside)
    hint_budget: float = 3.0
    on_events: Callable[[tuple[game.Event, ...]], None] | None = None
    run_search: Runner = run_inline

    # -- creating -----------------------------------------------------------------

    def create(
        self,
        players: Sequence[PlayerSpec],
        *,
        rules: Rules,
        seed: int | None = None,
        setup: Setup | None = None,
        owner: str | None = None,
    ) -> Created:
        """Create, deal and store a match (``owner``: the app that owns it); raise
        ``game.InvalidMatch`` for bad players/rules."""
        match_id = secrets.token_urlsafe(12)
        now = self.store.now(match_id)
        if setup is not None:
            created = game.from_setup(
                match_id, players, rules=rules, setup=setup, now=now, seed=seed, owner=owner
            )
        else:
            created = game.new_match(
                match_id,
                players,
                rules=rules,
                rng=self._rng(seed, 1),
                now=now,
                seed=seed,
                owner=owner,
            )
        tokens = tuple(_new_token(match_id) for _ in players)
        transition = created.then(lambda match: self._advance(match, now, True))
        seats = tuple(_digest(token) for token in tokens)
        self._commit(Change(None, transition.match, seats, transition.events, now))
        return Created(transition.match, tokens, now)

    # -- reading ------------------------------------------------------------------

    def view(
        self, match_id: str, token: str | None, *, newer_than: int | None = None
    ) -> tuple[Match, int | None, float]:
        """The settled match, the seat ``token`` names (``None`` without one) and the clock;
        ``newer_than``, a version the caller knows the match has gone past (a long-poll that
        saw it move), so that no copy of that version or older is trusted."""
        loaded = self._settled(match_id, reading=True, newer_than=newer_than)
        seat = None if token is None else self._seat(match_id, loaded.seats, token)
        return loaded.match, seat, _game_now(loaded)

    def events(self, match_id: str, *, after: int, limit: int) -> list[dict[str, Any]]:
        """The public events after version ``after``; raise MatchNotFound."""
        if not self.store.exists(match_id):
            raise MatchNotFound(match_id)
        return self.store.events(match_id, after=after, limit=limit)

    def stream_start(self, match_id: str, *, after: int) -> int | None:
        """Where following the match's events after ``after`` starts: the version of its last
        event (0 before any), or ``None`` when the match is finished or canceled and ``after``
        is its last event (nothing will come). Raise MatchNotFound."""
        if not self.store.exists(match_id):
            raise MatchNotFound(match_id)
        last = self.store.last_event(match_id)
        if last is None:
            return 0
        if last.type in LAST_EVENTS and after >= last.version:
            return None
        return last.version

    def follow(
        self, match_id: str, *, after: int, wake: float
    ) -> Iterator[list[StoredEvent]] | None:
        """The match's events after ``after`` as they come (see ``MatchStore.follow``);
        ``None`` when nothing will come (:meth:`stream_start`). Raise MatchNotFound."""
        if self.stream_start(match_id, after=after) is None:
            return None
        return self.store.follow(match_id, after=after, wake=wake)

    def hint(self, match_id: str, token: str | None) -> tuple[Match, Solution]:
        """The best play for the seat ``token`` opens; raise HintsOff when hints are off.

        A read, as a view is: on the worker's copy of the stored version when it is current
        (no round trip to Redis), and the answer names the version it was found for."""
        loaded = self._settled(match_id, reading=True)
        seat = self._seat(match_id, loaded.seats, token)
        match = loaded.match
        if not match.rules.hints:
            raise HintsOff("this match was created with hints turned off")
        if match.status is not Status.PLAYING:
            raise game.WrongPhase("there is no game being played to give a hint for")
        player = match.players[seat]
        solution: Solution = self.run_search(
            lambda: solve(
                match.table,
                Counter(player.rack),
                melded=player.melded,
                rules=match.rules,
                time_budget=self.hint_budget,
            )
        )
        return match, solution

    # -- the moves ----------------------------------------------------------------

    def play(
        self,
        match_id: str,
        token: str | None,
        table: game.Table,
        *,
        if_match: int | None = None,
        idempotency: Idempotency | None = None,
    ) -> Moved:
        """Play the whole new ``table`` for the seat ``token`` opens."""
        return self._act(
            match_id,
            token,
            lambda match, seat, now: game.play(match, seat, table, now=now),
            if_match=if_match,
            idempotency=idempotency,
        )

    def draw(
        self,
        match_id: str,
        token: str | None,
        *,
        if_match: int | None = None,
        idempotency: Idempotency | None = None,
    ) -> Moved:
        """Draw a tile; the turn ends."""
        return self._act(
            match_id,
            token,
            lambda match, seat, now: game.draw(match, seat, now=now),
            if_match=if_match,
            idempotency=idempotency,
        )

    def pass_turn(
        self,
        match_id: str,
        token: str | None,
        *,
        if_match: int | None = None,
        idempotency: Idempotency | None = None,
    ) -> Moved:
        """Pass (the pool is empty and no legal play exists)."""
        can_play = self.autoplay.can_play
        return self._act(
            match_id,
            token,
            lambda match, seat, now: game.pass_turn(match, seat, now=now, can_play=can_play),
            if_match=if_match,
            idempotency=idempotency,
        )

    def save_draft(
        self,
        match_id: str,
        token: str | None,
        table: game.Table,
        *,
        if_match: int | None = None,
        idempotency: Idempotency | None = None,
    ) -> Moved:
        """Share the work in progress."""
        return self._act(
            match_id,
            token,
            lambda match, seat, now: game.save_draft(match, seat, table, now=now),
            if_match=if_match,
            idempotency=idempotency,
        )

    def next_game(
        self,
        match_id: str,
        token: str | None,
        *,
        if_match: int | None = None,
        idempotency: Idempotency | None = None,
    ) -> Moved:
        """Start the next game once the last one is over."""
        return self._act(
            match_id,
            token,
            lambda match, seat, now: game.next_game(
                match, now=now, rng=self._rng(match.seed, match.game_number + 1)
            ),
            if_match=if_match,
            idempotency=idempotency,
        )

    # -- the owner's use cases -------------------------------------------------------

    def list_matches(
        self, app: str, *, ref: str | None, status: str | None, limit: int, cursor: str | None
    ) -> Page:
        """A page of ``app``'s matches (one player's, with ``ref``); raise BadCursor."""
        return self.store.page(app, ref=ref, status=status, limit=limit, cursor=cursor)

    def reissue_token(self, match_id: str, seat: int, *, app: str) -> str:
        """A new token for ``seat`` of ``app``'s match; the old one stops working.

        Raises NotOwner, MatchNotFound, ``game.UnknownSeat`` or ``game.SeatIsBot``.
        """
        token = _new_token(match_id)

        def reissue(loaded: Loaded) -> tuple[Transition, tuple[str, ...]]:
            _require_owner(loaded.match, app)
            transition = game.reissue_tokens(loaded.match, (seat,), now=_game_now(loaded))
            return transition, _with_digests(loaded.seats, {seat: token})

        self._change(match_id, reissue)
        return token

    def leave(
        self, match_id: str, *, token: str | None, app: str | None, seat: int | None
    ) -> tuple[Match, float]:
        """The seat of ``token`` (or ``seat``, with the owning ``app``) leaves for good; a bot
        plays it from now on, this turn too when it is its turn. Leaving again changes nothing.

        Raises BadToken (neither a token nor a key), NotOwner, SeatRequired, the game's errors.
        """

        def leaving(loaded: Loaded) -> tuple[Transition, tuple[str, ...]]:
            if token is not None or app is None:
                who = self._seat(match_id, loaded.seats, token)
            else:
                _require_owner(loaded.match, app)
                if seat is None:
                    raise SeatRequired('with the app\'s key, say which seat leaves: {"seat": n}')
                who = seat
            left = game.leave(loaded.match, who, now=_game_now(loaded))
            return left.then(lambda m: self._advance(m, _game_now(loaded), True)), loaded.seats

        loaded = self._change(match_id, leaving)
        return loaded.match, _game_now(loaded)

    def cancel(self, match_id: str, *, app: str) -> tuple[Match, float]:
        """``app`` ends its match at once (``canceled``); canceling again changes nothing."""

        def canceling(loaded: Loaded) -> tuple[Transition, tuple[str, ...]]:
            _require_owner(loaded.match, app)
            return game.cancel(loaded.match, now=_game_now(loaded)), loaded.seats

        loaded = self._change(match_id, canceling)
        return loaded.match, _game_now(loaded)

    def rematch(self, match_id: str, *, token: str | None, app: str | None) -> Rematched:
        """The rematch of a finished match, made by the first caller and joined by the rest,
        with fresh tokens: the token's seat, or with the owner's key every human seat.

        Raises BadToken, NotOwner, ``game.WrongPhase`` (not finished), ``game.SeatIsBot``.
        """
        loaded = self._settled(match_id)
        old = loaded.match
        if token is not None or app is None:
            own_seat = self._seat(match_id, loaded.seats, token)
            game.require_human(old, own_seat)
            wanted: tuple[int, ...] | None = (own_seat,)
        else:
            _require_owner(old, app)
            wanted = None
        new_id, created = self._rematch_id(match_id)
        if not self.store.exists(new_id):
            self._create_rematch(old, new_id)
        tokens: dict[int, str] = {}

        def hand_out(loaded: Loaded) -> tuple[Transition, tuple[str, ...]]:
            seats = loaded.match.humans if wanted is None else wanted
            tokens.clear()
            tokens.update({seat: _new_token(new_id) for seat in seats})
            if not seats:
                return Transition(loaded.match, ()), loaded.seats
            transition = game.reissue_tokens(loaded.match, seats, now=_game_now(loaded))
            return transition, _with_digests(loaded.seats, tokens)

        new = self._change(new_id, hand_out)
        return Rematched(new.match, dict(tokens), created, new.now)

    def _rematch_id(self, match_id: str) -> tuple[str, bool]:
        """The id of the match's rematch, recorded by this call (True) or an earlier one."""
        candidate = secrets.token_urlsafe(12)

        def record(loaded: Loaded) -> tuple[Transition, tuple[str, ...]]:
            chosen = loaded.match.rematch_id or candidate
            return game.record_rematch(loaded.match, chosen, now=_game_now(loaded)), loaded.seats

        recorded = self._change(match_id, record).match.rematch_id
        assert recorded is not None
        return recorded, recorded == candidate

    def _create_rematch(self, old: Match, new_id: str) -> None:
        """Deal and store the rematch ``new_id`` of ``old`` unless another caller did first."""
        now = self.store.now(new_id)
        created = game.rematch(old, new_id, rng=self._rng(None, 1), now=now).then(
            lambda match: self._advance(match, now, True)
        )
        seats = tuple(_digest(_new_token(new_id)) for _ in old.players)  # replaced when handed out
        with contextlib.suppress(Stale):  # another caller stored it first: the same rematch
            self._commit(Change(None, created.match, seats, created.events, now))

    def _change(
        self, match_id: str, decide: Callable[[Loaded], tuple[Transition, tuple[str, ...]]]
    ) -> Loaded:
        """Load the settled match, ``decide`` the transition and seat digests, commit them
        (nothing when there are no events), again on the fresh state after a race; return
        the match as it is after."""
        for attempt in range(MAX_ATTEMPTS):
            loaded = self._settled(match_id)
            transition, seats = decide(loaded)
            if not transition.events:
                return loaded
            change = _change(loaded, transition, seats=seats)
            try:
                self._commit(change)
            except Stale:
                _back_off(attempt)
                continue
            return Loaded(transition.match, seats, loaded.now)
        raise Busy(
            "the match kept changing while this request was applied; nothing was changed, retry"
        )

    # -- the sweeper ----------------------------------------------------------------

    def advance_clock(self, match_id: str, seconds: float) -> tuple[Match, float]:
        """Test mode: run the match's clock ``seconds`` ahead and settle what falls due by then
        (timeouts, penalties, bot turns), as if the time had passed; the match and its time."""
        for attempt in range(MAX_ATTEMPTS):
            loaded = self._load(match_id)
            now = _game_now(loaded)
            advanced = game.advance_clock(loaded.match, seconds, at=now)
            transition = advanced.then(partial(self._advance, now=now + seconds, moved=False))
            change = _change(loaded, transition)
            try:
                self._commit(change)
            except Stale:
                _back_off(attempt)
                continue
            return transition.match, now + seconds
        raise Busy(
            "the match kept changing while this request was applied; nothing was changed, retry"
        )

    def settle_due(self, match_id: str) -> Match | None:
        """Settle what is owed to ``match_id`` (the sweeper's job); ``None`` if it is gone."""
        try:
            return self._settled(match_id).match
        except MatchNotFound:
            self.store.unschedule(match_id)
            return None

    # -- internals ----------------------------------------------------------------

    def _act(
        self,
        match_id: str,
        token: str | None,
        action: Action,
        *,
        if_match: int | None,
        idempotency: Idempotency | None,
    ) -> Moved:
        """Load (the cached copy first), act, commit; see the module."""
        loaded = self.store.cached(match_id) or self._load(match_id)
        for attempt in range(MAX_ATTEMPTS):
            try:  # on every copy: a seat's token may have been replaced meanwhile
                seat = self._seat(match_id, loaded.seats, token)
            except BadToken:
                if loaded.fresh:
                    raise
                loaded = self._load(match_id)
                continue
            try:
                if if_match is not None and if_match != loaded.match.version:
                    raise StaleVersion(loaded.match.version)
                now = _game_now(loaded)
                settled = self._advance(loaded.match, now, False)
                if if_match is not None and settled.events:
                    # time moved the match on (a turn timed out, bots played): the version
                    # the client decided on is no longer the match's, whatever is stored
                    raise StaleVersion(settled.match.version)
                transition = settled.then(
                    lambda m, now=now, seat=seat: self._apply(action, m, seat, now)  # type: ignore[misc]
                )
            except (game.GameError, IllegalTurn, StaleVersion):
                if not loaded.fresh:  # judged on a cached copy: judge again on a fresh one
                    loaded = self._load(match_id)
                    continue
                kept = self._kept(loaded, seat, idempotency)
                if kept is not None:  # a resent request: its first answer
                    return self._replay(kept, idempotency)
                self._settle_before_refusal(loaded)
                raise
            receipt = None
            if idempotency is not None:
                view = game.private_view(transition.match, seat, now=now)
                drawn = tuple(tile.code for tile in transition.drawn)
                kept = Receipt(idempotency.fingerprint, transition.match.version, drawn, view)
                receipt = (seat, idempotency.key, kept)
            change = _change(loaded, transition, receipt=receipt, guarded=if_match is not None)
            try:
                replayed = self._commit(change)
            except Stale as stale:
                if attempt == 0 and stale.fresh is not None:
                    loaded = stale.fresh  # our copy was behind: the answer brought the match
                else:  # a race: spread the racers out, then read again
                    _back_off(attempt)
                    loaded = self._load(match_id)
                continue
            if replayed is not None:
                return self._replay(replayed, idempotency)
            if receipt is not None:
                return Moved(receipt[2].version, _kept_view(receipt[2]), receipt[2].drawn)
            return Moved(
                transition.match.version,
                partial(game.private_view, transition.match, seat, now=now),
                tuple(tile.code for tile in transition.drawn),
            )
        raise Busy(
            "the match kept changing while this request was applied; nothing was changed, retry"
        )

    def _kept(self, loaded: Loaded, seat: int, idempotency: Idempotency | None) -> Receipt | None:
        if idempotency is None:
            return None
        return self.store.receipt(loaded.match.id, seat, idempotency.key)

    def _settle_before_refusal(self, loaded: Loaded) -> None:
        """What time owes the match stands, even when the move is refused."""
        settled = self._advance(loaded.match, _game_now(loaded), False)
        if not settled.events:
            return
        change = _change(loaded, settled)
        with contextlib.suppress(Stale):  # someone else settled it
            self._commit(change)

    def _replay(self, kept: Receipt, idempotency: Idempotency | None) -> Moved:
        if idempotency is None or kept.fingerprint != idempotency.fingerprint:
            raise IdempotencyMismatch(
                "this Idempotency-Key was used for a different request; use a new key"
            )
        return Moved(kept.version, _kept_view(kept), kept.drawn, replayed=True)

    def _apply(self, action: Action, match: Match, seat: int, now: float) -> Transition:
        return action(match, seat, now).then(lambda after: self._advance(after, now, True))

    def _advance(self, match: Match, now: float, moved: bool) -> Transition:
        """Settle deadlines, play bot turns, end a proven stalemate (see game.advance)."""
        return game.advance(match, now=now, moved=moved, autoplay=self.autoplay)

    def _rng(self, seed: int | None, game_number: int) -> random.Random:
        if seed is None:
            return secrets.SystemRandom()
        return random.Random(f"{seed}:{game_number}")

    def _load(
        self, match_id: str, *, reading: bool = False, newer_than: int | None = None
    ) -> Loaded:
        """The stored match (``reading``: on the worker's copy and clock estimate, see
        ``MatchStore.current``); raise MatchNotFound."""
        if reading:
            loaded = self.store.current(match_id, newer_than=newer_than)
        else:
            loaded = self.store.load(match_id)
        if loaded is None:
            raise MatchNotFound(match_id)
        return loaded

    def _settled(
        self, match_id: str, *, reading: bool = False, newer_than: int | None = None
    ) -> Loaded:
        """Load the match and commit whatever time and bots owe it by now; ``reading``, from
        the worker's copy of the stored version with its estimate of the clock (a commit is
        then checked against the shared clock)."""
        for attempt in range(MAX_ATTEMPTS):
            loaded = self._load(match_id, reading=reading, newer_than=newer_than)
            transition = self._advance(loaded.match, _game_now(loaded), False)
            if not transition.events:
                return loaded
            change = _change(loaded, transition)
            try:
                self._commit(change)
            except Stale:
                _back_off(attempt)
                continue
            return Loaded(transition.match, loaded.seats, loaded.now)
        raise Busy(
            "the match kept changing while this request was applied; nothing was changed, retry"
        )

    def _commit(self, change: Change) -> Receipt | None:
        replayed = self.store.commit(change)
        if replayed is None and self.on_events is not None:
            self.on_events(change.events)
        return replayed

    def _seat(self, match_id: str, seats: Sequence[str], token: str | None) -> int:
        if not token:
            raise BadToken("a seat token is required: send Authorization: Bearer <token>")
        digest = _digest(token)
        found = None
        for seat, stored in enumerate(seats):
            if hmac.compare_digest(stored, digest):
                found = seat
        if found is not None:
            return found
        owner = token.partition(".")[0]
        if (
            owner
            and owner != match_id
            and len(owner) <= 64
            and any(hmac.compare_digest(h, digest) for h in self.store.seats_of(owner))
        ):
            raise TokenForAnotherMatch("this token belongs to another match")
        raise BadToken("the seat token is not valid for this match")


def _kept_view(kept: Receipt) -> Callable[[], dict[str, Any]]:
    """The view a receipt keeps, as a :class:`Moved` asks for it."""
    return lambda: kept.view


def _change(
    loaded: Loaded,
    transition: Transition,
    *,
    seats: tuple[str, ...] | None = None,
    receipt: tuple[int, str, Receipt] | None = None,
    guarded: bool = False,
) -> Change:
    """The commit of ``transition``, computed on ``loaded`` (its clock checked when that is
    the worker's copy, whose clock is an estimate), with the seats' digests ``seats`` when
    they change."""
    return Change(
        loaded.match.version,
        transition.match,
        loaded.seats if seats is None else seats,
        transition.events,
        loaded.now,
        check_clock=not loaded.fresh,
        receipt=receipt,
        guarded=guarded,
    )


def _game_now(loaded: Loaded) -> float:
    """The match's own clock: the shared one, ahead by what test mode advanced it."""
    return loaded.now + loaded.match.clock_offset


def _require_owner(match: Match, app: str) -> None:
    if match.owner != app:
        raise NotOwner("this match does not belong to the app whose key came with the request")


def _new_token(match_id: str) -> str:
    return f"{match_id}.{secrets.token_urlsafe(24)}"


def _with_digests(seats: tuple[str, ...], tokens: dict[int, str]) -> tuple[str, ...]:
    """The seats' token digests with those of ``tokens`` replaced."""
    return tuple(
        _digest(tokens[seat]) if seat in tokens else digest for seat, digest in enumerate(seats)
    )


def _back_off(attempt: int) -> None:
    """Sleep a short random while after losing a race, so racers spread out."""
    time.sleep(random.uniform(0, min(0.05, 0.002 * 2**attempt)))


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()
