"""Listing an app's matches on a real Redis Cluster: every shard's indexes, one page at a time."""

from __future__ import annotations

from typing import Any

import pytest

from service.app import create_app
from tests.api.test_backends import MOBILE, key
from tests.api.test_listing import walk
from tests.support.contract import ContractClient

pytestmark = pytest.mark.cluster


@pytest.fixture
def client(redis_cluster_nodes: str) -> Any:
    app = create_app({"redis_cluster_nodes": redis_cluster_nodes, "api_keys": f"mobile={MOBILE}"})
    app.test_client_class = ContractClient
    return app.test_client()


def create(client: Any, *players: dict[str, Any]) -> dict[str, Any]:
    body = {"players": list(players), "rules": {"turn_seconds": 0}}
    response = client.post("/v1/matches", json=body, headers=key(MOBILE))
    assert response.status_code == 201, response.get_json()
    created: dict[str, Any] = response.get_json()
    return created


def test_a_players_matches_across_the_cluster_come_once_each_their_turn_first(client) -> None:
    ids = []
    for number in range(30):
        created = create(
            client, {"name": "Ann", "ref": "u-ann"}, {"name": "Bo", "ref": f"b{number}"}
        )
        ids.append(created["id"])
        if number % 3 == 0:  # the other player's turn in a third of them
            seat = created["match"]["current_seat"]
            token = created["seats"][seat]["token"]
            if created["match"]["players"][seat]["ref"] == "u-ann":
                client.post(
                    f"/v1/matches/{created['id']}/draw",
                    headers={"Authorization": f"Bearer {token}"},
                )

    def meanwhile(_: int) -> None:
        create(client, {"name": "Ann", "ref": "u-ann"}, {"name": "Cy"})

    items = walk(client, between=meanwhile, ref="u-ann", limit=7)
    listed = [item["id"] for item in items]
    assert len(listed) == len(set(listed))
    assert set(ids) <= set(listed)
    turns = [item["your_turn"] for item in items if item["id"] in ids]
    assert turns == sorted(turns, reverse=True), "your turn first"
    everything = walk(client, limit=9)
    assert {item["id"] for item in everything} >= set(ids)
    assert len(everything) == len({item["id"] for item in everything})


def test_leave_cancel_and_rematch_work_on_a_cluster(client) -> None:
    created = create(client, {"name": "Ann", "ref": "u-ann"}, {"name": "Bo", "ref": "u-bo"})
    match_url = f"/v1/matches/{created['id']}"
    left = client.post(f"{match_url}/leave", json={"seat": 1}, headers=key(MOBILE))
    assert left.status_code == 200 and left.get_json()["match"]["players"][1]["left"]
    canceled = client.post(f"{match_url}/cancel", headers=key(MOBILE))
    assert canceled.status_code == 200
    listed = walk(client, ref="u-bo", status="canceled")
    assert [item["id"] for item in listed] == [created["id"]]
