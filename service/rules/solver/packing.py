"""How a search state is packed into integers, and which states beat others.

After number ``v`` a *state* holds, for each colour, the codes of its open runs
(:mod:`service.rules.solver.runs`), how many jokers are placed so far and, before
the initial meld, the meld value so far (capped at the threshold). It is packed into
one integer: the jokers placed in the lowest bits, then 12 bits per colour (an
interned run state, see :class:`RunStates`), then the meld value. A colour's 12 bits
are split in two halves (:func:`colour_bits`): the low halves of the four colours
take the 24 bits above the jokers, the high halves the next 24. A layer is a dict
keyed by these integers, and a dict finds an integer's slot by its low bits (an
integer is its own hash): there every colour's most varied bits must be, or most
states of a layer share a few slots (with each colour's 12 bits in one piece, the low
bits held only the first colour's state, and a search's dict lookup cost about 175
instructions); and a state whose run states have ids below 64 (most of them: ids go
in the order states are met) is an integer below 2**30, one digit of CPython's, boxed,
hashed and read back on the quick paths. Its value is one integer too: the score
shifted left by ``SCALE``, plus the strength of its runs, so that sorting by value
puts a state before every state it beats. The score is what the placed rack tiles
are worth: ``TILE_WEIGHT`` each plus its penalty value (a joker 30), so more tiles
always beat more points.

:func:`undominated` and its two quicker variants drop the states of a layer that
another state beats in every colour, scoring as much.
"""

from __future__ import annotations

import threading
from operator import itemgetter
from typing import Final, cast

from librt.vecs import append, vec
from mypy_extensions import i64

from service.rules.solver.interpreted import let_others_run
from service.rules.solver.runs import RunState, is_closable, strength, weaker_states
from service.rules.tiles import JOKER_PENALTY

__all__ = [
    "ALL_STATES",
    "HALF_BITS",
    "JOKER_BITS",
    "JOKER_MASK",
    "JOKER_WEIGHT",
    "MASK_0",
    "MASK_1",
    "MASK_2",
    "MASK_3",
    "MELD_MASK",
    "MELD_SHIFT",
    "NO_STRENGTH",
    "SCALE",
    "SMALL_LAYER",
    "STATE_BITS",
    "STATE_MASK",
    "TILE_WEIGHT",
    "UNREACHABLE",
    "NewStates",
    "RunStates",
    "all_closable",
    "colour_bits",
    "colour_id",
    "colour_ids",
    "undominated",
    "undominated_plain",
    "undominated_spare",
]

# Above what every rack tile of the largest box is worth in points (3 copies of 4 colours
# of 1-13 and 4 jokers: 1,212), so more tiles always beat more points; and small enough
# that a search's values (shifted left by SCALE) stay under 2**30 for racks of up to
# about 60 tiles, where Python's integers take their quickest path.
TILE_WEIGHT: Final = 1 << 12
JOKER_WEIGHT: Final = TILE_WEIGHT + JOKER_PENALTY
COLOURS: Final = 4
STATE_BITS: Final = 12
STATE_MASK: Final = (1 << STATE_BITS) - 1
# the jokers placed take the key's lowest bits (JOKER_MASK: the solver handles at most 6,
# see service.rules.solver.options.NEED_BITS), the run states the next 48, the meld value the rest
JOKER_BITS: Final = 3
JOKER_MASK: Final = (1 << JOKER_BITS) - 1
STATES_SHIFT: Final = JOKER_BITS
MELD_SHIFT: Final = STATES_SHIFT + STATE_BITS * COLOURS
MELD_MASK: Final = 0xFFFF
ALL_STATES: Final = (1 << MELD_SHIFT) - (1 << STATES_SHIFT)
# a colour's state id in two halves: the low half at LOW_<colour>, the high half HIGH_SHIFT
# above it (see colour_bits); >> HIGH_<colour> brings the high half down to bits 6-11
HALF_BITS: Final = STATE_BITS // 2
HALF_MASK: Final = (1 << HALF_BITS) - 1
HIGH_SHIFT: Final = HALF_BITS * COLOURS
HIGH_HALF: Final = HALF_MASK << HALF_BITS
LOW_0: Final = STATES_SHIFT
LOW_1: Final = STATES_SHIFT + HALF_BITS
LOW_2: Final = STATES_SHIFT + 2 * HALF_BITS
LOW_3: Final = STATES_SHIFT + 3 * HALF_BITS
HIGH_0: Final = LOW_0 + HIGH_SHIFT - HALF_BITS
HIGH_1: Final = LOW_1 + HIGH_SHIFT - HALF_BITS
HIGH_2: Final = LOW_2 + HIGH_SHIFT - HALF_BITS
HIGH_3: Final = LOW_3 + HIGH_SHIFT - HALF_BITS
MASK_0: Final = (HALF_MASK | HALF_MASK << HIGH_SHIFT) << STATES_SHIFT
MASK_1: Final = MASK_0 << HALF_BITS
MASK_2: Final = MASK_0 << 2 * HALF_BITS
MASK_3: Final = MASK_0 << 3 * HALF_BITS
# a state's value holds its score, then the strength of its runs (below 1 << SCALE)
SCALE: Final = 12
STRENGTH_MASK: Final = (1 << SCALE) - 1
NO_STRENGTH: Final = ~STRENGTH_MASK
SCORE_ORDER: Final = 1 << 24  # sort keys for undominated: score, then jokers, then strength
JOKER_ORDER: Final = 1 << SCALE
MELD_ORDER: Final = MELD_MASK + 1
UNREACHABLE: Final = -(1 << 60)  # below any score
SMALL_LAYER: Final = 16  # a layer this small costs more to filter than it saves
HAND_OVER_EVERY: Final = 256  # states a filter looks at between two let_others_run()
# kept states a filter marks in one block of masks: machine integers (i64) held in place in
# packed arrays (see _Block), so a block can take 62 of them (with masks in lists, boxed, the
# blocks took 30: below 2**30 a mask was one digit of CPython's, on the quick paths)
BLOCK_BITS: Final = 62
BLOCK_FULL: Final = 1 << BLOCK_BITS
# NewStates' hash: a key's bits folded onto 31, times this (2**32 over the golden ratio, odd;
# the product stays under 2**63), modulo 2**32
SPREAD: Final = 0x9E3779B1
SPREAD_MASK: Final = (1 << 31) - 1
WORD: Final = (1 << 32) - 1


