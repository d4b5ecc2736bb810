import pytest
from cases import table

from service.rules import initial_meld_value, meets_initial_meld


@pytest.mark.parametrize(
    ("sets", "value", "meets"),
    [
        ("R11 J R13", 36, True),
        ("R10 B10 K10", 30, True),
        ("R9 B9 K9", 27, False),
        ("R1 R2 R3 | B10 K10 O10", 36, True),
        ("R1 R2 R3 | B5 K5 O5", 21, False),
        ("R12 R13 J", 0, False),
    ],
)
def test_the_initial_meld_totals_the_sets_laid_down(sets: str, value: int, meets: bool) -> None:
    assert initial_meld_value(table(sets)) == value
    assert meets_initial_meld(table(sets)) is meets


def test_an_invalid_set_spoils_an_initial_meld_even_when_the_rest_is_enough() -> None:
    assert not meets_initial_meld(table("R11 R12 R13 | B1 B2"))


def test_the_threshold_is_an_option() -> None:
    assert meets_initial_meld(table("R7 B7 K7"), threshold=20)
    assert not meets_initial_meld(table("R10 B10 K10"), threshold=50)


def test_with_the_house_rule_a_joker_adds_nothing_to_the_initial_meld() -> None:
    assert initial_meld_value(table("R11 J R13"), joker_worth_zero=True) == 24
    assert not meets_initial_meld(table("R11 J R13"), joker_worth_zero=True)
