"""The lobby: a match with people and a bot is created from the page, and seat links shared."""

from __future__ import annotations

import re
from typing import Any

import yaml
from playwright.sync_api import expect

from service.game import rules_to_dict
from service.rules import Rules
from tests.browser.conftest import ROOT, Server, shot


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


def _rule_defaults() -> dict[str, Any]:
    """Every rule option of the served contract with its documented default (a `default`, or
    "Default: X." in its description), following `allOf` references from `Rules`."""
    schemas = yaml.safe_load((ROOT / "openapi.yaml").read_text())["components"]["schemas"]

    def properties(schema: dict[str, Any]) -> dict[str, Any]:
        found = dict(schema.get("properties", {}))
        for part in schema.get("allOf", []):
            ref = part.get("$ref", "")
            found.update(properties(schemas[ref.split("/")[-1]] if ref else part))
        return found

    def default(spec: dict[str, Any]) -> Any:
        if "default" in spec:
            return spec["default"]
        documented = re.search(r"Default: ([^ .]+)\.", spec.get("description", ""))
        assert documented, spec
        return yaml.safe_load(documented.group(1))

    return {name: default(spec) for name, spec in properties(schemas["Rules"]).items()}


CONTROL_VALUE = """control => {
  const kind = control.dataset.rule;
  if (kind === "bool") return control.checked;
  if (kind === "optional-int") return control.value === "" ? null : Number(control.value);
  if (kind === "int") return Number(control.value);
  if (kind === "json") return JSON.parse(control.value);
  return control.value;
}"""


def test_the_lobby_offers_every_rule_option_with_the_official_default_and_its_source(
    page: Any, server: Server
) -> None:
    page.goto(server.url + "/")
    defaults = _rule_defaults()
    assert defaults == rules_to_dict(Rules())  # the contract's defaults are the core's
    controls = page.locator("#create-form [data-rule]")
    names = controls.evaluate_all("controls => controls.map(c => c.name)")
    assert sorted(names) == sorted(defaults)
    for name, default in defaults.items():
        control = page.locator(f'#create-form [data-rule][name="{name}"]')
        assert control.evaluate(CONTROL_VALUE) == default, name
        # A one-line explanation naming the rule text it comes from (or saying it is none).
        help_id = control.get_attribute("aria-describedby")
        explanation = page.locator(f"#{help_id}").text_content()
        assert re.search(r"\b00[0-3]\b", explanation) or "Not from a rule text" in explanation
        assert "\n" not in explanation.strip(), name
    # The groups hold them all; the first two are open.
    summaries = page.locator("#create-form details.rule-group > summary").all_inner_texts()
    assert len(summaries) >= 5
    expect(page.locator("#games-note")).to_contain_text("2 games: 1 round × 2 players")


def test_the_options_chosen_in_the_lobby_are_the_rules_of_the_match(
    page: Any, server: Server
) -> None:
    page.goto(server.url + "/")
    page.get_by_label("Name of player 1").fill("Ann")
    closed = page.locator("#create-form details.rule-group:not([open]) > summary")
    while closed.count():
        closed.first.click()
    chosen = {
        "tile_set": "xp",
        "turn_seconds": 90,
        "failed_turn_penalty": 1,
        "rounds": 2,
        "target_score": 150,
        "match_winner": "most_games",
        "initial_meld_points": 40,
        "joker_worth_zero_in_meld": True,
        "joker_locked_sets": True,
        "first_player_joker": "thirty",
        "redeal_duplicates": True,
        "stalemate_end": "first_cannot_play",
        "stalemate_scoring": "full_total",
        "hints": False,
        "preset": "official",  # a preset sets the rest itself: see the chess-clock test
        "clock": {"type": "bank", "bank_seconds": 300, "increment_seconds": 5},
        "freed_joker": "new_set",
        "dealt_jokers": 1,
        "joker_penalty": 50,
        "never_melded_penalty": 100,
        "redeal_three_doubles": True,
    }
    assert sorted(chosen) == sorted(_rule_defaults())  # every option, none left at its default
    form = page.locator("#create-form")
    for name, value in chosen.items():
        control = form.locator(f'[data-rule][name="{name}"]')
        tag = control.evaluate("c => c.type")
        if tag == "checkbox":
            control.set_checked(value)
        elif name == "clock":
            control.select_option(label="Chess clock: 5 min + 5 s a turn")
        elif tag.startswith("select"):
            control.select_option(str(value))
        else:
            control.fill(str(value))
    expect(page.locator("#games-note")).to_contain_text("4 games: 2 rounds × 2 players")
    expect(page.locator("#games-note")).to_contain_text("150 points")
    page.get_by_role("button", name="Create match").click()

    expect(page.locator("#rack .tile")).to_have_count(14)
    expect(page.locator("#match-info")).to_contain_text("Game 1 of 4")
    expect(page.locator("#match-info")).to_contain_text("Round 1 of 2")
    match_id = page.evaluate("new URLSearchParams(location.hash.slice(1)).get('m')")
    status, view = server.api("GET", f"/v1/matches/{match_id}")
    assert status == 200
    expected = {**chosen, "turn_seconds": 0}  # a chess clock has no per-turn cap here
    expected["clock"] = {**chosen["clock"], "delay_seconds": 0, "delay": "bronstein"}
    assert view["rules"] == expected
    expect(page.locator("#play-button")).to_be_visible()
    expect(page.locator("#hint-button")).to_be_hidden()  # hints off
