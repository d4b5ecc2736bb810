"""Browser tests: Debian's Chromium, driven by Playwright, against the app under real gunicorn.

- `server` (session): gunicorn with `deploy/gunicorn.conf.py` on a free port, in test mode, on
  the session's redis-server. Has `.url`, `.api(method, path, ...)`.
- `browser` (session): headless Chromium from /usr/bin/chromium (never `playwright install`).
- `new_page(device="desktop")` (function): opens fresh pages, each in its own context, at a size
  of `DEVICES` (a desktop, or a phone with touch events), in the browser `locale` "en-US" or
  another one asked for ("es-ES"); their console errors fail the test.
- `page` (function): one such page at the desktop size.
- `shot(page, name)`: saves a screenshot under artifacts/browser/.

Without Chromium or Playwright these tests are skipped (they fail under CI=true, where
`make test` installs both).
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.gunicorn_process import GunicornProcess, GunicornStartError
from tests.support.redis_process import RedisProcess

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts" / "browser"
CHROMIUM = os.environ.get("CHROMIUM_BIN", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--autoplay-policy=no-user-gesture-required",
]

# The sizes pages open at. The phones have touch events (Playwright's `tap`) and a mobile
# viewport: 390x844 is an iPhone 12 to 15, 360x740 a small Android phone.
TOUCH = {"has_touch": True, "is_mobile": True}
DEVICES: dict[str, dict[str, Any]] = {
    "desktop": {"viewport": {"width": 1280, "height": 860}},
    "phone": {"viewport": {"width": 390, "height": 844}, **TOUCH},
    "small-phone": {"viewport": {"width": 360, "height": 740}, **TOUCH},
}
PHONES = ("phone", "small-phone")

pytestmark = pytest.mark.browser

PATIENCE = 30.0
"""Seconds a page, an action or a request may take before the test fails: a bound on a broken
page, not a speed (two busy loops beside a full suite on 2 cores slow a page down by seconds)."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/browser/" in str(item.path).replace(os.sep, "/"):
            item.add_marker(pytest.mark.browser)


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"browser tests cannot run: {reason}", pytrace=False)
    pytest.skip(f"browser tests skipped: {reason}")


class Server(GunicornProcess):
    """The app under gunicorn, and a tiny JSON client for driving seats from the test."""

    def api(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        token: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("Content-Type", "application/json")
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        try:
            with urllib.request.urlopen(request, timeout=PATIENCE) as response:
                raw = response.read()
                return response.status, json.loads(raw) if raw else None
        except urllib.error.HTTPError as error:
            raw = error.read()
            return error.code, json.loads(raw) if raw else None

    def create(self, body: dict[str, Any]) -> dict[str, Any]:
        status, created = self.api("POST", "/v1/matches", body)
        assert status == 201, created
        return created

    def seat_url(self, match_id: str, token: str | None = None) -> str:
        return f"{self.url}/#m={match_id}" + (f"&t={token}" if token else "")


@pytest.fixture(scope="session")
def server(redis_server: RedisProcess) -> Iterator[Server]:
    """gunicorn serving the app in test mode; stopped at the end of the session."""
    env = {
        "REDIS_URL": redis_server.url,
        "REFEREE_TEST_MODE": "1",
        # Streams notice a departed client at their next keep-alive: shut down in about 1 s.
        "STREAM_KEEPALIVE_SECONDS": "1",
        # These tests are about the page: on a starved machine (a busy CI box) the session's
        # Redis once took longer than the default 0.5 s to answer, and the referee answered
        # 503 (as it should; tests/faults cover that) before the page had drawn anything.
        "REDIS_SOCKET_TIMEOUT": "2",
    }
    running = Server(env=env, workers=1, threads=32, log_level="warning")
    try:
        running.start()
    except GunicornStartError as error:
        pytest.fail(str(error), pytrace=False)
    try:
        yield running
    finally:
        # A quick shutdown: a graceful one would wait for the open event streams.
        running.cleanup()


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """Headless Chromium (Debian's), launched by Playwright."""
    try:
        from playwright.sync_api import expect, sync_playwright
    except ImportError:
        _unavailable("the playwright package is not installed (pip install -e '.[test]')")
    # What a page is expected to show, it may take as long to show as an action may take to
    # start (PATIENCE; Playwright's default for expect() is 5 s): on a busy CI machine a
    # rematch's page took longer than 5 s once. A page that never shows it still fails.
    expect.set_options(timeout=PATIENCE * 1000)
    if not os.access(CHROMIUM, os.X_OK):
        _unavailable(f"{CHROMIUM} is missing (apt-get install chromium)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def new_page(browser: Any, request: pytest.FixtureRequest) -> Iterator[Callable[..., Any]]:
    """Open fresh pages (each in its own context) at a size of `DEVICES`; console errors fail
    the test. ``bypass_csp=True`` lets a test inject a script (axe-core) into the page;
    ``provoked`` names console errors the test causes on purpose (" 503 ", "net::ERR_FAILED")."""
    contexts: list[Any] = []
    errors: list[str] = []

    def open_page(
        device: str = "desktop",
        *,
        bypass_csp: bool = False,
        locale: str | None = None,
        provoked: tuple[str, ...] = (),
    ) -> Any:
        # The browser's language (navigator.languages, Accept-Language): English unless asked,
        # whatever the machine's own locale, since the tests read the page's words.
        context = browser.new_context(
            **DEVICES[device], bypass_csp=bypass_csp, locale=locale or "en-US"
        )
        context.set_default_timeout(PATIENCE * 1000)
        contexts.append(context)
        page = context.new_page()
        page.on("pageerror", lambda error: errors.append(f"page error: {error}"))
        page.on(
            "console",
            lambda message: (
                errors.append(f"console {message.type}: {message.text}")
                if message.type == "error" and not _expected_console_error(message.text, provoked)
                else None
            ),
        )
        return page

    yield open_page
    for context in contexts:
        context.close()
    assert errors == [], errors


def _expected_console_error(text: str, provoked: tuple[str, ...] = ()) -> bool:
    # Chromium logs every non-2xx fetch; the refusals a test provokes on purpose are fine.
    return "Failed to load resource" in text and any(
        part in text for part in (" 400 ", " 409 ", " 412 ", " 422 ", *provoked)
    )


@pytest.fixture
def page(new_page: Callable[[], Any]) -> Any:
    return new_page()


def shot(page: Any, name: str) -> Path:
    """Save a full-page screenshot as artifacts/browser/<name>.png."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
