"""Frozen dataclasses made faster (service/game/frozen.py) are the values their class makes."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pytest

from service.game.frozen import maker


@dataclass(frozen=True, slots=True)
class Made:
    first: int
    second: str


def test_a_maker_makes_what_the_class_makes() -> None:
    made = maker(Made)(1, "b")
    assert type(made) is Made and made == Made(1, "b")
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.first = 2  # type: ignore[misc]


def test_a_class_with_a_post_init_is_refused() -> None:
    @dataclass(frozen=True, slots=True)
    class Checked:
        value: int

        def __post_init__(self) -> None:
            pass

    with pytest.raises(TypeError, match="__post_init__"):
        maker(Checked)