class RunStates:
    """The run states met so far, each with its id (its 12 bits in a key), its strength,
    whether its runs can all end now, and the ids of the states it dominates; shared by
    every search and thread.

    At most ``STATE_MASK + 1`` states fit in 12 bits; the few hundred the rules allow
    (runs of one colour, up to three copies and four jokers) are far below that, so
    the table is never dropped: ids stay valid for every search under way.
    """

    def __init__(self) -> None:
        self.ids: dict[RunState, int] = {(): 0}
        self.states: list[RunState] = [()]
        self.strengths: list[int] = [0]
        self.closable: list[bool] = [True]  # by id: is_closable
        self.weaker: list[tuple[int, ...]] = [(0,)]  # by id: the ids of the states it dominates
        # the same as sets, for asking whether one state dominates another (options._strongest:
        # `in` on a tuple compares its items one by one)
        self.dominated: list[set[int]] = [{0}]
        self._lock = threading.RLock()

    def id_of(self, state: RunState) -> int:
        """The id of ``state``, interning it (and the states it dominates) first if new."""
        found = self.ids.get(state)
        if found is None:
            with self._lock:
                found = self._intern(state)
        return found

    def _intern(self, state: RunState) -> int:
        """Intern ``state`` and every state it dominates; hold the lock.

        A state's id is published last, once the states it dominates have theirs: a
        search that meets the id can rely on them (see :func:`undominated`).
        """
        found = self.ids.get(state)
        if found is None:
            if len(self.states) > STATE_MASK:
                raise OverflowError("too many distinct run states to pack")
            found = len(self.states)
            self.states.append(state)
            self.strengths.append(strength(state))
            self.closable.append(is_closable(state))
            self.weaker.append(())
            self.dominated.append(set())
            weak_ids = [
                found if weak == state else self._intern(weak) for weak in weaker_states(state)
            ]
            self.weaker[found] = tuple(sorted(weak_ids))
            self.dominated[found] = set(weak_ids)
            self.ids[state] = found
        return found


def colour_bits(state_id: int, colour: int) -> int:
    """The bits of run state ``state_id`` at ``colour`` in a key (:func:`colour_id` reads
    them back)."""
    low = (state_id & HALF_MASK) << (STATES_SHIFT + HALF_BITS * colour)
    return low | (state_id >> HALF_BITS) << (STATES_SHIFT + HIGH_SHIFT + HALF_BITS * colour)


def colour_id(key: int, colour: int) -> int:
    """The run state id of ``colour`` in ``key``."""
    shift = STATES_SHIFT + HALF_BITS * colour
    return ((key >> shift) & HALF_MASK) | ((key >> (shift + HIGH_SHIFT - HALF_BITS)) & HIGH_HALF)


