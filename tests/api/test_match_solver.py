"""The solver at work over HTTP: hints and bots."""

from __future__ import annotations

import pytest

from tests.api.matchclient import setup


@pytest.fixture
def app_overrides() -> dict:
    return {"test_mode": True}


def test_a_hint_is_the_best_play_as_a_table_to_submit(client) -> None:
    _, (ann, _) = setup(
        client, ["R6 B3 K3 O9", "K1"], pool="O1", table=["R3 R4 R5"], melded=[True, True]
    )
    hint = client.get(ann.url("hint"), headers=ann.auth).get_json()
    assert (hint["status"], hint["tile_count"], hint["placed"]) == (
        "play_found",
        3,
        ["R6", "B3", "K3"],
    )
    response = ann.play(*[" ".join(s) for s in hint["table"]])
    assert response.status_code == 200
    assert response.get_json()["match"]["rack"] == ["O9"]


def test_a_hint_says_so_when_nothing_can_be_played(client) -> None:
    _, (ann, _) = setup(client, ["R1 B5 O9", "K1"], pool="O1", table=["R3 R4 R5"])
    hint = client.get(ann.url("hint"), headers=ann.auth).get_json()
    assert (hint["status"], hint["table"], hint["placed"]) == ("no_play", None, [])


def test_a_hint_before_the_initial_meld_only_offers_a_meld_worth_the_threshold(client) -> None:
    _, (ann, _) = setup(client, ["R9 B9 K9 O9 R1", "K1"], pool="O1", table=["R2 R3 R4"])
    hint = client.get(ann.url("hint"), headers=ann.auth).get_json()
    assert hint["table"][0] == ["R2", "R3", "R4"]
    assert hint["tile_count"] == 4


def test_hints_can_be_turned_off_for_a_match(client) -> None:
    _, (ann, _) = setup(client, ["R1", "K1"], pool="O1", rules={"hints": False})
    response = client.get(ann.url("hint"), headers=ann.auth)
    assert response.status_code == 409
    assert response.get_json()["type"].endswith(":hints-off")


def test_a_hint_needs_a_seat_token(client) -> None:
    created, _ = setup(client, ["R1", "K1"], pool="O1")
    assert client.get(f"/v1/matches/{created['id']}/hint").status_code == 401


def test_a_bot_plays_its_turn_in_the_request_that_hands_it_the_turn(client) -> None:
    _, (ann, _bot) = setup(client, ["R1 B2", "K10 K11 K12 O1"], pool="O5 O6", names=("Ann", "Bot*"))
    view = ann.draw().get_json()["match"]
    assert view["table"] == [["K10", "K11", "K12"]]
    assert view["players"][1]["melded"] is True
    assert view["current_seat"] == 0


def test_a_bot_that_cannot_play_draws(client) -> None:
    _, (ann, _) = setup(client, ["R1 B2", "K1 O9"], pool="O5 O6", names=("Ann", "Bot*"))
    view = ann.draw().get_json()["match"]
    assert view["players"][1]["rack_count"] == 3
    assert view["pool_count"] == 0


def test_a_match_of_bots_plays_itself_out(client) -> None:
    created, _ = setup(
        client,
        ["R1 R2 R3 R4 R5 R6 R7 R8 R9 R10", "B1 B2 B3 B4 B5 B6 B7 B8 B9 B10"],
        pool="K1 K2",
        names=("Bot1*", "Bot2*"),
    )
    match = created["match"]
    assert match["status"] in ("game_over", "finished")
    assert match["last_outcome"]["reason"] == "went_out"
