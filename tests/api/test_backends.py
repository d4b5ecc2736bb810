"""SPEC section 3, "Backends", over HTTP against real Redis: apps and keys, refs, listing,
new seat tokens, leave, cancel, rematch, 7-day turns."""

from __future__ import annotations

import logging
import threading
from typing import Any

import pytest

from tests.api.matchclient import Seat

pytestmark = pytest.mark.usefixtures("redis_url")

MOBILE = "mobile-key-" + "m" * 20
PARTNER = "partner-key-" + "p" * 20
WRONG = "wrong-key-" + "w" * 20


def key(value: str) -> dict[str, str]:
    return {"X-API-Key": value}


@pytest.fixture
def app_overrides() -> dict[str, Any]:
    return {"test_mode": True, "api_keys": f"mobile={MOBILE},partner={PARTNER}"}


def owned(
    client: Any,
    *players: tuple[str, str | None] | str,
    app_key: str = MOBILE,
    rules: dict[str, Any] | None = None,
    setup: dict[str, Any] | None = None,
) -> tuple[dict[str, Any], list[Seat]]:
    """Create a match with an app's key; a player is ``(name, ref)`` or a bot's name + ``*``."""
    body_players = []
    for player in players or (("Ann", "u-ann"), ("Bo", "u-bo")):
        if isinstance(player, str):
            body_players.append({"name": player.removesuffix("*"), "bot": True})
        else:
            name, ref = player
            body_players.append({"name": name, **({"ref": ref} if ref else {})})
    body: dict[str, Any] = {"players": body_players, "rules": {"turn_seconds": 0, **(rules or {})}}
    if setup is not None:
        body["setup"] = setup
    response = client.post("/v1/matches", json=body, headers=key(app_key))
    assert response.status_code == 201, response.get_json()
    created = response.get_json()
    seats = [Seat(client, created["id"], s["seat"], s["token"]) for s in created["seats"]]
    return created, seats


def racks(*racks: str, pool: str = "O4 B9 K8 R1 O13", first_seat: int = 0) -> dict[str, Any]:
    return {"racks": [r.split() for r in racks], "pool": pool.split(), "first_seat": first_seat}


def finished(client: Any, **kwargs: Any) -> tuple[dict[str, Any], list[Seat]]:
    """An owned match that Ann won by going out at once (target score 1 ends it)."""
    created, seats = owned(
        client,
        ("Ann", "u-ann"),
        ("Bo", "u-bo"),
        setup=racks("R10 R11 R12", "K1 K2 K5"),
        rules={"target_score": 1},
        **kwargs,
    )
    assert seats[0].play("R10 R11 R12").status_code == 200
    assert seats[0].view().get_json()["status"] == "finished"
    return created, seats


# -- apps and keys ----------------------------------------------------------------------


def test_a_match_created_with_a_key_shows_refs_only_to_its_app(client) -> None:
    created, seats = owned(client)
    assert [s["ref"] for s in created["seats"]] == ["u-ann", "u-bo"]
    url = f"/v1/matches/{created['id']}"
    mine = client.get(url, headers=key(MOBILE)).get_json()
    assert [p["ref"] for p in mine["players"]] == ["u-ann", "u-bo"]
    assert "rack" not in mine
    for view in (
        client.get(url).get_json(),
        client.get(url, headers=key(PARTNER)).get_json(),
        seats[0].view().get_json(),
    ):
        assert all("ref" not in p for p in view["players"])
    events = client.get(f"{url}/events").get_json()["events"]
    assert "u-ann" not in str(events)


