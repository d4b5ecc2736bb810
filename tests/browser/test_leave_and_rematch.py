"""Leaving a match from the table (a bot takes the seat) and asking for a rematch after it,
at a desktop's size and a phone's: the other seat sees both, and both seats of a rematch land
in the same new match."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import Server, shot
from tests.browser.table import Table
from tests.browser.test_accessibility import serious_violations
from tests.browser.test_phone import assert_fits_the_screen, assert_targets_take_a_finger


def two_people(server: Server, **setup: Any) -> dict[str, Any]:
    return server.create(
        {
            "players": [{"name": "Ann"}, {"name": "Bo"}],
            "rules": setup.pop("rules", {"turn_seconds": 0}),
            "setup": setup,
        }
    )


def match_id_of(page: Any) -> str:
    found = re.search(r"[#&]m=([^&]+)", page.url)
    assert found, page.url
    return found.group(1)


@pytest.mark.parametrize("device", ["desktop", "phone"])
def test_a_player_leaves_mid_game_and_a_bot_takes_the_seat(
    new_page: Callable[..., Any], server: Server, device: str
) -> None:
    # Ann cannot play R1 R2 B5: when she leaves on her turn, her bot draws O3 at once.
    created = two_people(
        server,
        racks=[["R1", "R2", "B5"], ["K1", "K2", "O7"]],
        pool=["O3", "B10", "B11"],
        first_seat=0,
    )
    match_id = created["id"]
    ann_token, bo_token = (seat["token"] for seat in created["seats"])
    ann = new_page(device, bypass_csp=True)
    ann.goto(server.seat_url(match_id, ann_token))
    Table(ann).wait_for_my_turn()
    bo = new_page(device)
    bo.goto(server.seat_url(match_id, bo_token))
    expect(bo.locator("#turn-text")).to_contain_text("Ann is playing")

    # Leaving asks first; "Stay" changes nothing.
    leave = ann.get_by_role("button", name="Leave this match: a bot plays your seat")
    leave.click()
    dialog = ann.locator("#leave-dialog")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("You cannot come back")
    if device != "desktop":
        assert_fits_the_screen(ann, device)
        assert_targets_take_a_finger(ann)
    ann.get_by_role("button", name="Stay", exact=True).click()
    expect(dialog).to_be_hidden()
    _, view = server.api("GET", f"/v1/matches/{match_id}")
    assert view["players"][0]["left"] is False and view["current_seat"] == 0

    leave.click()
    ann.get_by_role("button", name="Leave the match", exact=True).click()
    banner = ann.locator("#left-banner")
    expect(banner).to_be_visible()
    expect(banner).to_contain_text("You left this match: a bot plays your seat (Ann) now")
    # No more moves: no rack, no actions, no Leave; the header says the page only watches.
    expect(ann.locator("#rack-area")).to_be_hidden()
    expect(ann.locator("#actions")).to_be_hidden()
    expect(leave).to_be_hidden()
    expect(ann.locator("#match-info")).to_contain_text("Watching")
    expect(ann.locator('#players .player[data-seat="0"]')).to_contain_text("left · bot")
    expect(ann.locator("#log")).to_contain_text("Ann (you) left the match")

    # The referee: Ann's seat is a bot now, it played her turn at once (drew), Bo is to play.
    _, view = server.api("GET", f"/v1/matches/{match_id}")
    assert view["players"][0]["left"] is True and view["players"][0]["bot"] is True
    assert view["players"][0]["rack_count"] == 4
    assert view["current_seat"] == 1
    expect(ann.locator("#turn-text")).to_contain_text("Bo is playing")

    # The other seat sees it live, and it is their turn.
    expect(bo.locator('#players .player[data-seat="0"]')).to_contain_text("left · bot")
    expect(bo.locator("#log")).to_contain_text("Ann left the match")
    Table(bo).wait_for_my_turn()

    # From then on the seat's moves are its bot's, on both pages: Ann's is no longer "you".
    for page in (ann, bo):
        drew = page.locator('#log li[data-type="drew"]')
        expect(drew).to_have_count(1)
        expect(drew).to_contain_text("Bot (for Ann) drew a tile.")
    expect(ann.locator("#log")).not_to_contain_text("Ann (you) drew")

    if device != "desktop":
        assert_fits_the_screen(ann, device)
        assert_targets_take_a_finger(ann)
    shot(ann, f"{device}-left-the-match")
    found = serious_violations(ann)
    assert found == [], "\n".join(f"{v['id']}: {n}" for v in found for n in v["nodes"])

    # A reload still says so (the seat's token now opens the public view).
    ann.reload()
    expect(ann.locator("#left-banner")).to_contain_text("You left this match")
    expect(ann.locator("#rack-area")).to_be_hidden()
    expect(ann.locator('#log li[data-type="player_left"]')).to_contain_text("Ann (you) left")
    expect(ann.locator('#log li[data-type="drew"]')).to_contain_text("Bot (for Ann) drew")


def finish_a_match(server: Server) -> tuple[str, str, str]:
    """A two-person match Ann ends on her first turn (a target of 1 point)."""
    created = two_people(
        server,
        rules={"turn_seconds": 0, "target_score": 1},
        racks=[["K10", "K11", "K12"], ["O1", "O2", "B6"]],
        pool=["R1"],
        first_seat=0,
    )
    return created["id"], created["seats"][0]["token"], created["seats"][1]["token"]


def go_out(page: Any) -> None:
    table = Table(page)
    table.wait_for_my_turn()
    for code in ("K10", "K11", "K12"):
        table.rack_tile(code).click()
        target = "in a new set" if code == "K10" else "at the end of set 1"
        page.get_by_role("button", name=f"Put the selected tile {target}").click()
    table.press("Submit your play")


@pytest.mark.parametrize("device", ["desktop", "phone"])
def test_after_a_match_both_seats_land_in_the_same_rematch(
    new_page: Callable[..., Any], server: Server, device: str
) -> None:
    match_id, ann_token, bo_token = finish_a_match(server)
    ann, bo = new_page(device), new_page(device)
    ann.goto(server.seat_url(match_id, ann_token))
    bo.goto(server.seat_url(match_id, bo_token))
    expect(bo.locator("#turn-text")).to_contain_text("Ann is playing")
    go_out(ann)
    for page in (ann, bo):
        expect(page.locator("#result-dialog")).to_contain_text("Ann")
        expect(page.locator("#result-dialog")).to_contain_text("wins the match")
        expect(
            page.get_by_role("button", name="Leave this match: a bot plays your seat")
        ).to_be_hidden()
    rematch = ann.locator("#rematch-button")
    expect(rematch).to_have_text("Rematch")
    if device != "desktop":
        assert_fits_the_screen(ann, device)
        assert_targets_take_a_finger(ann)
    shot(ann, f"{device}-rematch-offered")

    # Ann asks: her page moves to her seat in the new match.
    rematch.click()
    ann.wait_for_function("id => !location.hash.includes(`m=${id}`)", arg=match_id)
    new_id = match_id_of(ann)
    expect(ann.locator("#rack .tile")).to_have_count(14)
    expect(ann.locator("#match-info")).to_contain_text("Game 1")

    # Bo's page learns of it though its stream ended with the match (it polls the view), and
    # offers to join: Bo lands in the same match, at his own seat.
    join = bo.locator("#rematch-button")
    expect(join).to_have_text("Join the rematch")
    expect(bo.locator("#turn-text .rematch")).to_have_text("Join the rematch")
    if device != "desktop":
        assert_fits_the_screen(bo, device)
        assert_targets_take_a_finger(bo)
    join.click()
    bo.wait_for_function("id => !location.hash.includes(`m=${id}`)", arg=match_id)
    assert match_id_of(bo) == new_id
    expect(bo.locator("#rack .tile")).to_have_count(14)
    expect(bo.locator('#players .player.you[data-seat="1"]')).to_contain_text("Bo (you)")
    expect(ann.locator('#players .player.you[data-seat="0"]')).to_contain_text("Ann (you)")

    _, old = server.api("GET", f"/v1/matches/{match_id}")
    assert old["rematch_id"] == new_id
    _, new = server.api("GET", f"/v1/matches/{new_id}")
    assert [p["name"] for p in new["players"]] == ["Ann", "Bo"]
    assert new["status"] == "playing"
    if device != "desktop":
        assert_fits_the_screen(bo, device)


def test_two_seats_asking_at_once_get_one_rematch(
    new_page: Callable[..., Any], server: Server
) -> None:
    match_id, ann_token, bo_token = finish_a_match(server)
    ann, bo = new_page(), new_page("phone")
    ann.goto(server.seat_url(match_id, ann_token))
    bo.goto(server.seat_url(match_id, bo_token))
    expect(bo.locator("#turn-text")).to_contain_text("Ann is playing")
    go_out(ann)
    for page in (ann, bo):
        expect(page.locator("#rematch-button")).to_have_text("Rematch")
    # Both press before either page has heard of the other's rematch.
    ann.locator("#rematch-button").click(no_wait_after=True)
    bo.locator("#rematch-button").click(no_wait_after=True)
    for page in (ann, bo):
        page.wait_for_function("id => !location.hash.includes(`m=${id}`)", arg=match_id)
        expect(page.locator("#rack .tile")).to_have_count(14)
    assert match_id_of(ann) == match_id_of(bo)
    _, old = server.api("GET", f"/v1/matches/{match_id}")
    assert old["rematch_id"] == match_id_of(ann)


def test_the_last_person_leaving_ends_the_match_as_abandoned(
    new_page: Callable[..., Any], server: Server
) -> None:
    created = server.create(
        {
            "players": [{"name": "Ann"}, {"name": "Bot", "bot": True}],
            "rules": {"turn_seconds": 0},
            "setup": {"racks": [["R1", "R2", "B5"], ["K1", "K2", "O7"]], "pool": ["O3"]},
        }
    )
    page = new_page()
    page.goto(server.seat_url(created["id"], created["seats"][0]["token"]))
    Table(page).wait_for_my_turn()
    page.get_by_role("button", name="Leave this match: a bot plays your seat").click()
    page.get_by_role("button", name="Leave the match", exact=True).click()
    dialog = page.locator("#result-dialog")
    expect(dialog).to_contain_text("Match over: every player left")
    expect(dialog).to_contain_text("Game 1 was abandoned")
    # A seat that left is offered no rematch: a new match instead.
    expect(page.locator("#rematch-button")).to_be_hidden()
    expect(page.get_by_role("link", name="New match", exact=True)).to_be_visible()
    page.get_by_role("button", name="Close and look at the table").click()
    expect(page.locator("#left-banner")).to_contain_text("You left this match")
    expect(page.locator("#turn-text")).to_contain_text("every player left, nobody wins")
    _, view = server.api("GET", f"/v1/matches/{created['id']}")
    assert view["status"] == "finished" and view["winner"] is None
    assert view["last_outcome"]["reason"] == "abandoned"
