"""Checking a whole turn: the table before, the table the player sends, their rack.

A play is legal when every set on the new table is valid, every tile that was on
the table is still on it, the tiles added all come from the player's rack and at
least one is added. Before their initial meld a player may only add new sets of
rack tiles worth at least the threshold, leaving the table's sets untouched. With
the joker-locked option, a set holding a joker may be extended but not split or
reduced, except by swapping the real tile for the joker. With ``rules.freed_joker`` set to
``new_set`` (000's literal text), a joker freed from the table must end the turn in a new set:
one holding no whole set of the table as it was (:func:`freed_joker_violations`).
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain

from service.rules.meld import initial_meld_value
from service.rules.options import FreedJoker, Rules
from service.rules.sets import SetFault, SetInfo, SetKind, classify
from service.rules.tiles import JOKER, Tile

__all__ = [
    "IllegalTurn",
    "TurnFault",
    "Violation",
    "check_conservation",
    "check_turn",
    "conserves",
    "freed_joker_violations",
    "set_key",
    "tiles_of",
]


class TurnFault(enum.Enum):
    """Why a turn is refused beyond an invalid set; the value is the stable code."""

    TABLE_TILES_MISSING = "table_tiles_missing"
    JOKER_LEFT_TABLE = "joker_left_table"
    TILES_NOT_ON_RACK = "tiles_not_on_rack"
    NO_RACK_TILE_PLAYED = "no_rack_tile_played"
    TABLE_CHANGED_BEFORE_INITIAL_MELD = "table_changed_before_initial_meld"
    INITIAL_MELD_BELOW_THRESHOLD = "initial_meld_below_threshold"
    JOKER_LOCKED_SET_BROKEN = "joker_locked_set_broken"
    FREED_JOKER_NOT_IN_NEW_SET = "freed_joker_not_in_new_set"


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken rule: a stable code, a human sentence, and the set it is about.

    ``set_index`` counts from 0 in the table the player sent (or, for
    ``table_changed_before_initial_meld`` and ``joker_locked_set_broken``, in the
    table before the turn); the sentence counts from 1. :attr:`params` holds, by name,
    every tile and number the sentence names (``set_index``, ``tiles``, ``points``,
    ``threshold``...), so a client can word the rule in its own language.
    """

    fault: SetFault | TurnFault
    message: str
    set_index: int | None = None
    tiles: tuple[str, ...] = ()
    extra: tuple[tuple[str, str | int | bool], ...] = ()

    @property
    def params(self) -> dict[str, object]:
        """The tiles and numbers the message names, by name."""
        named: dict[str, object] = {}
        if self.set_index is not None:
            named["set_index"] = self.set_index
        if self.tiles:
            named["tiles"] = list(self.tiles)
        named.update(self.extra)
        return named

    @property
    def code(self) -> str:
        """The stable code of the broken rule, such as ``"joker_out_of_range"``."""
        code: str = self.fault.value
        return code


class IllegalTurn(Exception):
    """Raised when a play breaks the rules; carries every violation."""

    def __init__(self, violations: Sequence[Violation]) -> None:
        super().__init__("; ".join(v.message for v in violations))
        self.violations = tuple(violations)


def tiles_of(table: Iterable[Iterable[Tile]]) -> Counter[Tile]:
    """Return every tile of ``table`` as a multiset."""
    return Counter(chain.from_iterable(table))  # one count, not an update per set


def set_key(tiles: Sequence[Tile]) -> tuple[str, ...]:
    """Return what identifies a set regardless of how a group's tiles are ordered.

    A joker's named reading (``J=R1``) is left out: naming it does not change the set.
    """
    codes = tuple(tile.plain.code for tile in tiles)
    return tuple(sorted(codes)) if classify(tiles).kind is SetKind.GROUP else codes


