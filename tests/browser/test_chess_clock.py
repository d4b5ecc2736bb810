"""The chess clock on the web table (docs/CLOCKS.md): both banks side by side, on a desktop and
on a phone, the running one lit and counting down, a warning where it runs low, and a fallen
flag; the lobby offers the MSO preset."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import Server, shot

BANK = {"clock": {"type": "bank", "bank_seconds": 300}}  # low at 30 s: a tenth


def bank_match(server: Server) -> dict[str, Any]:
    return server.create(
        {
            "players": [{"name": "Ann"}, {"name": "Bo"}, {"name": "Cy"}],
            "rules": BANK,
            "setup": {
                "racks": [["R1", "R2", "B5"], ["K1", "K2", "O7"], ["O1", "O2", "K9"]],
                "pool": ["O3", "B10", "B11", "B12"],
                "first_seat": 0,
            },
        }
    )


@pytest.mark.parametrize("device", ["desktop", "phone"])
def test_both_banks_show_the_running_one_warns_when_low_and_a_flag_falls(
    new_page: Callable[..., Any], server: Server, device: str
) -> None:
    created = bank_match(server)
    match_id, token = created["id"], created["seats"][1]["token"]
    page = new_page(device=device)
    page.goto(server.seat_url(match_id, token))
    expect(page.locator("#conn")).to_have_attribute("data-mode", "live")  # it hears the clock
    faces = page.locator("#banks .bank")
    expect(faces).to_have_count(3)
    ann = faces.nth(0)
    expect(ann).to_have_class("bank running")
    expect(ann.locator(".bank-time")).to_have_text(re.compile(r"^(5:00|4:[0-5]\d)$"))  # it runs
    expect(faces.nth(1).locator(".bank-time")).to_have_text("5:00")  # Bo's waits
    boxes = [faces.nth(i).bounding_box() for i in range(3)]
    assert all(box is not None for box in boxes)
    assert len({round(box["y"]) for box in boxes if box}) == 1  # side by side, a phone too
    table = page.locator(".table-area").bounding_box()
    assert table is not None and all(box["y"] < table["y"] for box in boxes if box), (
        "the clock sits with the turn, above the table (not under the pinned rack)"
    )

    status, _ = server.api("POST", f"/v1/matches/{match_id}/clock", {"advance": 280})
    assert status == 200
    expect(ann).to_have_class("bank running low")  # under 20 s left: the warning
    shot(page, f"chess-clock-low-{device}")
    status, _ = server.api("POST", f"/v1/matches/{match_id}/clock", {"advance": 30})
    assert status == 200
    expect(ann).to_have_class("bank flagged")
    expect(ann.locator(".bank-time")).to_have_text("Flag")
    expect(faces.nth(1)).to_have_class("bank running")  # Bo's clock runs now
    shot(page, f"chess-clock-flag-{device}")


def test_a_per_turn_match_shows_no_chess_clock(
    new_page: Callable[..., Any], server: Server
) -> None:
    created = server.create(
        {
            "players": [{"name": "Ann"}, {"name": "Bo"}],
            "rules": {"turn_seconds": 60},
            "setup": {"racks": [["R1"], ["K1"]], "pool": ["O3"], "first_seat": 0},
        }
    )
    page = new_page()
    page.goto(server.seat_url(created["id"], created["seats"][0]["token"]))
    expect(page.locator("#clock")).to_be_visible()
    expect(page.locator("#banks")).to_be_hidden()


def test_the_lobby_offers_the_mso_preset(page: Any, server: Server) -> None:
    page.goto(server.url + "/")
    page.get_by_label("Name of player 1").fill("Ann")
    page.get_by_label("Rule set").select_option("mso")
    page.get_by_role("button", name="Create match").click()
    expect(page.locator("#rack .tile")).to_have_count(14)
    expect(page.locator("#rack .tile.joker, #rack [data-code='J']").first).to_be_attached()
    expect(page.locator("#banks .bank")).to_have_count(2)
    expect(page.locator("#banks .bank .bank-time").first).to_contain_text(":")
    match_id = page.evaluate("new URLSearchParams(location.hash.slice(1)).get('m')")
    status, view = server.api("GET", f"/v1/matches/{match_id}")
    assert status == 200
    assert view["rules"]["preset"] == "mso" and view["rules"]["dealt_jokers"] == 1
    assert view["rules"]["clock"]["delay"] == "bronstein"


def whole_box(*racks: list[str]) -> list[str]:
    """The standard box less ``racks``: a pool a redeal can deal whole racks from again."""
    box = [f"{colour}{n}" for colour in "RBKO" for n in range(1, 14)] * 2 + ["J", "J"]
    for tile in (tile for rack in racks for tile in rack):
        box.remove(tile)
    return box


def test_a_rack_dealt_three_doubles_asks_for_a_new_deal_and_a_player_gives_time(
    new_page: Callable[..., Any], server: Server
) -> None:
    ann = ["R1", "R1", "B2", "B2", "K3", "K3", "O4", "O5", "O6", "R8", "B9", "K10", "O11", "J"]
    bo = ["R2", "B3", "K4", "O7", "R9", "B10", "K11", "O12", "R13", "B5", "K6", "O8", "R4", "J"]
    created = server.create(
        {
            "players": [{"name": "Ann"}, {"name": "Bo"}],
            "rules": {"preset": "mso"},
            "setup": {"racks": [ann, bo], "pool": whole_box(ann, bo), "first_seat": 0},
        }
    )
    match_id, seats = created["id"], created["seats"]
    bos_page = new_page()
    bos_page.goto(server.seat_url(match_id, seats[1]["token"]))
    expect(bos_page.locator("#rack .tile")).to_have_count(14)
    expect(bos_page.locator("#redeal-button")).to_be_hidden()  # no doubles in Bo's rack

    page = new_page(device="phone")
    page.goto(server.seat_url(match_id, seats[0]["token"]))
    expect(page.locator("#rack .tile")).to_have_count(14)
    page.get_by_role("button", name="Ask for a new deal: your rack was dealt 3 doubles").tap()
    expect(page.locator("#notice")).to_contain_text("The racks were dealt anew.")
    expect(page.locator("#log")).to_contain_text(
        "Ann (you) held 3 doubles: the racks were dealt anew."
    )
    expect(bos_page.locator("#log")).to_contain_text("Ann held 3 doubles")  # Bo sees it live
    status, view = server.api("GET", f"/v1/matches/{match_id}", token=seats[0]["token"])
    assert status == 200 and sorted(view["rack"]) != sorted(ann)
    expect(page.locator("#rack .tile")).to_have_count(14)

    # Ann's clock runs, Bo's waits: she gives him 15 s from her page (never to herself).
    faces = page.locator("#banks .bank-slot")
    expect(faces.nth(0).locator(".bank-give")).to_have_count(0)
    page.get_by_role("button", name="Give Bo 15 seconds").tap()
    expect(page.locator("#log")).to_contain_text("Ann (you) gave Bo 15 s.")
    status, view = server.api("GET", f"/v1/matches/{match_id}")
    assert view["players"][1]["time_left"] == view["rules"]["clock"]["bank_seconds"] + 15
    shot(page, "chess-clock-redeal-and-gift-phone")


def test_the_turn_countdown_follows_a_test_mode_clock_run_ahead(
    new_page: Callable[..., Any], server: Server
) -> None:
    created = server.create(
        {
            "players": [{"name": "Ann"}, {"name": "Bo"}],
            "rules": {"turn_seconds": 600},
            "setup": {"racks": [["R1", "R2"], ["K1", "K2"]], "pool": ["O3"], "first_seat": 0},
        }
    )
    match_id = created["id"]
    page = new_page()
    page.goto(server.seat_url(match_id, created["seats"][1]["token"]))
    expect(page.locator("#conn")).to_have_attribute("data-mode", "live")
    expect(page.locator("#clock")).to_have_text(re.compile(r"^(10:00|9:[0-5]\d)$"))
    status, _ = server.api("POST", f"/v1/matches/{match_id}/clock", {"advance": 300})
    assert status == 200
    # The match's clock is 5 minutes on: so is the countdown, at once (not after the page's
    # next measure of the server's clock).
    expect(page.locator("#clock")).to_have_text(re.compile(r"^(5:00|4:[0-5]\d)$"))
