"""The message catalogues: complete in every language, and covering every rule a play breaks."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
import yaml

from service import i18n
from service.rules import FreedJoker, Rules, Tile, check_turn, classify, parse_tiles
from service.rules.sets import SetFault
from service.rules.turn import TurnFault

FOLDER = Path(i18n.__file__).resolve().parent
TRANSLATED = i18n.LANGUAGES[1:]


def placeholders(text: str) -> Counter[str]:
    return Counter(re.findall(r"\{(\w+)\}", text))


def test_each_language_has_a_catalogue_a_translator_can_edit() -> None:
    for language in TRANSLATED:
        loaded = yaml.safe_load((FOLDER / f"{language}.yaml").read_text("utf-8"))
        assert isinstance(loaded, dict) and loaded
        assert all(isinstance(k, str) and isinstance(v, str) and v for k, v in loaded.items())


def test_every_message_has_a_translation_in_every_language() -> None:
    english = {key for language in TRANSLATED for key in i18n.catalogue(language)}
    for language in TRANSLATED:
        missing = sorted(english - set(i18n.catalogue(language)))
        assert not missing, f"{language}.yaml lacks {missing}"


def test_a_translation_keeps_every_placeholder_of_its_message() -> None:
    for language in TRANSLATED:
        for english, translated in i18n.catalogue(language).items():
            assert placeholders(translated) == placeholders(english), (language, english)


def test_a_translation_is_not_the_english_left_in_place() -> None:
    for language in TRANSLATED:
        same = [e for e, t in i18n.catalogue(language).items() if e == t and placeholders(e) != {}]
        assert not same, (language, same)


# Sets and turns that break each rule (the table of cases is the rules' own coverage).
SET_CASES = {
    SetFault.TOO_FEW_TILES: "R1 R2",
    SetFault.JOKERS_ONLY: "J J J",
    SetFault.MIXED: "R1 B2 K3",
    SetFault.GROUP_TOO_LARGE: "R5 B5 K5 O5 J",
    SetFault.GROUP_REPEATS_COLOUR: "R5 R5 K5",
    SetFault.RUN_NOT_CONSECUTIVE: "R5 R7 R8",
    SetFault.RUN_WRAPS_AROUND: "R12 R13 R1",
    SetFault.JOKER_OUT_OF_RANGE: "R12 R13 J",
}
MORE_SETS = ["R5 R4 R3", "J R1 R2", "O1 O2 O3 O5"]


@pytest.mark.parametrize("language", TRANSLATED)
def test_every_reason_a_set_is_invalid_is_translated(language: str) -> None:
    assert set(SET_CASES) == set(SetFault)
    for codes in [*SET_CASES.values(), *MORE_SETS]:
        info = classify(parse_tiles(codes.split()))
        assert info.reason is not None
        assert i18n.translate(info.reason, language) not in (None, info.reason), info.reason


def turn_violations() -> list:
    def tiles(*sets: str) -> list[list[Tile]]:
        return [parse_tiles(s.split()) for s in sets]

    def rack(codes: str) -> Counter[Tile]:
        return Counter(parse_tiles(codes.split()))

    locked = Rules(joker_locked_sets=True)
    found = []
    found += check_turn(tiles("R1 R2 J"), tiles("R1 R2"), rack("K9"), melded=True)
    found += check_turn(tiles("R1 R2 R3 R4"), tiles("R1 R2 R3"), rack("K9"), melded=True)
    found += check_turn(tiles("R1 R2 R3"), tiles("R1 R2 R3"), rack("K9"), melded=True)
    found += check_turn([], tiles("K9 K10 K11"), rack("R1"), melded=True)
    found += check_turn([], tiles("K9 K10 K11", "O1 O2 O3"), rack("R1"), melded=True)
    found += check_turn(tiles("R1 R2 R3"), tiles("R1 R2 R3 R4"), rack("R4"), melded=False)
    found += check_turn([], tiles("R1 R2 R3"), rack("R1 R2 R3"), melded=False)
    found += check_turn([], tiles("R1 R2 B3"), rack("R1 R2 B3"), melded=False)
    found += check_turn(
        tiles("R1 R2 J"), tiles("R1 R2", "J R3 R4"), rack("R3 R4"), melded=True, rules=locked
    )
    new_set = Rules(freed_joker=FreedJoker.NEW_SET)
    found += check_turn(
        tiles("R5 R6 J", "B1 B2 B3"), tiles("R5 R6 R7", "B1 B2 B3 J"), rack("R7"), melded=True,
        rules=new_set,
    )  # fmt: skip
    return found


@pytest.mark.parametrize("language", TRANSLATED)
def test_every_rule_a_turn_breaks_is_translated(language: str) -> None:
    violations = turn_violations()
    assert {v.fault for v in violations} >= set(TurnFault)
    for violation in violations:
        translated = i18n.translate(violation.message, language)
        assert translated not in (None, violation.message), violation.message


@pytest.mark.parametrize(
    ("header", "language"),
    [
        (None, "en"),
        ("", "en"),
        ("es", "es"),
        ("sv-SE", "sv"),
        ("es-MX,es;q=0.9,en;q=0.8", "es"),
        ("en;q=0.5, sv", "sv"),
        ("fr, de;q=0.8, es;q=0.3", "es"),
        ("fr", "en"),
        ("*", "en"),
        ("sv;q=0, es;q=0.1", "es"),
        ("es;q=abc", "en"),
        ("ES", "es"),
    ],
)
def test_accept_language_picks_the_language(header: str | None, language: str) -> None:
    assert i18n.negotiate(header) == language


def test_a_message_no_template_matches_stays_english_and_is_named() -> None:
    body = {"title": "Something new", "detail": "a sentence nobody translated", "status": 409}
    assert i18n.localize(body, "es")["detail"] == "a sentence nobody translated"
    assert i18n.untranslated(body, "sv") == ["Something new", "a sentence nobody translated"]
