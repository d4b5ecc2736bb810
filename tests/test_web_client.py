"""The web client's shape (service/web/static/js): small modules, after TodoMVC's vanilla-es6
example. One module owns the match's state (store.js), the view modules alone write the DOM,
and the lists it shares with the server agree with the server's."""

from __future__ import annotations

import re
from pathlib import Path

from service.game import EventType

JS = Path(__file__).resolve().parents[1] / "service" / "web" / "static" / "js"
MOST_LINES = 400
# The modules that write the page: the view, its templates, and the gestures that draw a
# dragged tile's ghost; i18n.js fills the static page's data-i18n texts.
WRITERS = {
    "view.js",
    "view-result.js",
    "view-messages.js",
    "view-roving.js",
    "view-replay.js",
    "view-banks.js",
    "lobby-view.js",
    "template.js",
    "tiles.js",
    "drag.js",
    "i18n.js",
}
WRITES_THE_DOM = re.compile(
    r"\.innerHTML\s*=|\.textContent\s*=|\.hidden\s*=|\.append\(|\.prepend\(|createElement\("
    r"|classList\.(?:add|remove|toggle)|setAttribute\(|showModal\(|\$\([^)]*\)\.close\(\)"
)


def scripts() -> list[Path]:
    return sorted(JS.glob("*.js"))


def test_no_script_of_the_web_client_is_over_400_lines() -> None:
    long = {
        path.name: n
        for path in scripts()
        if (n := len(path.read_text("utf-8").splitlines())) > MOST_LINES
    }
    assert long == {}


def test_only_the_view_writes_the_page() -> None:
    writing = {
        path.name: WRITES_THE_DOM.findall(path.read_text("utf-8"))
        for path in scripts()
        if path.name not in WRITERS
    }
    assert {name: found for name, found in writing.items() if found} == {}


def test_only_the_store_changes_the_match_state() -> None:
    """Other modules call the store's methods; none assigns to its fields."""
    assigning = {
        path.name: found
        for path in scripts()
        if path.name != "store.js"
        and (found := re.findall(r"\bstore\.\w+(?:\.\w+)*\s*=(?!=)", path.read_text("utf-8")))
    }
    assert assigning == {}


def test_the_page_listens_for_every_event_type_the_server_sends() -> None:
    """live.js subscribes to each type by name: a type missing there never reaches the page."""
    script = (JS / "live.js").read_text("utf-8")
    declared = re.search(r"export const EVENT_TYPES = \[([^\]]*)\];", script)
    assert declared is not None
    listed = re.findall(r'"(\w+)"', declared.group(1))
    assert len(listed) == len(set(listed))
    assert set(listed) == {event_type.value for event_type in EventType}
