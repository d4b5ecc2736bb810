"""Driving the table page as a person does: drag tiles with the mouse, press the buttons."""

from __future__ import annotations

import time
from typing import Any

from playwright.sync_api import expect

from tests.browser.conftest import PATIENCE


def box_of(locator: Any) -> dict[str, float]:
    """The element's box. The page redraws on every change of the match (a live event, the
    meld checker's answer), replacing its elements with equal ones: a box measured on an
    element replaced meanwhile is None, so measure again on the new one."""
    deadline = time.monotonic() + PATIENCE  # as patient as an expect() (conftest)
    while (box := locator.bounding_box()) is None:
        assert time.monotonic() < deadline, f"{locator} has no box"
        time.sleep(0.05)
    return box


class Table:
    """The table page of one seat (a Playwright page)."""

    def __init__(self, page: Any) -> None:
        self.page = page

    def rack_tile(self, code: str) -> Any:
        return self.page.locator(f'#rack .tile[data-code="{code}"]').first

    def set_with(self, code: str) -> Any:
        return self.page.locator(f'#table-sets .set:has(.tile[data-code="{code}"])').first

    def rack_codes(self) -> list[str]:
        return self.page.locator("#rack .tile").evaluate_all(
            "tiles => tiles.map(t => t.dataset.code)"
        )

    def table_codes(self) -> list[list[str]]:
        return self.page.locator("#table-sets .set").evaluate_all(
            "sets => sets.map(s => [...s.querySelectorAll('.tile')].map(t => t.dataset.code))"
        )

    def drag(self, source: Any, to: tuple[float, float]) -> None:
        """Press on ``source``, move in steps (pointer events), release at ``to``."""
        box = box_of(source)
        mouse = self.page.mouse
        mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        mouse.down()
        mouse.move(box["x"] + box["width"] / 2 + 12, box["y"] + box["height"] / 2 - 12, steps=3)
        mouse.move(*to, steps=8)
        mouse.up()

    def to_new_set(self, code: str) -> None:
        """Drag the rack tile ``code`` onto the "new set" zone."""
        zone = self.page.locator("#table-sets .new-set")
        box = box_of(zone)
        self.drag(self.rack_tile(code), (box["x"] + box["width"] / 2, box["y"] + box["height"] / 2))
        expect(self.page.locator(f'#table-sets .tile[data-code="{code}"]').first).to_be_visible()

    def to_end_of_set(self, code: str, set_with: str) -> None:
        """Drag the rack tile ``code`` to the end of the set holding ``set_with``."""
        last = self.set_with(set_with).locator(".tile").last
        box = box_of(last)
        before = len(self.rack_codes())
        self.drag(self.rack_tile(code), (box["x"] + box["width"] - 4, box["y"] + box["height"] / 2))
        expect(self.page.locator("#rack .tile")).to_have_count(before - 1)

    def press(self, name: str) -> None:
        self.page.get_by_role("button", name=name, exact=True).click()

    def wait_for_my_turn(self) -> None:
        expect(self.page.locator("#turn-text")).to_contain_text("Your turn")
