"""SPEC section 7, "Named scenarios": each scenario deals its situation in one call, and its
point really plays out (the joker can be freed, the stalemate ends the game...)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.api.matchclient import Seat

pytestmark = pytest.mark.usefixtures("redis_url")

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def app_overrides() -> dict[str, Any]:
    return {"test_mode": True}


def scenario(client: Any, name: str, **extra: Any) -> tuple[dict[str, Any], list[Seat]]:
    response = client.post("/v1/matches", json={"scenario": name, **extra})
    assert response.status_code == 201, response.get_json()
    created = response.get_json()
    seats = [Seat(client, created["id"], s["seat"], s["token"]) for s in created["seats"]]
    return created, seats


def test_the_listing_names_every_scenario_of_the_contract_with_what_it_sets_up(client) -> None:
    listed = client.get("/v1/scenarios").get_json()["scenarios"]
    contract = yaml.safe_load((ROOT / "openapi.yaml").read_text(encoding="utf-8"))
    names = contract["components"]["schemas"]["ScenarioName"]["enum"]
    assert [s["name"] for s in listed] == names
    assert len(names) >= 7
    assert all(len(s["description"]) > 40 for s in listed)


def test_joker_ready_the_joker_is_freed_into_a_new_group(client) -> None:
    created, (ann, _) = scenario(client, "joker_ready")
    assert created["match"]["table"] == [["R5", "J", "R7"]]
    assert ann.play("K9 O9 J").status_code == 422  # the joker cannot leave without R6
    played = ann.play("R5 R6 R7", "K9 O9 J")
    assert played.status_code == 200, played.get_json()
    view = played.get_json()["match"]
    assert view["table"] == [["R5", "R6", "R7"], ["K9", "O9", "J"]]
    assert view["rack"] == ["B2", "B3"]


def test_initial_meld_ready_33_points_meld_and_21_do_not(client) -> None:
    created, (ann, _) = scenario(client, "initial_meld_ready")
    assert created["match"]["players"][0]["melded"] is False
    refused = ann.play("R10 R11 R12 K3")
    assert refused.status_code == 422
    played = ann.play("R10 R11 R12")
    assert played.status_code == 200, played.get_json()
    assert played.get_json()["match"]["players"][0]["melded"] is True


def test_empty_pool_must_play_a_pass_is_refused_while_a_play_exists(client) -> None:
    created, (ann, _) = scenario(client, "empty_pool_must_play")
    assert created["match"]["pool_count"] == 0
    refused = ann.pass_()
    assert refused.status_code in (409, 422), refused.get_json()
    assert ann.view().get_json()["current_seat"] == 0
    played = ann.play("O2 O3 O4 O5", "K10 K11 K12")
    assert played.status_code == 200, played.get_json()


def test_stalemate_nobody_can_play_and_the_game_ends_with_the_lowest_rack_winning(client) -> None:
    created, seats = scenario(client, "stalemate")
    view = created["match"]
    while view["status"] == "playing":  # the referee may end it as soon as it can prove it
        assert seats[view["current_seat"]].pass_().status_code == 200
        view = seats[0].view().get_json()
    assert view["status"] in ("game_over", "finished")
    outcome = view["last_outcome"]
    assert (outcome["reason"], outcome["winner"]) == ("stalemate", 0)
    assert sum(outcome["scores"]) == 0 and outcome["scores"][0] > 0


def test_timeout_with_draft_the_changed_draft_is_thrown_away_and_three_tiles_drawn(client) -> None:
    created, _ = scenario(client, "timeout_with_draft")
    view = created["match"]
    assert view["draft"] == [["R6", "R7", "R8", "R9"]] != view["table"]
    assert view["rules"]["turn_seconds"] == 60
    match_id = created["id"]
    early = client.post(f"/v1/matches/{match_id}/clock", json={"advance": 59})
    assert early.get_json()["current_seat"] == 0
    late = client.post(f"/v1/matches/{match_id}/clock", json={"advance": 1}).get_json()
    assert late["current_seat"] == 1 and late["draft"] is None
    assert late["table"] == [["R6", "R7", "R8"]]
    assert late["players"][0]["rack_count"] == 3 + 3
    events = client.get(f"/v1/matches/{match_id}/events").get_json()["events"]
    timed_out = [e for e in events if e["type"] == "turn_timed_out"]
    assert [e["data"]["penalty"] for e in timed_out] == [3]


def test_one_play_from_end_the_play_ends_the_game(client) -> None:
    _, (ann, _) = scenario(client, "one_play_from_end")
    played = ann.play("R10 R11 R12")
    assert played.status_code == 200, played.get_json()
    view = played.get_json()["match"]
    assert view["status"] == "game_over"
    assert (view["last_outcome"]["reason"], view["last_outcome"]["winner"]) == ("went_out", 0)
    assert view["last_outcome"]["scores"] == [26, -26]


def test_six_player_xp_deals_fourteen_tiles_to_six_seats_from_160(client) -> None:
    created, seats = scenario(client, "six_player_xp")
    view = created["match"]
    assert view["rules"]["tile_set"] == "xp"
    assert [p["rack_count"] for p in view["players"]] == [14] * 6
    assert view["pool_count"] == 160 - 6 * 14
    assert len(seats) == 6


def test_a_scenario_seats_the_players_given_when_as_many(client) -> None:
    created, _ = scenario(
        client, "one_play_from_end", players=[{"name": "Zoe"}, {"name": "Bot", "bot": True}]
    )
    assert [(p["name"], p["bot"]) for p in created["match"]["players"]] == [
        ("Zoe", False),
        ("Bot", True),
    ]
    three = [{"name": "A"}, {"name": "B"}, {"name": "C"}]
    wrong = client.post("/v1/matches", json={"scenario": "stalemate", "players": three})
    assert wrong.status_code == 422
    assert wrong.get_json()["type"].endswith("scenario-players")


@pytest.mark.parametrize(
    "extra",
    [{"rules": {"turn_seconds": 0}}, {"seed": 3}, {"scenario": "no_such_scenario"}],
)
def test_a_scenario_sets_its_own_rules_and_deal(client, extra: dict[str, Any]) -> None:
    response = client.post("/v1/matches", json={"scenario": "stalemate", **extra})
    assert response.status_code == 400
    assert [e["field"] for e in response.get_json()["errors"]] == list(extra)


class TestOutsideTestMode:
    @pytest.fixture
    def app_overrides(self) -> dict[str, Any]:
        return {"test_mode": False}

    def test_a_scenario_is_refused_without_a_sandbox_key(self, client) -> None:
        response = client.post("/v1/matches", json={"scenario": "stalemate"})
        assert response.status_code == 400
        assert client.get("/v1/scenarios").status_code == 200
