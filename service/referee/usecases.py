"""The referee's use cases: :class:`Referee` (see :mod:`service.referee`)."""

from __future__ import annotations

import contextlib
import random
import secrets
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from service import game
from service.game import EventType, Match, PlayerSpec, Setup, Status, Transition
from service.referee.answers import NO_GUARDS, Created, Guards, Moved, Rematched, moved
from service.referee.commits import Reload, change_of, game_now, retrying
from service.referee.errors import (
    BadToken,
    HintsOff,
    IdempotencyMismatch,
    MatchNotFound,
    NotOwner,
    SeatRequired,
    StaleVersion,
)
from service.referee.searches import Runner, SteppingAside, likely_quick, quick_here, run_inline
from service.referee.tokens import digest, new_token, seat_of, with_digests
from service.rules import IllegalTurn, Rules
from service.rules.solver import Solution, solve
from service.store import Change, Loaded, MatchStore, Page, Receipt, Stale, StoredEvent

__all__ = ["LAST_EVENTS", "Action", "Referee"]

LAST_EVENTS = frozenset({EventType.MATCH_FINISHED, EventType.MATCH_CANCELED})
"""The events after which nothing more happens to a match (streams end there)."""
Action = Callable[[Match, int, float], Transition]
"""A move: ``action(match, seat, now)`` is the transition it makes."""
Decision = Callable[[Loaded], tuple[Transition, tuple[str, ...]]]
"""What a change makes of the settled match: the transition, and the seats' token digests."""


