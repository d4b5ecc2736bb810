"""The group choices a search state allows (service/rules/solver/options.py, Choices), against
the rule written out plainly: every colour has options for its count of real tiles sent to
groups, and the jokers the colours' runs need, with the group's, are at hand."""

from __future__ import annotations

import random

import pytest

from service.rules.solver.groups import group_choices
from service.rules.solver.options import (
    COLOUR_NEEDS,
    LEFT_SHIFT,
    NEED_BITS,
    NONE,
    Choice,
    Choices,
)


def a_key(rng: random.Random, left: int) -> int:
    """What a state's colours need for each count of real tiles (NONE: no option), and the
    jokers it has left."""
    key = left << LEFT_SHIFT
    for colour in range(4):
        for reals in range(4):
            need = NONE if rng.random() < 0.2 else rng.randint(0, 3)
            key |= need << (COLOUR_NEEDS * colour + NEED_BITS * reals)
    return key


def plainly(choices: Choices, key: int) -> list[Choice]:
    left = key >> LEFT_SHIFT
    allowed = []
    for choice in choices.numbered:
        needs = [
            (key >> (COLOUR_NEEDS * colour + NEED_BITS * choice[1 + colour])) & NONE
            for colour in range(4)
        ]
        if NONE not in needs and sum(needs) + choice[5] <= left:
            allowed.append(choice)
    return allowed


@pytest.mark.parametrize("seed", range(4))
def test_the_choices_a_state_allows_are_those_the_rule_allows(seed: int) -> None:
    rng = random.Random(seed)
    choices = Choices(group_choices((3, 2, 3, 1), 4, essential=True))
    seen = 0
    for _ in range(200):
        key = a_key(rng, rng.randint(0, 4))
        allowed = choices.allowed(key)
        assert list(allowed) == plainly(choices, key)
        assert choices.allowed(key) is allowed  # filled once
        seen += len(allowed)
    assert seen  # not only empty answers


def test_the_choices_allowed_are_the_choices_held_not_copies() -> None:
    # compiled, a choice read from a tuple typed as holding choices and appended to a list was
    # a new tuple each time (and more for the collector to walk): the same choice allowed by
    # two states is one object
    choices = Choices(group_choices((3, 3, 3, 3), 4, essential=True))
    first = choices.allowed(6 << LEFT_SHIFT)  # every colour needs no joker: all with <= 6
    second = choices.allowed((6 << LEFT_SHIFT) | 1)  # colour 0 needs one joker with no real
    assert first and second
    held = {choice[0]: choice for choice in first}
    assert all(choice is held[choice[0]] for choice in second)
