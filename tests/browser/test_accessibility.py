"""axe-core (vendored: tests/browser/vendor/axe-core) finds no serious or critical violation on
the lobby or the match page, at the desktop size and on a phone."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import Server
from tests.browser.table import Table

AXE = Path(__file__).parent / "vendor" / "axe-core" / "axe.min.js"
RUN_AXE = """async () => {
  const results = await axe.run(document, {resultTypes: ["violations"]});
  return results.violations.map((v) => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 5).map((n) => n.target.join(" ") + ": " + n.failureSummary),
  }));
}"""


def serious_violations(page: Any) -> list[dict[str, Any]]:
    page.add_script_tag(path=str(AXE))
    violations = page.evaluate(RUN_AXE)
    return [v for v in violations if v["impact"] in ("serious", "critical")]


@pytest.mark.parametrize("device", ["desktop", "phone"])
def test_the_lobby_has_no_serious_accessibility_violation(
    new_page: Callable[..., Any], server: Server, device: str
) -> None:
    page = new_page(device, bypass_csp=True)
    page.goto(server.url + "/")
    expect(page.get_by_label("Name of player 1")).to_be_visible()
    for group in page.locator("#create-form details.rule-group").all():
        group.evaluate("details => { details.open = true; }")
    found = serious_violations(page)
    assert found == [], "\n".join(f"{v['id']}: {n}" for v in found for n in v["nodes"])


@pytest.mark.parametrize("device", ["desktop", "phone"])
def test_the_match_page_has_no_serious_accessibility_violation(
    new_page: Callable[..., Any], server: Server, device: str
) -> None:
    created = server.create(
        {
            "players": [{"name": "Ann"}, {"name": "Bot", "bot": True}],
            "rules": {"turn_seconds": 120},
            "setup": {
                "racks": [["R10", "R11", "R12", "B3", "J"], ["K1", "K2"]],
                "pool": ["O1", "O2"],
                "table": [["B7", "B8", "B9"]],
                "melded": [False, True],
            },
        }
    )
    page = new_page(device, bypass_csp=True)
    page.goto(server.seat_url(created["id"], created["seats"][0]["token"]))
    table = Table(page)
    table.wait_for_my_turn()
    # With a set being built (the meld checker shows) and a tile selected (the places show).
    table.rack_tile("R10").click()
    page.get_by_role("button", name="Put the selected tile in a new set").click()
    table.rack_tile("R11").click()
    expect(page.locator("#meld")).to_be_visible()
    found = serious_violations(page)
    assert found == [], "\n".join(f"{v['id']}: {n}" for v in found for n in v["nodes"])