def all_closable(key: int, closable: list[bool]) -> bool:
    """Whether every open run of every colour of ``key`` can end now (``closable``:
    :attr:`RunStates.closable`)."""
    return (
        closable[((key >> LOW_0) & HALF_MASK) | ((key >> HIGH_0) & HIGH_HALF)]
        and closable[((key >> LOW_1) & HALF_MASK) | ((key >> HIGH_1) & HIGH_HALF)]
        and closable[((key >> LOW_2) & HALF_MASK) | ((key >> HIGH_2) & HIGH_HALF)]
        and closable[((key >> LOW_3) & HALF_MASK) | ((key >> HIGH_3) & HIGH_HALF)]
    )


def colour_ids(key: int) -> tuple[int, int, int, int]:
    """The run state id of each colour in ``key``."""
    return (colour_id(key, 0), colour_id(key, 1), colour_id(key, 2), colour_id(key, 3))


class NewStates:
    """The states a search's loop makes at one number, each with its best value, in the order
    they first came: what a dict filled with ``setdefault`` (and a set where the value is
    higher) holds, kept in packed arrays of machine integers until the loop ends.

    Compiled, a dict keyed by integers boxes each key and value it is offered (a new object
    above 256, then freed where the key was there already: about half of them on the tail's
    slowest positions) and compares an existing key by value; here a key is found by open
    addressing (linear probing over a power of two of slots, at most half full) in machine
    integers, and only the states kept are boxed, once, by :meth:`as_dict`. Keys are states
    (never negative); an empty slot holds -1.
    """

    def __init__(self) -> None:
        self.mask: i64 = 63
        self.shift: i64 = 32 - 6  # a slot is the top 6 of a product's low 32 bits (see offer)
        self.keys: vec[i64] = vec[i64]([-1] * 64)
        self.values: vec[i64] = vec[i64]([0] * 64)
        self.order: vec[i64] = vec[i64]()  # the slots taken, in the order their keys came

    def offer(self, key: i64, value: i64) -> None:
        """Hold ``key`` with ``value``, or its value so far if that is higher."""
        keys = self.keys
        mask = self.mask
        # Fibonacci hashing: the high halves folded onto the low ones (31 bits), times a
        # 32-bit odd constant, the top bits of the product's low 32 (keys in order would crowd
        # together under linear probing if they were their own slots)
        slot = ((((key ^ (key >> HIGH_SHIFT)) & SPREAD_MASK) * SPREAD) & WORD) >> self.shift
        held = keys[slot]
        while held >= 0:
            if held == key:
                values = self.values
                if value > values[slot]:
                    values[slot] = value
                return
            slot = (slot + 1) & mask
            held = keys[slot]
        keys[slot] = key
        self.values[slot] = value
        self.order = append(self.order, slot)
        if 2 * len(self.order) > mask:
            self._grow()

    def _grow(self) -> None:
        """Twice the slots; the keys placed again in the order they came."""
        old_keys, old_values, old_order = self.keys, self.values, self.order
        size = 2 * (self.mask + 1)
        mask = size - 1
        shift = self.shift - 1
        keys = vec[i64]([-1] * size)
        values = vec[i64]([0] * size)
        order = vec[i64](capacity=size // 2 + 1)
        for old in old_order:
            key = old_keys[old]
            slot = ((((key ^ (key >> HIGH_SHIFT)) & SPREAD_MASK) * SPREAD) & WORD) >> shift
            while keys[slot] >= 0:
                slot = (slot + 1) & mask
            keys[slot] = key
            values[slot] = old_values[old]
            order = append(order, slot)
        self.mask, self.shift, self.keys, self.values = mask, shift, keys, values
        self.order = order

    def as_dict(self) -> dict[int, int]:
        """The states and their values, in the order the states first came."""
        keys, values = self.keys, self.values
        found: dict[int, int] = {}
        for slot in self.order:
            found[keys[slot]] = values[slot]
        return found


def undominated(
    layer: dict[int, int], run_states: RunStates, *, spare_jokers: bool, max_jokers: int
) -> dict[int, int]:
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
    weaker = run_states.weaker
    melds = sorted({(key >> MELD_SHIFT) & MELD_MASK for key in layer})
    rank = {meld: index for index, meld in enumerate(melds)}
    # best score first, then fewest jokers, then strongest, then the highest meld value:
    # a state's betters come first
    order = sorted(layer.items(), key=_meld_order)
    kept: dict[int, int] = {}
    size = len(run_states.states)
    top_jokers = max_jokers + 1 if spare_jokers else 1
    fronts: dict[int, tuple[list[int], list[int], list[int], list[int], list[int], list[int]]] = {}
    bits: dict[int, int] = {}
    for count, (key, value) in enumerate(order):
        if count % HAND_OVER_EVERY == HAND_OVER_EVERY - 1:
            let_others_run()  # compiled, the filter would hold the interpreter's lock
        id0 = ((key >> LOW_0) & HALF_MASK) | ((key >> HIGH_0) & HIGH_HALF)  # colour_id
        id1 = ((key >> LOW_1) & HALF_MASK) | ((key >> HIGH_1) & HIGH_HALF)
        id2 = ((key >> LOW_2) & HALF_MASK) | ((key >> HIGH_2) & HIGH_HALF)
        id3 = ((key >> LOW_3) & HALF_MASK) | ((key >> HIGH_3) & HIGH_HALF)
        placed = key & JOKER_MASK
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
        masks = front[0]  # `x = x | bit`, not `x |= bit`: see _Marks.keep
        for weak in weaker[id0]:
            masks[weak] = masks[weak] | bit
        masks = front[1]
        for weak in weaker[id1]:
            masks[weak] = masks[weak] | bit
        masks = front[2]
        for weak in weaker[id2]:
            masks[weak] = masks[weak] | bit
        masks = front[3]
        for weak in weaker[id3]:
            masks[weak] = masks[weak] | bit
        masks = front[4]
        for more in range(jokers, top_jokers):
            masks[more] = masks[more] | bit
        masks = front[5]
        for less in range(meld + 1):
            masks[less] = masks[less] | bit
        kept[key] = value
    return kept


def undominated_spare(
    layer: dict[int, int], run_states: RunStates, max_jokers: int
) -> dict[int, int]:
    """:func:`undominated` in essential mode with no meld: runs and jokers placed differ.

    The kept states are marked in blocks of ``BLOCK_BITS`` (see :class:`_Marks`), so that
    every mask stays a machine integer: one mask over all of them grew a bit a kept state,
    and each update of such a mask made a new long integer. Counted with callgrind on the
    three slowest stress positions (cold): 15% fewer instructions here, 3.8% in all.
    """
    marks = _Marks(run_states, max_jokers + 1)
    # the layer's keys and values handled as the objects it holds (typed as objects: compiled,
    # an int read from a dict or a list is unboxed, then boxed anew wherever it is stored or
    # looked up, a new integer each above 256, which a dict then compares by value)
    states = cast("dict[object, int]", layer)
    values = cast("dict[object, object]", layer)
    kept: dict[object, object] = {}
    # best value (score, then strength) first, fewest jokers first among equals: a
    # state's betters come first (keys alone, not (key, value) pairs: a pair is one more
    # object for the collector). The states are put in order of the jokers they placed (a
    # key's lowest bits), each count in the order they came, then sorted by value, stably:
    # among equal values and jokers no state beats another (equal values are equal scores
    # and strengths, and a state that beats another of the same strength has its runs), so
    # the same states are kept as with the whole keys sorted first, which cost as much as
    # the sort by value (the order the kept states come in, and so which of equally good
    # plays a search finds first, may differ).
    if max_jokers:
        by_jokers: list[list[object]] = [[] for _ in range(max_jokers + 1)]
        for key in states:
            by_jokers[cast(int, key) & JOKER_MASK].append(key)
        ordered = by_jokers[0]
        for more in by_jokers[1:]:
            ordered.extend(more)
    else:
        ordered = list(states)
    ordered.sort(key=states.__getitem__, reverse=True)
    for count, key in enumerate(ordered):
        if count % HAND_OVER_EVERY == HAND_OVER_EVERY - 1:
            let_others_run()  # compiled, the filter would hold the interpreter's lock
        state = cast(int, key)
        if marks.keep(state, state & JOKER_MASK):
            kept[key] = values[key]
    return cast("dict[int, int]", kept)


def undominated_plain(layer: dict[int, int], run_states: RunStates) -> dict[int, int]:
    """:func:`undominated` for states that differ only in their runs (no joker, no meld);
    in blocks, as :func:`undominated_spare`."""
    marks = _Marks(run_states, 1)
    kept: dict[object, object] = {}  # keys and values as the objects the layer holds: see above
    items = cast("dict[object, object]", layer).items()
    ordered = sorted(items, key=_value_of, reverse=True)
    for count, (key, value) in enumerate(ordered):
        if count % HAND_OVER_EVERY == HAND_OVER_EVERY - 1:
            let_others_run()  # compiled, the filter would hold the interpreter's lock
        if marks.keep(cast(int, key), 0):
            kept[key] = value
    return cast("dict[int, int]", kept)


class _Block:
    """Up to ``BLOCK_BITS`` kept states of a filter, one bit each: for each colour and run
    state, the kept states whose run state there is at least as strong; for each count of
    jokers, the kept states that placed no more.

    The masks are packed arrays of machine integers (``vec[i64]``, librt.vecs: mypyc's own):
    compiled, a mask is read and set in place as a machine integer, where a list held each
    as a boxed integer, and setting one made a new object and freed the old one (about 30
    masks set a kept state).
    """

    def __init__(self, states: int, jokers: int) -> None:
        self.masks0: vec[i64] = vec[i64]([0] * states)
        self.masks1: vec[i64] = vec[i64]([0] * states)
        self.masks2: vec[i64] = vec[i64]([0] * states)
        self.masks3: vec[i64] = vec[i64]([0] * states)
        self.by_jokers: vec[i64] = vec[i64]([0] * jokers)

    def beats(self, id0: i64, id1: i64, id2: i64, id3: i64, jokers: i64) -> bool:
        """Whether a state of this block beats the state of these run states and jokers."""
        return bool(
            self.masks0[id0]
            & self.masks1[id1]
            & self.masks2[id2]
            & self.masks3[id3]
            & self.by_jokers[jokers]
        )


class _Marks:
    """The states a filter kept, in blocks of ``BLOCK_BITS`` (the newest one being filled)."""

    def __init__(self, run_states: RunStates, jokers: int) -> None:
        self.weaker = run_states.weaker
        self.states = len(run_states.states)
        self.jokers: i64 = jokers
        self.full: list[_Block] = []
        self.block = _Block(self.states, jokers)
        self.bit: i64 = 1

    def keep(self, key: i64, jokers: i64) -> bool:
        """Mark the state ``key`` (which placed ``jokers``) kept and return True, unless a
        state kept before beats it."""
        id0 = ((key >> LOW_0) & HALF_MASK) | ((key >> HIGH_0) & HIGH_HALF)  # colour_id
        id1 = ((key >> LOW_1) & HALF_MASK) | ((key >> HIGH_1) & HIGH_HALF)
        id2 = ((key >> LOW_2) & HALF_MASK) | ((key >> HIGH_2) & HIGH_HALF)
        id3 = ((key >> LOW_3) & HALF_MASK) | ((key >> HIGH_3) & HIGH_HALF)
        # (_Block.beats written out, each mask read only while the others leave a kept state
        # standing: compiled, a method call a block cost more than the test, and most blocks
        # hold no state as strong in the first colour or two)
        block = self.block
        found = block.masks0[id0]
        if found:
            found &= block.masks1[id1]
            if found:
                found &= block.masks2[id2]
                if found:
                    found &= block.masks3[id3]
                    if found and found & block.by_jokers[jokers]:
                        return False
        for block in self.full:
            found = block.masks0[id0]
            if found:
                found &= block.masks1[id1]
                if found:
                    found &= block.masks2[id2]
                    if found:
                        found &= block.masks3[id3]
                        if found and found & block.by_jokers[jokers]:
                            return False
        if self.bit == BLOCK_FULL:
            self.full.append(self.block)
            self.block = _Block(self.states, self.jokers)
            self.bit = 1
        block, bit, weaker = self.block, self.bit, self.weaker
        # `masks[weak] = masks[weak] | bit`, not `|=`: compiled, `|=` on a list's item was a
        # generic call (kept so: the same machine operation on a vec's item)
        masks = block.masks0
        for weak in weaker[id0]:
            masks[weak] = masks[weak] | bit
        masks = block.masks1
        for weak in weaker[id1]:
            masks[weak] = masks[weak] | bit
        masks = block.masks2
        for weak in weaker[id2]:
            masks[weak] = masks[weak] | bit
        masks = block.masks3
        for weak in weaker[id3]:
            masks[weak] = masks[weak] | bit
        masks = block.by_jokers
        for more in range(jokers, self.jokers):
            masks[more] = masks[more] | bit
        self.bit = bit << 1
        return True


_value_of = itemgetter(1)


def _meld_order(item: tuple[int, int]) -> int:
    key, value = item
    return (
        (key & JOKER_MASK) * JOKER_ORDER - (value >> SCALE) * SCORE_ORDER - (value & STRENGTH_MASK)
    ) * MELD_ORDER - ((key >> MELD_SHIFT) & MELD_MASK)
