"""A hypothesis state machine over the pure game (service.game): legal and illegal plays,
draws, passes, drafts, next games, settling and advancing (bots, stalemate proofs), by any seat
(valid or not), with random tables and time that only moves forward.

After every step:
- the tiles are conserved: racks + pool + table are what was dealt (the whole box from game 2);
- the version is the number of events so far, and each step's events carry the versions
  right after the last one, in order;
- a refused action raised (GameError or IllegalTurn) and left the match exactly as it was;
- every finished game's scores sum to zero, and so do the totals;
- a seat's view shows its own rack and nothing of another rack or of the pool: it is the
  same whatever the other racks and the pool hold;
- racks stay sorted; a draft keeps the table's tiles and adds only the player's own.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

import service.game.timers as timers
import service.game.turns as turns
from service.game import (
    Autoplay,
    GameError,
    Match,
    PlayerSpec,
    Setup,
    Status,
    Transition,
    advance,
    draw,
    from_setup,
    new_match,
    next_game,
    pass_turn,
    play,
    private_view,
    public_view,
    save_draft,
    settle,
    to_dict,
)
from service.game.deal import shuffled_box
from service.game.state import sorted_rack
from service.rules import (
    COLOURS,
    IllegalTurn,
    Rules,
    StalemateEnd,
    Tile,
    TileSet,
    check_turn,
    full_set,
    parse_tiles,
    tiles_of,
)
from service.rules.solver import solve
from tests.game.support import AUTOPLAYS, NOW, all_tiles, candidate_plays, specs

NUMBER_COLOURS = [colour.value for colour in COLOURS]


# --- random starts and random tables --------------------------------------------------------


def random_sets(rng: random.Random, box: Counter[Tile], count: int) -> list[tuple[Tile, ...]]:
    """Up to ``count`` valid sets (runs and groups, some with a joker) taken out of ``box``."""
    sets = []
    for _ in range(count * 3):
        if len(sets) == count:
            break
        if rng.random() < 0.5:
            number = rng.randint(1, 13)
            colours = rng.sample(NUMBER_COLOURS, rng.choice([3, 3, 4]))
            codes = [f"{colour}{number}" for colour in colours]
        else:
            colour = rng.choice(NUMBER_COLOURS)
            length = rng.randint(3, 5)
            start = rng.randint(1, 14 - length)
            codes = [f"{colour}{n}" for n in range(start, start + length)]
        if rng.random() < 0.2:
            codes[rng.randrange(len(codes))] = "J"
        tiles = parse_tiles(codes)
        if Counter(tiles) - box:
            continue  # the box has no copy left
        box.subtract(Counter(tiles))
        sets.append(tiles)
    return sets


@st.composite
def starts(draw_from: st.DrawFn) -> Transition:
    """A new match (some seats bots), or a set-up with small racks, a small pool, a table."""
    rules = Rules(
        turn_seconds=draw_from(st.sampled_from([0, 30, 60])),
        initial_meld_points=draw_from(st.sampled_from([0, 12, 30])),
        rounds=draw_from(st.integers(1, 2)),
        target_score=draw_from(st.sampled_from([None, 40])),
        stalemate_end=draw_from(st.sampled_from(list(StalemateEnd))),
        tile_set=draw_from(st.sampled_from([TileSet.STANDARD, TileSet.STANDARD, TileSet.XP])),
    )
    count = draw_from(st.integers(2, 4))
    bots = draw_from(st.lists(st.booleans(), min_size=count, max_size=count))
    players = [PlayerSpec(spec.name, bot=bot) for spec, bot in zip(specs(count), bots, strict=True)]
    seed = draw_from(st.integers(0, 2**32 - 1))
    rng = random.Random(seed)
    if draw_from(st.sampled_from([True, False, False])):
        return new_match("m", players, rules=rules, rng=rng, now=NOW, seed=seed)
    box = Counter(full_set(rules.tile_set))
    table = random_sets(rng, box, draw_from(st.integers(0, 4)))
    # Some racks are whole sets (a game can end by going out), plus a stray tile or two.
    made = [
        [tile for tiles in random_sets(rng, box, rng.randint(1, 2)) for tile in tiles]
        if draw_from(st.booleans())
        else []
        for _ in range(count)
    ]
    remaining = [tile for tile in shuffled_box(rules.tile_set, rng) if _take(box, tile)]
    racks = []
    for seat in range(count):
        size = draw_from(st.sampled_from([0, 1, 2, 3, 4, 6, 10] if made[seat] else [1, 2, 3, 6]))
        racks.append((*made[seat], *remaining[:size]))
        remaining = remaining[size:]
    pool = tuple(remaining[: draw_from(st.sampled_from([0, 0, 1, 2, 5, 8]))])
    melded = tuple(draw_from(st.lists(st.booleans(), min_size=count, max_size=count)))
    setup = Setup(tuple(racks), pool, tuple(table), melded, draw_from(st.integers(0, count - 1)))
    return from_setup("m", players, rules=rules, setup=setup, now=NOW, seed=seed)


def _take(box: Counter[Tile], tile: Tile) -> bool:
    """Take ``tile`` out of ``box`` if a copy is left there."""
    if box[tile] <= 0:
        return False
    box[tile] -= 1
    return True


# --- the machine ------------------------------------------------------------------------------


class MatchMachine(RuleBasedStateMachine):
    """One match, driven by any action from any seat at any time."""

    def __init__(self) -> None:
        super().__init__()
        self.match: Match | None = None
        self.now = NOW
        self.expected: Counter[Tile] = Counter()
        self.events = 0
        self.refused = 0

    # --- bookkeeping ------------------------------------------------------------------------

    def apply(self, transition: Transition, *, first: bool = False) -> None:
        """Adopt ``transition`` after checking its events' versions and the tiles it holds."""
        before = 0 if first else self.state.version
        after = transition.match
        assert [e.version for e in transition.events] == list(
            range(before + 1, before + 1 + len(transition.events))
        ), [(e.type, e.version) for e in transition.events]
        assert after.version == before + len(transition.events)
        self.events += len(transition.events)
        for event in transition.events:
            assert event.at <= self.now, f"an event in the future: {event}"
            if event.type == "game_started":
                self.expected = (
                    all_tiles(after)
                    if event.data["game_number"] == 1
                    else full_set(after.rules.tile_set)
                )
        self.match = after

    def attempt(self, action: Callable[[], Transition]) -> None:
        """Run ``action``; adopt it if accepted, else check that nothing changed."""
        snapshot = to_dict(self.state)
        held = self.state
        try:
            transition = action()
        except (GameError, IllegalTurn):
            self.refused += 1
            assert to_dict(self.state) == snapshot, "a refused action changed the match"
            assert self.state is held
            return
        assert to_dict(held) == snapshot, "an action changed the match it was given"
        self.apply(transition)

    @property
    def state(self) -> Match:
        assert self.match is not None
        return self.match

    def seats(self) -> st.SearchStrategy[int]:
        """Any seat, a seat the match does not have, and most often the one to play."""
        count = len(self.state.players)
        return st.sampled_from([self.state.current_seat] * count + list(range(-1, count + 1)))

    # --- rules ------------------------------------------------------------------------------

    @initialize(start=starts())
    def begin(self, start: Transition) -> None:
        self.apply(start, first=True)

    @rule(seconds=st.sampled_from([0, 0.5, 1, 7, 29, 30, 61, 200]))
    def time_passes(self, seconds: float) -> None:
        self.now += seconds

    @rule()
    def settle_deadlines(self) -> None:
        self.attempt(lambda: settle(self.state, now=self.now))

    @rule(moved=st.booleans(), autoplay=st.sampled_from(AUTOPLAYS))
    def advance_bots_and_time(self, moved: bool, autoplay: Autoplay) -> None:
        self.attempt(lambda: advance(self.state, now=self.now, moved=moved, autoplay=autoplay))

    @precondition(lambda self: self.state.status is Status.PLAYING)
    @rule(data=st.data())
    def play_a_legal_move(self, data: st.DataObject) -> None:
        match = self.state
        plays = candidate_plays(match, match.current_seat)
        if not plays:
            return
        table = data.draw(st.sampled_from(plays), label="legal table")
        self.attempt(lambda: play(match, match.current_seat, table, now=self.now))

    @precondition(lambda self: self.state.status is Status.PLAYING)
    @rule()
    def play_the_solvers_best(self) -> None:
        """The solver's best play (most tiles placed: often the whole rack) is accepted."""
        match = self.state
        player = match.players[match.current_seat]
        best = solve(
            match.table,
            Counter(player.rack),
            melded=player.melded,
            rules=match.rules,
        )
        if not best.found:
            return
        on_time = match.turn_deadline is None or self.now < match.turn_deadline
        self.attempt(lambda: play(match, match.current_seat, best.table, now=self.now))
        assert (self.state.version > match.version) == on_time, "the solver's play was refused"

    @rule(data=st.data())
    def play_a_random_table(self, data: st.DataObject) -> None:
        """A table made of the table's sets and the rack's tiles, cut and mixed at random:
        mostly illegal; when accepted, it must be one the rules accept."""
        match = self.state
        seat = data.draw(self.seats(), label="seat")
        rng = random.Random(data.draw(st.integers(0, 2**32 - 1), label="shape"))
        table = random_table(match, seat, rng)
        legal_before = seat == match.current_seat and match.status is Status.PLAYING
        snapshot_version = match.version
        self.attempt(lambda: play(match, seat, table, now=self.now))
        if self.state.version != snapshot_version:  # accepted: it had to be legal
            assert legal_before
            player = match.players[seat]
            assert not check_turn(
                match.table, table, Counter(player.rack), melded=player.melded, rules=match.rules
            )

    @rule(data=st.data())
    def draw_from_any_seat(self, data: st.DataObject) -> None:
        seat = data.draw(self.seats(), label="seat")
        match = self.state
        self.attempt(lambda: draw(match, seat, now=self.now))

    @rule(data=st.data(), answer=st.sampled_from([True, False, None]))
    def pass_from_any_seat(self, data: st.DataObject, answer: bool | None) -> None:
        seat = data.draw(self.seats(), label="seat")
        match = self.state
        self.attempt(lambda: pass_turn(match, seat, now=self.now, can_play=lambda *_: answer))

    @rule(data=st.data())
    def share_a_draft(self, data: st.DataObject) -> None:
        match = self.state
        seat = data.draw(self.seats(), label="seat")
        rng = random.Random(data.draw(st.integers(0, 2**32 - 1), label="shape"))
        table = None if rng.random() < 0.15 else random_table(match, seat, rng)
        self.attempt(lambda: save_draft(match, seat, table, now=self.now))

    @rule(seed=st.integers(0, 1000))
    def start_the_next_game(self, seed: int) -> None:
        match = self.state
        self.attempt(lambda: next_game(match, now=self.now, rng=random.Random(seed)))

    # --- invariants -------------------------------------------------------------------------

    @invariant()
    def tiles_are_conserved(self) -> None:
        if self.match is None:
            return
        assert all_tiles(self.state) == self.expected
        for player in self.state.players:
            assert player.rack == sorted_rack(player.rack)

    @invariant()
    def the_version_counts_the_events(self) -> None:
        if self.match is not None:
            assert self.state.version == self.events

    @invariant()
    def scores_sum_to_zero(self) -> None:
        if self.match is None:
            return
        for result in self.state.outcomes:
            assert sum(result.outcome.scores) == 0, result
        assert sum(player.score for player in self.state.players) == 0
        assert (self.state.status is Status.FINISHED) == (self.state.winner is not None)

    @invariant()
    def a_draft_holds_the_table_and_own_tiles(self) -> None:
        if self.match is None or self.state.draft is None:
            return
        match = self.state
        assert match.status is Status.PLAYING
        assert not tiles_of(match.table) - tiles_of(match.draft)
        added = tiles_of(match.draft) - tiles_of(match.table)
        assert not added - Counter(match.players[match.current_seat].rack)

    @invariant()
    def views_never_show_another_rack(self) -> None:
        if self.match is None:
            return
        match = self.state
        public = public_view(match, now=self.now)
        assert "rack" not in public and "pool" not in public
        assert all("rack" not in player for player in public["players"])
        for seat, player in enumerate(match.players):
            view = private_view(match, seat, now=self.now)
            assert view["rack"] == [tile.code for tile in player.rack]
            others = reshuffled_others(match, seat, random.Random(seat + match.version))
            assert private_view(others, seat, now=self.now) == view
            assert public_view(others, now=self.now) == public


