"""The search: dynamic programming over the numbers 1 to 13.

After number ``v`` a *state* holds, for each colour, the codes of its open runs
(:mod:`service.rules.solver.runs`), how many jokers are placed so far and, before
the initial meld, the meld value so far (capped at the threshold). At each number
the search decides how many tiles of each colour it places (every table tile,
any rack tiles), how many go into groups and how many jokers join them, then how
each colour's runs take the rest. The score of a state is what the placed rack
tiles are worth: ``TILE_WEIGHT`` each plus its penalty value (a joker 30), so
more tiles always beat more points. Each state keeps its best score and where it
came from; a state that another beats in every colour is dropped. The best
closable state after 13 gives the answer.

In essential mode (see :mod:`service.rules.solver.runs`) jokers are laid only
where a set needs them, and every joker left over counts as placed: the caller
adds them to runs and groups of three, and falls back to the full mode when they
do not fit.

A state is packed into one integer: 12 bits per colour (an interned run state),
then the jokers placed, then the meld value. Its value is one integer too: the
score shifted left by ``SCALE``, plus the strength of its runs, so that sorting by
value puts a state before every state it beats.

What a colour can do at a number from a given run state (its *options*) is worked
out once per process and shared by every search that meets the same tiles there:
see :class:`_ColourOptions`. A search may also be given, from
:func:`future_bounds`, the most the numbers above each one can add once every
joker is laid; with a floor to reach, it then drops the states that cannot.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from operator import itemgetter

from service.rules.solver.groups import ForcedGroup, GroupChoice, group_choices
from service.rules.solver.position import Position, mirrored
from service.rules.solver.runs import (
    Fate,
    RunMove,
    RunState,
    is_closable,
    run_moves,
    strength,
    weaker_states,
)
from service.rules.tiles import JOKER_PENALTY, MAX_NUMBER

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

TILE_WEIGHT = 1 << 16
JOKER_WEIGHT = TILE_WEIGHT + JOKER_PENALTY
COLOURS = 4
STATE_BITS = 12
STATE_MASK = (1 << STATE_BITS) - 1
JOKER_SHIFT = STATE_BITS * COLOURS
JOKER_MASK = 0xFF
MELD_SHIFT = JOKER_SHIFT + 8
MELD_MASK = 0xFFFF
ALL_STATES = (1 << JOKER_SHIFT) - 1
MASK_0 = STATE_MASK
MASK_1 = STATE_MASK << STATE_BITS
MASK_2 = STATE_MASK << 2 * STATE_BITS
MASK_3 = STATE_MASK << 3 * STATE_BITS
# For the group choices a state allows, each colour says, for each count of real tiles
# it may send to groups (at most 3, with the XP box), the fewest jokers its runs then
# need: 3 bits a count, NONE where no option exists, 12 bits a colour.
NEED_BITS = 3
NONE = (1 << NEED_BITS) - 1
COLOUR_NEEDS = 4 * NEED_BITS
ALL_NONE = (1 << COLOUR_NEEDS) - 1
LEFT_SHIFT = COLOUR_NEEDS * COLOURS  # above it, the jokers the state has left
CHECK_EVERY = 64
# a state's value holds its score, then the strength of its runs (below 1 << SCALE)
SCALE = 12
STRENGTH_MASK = (1 << SCALE) - 1
NO_STRENGTH = ~STRENGTH_MASK
SCORE_ORDER = 1 << 24  # sort keys for _undominated: score, then jokers, then strength
JOKER_ORDER = 1 << SCALE
MELD_ORDER = MELD_MASK + 1
UNREACHABLE = -(1 << 60)  # below any score
SMALL_LAYER = 16  # a layer this small costs more to filter than it saves
PREFIX_FROM = MAX_NUMBER - 1  # in essential mode, jokers go before a run only from 12 on

_interning = threading.RLock()  # run states are interned once for every thread
_state_ids: dict[RunState, int] = {(): 0}
_states: list[RunState] = [()]
_strengths: list[int] = [0]
_weaker: list[tuple[int, ...]] = [(0,)]  # by state id: the ids of the states it dominates
# the options of each colour at each number, shared by every search of the process;
# when they cover too many run states (or numbers), they are dropped and start afresh
OPTIONS_CACHE_SIZE = 20_000
_colour_cache: dict[tuple[int, ...], _ColourOptions] = {}
_templates: dict[tuple[int, ...], tuple[tuple[Template, ...], ...]] = {}
_options_count = 0
CHOICES_CACHE_SIZE = 4_000
KITS_CACHE_SIZE = 20_000
_kits: dict[tuple[object, ...], tuple[_Choices, tuple[_ColourOptions, ...]]] = {}
_choices_cache: dict[tuple[object, ...], _Choices] = {}
MELD_FLAG = 1
ESSENTIAL_FLAG = 2


class OutOfTime(Exception):
    """Raised inside the search when its time budget runs out."""


@dataclass(frozen=True, slots=True)
class Step:
    """How one colour takes the tiles of one number.

    ``used`` real tiles in all, ``slot_reals`` of them into locked-run slots; the
    run move spends the rest with ``continuing_jokers`` jokers.
    """

    used: int
    slot_reals: int
    continuing_jokers: int
    move: RunMove


@dataclass(frozen=True, slots=True)
class Layer:
    """What the best play does at one number."""

    number: int
    group_reals: tuple[int, ...]
    group_jokers: int
    steps: tuple[Step, ...]


@dataclass(frozen=True, slots=True)
class Plan:
    """The best play, number by number, the spare jokers still to add, and its score."""

    layers: tuple[Layer, ...]
    spare_jokers: int
    score: int


# An option for one colour: (key bits, value gained, jokers used, meld value added, step);
# the value is the score gained, scaled, plus the strength of the colour's new run state
Option = tuple[int, int, int, int, Step]
# The same before it is placed at a colour and a number: (run state id, rack tiles
# placed, jokers used, meld value added, step)
Template = tuple[int, int, int, int, Step]
# A colour's options from one run state, by the real tiles it sends to groups; the
# fewest jokers each count needs (see NEED_BITS), shifted to the colour's place; and
# for each count the most an option gains, its jokers' weight taken off (see _tops)
Entry = tuple[tuple[tuple[Option, ...], ...], int, tuple[int, ...]]
# A group choice, numbered: (index, real tiles of each colour, jokers)
Choice = tuple[int, int, int, int, int, int]
# How a state was reached: the state before, the group choice, then each colour's option.
Link = tuple[int, int, Option, Option, Option, Option]


def best_plan(
    position: Position,
    *,
    essential: bool,
    deadline: float | None = None,
    floor: int = 1,
    joker_limit: int | None = None,
    future: Sequence[int] | None = None,
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
    parents: list[dict[int, Link]] = []
    for number in range(1, MAX_NUMBER + 1):
        layer, links = search.advance(number, layer)
        parents.append(links)
        if not layer:
            return None
    found = search.best_final(layer)
    if found is None:
        return None
    best, score = found
    spare = position.jokers - ((best >> JOKER_SHIFT) & JOKER_MASK) if essential else 0
    return Plan(search.unwind(best, parents), spare, score)


def future_bounds(position: Position, deadline: float | None = None) -> tuple[int, ...] | None:
    """For each number ``n``, at most what the rack tiles above ``n`` can add when no
    more joker is laid there; None for a position with locked sets.

    A search without jokers that reads the position from 13 down gives, after each
    number, the most rack tiles any play can place above it, whatever runs it leaves
    open below; each counts 13 points, the most it can be worth.
    """
    if position.locked_runs or position.locked_groups:
        return None
    search = _Search(mirrored(position), True, deadline, 0, 0)
    bounds = [0] * (MAX_NUMBER + 1)
    layer: dict[int, int] = {0: 0}
    for number in range(1, MAX_NUMBER + 1):
        layer, _ = search.advance(number, layer)
        if not layer:  # pragma: no cover - the table as it is always remains
            return None
        tiles = (max(layer.values()) >> SCALE) // TILE_WEIGHT
        bounds[MAX_NUMBER - number] = tiles * (TILE_WEIGHT + MAX_NUMBER)
    return tuple(bounds)


def most_possible(position: Position) -> int:
    """The score of placing every rack tile, which no play can beat."""
    numbered = sum(
        count * (TILE_WEIGHT + number)
        for number, row in enumerate(position.optional)
        for count in row
    )
    return numbered + position.rack_jokers * JOKER_WEIGHT


def _state_id(state: RunState) -> int:
    found = _state_ids.get(state)
    if found is None:
        with _interning:
            found = _intern(state)
    return found


def _intern(state: RunState) -> int:
    """Intern ``state`` and every state it dominates; hold ``_interning``.

    A state's id is published last, once the states it dominates have theirs: a
    search that meets the id can rely on them (see :func:`_undominated`).
    """
    found = _state_ids.get(state)
    if found is None:
        if len(_states) > STATE_MASK:
            raise OverflowError("too many distinct run states to pack")
        found = len(_states)
        _states.append(state)
        _strengths.append(strength(state))
        _weaker.append(())
        weak_ids = [found if weak == state else _intern(weak) for weak in weaker_states(state)]
        _weaker[found] = tuple(sorted(weak_ids))
        _state_ids[state] = found
    return found


@cache
def _ending(state: RunState) -> Option:
    """The option that ends every run of ``state`` and lays nothing."""
    move = RunMove((), (Fate.END,) * len(state), (0,) * len(state), (), (), 0)
    return (0, 0, 0, 0, Step(0, 0, 0, move))


def _colour_ids(key: int) -> tuple[int, int, int, int]:
    return (
        key & STATE_MASK,
        (key >> STATE_BITS) & STATE_MASK,
        (key >> 2 * STATE_BITS) & STATE_MASK,
        (key >> 3 * STATE_BITS) & STATE_MASK,
    )


def _undominated(layer: dict[int, int], *, spare_jokers: bool, max_jokers: int) -> dict[int, int]:
    """Keep the states no other state beats: as strong in every colour, scoring as much,
    with a meld value as high.

    Unless jokers left over are free to place or not (``spare_jokers``: essential mode,
    or no table joker to place, where a state that used fewer jokers can do more),
    states are compared only with states that placed as many jokers. Stronger states
    come first, so one pass against the states kept so far suffices: for each colour a
    bit mask per run state marks the kept states at least that strong, one per joker
    count the kept states that used no more, one per meld value those that reached as
    much.
    """
    if len(layer) <= SMALL_LAYER:
        return layer
    weaker = _weaker
    melds = sorted({(key >> MELD_SHIFT) & MELD_MASK for key in layer})
    rank = {meld: index for index, meld in enumerate(melds)}
    # best score first, then fewest jokers, then strongest, then the highest meld value:
    # a state's betters come first
    order = sorted(layer.items(), key=_meld_order)
    kept: dict[int, int] = {}
    size = len(_states)
    top_jokers = max_jokers + 1 if spare_jokers else 1
    fronts: dict[int, tuple[list[int], list[int], list[int], list[int], list[int], list[int]]] = {}
    bits: dict[int, int] = {}
    for key, value in order:
        id0 = key & STATE_MASK
        id1 = (key >> STATE_BITS) & STATE_MASK
        id2 = (key >> 2 * STATE_BITS) & STATE_MASK
        id3 = (key >> 3 * STATE_BITS) & STATE_MASK
        placed = (key >> JOKER_SHIFT) & JOKER_MASK
        jokers = placed if spare_jokers else 0
        group = 0 if spare_jokers else placed
        meld = rank[(key >> MELD_SHIFT) & MELD_MASK]
        front = fronts.get(group)
        if front is None:
            front = fronts[group] = (
                [0] * size,
                [0] * size,
                [0] * size,
                [0] * size,
                [0] * top_jokers,
                [0] * len(melds),
            )
            bits[group] = 1
        elif (
            front[0][id0]
            & front[1][id1]
            & front[2][id2]
            & front[3][id3]
            & front[4][jokers]
            & front[5][meld]
        ):
            continue
        bit = bits[group]
        bits[group] = bit << 1
        masks = front[0]
        for weak in weaker[id0]:
            masks[weak] |= bit
        masks = front[1]
        for weak in weaker[id1]:
            masks[weak] |= bit
        masks = front[2]
        for weak in weaker[id2]:
            masks[weak] |= bit
        masks = front[3]
        for weak in weaker[id3]:
            masks[weak] |= bit
        masks = front[4]
        for more in range(jokers, top_jokers):
            masks[more] |= bit
        masks = front[5]
        for less in range(meld + 1):
            masks[less] |= bit
        kept[key] = value
    return kept


def _undominated_spare(layer: dict[int, int], max_jokers: int) -> dict[int, int]:
    """:func:`_undominated` in essential mode with no meld: runs and jokers placed differ."""
    weaker = _weaker
    size = len(_states)
    masks0, masks1, masks2, masks3 = [0] * size, [0] * size, [0] * size, [0] * size
    # by jokers placed: the kept states that placed no more
    by_jokers = [0] * (max_jokers + 1)
    kept: dict[int, int] = {}
    bit = 1
    for key, value in sorted(layer.items(), key=_joker_order):
        id0 = key & STATE_MASK
        id1 = (key >> STATE_BITS) & STATE_MASK
        id2 = (key >> 2 * STATE_BITS) & STATE_MASK
        id3 = (key >> 3 * STATE_BITS) & STATE_MASK
        jokers = key >> JOKER_SHIFT
        if masks0[id0] & masks1[id1] & masks2[id2] & masks3[id3] & by_jokers[jokers]:
            continue
        for weak in weaker[id0]:
            masks0[weak] |= bit
        for weak in weaker[id1]:
            masks1[weak] |= bit
        for weak in weaker[id2]:
            masks2[weak] |= bit
        for weak in weaker[id3]:
            masks3[weak] |= bit
        for more in range(jokers, max_jokers + 1):
            by_jokers[more] |= bit
        bit <<= 1
        kept[key] = value
    return kept


def _undominated_plain(layer: dict[int, int]) -> dict[int, int]:
    """:func:`_undominated` for states that differ only in their runs (no joker, no meld)."""
    weaker = _weaker
    size = len(_states)
    masks0, masks1, masks2, masks3 = [0] * size, [0] * size, [0] * size, [0] * size
    kept: dict[int, int] = {}
    bit = 1
    for key, value in sorted(layer.items(), key=_value_of, reverse=True):
        id0 = key & STATE_MASK
        id1 = (key >> STATE_BITS) & STATE_MASK
        id2 = (key >> 2 * STATE_BITS) & STATE_MASK
        id3 = (key >> 3 * STATE_BITS) & STATE_MASK
        if masks0[id0] & masks1[id1] & masks2[id2] & masks3[id3]:
            continue
        for weak in weaker[id0]:
            masks0[weak] |= bit
        for weak in weaker[id1]:
            masks1[weak] |= bit
        for weak in weaker[id2]:
            masks2[weak] |= bit
        for weak in weaker[id3]:
            masks3[weak] |= bit
        bit <<= 1
        kept[key] = value
    return kept


_value_of = itemgetter(1)


def _meld_order(item: tuple[int, int]) -> int:
    key, value = item
    return (
        ((key >> JOKER_SHIFT) & JOKER_MASK) * JOKER_ORDER
        - (value >> SCALE) * SCORE_ORDER
        - (value & STRENGTH_MASK)
    ) * MELD_ORDER - ((key >> MELD_SHIFT) & MELD_MASK)


def _joker_order(item: tuple[int, int]) -> int:
    key, value = item
    return (
        ((key >> JOKER_SHIFT) & JOKER_MASK) * JOKER_ORDER
        - (value >> SCALE) * SCORE_ORDER
        - (value & STRENGTH_MASK)
    )


def _strongest(found: Iterable[Template], *, spare_jokers: bool) -> tuple[Template, ...]:
    """Drop the options another beats, and sort the rest by the jokers they lay.

    An option beats another when its run state is at least as strong, it places and
    adds to the meld at least as much, and it lays as many jokers (no more, when
    jokers left over are spare): whatever the other leads to, it leads to as well.
    """
    options = list(found)
    kept = []
    for option in options:
        weak_id = option[0]
        for other in options:
            if (
                other is not option
                and other[1] >= option[1]
                and other[3] >= option[3]
                and (other[2] <= option[2] if spare_jokers else other[2] == option[2])
                and weak_id in _weaker[other[0]]
            ):
                break
        else:
            kept.append(option)
    kept.sort(key=_jokers_of)
    return tuple(kept)


def _jokers_of(option: Template) -> int:
    return option[2]


class _ColourOptions(dict[int, Entry]):
    """The options of one colour at one number, by the key bits of its run state.

    Filled on demand and shared by every search of the process whose number looks
    the same for that colour: the same tiles, locks and joker budget.
    """

    def __init__(self, colour: int, context: tuple[int, ...], jokers: int, flags: int) -> None:
        super().__init__()
        self.colour = colour
        self.context = context
        self.jokers = jokers
        self.flags = flags

    def __missing__(self, bits: int) -> Entry:
        colour = self.colour
        shift = STATE_BITS * colour
        number = self.context[0]
        weight = TILE_WEIGHT + number
        joker_weight = 0 if self.flags & ESSENTIAL_FLAG else JOKER_WEIGHT
        strengths = _strengths
        lists = tuple(
            tuple(
                (
                    new_id << shift,
                    ((extra * weight + jokers * joker_weight) << SCALE) + strengths[new_id],
                    jokers,
                    value,
                    step,
                )
                for new_id, extra, jokers, value, step in options
            )
            for options in _template(self.context, self.jokers, self.flags, bits >> shift)
        )
        needs = ALL_NONE
        for reals, found in enumerate(lists):
            if found:  # sorted by jokers: the first needs the fewest
                fewest = min(found[0][2], NONE - 1)
                needs ^= (NONE ^ fewest) << NEED_BITS * reals
        entry = self[bits] = (lists, needs << COLOUR_NEEDS * colour, _tops(lists, joker_weight))
        return entry


def _tops(lists: tuple[tuple[Option, ...], ...], joker_weight: int) -> tuple[int, ...]:
    """For each list of options, the most any gains once its jokers' weight is taken off.

    The searches add these up to see whether a state can still reach the floor, before
    they try the options one by one.
    """
    scaled = joker_weight << SCALE
    return tuple(
        max((option[1] - option[2] * scaled for option in options), default=UNREACHABLE)
        for options in lists
    )


def _template(
    context: tuple[int, ...], jokers: int, flags: int, state_id: int
) -> tuple[tuple[Template, ...], ...]:
    """A colour's options from run state ``state_id``, by the real tiles it sends to groups.

    They do not depend on the colour, nor on the number unless prefix jokers or the
    meld value see it, so one template serves many colours and numbers.
    """
    number, must, may, slots, starts, ends, joker_meld = context
    meld = bool(flags & MELD_FLAG)
    essential = bool(flags & ESSENTIAL_FLAG)
    prefix_allowed = number > 1 and (not essential or number >= PREFIX_FROM)
    sees_number = meld or (prefix_allowed and jokers > 0)
    key = (
        state_id,
        must,
        may,
        slots,
        starts,
        ends,
        jokers,
        flags,
        number if sees_number else -1,
        joker_meld if meld else 0,
    )
    found = _templates.get(key)
    if found is not None:
        return found
    global _options_count
    _options_count += 1
    state = _states[state_id]
    lists: list[tuple[Template, ...]] = []
    for group_reals in range(must + may + 1):
        best: dict[tuple[int, int, int], Template] = {}
        for used in range(max(must, group_reals), must + may + 1):
            spare = used - group_reals
            for slot_reals in range(min(slots, spare) + 1):
                slot_jokers = slots - slot_reals
                run_reals = spare - slot_reals
                for continuing in range(min(jokers - slot_jokers, len(state)) + 1):
                    most_prefix = jokers - slot_jokers - continuing if prefix_allowed else 0
                    for prefix in range(most_prefix + 1):
                        moves = run_moves(
                            state,
                            run_reals,
                            continuing,
                            starts,
                            prefix,
                            ends,
                            number if prefix else 1,
                            meld=meld,
                            essential=essential,
                        )
                        joker_count = slot_jokers + continuing + prefix
                        extra = used - must
                        for move in moves:
                            value = 0
                            if meld:
                                value = spare * number + continuing * joker_meld
                                value += move.prefix_value if joker_meld else 0
                            new_id = _state_id(move.state)
                            slot = (new_id, joker_count, value)
                            held = best.get(slot)
                            if held is None or held[1] < extra:
                                step = Step(used, slot_reals, continuing, move)
                                best[slot] = (new_id, extra, joker_count, value, step)
        lists.append(_strongest(best.values(), spare_jokers=essential))
    found = _templates[key] = tuple(lists)
    return found


class _Choices(dict[int, list[Choice]]):
    """The group choices at one number; and, filled on demand, those a state allows.

    A state's key here holds, for each colour and count of real tiles sent to groups,
    the fewest jokers the colour's runs then need (see ``NEED_BITS``), and above
    ``LEFT_SHIFT`` the jokers it has left. A choice is allowed when every colour has
    options for it and the jokers all need, with the group's, are at hand: then at
    least one way to place it exists.
    """

    def __init__(self, choices: tuple[GroupChoice, ...]) -> None:
        super().__init__()
        self.choices = choices
        self.numbered: list[Choice] = [
            (index, reals[0], reals[1], reals[2], reals[3], jokers)
            for index, (reals, jokers) in enumerate(choices)
        ]
        # where each colour's need for the choice sits in a key
        self.places = [
            (
                choice,
                NEED_BITS * choice[1],
                COLOUR_NEEDS + NEED_BITS * choice[2],
                2 * COLOUR_NEEDS + NEED_BITS * choice[3],
                3 * COLOUR_NEEDS + NEED_BITS * choice[4],
            )
            for choice in self.numbered
        ]

    def __missing__(self, key: int) -> list[Choice]:
        left = key >> LEFT_SHIFT
        found: list[Choice] = []
        for choice, place0, place1, place2, place3 in self.places:
            need0 = key >> place0 & NONE
            need1 = key >> place1 & NONE
            need2 = key >> place2 & NONE
            need3 = key >> place3 & NONE
            if NONE in (need0, need1, need2, need3):
                continue
            if choice[5] + need0 + need1 + need2 + need3 <= left:
                found.append(choice)
        self[key] = found
        return found


def _colour_options(
    colour: int, context: tuple[int, ...], jokers: int, flags: int
) -> _ColourOptions:
    key = (colour, jokers, flags, *context)
    found = _colour_cache.get(key)
    if found is None:
        found = _colour_cache[key] = _ColourOptions(colour, context, jokers, flags)
    return found


def _group_choices(
    available: tuple[int, ...], jokers: int, forced: tuple[ForcedGroup, ...], essential: bool
) -> _Choices:
    key = (available, jokers, forced, essential)
    found = _choices_cache.get(key)
    if found is None:
        if len(_choices_cache) > CHOICES_CACHE_SIZE:
            _choices_cache.clear()
        choices = group_choices(available, jokers, forced, essential=essential)
        found = _choices_cache[key] = _Choices(choices)
    return found


def _kit(
    position: Position, number: int, jokers: int, flags: int
) -> tuple[_Choices, tuple[_ColourOptions, ...]]:
    """The group choices and each colour's options at ``number``, shared by every search
    that sees the same tiles, locks and joker budget there."""
    mandatory, optional = position.mandatory[number], position.optional[number]
    slots = position.slots[number]
    starts, ends = position.locked_starts[number], position.locked_ends[number]
    forced = position.forced[number]
    joker_meld = number if position.jokers_count_in_meld else 0
    key = (number, jokers, flags, joker_meld, mandatory, optional, slots, starts, ends, forced)
    found = _kits.get(key)
    if found is None:
        global _options_count
        if _options_count > OPTIONS_CACHE_SIZE or len(_kits) > KITS_CACHE_SIZE:
            # start afresh: the searches under way keep what they hold
            _kits.clear()
            _colour_cache.clear()
            _templates.clear()
            _options_count = 0
        available = tuple(m + o for m, o in zip(mandatory, optional, strict=True))
        table = _group_choices(available, jokers, forced, bool(flags & ESSENTIAL_FLAG))
        options = tuple(
            _colour_options(
                colour,
                (
                    number,
                    mandatory[colour],
                    optional[colour],
                    slots[colour],
                    starts[colour],
                    ends[colour],
                    joker_meld,
                ),
                jokers,
                flags,
            )
            for colour in range(COLOURS)
        )
        found = _kits[key] = (table, options)
    return found


class _Search:
    def __init__(
        self,
        position: Position,
        essential: bool,
        deadline: float | None,
        floor: int,
        jokers: int,
        future: Sequence[int] | None = None,
    ) -> None:
        self.position = position
        self.essential = essential
        self.deadline = deadline
        self.floor = floor
        self.jokers = jokers
        # in essential mode every joker counts as placed from the start
        self.joker_weight = 0 if essential else JOKER_WEIGHT
        self.meld = position.meld_threshold
        self.flags = (MELD_FLAG if self.meld is not None else 0) | (
            ESSENTIAL_FLAG if essential else 0
        )
        self.choices: list[tuple[GroupChoice, ...]] = []
        # numbers with no tile, no group to complete and no locked run: runs can only end
        locked = bool(position.locked_runs)
        self.quiet = [
            not locked and not forced and not any(mandatory) and not any(optional)
            for mandatory, optional, forced in zip(
                position.mandatory, position.optional, position.forced, strict=True
            )
        ]
        # what the rack tiles above each number could add at most, to the score and to an
        # initial meld
        self.above = [0] * (MAX_NUMBER + 1)
        self.meld_above = [0] * (MAX_NUMBER + 1)
        for number in range(MAX_NUMBER - 1, -1, -1):
            tiles = sum(position.optional[number + 1])
            self.above[number] = self.above[number + 1] + tiles * (TILE_WEIGHT + number + 1)
            self.meld_above[number] = self.meld_above[number + 1] + tiles * (number + 1)
        # the same once every joker is laid (the jokers left over are spare)
        self.after_jokers = self.above
        if future is not None:
            self.after_jokers = [min(a, f) for a, f in zip(self.above, future, strict=True)]

    def _check_time(self) -> None:
        if self.deadline is not None and time.perf_counter() > self.deadline:
            raise OutOfTime

    def _states_of(self, layer: dict[int, int]) -> Iterable[tuple[int, int]]:
        """The states of ``layer``, checking the time every ``CHECK_EVERY`` of them."""
        if self.deadline is None or len(layer) <= CHECK_EVERY:
            return layer.items()
        return self._timed(layer)

    def _timed(self, layer: dict[int, int]) -> Iterator[tuple[int, int]]:
        for count, item in enumerate(layer.items()):
            if count % CHECK_EVERY == CHECK_EVERY - 1:
                self._check_time()
            yield item

    def advance(self, number: int, layer: dict[int, int]) -> tuple[dict[int, int], dict[int, Link]]:
        """Move every state of ``layer`` past ``number``; return the new layer and its links."""
        self._check_time()
        position = self.position
        jokers = self.jokers
        kit = _kit(position, number, jokers, self.flags)
        table = kit[0]
        self.choices.append(table.choices)
        if jokers == 0 and self.quiet[number]:
            return self._skip(number, layer)
        options = kit[1]
        # a state must still be able to reach the floor, all its jokers placed
        need = (self.floor - position.rack_jokers * JOKER_WEIGHT - self.above[number]) << SCALE
        if jokers == 0 and self.meld is None:
            new, links = self._advance_plain(layer, options, table, need)
            return (_undominated_plain(new) if len(new) > SMALL_LAYER else new), links
        if self.essential and self.meld is None:
            floor = self.floor - position.rack_jokers * JOKER_WEIGHT
            need_laid = (floor - self.after_jokers[number]) << SCALE
            new, links = self._advance_spare(layer, options, table, need, need_laid)
        else:
            new, links = self._advance_jokers(number, layer, options, table, need)
        if len(new) <= SMALL_LAYER:
            return new, links
        if self.essential and self.meld is None:
            return _undominated_spare(new, jokers), links
        # with no table joker to place, a state that placed fewer jokers can do more
        spare = self.essential or not position.table_jokers
        return _undominated(new, spare_jokers=spare, max_jokers=jokers), links

    def _advance_plain(
        self,
        layer: dict[int, int],
        options: tuple[_ColourOptions, ...],
        table: _Choices,
        need: int,
    ) -> tuple[dict[int, int], dict[int, Link]]:
        """The loop of :meth:`advance` with no joker to lay and no meld to count."""
        new: dict[int, int] = {}
        links: dict[int, Link] = {}
        options0, options1, options2, options3 = options
        get = new.get
        for key, score in self._states_of(layer):
            e0 = options0[key & MASK_0]
            e1 = options1[key & MASK_1]
            e2 = options2[key & MASK_2]
            e3 = options3[key & MASK_3]
            by0, by1, by2, by3 = e0[0], e1[0], e2[0], e3[0]
            top0, top1, top2, top3 = e0[2], e1[2], e2[2], e3[2]
            score &= NO_STRENGTH
            for index, r0, r1, r2, r3, _ in table[e0[1] | e1[1] | e2[1] | e3[1]]:
                t1, t2, t3 = top1[r1], top2[r2], top3[r3]
                t23 = t2 + t3
                if score + top0[r0] + t1 + t23 < need:
                    continue
                second, third, fourth = by1[r1], by2[r2], by3[r3]
                for a in by0[r0]:
                    sa = score + a[1]
                    if sa + t1 + t23 < need:
                        continue
                    for b in second:
                        sab = sa + b[1]
                        if sab + t23 < need:
                            continue
                        ab = a[0] | b[0]
                        for c in third:
                            sabc = sab + c[1]
                            if sabc + t3 < need:
                                continue
                            abc = ab | c[0]
                            for d in fourth:
                                new_score = sabc + d[1]
                                if new_score < need:
                                    continue
                                new_key = abc | d[0]
                                if new_score > get(new_key, -1):
                                    new[new_key] = new_score
                                    links[new_key] = (key, index, a, b, c, d)
        return new, links

    def _advance_spare(
        self,
        layer: dict[int, int],
        options: tuple[_ColourOptions, ...],
        table: _Choices,
        need: int,
        need_laid: int,
    ) -> tuple[dict[int, int], dict[int, Link]]:
        """The loop of :meth:`advance` in essential mode with jokers to lay, and no meld.

        Jokers weigh nothing until the end here, and the jokers placed top the key. A
        state that has laid every joker must reach ``need_laid``, the others ``need``.
        """
        jokers = self.jokers
        new: dict[int, int] = {}
        links: dict[int, Link] = {}
        options0, options1, options2, options3 = options
        get = new.get
        for key, score in self._states_of(layer):
            placed_jokers = key >> JOKER_SHIFT
            score &= NO_STRENGTH
            e0 = options0[key & MASK_0]
            e1 = options1[key & MASK_1]
            e2 = options2[key & MASK_2]
            e3 = options3[key & MASK_3]
            by0, by1, by2, by3 = e0[0], e1[0], e2[0], e3[0]
            top0, top1, top2, top3 = e0[2], e1[2], e2[2], e3[2]
            left_over = jokers - placed_jokers
            allowed = table[e0[1] | e1[1] | e2[1] | e3[1] | left_over << LEFT_SHIFT]
            for index, r0, r1, r2, r3, group_jokers in allowed:
                t1, t2, t3 = top1[r1], top2[r2], top3[r3]
                t23 = t2 + t3
                if score + top0[r0] + t1 + t23 < need:
                    continue
                left = left_over - group_jokers
                second, third, fourth = by1[r1], by2[r2], by3[r3]
                base = placed_jokers + group_jokers
                for a in by0[r0]:
                    ja = a[2]
                    if ja > left:
                        break
                    sa = score + a[1]
                    if sa + t1 + t23 < need:
                        continue
                    for b in second:
                        jb = ja + b[2]
                        if jb > left:
                            break
                        sab = sa + b[1]
                        if sab + t23 < need:
                            continue
                        ab = a[0] | b[0]
                        for c in third:
                            jc = jb + c[2]
                            if jc > left:
                                break
                            sabc = sab + c[1]
                            if sabc + t3 < need:
                                continue
                            abc = ab | c[0]
                            for d in fourth:
                                jd = jc + d[2]
                                if jd > left:
                                    break
                                new_score = sabc + d[1]
                                if new_score < (need_laid if jd == left else need):
                                    continue
                                new_key = abc | d[0] | (base + jd) << JOKER_SHIFT
                                if new_score > get(new_key, -1):
                                    new[new_key] = new_score
                                    links[new_key] = (key, index, a, b, c, d)
        return new, links

    def _advance_jokers(
        self,
        number: int,
        layer: dict[int, int],
        options: tuple[_ColourOptions, ...],
        table: _Choices,
        need: int,
    ) -> tuple[dict[int, int], dict[int, Link]]:
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
        links: dict[int, Link] = {}
        options0, options1, options2, options3 = options
        get = new.get
        for key, score in self._states_of(layer):
            placed_jokers = (key >> JOKER_SHIFT) & JOKER_MASK
            meld_value = (key >> MELD_SHIFT) & MELD_MASK
            score &= NO_STRENGTH
            e0 = options0[key & MASK_0]
            e1 = options1[key & MASK_1]
            e2 = options2[key & MASK_2]
            e3 = options3[key & MASK_3]
            by0, by1, by2, by3 = e0[0], e1[0], e2[0], e3[0]
            top0, top1, top2, top3 = e0[2], e1[2], e2[2], e3[2]
            net = score - placed_jokers * joker_weight  # what the real tiles placed gained
            left_over = jokers - placed_jokers
            allowed = table[e0[1] | e1[1] | e2[1] | e3[1] | left_over << LEFT_SHIFT]
            for index, r0, r1, r2, r3, group_jokers in allowed:
                if net + top0[r0] + top1[r1] + top2[r2] + top3[r3] < need:
                    continue
                left = left_over - group_jokers
                second, third, fourth = by1[r1], by2[r2], by3[r3]
                base = score + group_jokers * joker_weight
                base_jokers = placed_jokers + group_jokers
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
                        ab = a[0] | b[0]
                        for c in third:
                            jc = jb + c[2]
                            if jc > left:
                                break
                            abc = ab | c[0]
                            for d in fourth:
                                jd = jc + d[2]
                                if jd > left:
                                    break
                                new_score = base + a[1] + b[1] + c[1] + d[1]
                                placed = base_jokers + jd
                                if new_score - placed * joker_weight < need:
                                    continue
                                new_key = abc | d[0] | placed << JOKER_SHIFT
                                if meld is not None:
                                    total = base_meld + a[3] + b[3] + c[3] + d[3]
                                    if total + meld_reach + (jokers - placed) * joker_reach < meld:
                                        continue
                                    new_key |= min(total, meld) << MELD_SHIFT
                                if new_score > get(new_key, -1):
                                    new[new_key] = new_score
                                    links[new_key] = (key, index, a, b, c, d)
        return new, links

    def _skip(self, number: int, layer: dict[int, int]) -> tuple[dict[int, int], dict[int, Link]]:
        """Pass a number with no tiles and no jokers to lay: every open run ends here."""
        new: dict[int, int] = {}
        links: dict[int, Link] = {}
        need = (self.floor - self.position.rack_jokers * JOKER_WEIGHT - self.above[number]) << SCALE
        meld, meld_reach = self.meld, self.meld_above[number]  # no joker is left to lay here
        for key, value in layer.items():
            states = [_states[state_id] for state_id in _colour_ids(key)]
            if value < need or not all(is_closable(state) for state in states):
                continue
            if meld is not None and ((key >> MELD_SHIFT) & MELD_MASK) + meld_reach < meld:
                continue
            new_key = key & ~ALL_STATES
            value &= NO_STRENGTH  # no run is open
            if new.get(new_key, -1) < value:
                new[new_key] = value
                ends = [_ending(state) for state in states]
                links[new_key] = (key, 0, ends[0], ends[1], ends[2], ends[3])
        return new, links

    def best_final(self, layer: dict[int, int]) -> tuple[int, int] | None:
        """The key and score of the best state that closes every run and places enough."""
        best_key, best_score = None, 0
        table_jokers = self.position.table_jokers
        for key, value in layer.items():
            score = value >> SCALE
            placed_jokers = (key >> JOKER_SHIFT) & JOKER_MASK
            if self.essential:
                score += self.position.jokers * JOKER_WEIGHT
            elif placed_jokers < table_jokers:
                continue
            if self.meld is not None and (key >> MELD_SHIFT) & MELD_MASK < self.meld:
                continue
            if not all(is_closable(_states[state_id]) for state_id in _colour_ids(key)):
                continue
            net = score - table_jokers * JOKER_WEIGHT
            if net > best_score and net >= self.floor:
                best_key, best_score = key, net
        return None if best_key is None else (best_key, best_score)

    def unwind(self, key: int, parents: list[dict[int, Link]]) -> tuple[Layer, ...]:
        """Follow the links back from ``key`` and return the layers in order."""
        layers: list[Layer] = []
        for number in range(MAX_NUMBER, 0, -1):
            link = parents[number - 1][key]
            previous, index, options = link[0], link[1], link[2:]
            reals, group_jokers = self.choices[number - 1][index]
            steps = tuple(option[4] for option in options)
            layers.append(Layer(number, reals, group_jokers, steps))
            key = previous
        layers.reverse()
        return tuple(layers)
