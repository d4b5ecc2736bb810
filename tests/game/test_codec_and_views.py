"""Storage round-trips exactly; clients see only what the rules make public."""

from __future__ import annotations

import dataclasses
import json
import random
from dataclasses import fields
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from service.game import (
    FORMAT,
    MatchDecodeError,
    UnknownSeat,
    event_from_dict,
    event_to_dict,
    from_dict,
    new_match,
    owner_view,
    play,
    private_view,
    public_view,
    rules_from_dict,
    rules_to_dict,
    save_draft,
    to_dict,
)
from service.game.codec import to_dict_format_1
from service.game.state import (
    Event,
    EventType,
    Match,
    Transition,
    evolve,
    evolver,
    made_transition,
    record,
)
from service.rules import MatchWinner, Rules, TileSet
from tests.game.support import NOW, set_up, specs, table

LATER = NOW + 5
PUBLIC_FIELDS = {
    "id",
    "version",
    "status",
    "current_seat",
    "turn_started",
    "turn_deadline",
    "server_time",
    "table",
    "draft",
    "pool_count",
    "players",
    "game_number",
    "games_total",
    "rounds",
    "rules",
    "last_outcome",
    "winner",
    "rematch_id",
}


def through_json(data: object) -> Any:
    return json.loads(json.dumps(data))


def test_a_new_match_round_trips_through_storage_exactly() -> None:
    transition = new_match("m", specs(3), rules=Rules(), rng=random.Random(1), now=NOW, seed=9)
    stored = through_json(to_dict(transition.match))
    assert isinstance(stored, dict) and stored["f"] == FORMAT
    assert from_dict(stored) == transition.match
    for event in transition.events:
        assert event_from_dict(through_json(event_to_dict(event))) == event


def test_a_match_with_a_draft_and_a_finished_match_round_trip_exactly() -> None:
    rules = Rules(tile_set=TileSet.XP, target_score=10, match_winner=MatchWinner.MOST_GAMES)
    match = set_up(["R10 R11 R12", "K13 J"], pool="O1", rules=rules)
    drafted = save_draft(match, 0, table("R10 R11"), now=LATER).match
    finished = play(drafted, 0, table("R10 R11 R12"), now=LATER).match
    for state in (drafted, finished):
        assert from_dict(through_json(to_dict(state))) == state
        # as stored before: format 1 kept no deals
        old = through_json(to_dict_format_1(state))
        assert from_dict(old) == dataclasses.replace(state, deals=())


def test_the_stored_form_is_compact_and_names_only_the_rules_that_differ() -> None:
    rules = Rules(turn_seconds=0, target_score=150)
    match = set_up(["R10 R11 R12", "K13 J"], pool="O1 O2", rules=rules, on_table="B3 B4 J")
    stored = through_json(to_dict(match))
    assert stored["r"] == {"turn_seconds": 0, "target_score": 150}
    assert stored["pool"] == "O1 O2" and stored["tb"] == ["B3 B4 J"]
    assert len(json.dumps(stored)) < len(json.dumps(to_dict_format_1(match))) / 2


def test_stored_state_in_another_format_is_refused() -> None:
    stored = to_dict(set_up(["R1", "K2"]))
    with pytest.raises(MatchDecodeError, match="format"):
        from_dict({**stored, "f": FORMAT + 1})
    with pytest.raises(MatchDecodeError, match="cannot be read"):
        from_dict({**stored, "pool": "X9"})
    with pytest.raises(MatchDecodeError, match="cannot be read"):
        from_dict({**to_dict_format_1(set_up(["R1", "K2"])), "pool": ["X9"]})
    with pytest.raises(MatchDecodeError):
        event_from_dict({"type": "drew"})


def test_rules_travel_as_plain_values_and_left_out_options_keep_their_defaults() -> None:
    rules = Rules(tile_set=TileSet.XP, turn_seconds=0, target_score=150)
    assert rules_from_dict(through_json(rules_to_dict(rules))) == rules
    assert rules_to_dict(rules)["tile_set"] == "xp"
    assert rules_from_dict({"rounds": 2}) == Rules(rounds=2)
    with pytest.raises(ValueError, match="unknown rule options: colour"):
        rules_from_dict({"colour": "red"})


def test_the_public_view_shows_what_everyone_may_see_and_nothing_secret() -> None:
    match = set_up(["R10 R11 R12 K1", "K2 K3"], pool="O4 B9", on_table="B3 B4 J")
    view = public_view(match, now=LATER)
    assert set(view) == PUBLIC_FIELDS
    assert view["server_time"] == LATER and view["turn_deadline"] == NOW + 60
    assert view["pool_count"] == 2 and view["table"] == [["B3", "B4", "J"]]
    assert view["players"][1] == {
        "seat": 1,
        "name": "Bo",
        "bot": False,
        "rack_count": 2,
        "melded": False,
        "score": 0,
        "games_won": 0,
        "left": False,
    }
    text = json.dumps(view)
    for secret in ("O4", "B9", "R10", "K2"):
        assert f'"{secret}"' not in text


def test_a_seat_sees_its_own_rack_in_its_private_view() -> None:
    match = set_up(["R10 R11 R12 K1", "K2 K3"], pool="O4 B9")
    view = private_view(match, 1, now=LATER)
    assert view["seat"] == 1 and view["rack"] == ["K2", "K3"]
    assert set(view) == PUBLIC_FIELDS | {"seat", "rack"}
    with pytest.raises(UnknownSeat):
        private_view(match, 2, now=LATER)