def random_table(match: Match, seat: int, rng: random.Random) -> list[tuple[Tile, ...]]:
    """The table's sets, cut, joined, dropped or mixed with tiles of ``seat``'s rack (or of the
    pool, which nobody holds), in random ways."""
    sets = [list(tiles) for tiles in match.table]
    rack = list(match.players[seat].rack) if 0 <= seat < len(match.players) else []
    rng.shuffle(sets)
    for _ in range(rng.randint(0, 3)):
        roll = rng.random()
        if roll < 0.3 and rack:
            sets.append(rng.sample(rack, k=min(len(rack), rng.randint(1, 4))))
        elif roll < 0.45 and sets:
            target = rng.choice(sets)
            if rack:
                target.insert(rng.randint(0, len(target)), rng.choice(rack))
        elif roll < 0.6 and sets:
            sets.pop(rng.randrange(len(sets)))
        elif roll < 0.75 and len(sets) >= 2:
            first = sets.pop()
            sets[-1] = sets[-1] + first
        elif roll < 0.85 and sets:
            target = rng.choice(sets)
            if len(target) > 1:
                cut = rng.randint(1, len(target) - 1)
                sets.remove(target)
                sets += [target[:cut], target[cut:]]
        elif match.pool:
            sets.append(list(match.pool[:3]))
    return [tuple(tiles) for tiles in sets]


