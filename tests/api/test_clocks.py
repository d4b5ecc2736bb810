"""Clocks and the championship rules over HTTP (SPEC section 6): bank clocks in views and
events, flag fall by the test-mode clock and by the sweeper with nobody polling, giving time,
the presets, the MSO redeal, and the freed-joker option. Every answer is checked against the
contract by the test client."""

from __future__ import annotations

import time

import pytest

from service.store import Keys
from service.sweeper import Sweeper
from tests.api.matchclient import create, setup

APP_KEY = "clocks-app-key-" + "k" * 20
BANK = {"clock": {"type": "bank", "bank_seconds": 60, "increment_seconds": 2}}


@pytest.fixture
def app_overrides() -> dict:
    return {"test_mode": True, "api_keys": f"clocks={APP_KEY}"}


def advance(client, match_id: str, seconds: float):
    return client.post(f"/v1/matches/{match_id}/clock", json={"advance": seconds})


def events_of(client, match_id: str, after: int = 0) -> list[dict]:
    return client.get(f"/v1/matches/{match_id}/events?after={after}").get_json()["events"]


def give(client, match_id: str, seat: int, seconds, headers: dict):
    url = f"/v1/matches/{match_id}/seats/{seat}/time"
    return client.post(url, json={"seconds": seconds}, headers=headers)


def test_a_bank_clock_match_shows_every_players_time_and_whose_clock_runs(client) -> None:
    created, _ = setup(client, ["R1", "K7"], pool="O4 O5", rules=BANK)
    view = created["match"]
    assert view["rules"]["clock"] == {
        "type": "bank", "bank_seconds": 60, "increment_seconds": 2, "delay_seconds": 0,
        "delay": "bronstein",
    }  # fmt: skip
    assert view["rules"]["turn_seconds"] == 0
    assert [p["time_left"] for p in view["players"]] == [60, 60]
    assert [p["clock_running"] for p in view["players"]] == [True, False]
    assert view["turn_deadline"] == pytest.approx(view["turn_started"] + 60)
    later = advance(client, created["id"], 20).get_json()
    spent = later["server_time"] - later["turn_started"]  # 20 s, and what the test took
    assert spent >= 20
    assert [p["time_left"] for p in later["players"]] == pytest.approx([60 - spent, 60], abs=0.01)


def test_a_per_turn_match_answers_as_before(client) -> None:
    created, _ = create(client, "Ann", "Bo", rules={"turn_seconds": 60})
    assert created["match"]["rules"]["clock"] == {"type": "turn"}
    assert "time_left" not in created["match"]["players"][0]


def test_a_turn_ended_by_the_player_is_charged_and_earns_the_increment(client) -> None:
    created, (ann, _bo) = setup(client, ["R1", "K7"], pool="O4 O5", rules=BANK)
    advance(client, created["id"], 10)
    drew = ann.draw().get_json()["match"]
    event = events_of(client, created["id"])[-1]
    assert event["type"] == "drew" and event["data"]["increment"] == 2
    used = event["at"] - created["match"]["turn_started"]  # 10 s, and what the test took
    assert event["data"]["used"] == pytest.approx(used, abs=0.01) and used >= 10
    assert [p["time_left"] for p in drew["players"]] == pytest.approx([62 - used, 60], abs=0.01)


def test_when_a_bank_runs_out_the_flag_falls_and_the_other_player_wins(client) -> None:
    created, _ = setup(client, ["R1 K12", "K7"], pool="O4 O5", rules=BANK)
    view = advance(client, created["id"], 61).get_json()
    assert view["status"] in ("game_over", "finished")
    assert view["players"][0]["flagged"] is True and view["players"][0]["time_left"] == 0
    assert view["last_outcome"]["reason"] == "flag" and view["last_outcome"]["winner"] == 1
    assert view["last_outcome"]["scores"] == [-(1 + 12 + 4), 17]
    types = [e["type"] for e in events_of(client, created["id"])]
    ended = types.index("flag_fell")
    assert types[ended - 1 : ended + 2] == ["turn_timed_out", "flag_fell", "game_over"]


