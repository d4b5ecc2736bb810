"""``/docs``: Swagger UI (vendored) renders the served contract, with nothing from elsewhere."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect

from tests.browser.conftest import Server, shot


def test_the_docs_page_lists_the_operations_of_the_served_contract(
    page: Any, server: Server
) -> None:
    outside: list[str] = []
    page.on(
        "request",
        lambda request: None if request.url.startswith(server.url) else outside.append(request.url),
    )
    page.goto(server.url + "/docs")
    page.locator(".opblock").first.wait_for()
    paths = page.locator(".opblock-summary-path").all_inner_texts()
    for path in (
        "/v1/matches",
        "/v1/matches/{id}/play",
        "/v1/matches/{id}/stream",
        "/v1/meld-check",
    ):
        assert any(shown.replace("\u200b", "") == path for shown in paths), (path, paths)
    assert page.locator(".info .title").inner_text().startswith("Rummikub Referee")
    shot(page, "docs")
    assert [url for url in outside if not url.startswith("data:")] == []


def test_the_docs_page_opens_an_operation_with_its_schema(page: Any, server: Server) -> None:
    page.goto(server.url + "/docs")
    page.locator("#operations-meld-meldCheck .opblock-summary").click()
    body = page.locator("#operations-meld-meldCheck .opblock-body")
    expect(body).to_contain_text("meets_initial_meld")  # retries while Swagger UI renders