def check_turn(
    before: Sequence[Sequence[Tile]],
    after: Sequence[Sequence[Tile]],
    rack: Counter[Tile],
    *,
    melded: bool,
    rules: Rules | None = None,
) -> list[Violation]:
    """Return every rule the play from ``before`` to ``after`` breaks; empty when legal."""
    rules = rules or Rules()
    infos = [classify(tiles) for tiles in after]
    violations = [_set_violation(i, info) for i, info in enumerate(infos) if not info.valid]
    violations += _conservation(tiles_of(before), tiles_of(after), rack)
    if not melded:
        violations += _initial_meld(before, after, rules)
    else:
        if rules.joker_locked_sets:
            violations += _joker_locks(before, infos)
        if rules.freed_joker is FreedJoker.NEW_SET:
            violations += freed_joker_violations(before, after)
    return violations


def freed_joker_violations(
    before: Sequence[Sequence[Tile]], after: Sequence[Sequence[Tile]]
) -> list[Violation]:
    """What ``rules.freed_joker: "new_set"`` refuses in the move from ``before`` to ``after``.

    A table set holding a joker keeps it when the set comes back whole inside a set of
    ``after`` (``B3 B4 J`` extended to ``B3 B4 B5 J``); the jokers of the other sets were
    freed. A *new* set holds no whole set of ``before``. Jokers are alike, so the play is
    legal when the new sets hold at least as many jokers as were freed (any joker added to
    an old set may then be one from the rack). Empty when legal.
    """
    old = [Counter(tiles) for tiles in before]
    new = [Counter(tiles) for tiles in after]
    holds = [[i for i, held in enumerate(old) if not held - candidate] for candidate in new]
    in_new_sets = sum(
        candidate[JOKER] for candidate, kept in zip(new, holds, strict=True) if not kept
    )
    with_jokers = [i for i, held in enumerate(old) if held[JOKER]]
    freed = sum(old[i][JOKER] for i in with_jokers) - _most_jokers_kept(with_jokers, old, new)
    if freed <= in_new_sets:
        return []
    return [
        Violation(
            TurnFault.FREED_JOKER_NOT_IN_NEW_SET,
            f"{freed} joker{'s' if freed != 1 else ''} freed from the table must be laid in "
            "a new set (one holding no whole set of the table as it was); "
            f"the new sets hold {in_new_sets}",
            extra=(("freed", freed), ("in_new_sets", in_new_sets)),
        )
    ]


def _most_jokers_kept(
    with_jokers: Sequence[int], old: Sequence[Counter[Tile]], new: Sequence[Counter[Tile]]
) -> int:
    """The most jokers of the old sets ``with_jokers`` that come back whole, each inside a
    new set that holds every old set placed in it (few: one per joker, so search)."""
    room = [Counter(candidate) for candidate in new]
    best = 0

    def place(number: int, kept: int) -> None:
        nonlocal best
        if number == len(with_jokers):
            best = max(best, kept)
            return
        held = old[with_jokers[number]]
        for candidate in room:
            if not held - candidate:
                candidate.subtract(held)
                place(number + 1, kept + held[JOKER])
                candidate.update(held)
        place(number + 1, kept)

    place(0, 0)
    return best


def check_conservation(
    before: Counter[Tile], after: Counter[Tile], rack: Counter[Tile]
) -> list[Violation]:
    """Return what the move from the table's tiles ``before`` to ``after`` (multisets, as
    :func:`tiles_of` counts them) breaks of the tiles' conservation alone: table tiles missing,
    a joker taken off the table, tiles not on ``rack`` (the part of :func:`check_turn` that
    holds for any work in progress, whatever its sets)."""
    return [
        violation
        for violation in _conservation(before, after, rack)
        if violation.fault is not TurnFault.NO_RACK_TILE_PLAYED
    ]


