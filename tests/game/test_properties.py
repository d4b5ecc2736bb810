"""Invariants over random legal sequences of plays, draws, passes, drafts and timeouts, under
per-turn and bank clocks (flag falls and time given included)."""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable, Iterator

from hypothesis import given, settings
from hypothesis import strategies as st

from service.game import (
    GameError,
    Match,
    PlayerSpec,
    Setup,
    Status,
    Transition,
    draw,
    event_from_dict,
    event_to_dict,
    from_dict,
    from_setup,
    give_time,
    new_match,
    next_game,
    pass_turn,
    play,
    public_view,
    save_draft,
    settle,
    to_dict,
)
from service.game.deal import shuffled_box
from service.game.state import sorted_rack
from service.rules import (
    FAILED_TURN_PENALTIES,
    Clock,
    ClockType,
    Delay,
    IllegalTurn,
    Rules,
    StalemateEnd,
    full_set,
    tiles_of,
)
from tests.game.support import NOW, all_tiles, candidate_plays, specs

ACTIONS = ("draw", "play", "pass", "draft", "wait", "give")


@st.composite
def clocks(draw_from: st.DrawFn) -> Clock:
    if draw_from(st.booleans()):
        return Clock()
    return Clock(
        ClockType.BANK,
        bank_seconds=draw_from(st.sampled_from([1, 45, 120, 600])),
        increment_seconds=draw_from(st.sampled_from([0, 2, 10])),
        delay_seconds=draw_from(st.sampled_from([0, 5, 10])),
        delay=draw_from(st.sampled_from(list(Delay))),
    )


@st.composite
def rule_sets(draw_from: st.DrawFn) -> Rules:
    return Rules(
        clock=draw_from(clocks()),
        joker_penalty=draw_from(st.sampled_from([30, 50])),
        turn_seconds=draw_from(st.sampled_from([0, 30, 60])),
        initial_meld_points=draw_from(st.sampled_from([0, 12, 30])),
        rounds=draw_from(st.integers(1, 2)),
        target_score=draw_from(st.sampled_from([None, 25, 80])),
        stalemate_end=draw_from(st.sampled_from(list(StalemateEnd))),
        redeal_duplicates=draw_from(st.booleans()),
        failed_turn_penalty=draw_from(st.sampled_from(FAILED_TURN_PENALTIES)),
    )


@st.composite
def starts(draw_from: st.DrawFn) -> Transition:
    """A new match, or a test set-up with small racks and a small pool."""
    rules = draw_from(rule_sets())
    seats = draw_from(st.integers(2, 4))
    seed = draw_from(st.integers(0, 2**32))
    if draw_from(st.booleans()):
        return new_match(
            "m", specs(seats), rules=rules, rng=random.Random(seed), now=NOW, seed=seed
        )
    box = shuffled_box(rules.tile_set, random.Random(seed))
    sizes = draw_from(st.lists(st.integers(1, 9), min_size=seats, max_size=seats))
    racks = []
    for size in sizes:
        racks.append(tuple(box[:size]))
        box = box[size:]
    pool = tuple(box[: draw_from(st.integers(0, 6))])
    melded = tuple(draw_from(st.lists(st.booleans(), min_size=seats, max_size=seats)))
    setup = Setup(tuple(racks), pool, (), melded, draw_from(st.integers(0, seats - 1)))
    players = [PlayerSpec(spec.name, bot=seat % 2 == 1) for seat, spec in enumerate(specs(seats))]
    return from_setup("m", players, rules=rules, setup=setup, now=NOW)


Step = tuple[Match, Transition, float]


def walk(start: Transition, choose: st.DataObject) -> Iterator[Step]:
    """Play a random match the way the service does: settle, then act; yield every step."""
    match, now = start.match, NOW
    yield start.match, start, now
    for _ in range(choose.draw(st.integers(5, 60), label="steps")):
        now += choose.draw(st.sampled_from([0, 1, 7, 29, 61, 200]), label="wait")
        settled = settle(match, now=now)
        yield match, settled, now
        match = settled.match
        if match.status is Status.FINISHED:
            return
        if match.status is Status.GAME_OVER:
            transition = next_game(match, now=now, rng=random.Random(match.version))
        else:
            transition = act(
                match, choose.draw(st.sampled_from(ACTIONS), label="action"), choose, now
            )
        yield match, transition, now
        match = transition.match


def act(match: Match, action: str, choose: st.DataObject, now: float) -> Transition:
    """Apply ``action`` when it is legal now; otherwise leave the match as it is."""
    seat = match.current_seat
    if action == "draw" and match.pool:
        return draw(match, seat, now=now)
    if action == "pass" and not match.pool:
        return pass_turn(match, seat, now=now, can_play=lambda *_: None)
    if action == "play":
        plays = candidate_plays(match, seat)
        if plays:
            return play(match, seat, choose.draw(st.sampled_from(plays)), now=now)
    if action == "give" and match.banks:
        to = choose.draw(st.sampled_from(match.in_game), label="to")
        if to != seat:
            return give_time(match, to, choose.draw(st.integers(1, 60)), by=seat, now=now)
    if action == "draft":
        rack = match.players[seat].rack
        extra = choose.draw(st.lists(st.sampled_from(rack), max_size=3, unique=True))
        return save_draft(match, seat, (*reversed(match.table), tuple(extra)), now=now)
    return Transition(match, ())


