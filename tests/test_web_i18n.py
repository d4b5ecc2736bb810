"""The web table's own message catalogues (service/web/static/i18n/<lang>.json): every string the
pages show has an English text and a translation in every language, with the same placeholders
and plural forms; every key the pages use exists, and every catalogued key is used."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from service import i18n

STATIC = Path(__file__).resolve().parents[1] / "service" / "web" / "static"
CATALOGUES = STATIC / "i18n"
LANGUAGES = tuple(sorted(path.stem for path in CATALOGUES.glob("*.json")))
TRANSLATED = tuple(language for language in LANGUAGES if language != "en")
PLURAL_FORMS = {"one", "other"}  # what Intl.PluralRules answers for en, es and sv
# A text that may stay the same in a translation: names, symbols, loanwords.
SAME_ALLOWED = {
    "app.title",
    "replay.first",  # ⏮ and ⏭: symbols, in every language
    "replay.last",
    "bank.give",  # "+15 s": a number and the SI symbol
    "lobby.add_bot",
    "lobby.default_bot",
    "lobby.default_bot_n",
    "lobby.row_bot_toggle",
    "player.bot",
    "table.set_note",
    "tile.numbered",
    "result.col_total",
    "conn.live",
    "tile.orange",
    "tile.joker",
    "lobby.add_person",
    "game.sort_number",
    "game.sort_number_label",
}


def load(language: str) -> dict[str, Any]:
    loaded = json.loads((CATALOGUES / f"{language}.json").read_text("utf-8"))
    assert isinstance(loaded, dict) and loaded
    return loaded


def texts(value: Any) -> list[str]:
    return list(value.values()) if isinstance(value, dict) else [value]


def placeholders(value: Any) -> Counter[str]:
    found: Counter[str] = Counter()
    for text in texts(value):
        found |= Counter(re.findall(r"\{(\w+)\}", text))
    return found


def used_keys() -> set[str]:
    """Keys the pages ask for: data-i18n* attributes in the HTML, and key-shaped string
    literals in the scripts (t("turn.yours"), and keys kept in tables like COLOURS)."""
    namespaces = {key.split(".")[0] for key in load("en")}
    used: set[str] = set()
    for page in STATIC.glob("*.html"):
        used |= set(re.findall(r'data-i18n[\w-]*="([^"]+)"', page.read_text("utf-8")))
    for script in (STATIC / "js").glob("*.js"):
        for literal in re.findall(r'"([a-z_]+(?:\.[a-z0-9_]+)+)"', script.read_text("utf-8")):
            if literal.split(".")[0] in namespaces and not literal.endswith(".js"):
                used.add(literal)
    return used


def test_the_languages_are_those_of_the_api_and_the_switch() -> None:
    assert set(LANGUAGES) == set(i18n.LANGUAGES), "a catalogue per language the API speaks"
    script = (STATIC / "js" / "i18n.js").read_text("utf-8")
    declared = re.search(r"export const LANGUAGES = \[([^\]]*)\];", script)
    assert declared and sorted(re.findall(r'"(\w+)"', declared.group(1))) == list(LANGUAGES)
    page = (STATIC / "index.html").read_text("utf-8")
    switch = re.search(r'<select id="language".*?</select>', page, re.S)
    assert switch and sorted(re.findall(r'<option value="(\w+)"', switch.group(0))) == list(
        LANGUAGES
    )


def test_every_catalogue_is_plain_json_a_translator_can_edit() -> None:
    for language in LANGUAGES:
        for key, value in load(language).items():
            assert re.fullmatch(r"[a-z_]+(\.[a-z0-9_]+)+", key), (language, key)
            if isinstance(value, dict):
                assert set(value) == PLURAL_FORMS, (language, key)
            assert all(isinstance(text, str) and text.strip() for text in texts(value)), key


@pytest.mark.parametrize("language", TRANSLATED)
def test_every_web_string_has_a_translation(language: str) -> None:
    english, translated = load("en"), load(language)
    missing = sorted(set(english) - set(translated))
    assert not missing, f"i18n/{language}.json lacks {missing}"
    extra = sorted(set(translated) - set(english))
    assert not extra, f"i18n/{language}.json has keys English lacks: {extra}"


@pytest.mark.parametrize("language", TRANSLATED)
def test_a_translation_keeps_the_placeholders_and_plural_forms(language: str) -> None:
    english, translated = load("en"), load(language)
    for key, text in translated.items():
        assert placeholders(text) == placeholders(english[key]), (language, key)
        assert isinstance(text, dict) == isinstance(english[key], dict), (language, key)


@pytest.mark.parametrize("language", TRANSLATED)
def test_a_translation_is_not_the_english_left_in_place(language: str) -> None:
    english, translated = load("en"), load(language)
    same = [k for k, v in translated.items() if v == english[k] and k not in SAME_ALLOWED]
    assert not same, (language, same)


def test_every_key_the_pages_use_is_catalogued_and_every_catalogued_key_is_used() -> None:
    catalogued, used = set(load("en")), used_keys()
    unknown, unused = sorted(used - catalogued), sorted(catalogued - used)
    assert not unknown, f"used but not in i18n/en.json: {unknown}"
    assert not unused, f"in i18n/en.json but never used: {unused}"


def test_the_pages_english_defaults_match_the_catalogue() -> None:
    """The pages carry the English text (shown before the script runs); it must be the
    catalogue's, so an edit of en.json is not undone by a stale page."""
    english = load("en")
    for page in STATIC.glob("*.html"):
        found = re.findall(r'data-i18n="([^"]+)"[^>]*>([^<]*)<', page.read_text("utf-8"))
        assert found, page
        for key, text in found:
            assert " ".join(text.split()) == english[key], (page.name, key)
