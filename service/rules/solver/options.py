"""What each colour can do at a number, worked out once and shared by every search.

At each number a search decides how many tiles of each colour it places (every table
tile, any rack tiles), how many go into groups and how many jokers join them, then
how each colour's runs take the rest. What a colour can do from a given run state
(its *options*, :class:`ColourOptions`) depends only on that colour's tiles, locks
and joker budget there, so one :class:`OptionCache` keeps them for the whole process,
with the group choices (:class:`Choices`) and the run states
(:class:`service.rules.solver.packing.RunStates`). The cache is bounded: when one of its
tables holds too many, that table drops its older half (the newer half is what the
searches of the moment use, and working options out again is most of what a search
costs the first time: emptying the whole cache once made a search that takes 8 ms
warm take 189), and the searches under way keep what they hold.

An option names its :class:`Step` by a number (:class:`Steps`), so that options, the
lists that hold them and a search's links are tuples of plain integers, which Python's
garbage collector stops tracking: a full collection then walks far fewer objects (on
the tail positions of bench/solver_tail.py one took up to 300 ms, in the middle of a
search, when options held their steps).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Final, TypeAlias, TypeVar, cast

from librt.vecs import append, vec
from mypy_extensions import i64

from service.rules.solver.groups import ForcedGroup, GroupChoice, group_choices
from service.rules.solver.packing import (
    JOKER_WEIGHT,
    SCALE,
    TILE_WEIGHT,
    UNREACHABLE,
    RunStates,
    colour_bits,
    colour_id,
)
from service.rules.solver.position import Position
from service.rules.solver.runs import Fate, RunMove, run_moves
from service.rules.tiles import MAX_NUMBER

__all__ = [
    "CACHE",
    "ESSENTIAL_FLAG",
    "LEFT_SHIFT",
    "MELD_FLAG",
    "MIRROR_FLAG",
    "Choice",
    "Choices",
    "ColourOptions",
    "Entry",
    "Kit",
    "Option",
    "OptionCache",
    "Step",
    "Steps",
]

K = TypeVar("K")
V = TypeVar("V")

COLOURS: Final = 4
MELD_FLAG: Final = 1
ESSENTIAL_FLAG: Final = 2
MIRROR_FLAG: Final = 4  # the numbers read from 13 down: number n stands for 14 - n
PREFIX_FROM: Final = MAX_NUMBER - 1  # in essential mode, jokers go before a run only from 12 on
# For the group choices a state allows, each colour says, for each count of real tiles
# it may send to groups (at most 3, with the XP box), the fewest jokers its runs then
# need: 3 bits a count, NONE where no option exists, 12 bits a colour.
NEED_BITS: Final = 3
NONE: Final = (1 << NEED_BITS) - 1
COLOUR_NEEDS: Final = 4 * NEED_BITS
ALL_NONE: Final = (1 << COLOUR_NEEDS) - 1
LEFT_SHIFT: Final = COLOUR_NEEDS * COLOURS  # above it, the jokers the state has left


# A plain class, not a frozen dataclass (read-only by use; Steps numbers it by its fields): see
# RunMove (service.rules.solver.runs)
class Step:
    """How one colour takes the tiles of one number.

    ``used`` real tiles in all, ``slot_reals`` of them into locked-run slots; the
    run move spends the rest with ``continuing_jokers`` jokers.
    """

    def __init__(self, used: int, slot_reals: int, continuing_jokers: int, move: RunMove) -> None:
        self.used = used
        self.slot_reals = slot_reals
        self.continuing_jokers = continuing_jokers
        self.move = move


class Steps:
    """The steps met so far, each with its number; shared by every search and thread.

    Steps are few (the ways one colour can take one number's tiles), so the table is
    never dropped: numbers stay valid for every search under way.
    """

    def __init__(self) -> None:
        # by the step's fields as a plain tuple: hashing and comparing a tuple of integers,
        # strings and tuples stays in C, where a dataclass's __hash__ and __eq__ are Python
        # functions even compiled (a tenth of filling the option cache for a new position)
        self.ids: dict[tuple[object, ...], int] = {}
        self.steps: list[Step] = []
        self._lock = threading.Lock()

    def id_of(self, step: Step) -> int:
        """The number of ``step``, interning it first if new."""
        move = step.move
        key = (
            step.used,
            step.slot_reals,
            step.continuing_jokers,
            move.state,
            move.fates,
            move.codes,
            move.new_prefixes,
            move.locked_prefixes,
            move.prefix_value,
        )
        found = self.ids.get(key)
        if found is None:
            with self._lock:
                found = self.ids.get(key)
                if found is None:
                    found = len(self.steps)
                    self.steps.append(step)  # published before its number
                    self.ids[key] = found
        return found


# An option for one colour: (key bits, value gained, jokers used, meld value added, step
# number); the key bits are the colour's new run state and the jokers used, each in its
# place in a state's key, so that a state's and its options' bits add up to the new key;
# the value is the score gained, scaled, plus the strength of the colour's new run state.
# Typed as a tuple of any length: compiled (README "The solver, compiled"), a fixed-length tuple
# would be unpacked into five machine integers at every loop step and boxed into a new
# tuple for each link; this way a search keeps a reference to the option itself
Option = tuple[int, ...]
# The same before it is placed at a colour and a number: (run state id, rack tiles
# placed, jokers used, meld value added, step number)
Template = tuple[int, int, int, int, int]
# A colour's options from one run state, by the real tiles it sends to groups; the
# fewest jokers each count needs (see NEED_BITS), shifted to the colour's place; for each
# count the most an option gains, its jokers' weight taken off (see _tops); and the same
# options packed (see _packed). Packed is a string: compiled, vec[i64] would be built at run
# time as vec[int], which vec refuses.
Packed: TypeAlias = "tuple[vec[i64], ...]"
Entry = tuple[tuple[tuple[Option, ...], ...], int, tuple[int, ...], Packed]
# A group choice, numbered: (index, real tiles of each colour, jokers)
Choice = tuple[int, int, int, int, int, int]


class OptionCache:
    """Every search's options, group choices and run states, bounded.

    ``options_limit`` bounds the templates (a colour's options from one run state, before
    they are placed at a colour and number), ``kits_limit`` the numbers seen (each with
    its choices and four colours' options, which go with them), ``entries_limit`` the
    colours' options filled in (most of the memory; the kits and colours go by halves when
    either is past its limit), ``choices_limit`` the group choices; past its limit a table
    drops its older half. Run states and steps
    are never dropped (see :class:`RunStates`).
    """

    def __init__(
        self,
        *,
        options_limit: int = 20_000,
        kits_limit: int = 20_000,
        entries_limit: int = 40_000,
        choices_limit: int = 4_000,
    ) -> None:
        self.options_limit = options_limit
        self.kits_limit = kits_limit
        self.entries_limit = entries_limit
        self.entry_count = 0  # the colours' options filled in (ColourOptions.entry), about
        self.choices_limit = choices_limit
        self.run_states = RunStates()
        self.steps = Steps()
        self.templates: dict[tuple[int, ...], tuple[tuple[Template, ...], ...]] = {}
        self.colours: dict[tuple[int, ...], ColourOptions] = {}
        self.kits: dict[tuple[object, ...], Kit] = {}
        self.choices: dict[tuple[object, ...], Choices] = {}
        self.endings: dict[int, Option] = {}
        # the kits of the last position searched, by number, jokers and flags: the searches
        # of one solve share its position, and this key is quicker to make than the kits'
        # (replaced whole, so a thread reads a position with its own kits)
        self.recent: tuple[object, dict[int, Kit]] = (None, {})

    def clear(self) -> None:
        """Drop the options and choices (not the run states); searches keep what they hold."""
        self.recent = (None, {})
        self.kits = {}
        self.colours = {}
        self.templates = {}
        self.choices = {}
        self.entry_count = 0

    def kit(self, position: Position, number: int, jokers: int, flags: int) -> Kit:
        """The group choices and each colour's options at ``number``, shared by every search
        that sees the same tiles, locks and joker budget there."""
        recent = self.recent
        if recent[0] is position:
            known = recent[1]
        else:
            known = {}
            self.recent = (position, known)
        short = number | jokers << 4 | flags << 12  # number < 16, jokers < 256
        held = known.get(short)
        if held is not None:
            return held
        found = known[short] = self._kit(position, number, jokers, flags)
        return found

    def _kit(self, position: Position, number: int, jokers: int, flags: int) -> Kit:
        mandatory, optional = position.mandatory[number], position.optional[number]
        slots = position.slots[number]
        starts, ends = position.locked_starts[number], position.locked_ends[number]
        forced = position.forced[number]
        joker_meld = number if position.jokers_count_in_meld else 0
        key = (number, jokers, flags, joker_meld, mandatory, optional, slots, starts, ends, forced)
        found = self.kits.get(key)
        if found is None:
            if len(self.kits) > self.kits_limit or self.entry_count > self.entries_limit:
                self.kits = _newer_half(self.kits)
                self.colours = _newer_half(self.colours)  # what the kits hold
                self.entry_count = sum(len(kept.entries) for kept in self.colours.values())
            if len(self.templates) > self.options_limit:
                self.templates = _newer_half(self.templates)
            available = tuple(m + o for m, o in zip(mandatory, optional, strict=True))
            table = self._group_choices(available, jokers, forced, bool(flags & ESSENTIAL_FLAG))
            options = tuple(
                self._colour_options(
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
            found = self.kits[key] = (table, options)
        return found

    def template(
        self, context: tuple[int, ...], jokers: int, flags: int, state_id: int
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
        found = self.templates.get(key)
        if found is not None:
            return found
        run_states = self.run_states
        state = run_states.states[state_id]
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
                                new_id = run_states.id_of(move.state)
                                slot = (new_id, joker_count, value)
                                held = best.get(slot)
                                if held is None or held[1] < extra:
                                    step = self.steps.id_of(
                                        Step(used, slot_reals, continuing, move)
                                    )
                                    best[slot] = (new_id, extra, joker_count, value, step)
            lists.append(_strongest(best.values(), run_states.dominated, spare_jokers=essential))
        found = self.templates[key] = tuple(lists)
        return found

    def _colour_options(
        self, colour: int, context: tuple[int, ...], jokers: int, flags: int
    ) -> ColourOptions:
        key = (colour, jokers, flags, *context)
        found = self.colours.get(key)
        if found is None:
            found = self.colours[key] = ColourOptions(self, colour, context, jokers, flags)
        return found

    def _group_choices(
        self,
        available: tuple[int, ...],
        jokers: int,
        forced: tuple[ForcedGroup, ...],
        essential: bool,
    ) -> Choices:
        key = (available, jokers, forced, essential)
        found = self.choices.get(key)
        if found is None:
            if len(self.choices) > self.choices_limit:
                self.choices = _newer_half(self.choices)
            choices = group_choices(available, jokers, forced, essential=essential)
            found = self.choices[key] = Choices(choices)
        return found

    def ending(self, state_id: int) -> Option:
        """The option that ends every run of state ``state_id`` and lays nothing."""
        found = self.endings.get(state_id)
        if found is None:
            length = len(self.run_states.states[state_id])
            move = RunMove((), (Fate.END,) * length, (0,) * length, (), (), 0)
            step = self.steps.id_of(Step(0, 0, 0, move))
            found = self.endings[state_id] = (0, 0, 0, 0, step)
        return found


def _newer_half(table: dict[K, V]) -> dict[K, V]:
    """A new dict of the newer half of ``table``'s entries (a dict keeps the order they
    came in). The entries are copied out first in one step, which no other thread can
    interrupt; one that another thread adds meanwhile is lost, as from any cache."""
    entries = list(table.items())
    return dict(entries[len(entries) // 2 :])


def _strongest(
    found: Iterable[Template], dominated: list[set[int]], *, spare_jokers: bool
) -> tuple[Template, ...]:
    """Drop the options another beats, and sort the rest by the jokers they lay.

    An option beats another when its run state is at least as strong, it places and
    adds to the meld at least as much, and it lays as many jokers (no more, when
    jokers left over are spare): whatever the other leads to, it leads to as well.
    """
    options = list(found)
    kept = []
    for index, option in enumerate(options):
        weak_id = option[0]
        for other_index, other in enumerate(options):
            if (
                other_index != index  # by place: compiled, the tuples are copied, not shared
                and other[1] >= option[1]
                and other[3] >= option[3]
                and (other[2] <= option[2] if spare_jokers else other[2] == option[2])
                and weak_id in dominated[other[0]]
            ):
                break
        else:
            kept.append(option)
    kept.sort(key=_jokers_of)
    return tuple(kept)


def _jokers_of(option: Template) -> int:
    return option[2]


class ColourOptions:
    """The options of one colour at one number, by the key bits of its run state.

    Filled on demand (:meth:`entry`) and shared by every search of the process whose
    number looks the same for that colour: the same tiles, locks and joker budget.
    """

    def __init__(
        self, cache: OptionCache, colour: int, context: tuple[int, ...], jokers: int, flags: int
    ) -> None:
        self.entries: dict[int, Entry] = {}
        self.cache = cache
        self.colour = colour
        self.context = context
        self.jokers = jokers
        self.flags = flags

    def entry(self, bits: int) -> Entry:
        """The options from the run state whose key bits are ``bits``, brought down to the
        first colour's place (``(key >> HALF_BITS * colour) & MASK_0``: found by the low bits,
        see :mod:`service.rules.solver.packing`, a colour's own bits would all share a few
        slots of the dict)."""
        found = self.entries.get(bits)
        if found is None:
            found = self._fill(bits)
        return found

    def _fill(self, bits: int) -> Entry:
        colour = self.colour
        number = self.context[0]
        weight = TILE_WEIGHT + (MAX_NUMBER + 1 - number if self.flags & MIRROR_FLAG else number)
        joker_weight = 0 if self.flags & ESSENTIAL_FLAG else JOKER_WEIGHT
        strengths = self.cache.run_states.strengths
        lists = tuple(
            tuple(
                (
                    colour_bits(new_id, colour) + jokers,
                    ((extra * weight + jokers * joker_weight) << SCALE) + strengths[new_id],
                    jokers,
                    value,
                    step,
                )
                for new_id, extra, jokers, value, step in options
            )
            for options in self.cache.template(
                self.context, self.jokers, self.flags & ~MIRROR_FLAG, colour_id(bits, 0)
            )
        )
        needs = ALL_NONE
        for reals, found in enumerate(lists):
            if found:  # sorted by jokers: the first needs the fewest
                fewest = min(found[0][2], NONE - 1)
                needs ^= (NONE ^ fewest) << NEED_BITS * reals
        tops = _tops(lists, joker_weight)
        entry = (lists, needs << COLOUR_NEEDS * colour, tops, _packed(lists))
        self.entries[bits] = entry
        self.cache.entry_count += 1
        return entry


def _tops(lists: tuple[tuple[Option, ...], ...], joker_weight: int) -> tuple[int, ...]:
    """For each list of options, the most any gains once its jokers' weight is taken off.

    The searches add these up to see whether a state can still reach the floor, before
    they try the options one by one.
    """
    scaled = joker_weight << SCALE
    tops: list[int] = []
    for options in lists:  # plain loops: compiled, max() over a generator is generic
        top = UNREACHABLE
        for option in options:
            gain = option[1] - option[2] * scaled
            if gain > top:
                top = gain
        tops.append(top)
    return tuple(tops)


def _packed(lists: tuple[tuple[Option, ...], ...]) -> Packed:
    """Each list of options as one packed array of machine integers: each option's key bits
    then its value, in the list's order.

    The spare loop (``_Search._advance_spare``) reads these: compiled, an item of a ``vec[i64]``
    is a machine integer read in place, where an option's fields, read from its tuple, are
    each a reference to count and a boxed integer to unpack.
    """
    packed: list[vec[i64]] = []
    for options in lists:
        found = vec[i64](capacity=2 * len(options))
        for option in options:
            found = append(found, option[0])
            found = append(found, option[1])
        packed.append(found)
    return tuple(packed)


class Choices:
    """The group choices at one number; and, filled on demand, those a state allows
    (:meth:`allowed`).

    A state's key here holds, for each colour and count of real tiles sent to groups,
    the fewest jokers the colour's runs then need (see ``NEED_BITS``), and above
    ``LEFT_SHIFT`` the jokers it has left. A choice is allowed when every colour has
    options for it and the jokers all need, with the group's, are at hand: then at
    least one way to place it exists.
    """

    def __init__(self, choices: tuple[GroupChoice, ...]) -> None:
        self.allowed_by: dict[int, tuple[Choice, ...]] = {}
        self.choices = choices
        self.numbered: list[Choice] = [
            (index, reals[0], reals[1], reals[2], reals[3], jokers)
            for index, (reals, jokers) in enumerate(choices)
        ]
        # the choices as a tree, by the real tiles of colour 0, then 1, 2 and 3, in the
        # order they come (the jokers of a leaf's choices rise): a whole branch whose
        # colours already need more jokers than a state has is skipped at once
        tree: dict[int, dict[int, dict[int, dict[int, list[Choice]]]]] = {}
        for choice in self.numbered:
            branch = tree.setdefault(choice[1], {}).setdefault(choice[2], {})
            branch.setdefault(choice[3], {}).setdefault(choice[4], []).append(choice)
        self.tree = tuple(
            (
                NEED_BITS * r0,
                tuple(
                    (
                        COLOUR_NEEDS + NEED_BITS * r1,
                        tuple(
                            (
                                2 * COLOUR_NEEDS + NEED_BITS * r2,
                                tuple(
                                    (3 * COLOUR_NEEDS + NEED_BITS * r3, _leaf(leaf))
                                    for r3, leaf in by3.items()
                                ),
                            )
                            for r2, by3 in by2.items()
                        ),
                    )
                    for r1, by2 in by1.items()
                ),
            )
            for r0, by1 in tree.items()
        )

    def allowed(self, key: int) -> tuple[Choice, ...]:
        """The choices a state allows, ``key`` telling what its colours need."""
        found = self.allowed_by.get(key)
        if found is None:
            found = self._fill(key)
        return found

    def _fill(self, key: int) -> tuple[Choice, ...]:
        left = key >> LEFT_SHIFT
        # a colour with no option for its count needs NONE jokers, more than any state
        # has left (at most every joker of the box): its branch is skipped like the others
        assert left < NONE, "more jokers than NEED_BITS can tell apart"
        found: list[object] = []  # the choices as they are held: see _leaf
        for place0, by1 in self.tree:
            need0 = key >> place0 & NONE
            if need0 > left:
                continue
            for place1, by2 in by1:
                need1 = need0 + (key >> place1 & NONE)
                if need1 > left:
                    continue
                for place2, by3 in by2:
                    need2 = need1 + (key >> place2 & NONE)
                    if need2 > left:
                        continue
                    for place3, leaf in by3:
                        room = left - need2 - (key >> place3 & NONE)
                        for jokers, choice in leaf:
                            if jokers > room:
                                break
                            found.append(choice)
        allowed = cast("tuple[Choice, ...]", tuple(found))
        self.allowed_by[key] = allowed
        return allowed


def _leaf(choices: list[Choice]) -> tuple[tuple[int, object], ...]:
    """A leaf of :class:`Choices`' tree: each choice's jokers, and the choice held as an object.

    Compiled, a :data:`Choice` read from a tuple typed as holding choices is unpacked into six
    machine integers, and appending it to a list boxes them into a new tuple: for the choices
    a state allows, a new tuple each (a tenth of a new position's first solve, with the
    collections of the young tuples), where an object is appended as it is.
    """
    return tuple((choice[5], cast(object, choice)) for choice in choices)


# The group choices at one number and each colour's options there
Kit = tuple[Choices, tuple[ColourOptions, ...]]
CACHE: Final = OptionCache()  # the one cache of the process
