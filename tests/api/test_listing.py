"""Listing an app's matches (GET /v1/matches) against real Redis: order, filters, cursors
that see every match once while matches change, and idle expiry of every key of a match."""

from __future__ import annotations

import random
import time
from typing import Any

import pytest

from service.sweeper import Sweeper
from tests.api.matchclient import Seat
from tests.api.test_backends import MOBILE, PARTNER, key, owned, racks

pytestmark = pytest.mark.usefixtures("redis_url")


@pytest.fixture
def app_overrides() -> dict[str, Any]:
    return {"test_mode": True, "api_keys": f"mobile={MOBILE},partner={PARTNER}"}


def listing(client: Any, app_key: str = MOBILE, **query: Any) -> dict[str, Any]:
    response = client.get("/v1/matches", query_string=query, headers=key(app_key))
    assert response.status_code == 200, response.get_json()
    body: dict[str, Any] = response.get_json()
    return body


def walk(client: Any, *, between: Any = None, **query: Any) -> list[dict[str, Any]]:
    """Every page of a listing; ``between(page_number)`` runs after each page."""
    items, cursor, number = [], None, 0
    while True:
        page = listing(client, **query, **({"cursor": cursor} if cursor else {}))
        items += page["matches"]
        cursor = page["next_cursor"]
        number += 1
        if between is not None:
            between(number)
        if cursor is None:
            return items


def test_an_app_lists_its_own_matches_newest_first(client) -> None:
    mine = [owned(client)[0]["id"] for _ in range(3)]
    owned(client, app_key=PARTNER)
    client.post("/v1/matches", json={"players": [{"name": "A"}, {"name": "B"}]})
    page = listing(client)
    assert [item["id"] for item in page["matches"]] == mine[::-1]
    assert page["next_cursor"] is None
    item = page["matches"][0]
    assert item["players"][0] == {
        "seat": 0,
        "name": "Ann",
        "ref": "u-ann",
        "bot": False,
        "left": False,
    }
    assert "your_turn" not in item and item["status"] == "playing"


def test_a_players_matches_come_their_turn_first_then_the_most_recently_changed(client) -> None:
    waiting, waiting_seats = owned(
        client, ("Bo", "u-bo"), ("Ann", "u-ann"), setup=racks("K2 K3 O7", "R1 R5 B9")
    )
    first, first_seats = owned(
        client, ("Ann", "u-ann"), ("Bo", "u-bo"), setup=racks("R1 R5 B9", "K2 K3 O7")
    )
    second, _ = owned(client, ("Ann", "u-ann"), ("Cy", "u-cy"), setup=racks("R1 R5 B9", "K2 K3 O7"))
    owned(client, ("Di", "u-di"), ("Cy", "u-cy"))
    assert first_seats[0].draw().status_code == 200  # now Bo's turn: Ann waits there
    items = listing(client, ref="u-ann")["matches"]
    assert [(i["id"], i["your_turn"]) for i in items] == [
        (second["id"], True),
        (first["id"], False),
        (waiting["id"], False),
    ]
    assert waiting_seats[0].draw().status_code == 200  # Ann's turn there now
    items = listing(client, ref="u-ann")["matches"]
    assert [(i["id"], i["your_turn"]) for i in items] == [
        (waiting["id"], True),
        (second["id"], True),
        (first["id"], False),
    ]
    assert listing(client, ref="nobody")["matches"] == []
    assert listing(client, app_key=PARTNER, ref="u-ann")["matches"] == []


def test_a_timeout_the_sweeper_settles_moves_the_turn_in_the_listing(client, app) -> None:
    # A minute's turn run by test mode's clock to just before its deadline, which real time
    # then passes: Bo's turn, a minute long, cannot run out too however slow the machine.
    created, _ = owned(client, setup=racks("R1 R5 B9", "K2 K3 O7"), rules={"turn_seconds": 60})
    assert [i["your_turn"] for i in listing(client, ref="u-ann")["matches"]] == [True]
    match = client.get(f"/v1/matches/{created['id']}").get_json()
    ahead = client.post(
        f"/v1/matches/{created['id']}/clock",
        json={"advance": match["turn_deadline"] - match["server_time"] - 2},
    ).get_json()
    assert ahead["current_seat"] == 0  # not run out yet: the sweeper settles it
    time.sleep(max(0.0, ahead["turn_deadline"] - ahead["server_time"]) + 0.1)
    assert Sweeper(app.extensions["referee"]).sweep_once() >= 1
    item = listing(client, ref="u-ann")["matches"][0]
    assert item["your_turn"] is False and item["current_seat"] == 1
    assert listing(client, ref="u-bo")["matches"][0]["your_turn"] is True


def test_status_filters_the_listing(client) -> None:
    playing, _ = owned(client)
    canceled, _ = owned(client)
    client.post(f"/v1/matches/{canceled['id']}/cancel", headers=key(MOBILE))
    assert [i["id"] for i in listing(client, status="canceled")["matches"]] == [canceled["id"]]
    assert [i["id"] for i in listing(client, status="playing")["matches"]] == [playing["id"]]
    by_ref = listing(client, ref="u-ann", status="canceled")["matches"]
    assert [(i["id"], i["status"]) for i in by_ref] == [(canceled["id"], "canceled")]


