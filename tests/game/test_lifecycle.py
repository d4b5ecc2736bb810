"""A match's life outside its turns: leaving (a bot takes the seat), canceling, rematches."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from dataclasses import replace
from functools import partial

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.game import (
    MAX_TURN_SECONDS,
    GameError,
    InvalidMatch,
    Match,
    MatchCanceled,
    NobodyToRematch,
    PlayerSpec,
    SeatIsBot,
    Setup,
    Status,
    Transition,
    UnknownSeat,
    WrongPhase,
    advance,
    cancel,
    draw,
    from_dict,
    from_setup,
    leave,
    new_match,
    next_game,
    owner_view,
    play,
    public_view,
    record_rematch,
    reissue_tokens,
    rematch,
    rematch_players,
    require_human,
    save_draft,
    summary,
    to_dict,
)
from service.game.codec import to_dict_format_1
from service.rules import Rules
from tests.game.support import (
    AUTOPLAYS,
    NOW,
    UNBOUNDED,
    all_tiles,
    set_up,
    table,
    tiles,
    types,
)
from tests.game.test_properties import act, starts

LATER = NOW + 5


def three_humans(**options: object) -> Match:
    return set_up(["R10 R11 R12 K1", "K2 K3 O7", "B5 B6 O9"], pool="O4 B9 K8 R1", **options)


def finished_after_one_game() -> Match:
    match = set_up(["R10 R11 R12", "K13 K12"], rules=Rules(target_score=20))
    finished = play(match, 0, table("R10 R11 R12"), now=LATER).match
    assert finished.status is Status.FINISHED
    return finished


# -- leaving ----------------------------------------------------------------------


def test_a_player_who_leaves_out_of_turn_is_replaced_by_a_bot_keeping_rack_and_score() -> None:
    match = three_humans()
    transition = leave(match, 1, now=LATER)
    after = transition.match
    assert types(transition) == ["player_left"]
    assert transition.events[0].seat == 1 and transition.events[0].data == {"name": "Bo"}
    assert after.players[1].bot and after.players[1].left
    assert after.players[1].rack == match.players[1].rack
    assert after.players[1].score == match.players[1].score
    assert after.current_seat == 0 and after.turn_deadline == match.turn_deadline
    assert after.status is Status.PLAYING and after.version == match.version + 1


def test_a_player_who_leaves_in_turn_has_the_bot_play_that_turn_at_once() -> None:
    match = save_draft(three_humans(), 0, table("R10 R11 R12"), now=LATER).match
    left = leave(match, 0, now=LATER + 1)
    assert left.match.draft is None
    assert left.match.turn_started == LATER + 1
    played = left.then(lambda m: advance(m, now=LATER + 1, moved=True, autoplay=UNBOUNDED))
    assert types(played)[:2] == ["player_left", "played"]  # R10 R11 R12: a 33-point meld
    assert played.events[1].seat == 0 and played.events[1].at == LATER + 1
    assert played.events[1].data["table"] == [["R10", "R11", "R12"]]
    assert played.match.current_seat == 1


def test_the_last_human_leaving_ends_the_match_as_abandoned_with_no_winner() -> None:
    match = set_up(["R10 R11 R12 K1", "K2 K3"], pool="O4 B9")
    match = match.with_player(1, match.players[1].__class__("Bot", True, match.players[1].rack))
    transition = leave(match, 0, now=LATER)
    after = transition.match
    assert types(transition) == ["player_left", "game_over", "match_finished"]
    assert after.status is Status.FINISHED and after.winner is None
    view = public_view(after, now=LATER)
    assert view["last_outcome"] == {
        "game_number": 1,
        "reason": "abandoned",
        "ending": "abandoned",
        "winner": None,
        "scores": [0, 0],
    }
    assert view["winner"] is None and view["players"][0]["left"] is True
    assert all_tiles(after) == all_tiles(match)


def test_the_last_human_leaving_between_games_abandons_the_next_game_before_its_deal() -> None:
    match = set_up(["R10 R11 R12", "K13 K12"], rules=Rules(rounds=2))
    over = play(match, 0, table("R10 R11 R12"), now=LATER).match
    assert over.status is Status.GAME_OVER
    first = leave(over, 0, now=LATER + 1).match
    assert first.status is Status.GAME_OVER
    transition = leave(first, 1, now=LATER + 2)
    after = transition.match
    assert types(transition) == ["player_left", "game_over", "match_finished"]
    assert after.status is Status.FINISHED and after.winner is None
    assert after.game_number == 2 and after.outcomes[-1].game_number == 2
    assert [p.score for p in after.players] == [25, -25]  # game 1's scores stand


def test_leaving_twice_changes_nothing_the_second_time() -> None:
    once = leave(three_humans(), 2, now=LATER).match
    again = leave(once, 2, now=LATER + 1)
    assert again.events == () and again.match == once


def test_a_seat_a_bot_plays_from_the_start_cannot_leave() -> None:
    match = set_up(["R10 R11 R12 K1", "K2 K3"], pool="O4 B9")
    bot = match.with_player(1, match.players[1].__class__("Bot", True, match.players[1].rack))
    with pytest.raises(SeatIsBot):
        leave(bot, 1, now=LATER)
    with pytest.raises(UnknownSeat):
        leave(bot, 2, now=LATER)


def test_nobody_can_leave_a_finished_match_but_a_seat_that_left_may_say_so_again() -> None:
    finished = finished_after_one_game()
    with pytest.raises(WrongPhase):
        leave(finished, 1, now=LATER)
    left = leave(three_humans(), 1, now=LATER).match
    abandoned = leave(leave(left, 0, now=LATER).match, 2, now=LATER).match
    assert abandoned.status is Status.FINISHED
    assert leave(abandoned, 1, now=LATER).events == ()


def test_require_human_refuses_a_seat_that_left() -> None:
    left = leave(three_humans(), 1, now=LATER).match
    require_human(left, 0)
    with pytest.raises(SeatIsBot, match="left"):
        require_human(left, 1)


# -- canceling --------------------------------------------------------------------


def test_a_canceled_match_refuses_every_later_move() -> None:
    match = three_humans()
    transition = cancel(match, now=LATER)
    canceled = transition.match
    assert types(transition) == ["match_canceled"]
    assert canceled.status is Status.CANCELED and canceled.turn_deadline is None
    view = public_view(canceled, now=LATER)
    assert view["status"] == "canceled" and view["current_seat"] is None
    with pytest.raises(MatchCanceled):
        draw(canceled, 0, now=LATER)
    with pytest.raises(MatchCanceled):
        play(canceled, 0, table("R10 R11 R12"), now=LATER)
    with pytest.raises(MatchCanceled):
        next_game(canceled, now=LATER, rng=random.Random(1))
    with pytest.raises(WrongPhase):
        leave(canceled, 1, now=LATER)
    assert advance(canceled, now=LATER + 10_000, autoplay=UNBOUNDED).events == ()


def test_canceling_twice_changes_nothing_and_a_finished_match_cannot_be_canceled() -> None:
    canceled = cancel(three_humans(), now=LATER).match
    assert cancel(canceled, now=LATER + 1).events == ()
    finished = finished_after_one_game()
    with pytest.raises(WrongPhase):
        cancel(finished, now=LATER)


# -- rematch ----------------------------------------------------------------------


def finished_with_refs() -> Match:
    """An app's match that ended with Ann going out after Bo had left (a bot plays Bo's seat)."""
    players = [PlayerSpec("Ann", ref="u-1"), PlayerSpec("Bo", ref="u-2"), PlayerSpec("Bot", True)]
    setup = Setup(
        (tiles("R10 R11 R12"), tiles("K13 K12"), tiles("O1 O2")), tiles("B9 B8"), (), None, 0
    )
    rules = Rules(turn_seconds=86400, target_score=20)
    started = from_setup("old", players, rules=rules, setup=setup, now=NOW, owner="app").match
    left = leave(started, 1, now=LATER).match
    finished = play(left, 0, table("R10 R11 R12"), now=LATER).match
    assert finished.status is Status.FINISHED
    return finished


def test_a_match_every_person_left_has_no_rematch() -> None:
    players = [PlayerSpec("Ann", ref="u-1"), PlayerSpec("Bo", ref="u-2"), PlayerSpec("Bot", True)]
    started = new_match(
        "old", players, rules=Rules(turn_seconds=86400), rng=random.Random(3), now=NOW, owner="app"
    ).match
    abandoned = leave(leave(started, 1, now=LATER).match, 0, now=LATER).match
    assert abandoned.status is Status.FINISHED
    with pytest.raises(NobodyToRematch):
        rematch(abandoned, "new", rng=random.Random(4), now=LATER + 1)


def test_a_rematch_keeps_names_refs_bots_rules_and_owner_and_seats_that_left_stay_bots() -> None:
    old = finished_with_refs()
    assert old.status is Status.FINISHED
    assert rematch_players(old) == [
        PlayerSpec("Ann", False, "u-1"),
        PlayerSpec("Bo", True, "u-2"),
        PlayerSpec("Bot", True, None),
    ]
    new = rematch(old, "new", rng=random.Random(4), now=LATER + 1).match
    assert new.id == "new" and new.rules == old.rules and new.owner == "app"
    assert [(p.name, p.ref, p.bot, p.left) for p in new.players] == [
        ("Ann", "u-1", False, False),
        ("Bo", "u-2", True, False),
        ("Bot", None, True, False),
    ]
    assert new.status is Status.PLAYING and new.version > 0


def test_only_a_finished_match_has_a_rematch_and_it_is_recorded_once() -> None:
    with pytest.raises(WrongPhase, match="playing"):
        rematch(three_humans(), "new", rng=random.Random(1), now=LATER)
    with pytest.raises(WrongPhase):
        record_rematch(three_humans(), "new", now=LATER)
    old = finished_with_refs()
    recorded = record_rematch(old, "new", now=LATER)
    assert types(recorded) == ["rematch_created"]
    assert recorded.events[0].data == {"rematch_id": "new"}
    assert public_view(recorded.match, now=LATER)["rematch_id"] == "new"
    assert record_rematch(recorded.match, "new", now=LATER).events == ()
    with pytest.raises(WrongPhase, match="new"):
        record_rematch(recorded.match, "other", now=LATER)


def test_new_tokens_are_a_version_of_their_own_and_only_for_human_seats() -> None:
    left = leave(three_humans(), 1, now=LATER).match
    reissued = reissue_tokens(left, (0, 2), now=LATER)
    assert types(reissued) == ["tokens_reissued"]
    assert reissued.events[0].data == {"seats": [0, 2]}
    assert reissued.match.version == left.version + 1
    with pytest.raises(SeatIsBot):
        reissue_tokens(left, (1,), now=LATER)


def test_a_listing_item_names_every_player_with_ref_and_whose_turn_it_is() -> None:
    players = [PlayerSpec("Ann", ref="u-1"), PlayerSpec("Bot", True)]
    match = new_match("m", players, rules=Rules(), rng=random.Random(1), now=NOW).match
    item = summary(match, updated_at=NOW)
    assert item["id"] == "m" and item["status"] == "playing" and item["updated_at"] == NOW
    assert item["current_seat"] == match.current_seat and item["version"] == match.version
    assert item["players"][0] == {
        "seat": 0,
        "name": "Ann",
        "ref": "u-1",
        "bot": False,
        "left": False,
    }


# -- refs, owner and long turns ---------------------------------------------------


def test_refs_are_shown_only_in_the_owners_view_and_never_in_an_event() -> None:
    players = [PlayerSpec("Ann", ref="user-77"), PlayerSpec("Bo", ref="user-78")]
    created = new_match("m", players, rules=Rules(), rng=random.Random(1), now=NOW, owner="app")
    assert "user-77" not in json.dumps(public_view(created.match, now=NOW))
    assert "user-77" not in json.dumps([event.data for event in created.events])
    assert [p["ref"] for p in owner_view(created.match, now=NOW)["players"]] == [
        "user-77",
        "user-78",
    ]


def test_owner_refs_and_rematch_round_trip_and_older_states_still_read() -> None:
    old = record_rematch(finished_with_refs(), "new", now=LATER).match
    assert from_dict(json.loads(json.dumps(to_dict(old)))) == old
    stored = to_dict_format_1(three_humans())  # format 1, as stored before these were added
    for key in ("owner", "rematch_id"):
        del stored[key]
    for player in stored["players"]:
        del player["left"], player["ref"]
    assert from_dict(stored) == replace(three_humans(), deals=())  # nor did it keep deals


def test_a_turn_may_last_up_to_seven_days() -> None:
    week = Rules(turn_seconds=MAX_TURN_SECONDS)
    players = [PlayerSpec("A"), PlayerSpec("B")]
    match = new_match("m", players, rules=week, rng=random.Random(1), now=NOW).match
    assert MAX_TURN_SECONDS == 604800 and match.turn_deadline == NOW + 604800
    with pytest.raises(InvalidMatch, match="7 days"):
        new_match(
            "m",
            [PlayerSpec("A"), PlayerSpec("B")],
            rules=Rules(turn_seconds=MAX_TURN_SECONDS + 1),
            rng=random.Random(1),
            now=NOW,
        )


def test_two_seats_cannot_have_the_same_ref() -> None:
    with pytest.raises(InvalidMatch, match="same ref"):
        new_match(
            "m",
            [PlayerSpec("A", ref="u"), PlayerSpec("B", ref="u")],
            rules=Rules(),
            rng=random.Random(1),
            now=NOW,
        )


def test_a_ref_must_be_1_to_128_characters() -> None:
    for ref in ("", "x" * 129):
        with pytest.raises(InvalidMatch, match="ref"):
            new_match(
                "m",
                [PlayerSpec("A", ref=ref), PlayerSpec("B")],
                rules=Rules(),
                rng=random.Random(1),
                now=NOW,
            )


# -- properties -------------------------------------------------------------------

LIFE = ("leave", "leave", "cancel", "draw", "play", "wait")


def lives(start: Transition, choose: st.DataObject) -> Iterator[tuple[Match, Transition]]:
    """A random match in which players leave (and its owner may cancel), as the service runs it:
    every step is followed by ``advance`` (deadlines, bot turns)."""
    match, now = start.match, NOW
    autoplay = choose.draw(st.sampled_from(AUTOPLAYS), label="solver budgets")
    for _ in range(choose.draw(st.integers(3, 30), label="steps")):
        now += choose.draw(st.sampled_from([0, 1, 61]), label="wait")
        settled = advance(match, now=now, autoplay=autoplay)
        yield match, settled
        match = settled.match
        if match.is_over:
            return
        action = choose.draw(st.sampled_from(LIFE), label="action")
        if action == "leave":
            seat = choose.draw(st.integers(0, len(match.players) - 1), label="seat")
            try:
                step = leave(match, seat, now=now)
            except SeatIsBot:
                continue
        elif action == "cancel":
            step = cancel(match, now=now)
        elif match.status is Status.GAME_OVER:
            step = next_game(match, now=now, rng=random.Random(match.version))
        else:
            step = act(match, action, choose, now)
        step = step.then(partial(advance, now=now, moved=True, autoplay=autoplay))
        yield match, step
        match = step.match


@settings(max_examples=40, deadline=None)
@given(start=starts(), choose=st.data())
def test_leaving_never_creates_or_loses_tiles_and_scores_stay_zero_sum(
    start: Transition, choose: st.DataObject
) -> None:
    expected = all_tiles(start.match)
    for _, transition in lives(start, choose):
        after = transition.match
        if any(event.type == "game_started" for event in transition.events):
            expected = all_tiles(after)
        assert all_tiles(after) == expected
        assert sum(player.score for player in after.players) == 0
        for result in after.outcomes:
            assert sum(result.outcome.scores) == 0
        if after.status is Status.PLAYING:
            assert after.humans, "a match nobody plays any more must have ended"
        if after.status is Status.FINISHED and after.outcomes[-1].outcome.winner is None:
            assert after.winner is None and not after.humans
        assert from_dict(json.loads(json.dumps(to_dict(after)))) == after


def refused_changes(match: Match) -> list[Callable[[], Transition]]:
    """Lifecycle changes that must be refused in ``match``."""
    changes: list[Callable[[], Transition]] = [
        partial(leave, match, seat, now=NOW)
        for seat, player in enumerate(match.players)
        if player.bot and not player.left
    ]
    changes.append(partial(leave, match, len(match.players), now=NOW))
    if match.status is not Status.FINISHED:
        changes.append(partial(rematch, match, "r", rng=random.Random(1), now=NOW))
        changes.append(partial(record_rematch, match, "r", now=NOW))
    if match.status is Status.FINISHED:
        changes.append(partial(cancel, match, now=NOW))
        changes += [
            partial(leave, match, seat, now=NOW)
            for seat, player in enumerate(match.players)
            if not player.bot
        ]
    if match.status is Status.CANCELED:
        changes.append(partial(draw, match, match.current_seat, now=NOW))
        changes.append(partial(next_game, match, now=NOW, rng=random.Random(1)))
    return changes


@settings(max_examples=40, deadline=None)
@given(start=starts(), choose=st.data())
def test_a_refused_lifecycle_change_leaves_the_match_unchanged(
    start: Transition, choose: st.DataObject
) -> None:
    for _, transition in lives(start, choose):
        match = transition.match
        snapshot = to_dict(match)
        for change in refused_changes(match):
            with pytest.raises(GameError):
                change()
        assert to_dict(match) == snapshot
