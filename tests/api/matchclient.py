"""A small driver for match tests: create matches in test mode and act as seats."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from service.game import from_dict
from service.rules import TileSet, full_set
from service.store import Keys
from tests.game.support import all_tiles


class Seat:
    """One seat of a match, acting through the (contract-validating) test client."""

    def __init__(self, client: Any, match_id: str, seat: int, token: str) -> None:
        self.client, self.match_id, self.seat, self.token = client, match_id, seat, token

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def url(self, action: str = "") -> str:
        return f"/v1/matches/{self.match_id}" + (f"/{action}" if action else "")

    def view(self, **headers: str) -> Any:
        return self.client.get(self.url(), headers={**self.auth, **headers})

    def rack(self) -> list[str]:
        return self.view().get_json()["rack"]

    def play(self, *sets: str, **headers: str) -> Any:
        table = [s.split() for s in sets]
        return self.client.post(
            self.url("play"), json={"table": table}, headers={**self.auth, **headers}
        )

    def draft(self, *sets: str, **headers: str) -> Any:
        table = [s.split() for s in sets]
        return self.client.put(
            self.url("draft"), json={"table": table}, headers={**self.auth, **headers}
        )

    def draw(self, **headers: str) -> Any:
        return self.client.post(self.url("draw"), headers={**self.auth, **headers})

    def pass_(self, **headers: str) -> Any:
        return self.client.post(self.url("pass"), headers={**self.auth, **headers})

    def next_game(self, **headers: str) -> Any:
        return self.client.post(self.url("next-game"), headers={**self.auth, **headers})


def create(
    client: Any, *names: str, rules: dict | None = None, **extra: Any
) -> tuple[dict, list[Seat]]:
    """Create a match; return the 201 body and a :class:`Seat` per player."""
    players = [
        {"name": n.removesuffix("*"), "bot": n.endswith("*")} for n in names or ("Ann", "Bo")
    ]
    body = {"players": players, "rules": {"turn_seconds": 0, **(rules or {})}, **extra}
    response = client.post("/v1/matches", json=body)
    assert response.status_code == 201, response.get_json()
    created = response.get_json()
    seats = [Seat(client, created["id"], s["seat"], s["token"]) for s in created["seats"]]
    return created, seats


def setup(
    client: Any,
    racks: list[str],
    *,
    pool: str = "",
    table: list[str] | None = None,
    melded: list[bool] | None = None,
    first_seat: int = 0,
    rules: dict | None = None,
    names: tuple[str, ...] = (),
) -> tuple[dict, list[Seat]]:
    """Create a test-mode match from a known position (tiles as codes)."""
    arrangement: dict[str, Any] = {
        "racks": [rack.split() for rack in racks],
        "pool": pool.split(),
        "table": [s.split() for s in table or []],
        "first_seat": first_seat,
    }
    if melded is not None:
        arrangement["melded"] = melded
    names = names or tuple(f"P{i}" for i in range(len(racks)))
    return create(client, *names, rules=rules, setup=arrangement)


def stored_tiles(redis_client: Any, match_id: str) -> Counter:
    """Every tile of the stored match: racks + pool + table."""
    state = json.loads(redis_client.hget(Keys(match_id).state, "s"))["m"]
    return all_tiles(from_dict(state))


def full_box(tile_set: str = "standard") -> Counter:
    return full_set(TileSet(tile_set))
