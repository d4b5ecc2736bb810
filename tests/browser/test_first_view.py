"""The table's first request: a failure that may pass (no network, the referee answering 503)
is shown and the request tried again until the match comes, with no reload; one that will not
(no such match) is shown once and not asked again."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from playwright.sync_api import expect

from tests.browser.conftest import Server
from tests.browser.table import Table

UNAVAILABLE = {
    "type": "about:blank",
    "title": "Service Unavailable",
    "status": 503,
    "detail": "the match store is not answering",
}


def test_the_first_view_is_tried_again_until_the_referee_answers(
    new_page: Callable[..., Any], server: Server
) -> None:
    created = server.create(
        {
            "players": [{"name": "Ann"}, {"name": "Bo"}],
            "rules": {"turn_seconds": 0},
            "setup": {
                "racks": [["R1", "R2", "B5"], ["K1", "K2", "O7"]],
                "pool": ["O3", "B10", "B11"],
                "first_seat": 0,
            },
        }
    )
    match_id, token = created["id"], created["seats"][0]["token"]
    page = new_page(provoked=(" 503 ", "net::ERR_FAILED"))
    faults = ["unavailable", "no network"]
    asked: list[float] = []

    def fault(route: Any) -> None:
        asked.append(time.monotonic())
        if not faults:
            route.continue_()
        elif faults.pop(0) == "unavailable":
            route.fulfill(
                status=503, content_type="application/problem+json", body=json.dumps(UNAVAILABLE)
            )
        else:
            route.abort("failed")

    page.route(lambda url: urlsplit(url).path == f"/v1/matches/{match_id}", fault)
    page.goto(server.seat_url(match_id, token))
    problem = page.locator("#problem")
    expect(problem).to_contain_text("the match store is not answering")
    expect(problem).to_contain_text("Trying again in 1 second.")
    # no move can be made on a match the page does not have: no Play, Draw or Hint to press
    expect(page.locator("#actions")).to_be_hidden()
    expect(problem).to_contain_text("Trying again in 2 seconds.")  # the failed request
    Table(page).wait_for_my_turn()  # the third request: the match, with no reload
    expect(problem).to_be_hidden()
    expect(page.locator("#draw-button")).to_be_enabled()
    assert sorted(Table(page).rack_codes()) == ["B5", "R1", "R2"]
    # waited 1 s after the 503, then 2 s after the failed request
    assert asked[1] - asked[0] >= 0.9 and asked[2] - asked[1] >= 1.9, asked


def test_a_match_that_is_not_there_is_not_asked_for_again(
    new_page: Callable[..., Any], server: Server
) -> None:
    page = new_page(provoked=(" 404 ",))
    asked: list[str] = []
    page.on(
        "request",
        lambda request: (
            asked.append(request.url)
            if urlsplit(request.url).path == "/v1/matches/no-such-match"
            else None
        ),
    )
    page.goto(server.seat_url("no-such-match", "no-such-match.token"))
    expect(page.locator("#problem")).to_be_visible()
    expect(page.locator("#problem .retrying")).to_have_count(0)
    page.wait_for_timeout(2500)  # a retry would have come after 1 s
    assert len(asked) == 1, asked
