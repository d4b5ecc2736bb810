"""The lobby: a match with people and a bot is created from the page, and seat links shared."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect

from tests.browser.conftest import Server, shot


def test_a_match_created_in_the_lobby_seats_people_and_a_bot_with_their_links(
    new_page: Any, server: Server
) -> None:
    page = new_page()
    page.goto(server.url + "/")
    page.get_by_label("Name of player 1").fill("Ann")
    page.get_by_role("button", name="Add a person").click()
    page.get_by_label("Name of player 3").fill("Bo")
    page.get_by_label("Seconds per turn").fill("120")
    shot(page, "lobby-1-new-match")
    page.get_by_role("button", name="Create match").click()

    # Two people: the seat links open at once. Each link holds the token after the '#'.
    invite = page.locator("#invite-dialog")
    expect(invite).to_be_visible()
    bo_link = page.get_by_label("Seat link for Bo", exact=True).input_value()
    assert "#m=" in bo_link and "&t=" in bo_link
    assert page.get_by_label("Link for spectators").input_value().split("#")[1].startswith("m=")
    expect(invite).to_contain_text("a bot: it plays by itself")
    shot(page, "lobby-2-seat-links")
    page.get_by_role("button", name="Close the seat links").click()

    expect(page.locator("#players .player")).to_have_count(3)
    expect(page.locator("#players .player.you")).to_contain_text("Ann (you)")
    expect(page.locator("#rack .tile")).to_have_count(14)
    expect(page.locator("#conn")).to_have_attribute("data-mode", "live")

    bo = new_page()
    bo.goto(bo_link)
    expect(bo.locator("#players .player.you")).to_contain_text("Bo (you)")
    expect(bo.locator("#rack .tile")).to_have_count(14)
    assert "t=" not in bo.evaluate("document.referrer")


def test_a_refused_creation_shows_the_reason(page: Any, server: Server) -> None:
    page.goto(server.url + "/")
    page.get_by_label("Name of player 1").fill("")
    page.get_by_role("button", name="Create match").click()
    expect(page.locator("#create-error")).to_be_visible()
    expect(page.locator("#create-error")).to_contain_text("name")
