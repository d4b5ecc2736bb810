""" "Replay this game" after a game ends: the table steps forward and back through the game's
record, turn by turn, as the referee replays it (at a desktop's size and a phone's)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import Server, shot
from tests.browser.test_accessibility import serious_violations
from tests.browser.test_phone import assert_fits_the_screen


def a_finished_game(server: Server) -> tuple[str, str]:
    """Bo draws O3, then Ann goes out with R10 R11 R12: a game of two turns."""
    created = server.create(
        {
            "players": [{"name": "Ann"}, {"name": "Bo"}],
            "rules": {"turn_seconds": 0},
            "setup": {
                "racks": [["R10", "R11", "R12"], ["K1", "K2", "O7"]],
                "pool": ["O3", "B10"],
                "first_seat": 1,
            },
        }
    )
    match_id = created["id"]
    ann, bo = (seat["token"] for seat in created["seats"])
    assert server.api("POST", f"/v1/matches/{match_id}/draw", token=bo)[0] == 200
    table = {"table": [["R10", "R11", "R12"]]}
    assert server.api("POST", f"/v1/matches/{match_id}/play", table, token=ann)[0] == 200
    return match_id, ann


@pytest.mark.parametrize("device", ["desktop", "phone"])
def test_a_finished_game_can_be_replayed_forward_and_back(
    new_page: Callable[..., Any], server: Server, device: str
) -> None:
    match_id, ann = a_finished_game(server)
    page = new_page(device, bypass_csp=True)
    page.goto(server.seat_url(match_id, ann))
    result = page.locator("#result-dialog")
    expect(result).to_be_visible()
    result.get_by_role("button", name="Replay this game, turn by turn").click()

    replay = page.locator("#replay-dialog")
    expect(replay).to_be_visible()
    expect(result).to_be_hidden()
    step, what = replay.locator("#replay-step"), replay.locator("#replay-what")
    expect(step).to_have_text("Turn 0 of 2")
    expect(what).to_have_text("As dealt.")
    expect(replay.locator("#replay-table")).to_contain_text("The table is empty.")
    ann_row = replay.locator(".replay-player").nth(0)
    expect(ann_row).to_contain_text("Ann: 3 tiles")
    expect(ann_row.locator(".replay-rack .tile")).to_have_count(3)  # the game is over: racks
    back = replay.get_by_role("button", name="One turn back")
    forward = replay.get_by_role("button", name="One turn forward")
    expect(back).to_be_disabled()

    forward.click()
    expect(step).to_have_text("Turn 1 of 2")
    expect(what).to_have_text("Bo drew a tile.")
    expect(replay.locator(".replay-player").nth(1)).to_contain_text("Bo: 4 tiles")
    forward.click()
    expect(step).to_have_text("Turn 2 of 2")
    expect(what).to_have_text("Ann played R10 R11 R12. Ann wins the game.")
    expect(replay.locator("#replay-table .replay-set .tile")).to_have_count(3)
    expect(forward).to_be_disabled()
    if device == "desktop":
        found = serious_violations(page)
        assert not found, [v["id"] for v in found]
        shot(page, "replay-end")
    else:
        assert_fits_the_screen(page, device)

    back.click()
    expect(step).to_have_text("Turn 1 of 2")
    page.keyboard.press("ArrowLeft")
    expect(step).to_have_text("Turn 0 of 2")
    page.keyboard.press("ArrowRight")
    expect(step).to_have_text("Turn 1 of 2")
    replay.get_by_role("button", name="To the end").click()
    expect(step).to_have_text("Turn 2 of 2")
    replay.get_by_role("button", name="Close").click()
    expect(replay).to_be_hidden()


def test_the_replay_button_is_only_offered_once_a_game_has_ended(
    new_page: Callable[..., Any], server: Server
) -> None:
    created = server.create({"players": [{"name": "Ann"}, {"name": "Bo"}], "seed": 3})
    page = new_page("desktop")
    page.goto(server.seat_url(created["id"], created["seats"][0]["token"]))
    expect(page.locator("#turn-text")).not_to_be_empty()
    expect(page.locator("#replay-button")).to_be_hidden()