@pytest.mark.parametrize("by_ref", [False, True])
def test_pages_show_every_match_exactly_once_while_matches_change(client, by_ref: bool) -> None:
    seats: dict[str, list[Seat]] = {}
    for _ in range(23):
        created, match_seats = owned(client, setup=racks("R1 R5 B9 K3", "K2 K4 O7 B1"))
        seats[created["id"]] = match_seats
    rng = random.Random(7)
    extra: list[str] = []

    def meanwhile(page_number: int) -> None:
        for match_id in rng.sample(sorted(seats), 6):
            view = seats[match_id][0].view().get_json()
            if view["status"] == "playing":
                seats[match_id][view["current_seat"]].draw()
        extra.append(owned(client)[0]["id"])  # new matches may or may not show

    query = {"ref": "u-ann"} if by_ref else {}
    items = walk(client, between=meanwhile, limit=4, **query)
    ids = [item["id"] for item in items]
    assert len(ids) == len(set(ids)), "a match was listed twice"
    assert set(seats) <= set(ids), "a match was missed"
    assert set(ids) <= set(seats) | set(extra)


def test_a_cursor_works_only_for_its_own_listing(client) -> None:
    for _ in range(3):
        owned(client)
    plain = listing(client, limit=1)["next_cursor"]
    by_ref = listing(client, limit=1, ref="u-ann")["next_cursor"]
    assert plain and by_ref
    for app_key, query in (
        (PARTNER, {"cursor": plain}),
        (MOBILE, {"cursor": plain, "status": "finished"}),
        (MOBILE, {"cursor": by_ref, "ref": "u-bo"}),
        (MOBILE, {"cursor": by_ref}),
        (MOBILE, {"cursor": "not-a-cursor"}),
    ):
        response = client.get("/v1/matches", query_string=query, headers=key(app_key))
        assert response.status_code == 422, query


@pytest.mark.parametrize(
    "query", [{"limit": 0}, {"limit": 101}, {"status": "lost"}, {"ref": "x" * 129}]
)
def test_a_bad_query_is_400(client, query: dict[str, Any]) -> None:
    response = client.get("/v1/matches", query_string=query, headers=key(MOBILE))
    assert response.status_code == 400


def test_listing_needs_a_key(client) -> None:
    assert client.get("/v1/matches").status_code == 401


# -- idle expiry ------------------------------------------------------------------------


@pytest.fixture
def short_lived(redis_url: str) -> Any:
    """An app whose matches expire after 1 s idle, and its store."""
    from service.app import create_app
    from tests.support.contract import ContractClient

    app = create_app(
        {
            "redis_url": redis_url,
            "test_mode": True,
            "api_keys": f"mobile={MOBILE}",
            "idle_match_ttl": 1,
        }
    )
    app.test_client_class = ContractClient
    return app


def test_an_idle_match_expires_with_every_key_and_leaves_the_listing(
    short_lived, redis_client
) -> None:
    client = short_lived.test_client()
    created, _seats = owned(client)
    anonymous = client.post("/v1/matches", json={"players": [{"name": "A"}, {"name": "B"}]})
    assert anonymous.status_code == 201
    assert len(listing(client)["matches"]) == 1
    time.sleep(1.2)
    assert listing(client)["matches"] == []
    assert listing(client, ref="u-ann")["matches"] == []
    assert client.get(f"/v1/matches/{created['id']}").status_code == 404
    assert Sweeper(short_lived.extensions["referee"]).sweep_once() >= 2
    # An app's outbox (its notifications, for webhooks and the feed) is the app's history,
    # kept 7 days whatever its matches do: not a key of the match.
    leftover = [
        k for k in redis_client.scan_iter() if not k.startswith("walk:") and ":out:" not in k
    ]
    assert leftover == []


def test_redis_memory_per_finished_and_expired_match_returns_to_zero(
    short_lived, redis_client
) -> None:
    client = short_lived.test_client()
    store = short_lived.extensions["store"]

    def dataset() -> int:
        """Redis's data (used_memory less its own overhead: clients, scripts, buffers)."""
        return int(redis_client.info("memory")["used_memory_dataset"])

    def finish(count: int) -> None:
        for _ in range(count):
            _, seats = owned(
                client, setup=racks("R10 R11 R12", "K1 K2 K5"), rules={"target_score": 1}
            )
            assert seats[0].play("R10 R11 R12").status_code == 200
        listing(client, ref="u-ann", limit=5)

    def expire() -> None:
        time.sleep(1.2)
        store.expire_idle()
        for walk_key in redis_client.scan_iter("walk:*"):
            redis_client.delete(walk_key)  # a walk's order lives WALK_TTL, not per match
        for outbox in redis_client.scan_iter("*:out:*"):
            redis_client.delete(outbox)  # an app's outbox lives 7 days, not per match

    finish(5)  # warm up: the shards' hashes and sorted sets exist, and are emptied again
    expire()
    baseline = dataset()
    finish(60)
    held = dataset() - baseline
    expire()
    left = dataset() - baseline
    assert redis_client.dbsize() == 0  # no key of any match, no listing entry is left
    assert held > 60 * 1024, held  # 60 finished matches took room...
    assert left < held / 20, (held, left)  # ...and gave it all back, but allocator noise