def refused_moves(match: Match, now: float) -> list[Callable[[], Transition]]:
    """Moves the rules refuse in ``match``: another seat, a bad set, a lost tile, a bad pass."""
    seat = match.current_seat
    rack = match.players[seat].rack
    moves = [
        lambda: draw(match, (seat + 1) % len(match.players), now=now),
        lambda: play(match, seat, (*match.table, rack[:1]), now=now),
        lambda: play(match, seat, match.table, now=now),
        lambda: pass_turn(match, seat, now=now, can_play=lambda *_: True),
        lambda: pass_turn(match, seat, now=now) if match.pool else draw(match, seat, now=now),
    ]
    if match.table:
        moves.append(lambda: save_draft(match, seat, match.table[1:], now=now))
    return moves


@settings(max_examples=50, deadline=None)
@given(start=starts(), choose=st.data())
def test_tiles_are_never_created_or_lost(start: Transition, choose: st.DataObject) -> None:
    expected = all_tiles(start.match)
    for _, transition, _ in walk(start, choose):
        after = transition.match
        if any(record.type == "game_started" for record in transition.events):
            expected = (
                all_tiles(after) if after.game_number == 1 else full_set(after.rules.tile_set)
            )
        assert all_tiles(after) == expected
        if after.draft is not None:
            assert not tiles_of(after.table) - tiles_of(after.draft)
            added = tiles_of(after.draft) - tiles_of(after.table)
            assert not added - Counter(after.players[after.current_seat].rack)
        for player in after.players:
            assert player.rack == sorted_rack(player.rack)


@settings(max_examples=40, deadline=None)
@given(start=starts(), choose=st.data())
def test_a_refused_move_leaves_the_match_unchanged(
    start: Transition, choose: st.DataObject
) -> None:
    for _, transition, now in walk(start, choose):
        match = transition.match
        if match.status is not Status.PLAYING:
            continue
        snapshot = to_dict(match)
        for move in refused_moves(match, now):
            try:
                move()
            except (GameError, IllegalTurn):
                pass
            else:
                raise AssertionError("a move the rules forbid was accepted")
        assert to_dict(match) == snapshot


@settings(max_examples=50, deadline=None)
@given(start=starts(), choose=st.data())
def test_the_scores_of_every_finished_game_sum_to_zero(
    start: Transition, choose: st.DataObject
) -> None:
    for _, transition, _ in walk(start, choose):
        after = transition.match
        for result in after.outcomes:
            assert sum(result.outcome.scores) == 0
        assert sum(player.score for player in after.players) == 0
        assert sum(player.games_won for player in after.players) == len(after.outcomes)


@settings(max_examples=50, deadline=None)
@given(start=starts(), choose=st.data())
def test_every_state_and_event_round_trips_through_storage(
    start: Transition, choose: st.DataObject
) -> None:
    for _, transition, now in walk(start, choose):
        after = transition.match
        assert from_dict(json.loads(json.dumps(to_dict(after)))) == after
        for record in transition.events:
            assert event_from_dict(json.loads(json.dumps(event_to_dict(record)))) == record
        json.dumps(public_view(after, now=now))


@settings(max_examples=50, deadline=None)
@given(start=starts(), choose=st.data())
def test_each_event_is_one_version_and_turns_always_have_a_future_deadline(
    start: Transition, choose: st.DataObject
) -> None:
    for before, transition, now in walk(start, choose):
        after = transition.match
        first = 1 if transition is start else before.version + 1
        assert [record.version for record in transition.events] == list(
            range(first, after.version + 1)
        )
        if after.status is Status.PLAYING:
            no_limit = after.rules.turn_seconds == 0 and not after.rules.clock.is_bank
            assert (after.turn_deadline is None) == no_limit
            assert after.turn_deadline is None or after.turn_deadline > now
        clock = {"used", "increment", "time_left"} if after.banks else set()
        for record in transition.events:
            if record.type == "drew":
                assert set(record.data) == {"count", "next_seat", "turn_deadline"} | clock


@settings(max_examples=60, deadline=None)
@given(start=starts(), choose=st.data())
def test_banks_never_go_negative_and_time_is_conserved(
    start: Transition, choose: st.DataObject
) -> None:
    # used + left + given == bank + increments, for each seat of each game, from the log
    used: Counter[int] = Counter()
    earned: Counter[int] = Counter()
    for _, transition, now in walk(start, choose):
        for record in transition.events:
            if record.type == "game_started":
                used, earned = Counter(), Counter()
            elif record.type == "time_given":
                assert record.seat is not None
                earned[record.seat] += int(record.data["seconds"])  # type: ignore[call-overload]
            elif "used" in record.data:
                assert record.seat is not None
                used[record.seat] += float(record.data["used"])  # type: ignore[arg-type]
                earned[record.seat] += int(record.data["increment"])  # type: ignore[call-overload]
        after = transition.match
        if not after.rules.clock.is_bank or after.game_number == 0:
            continue
        bank = after.rules.clock.bank_seconds
        for seat, left in enumerate(after.banks):
            assert left >= 0
            assert abs(used[seat] + left - (bank + earned[seat])) < 1e-6
        if after.status is Status.PLAYING:
            assert after.current_seat not in after.flagged
            assert after.turn_deadline is not None and after.turn_deadline > now
