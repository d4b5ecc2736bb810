"""The initial meld: its value and whether it reaches the threshold."""

from __future__ import annotations

from collections.abc import Sequence

from service.rules.sets import classify, set_points
from service.rules.tiles import Tile

__all__ = ["initial_meld_value", "meets_initial_meld"]


def initial_meld_value(sets: Sequence[Sequence[Tile]], *, joker_worth_zero: bool = False) -> int:
    """Return the points the valid sets among ``sets`` are worth as an initial meld.

    Each tile counts its number; a joker the number it stands for, or 0 with
    ``joker_worth_zero``. Invalid sets count nothing.
    """
    return sum(set_points(tiles, joker_worth_zero=joker_worth_zero) for tiles in sets)


def meets_initial_meld(
    sets: Sequence[Sequence[Tile]], *, threshold: int = 30, joker_worth_zero: bool = False
) -> bool:
    """Return whether ``sets`` are all valid and together worth at least ``threshold``."""
    return all(classify(tiles).valid for tiles in sets) and (
        initial_meld_value(sets, joker_worth_zero=joker_worth_zero) >= threshold
    )