def test_once_a_game_is_over_the_view_shows_its_outcome_and_no_turn() -> None:
    match = set_up(["R10 R11 R12", "K13 K12"], rules=Rules(target_score=20))
    view = public_view(play(match, 0, table("R10 R11 R12"), now=LATER).match, now=LATER)
    assert view["status"] == "finished" and view["winner"] == 0
    assert view["current_seat"] is None and view["turn_deadline"] is None
    assert view["last_outcome"] == {
        "game_number": 1,
        "reason": "went_out",
        "ending": "went_out",
        "winner": 0,
        "scores": [25, -25],
    }


@given(st.data())
def test_evolve_makes_the_copy_dataclasses_replace_makes(data: st.DataObject) -> None:
    match = new_match("m", specs(3), rules=Rules(), rng=random.Random(2), now=NOW).match
    donor = save_draft(
        match, match.current_seat, [match.players[match.current_seat].rack[:2]], now=LATER
    ).match
    names = data.draw(st.lists(st.sampled_from([f.name for f in fields(Match)]), unique=True))
    changes = {name: getattr(donor, name) for name in names}
    copied = evolve(match, changes)
    assert copied == dataclasses.replace(match, **changes)
    assert all(
        getattr(copied, f.name) is getattr(dataclasses.replace(match, **changes), f.name)
        for f in fields(Match)
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        copied.version = 0  # type: ignore[misc]


@given(st.data())
def test_an_evolver_makes_the_copy_evolve_makes(data: st.DataObject) -> None:
    match = new_match("m", specs(3), rules=Rules(), rng=random.Random(2), now=NOW).match
    donor = save_draft(
        match, match.current_seat, [match.players[match.current_seat].rack[:2]], now=LATER
    ).match
    names = data.draw(
        st.lists(st.sampled_from([f.name for f in fields(Match)]), unique=True, min_size=1)
    )
    values = [getattr(donor, name) for name in names]
    copied = evolver(*names)(match, *values)
    expected = evolve(match, dict(zip(names, values, strict=True)))
    assert type(copied) is Match and copied == expected
    assert all(getattr(copied, f.name) is getattr(expected, f.name) for f in fields(Match))
    with pytest.raises(dataclasses.FrozenInstanceError):
        copied.version = 0  # type: ignore[misc]


def test_an_evolver_refuses_a_field_a_match_does_not_have_or_named_twice() -> None:
    with pytest.raises(TypeError):
        evolver("draft", "versoin")
    with pytest.raises(TypeError):
        evolver("draft", "draft")


def test_a_draft_records_what_record_makes_of_it() -> None:
    """save_draft writes its new version and event out (no ``record`` call): the same match,
    event and transition as ``record`` makes, a draft shared and one withdrawn."""
    match = new_match("m", specs(2), rules=Rules(), rng=random.Random(2), now=NOW).match
    seat = match.current_seat
    rack = match.players[seat].rack
    shared = save_draft(match, seat, [rack[:2], [], rack[3:4]], now=LATER)
    sets = ((*rack[:2],), (rack[3],))
    assert shared == record(
        match,
        EventType.DRAFT_UPDATED,
        at=LATER,
        seat=seat,
        changes={"draft": sets},
        draft=[[tile.code for tile in tiles] for tiles in sets],
    )
    assert type(shared.match) is Match and type(shared.events[0]) is Event
    withdrawn = save_draft(shared.match, seat, None, now=LATER + 1)
    assert withdrawn == record(
        shared.match,
        EventType.DRAFT_UPDATED,
        at=LATER + 1,
        seat=seat,
        changes={"draft": None},
        draft=None,
    )


def test_a_transition_made_fast_is_the_one_its_class_makes_and_stays_frozen() -> None:
    match = new_match("m", specs(2), rules=Rules(), rng=random.Random(2), now=NOW).match
    recorded = record(match, EventType.DRAFT_UPDATED, at=LATER, seat=0, draft=None)
    made = made_transition(recorded.match, recorded.events, ())
    assert type(made) is Transition and made == Transition(recorded.match, recorded.events)
    assert type(made.events[0]) is Event
    assert made.events[0] == Event(
        EventType.DRAFT_UPDATED, match.version + 1, LATER, 0, {"draft": None}
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.drawn = ()  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.events[0].version = 0  # type: ignore[misc]


def test_evolve_refuses_a_field_a_match_does_not_have() -> None:
    match = new_match("m", specs(2), rules=Rules(), rng=random.Random(2), now=NOW).match
    with pytest.raises(TypeError, match="no field 'versoin'"):
        evolve(match, {"versoin": 3})


def test_a_stored_form_changed_by_its_caller_changes_no_later_one() -> None:
    match = new_match(
        "m", specs(2), rules=Rules(initial_meld_points=12), rng=random.Random(3), now=NOW
    ).match
    first = through_json(to_dict(match))
    changed = to_dict(match)
    changed["r"]["rounds"] = 9
    changed["p"] = []
    assert through_json(to_dict(match)) == first
    assert from_dict(through_json(to_dict(match))) == match


def test_a_view_changed_by_its_caller_changes_no_later_one() -> None:
    match = set_up(["R10 R11 R12 K1", "K2 K3"], pool="O4 B9")
    drafted = save_draft(match, 0, [list(match.players[0].rack[:2])], now=NOW).match
    assert drafted.players is match.players  # the same players in the next version
    first = private_view(match, 0, now=LATER)
    first["players"][0]["name"] = "changed"
    first["rack"].append("O4")
    owned = owner_view(match, now=LATER)  # adds each player's ref to its own view
    assert all("ref" in shown for shown in owned["players"])
    later = private_view(drafted, 0, now=LATER)
    assert later["players"][0]["name"] == "Ann" and later["rack"] == ["R10", "R11", "R12", "K1"]
    assert all("ref" not in shown for shown in later["players"])
    assert public_view(match, now=LATER)["players"] == later["players"]
