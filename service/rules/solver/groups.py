"""Which groups can be built at one number.

At a number the solver only needs to know how many real tiles of each colour go
into groups and how many jokers; :func:`arrange_groups` says whether they can be
split into valid groups (3 or 4 tiles, distinct colours, at least one real tile,
jokers for missing colours), around the groups that locked sets force, and gives
one such split. Colours are indices into :data:`service.rules.tiles.COLOURS`;
a set of colours is a bit mask.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from itertools import product

__all__ = ["ForcedGroup", "GroupChoice", "GroupPlan", "arrange_groups", "group_choices"]

MIN_GROUP = 3
MAX_GROUP = 4
COLOUR_COUNT = 4

# Bounds on the memo caches below (least recently used entries go first); the stress
# positions of bench/solver_tail.py fill about a tenth of each.
ARRANGE_CACHE = 1 << 16
CHOICES_CACHE = 1 << 12

# A forced group: the colour mask its locked real tiles hold, and how many more
# members (real tiles of other colours, or jokers) it needs at least and at most.
ForcedGroup = tuple[int, int, int]
# A group to build: its colour mask and its jokers.
GroupShape = tuple[int, int]
# (members added to each forced group, in order; free groups)
GroupPlan = tuple[tuple[GroupShape, ...], tuple[GroupShape, ...]]
# Real tiles per colour going to groups, and jokers going to groups.
GroupChoice = tuple[tuple[int, ...], int]


def _size(mask: int) -> int:
    return mask.bit_count()


@lru_cache(maxsize=ARRANGE_CACHE)
def arrange_groups(
    reals: tuple[int, ...],
    jokers: int,
    forced: tuple[ForcedGroup, ...] = (),
    *,
    essential: bool = False,
) -> GroupPlan | None:
    """Split ``reals`` (per colour) and ``jokers`` into valid groups; None if impossible.

    Every forced group must be completed with members of colours it lacks (each
    colour at most once) or jokers, within its bounds. In ``essential`` mode a free
    group holds jokers only to reach three tiles.
    """
    if not forced:
        free = _free_groups(reals, jokers, essential)
        return None if free is None else ((), free)
    (held, least, most), rest = forced[0], forced[1:]
    for mask, joker_count in _completions(reals, jokers, held, least, most):
        left = tuple(n - ((mask >> c) & 1) for c, n in enumerate(reals))
        plan = arrange_groups(left, jokers - joker_count, rest, essential=essential)
        if plan is not None:
            return ((mask, joker_count), *plan[0]), plan[1]
    return None


def _completions(
    reals: tuple[int, ...], jokers: int, held: int, least: int, most: int
) -> Iterator[GroupShape]:
    open_colours = [c for c in range(COLOUR_COUNT) if not held >> c & 1 and reals[c]]
    for picks in product((0, 1), repeat=len(open_colours)):
        mask = sum(1 << c for c, pick in zip(open_colours, picks, strict=True) if pick)
        for joker_count in range(min(jokers, most) + 1):
            if least <= _size(mask) + joker_count <= most:
                yield mask, joker_count


@lru_cache(maxsize=ARRANGE_CACHE)
def _free_groups(
    reals: tuple[int, ...], jokers: int, essential: bool
) -> tuple[GroupShape, ...] | None:
    first = next((c for c, n in enumerate(reals) if n), None)
    if first is None:
        return () if jokers == 0 else None
    others = [c for c in range(first + 1, COLOUR_COUNT) if reals[c]]
    for picks in product((0, 1), repeat=len(others)):
        mask = (1 << first) | sum(1 << c for c, pick in zip(others, picks, strict=True) if pick)
        size = _size(mask)
        fewest = max(0, MIN_GROUP - size)
        most = fewest if essential else min(jokers, MAX_GROUP - size)
        for joker_count in range(fewest, most + 1):
            if joker_count > jokers:
                break
            left = tuple(n - ((mask >> c) & 1) for c, n in enumerate(reals))
            rest = _free_groups(left, jokers - joker_count, essential)
            if rest is not None:
                return ((mask, joker_count), *rest)
    return None


@lru_cache(maxsize=CHOICES_CACHE)
def group_choices(
    available: tuple[int, ...],
    max_jokers: int,
    forced: tuple[ForcedGroup, ...] = (),
    *,
    essential: bool = False,
) -> tuple[GroupChoice, ...]:
    """Every (real tiles per colour, jokers) that can form valid groups at one number.

    ``available`` bounds the real tiles of each colour; ``max_jokers`` the jokers.
    The choice of no groups at all comes first when there are no forced groups.
    """
    choices: list[GroupChoice] = []
    for reals in product(*(range(n + 1) for n in available)):
        for jokers in range(max_jokers + 1):
            if arrange_groups(reals, jokers, forced, essential=essential) is not None:
                choices.append((reals, jokers))
    return tuple(choices)
