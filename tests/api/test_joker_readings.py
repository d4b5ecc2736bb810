"""Naming a joker's reading over HTTP (``J=R1``): the meld checker, plays, drafts and hints
read it, and views and events show it back."""

from __future__ import annotations

import pytest

from tests.api.matchclient import setup


@pytest.fixture
def app_overrides() -> dict:
    return {"test_mode": True}


def events_of(client, match_id: str) -> list[dict]:
    return client.get(f"/v1/matches/{match_id}/events").get_json()["events"]


def test_the_meld_checker_reads_a_named_joker(client) -> None:
    answer = client.post(
        "/v1/meld-check", json={"sets": [["J=R1", "J=R2", "R3"], ["J", "J", "R3"]]}
    ).get_json()
    named, unnamed = answer["sets"]
    assert (named["kind"], named["points"], named["jokers"]) == ("run", 6, ["R1", "R2"])
    assert named["tiles"] == ["J=R1", "J=R2", "R3"]
    assert (unnamed["kind"], unnamed["points"]) == ("group", 9)


def test_a_play_with_named_jokers_is_read_as_named_and_shown_back(client) -> None:
    created, (ann, _bo) = setup(client, ["J J R3 K9", "K1 K2"], pool="O4 O5", melded=[True, True])
    response = ann.play("J=R1 J=R2 R3")
    assert response.status_code == 200, response.get_json()
    view = response.get_json()["match"]
    assert view["table"] == [["J=R1", "J=R2", "R3"]]
    assert view["rack"] == ["K9"]
    played = [e for e in events_of(client, created["id"]) if e["type"] == "played"][-1]
    assert played["data"]["table"] == [["J=R1", "J=R2", "R3"]]
    assert sorted(played["data"]["added"]) == ["J", "J", "R3"]  # a rack holds plain jokers


def test_a_draft_keeps_its_named_jokers(client) -> None:
    created, (ann, bo) = setup(client, ["J R2 R3 K9", "K1 K2"], pool="O4 O5", melded=[True, True])
    assert ann.draft("J=R1 R2 R3").status_code == 200
    assert bo.view().get_json()["draft"] == [["J=R1", "R2", "R3"]]
    drafted = [e for e in events_of(client, created["id"]) if e["type"] == "draft_updated"][-1]
    assert drafted["data"]["draft"] == [["J=R1", "R2", "R3"]]


def test_a_reading_the_set_cannot_have_is_refused_with_its_reason(client) -> None:
    _, (ann, _bo) = setup(client, ["J R2 R3 K9", "K1 K2"], pool="O4 O5", melded=[True, True])
    response = ann.play("J=R5 R2 R3")
    assert response.status_code == 422
    (violation,) = response.get_json()["violations"]
    assert violation["code"] == "run_not_consecutive"
    assert violation["tiles"] == ["J=R5", "R2", "R3"]
    assert violation["params"] == {
        "set_index": 0,
        "tiles": ["J=R5", "R2", "R3"],
        "tile": "R2",
        "previous": "R5",
    }


def test_a_rack_cannot_hold_a_named_joker(client) -> None:
    body = {
        "players": [{"name": "Ann"}, {"name": "Bo"}],
        "setup": {"racks": [["J=R1", "R2"], ["K1"]]},
    }
    assert client.post("/v1/matches", json=body).status_code == 400


def test_a_hint_names_the_jokers_of_its_runs_and_can_be_played_as_is(client) -> None:
    _, (ann, _bo) = setup(client, ["R11 J R13", "K1 K2"], pool="O4 O5", melded=[True, True])
    hint = ann.client.get(ann.url("hint"), headers=ann.auth).get_json()
    assert hint["table"] == [["R11", "J=R12", "R13"]]
    assert ann.play(*[" ".join(s) for s in hint["table"]]).status_code == 200


def test_a_named_joker_on_the_table_can_be_moved_by_a_later_play(client) -> None:
    _, (ann, _bo) = setup(
        client,
        ["R4 K9", "K1 K2"],
        pool="O4 O5",
        table=["R1 R2 J=R3"],
        melded=[True, True],
    )
    response = ann.play("R1 R2 J R4")
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["match"]["table"] == [["R1", "R2", "J", "R4"]]