def conserves(
    before: Mapping[Tile, int], table: Iterable[Iterable[Tile]], rack: Mapping[Tile, int]
) -> bool:
    """Whether :func:`check_conservation` finds nothing wrong with the move from the table's
    tiles ``before`` to the sets ``table``, ``rack`` the player's tiles (multisets as
    :func:`tiles_of` counts them): every tile of ``before`` is still there, and what ``table``
    holds beyond it is on ``rack``. The same answer, at a third of its cost on a draft (one
    pass over the sets and plain counts; no violation worked out for the case nearly every
    draft is in): ``check_conservation`` names the violations when this says ``False``."""
    after: dict[Tile, int] = {}
    for tiles in table:
        for tile in tiles:
            after[tile] = after.get(tile, 0) + 1
    for tile, count in before.items():
        if after.get(tile, 0) < count:
            return False  # a table tile (or a joker) missing
    # a loop, not all() over a generator (which makes and resumes a frame: 1.5x the time here)
    for tile, count in after.items():  # noqa: SIM110
        if count > before.get(tile, 0) + rack.get(tile, 0):
            return False  # more of it than the table and the rack hold
    return True


def _label(index: int, tiles: Sequence[Tile]) -> str:
    return f"set {index + 1} ({' '.join(tile.code for tile in tiles)})"


def _set_violation(index: int, info: SetInfo) -> Violation:
    assert info.fault is not None
    return Violation(
        info.fault,
        f"{_label(index, info.tiles)}: {info.reason}",
        index,
        tuple(tile.code for tile in info.tiles),
        info.reason_params,
    )


def _listed(tiles: Mapping[Tile, int]) -> tuple[str, ...]:
    return tuple(tile.plain.code for tile in sorted(Counter(tiles).elements(), key=_order))


def _order(tile: Tile) -> tuple[str, int]:
    return (tile.colour.value if tile.colour else "~", tile.number or 0)


def _conservation(
    before: Counter[Tile], after: Counter[Tile], rack: Counter[Tile]
) -> list[Violation]:
    violations: list[Violation] = []
    missing = _minus(before, after)
    if JOKER in missing:
        violations.append(
            Violation(TurnFault.JOKER_LEFT_TABLE, "a joker on the table must stay on the table")
        )
        del missing[JOKER]
    if missing:
        codes = _listed(missing)
        violations.append(
            Violation(
                TurnFault.TABLE_TILES_MISSING,
                f"tiles that were on the table are missing from it: {' '.join(codes)}",
                tiles=codes,
            )
        )
    added = _minus(after, before)
    not_on_rack = _minus(added, rack)
    if not_on_rack:
        codes = _listed(not_on_rack)
        verb = "is" if len(codes) == 1 else "are"
        violations.append(
            Violation(
                TurnFault.TILES_NOT_ON_RACK,
                f"{' '.join(codes)} {verb} not on your rack",
                tiles=codes,
            )
        )
    if not added:
        violations.append(
            Violation(
                TurnFault.NO_RACK_TILE_PLAYED, "a play must add at least one tile from your rack"
            )
        )
    return violations


def _minus(these: Mapping[Tile, int], those: Mapping[Tile, int]) -> dict[Tile, int]:
    """``these - those`` for counts that are all positive, as a plain dict: without
    ``Counter.__sub__``'s lookup of every missing tile through ``__missing__``, nor a
    ``Counter``'s construction (this runs three times on every move and draft)."""
    return {
        tile: count - those.get(tile, 0) for tile, count in these.items()
        if count > those.get(tile, 0)
    }  # fmt: skip


