"""Typed events: every event type the referee writes, and every field, is in the contract.

The contract-checking client validates each event it sees (event-log pages and stream
messages) against the event's own schema; these tests make the referee write every type, and
show that the check refuses what is not declared.
"""

from __future__ import annotations

import copy

import pytest

from tests.api.matchclient import create, setup
from tests.support.contract import contract, validate_event

APP_KEY = "contract-key-" + "k" * 20


@pytest.fixture
def app_overrides() -> dict:
    return {"test_mode": True, "api_keys": f"contract={APP_KEY}"}


def event_types() -> list[str]:
    return contract()["components"]["schemas"]["EventType"]["enum"]


def logged(client, match_id: str) -> list[dict]:
    response = client.get(f"/v1/matches/{match_id}/events?limit=500")  # validated event by event
    assert response.status_code == 200
    return response.get_json()["events"]


def streamed(client, match_id: str) -> list[str]:
    """The types of a finished match's stream, read to its end (each checked as it is read)."""
    response = client.get(f"/v1/matches/{match_id}/stream", buffered=False)
    body = b"".join(response.response).decode()
    response.close()
    return [line[len("event: ") :] for line in body.split("\n") if line.startswith("event: ")]


def test_every_event_type_the_referee_writes_is_declared_with_every_field(client) -> None:
    seen: set[str] = set()
    created, _ = create(client, "Ann", "Bot*")
    seen |= {e["type"] for e in logged(client, created["id"])}

    created, (ann, bo) = setup(
        client,
        ["R4 K9", "B1 B2 B3"],
        pool="O4 O5 O6 O7",
        table=["R1 R2 R3"],
        melded=[True, True],
        rules={"turn_seconds": 1, "target_score": 1},
    )
    assert ann.draft("R1 R2 R3 R4").status_code == 200
    clock = client.post(f"/v1/matches/{created['id']}/clock", json={"advance": 1.5})
    assert clock.status_code == 200  # Ann's time ran out with a changed draft: a penalty
    assert bo.play("R1 R2 R3", "B1 B2 B3").status_code == 200
    finished = logged(client, created["id"])
    seen |= {e["type"] for e in finished}
    assert streamed(client, created["id"]) == [e["type"] for e in finished]

    created, (ann, bo) = setup(client, ["K9 O1", "R10 R11 R12 R13"], rules={"target_score": 1})
    assert ann.pass_().status_code == 200  # the pool is empty and Ann cannot meld
    assert bo.play("R10 R11 R12 R13").status_code == 200
    rematch = client.post(f"/v1/matches/{created['id']}/rematch", headers=ann.auth)
    assert rematch.status_code == 201
    seen |= {e["type"] for e in logged(client, created["id"])}

    key = {"X-API-Key": APP_KEY}
    body = {"players": [{"name": "Ann"}, {"name": "Bo"}, {"name": "Cy"}]}
    owned = client.post("/v1/matches", json=body, headers=key).get_json()
    seats = f"/v1/matches/{owned['id']}/seats"
    assert client.post(f"{seats}/0/token", headers=key).status_code == 201
    leave = client.post(f"/v1/matches/{owned['id']}/leave", json={"seat": 1}, headers=key)
    assert leave.status_code == 200
    assert client.post(f"/v1/matches/{owned['id']}/cancel", headers=key).status_code == 200
    seen |= {e["type"] for e in logged(client, owned["id"])}

    doubles = "R1 R1 B5 B5 K9 K9 O2 O3 O4 O10 O11 R7 B12 J"
    created, (ann, bo) = setup(
        client, [doubles, "K1 K2 K3 K4 K5 K6 K7 K8 R2 R3 R4 B1 B2 J"],
        pool="O5 O6 O7 O8", rules={"preset": "mso", "target_score": 1},
    )  # fmt: skip
    assert client.post(f"/v1/matches/{created['id']}/redeal", headers=ann.auth).status_code == 200
    given = client.post(
        f"/v1/matches/{created['id']}/seats/0/time", json={"seconds": 5}, headers=bo.auth
    )
    assert given.status_code == 200
    clock = client.post(f"/v1/matches/{created['id']}/clock", json={"advance": 700})
    assert clock.status_code == 200  # Ann's bank ran out: her flag fell, Bo won the game
    seen |= {e["type"] for e in logged(client, created["id"])}

    assert seen == set(event_types())


def a_played_event() -> dict:
    data = {"table": [["R1", "R2", "R3"]], "added": ["R3"], "went_out": False}
    data |= {"next_seat": 1, "turn_deadline": None}
    return {"type": "played", "version": 5, "at": 1.5, "seat": 0, "data": data}


def test_a_well_formed_event_passes_the_check() -> None:
    validate_event(a_played_event())


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (lambda e: e["data"].update(bonus=1), "an undeclared field"),
        (lambda e: e["data"].pop("went_out"), "a missing field"),
        (lambda e: e.update(type="juggled"), "an undeclared type"),
        (lambda e: e["data"].update(next_seat="one"), "a field of the wrong type"),
        (lambda e: e.update(seat=None), "a turn event without its seat"),
    ],
)
def test_the_event_check_refuses(change, why) -> None:
    event = copy.deepcopy(a_played_event())
    change(event)
    with pytest.raises(AssertionError):
        validate_event(event)
