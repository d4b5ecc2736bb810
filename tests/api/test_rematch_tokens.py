"""Whose token opens a rematch's seat (issue 30, docs/RULINGS.md "Rematch"): a reissue by the
owner wins; a seat token of the finished match claims the rematch's seat only while the owner
has not handed it out, and never once the rematch is canceled."""

from __future__ import annotations

from typing import Any

from tests.api.matchclient import Seat
from tests.api.test_backends import MOBILE, app_overrides, finished, key  # noqa: F401


def rematch(client: Any, old: Seat) -> Any:
    return client.post(old.url("rematch"), headers=old.auth)


def seat_of(client: Any, answer: Any) -> Seat:
    body = answer.get_json()
    (shown,) = body["seats"]
    return Seat(client, body["id"], shown["seat"], shown["token"])


def test_an_old_seat_token_does_not_take_back_a_seat_the_owner_reissued(client) -> None:
    _created, old = finished(client)
    claimed = rematch(client, old[1])
    assert claimed.status_code == 201
    new_id = claimed.get_json()["id"]
    reissued = client.post(f"/v1/matches/{new_id}/seats/1/token", headers=key(MOBILE))
    assert reissued.status_code == 201
    owners = Seat(client, new_id, 1, reissued.get_json()["token"])
    again = rematch(client, old[1])
    assert again.status_code == 409, again.get_json()
    assert again.get_json()["type"].endswith(":seat-reissued")
    assert owners.view().get_json()["seat"] == 1  # the owner's token still opens the seat
    assert seat_of(client, claimed).view().status_code == 401  # the owner's reissue replaced it


def test_an_old_seat_token_still_claims_a_seat_the_owner_did_not_reissue(client) -> None:
    _created, old = finished(client)
    first = seat_of(client, rematch(client, old[0]))
    client.post(f"/v1/matches/{first.match_id}/seats/1/token", headers=key(MOBILE))
    second_device = rematch(client, old[0])  # seat 0: only seat 1 was reissued
    assert second_device.status_code == 200
    assert seat_of(client, second_device).view().get_json()["seat"] == 0
    assert first.view().status_code == 401  # the seat moved to the second device


def test_the_owners_key_on_the_rematch_hands_every_seat_out_for_good(client) -> None:
    _created, old = finished(client)
    rematch(client, old[0])
    by_key = client.post(old[0].url("rematch"), headers=key(MOBILE))
    assert by_key.status_code == 200
    for seat in old:
        assert rematch(client, seat).status_code == 409
    tokens = {s["seat"]: s["token"] for s in by_key.get_json()["seats"]}
    new_id = by_key.get_json()["id"]
    assert [Seat(client, new_id, n, t).view().status_code for n, t in tokens.items()] == [200, 200]


def test_a_canceled_rematch_is_never_handed_out(client) -> None:
    _created, old = finished(client)
    new_id = rematch(client, old[0]).get_json()["id"]
    assert client.post(f"/v1/matches/{new_id}/cancel", headers=key(MOBILE)).status_code == 200
    for asked in (rematch(client, old[0]), rematch(client, old[1])):
        assert asked.status_code == 409
        assert asked.get_json()["type"].endswith(":match-canceled")
    by_key = client.post(old[0].url("rematch"), headers=key(MOBILE))
    assert by_key.status_code == 409
