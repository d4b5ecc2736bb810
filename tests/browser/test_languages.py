"""The web table follows the browser's language (English, Spanish or Swedish), has a switch that
persists, and asks the referee for its messages in the same language (Accept-Language)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import PATIENCE, Server, shot
from tests.browser.table import Table
from tests.browser.test_accessibility import serious_violations
from tests.browser.test_phone import assert_fits_the_screen, assert_targets_take_a_finger

SETUP = {
    "racks": [["R10", "R11", "R12", "B3", "B4", "B5", "J"], ["K1", "K2", "O7"]],
    "pool": ["O1", "B10", "B11", "B12"],
    "table": [["B7", "B8", "B9"]],
    "melded": [False, True],
    "first_seat": 0,
}
REFUSED_TABLE = [["B7", "B8", "B9"], ["R10", "R11"]]  # two tiles, 21 points: refused twice over


def a_match(server: Server) -> dict[str, Any]:
    return server.create(
        {
            "players": [{"name": "Ann"}, {"name": "Bot", "bot": True}],
            "rules": {"turn_seconds": 0},
            "setup": SETUP,
        }
    )


def referee_says(server: Server, language: str) -> list[str]:
    """The violations the referee answers, in ``language``, to the play the page will try
    (on a twin match with the same deal)."""
    created = a_match(server)
    status, problem = server.api(
        "POST",
        f"/v1/matches/{created['id']}/play",
        {"table": REFUSED_TABLE},
        token=created["seats"][0]["token"],
        headers={"Accept-Language": language, "If-Match": f'"{created["match"]["version"]}"'},
    )
    assert status == 422, problem
    messages = [violation["message"] for violation in problem["violations"]]
    assert messages
    return messages


def try_the_refused_play(page: Any) -> Any:
    table = Table(page)
    table.rack_tile("R10").click()
    page.locator("#table-sets .new-set").click()
    table.rack_tile("R11").click()
    page.locator("#table-sets .set").nth(1).locator(".place").click()
    assert table.table_codes() == REFUSED_TABLE
    page.locator("#play-button").click()
    problem = page.locator("#problem")
    expect(problem).to_be_visible()
    return problem


@pytest.mark.parametrize(
    ("locale", "language", "heading"),
    [("es-ES", "es", "Nueva partida"), ("sv-SE", "sv", "Nytt parti"), ("fr-FR", "en", "New match")],
)
def test_the_lobby_follows_the_browsers_language(
    new_page: Callable[..., Any], server: Server, locale: str, language: str, heading: str
) -> None:
    page = new_page("phone", locale=locale, bypass_csp=True)
    page.goto(server.url + "/")
    expect(page.get_by_role("heading", level=1)).to_have_text(heading)
    assert page.evaluate("document.documentElement.lang") == language
    assert page.locator("#language").input_value() == language
    for group in page.locator("#create-form details.rule-group").all():
        group.evaluate("details => { details.open = true; }")
    assert_fits_the_screen(page, "phone")
    assert_targets_take_a_finger(page)
    found = serious_violations(page)
    assert found == [], "\n".join(f"{v['id']}: {n}" for v in found for n in v["nodes"])
    shot(page, f"phone-lobby-{language}")


def test_the_lobbys_default_names_follow_the_language_and_edited_names_stay(
    new_page: Callable[..., Any], server: Server
) -> None:
    page = new_page()
    page.goto(server.url + "/")
    page.get_by_role("button", name="Add a person").click()
    page.get_by_role("button", name="Add a person").click()
    names = page.locator("#player-rows input[type=text]")

    def expect_names(values: list[str]) -> None:
        expect(names).to_have_count(len(values))
        for i, value in enumerate(values):
            expect(names.nth(i)).to_have_value(value)

    expect_names(["Player 1", "Bot", "Player 3", "Player 4"])
    page.get_by_label("Name of player 3").fill("Cleo")

    page.locator("#language").select_option("es")
    expect(page.get_by_role("heading", level=1)).to_have_text("Nueva partida")
    expect_names(["Jugador 1", "Bot", "Cleo", "Jugador 4"])
    page.get_by_label("Nombre del jugador 1").fill("Ana")
    page.locator("#language").select_option("sv")
    expect_names(["Ana", "Bot", "Cleo", "Spelare 4"])
    page.locator("#language").select_option("en")
    expect_names(["Ana", "Bot", "Cleo", "Player 4"])

    # The match is created with the names as shown.
    page.get_by_role("button", name="Create match").click()
    expect(page.locator("#invite-dialog")).to_be_visible()
    seated = page.locator("#invite-list strong").all_inner_texts()[:4]
    assert seated == ["Ana", "Bot", "Cleo", "Player 4"]


@pytest.mark.parametrize("device", ["desktop", "phone"])
def test_a_spanish_browser_plays_in_spanish_and_switches_to_swedish_for_good(
    new_page: Callable[..., Any], server: Server, device: str
) -> None:
    spanish, swedish, english = (referee_says(server, code) for code in ("es", "sv", "en"))
    assert spanish != english and swedish != english

    created = a_match(server)
    page = new_page(device, locale="es-ES")
    page.goto(server.seat_url(created["id"], created["seats"][0]["token"]))
    assert page.evaluate("navigator.languages")[0] == "es-ES"
    turn = page.locator("#turn-text")
    expect(turn).to_contain_text("Tu turno")
    assert page.evaluate("document.documentElement.lang") == "es"
    expect(page.locator("#match-info")).to_contain_text("Juego 1 de 2")
    expect(page.get_by_role("button", name="Enviar tu jugada")).to_be_visible()

    # A refused play: the page's words and the referee's, both in Spanish.
    problem = try_the_refused_play(page)
    expect(problem).to_contain_text("El árbitro ha rechazado esta jugada")
    expect(problem.locator("li")).to_have_text(spanish)
    if device != "desktop":
        assert_fits_the_screen(page, device)
        assert_targets_take_a_finger(page)
    shot(page, f"{device}-table-es")

    # The switch: Swedish at once, the referee's words too (the same play, pressed again).
    expect(page.locator("#table-sets .set-note")).to_contain_text("combinación")
    page.locator("#language").select_option("sv")
    expect(turn).to_contain_text("Din tur")
    assert page.evaluate("document.documentElement.lang") == "sv"
    expect(problem).to_be_hidden()  # the Spanish message went with the Spanish page
    note = page.locator("#table-sets .set-note")  # the meld checker's, asked again in Swedish
    expect(note).to_have_count(1)
    expect(note).not_to_contain_text("combinación")
    expect(note).to_contain_text("3")
    assert Table(page).table_codes() == REFUSED_TABLE  # a refused play changes nothing
    page.get_by_role("button", name="Skicka ditt drag").click()
    expect(problem).to_contain_text("Domaren avvisade draget")
    expect(problem.locator("li")).to_have_text(swedish)
    if device != "desktop":
        assert_fits_the_screen(page, device)
        assert_targets_take_a_finger(page)
    shot(page, f"{device}-table-sv")

    # And after a reload.
    page.reload()
    expect(turn).to_contain_text("Din tur")
    assert page.evaluate("document.documentElement.lang") == "sv"
    assert page.locator("#language").input_value() == "sv"
    assert page.evaluate("localStorage.getItem('rummikub:lang')") == "sv"
    expect(page.locator("#match-info")).to_contain_text("Spel 1 av 2")
    expect(page.get_by_role("button", name="Skicka ditt drag")).to_be_visible()

    # A page opened later in the same browser keeps the choice over the browser's language.
    again = page.context.new_page()
    again.goto(server.url + "/")
    expect(again.get_by_role("heading", level=1)).to_have_text("Nytt parti")
    again.locator("#language").select_option("en")
    expect(again.get_by_role("heading", level=1)).to_have_text("New match")
    assert again.evaluate("document.documentElement.lang") == "en"


def test_the_docs_page_follows_the_language_and_keeps_the_contract_in_english(
    new_page: Callable[..., Any], server: Server
) -> None:
    page = new_page(locale="sv-SE")
    page.goto(server.url + "/docs")
    expect(page.locator(".docs-bar")).to_contain_text("HTTP-API · återgiven från")
    page.locator(".opblock").first.wait_for()
    assert page.evaluate("document.documentElement.lang") == "sv"
    assert page.title() == "Rummikub Referee · API-dokumentation"
    assert page.locator("#swagger-ui").get_attribute("lang") == "en"


def test_a_slow_catalogue_holds_the_page_back_and_its_words_are_all_there(
    new_page: Callable[..., Any], server: Server
) -> None:
    # The page's words come from its catalogue. Answered slowly, the page asks for nothing
    # and draws nothing before it has it: a finished match's result dialog then opens with
    # its title and text in the page's language (never empty, never the catalogue's keys).
    created = server.create(
        {
            "players": [{"name": "Ann"}, {"name": "Bo"}],
            "rules": {"turn_seconds": 0, "target_score": 1},
            "setup": {"racks": [["K10", "K11", "K12"], ["O1", "O2", "B6"]], "pool": ["R1"]},
        }
    )
    match_id, version = created["id"], created["match"]["version"]
    status, played = server.api(
        "POST",
        f"/v1/matches/{match_id}/play",
        {"table": [["K10", "K11", "K12"]]},
        token=created["seats"][0]["token"],
        headers={"If-Match": f'"{version}"'},
    )
    assert status == 200 and played["match"]["status"] == "finished", played

    page = new_page(locale="es-ES")
    held: list[Any] = []
    asked_early: list[str] = []
    page.route("**/assets/i18n/*.json", lambda route: held.append(route))
    page.route(
        f"**/v1/matches/{match_id}*",
        lambda route: (asked_early.append(route.request.url) if held else None, route.continue_()),
    )
    page.goto(server.seat_url(match_id, created["seats"][1]["token"]))
    # The page's module has run up to its catalogue: both languages asked for, neither answered
    # (Playwright hands the requests to the handler while it waits).
    deadline = time.monotonic() + PATIENCE
    while len(held) < 2:
        assert time.monotonic() < deadline, f"the page asked for {len(held)} catalogue(s)"
        page.wait_for_timeout(20)
    assert sorted(route.request.url.rsplit("/", 1)[1] for route in held) == ["en.json", "es.json"]
    assert asked_early == []  # no view asked for (nor drawn) without the page's words
    expect(page.locator("#result-dialog")).not_to_be_visible()
    routes, held[:] = list(held), []
    for route in routes:
        route.continue_()

    dialog = page.locator("#result-dialog")
    expect(dialog).to_be_visible()
    expect(page.locator("#result-title")).to_have_text("Fin de la partida: ¡Ann gana la partida!")
    expect(dialog).to_contain_text("Ann cerró y gana el juego 1.")
    expect(page.locator("#rematch-button")).to_have_text("Revancha")
    expect(page.locator("#turn-text")).to_contain_text("La partida ha terminado: gana Ann.")
