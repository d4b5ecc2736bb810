"""The turn clock: expiries settled in order by the next request, and by the sweeper.

A minute's turn is run out by test mode's clock (``POST /v1/matches/{id}/clock``), which settles
what fell due as the next request would: the next turn's deadline is a minute away, so however
slow a loaded machine is, exactly one turn has run out. The tests of the settling itself (by
the next request, by the sweeper) wait for real one-second turns, and tolerate a later turn
running out too before the test looks.
"""

from __future__ import annotations

import time

import pytest

from service.store import Keys
from service.sweeper import Sweeper
from tests.api.matchclient import setup


@pytest.fixture
def app_overrides() -> dict:
    return {"test_mode": True}


TURN = 60  # seconds


def run_out(client, match: dict) -> None:
    """Run the match's clock just past its turn deadline: the turn times out."""
    ahead = client.post(
        f"/v1/matches/{match['id']}/clock",
        json={"advance": match["turn_deadline"] - match["server_time"] + 0.15},
    )
    assert ahead.status_code == 200, ahead.get_json()
    assert ahead.get_json()["current_seat"] != match["current_seat"]


def wait_past(app, view: dict, extra: float = 0.15) -> None:
    """Sleep until ``extra`` seconds past the view's turn deadline on the shared clock (read
    now: the answer may have taken a while to check, the first time the contract is built)."""
    time.sleep(max(0.0, view["turn_deadline"] - app.extensions["store"].now()) + extra)


def events_of(client, match_id: str) -> list[dict]:
    return client.get(f"/v1/matches/{match_id}/events").get_json()["events"]


def test_a_turn_that_runs_out_without_a_draft_draws_one_tile(app, client) -> None:
    created, (ann, _bo) = setup(client, ["R1", "K7"], pool="O4 O5 O6", rules={"turn_seconds": TURN})
    run_out(client, created["match"])
    view = ann.view().get_json()
    assert view["rack"] == ["R1", "O4"]
    assert view["current_seat"] == 1
    kinds = [(e["type"], e["seat"]) for e in events_of(client, created["id"])][-2:]
    assert kinds == [("turn_timed_out", 0), ("drew", 0)]


def test_a_turn_that_runs_out_with_an_unchanged_draft_draws_one_tile(app, client) -> None:
    created, (ann, _) = setup(
        client,
        ["R1 R2", "K7"],
        pool="O4 O5 O6",
        table=["B5 R5 K5"],
        melded=[True, True],
        rules={"turn_seconds": TURN},
    )
    assert ann.draft("K5 B5 R5").status_code == 200  # the same group, listed otherwise
    run_out(client, created["match"])
    assert ann.view().get_json()["rack"] == ["R1", "R2", "O4"]


def test_a_turn_that_runs_out_with_a_changed_draft_reverts_it_and_draws_three(app, client) -> None:
    created, (ann, bo) = setup(
        client,
        ["R4 K9", "K7"],
        pool="O4 O5 O6 O7",
        table=["R1 R2 R3"],
        melded=[True, True],
        rules={"turn_seconds": TURN},
    )
    assert ann.draft("R1 R2 R3 R4").status_code == 200
    run_out(client, created["match"])
    view = bo.view().get_json()
    assert view["table"] == [["R1", "R2", "R3"]]
    assert view["draft"] is None
    assert ann.rack() == ["R4", "K9", "O4", "O5", "O6"]
    timed_out = [e for e in events_of(client, created["id"]) if e["type"] == "turn_timed_out"]
    assert timed_out[0]["data"]["reverted"] is True
    assert timed_out[0]["data"]["penalty"] == 3


def test_with_a_failed_turn_penalty_of_one_a_changed_draft_costs_one_tile(app, client) -> None:
    created, (ann, _bo) = setup(
        client,
        ["R4 K9", "K7"],
        pool="O4 O5 O6 O7",
        table=["R1 R2 R3"],
        melded=[True, True],
        rules={"turn_seconds": TURN, "failed_turn_penalty": 1},
    )
    assert created["match"]["rules"]["failed_turn_penalty"] == 1
    assert ann.draft("R1 R2 R3 R4").status_code == 200
    run_out(client, created["match"])
    assert ann.rack() == ["R4", "K9", "O4"]
    timed_out = [e for e in events_of(client, created["id"]) if e["type"] == "turn_timed_out"]
    assert timed_out[0]["data"] == {"reverted": True, "penalty": 1}


def test_several_expired_turns_are_settled_in_order_each_from_the_last_deadline(
    app, client
) -> None:
    created, (ann, bo) = setup(client, ["R1", "K7"], pool="O4 O5 O6 O7", rules={"turn_seconds": 1})
    start = created["match"]["turn_started"]
    time.sleep(max(0.0, start + 3.3 - app.extensions["store"].now()))  # on the shared clock
    view = ann.view().get_json()
    events = [e for e in events_of(client, created["id"]) if e["type"] == "turn_timed_out"]
    # Three or more: a loaded machine may send the view after a fourth deadline too.
    expired = len([e for e in events if e["version"] <= view["version"]])
    assert expired >= 3, events
    assert [e["seat"] for e in events] == [n % 2 for n in range(len(events))]
    assert [e["at"] - start for e in events] == pytest.approx(
        [n + 1 for n in range(len(events))], abs=1e-6
    )
    assert ann.rack()[:3] == ["R1", "O4", "O6"]
    assert bo.rack()[:2] == ["K7", "O5"]
    assert view["current_seat"] == expired % 2
    assert view["turn_deadline"] == pytest.approx(start + expired + 1, abs=1e-6)


def test_the_sweeper_settles_an_expired_turn_when_nobody_asks(app, client, redis_client) -> None:
    created, (ann, _) = setup(client, ["R1", "K7"], pool="O4 O5", rules={"turn_seconds": 1})
    wait_past(app, created["match"])
    assert Sweeper(app.extensions["referee"]).sweep_once() >= 1
    stored = redis_client.hget(Keys(created["id"]).state, "v")
    assert int(stored) > created["match"]["version"]
    # The request that comes later finds nothing of that turn left to settle (a loaded
    # machine may send it after Bo's one-second turn ran out too).
    version = int(stored)
    assert ann.view().get_json()["version"] >= version
    later = client.get(f"/v1/matches/{created['id']}/events?after={version}").get_json()
    deadline = created["match"]["turn_deadline"]
    assert all(e["at"] >= deadline + 1 for e in later["events"]), later


def test_without_a_time_limit_a_turn_never_expires(client) -> None:
    _created, (ann, _) = setup(client, ["R1", "K7"], pool="O4", rules={"turn_seconds": 0})
    time.sleep(1.1)
    view = ann.view().get_json()
    assert (view["turn_deadline"], view["current_seat"], view["rack"]) == (None, 0, ["R1"])
