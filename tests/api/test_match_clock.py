"""Test mode's ``POST /v1/matches/{id}/clock``: a match's clock runs ahead, and what falls due
is settled as if the time had passed (no sleeping); outside test mode the path is a 404."""

from __future__ import annotations

import time

import pytest

from service.app import create_app
from service.store import Keys
from service.sweeper import Sweeper
from tests.api.matchclient import create, setup
from tests.support.contract import ContractClient


@pytest.fixture
def app_overrides() -> dict:
    return {"test_mode": True}


def advance(client, match_id: str, seconds: float):
    return client.post(f"/v1/matches/{match_id}/clock", json={"advance": seconds})


def events_of(client, match_id: str, after: int = 0) -> list[dict]:
    return client.get(f"/v1/matches/{match_id}/events?after={after}").get_json()["events"]


def within(began: float) -> float:
    """The real seconds since ``began`` (time.monotonic()), and a millisecond of rounding: the
    most a server's clock can have moved by itself meanwhile, however busy the machine."""
    return time.monotonic() - began + 0.002


def test_a_minute_timeout_is_settled_at_its_deadline_without_waiting(client) -> None:
    began = time.monotonic()
    created, (ann, _bo) = setup(client, ["R1", "K7"], pool="O4 O5 O6", rules={"turn_seconds": 60})
    start = created["match"]
    response = advance(client, created["id"], 65)
    real = within(began)
    assert response.status_code == 200
    view = response.get_json()
    assert view["current_seat"] == 1
    # 65 s ahead, and what passed meanwhile
    assert -0.002 <= view["server_time"] - (start["server_time"] + 65) <= real
    assert view["turn_deadline"] == pytest.approx(start["turn_deadline"] + 60)
    assert response.headers["ETag"] == f'"{view["version"]}"'
    clock, timed_out, drew = events_of(client, created["id"], after=start["version"])
    assert clock["type"] == "clock_advanced" and clock["data"]["seconds"] == 65
    assert (timed_out["type"], timed_out["at"]) == ("turn_timed_out", start["turn_deadline"])
    assert (drew["type"], drew["data"]["count"]) == ("drew", 1)
    assert ann.rack() == ["R1", "O4"]


def test_a_later_deadline_follows_the_match_clock(client) -> None:
    began = time.monotonic()
    created, (_ann, bo) = setup(client, ["R1", "K7"], pool="O4 O5 O6", rules={"turn_seconds": 60})
    advance(client, created["id"], 65)  # Ann timed out at 60: Bo's turn runs to 120
    assert advance(client, created["id"], 30).get_json()["current_seat"] == 1  # at 95
    view = bo.view().get_json()
    real = within(began)
    # 25 s left, less what passed meanwhile
    assert -0.002 <= 25 - (view["turn_deadline"] - view["server_time"]) <= real
    assert advance(client, created["id"], 26).get_json()["current_seat"] == 0
    assert bo.rack() == ["K7", "O5"]


def test_a_changed_draft_costs_three_tiles_when_the_clock_runs_out(client) -> None:
    created, (ann, _bo) = setup(
        client,
        ["R4 K9", "K7"],
        pool="O4 O5 O6 O7",
        table=["R1 R2 R3"],
        melded=[True, True],
        rules={"turn_seconds": 60},
    )
    assert ann.draft("R1 R2 R3 R4").status_code == 200
    advance(client, created["id"], 61)
    assert ann.rack() == ["R4", "K9", "O4", "O5", "O6"]
    penalty = [e for e in events_of(client, created["id"]) if e["type"] == "turn_timed_out"]
    assert penalty[-1]["data"] == {"reverted": True, "penalty": 3}


def test_an_advance_that_settles_nothing_only_moves_the_clock(client) -> None:
    created, _ = create(client, "Ann", "Bo", rules={"turn_seconds": 60})
    view = advance(client, created["id"], 10).get_json()
    assert view["version"] == created["match"]["version"] + 1
    assert view["current_seat"] == created["match"]["current_seat"]


@pytest.mark.parametrize("body", [{}, {"advance": 0}, {"advance": -5}, {"advance": "65"}, {"x": 1}])
def test_a_bad_advance_is_a_400(client, body) -> None:
    created, _ = create(client, "Ann", "Bo")
    response = client.post(f"/v1/matches/{created['id']}/clock", json=body)
    assert response.status_code == 400


def test_an_unknown_match_is_a_404(client) -> None:
    assert advance(client, "nope", 5).status_code == 404


def test_outside_test_mode_the_clock_does_not_exist(redis_url) -> None:
    app = create_app({"redis_url": redis_url})
    app.test_client_class = ContractClient
    client = app.test_client()
    created, _ = create(client, "Ann", "Bo")
    response = advance(client, created["id"], 65)
    assert response.status_code == 404
    assert response.get_json()["type"].endswith(":not-found")
    assert (
        client.get(f"/v1/matches/{created['id']}").get_json()["version"]
        == created["match"]["version"]
    )


def test_the_sweeper_follows_the_match_clock(app, client, redis_client) -> None:
    created, (ann, _) = setup(client, ["R1", "K7"], pool="O4 O5", rules={"turn_seconds": 60})
    version = advance(client, created["id"], 30).get_json()["version"]  # 30 s of 60 left
    sweeper = Sweeper(app.extensions["referee"])
    sweeper.sweep_once()
    assert int(redis_client.hget(Keys(created["id"]).state, "v")) == version  # nothing due
    version = advance(client, created["id"], 29.5).get_json()["version"]  # half a second left
    time.sleep(0.7)
    assert sweeper.sweep_once() >= 1
    assert int(redis_client.hget(Keys(created["id"]).state, "v")) > version
    assert ann.rack() == ["R1", "O4"]