def _initial_meld(
    before: Sequence[Sequence[Tile]], after: Sequence[Sequence[Tile]], rules: Rules
) -> list[Violation]:
    remaining = Counter(set_key(tiles) for tiles in before)
    new_sets = []
    for tiles in after:
        key = set_key(tiles)
        if remaining[key]:
            remaining[key] -= 1
        else:
            new_sets.append(tiles)
    violations = []
    for index, tiles in enumerate(before):
        key = set_key(tiles)
        if remaining[key]:
            remaining[key] -= 1
            violations.append(
                Violation(
                    TurnFault.TABLE_CHANGED_BEFORE_INITIAL_MELD,
                    f"table {_label(index, tiles)} was changed: before your initial meld "
                    "you may only add new sets of your own tiles",
                    index,
                    tuple(tile.code for tile in tiles),
                )
            )
    if violations:
        return violations
    value = initial_meld_value(new_sets, joker_worth_zero=rules.joker_worth_zero_in_meld)
    if value < rules.initial_meld_points:
        invalid = any(not classify(tiles).valid for tiles in new_sets)
        violations.append(
            Violation(
                TurnFault.INITIAL_MELD_BELOW_THRESHOLD,
                f"your initial meld is worth {value} points"
                + (" (invalid sets count nothing)" if invalid else "")
                + f"; it must be worth at least {rules.initial_meld_points}",
                extra=(
                    ("points", value),
                    ("threshold", rules.initial_meld_points),
                    ("invalid_sets", invalid),
                ),
            )
        )
    return violations


def _joker_locks(before: Sequence[Sequence[Tile]], after: Sequence[SetInfo]) -> list[Violation]:
    """Each table set holding a joker must come back extended, or with its joker swapped out,
    inside a set of the new table; one new run may hold several such runs (joined end to end),
    but never two over the same numbers, so a copy cannot hide behind its twin."""
    locked = [(index, held) for index, held in enumerate(map(classify, before))]
    locked = [(index, held) for index, held in locked if held.valid and held.joker_count]
    options = [
        [j for j, candidate in enumerate(after) if candidate.valid and _keeps(held, candidate)]
        for _, held in locked
    ]
    kept = _place_locked([held for _, held in locked], options)
    return [
        Violation(
            TurnFault.JOKER_LOCKED_SET_BROKEN,
            f"table {_label(index, held.tiles)} holds a joker: it may be extended or have "
            "its joker swapped for the real tile, but not split or reduced",
            index,
            tuple(tile.code for tile in held.tiles),
        )
        for number, (index, held) in enumerate(locked)
        if number not in kept
    ]


def _place_locked(held: Sequence[SetInfo], options: Sequence[Sequence[int]]) -> set[int]:
    """The most held sets that fit into new sets together (few: one per joker, so search)."""
    best: set[int] = set()
    taken: dict[int, list[tuple[int, int]]] = {}

    def span(info: SetInfo) -> tuple[int, int]:
        start = info.start if info.start is not None else 0
        return (start, start + len(info.tiles) - 1) if info.kind is SetKind.RUN else (0, 99)

    def place(number: int, placed: set[int]) -> None:
        nonlocal best
        if len(placed) + len(held) - number <= len(best):
            return
        if number == len(held):
            best = set(placed)
            return
        low, high = span(held[number])
        for candidate in options[number]:
            spans = taken.setdefault(candidate, [])
            if all(high < other_low or other_high < low for other_low, other_high in spans):
                spans.append((low, high))
                place(number + 1, placed | {number})
                spans.pop()
        place(number + 1, placed)

    place(0, set())
    return best


def _keeps(held: SetInfo, candidate: SetInfo) -> bool:
    """Whether ``candidate`` is ``held`` extended, possibly with jokers swapped out."""
    if held.kind is SetKind.GROUP:
        real = Counter(tile for tile in held.tiles if not tile.is_joker)
        return (
            candidate.kind is SetKind.GROUP
            and candidate.number == held.number
            and len(candidate.tiles) >= len(held.tiles)
            and not real - Counter(candidate.tiles)
        )
    if candidate.kind is not SetKind.RUN or candidate.colour != held.colour:
        return False
    assert held.start is not None and candidate.start is not None
    offset = held.start - candidate.start
    if offset < 0 or offset + len(held.tiles) > len(candidate.tiles):
        return False
    return all(
        tile.is_joker or candidate.tiles[offset + i] == tile for i, tile in enumerate(held.tiles)
    )
