"""What a newcomer meets in their first hour at the table, at each size (1280, 390 and 360 px,
the phones by touch): the referee's refusal in view, human names for every seat in the page's
language, a turn played with the keyboard alone, and a finished match's header."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import ARTIFACTS, DEVICES, PHONES, Server, shot
from tests.browser.test_accessibility import AXE, RUN_AXE

SIZES = tuple(DEVICES)  # desktop (1280), phone (390), small-phone (360)
# Ann's deal: a meld of 30 in tens, and tiles that make a refused play; the bot holds nothing
# it can meld and draws.
ANN = ["O3", "R10", "B10", "O4", "K10", "K2", "R5", "B1", "O8", "R13", "B6", "K7", "O12", "R1"]
BOT = ["K1", "K3", "O9", "O9", "B2"]
POOL = ["B7", "O5", "R2", "K8", "B12", "O13"]


def ann_at_the_table(
    server: Server, new_page: Callable[..., Any], device: str, **options: Any
) -> Any:
    created = server.create(
        {
            "players": [{"name": "Ann"}, {"name": "Bot", "bot": True}],
            "rules": {"turn_seconds": 600},
            "setup": {"racks": [ANN, BOT], "pool": POOL, "first_seat": 0},
        }
    )
    page = new_page(device, **options)
    page.goto(server.seat_url(created["id"], created["seats"][0]["token"]))
    expect(page.locator("#turn-text")).to_contain_text("Your turn")
    expect(page.locator("#rack .tile")).to_have_count(len(ANN))
    return page


def hit(page: Any, locator: Any, device: str) -> None:
    """A tap on a phone, a click on the desktop."""
    if device in PHONES:
        locator.tap()
    else:
        locator.click()


# The reasons box and what covers it: the rack pinned to the bottom of a phone's screen.
IN_VIEW = """() => {
  const box = document.querySelector("#problem").getBoundingClientRect();
  const rack = document.querySelector("#rack-area").getBoundingClientRect();
  return {top: box.top, bottom: box.bottom, floor: Math.min(window.innerHeight, rack.top)};
}"""


# Whether an element is on the screen and on top there: the middles of its four edges are in
# the viewport and the element seen at each is it (not the rack pinned over it). Not its corners:
# a rounded corner is not the element's to hit.
UNCOVERED = """(selector) => {
  const el = document.querySelector(selector);
  const box = el.getBoundingClientRect();
  const [x, y] = [(box.left + box.right) / 2, (box.top + box.bottom) / 2];
  const edges = [[x, box.top + 2], [x, box.bottom - 2], [box.left + 2, y], [box.right - 2, y]];
  return edges.every(([x, y]) => y >= 0 && y <= window.innerHeight
                                 && el.contains(document.elementFromPoint(x, y)));
}"""


@pytest.mark.parametrize("device", SIZES)
def test_the_referees_refusal_is_read_without_scrolling(
    new_page: Callable[..., Any], server: Server, device: str
) -> None:
    page = ann_at_the_table(server, new_page, device)
    for code, place in (("R10", "in a new set"), ("B10", "at the end of set 1")):
        hit(page, page.locator(f'#rack .tile[data-code="{code}"]'), device)
        hit(page, page.get_by_role("button", name=f"Put the selected tile {place}"), device)
    hit(page, page.get_by_role("button", name="Submit your play"), device)
    problem = page.locator("#problem")
    expect(problem).to_contain_text("The referee refused this play")
    expect(problem.locator('li[data-code="initial_meld_below_threshold"]')).to_be_visible()
    seen = page.evaluate(IN_VIEW)
    assert seen["top"] >= 0 and seen["bottom"] <= seen["floor"] + 1, seen
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{device}-refusal-in-view.png"))  # the screen as seen


# What the lobby's two first rows are called, and the sentence of a seat left, per language.
NAMES = {
    "en-US": ("Player 1", "Player 2", "Bot", "a bot plays your seat (Player 2) now"),
    "es-ES": ("Jugador 1", "Jugador 2", "Bot", "ahora un bot juega tu asiento (Jugador 2)"),
    "sv-SE": ("Spelare 1", "Spelare 2", "Bot", "en bot spelar nu din plats (Spelare 2)"),
}


@pytest.mark.parametrize(
    ("device", "locale"), [("desktop", "en-US"), ("phone", "es-ES"), ("small-phone", "sv-SE")]
)
def test_people_get_human_names_and_every_sentence_about_a_seat_reads_well(
    new_page: Callable[..., Any], server: Server, device: str, locale: str
) -> None:
    first, second, bot, left = NAMES[locale]
    page = new_page(device, locale=locale)
    page.goto(server.url + "/")
    names = page.locator("#player-rows input[type=text]")
    expect(names.nth(0)).to_have_value(first)
    expect(names.nth(1)).to_have_value(bot)
    # The second row made a person's: a person's default name, not "Bot"; and back.
    toggle = page.locator("#player-rows li").nth(1).locator(".bot-toggle")
    hit(page, toggle, device)
    expect(names.nth(1)).to_have_value(second)
    hit(page, toggle, device)
    expect(names.nth(1)).to_have_value(bot)
    hit(page, toggle, device)
    expect(names.nth(1)).to_have_value(second)
    hit(page, page.locator("#create-button"), device)

    expect(page.locator("#invite-dialog")).to_be_visible()
    assert page.locator("#invite-list strong").all_inner_texts()[:2] == [first, second]
    link = page.locator("#invite-list input").nth(1).input_value()
    hit(page, page.locator("#invite-close"), device)
    expect(page.locator("#players .player.you")).to_contain_text(first)
    expect(page.locator("#players")).not_to_contain_text(bot)

    other = new_page(device, locale=locale)
    other.goto(link)
    expect(other.locator("#players .player.you")).to_contain_text(second)
    expect(other.locator('#players .player[data-seat="0"] .player-name')).to_have_text(first)
    hit(other, other.locator("#leave-button"), device)
    hit(other, other.locator("#leave-confirm"), device)
    expect(other.locator("#left-banner")).to_contain_text(left)
    shot(other, f"{device}-{locale}-left")


# A tile takes R (to the rack), the arrows to it from the rack's stop (the place of the tile
# taken before), Enter (take) and N or 1 (put): the arrows are the rack's own distances.
KEYS_A_TILE = 3


def focused(page: Any) -> dict[str, Any]:
    return page.evaluate(
        """() => { const el = document.activeElement;
          return {id: el.id, code: el.dataset.code || null, rack: Boolean(el.closest("#rack")),
                  table: Boolean(el.closest("#table-sets"))}; }"""
    )


def go_to(page: Any, code: str) -> int:
    """Arrow along the rack to ``code``; answers how many keys it took."""
    codes = page.locator("#rack .tile").evaluate_all("tiles => tiles.map(t => t.dataset.code)")
    steps = codes.index(code) - codes.index(focused(page)["code"])
    for _ in range(abs(steps)):
        page.keyboard.press("ArrowRight" if steps > 0 else "ArrowLeft")
    assert focused(page)["code"] == code
    return abs(steps)


@pytest.mark.parametrize("device", SIZES)
def test_a_turn_is_played_with_the_keyboard_alone(
    new_page: Callable[..., Any], server: Server, device: str
) -> None:
    page = ann_at_the_table(server, new_page, device)
    page.keyboard.press("Tab")  # the first stop of the page
    assert focused(page)["id"] == "to-rack"
    page.keyboard.press("Enter")
    assert focused(page)["rack"]
    # The rack is one Tab stop: Tab leaves it, Shift+Tab comes back to the same tile.
    at = focused(page)["code"]
    page.keyboard.press("Tab")
    assert not focused(page)["rack"]
    page.keyboard.press("Shift+Tab")
    assert focused(page) == {"id": "", "code": at, "rack": True, "table": False}

    keys = arrows = 0
    for code, put in (("R10", "n"), ("B10", "1"), ("K10", "1")):
        page.keyboard.press("r")
        keys += 1
        arrows += go_to(page, code)
        page.keyboard.press("Enter")
        expect(page.locator(f'#rack .tile.selected[data-code="{code}"]')).to_be_visible()
        page.keyboard.press(put)
        keys += 2
        expect(page.locator(f'#table-sets .tile[data-code="{code}"]')).to_be_visible()
        assert focused(page)["table"]  # the focus follows the tile onto the table
    assert keys == 3 * KEYS_A_TILE
    assert arrows < len(ANN), arrows  # never further than the rack is long
    expect(page.locator("#meld")).to_contain_text("30 / 30")
    assert page.evaluate(UNCOVERED, "#meld"), "the meld's progress is in view, not under the rack"
    shot(page, f"{device}-keyboard-meld")

    # The table is one Tab stop too, with the arrows inside.
    page.keyboard.press("t")
    assert focused(page)["table"]
    page.keyboard.press("ArrowRight")
    assert focused(page)["table"]

    page.keyboard.press("p")
    expect(page.locator("#notice")).to_contain_text("accepted")
    # The bot draws; Ann's turn again: D draws for her.
    expect(page.locator("#turn-text")).to_contain_text("Your turn")
    page.keyboard.press("r")
    page.keyboard.press("d")
    expect(page.locator("#notice")).to_contain_text("You drew")
    expect(page.locator("#rack .tile")).to_have_count(len(ANN) - 3 + 1)


def test_a_match_ended_on_its_target_score_does_not_count_the_games_it_skipped(
    new_page: Callable[..., Any], server: Server
) -> None:
    created = server.create(
        {
            "players": [{"name": "Ann"}, {"name": "Bot", "bot": True}],
            "rules": {"turn_seconds": 60, "target_score": 1},
            "setup": {"racks": [["K10", "K11", "K12"], ["O1", "O2", "B6"]], "pool": ["R1"]},
        }
    )
    page = new_page()
    page.goto(server.seat_url(created["id"], created["seats"][0]["token"]))
    expect(page.locator("#match-info")).to_contain_text("Game 1 of 2")
    _, view = server.api(
        "POST",
        f"/v1/matches/{created['id']}/play",
        {"table": [["K10", "K11", "K12"]]},
        token=created["seats"][0]["token"],
    )
    assert view["match"]["status"] == "finished"
    expect(page.locator("#match-info")).to_contain_text("Game 1")
    expect(page.locator("#match-info")).not_to_contain_text("of 2")


@pytest.mark.parametrize("device", SIZES)
def test_the_match_page_has_its_heading_and_axe_finds_no_violation_at_all(
    new_page: Callable[..., Any], server: Server, device: str
) -> None:
    """axe-core at every impact, moderate and minor included (`page-has-heading-one` was
    flagged on the match page)."""
    page = ann_at_the_table(server, new_page, device, bypass_csp=True)
    expect(page.get_by_role("heading", level=1)).to_have_count(1)
    page.add_script_tag(path=str(AXE))
    found = page.evaluate(RUN_AXE)
    assert found == [], "\n".join(
        f"{v['id']} ({v['impact']}): {n}" for v in found for n in v["nodes"]
    )