def test_the_sweeper_settles_a_flag_fall_with_nobody_polling(app, client, redis_client) -> None:
    rules = {"clock": {"type": "bank", "bank_seconds": 1}}
    created, _ = setup(client, ["R1", "K7", "O9"], pool="O4 O5 O6", rules=rules)
    sweeper = Sweeper(app.extensions["referee"])
    state = Keys(created["id"]).state
    version = created["match"]["version"]
    give_up = time.monotonic() + 30
    while int(redis_client.hget(state, "v")) == version:  # wait for the flag, not a time
        assert time.monotonic() < give_up, "the sweeper never settled the flag fall"
        sweeper.sweep_once()
        time.sleep(0.05)
    settled = [e["type"] for e in events_of(client, created["id"], after=version)]
    assert settled[:2] == ["turn_timed_out", "flag_fell"]


def test_another_seat_may_give_time_and_the_deadline_moves(client) -> None:
    created, (_ann, bo) = setup(client, ["R1", "K7"], pool="O4 O5", rules=BANK)
    deadline = created["match"]["turn_deadline"]
    response = give(client, created["id"], 0, 30, bo.auth)
    assert response.status_code == 200
    view = response.get_json()["match"]
    assert view["turn_deadline"] == pytest.approx(deadline + 30)
    spent = view["server_time"] - view["turn_started"]  # what the test took
    assert view["players"][0]["time_left"] == pytest.approx(90 - spent, abs=0.01)
    event = events_of(client, created["id"])[-1]
    assert event["type"] == "time_given"
    assert (event["seat"], event["data"]["seconds"], event["data"]["by_seat"]) == (0, 30, 1)


def test_the_owners_key_may_give_time_to_any_seat(client) -> None:
    body = {"players": [{"name": "Ann"}, {"name": "Bo"}], "rules": BANK}
    key = {"X-API-Key": APP_KEY}
    created = client.post("/v1/matches", json=body, headers=key).get_json()
    waiting = 1 - created["match"]["current_seat"]
    response = give(client, created["id"], waiting, 45, key)
    assert response.status_code == 200
    assert response.get_json()["match"]["players"][waiting]["time_left"] == 105


@pytest.mark.parametrize("seconds", [0, -1, 3601, 1.5, "30"])
def test_absurd_gifts_of_time_are_a_400(client, seconds) -> None:
    created, (_ann, bo) = setup(client, ["R1", "K7"], pool="O4", rules=BANK)
    assert give(client, created["id"], 0, seconds, bo.auth).status_code == 400


def test_a_seat_cannot_give_itself_time(client) -> None:
    created, (ann, _bo) = setup(client, ["R1", "K7"], pool="O4", rules=BANK)
    response = give(client, created["id"], 0, 30, ann.auth)
    assert response.status_code == 400
    assert response.get_json()["type"].endswith(":bad-time-gift")


def test_time_cannot_be_given_in_a_per_turn_match(client) -> None:
    created, (_ann, bo) = setup(client, ["R1", "K7"], pool="O4", rules={"turn_seconds": 60})
    response = give(client, created["id"], 0, 30, bo.auth)
    assert response.status_code == 409
    assert response.get_json()["type"].endswith(":rule-not-in-force")


def test_giving_time_needs_a_token_or_the_owners_key(client) -> None:
    created, _ = setup(client, ["R1", "K7"], pool="O4", rules=BANK)
    assert give(client, created["id"], 0, 30, {}).status_code == 401


