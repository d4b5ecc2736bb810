"""Random whole matches over HTTP: at every step racks + pool + table is the full box,
and every finished game's scores sum to zero."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from service.rules import Rules, TileSet, parse_tiles
from service.rules.solver import SolveStatus, solve
from tests.api.matchclient import create, full_box, stored_tiles


@pytest.fixture
def app_overrides() -> dict:
    return {"test_mode": True}


def random_junk(rng: random.Random, rack: list[str]) -> list[list[str]]:
    """A play that is usually illegal: some rack tiles in one set."""
    return [rng.sample(rack, k=min(len(rack), rng.randint(1, 4)))]


@pytest.mark.parametrize(
    ("seed", "players", "tile_set"), [(1, 2, "standard"), (2, 4, "standard"), (3, 5, "xp")]
)
def test_random_matches_conserve_every_tile_and_score_zero_sum(
    client, redis_client, seed: int, players: int, tile_set: str
) -> None:
    rng = random.Random(seed)
    created, seats = create(
        client,
        *[f"P{i}" for i in range(players)],
        rules={"tile_set": tile_set, "rounds": 1},
        seed=seed,
    )
    box = full_box(tile_set)
    match_id = created["id"]
    games_checked = refused = 0
    for _ in range(400):
        view = client.get(f"/v1/matches/{match_id}").get_json()
        if view["status"] == "finished":
            break
        if view["status"] == "game_over":
            assert sum(view["last_outcome"]["scores"]) == 0
            games_checked += 1
            assert seats[0].next_game().status_code == 200
            continue
        seat = seats[view["current_seat"]]
        mine = seat.view().get_json()
        roll = rng.random()
        if roll < 0.15:
            junk = [" ".join(s) for s in random_junk(rng, mine["rack"])] + [
                " ".join(s) for s in view["table"]
            ]
            response = seat.play(*junk)
            if response.status_code == 422:
                refused += 1
                assert (
                    client.get(f"/v1/matches/{match_id}").get_json()["version"] == view["version"]
                )
        else:
            table = [parse_tiles(s) for s in view["table"]]
            answer = solve(
                table,
                Counter(parse_tiles(mine["rack"])),
                melded=mine["players"][seat.seat]["melded"],
                rules=Rules(tile_set=TileSet(tile_set)),
                time_budget=2.0,
            )
            if answer.status is SolveStatus.PLAY_FOUND and roll < 0.85:
                response = seat.play(*[" ".join(t.code for t in s) for s in answer.table])
                assert response.status_code == 200, response.get_json()
            elif view["pool_count"]:
                assert seat.draw().status_code == 200
            else:
                response = seat.pass_()
                assert response.status_code in (200, 422), response.get_json()
                if response.status_code == 422:
                    response = seat.play(*[" ".join(t.code for t in s) for s in answer.table])
                    assert response.status_code == 200
        assert stored_tiles(redis_client, match_id) == box
    assert games_checked >= 1
    assert refused >= 1