@dataclass
class Referee:
    """The use cases over a :class:`MatchStore` (see :mod:`service.referee`)."""

    store: MatchStore
    autoplay: game.Autoplay = field(default_factory=SteppingAside)
    hint_budget: float = 3.0
    hint_here: float = 0.0  # seconds a hint's search runs where asked before run_search
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
        tokens = tuple(new_token(match_id) for _ in players)
        transition = created.then(lambda match: self._advance(match, now, True))
        seats = tuple(digest(token) for token in tokens)
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
        return loaded.match, seat, game_now(loaded)

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
        rack = Counter(player.rack)

        def search(seconds: float) -> Solution:
            return solve(
                match.table,
                rack,
                melded=player.melded,
                rules=match.rules,
                time_budget=seconds,
            )

        here = self.hint_here if likely_quick(match.table, rack) else 0.0
        solution = quick_here(self.run_search, search, budget=self.hint_budget, here=here)
        return match, solution

    # -- the moves (each guarded by If-Match and Idempotency-Key, see Guards) ----------

    def play(
        self, match_id: str, token: str | None, table: game.Table, *, guards: Guards = NO_GUARDS
    ) -> Moved:
        """Play the whole new ``table`` for the seat ``token`` opens."""
        return self._act(match_id, token, guards, partial(_played, table=table))

    def draw(self, match_id: str, token: str | None, *, guards: Guards = NO_GUARDS) -> Moved:
        """Draw a tile; the turn ends."""
        return self._act(match_id, token, guards, lambda m, seat, now: game.draw(m, seat, now=now))

    def pass_turn(self, match_id: str, token: str | None, *, guards: Guards = NO_GUARDS) -> Moved:
        """Pass (the pool is empty and no legal play exists)."""
        can_play = self.autoplay.can_play
        return self._act(
            match_id,
            token,
            guards,
            lambda m, seat, now: game.pass_turn(m, seat, now=now, can_play=can_play),
        )

    def save_draft(
        self, match_id: str, token: str | None, table: game.Table, *, guards: Guards = NO_GUARDS
    ) -> Moved:
        """Share the work in progress."""
        return self._act(match_id, token, guards, partial(_drafted, table=table))

    def next_game(self, match_id: str, token: str | None, *, guards: Guards = NO_GUARDS) -> Moved:
        """Start the next game once the last one is over."""
        return self._act(
            match_id,
            token,
            guards,
            lambda m, seat, now: game.next_game(
                m, now=now, rng=self._rng(m.seed, m.game_number + 1)
            ),
        )

    def ready(self) -> None:
        """Return when the store answers; raise StoreUnavailable otherwise (``/readyz``)."""
        self.store.ping()

    def redeal(self, match_id: str, token: str | None, *, guards: Guards = NO_GUARDS) -> Moved:
        """Deal the racks anew for the seat ``token`` opens, whose dealt rack holds 3 doubles
        (the MSO rules), before the game's first move."""
        return self._act(
            match_id,
            token,
            guards,
            lambda m, seat, now: game.redeal(m, seat, rng=self._redeal_rng(m), now=now),
        )

    def give_time(
        self, match_id: str, seat: int, seconds: int, *, token: str | None, app: str | None
    ) -> tuple[Match, float]:
        """Give ``seconds`` to ``seat``'s bank: from another seat (``token``), or from the
        owning ``app``. Raises BadToken, NotOwner, the game's errors (``give_time``)."""

        def giving(loaded: Loaded) -> tuple[Transition, tuple[str, ...]]:
            if token is not None or app is None:
                by: int | None = self._seat(match_id, loaded.seats, token)
            else:
                _require_owner(loaded.match, app)
                by = None
            now = game_now(loaded)
            given = game.give_time(loaded.match, seat, seconds, by=by, now=now)
            return given, loaded.seats

        loaded = self._change(match_id, giving)
        return loaded.match, game_now(loaded)

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
        token = new_token(match_id)

        def reissue(loaded: Loaded) -> tuple[Transition, tuple[str, ...]]:
            _require_owner(loaded.match, app)
            transition = game.reissue_tokens(loaded.match, (seat,), now=game_now(loaded))
            return transition, with_digests(loaded.seats, {seat: token})

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
            left = game.leave(loaded.match, who, now=game_now(loaded))
            return left.then(lambda m: self._advance(m, game_now(loaded), True)), loaded.seats

        loaded = self._change(match_id, leaving)
        return loaded.match, game_now(loaded)

    def cancel(self, match_id: str, *, app: str) -> tuple[Match, float]:
        """``app`` ends its match at once (``canceled``); canceling again changes nothing."""

        def canceling(loaded: Loaded) -> tuple[Transition, tuple[str, ...]]:
            _require_owner(loaded.match, app)
            return game.cancel(loaded.match, now=game_now(loaded)), loaded.seats

        loaded = self._change(match_id, canceling)
        return loaded.match, game_now(loaded)

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
            if loaded.match.status is Status.CANCELED:
                raise game.MatchCanceled("the rematch was canceled by its owner")
            seats = loaded.match.humans if wanted is None else wanted
            tokens.clear()
            tokens.update({seat: new_token(new_id) for seat in seats})
            if not seats:
                return Transition(loaded.match, ()), loaded.seats
            # a reissue by the owner (its key here, or the seat's new token) wins over a
            # claim with a seat token of the old match (docs/RULINGS.md, "Rematch")
            transition = game.reissue_tokens(
                loaded.match, seats, now=game_now(loaded), by_owner=wanted is None
            )
            return transition, with_digests(loaded.seats, tokens)

        new = self._change(new_id, hand_out)
        return Rematched(new.match, dict(tokens), created, new.now)

    def _rematch_id(self, match_id: str) -> tuple[str, bool]:
        """The id of the match's rematch, recorded by this call (True) or an earlier one."""
        candidate = secrets.token_urlsafe(12)

        def record(loaded: Loaded) -> tuple[Transition, tuple[str, ...]]:
            chosen = loaded.match.rematch_id or candidate
            return game.record_rematch(loaded.match, chosen, now=game_now(loaded)), loaded.seats

        recorded = self._change(match_id, record).match.rematch_id
        assert recorded is not None
        return recorded, recorded == candidate

    def _create_rematch(self, old: Match, new_id: str) -> None:
        """Deal and store the rematch ``new_id`` of ``old`` unless another caller did first."""
        now = self.store.now(new_id)
        created = game.rematch(old, new_id, rng=self._rng(None, 1), now=now).then(
            lambda match: self._advance(match, now, True)
        )
        seats = tuple(digest(new_token(new_id)) for _ in old.players)  # replaced when handed out
        with contextlib.suppress(Stale):  # another caller stored it first: the same rematch
            self._commit(Change(None, created.match, seats, created.events, now))

    # -- the sweeper and test mode ----------------------------------------------------

    def advance_clock(
        self, match_id: str, seconds: float, *, owner: str | None = None
    ) -> tuple[Match, float]:
        """Test mode: run the match's clock ``seconds`` ahead and settle what falls due by then
        (timeouts, penalties, bot turns), as if the time had passed; the match and its time.
        With ``owner`` (a sandbox app), only a match of that app (else NotOwner)."""

        def advancing(loaded: Loaded) -> tuple[Match, float]:
            if owner is not None:
                _require_owner(loaded.match, owner)
            now = game_now(loaded)
            advanced = game.advance_clock(loaded.match, seconds, at=now)
            transition = advanced.then(partial(self._advance, now=now + seconds, moved=False))
            self._commit(change_of(loaded, transition))
            return transition.match, now + seconds

        return retrying(partial(self._load, match_id), advancing)

    def settle_due(self, match_id: str) -> Match | None:
        """Settle what is owed to ``match_id`` (the sweeper's job); ``None`` if it is gone."""
        try:
            return self._settled(match_id).match
        except MatchNotFound:
            self.store.unschedule(match_id)
            return None

    # -- load, act, commit ------------------------------------------------------------

    def _act(self, match_id: str, token: str | None, guards: Guards, action: Action) -> Moved:
        """Load (the worker's cached copy first), act, commit; see :mod:`service.referee`.
        A match the worker holds no copy of is read as a view reads it (a tracked read, no
        script): the commit checks the version and the clock, and a refusal judged on it is
        judged again on a fresh load, as on a cached copy."""
        first = self.store.cached(match_id)
        if first is None:
            first = self._load(match_id, reading=True)
        return retrying(
            partial(self._load, match_id),
            partial(self._move, match_id, token, guards, action),
            first=first,
            take_answer=True,
        )

    def _move(
        self, match_id: str, token: str | None, guards: Guards, action: Action, loaded: Loaded
    ) -> Moved:
        """One attempt of :meth:`_act` on ``loaded``; raise Reload when a refusal was judged on
        a cached copy, Stale when the commit lost a race."""
        try:  # on every copy: a seat's token may have been replaced meanwhile
            seat = self._seat(match_id, loaded.seats, token)
        except BadToken:
            if loaded.fresh:
                raise
            raise Reload from None
        now = game_now(loaded)
        try:
            guards.require_version(loaded.match.version)
            settled = self._advance(loaded.match, now, False)
            guards.require_version(settled.match.version, moved=bool(settled.events))
            # what time moved the match on first (nearly always nothing), then the move
            transition = settled.joined(self._apply(action, settled.match, seat, now))
        except (game.GameError, IllegalTurn, StaleVersion):
            if not loaded.fresh:  # judged on a cached copy: judge again on a fresh one
                raise Reload from None
            kept = self._kept(loaded, seat, guards)
            if kept is not None:  # a resent request: its first answer
                return self._replay(kept, guards)
            self._settle_before_refusal(loaded)
            raise
        receipt = None
        if guards.idempotency is not None:
            view = game.private_view(transition.match, seat, now=now)
            drawn = tuple(tile.code for tile in transition.drawn)
            kept = Receipt(guards.idempotency.fingerprint, transition.match.version, drawn, view)
            receipt = (seat, guards.idempotency.key, kept)
        replayed = self._commit(
            change_of(loaded, transition, receipt=receipt, guarded=guards.versioned)
        )
        if replayed is not None:
            return self._replay(replayed, guards)
        if receipt is not None:
            return Moved.kept(receipt[2])
        return moved(
            transition.match.version,
            partial(game.private_view, transition.match, seat, now=now),
            tuple(tile.code for tile in transition.drawn) if transition.drawn else (),
            False,
        )

    def _kept(self, loaded: Loaded, seat: int, guards: Guards) -> Receipt | None:
        """The first answer kept for the move's Idempotency-Key, if any."""
        if guards.idempotency is None:
            return None
        return self.store.receipt(loaded.match.id, seat, guards.idempotency.key)

    def _settle_before_refusal(self, loaded: Loaded) -> None:
        """What time owes the match stands, even when the move is refused."""
        settled = self._advance(loaded.match, game_now(loaded), False)
        if settled.events:
            with contextlib.suppress(Stale):  # someone else settled it
                self._commit(change_of(loaded, settled))

    def _replay(self, kept: Receipt, guards: Guards) -> Moved:
        if guards.idempotency is None or kept.fingerprint != guards.idempotency.fingerprint:
            raise IdempotencyMismatch(
                "this Idempotency-Key was used for a different request; use a new key"
            )
        return Moved.kept(kept, replayed=True)

    def _apply(self, action: Action, match: Match, seat: int, now: float) -> Transition:
        """The move, then what it leaves owed (``acted.then(advance)``, without a function made
        for it)."""
        acted = action(match, seat, now)
        return acted.joined(self._advance(acted.match, now, True))

    def _change(self, match_id: str, decide: Decision) -> Loaded:
        """Load the settled match, ``decide`` the transition and seat digests, commit them
        (nothing when there are no events), again on the fresh state after a race; return
        the match as it is after."""

        def changing(loaded: Loaded) -> Loaded:
            transition, seats = decide(loaded)
            return self._commit_on(loaded, transition, seats=seats)

        return retrying(partial(self._settled, match_id), changing)

    def _settled(
        self, match_id: str, *, reading: bool = False, newer_than: int | None = None
    ) -> Loaded:
        """Load the match and commit whatever time and bots owe it by now; ``reading``, from
        the worker's copy of the stored version with its estimate of the clock (a commit is
        then checked against the shared clock)."""
        return retrying(
            partial(self._load, match_id, reading=reading, newer_than=newer_than),
            lambda loaded: self._commit_on(
                loaded, self._advance(loaded.match, game_now(loaded), False)
            ),
        )

    def _commit_on(
        self, loaded: Loaded, transition: Transition, *, seats: tuple[str, ...] | None = None
    ) -> Loaded:
        """Commit ``transition``, computed on ``loaded``, unless it has no events; the match as
        it is after. Raise Stale."""
        if not transition.events:
            return loaded
        after = loaded.seats if seats is None else seats
        self._commit(change_of(loaded, transition, seats=after))
        return Loaded(transition.match, after, loaded.now)

    def _commit(self, change: Change) -> Receipt | None:
        replayed = self.store.commit(change)
        if replayed is None and self.on_events is not None:
            self.on_events(change.events)
        return replayed

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

    def _advance(self, match: Match, now: float, moved: bool) -> Transition:
        """Settle deadlines, play bot turns, end a proven stalemate (see game.advance)."""
        return game.advance(match, now=now, moved=moved, autoplay=self.autoplay)

    def _redeal_rng(self, match: Match) -> random.Random:
        """A redeal's shuffle: reproducible in a seeded match, and another at each version."""
        if match.seed is None:
            return secrets.SystemRandom()
        return random.Random(f"{match.seed}:{match.game_number}:redeal:{match.version}")

    def _rng(self, seed: int | None, game_number: int) -> random.Random:
        if seed is None:
            return secrets.SystemRandom()
        return random.Random(f"{seed}:{game_number}")

    def _seat(self, match_id: str, seats: Sequence[str], token: str | None) -> int:
        return seat_of(match_id, seats, token, seats_of=self.store.seats_of)


def _played(match: Match, seat: int, now: float, *, table: game.Table) -> Transition:
    return game.play(match, seat, table, now=now)


def _drafted(match: Match, seat: int, now: float, *, table: game.Table) -> Transition:
    return game.save_draft(match, seat, table, now=now)


def _require_owner(match: Match, app: str) -> None:
    if match.owner != app:
        raise NotOwner("this match does not belong to the app whose key came with the request")