@pytest.mark.parametrize(
    "clock",
    [
        {"type": "bank", "delay": "hourglass"},
        {"type": "bank", "bank_seconds": -60},
        {"type": "bank", "bank_seconds": 0},
        {"type": "bank", "increment_seconds": 99999},
        {"type": "bank", "delay_seconds": -1},
        {"type": "sundial"},
    ],
)
def test_a_bad_clock_is_a_400(client, clock) -> None:
    body = {"players": [{"name": "Ann"}, {"name": "Bo"}], "rules": {"clock": clock}}
    response = client.post("/v1/matches", json=body)
    assert response.status_code == 400


def test_the_mso_preset_shows_the_full_rules_that_result(client) -> None:
    created, _ = create(client, "Ann", "Bo", rules={"preset": "mso", "joker_penalty": 40})
    rules = created["match"]["rules"]
    assert rules["preset"] == "mso" and rules["joker_penalty"] == 40
    assert rules["dealt_jokers"] == 1 and rules["never_melded_penalty"] == 100
    assert rules["clock"] == {
        "type": "bank", "bank_seconds": 600, "increment_seconds": 0, "delay_seconds": 10,
        "delay": "bronstein",
    }  # fmt: skip


def test_the_mso_preset_with_three_players_is_a_400(client) -> None:
    body = {"players": [{"name": n} for n in ("Ann", "Bo", "Cy")], "rules": {"preset": "mso"}}
    response = client.post("/v1/matches", json=body)
    assert response.status_code == 400
    assert "exactly 2 players" in response.get_json()["detail"]


THREE_DOUBLES = "R1 R1 B5 B5 K9 K9 O2 O3 O4 O10 O11 R7 B12 J"


def test_a_rack_dealt_three_doubles_gets_a_redeal(client) -> None:
    created, (ann, _bo) = setup(
        client, [THREE_DOUBLES, "K1 K2 K3 K4 K5 K6 K7 K8 R2 R3 R4 B1 B2 J"],
        pool="O5 O6 O7 O8 O9 O12 O13", rules={"preset": "mso"}, first_seat=1,
    )  # fmt: skip
    response = client.post(f"/v1/matches/{created['id']}/redeal", headers=ann.auth)
    assert response.status_code == 200
    assert events_of(client, created["id"])[-1]["type"] == "redealt"
    assert ann.rack().count("J") == 1


def test_a_redeal_without_three_doubles_is_a_422_and_after_the_first_move_a_409(client) -> None:
    created, (ann, bo) = setup(
        client, [THREE_DOUBLES, "K1 K2 K3 K4 K4 K6 K7 K8 R2 R3 R4 B1 B1 J"],
        pool="O5 O6", rules={"preset": "mso"},
    )  # fmt: skip
    refused = client.post(f"/v1/matches/{created['id']}/redeal", headers=bo.auth)
    assert refused.status_code == 422
    assert refused.get_json()["type"].endswith(":redeal-refused")
    assert "holds 2" in refused.get_json()["detail"]
    assert ann.draw().status_code == 200
    late = client.post(f"/v1/matches/{created['id']}/redeal", headers=ann.auth)
    assert late.status_code == 409


def test_the_official_rules_have_no_redeal(client) -> None:
    created, (ann, _bo) = setup(client, [THREE_DOUBLES, "K1 K2"], pool="O5")
    response = client.post(f"/v1/matches/{created['id']}/redeal", headers=ann.auth)
    assert response.status_code == 409
    assert response.get_json()["type"].endswith(":rule-not-in-force")


def test_under_new_set_a_freed_joker_added_to_an_old_set_is_refused(client) -> None:
    _, (ann, _bo) = setup(
        client, ["R7 O1", "K7"], pool="O4", table=["R5 R6 J", "B1 B2 B3"],
        melded=[True, True], rules={"freed_joker": "new_set"},
    )  # fmt: skip
    response = ann.play("R5 R6 R7", "B1 B2 B3 J")
    assert response.status_code == 422
    codes = [v["code"] for v in response.get_json()["violations"]]
    assert codes == ["freed_joker_not_in_new_set"]