def test_a_wrong_key_is_401_and_never_echoed_or_logged(client, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    created, _ = owned(client)
    for response in (
        client.post(
            "/v1/matches", json={"players": [{"name": "A"}, {"name": "B"}]}, headers=key(WRONG)
        ),
        client.get(f"/v1/matches/{created['id']}", headers=key(WRONG)),
        client.get("/v1/matches", headers=key(WRONG)),
        client.post(f"/v1/matches/{created['id']}/cancel", headers=key(WRONG)),
    ):
        assert response.status_code == 401
        assert response.get_json()["type"].endswith("unknown-api-key")
        assert WRONG not in response.get_data(as_text=True)
    for secret in (WRONG, MOBILE, PARTNER):
        assert secret not in caplog.text


def test_a_ref_needs_a_key_and_names_one_seat(client) -> None:
    players = [{"name": "Ann", "ref": "u-1"}, {"name": "Bo"}]
    assert client.post("/v1/matches", json={"players": players}).status_code == 400
    twice = [{"name": "Ann", "ref": "u-1"}, {"name": "Bo", "ref": "u-1"}]
    response = client.post("/v1/matches", json={"players": twice}, headers=key(MOBILE))
    assert response.status_code == 422
    long_ref = [{"name": "Ann", "ref": "x" * 129}, {"name": "Bo"}]
    assert (
        client.post("/v1/matches", json={"players": long_ref}, headers=key(MOBILE)).status_code
        == 400
    )


@pytest.mark.parametrize(
    "app_overrides", [{"api_keys": f"mobile={MOBILE}", "anonymous_matches": False}]
)
def test_without_anonymous_matches_creating_needs_a_key(client) -> None:
    body = {"players": [{"name": "Ann"}, {"name": "Bo"}]}
    response = client.post("/v1/matches", json=body)
    assert response.status_code == 401
    assert response.get_json()["type"].endswith("api-key-required")
    assert client.post("/v1/matches", json=body, headers=key(MOBILE)).status_code == 201


def test_turns_may_last_up_to_seven_days(client) -> None:
    body = {"players": [{"name": "Ann"}, {"name": "Bo"}], "rules": {"turn_seconds": 604800}}
    created = client.post("/v1/matches", json=body)
    assert created.status_code == 201
    match = created.get_json()["match"]
    assert match["turn_deadline"] - match["turn_started"] == 604800
    body["rules"]["turn_seconds"] = 604801
    assert client.post("/v1/matches", json=body).status_code == 400


# -- new seat tokens ----------------------------------------------------------------------


def test_a_new_token_replaces_the_old_one(client) -> None:
    created, seats = owned(client)
    url = f"/v1/matches/{created['id']}/seats/1/token"
    response = client.post(url, headers=key(MOBILE))
    assert response.status_code == 201
    body = response.get_json()
    assert body["seat"] == 1 and body["token"] != seats[1].token
    assert seats[1].view().status_code == 401
    fresh = Seat(client, created["id"], 1, body["token"])
    assert fresh.view().get_json()["seat"] == 1


def test_only_the_owning_app_may_reissue_and_only_for_a_human_seat(client) -> None:
    created, _ = owned(client, ("Ann", "u-ann"), "Bot*")
    base = f"/v1/matches/{created['id']}/seats"
    assert client.post(f"{base}/0/token", headers=key(PARTNER)).status_code == 403
    assert client.post(f"{base}/0/token").status_code == 401
    assert client.post(f"{base}/0/token", headers=key(WRONG)).status_code == 401
    assert client.post(f"{base}/1/token", headers=key(MOBILE)).status_code == 409
    assert client.post(f"{base}/5/token", headers=key(MOBILE)).status_code == 403
    assert client.post("/v1/matches/nope/seats/0/token", headers=key(MOBILE)).status_code == 404
    anonymous = client.post("/v1/matches", json={"players": [{"name": "A"}, {"name": "B"}]})
    other = f"/v1/matches/{anonymous.get_json()['id']}/seats/0/token"
    assert client.post(other, headers=key(MOBILE)).status_code == 403


# -- leave ------------------------------------------------------------------------------


def test_a_player_who_leaves_is_replaced_by_a_bot_that_plays_its_turn_at_once(client) -> None:
    created, seats = owned(
        client,
        ("Ann", "u-ann"),
        ("Bo", "u-bo"),
        ("Cy", "u-cy"),
        setup=racks("R10 R11 R12 K1", "K2 K3 O7", "B5 B6 O9"),
    )
    before = seats[0].view().get_json()
    response = seats[0].client.post(seats[0].url("leave"), headers=seats[0].auth)
    assert response.status_code == 200
    match = response.get_json()["match"]
    assert match["players"][0]["left"] is True and match["players"][0]["bot"] is True
    assert match["table"] == [["R10", "R11", "R12"]]  # the bot's meld, in this request
    assert match["current_seat"] == 1 and match["version"] > before["version"] + 1
    assert sum(p["score"] for p in match["players"]) == 0
    events = client.get(f"/v1/matches/{created['id']}/events").get_json()["events"]
    types = [e["type"] for e in events]
    assert types[-2:] == ["player_left", "played"]
    again = seats[0].client.post(seats[0].url("leave"), headers=seats[0].auth)
    assert again.status_code == 200 and again.get_json()["match"]["version"] == match["version"]


@pytest.mark.parametrize("body", [b"\n", b"  ", b"\r\n\t"])
def test_a_body_of_whitespace_alone_is_not_json_and_nobody_leaves(client, body: bytes) -> None:
    """No body means no options; whitespace alone is a malformed JSON body (schemathesis
    sends it as one), refused before anything changes."""
    _, seats = owned(client, ("Ann", "u-ann"), ("Bo", "u-bo"))
    before = seats[0].view().get_json()
    headers = {**seats[0].auth, "Content-Type": "application/json"}
    refused = seats[0].client.post(seats[0].url("leave"), data=body, headers=headers)
    assert refused.status_code == 400
    assert refused.get_json()["type"].endswith("invalid-json")
    assert seats[0].view().get_json()["version"] == before["version"]
    empty = seats[0].client.post(seats[0].url("leave"), data=b"", headers=headers)
    assert empty.status_code == 200 and empty.get_json()["match"]["players"][0]["left"] is True


def test_the_owner_makes_a_seat_leave_and_the_last_human_leaving_abandons_the_match(
    client,
) -> None:
    created, seats = owned(client, ("Ann", "u-ann"), ("Bo", "u-bo"), "Bot*")
    url = f"/v1/matches/{created['id']}/leave"
    assert client.post(url, json={"seat": 1}, headers=key(PARTNER)).status_code == 403
    assert client.post(url, json={}, headers=key(MOBILE)).status_code == 422
    assert client.post(url, json={"seat": 2}, headers=key(MOBILE)).status_code == 409
    first = client.post(url, json={"seat": 1}, headers=key(MOBILE))
    assert first.status_code == 200
    assert first.get_json()["match"]["players"][1]["ref"] == "u-bo"
    last = seats[0].client.post(seats[0].url("leave"), headers=seats[0].auth).get_json()["match"]
    assert last["status"] == "finished" and last["winner"] is None
    assert last["last_outcome"]["reason"] == "abandoned"
    assert last["last_outcome"]["winner"] is None
    assert sum(p["score"] for p in last["players"]) == 0
    assert seats[1].draw().status_code == 409


# -- cancel -----------------------------------------------------------------------------


def test_the_owner_cancels_and_every_later_move_is_409(client) -> None:
    created, seats = owned(client, setup=racks("R10 R11 R12 K1", "K2 K3 O7"))
    url = f"/v1/matches/{created['id']}/cancel"
    assert client.post(url, headers=key(PARTNER)).status_code == 403
    assert client.post(url).status_code == 401
    response = client.post(url, headers=key(MOBILE))
    assert response.status_code == 200
    assert response.get_json()["match"]["status"] == "canceled"
    for move in (seats[0].draw(), seats[0].play("R10 R11 R12"), seats[1].next_game()):
        assert move.status_code == 409
    assert seats[0].draw().get_json()["type"].endswith("match-canceled")
    again = client.post(url, headers=key(MOBILE))
    assert again.status_code == 200
    assert again.get_json()["match"]["version"] == response.get_json()["match"]["version"]
    done, _ = finished(client)
    assert client.post(f"/v1/matches/{done['id']}/cancel", headers=key(MOBILE)).status_code == 409


# -- rematch ----------------------------------------------------------------------------


def test_a_rematch_follows_only_a_finished_match_and_is_the_same_for_every_caller(client) -> None:
    _playing, seats = owned(client)
    assert seats[0].client.post(seats[0].url("rematch"), headers=seats[0].auth).status_code == 409
    _created, seats = finished(client)
    first = client.post(seats[0].url("rematch"), headers=seats[0].auth)
    assert first.status_code == 201
    body = first.get_json()
    assert [s["seat"] for s in body["seats"]] == [0] and "ref" not in body["seats"][0]
    second = client.post(seats[1].url("rematch"), headers=seats[1].auth)
    assert second.status_code == 200 and second.get_json()["id"] == body["id"]
    old = seats[0].view().get_json()
    assert old["rematch_id"] == body["id"]
    new_seats = [
        Seat(client, body["id"], 0, body["seats"][0]["token"]),
        Seat(client, body["id"], 1, second.get_json()["seats"][0]["token"]),
    ]
    assert [s.view().get_json()["seat"] for s in new_seats] == [0, 1]
    by_key = client.post(seats[0].url("rematch"), headers=key(MOBILE))
    assert by_key.status_code == 200
    assert [(s["seat"], s["ref"]) for s in by_key.get_json()["seats"]] == [
        (0, "u-ann"),
        (1, "u-bo"),
    ]
    assert new_seats[0].view().status_code == 401  # the key's call handed out fresh tokens
    mine = client.get(f"/v1/matches/{body['id']}", headers=key(MOBILE)).get_json()
    assert [p["ref"] for p in mine["players"]] == ["u-ann", "u-bo"]


def rematch_at_once(app: Any, seats: list[Seat]) -> list[Any]:
    """Both seats ask for a rematch at the same moment, each on its own client."""
    answers: list[Any] = [None, None]
    start = threading.Barrier(2)

    def ask(index: int) -> None:
        other = app.test_client()
        start.wait()
        answers[index] = other.post(seats[index].url("rematch"), headers=seats[index].auth)

    threads = [threading.Thread(target=ask, args=(index,)) for index in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers


def test_two_seats_asking_for_a_rematch_at_once_get_the_same_match(client, app) -> None:
    for _ in range(3):
        _, seats = finished(client)
        answers = rematch_at_once(app, seats)
        assert sorted(a.status_code for a in answers) == [200, 201]
        assert answers[0].get_json()["id"] == answers[1].get_json()["id"]
        for index, answer in enumerate(answers):
            token = answer.get_json()["seats"][0]["token"]
            rematched = Seat(client, answer.get_json()["id"], index, token)
            assert rematched.view().get_json()["seat"] == index


def test_seats_that_left_are_bots_in_the_rematch(client) -> None:
    _created, seats = owned(
        client,
        ("Ann", "u-ann"),
        ("Bo", "u-bo"),
        "Bot*",
        setup=racks("R10 R11 R12", "K1 K2 K5", "O1 O2 B6"),
        rules={"target_score": 1},
    )
    assert client.post(seats[1].url("leave"), headers=seats[1].auth).status_code == 200
    assert seats[0].play("R10 R11 R12").status_code == 200  # Ann goes out: the match ends
    answer = client.post(seats[0].url("rematch"), headers=key(MOBILE))
    assert answer.status_code == 201
    players = answer.get_json()["match"]["players"]
    assert [(p["name"], p["bot"], p["left"], p["ref"]) for p in players] == [
        ("Ann", False, False, "u-ann"),
        ("Bo", True, False, "u-bo"),
        ("Bot", True, False, None),
    ]
    assert [seat["seat"] for seat in answer.get_json()["seats"]] == [0]


def test_a_match_every_person_left_has_no_rematch(client) -> None:
    """It would seat only bots, play itself through game 1 and wait in the listings for
    nobody: 409, saying why, and nothing is recorded on the old match."""
    _created, seats = owned(client, ("Ann", "u-ann"), ("Bo", "u-bo"), "Bot*")
    client.post(seats[1].url("leave"), headers=seats[1].auth)
    client.post(seats[0].url("leave"), headers=seats[0].auth)
    answer = client.post(seats[0].url("rematch"), headers=key(MOBILE))
    assert answer.status_code == 409
    problem = answer.get_json()
    assert problem["type"].endswith(":nobody-to-rematch")
    assert "every person left this match" in problem["detail"]
    old = client.get(seats[0].url(), headers=key(MOBILE)).get_json()
    assert old["status"] == "finished" and old["rematch_id"] is None
