"""The table on a phone (390 and 360 px wide, touch events): it fits the screen, every target
takes a finger (44 px, WCAG 2.5.5), the tiles are readable and a turn is played with taps."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import DEVICES, PHONES, Server, shot
from tests.browser.table import Table, box_of
from tests.browser.test_accessibility import serious_violations

TARGET = 44  # px: the smallest target a finger can hit

# Every control a finger may need, with its size; a checkbox counts with its label (a tap on
# the label toggles it). Hidden controls (closed groups, hidden buttons) are not targets.
TARGETS_SMALLER_THAN = """(least) => {
  const controls = document.querySelectorAll(
    "button, a[href], input, select, summary, [role=button], [tabindex]:not([tabindex='-1'])");
  const small = [];
  for (const control of controls) {
    const target = control.type === "checkbox" ? control.closest("label") || control : control;
    const box = target.getBoundingClientRect();
    if (!box.width || !box.height || getComputedStyle(target).visibility === "hidden") continue;
    if (box.width < least || box.height < least) {
      const name = control.getAttribute("aria-label") || control.textContent.trim() || control.name;
      small.push(`${name} (${Math.round(box.width)}x${Math.round(box.height)})`);
    }
  }
  return small;
}"""

OVERFLOW = """() => ({
  page: document.documentElement.scrollWidth,
  body: document.body.scrollWidth,
  screen: window.innerWidth,
  offscreen: [...document.querySelectorAll("body *")].filter((el) => {
    const box = el.getBoundingClientRect();
    return box.width && (box.left < -1 || box.right > window.innerWidth + 1)
      && !el.closest("dialog:not([open])");
  }).map((el) => el.id || el.className || el.tagName).slice(0, 10),
})"""


def assert_fits_the_screen(page: Any, device: str) -> None:
    width = DEVICES[device]["viewport"]["width"]
    seen = page.evaluate(OVERFLOW)
    assert seen["screen"] == width, seen  # a mobile viewport widens when content overflows
    assert seen["page"] <= width and seen["body"] <= width, seen
    assert seen["offscreen"] == [], seen


def assert_targets_take_a_finger(page: Any) -> None:
    assert page.evaluate(TARGETS_SMALLER_THAN, TARGET) == []


@pytest.mark.parametrize("device", PHONES)
def test_the_lobby_fits_a_phone_and_a_match_is_created_with_taps(
    new_page: Callable[..., Any], server: Server, device: str
) -> None:
    page = new_page(device)
    page.goto(server.url + "/")
    expect(page.get_by_label("Name of player 1")).to_be_visible()
    assert_fits_the_screen(page, device)
    closed = page.locator("#create-form details.rule-group:not([open]) > summary")
    assert closed.count() > 0
    while closed.count():
        closed.first.tap()
    assert_fits_the_screen(page, device)
    assert_targets_take_a_finger(page)
    heading = box_of(page.get_by_role("heading", name="New match"))
    assert heading["x"] >= 0
    shot(page, f"{device}-lobby")

    page.get_by_label("Name of player 1").fill("Ann")
    page.get_by_role("button", name="Add a person").tap()
    page.get_by_label("Name of player 3").fill("Bo")
    expect(page.locator("#games-note")).to_contain_text("3 games: 1 round × 3 players")
    page.get_by_role("button", name="Create match").tap()

    # Two people: the seat links open first, and fit the screen too.
    expect(page.locator("#invite-dialog")).to_be_visible()
    assert_fits_the_screen(page, device)
    assert_targets_take_a_finger(page)
    shot(page, f"{device}-seat-links")
    page.get_by_role("button", name="Close the seat links").tap()
    expect(page.locator("#rack .tile")).to_have_count(14)
    expect(page.locator("#match-info")).to_contain_text("Game 1 of 3")
    assert_fits_the_screen(page, device)


@pytest.mark.parametrize("device", PHONES)
def test_the_match_winner_fits_a_phone(
    new_page: Callable[..., Any], server: Server, device: str
) -> None:
    created = server.create(
        {
            "players": [{"name": "Ann"}, {"name": "Bot", "bot": True}],
            "rules": {"turn_seconds": 60, "target_score": 1},
            "setup": {"racks": [["K10", "K11", "K12"], ["O1", "O2", "B6"]], "pool": ["R1"]},
        }
    )
    page = new_page(device)
    page.goto(server.seat_url(created["id"], created["seats"][0]["token"]))
    table = Table(page)
    table.wait_for_my_turn()
    for code in ("K10", "K11", "K12"):
        table.rack_tile(code).tap()
        target = "in a new set" if code == "K10" else "at the end of set 1"
        page.get_by_role("button", name=f"Put the selected tile {target}").tap()
    page.get_by_role("button", name="Submit your play").tap()
    dialog = page.locator("#result-dialog")
    expect(dialog).to_contain_text("wins the match")
    assert_fits_the_screen(page, device)
    assert_targets_take_a_finger(page)
    shot(page, f"{device}-match-winner")


@pytest.mark.parametrize("device", PHONES)
def test_a_turn_is_played_with_taps_on_a_phone(
    new_page: Callable[..., Any], server: Server, device: str
) -> None:
    rack = ["R10", "R11", "R12", "B3", "B4", "B5", "J", "K7", "O7", "B7", "R1", "R2", "O13", "K13"]
    created = server.create(
        {
            "players": [{"name": "Ann"}, {"name": "Bo"}, {"name": "Bot", "bot": True}],
            "rules": {"turn_seconds": 0},
            "setup": {
                "racks": [rack, ["K1", "K2", "O7"], ["O1", "O2"]],
                "pool": ["O3", "B10", "B11"],
                "table": [["O9", "O10", "O11", "O12"], ["K5", "O5", "R5"]],
                "melded": [True, True, True],
                "first_seat": 0,
            },
        }
    )
    page = new_page(device)
    page.goto(server.seat_url(created["id"], created["seats"][0]["token"]))
    table = Table(page)
    table.wait_for_my_turn()
    expect(page.locator("#rack .tile")).to_have_count(14)
    assert_fits_the_screen(page, device)
    assert_targets_take_a_finger(page)

    # Readable tiles: at least a finger wide, numbers of 20 px or more.
    tile = table.rack_tile("R10")
    box = box_of(tile)
    assert box["width"] >= TARGET and box["height"] >= TARGET
    size = tile.locator(".tile-number").evaluate("n => parseFloat(getComputedStyle(n).fontSize)")
    assert size >= 20
    # The rack and its buttons sit in the lower part of the screen, where a thumb reaches,
    # and the 14 tiles take two rows at most.
    height = DEVICES[device]["viewport"]["height"]
    rack_area = box_of(page.locator("#rack-area"))
    assert rack_area["y"] >= height * 0.4 and rack_area["y"] + rack_area["height"] <= height + 1
    play = box_of(page.get_by_role("button", name="Submit your play"))
    assert play["y"] + play["height"] <= height
    tops = {round(t["y"]) for t in (box_of(e) for e in page.locator("#rack .tile").all())}
    assert len(tops) <= 2, tops

    # Tap a tile, then where it goes: R10 R11 R12 in a new set.
    table.rack_tile("R10").tap()
    expect(page.locator("#selection")).to_contain_text("red 10 from your rack")
    assert_targets_take_a_finger(page)  # the places a selected tile can go, too
    shot(page, f"{device}-match-selected")
    page.get_by_role("button", name="Put the selected tile in a new set").tap()
    for code in ("R11", "R12"):
        table.rack_tile(code).tap()
        page.get_by_role("button", name="Put the selected tile at the end of set 3").tap()
    assert table.table_codes()[2] == ["R10", "R11", "R12"]

    # Split the orange run with a tap on its tile and "Split here": no 8 px strip on a phone.
    page.locator('#table-sets .tile[data-code="O11"]').tap()
    page.get_by_role("button", name="Split the set before the selected orange 11").tap()
    assert table.table_codes()[:2] == [["O9", "O10"], ["O11", "O12"]]
    page.locator('#table-sets .tile[data-code="O11"]').tap()
    page.get_by_role("button", name="Put the selected tile at the end of set 1").tap()
    page.locator('#table-sets .tile[data-code="O12"]').tap()
    page.get_by_role("button", name="Put the selected tile at the end of set 1").tap()
    assert table.table_codes()[0] == ["O9", "O10", "O11", "O12"]
    assert_fits_the_screen(page, device)
    shot(page, f"{device}-match")

    page.get_by_role("button", name="Submit your play").tap()
    expect(page.locator("#notice")).to_contain_text("Play accepted")
    expect(page.locator("#rack .tile")).to_have_count(11)
    assert_fits_the_screen(page, device)


# The top bar's controls that are shown, with their boxes.
TOPBAR_CONTROLS = """() => [...document.querySelectorAll(
    ".topbar a[href], .topbar button, .topbar select, .topbar .conn")]
  .map((el) => ({ el, box: el.getBoundingClientRect() }))
  .filter(({ box }) => box.width && box.height)
  .map(({ el, box }) => ({ name: el.id || el.className, top: box.top, bottom: box.bottom }))"""


@pytest.mark.parametrize("locale", ["en-US", "es-ES", "sv-SE"])
@pytest.mark.parametrize("device", PHONES)
def test_the_top_bar_takes_one_row_on_a_phone(
    new_page: Callable[..., Any], server: Server, device: str, locale: str
) -> None:
    """In a match, with every button the top bar can show (seat links, leave, docs, language)
    and the connection's state: one row, each a finger's target, in every language."""
    page = new_page(device, locale=locale, bypass_csp=True)
    page.goto(server.url + "/")
    page.locator("#add-human").tap()  # two people: the seat links are offered
    page.locator("#create-button").tap()
    expect(page.locator("#invite-dialog")).to_be_visible()
    page.locator("#invite-close").tap()
    expect(page.locator("#rack .tile")).to_have_count(14)
    expect(page.locator("#leave-button")).to_be_visible()
    expect(page.locator("#invite-button")).to_be_visible()
    expect(page.locator("#conn")).to_be_visible()

    controls = page.evaluate(TOPBAR_CONTROLS)
    assert len(controls) == 6, controls  # brand, connection, links, leave, docs, language
    row = max(c["top"] for c in controls), min(c["bottom"] for c in controls)
    assert row[0] < row[1], controls  # every control overlaps every other's height: one row
    assert_fits_the_screen(page, device)
    assert_targets_take_a_finger(page)
    found = serious_violations(page)
    assert found == [], "\n".join(f"{v['id']}: {n}" for v in found for n in v["nodes"])
    shot(page, f"{device}-top-bar-{locale}")

    # The icon buttons keep their names; the language switch, showing its code, still switches.
    expect(page.locator("#language-code")).to_have_text(locale[:2].upper())
    page.locator("#language").select_option("sv")
    expect(page.locator("#language-code")).to_have_text("SV")
    leave = page.get_by_role("button", name="Lämna partiet: en bot spelar din plats")
    expect(leave).to_be_visible()
    expect(page.get_by_role("link", name="API-dokument")).to_be_visible()
    page.get_by_role("button", name="Visa platslänkarna").tap()
    expect(page.locator("#invite-dialog")).to_be_visible()
