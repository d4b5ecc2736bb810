"""The search: dynamic programming over the numbers 1 to 13.

After number ``v`` a *state* holds each colour's open runs, the jokers placed so far
and, before the initial meld, the meld value so far, packed into one integer with its
score (:mod:`service.rules.solver.packing`). At each number every state moves on by
every group choice and every option of each colour
(:mod:`service.rules.solver.options`); each new state keeps its best score, and a
state that another beats in every colour is dropped. The best closable state after 13
gives the answer; where each state of its play came from is worked out afterwards, from
the layers kept, by trying again only the moves that lead to it (:meth:`_Search.link`).

In essential mode (see :mod:`service.rules.solver.runs`) jokers are laid only
where a set needs them, and every joker left over counts as placed: the caller
adds them to runs and groups of three, and falls back to the full mode when they
do not fit.

A search is given a floor, the least score worth finding: it drops the states that
cannot reach it even if every rack tile above placed, adding up first the most each
colour's options can gain so that whole group choices are skipped untried. It may
also be given, from :func:`future_bounds`, the most the numbers above each one can
add once every joker is laid.

This module, :mod:`~service.rules.solver.options` and :mod:`~service.rules.solver.packing`
are compiled with mypyc when installed (setup.py; README, "The solver, compiled"), and run
the same as plain Python. Compiled, precise types turn the loops' arithmetic into machine
integer operations; module constants are ``Final`` (inlined), and dict methods are called
on the dict (a bound method kept in a local, quicker uncompiled, is a slow generic call).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence
from typing import Final, cast

from librt.vecs import vec
from mypy_extensions import i64

from service.rules.solver.groups import GroupChoice
from service.rules.solver.interpreted import let_others_run
from service.rules.solver.options import (
    CACHE,
    ESSENTIAL_FLAG,
    LEFT_SHIFT,
    MELD_FLAG,
    MIRROR_FLAG,
    Choices,
    ColourOptions,
    Kit,
    Option,
    Step,
)
from service.rules.solver.packing import (
    ALL_STATES,
    HALF_BITS,
    JOKER_MASK,
    JOKER_WEIGHT,
    MASK_0,
    MASK_1,
    MASK_2,
    MASK_3,
    MELD_MASK,
    MELD_SHIFT,
    NO_STRENGTH,
    SCALE,
    SMALL_LAYER,
    TILE_WEIGHT,
    UNREACHABLE,
    NewStates,
    all_closable,
    colour_ids,
    undominated,
    undominated_plain,
    undominated_spare,
)
from service.rules.solver.position import Position, mirrored
from service.rules.tiles import MAX_NUMBER

__all__ = [
    "TILE_WEIGHT",
    "Layer",
    "OutOfTime",
    "Plan",
    "Step",
    "best_plan",
    "future_bounds",
    "most_possible",
]

CHECK_EVERY: Final = 64
# how a search moved past a number (see _Search.advance), for _Search.link
SKIPPED: Final = 0
PLAIN: Final = 1
SPARE: Final = 2
GENERAL: Final = 3
NO_BOUND: Final = 1 << 40  # above any score


class OutOfTime(Exception):
    """Raised inside the search when its time budget runs out."""


# Layer and Plan are plain classes, not frozen dataclasses: compiled, a frozen dataclass stays a
# Python class whose __init__ sets each field through object.__setattr__ (about 3,000
# instructions a Layer, 13 of them a play), where a plain class is native (read-only by use).
class Layer:
    """What the best play does at one number."""

    def __init__(
        self, number: int, group_reals: tuple[int, ...], group_jokers: int, steps: tuple[Step, ...]
    ) -> None:
        self.number = number
        self.group_reals = group_reals
        self.group_jokers = group_jokers
        self.steps = steps


class Plan:
    """The best play, number by number, the spare jokers still to add, and its score."""

    def __init__(self, layers: tuple[Layer, ...], spare_jokers: int, score: int) -> None:
        self.layers = layers
        self.spare_jokers = spare_jokers
        self.score = score


# How a state was reached: the state before, the group choice, then each colour's option
# (worked out for the states of the best play only: see _Search.link).
Link = tuple[int, int, Option, Option, Option, Option]


def best_plan(
    position: Position,
    *,
    essential: bool,
    deadline: float | None = None,
    floor: int = 1,
    joker_limit: int | None = None,
    future: Sequence[Sequence[int]] | None = None,
) -> Plan | None:
    """Return the best play, or None when none scores ``floor`` or more.

    In essential mode ``joker_limit`` bounds the jokers the search lays itself (the
    others are spare), and ``future`` (from :func:`future_bounds`) lets it drop the
    states that have laid all of them and cannot reach ``floor`` any more. Raises
    :class:`OutOfTime` when ``deadline`` (a ``time.perf_counter`` value) passes first.
    """
    jokers = position.jokers
    if essential and joker_limit is not None:
        jokers = min(jokers, joker_limit)
    search = _Search(position, essential, deadline, floor, jokers, future)
    layer: dict[int, int] = {0: 0}
    layers = [layer]
    for number in range(1, MAX_NUMBER + 1):
        layer = search.advance(number, layer)
        layers.append(layer)
        if not layer:
            return None
    found = search.best_final(layer)
    if found is None:
        return None
    best, score = found
    spare = position.jokers - (best & JOKER_MASK) if essential else 0
    return Plan(search.unwind(best, layers), spare, score)


def future_bounds(
    position: Position, deadline: float | None = None, floor: int = 0, jokers: int = 0
) -> tuple[tuple[int, ...], ...]:
    """For ``k`` more jokers to lay and each number ``n`` (``bounds[k][n]``), at most what
    the rack tiles above ``n`` can add when at most ``k`` more jokers are laid there; for
    ``k`` up to ``jokers``, and beyond it no bound.

    A search that reads the position from 13 down (essential, laying up to ``jokers``
    jokers) gives, after each number, the most the rack tiles any play places above it
    can be worth, whatever runs it leaves open below (each tile counting the number it
    really has: the search knows it reads the numbers upside down).
    Read downwards a joker that completes a run at its top completes it at its bottom,
    so every such play is one it reads. With locked sets it reads their real tiles as
    table tiles and drops the locks, which only lets it place more; where no play
    covers the numbers above ``n`` with so few jokers (a locked set needs its joker
    there) the bound is out of reach.

    The bounds serve searches whose floor is ``floor`` or more: the search from 13 down
    drops the states that could not make a play worth it even if every rack tile below
    placed. At a high floor it is quick.
    """
    jokers = min(position.jokers, jokers)
    real_floor = max(0, floor - position.rack_jokers * JOKER_WEIGHT)
    own_floor = real_floor + jokers * JOKER_WEIGHT  # it counts its jokers
    search = _Search(
        mirrored(position, jokers),
        True,
        deadline,
        own_floor,
        jokers,
        upside_down=True,
    )
    bounds = [[NO_BOUND] * (MAX_NUMBER + 1) for _ in range(position.jokers + 1)]
    for row in bounds[: jokers + 1]:
        row[MAX_NUMBER] = 0
    layer: dict[int, int] = {0: 0}
    for number in range(1, MAX_NUMBER + 1):
        layer = search.advance(number, layer)
        best = [UNREACHABLE] * (jokers + 1)  # by jokers laid
        for key, value in layer.items():
            placed = key & JOKER_MASK
            best[placed] = max(best[placed], value)
        most = UNREACHABLE
        for left in range(jokers + 1):
            most = max(most, best[left])
            bound = UNREACHABLE if most == UNREACHABLE else most >> SCALE
            bounds[left][MAX_NUMBER - number] = bound
    return tuple(tuple(row) for row in bounds)


def most_possible(position: Position) -> int:
    """The score of placing every rack tile, which no play can beat."""
    numbered = sum(
        count * (TILE_WEIGHT + number)
        for number, row in enumerate(position.optional)
        for count in row
    )
    return numbered + position.rack_jokers * JOKER_WEIGHT


def _count(first: tuple[int, ...], second: tuple[int, ...]) -> int:
    """The tiles of two rows of a grid (by colour)."""
    total = 0
    for count in first:
        total += count
    for count in second:
        total += count
    return total


class _Search:
    """One search: the numbers 1 to 13 in order, a layer of states after each."""

    def __init__(
        self,
        position: Position,
        essential: bool,
        deadline: float | None,
        floor: int,
        jokers: int,
        future: Sequence[Sequence[int]] | None = None,
        *,
        upside_down: bool = False,
    ) -> None:
        self.position = position
        self.cache = CACHE
        self.run_states = CACHE.run_states
        self.essential = essential
        self.deadline = deadline
        self.floor = floor
        self.jokers = jokers
        # in essential mode every joker counts as placed from the start
        self.joker_weight = 0 if essential else JOKER_WEIGHT
        self.meld = position.meld_threshold
        self.flags = (
            (MELD_FLAG if self.meld is not None else 0)
            | (ESSENTIAL_FLAG if essential else 0)
            | (MIRROR_FLAG if upside_down else 0)
        )
        self.choices: list[tuple[GroupChoice, ...]] = []
        # for each number passed: its kit, how it was passed and the needs it held states to
        self.kits: list[Kit] = []
        self.kinds: list[int] = []
        self.needs: list[list[int]] = []
        # numbers with no tile, no group to complete and no locked run: runs can only end
        # (plain loops over the grids read once: compiled, zip, any and sum are generic calls)
        locked = bool(position.locked_runs)
        mandatory, optional, forced = position.mandatory, position.optional, position.forced
        self.quiet = [
            not locked and not forced[number] and not _count(mandatory[number], optional[number])
            for number in range(MAX_NUMBER + 1)
        ]
        # what the rack tiles above each number could add at most, to the score and to an
        # initial meld
        self.above = [0] * (MAX_NUMBER + 1)
        self.meld_above = [0] * (MAX_NUMBER + 1)
        for number in range(MAX_NUMBER - 1, -1, -1):
            tiles = _count(optional[number + 1], ())
            points = MAX_NUMBER - number if upside_down else number + 1
            self.above[number] = self.above[number + 1] + tiles * (TILE_WEIGHT + points)
            self.meld_above[number] = self.meld_above[number + 1] + tiles * (number + 1)
        # the same with at most k more jokers to lay, by k (the jokers left over are spare)
        self.after_jokers = [self.above] * (jokers + 1)
        if future is not None:
            self.after_jokers = [
                [min(a, f) for a, f in zip(self.above, future[left], strict=True)]
                for left in range(jokers + 1)
            ]

    def _check_time(self) -> None:
        """Raise :class:`OutOfTime` past the deadline; first hand the interpreter's lock to a
        thread waiting for it, if any (compiled, the search would hold it until it ends: see
        :mod:`service.rules.solver.interpreted`)."""
        let_others_run()
        if self.deadline is not None and time.perf_counter() > self.deadline:
            raise OutOfTime

    def _states_of(self, layer: dict[int, int]) -> Iterable[tuple[int, int]]:
        """The states of ``layer``, checking the time (:meth:`_check_time`) every
        ``CHECK_EVERY`` of them."""
        if len(layer) <= CHECK_EVERY:
            return layer.items()
        return self._timed(layer)

    def _timed(self, layer: dict[int, int]) -> Iterator[tuple[int, int]]:
        for count, item in enumerate(layer.items()):
            if count % CHECK_EVERY == CHECK_EVERY - 1:
                self._check_time()
            yield item

    def advance(self, number: int, layer: dict[int, int]) -> dict[int, int]:
        """Move every state of ``layer`` past ``number``; return the new layer.

        It keeps no links to the states each came from: :meth:`unwind` works out the few
        it needs from the layers afterwards (keeping a link for every state made, most of
        them dropped or in searches that find nothing, cost a fifth of the search; noting
        only the state each came from, in a dict beside the layer, still cost more in all
        than it saved: docs/PERFORMANCE.md, "Sixteenth session").
        """
        self._check_time()
        position = self.position
        jokers = self.jokers
        kit = self.cache.kit(position, number, jokers, self.flags)
        table = kit[0]
        self.choices.append(table.choices)
        self.kits.append(kit)
        # a state must still be able to reach the floor, all its jokers placed
        need = (self.floor - position.rack_jokers * JOKER_WEIGHT - self.above[number]) << SCALE
        if jokers == 0 and self.quiet[number]:
            self.kinds.append(SKIPPED)
            self.needs.append([need])
            return self._skip(number, layer)
        options = kit[1]
        if jokers == 0 and self.meld is None:
            self.kinds.append(PLAIN)
            self.needs.append([need])
            new = self._advance_plain(layer, options, table, need)
            return undominated_plain(new, self.run_states) if len(new) > SMALL_LAYER else new
        if self.essential and self.meld is None:
            floor = self.floor - position.rack_jokers * JOKER_WEIGHT
            # held to NO_BOUND, above any value: where a future bound is out of reach the need
            # would be about 2**72, and compiled, every comparison with an integer beyond 62
            # bits takes the slow path (a tenth of this loop's time on the tail positions)
            needs = [min((floor - after[number]) << SCALE, NO_BOUND) for after in self.after_jokers]
            self.kinds.append(SPARE)
            self.needs.append(needs)
            new = self._advance_spare(layer, options, table, needs)
        else:
            self.kinds.append(GENERAL)
            self.needs.append([need])
            new = self._advance_jokers(number, layer, options, table, need)
        if len(new) <= SMALL_LAYER:
            return new
        if self.essential and self.meld is None:
            return undominated_spare(new, self.run_states, jokers)
        # with no table joker to place, a state that placed fewer jokers can do more
        spare = self.essential or not position.table_jokers
        return undominated(new, self.run_states, spare_jokers=spare, max_jokers=jokers)

    def _advance_plain(
        self,
        layer: dict[int, int],
        options: tuple[ColourOptions, ...],
        table: Choices,
        need: int,
    ) -> dict[int, int]:
        """The loop of :meth:`advance` with no joker to lay and no meld to count: as
        :meth:`_advance_spare`, the options read packed and the sums machine integers (a
        colour's key bits are its own: they add up as they combine)."""
        least: i64 = need
        # a dict, not NewStates (see _advance_spare): the plain loop's layers are mostly small,
        # where a dict costs less than NewStates' arrays (1-3% more instructions a solve on
        # bench/solver.py's positions with them)
        new: dict[object, int] = {}  # keyed by objects: a key boxed once serves both uses
        options0, options1, options2, options3 = options
        for key, value in self._states_of(layer):
            e0 = options0.entry(key & MASK_0)
            e1 = options1.entry((key >> HALF_BITS) & MASK_0)
            e2 = options2.entry((key >> 2 * HALF_BITS) & MASK_0)
            e3 = options3.entry((key >> 3 * HALF_BITS) & MASK_0)
            by0, by1, by2, by3 = e0[3], e1[3], e2[3], e3[3]
            top0, top1, top2, top3 = e0[2], e1[2], e2[2], e3[2]
            score: i64 = value & NO_STRENGTH
            for _index, r0, r1, r2, r3, _ in table.allowed(e0[1] | e1[1] | e2[1] | e3[1]):
                t1: i64 = top1[r1]
                t3: i64 = top3[r3]
                t23: i64 = top2[r2] + t3
                if score + top0[r0] + t1 + t23 < least:
                    continue
                first, second, third, fourth = by0[r0], by1[r1], by2[r2], by3[r3]
                size0, size1, size2, size3 = len(first), len(second), len(third), len(fourth)
                i0: i64 = 0
                while i0 < size0:
                    ka = first[i0]
                    sa = score + first[i0 + 1]
                    i0 += 2
                    if sa + t1 + t23 < least:
                        continue
                    i1: i64 = 0
                    while i1 < size1:
                        kab = ka + second[i1]
                        sab = sa + second[i1 + 1]
                        i1 += 2
                        if sab + t23 < least:
                            continue
                        i2: i64 = 0
                        while i2 < size2:
                            kabc = kab + third[i2]
                            sabc = sab + third[i2 + 1]
                            i2 += 2
                            if sabc + t3 < least:
                                continue
                            i3: i64 = 0
                            while i3 < size3:
                                new_score = sabc + fourth[i3 + 1]
                                if new_score < least:
                                    i3 += 2
                                    continue
                                new_key: object = kabc + fourth[i3]
                                i3 += 2
                                held: i64 = new.setdefault(new_key, new_score)
                                if new_score > held:
                                    new[new_key] = new_score
        return cast("dict[int, int]", new)

    def _advance_spare(
        self,
        layer: dict[int, int],
        options: tuple[ColourOptions, ...],
        table: Choices,
        needs: Sequence[int],
    ) -> dict[int, int]:
        """The loop of :meth:`advance` in essential mode with jokers to lay, and no meld.

        Jokers weigh nothing until the end here, and the jokers placed are the key's lowest bits. A
        state with ``k`` jokers still to lay must reach ``needs[k]``, which only grows as
        ``k`` falls: each partial sum is held to the need of the jokers its options have
        laid so far, since the options still to add can only lay more. With ``left``
        jokers to lay after the group choice, ``rooms[left][j]`` is the need once the
        options have laid ``j`` of them; an option's key bits count its jokers, so the
        keys add up.
        """
        jokers: i64 = self.jokers
        # the new states in packed arrays, boxed into a dict once the loop ends: a dict
        # boxed every key and value it was offered, half of them already there
        new = NewStates()
        options0, options1, options2, options3 = options
        rooms: list[vec[i64]] = [
            vec[i64]([needs[left - laid] for laid in range(left + 1)]) for left in range(jokers + 1)
        ]
        # the options read packed (options._packed: key bits, then value, for each), every
        # sum a machine integer (i64: a score, a need or a top, or four tops at UNREACHABLE,
        # -2**62 at most, fits)
        for key, value in self._states_of(layer):
            placed_jokers: i64 = key & JOKER_MASK
            score: i64 = value & NO_STRENGTH
            e0 = options0.entry(key & MASK_0)
            e1 = options1.entry((key >> HALF_BITS) & MASK_0)
            e2 = options2.entry((key >> 2 * HALF_BITS) & MASK_0)
            e3 = options3.entry((key >> 3 * HALF_BITS) & MASK_0)
            by0, by1, by2, by3 = e0[3], e1[3], e2[3], e3[3]
            top0, top1, top2, top3 = e0[2], e1[2], e2[2], e3[2]
            left_over = jokers - placed_jokers
            allowed = table.allowed(e0[1] | e1[1] | e2[1] | e3[1] | left_over << LEFT_SHIFT)
            for _index, r0, r1, r2, r3, group_jokers in allowed:
                t1: i64 = top1[r1]
                t3: i64 = top3[r3]
                t23: i64 = top2[r2] + t3
                left: i64 = left_over - group_jokers
                room = rooms[left]
                if score + top0[r0] + t1 + t23 < room[0]:  # the least any option can need
                    continue
                first, second, third, fourth = by0[r0], by1[r1], by2[r2], by3[r3]
                size0, size1, size2, size3 = len(first), len(second), len(third), len(fourth)
                base: i64 = placed_jokers + group_jokers
                i0: i64 = 0
                while i0 < size0:
                    ka = first[i0]
                    ja = ka & JOKER_MASK  # an option's key bits count its jokers
                    if ja > left:
                        break
                    sa = score + first[i0 + 1]
                    i0 += 2
                    if sa + t1 + t23 < room[ja]:
                        continue
                    ka += base
                    i1: i64 = 0
                    while i1 < size1:
                        kb = second[i1]
                        jb = ja + (kb & JOKER_MASK)
                        if jb > left:
                            break
                        sab = sa + second[i1 + 1]
                        i1 += 2
                        if sab + t23 < room[jb]:
                            continue
                        kab = ka + kb
                        i2: i64 = 0
                        while i2 < size2:
                            kc = third[i2]
                            jc = jb + (kc & JOKER_MASK)
                            if jc > left:
                                break
                            sabc = sab + third[i2 + 1]
                            i2 += 2
                            if sabc + t3 < room[jc]:
                                continue
                            kabc = kab + kc
                            i3: i64 = 0
                            while i3 < size3:
                                kd = fourth[i3]
                                jd = jc + (kd & JOKER_MASK)
                                if jd > left:
                                    break
                                new_score = sabc + fourth[i3 + 1]
                                i3 += 2
                                if new_score < room[jd]:
                                    continue
                                new.offer(kabc + kd, new_score)
        return new.as_dict()

    def _advance_jokers(
        self,
        number: int,
        layer: dict[int, int],
        options: tuple[ColourOptions, ...],
        table: Choices,
        need: int,
    ) -> dict[int, int]:
        """The loop of :meth:`advance` in general: jokers to lay, or a meld to count."""
        position = self.position
        jokers = self.jokers
        meld = self.meld
        joker_meld = number if position.jokers_count_in_meld else 0
        # a meld must still be able to reach its threshold: every rack tile above this
        # number placed, and every joker left standing for a 13
        meld_reach = self.meld_above[number]
        joker_reach = MAX_NUMBER if position.jokers_count_in_meld else 0
        joker_weight = self.joker_weight << SCALE
        new: dict[int, int] = {}
        options0, options1, options2, options3 = options
        for key, score in self._states_of(layer):
            placed_jokers = key & JOKER_MASK
            meld_value = (key >> MELD_SHIFT) & MELD_MASK
            score &= NO_STRENGTH
            e0 = options0.entry(key & MASK_0)
            e1 = options1.entry((key >> HALF_BITS) & MASK_0)
            e2 = options2.entry((key >> 2 * HALF_BITS) & MASK_0)
            e3 = options3.entry((key >> 3 * HALF_BITS) & MASK_0)
            by0, by1, by2, by3 = e0[0], e1[0], e2[0], e3[0]
            top0, top1, top2, top3 = e0[2], e1[2], e2[2], e3[2]
            net = score - placed_jokers * joker_weight  # what the real tiles placed gained
            left_over = jokers - placed_jokers
            allowed = table.allowed(e0[1] | e1[1] | e2[1] | e3[1] | left_over << LEFT_SHIFT)
            for _index, r0, r1, r2, r3, group_jokers in allowed:
                if net + top0[r0] + top1[r1] + top2[r2] + top3[r3] < need:
                    continue
                left = left_over - group_jokers
                second, third, fourth = by1[r1], by2[r2], by3[r3]
                base = score + group_jokers * joker_weight
                base_jokers = placed_jokers + group_jokers
                base_key = base_jokers
                base_meld = 0
                if meld is not None:
                    base_meld = meld_value + (r0 + r1 + r2 + r3) * number
                    base_meld += group_jokers * joker_meld
                for a in by0[r0]:
                    ja = a[2]
                    if ja > left:
                        break
                    for b in second:
                        jb = ja + b[2]
                        if jb > left:
                            break
                        ab = a[0] + b[0]
                        for c in third:
                            jc = jb + c[2]
                            if jc > left:
                                break
                            abc = ab + c[0]
                            for d in fourth:
                                jd = jc + d[2]
                                if jd > left:
                                    break
                                new_score = base + a[1] + b[1] + c[1] + d[1]
                                placed = base_jokers + jd
                                if new_score - placed * joker_weight < need:
                                    continue
                                new_key = base_key + abc + d[0]
                                if meld is not None:
                                    total = base_meld + a[3] + b[3] + c[3] + d[3]
                                    if total + meld_reach + (jokers - placed) * joker_reach < meld:
                                        continue
                                    new_key |= min(total, meld) << MELD_SHIFT
                                if new_score > new.get(new_key, -1):
                                    new[new_key] = new_score
        return new

    def _skip(self, number: int, layer: dict[int, int]) -> dict[int, int]:
        """Pass a number with no tiles and no jokers to lay: every open run ends here."""
        new: dict[int, int] = {}
        for key, value in self._closing(number, layer):
            new_key = key & ~ALL_STATES
            value &= NO_STRENGTH  # no run is open
            if new.get(new_key, -1) < value:
                new[new_key] = value
        return new

    def _closing(self, number: int, layer: dict[int, int]) -> Iterator[tuple[int, int]]:
        """The states of ``layer`` that :meth:`_skip` moves on, in order."""
        need = (self.floor - self.position.rack_jokers * JOKER_WEIGHT - self.above[number]) << SCALE
        meld, meld_reach = self.meld, self.meld_above[number]  # no joker is left to lay here
        closable = self.run_states.closable
        for key, value in layer.items():
            if value < need:
                continue
            if not all_closable(key, closable):
                continue
            if meld is not None and ((key >> MELD_SHIFT) & MELD_MASK) + meld_reach < meld:
                continue
            yield key, value

    def best_final(self, layer: dict[int, int]) -> tuple[int, int] | None:
        """The key and score of the best state that closes every run and places enough."""
        best_key, best_score = None, 0
        table_jokers = self.position.table_jokers
        closable = self.run_states.closable
        for key, value in layer.items():
            score = value >> SCALE
            placed_jokers = key & JOKER_MASK
            if self.essential:
                score += self.position.jokers * JOKER_WEIGHT
            elif placed_jokers < table_jokers:
                continue
            if self.meld is not None and (key >> MELD_SHIFT) & MELD_MASK < self.meld:
                continue
            if not all_closable(key, closable):
                continue
            net = score - table_jokers * JOKER_WEIGHT
            if net > best_score and net >= self.floor:
                best_key, best_score = key, net
        return None if best_key is None else (best_key, best_score)

    def unwind(self, key: int, states: list[dict[int, int]]) -> tuple[Layer, ...]:
        """Follow the links back from ``key`` through the layers of states after each number
        (``states[0]`` the one before 1) and return the play's layers in order."""
        layers: list[Layer] = []
        for number in range(MAX_NUMBER, 0, -1):
            link = self.link(number, states[number - 1], key, states[number][key])
            previous, index, options = link[0], link[1], link[2:]
            reals, group_jokers = self.choices[number - 1][index]
            steps = tuple(self.cache.steps.steps[option[4]] for option in options)
            layers.append(Layer(number, reals, group_jokers, steps))
            key = previous
        layers.reverse()
        return tuple(layers)

    def link(self, number: int, layer: dict[int, int], target: int, value: int) -> Link:
        """How :meth:`advance` reached state ``target`` with ``value`` at ``number`` from
        ``layer``: the first state, group choice and options, in the order it tried them,
        that gave that value (what it would have kept had it kept links). Only the options
        that leave each colour's runs as ``target`` has them are tried again."""
        kind = self.kinds[number - 1]
        if kind == SKIPPED:
            ending = self.cache.ending
            for key, found in self._closing(number, layer):
                if key & ~ALL_STATES == target and found & NO_STRENGTH == value:
                    ids = colour_ids(key)
                    ends = [ending(state_id) for state_id in ids]
                    return (key, 0, ends[0], ends[1], ends[2], ends[3])
            raise AssertionError("no state leads to the one unwound")
        table, options = self.kits[number - 1]
        needs = self.needs[number - 1]
        need = needs[0]
        jokers = self.jokers
        meld = self.meld
        position = self.position
        joker_meld = number if position.jokers_count_in_meld else 0
        meld_reach = self.meld_above[number]
        joker_reach = MAX_NUMBER if position.jokers_count_in_meld else 0
        joker_weight = self.joker_weight << SCALE if kind == GENERAL else 0
        options0, options1, options2, options3 = options
        bits0, bits1 = target & MASK_0, target & MASK_1
        bits2, bits3 = target & MASK_2, target & MASK_3
        target_jokers = target & JOKER_MASK
        # what the options must gain at least, their jokers' weight taken off (see _tops)
        gain = value - target_jokers * joker_weight
        for key, score in layer.items():
            placed_jokers = key & JOKER_MASK
            if placed_jokers > target_jokers:
                continue
            meld_value = (key >> MELD_SHIFT) & MELD_MASK
            score &= NO_STRENGTH
            e0 = options0.entry(key & MASK_0)
            e1 = options1.entry((key >> HALF_BITS) & MASK_0)
            e2 = options2.entry((key >> 2 * HALF_BITS) & MASK_0)
            e3 = options3.entry((key >> 3 * HALF_BITS) & MASK_0)
            top0, top1, top2, top3 = e0[2], e1[2], e2[2], e3[2]
            net = score - placed_jokers * joker_weight
            left_over = jokers - placed_jokers
            allowed = table.allowed(e0[1] | e1[1] | e2[1] | e3[1] | left_over << LEFT_SHIFT)
            for index, r0, r1, r2, r3, group_jokers in allowed:
                if net + top0[r0] + top1[r1] + top2[r2] + top3[r3] < gain:
                    continue
                left = left_over - group_jokers
                first = [a for a in e0[0][r0] if a[0] & MASK_0 == bits0]
                second = [b for b in e1[0][r1] if b[0] & MASK_1 == bits1]
                third = [c for c in e2[0][r2] if c[0] & MASK_2 == bits2]
                fourth = [d for d in e3[0][r3] if d[0] & MASK_3 == bits3]
                base_jokers = placed_jokers + group_jokers
                base = score + group_jokers * joker_weight
                base_meld = 0
                if meld is not None:
                    base_meld = meld_value + (r0 + r1 + r2 + r3) * number
                    base_meld += group_jokers * joker_meld
                for a in first:
                    for b in second:
                        for c in third:
                            for d in fourth:
                                laid = a[2] + b[2] + c[2] + d[2]
                                if laid > left:
                                    continue
                                new_score = base + a[1] + b[1] + c[1] + d[1]
                                new_key = base_jokers + a[0] + b[0] + c[0] + d[0]
                                if kind == PLAIN:
                                    if new_score < need:
                                        continue
                                elif kind == SPARE:
                                    if new_score < needs[left - laid]:
                                        continue
                                else:
                                    placed = base_jokers + laid
                                    if new_score - placed * joker_weight < need:
                                        continue
                                    if meld is not None:
                                        total = base_meld + a[3] + b[3] + c[3] + d[3]
                                        reach = meld_reach + (jokers - placed) * joker_reach
                                        if total + reach < meld:
                                            continue
                                        new_key |= min(total, meld) << MELD_SHIFT
                                if new_key == target and new_score == value:
                                    return (key, index, a, b, c, d)
        raise AssertionError("no state leads to the one unwound")