def reshuffled_others(match: Match, seat: int, rng: random.Random) -> Match:
    """``match`` with every other rack and the pool dealt again from their own tiles at random
    (same sizes): what ``seat`` may see must not change."""
    hidden = [tile for other, p in enumerate(match.players) if other != seat for tile in p.rack]
    hidden += list(match.pool)
    rng.shuffle(hidden)
    players = []
    for other, player in enumerate(match.players):
        if other == seat:
            players.append(player)
            continue
        taken, hidden = hidden[: len(player.rack)], hidden[len(player.rack) :]
        players.append(replace(player, rack=sorted_rack(taken)))
    return replace(match, players=tuple(players), pool=tuple(hidden))


MatchMachine.TestCase.settings = settings(
    max_examples=50,
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
TestMatchMachine = MatchMachine.TestCase


def test_the_machine_catches_a_draw_that_creates_a_tile(monkeypatch: pytest.MonkeyPatch) -> None:
    """Not vacuous: with a draw that leaves the drawn tile in the pool too, the same machine
    (generation only, no shrinking, no example database) fails."""
    real = turns.take_from_pool

    def leaky(match: Match, seat: int, count: int) -> tuple[Match, tuple[Tile, ...]]:
        taken, drawn = real(match, seat, count)
        return replace(taken, pool=match.pool), drawn

    monkeypatch.setattr(turns, "take_from_pool", leaky)
    monkeypatch.setattr(timers, "take_from_pool", leaky)

    class Leaky(MatchMachine.TestCase):  # type: ignore[name-defined,misc]
        settings = settings(MatchMachine.TestCase.settings, phases=[Phase.generate], database=None)

    with pytest.raises(AssertionError):
        Leaky("runTest").runTest()
