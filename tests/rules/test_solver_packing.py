"""The filters that drop dominated states (service/rules/solver/packing.py), against the rule
they implement, written out plainly: in the filter's order, a state is kept unless a state kept
before it is at least as strong in every colour and placed no more jokers."""

from __future__ import annotations

import random

import pytest
from librt.vecs import vec

from service.rules.solver.packing import (
    ALL_STATES,
    BLOCK_BITS,
    HALF_BITS,
    JOKER_MASK,
    MASK_0,
    MASK_1,
    MASK_2,
    MASK_3,
    STATE_MASK,
    NewStates,
    RunStates,
    _Block,
    all_closable,
    colour_bits,
    colour_id,
    colour_ids,
    undominated_plain,
    undominated_spare,
)

# run states of one colour: open runs' codes (1, 2, 3 or more, 4 a run waiting on a gap)
STATES = [(), (1,), (2,), (3,), (4,), (1, 1), (1, 2), (2, 3), (3, 3), (1, 3, 3), (3, 4), (2, 2, 3)]


@pytest.mark.parametrize("seed", range(4))
def test_a_key_holds_each_colour_s_state_and_gives_it_back(seed: int) -> None:
    rng = random.Random(seed)
    masks = (MASK_0, MASK_1, MASK_2, MASK_3)
    for _ in range(500):
        ids = [rng.randint(0, STATE_MASK) for _ in range(4)]
        jokers = rng.randint(0, 4)
        parts = [colour_bits(state_id, colour) for colour, state_id in enumerate(ids)]
        key = sum(parts) + jokers
        assert list(colour_ids(key)) == ids
        assert [colour_id(key, colour) for colour in range(4)] == ids
        assert [key & mask for mask in masks] == parts  # what a colour's options are found by
        assert key & ~ALL_STATES == jokers
        assert key & JOKER_MASK == jokers
        for colour, state_id in enumerate(ids):  # brought down to the first colour's place
            assert (key >> HALF_BITS * colour) & MASK_0 == colour_bits(state_id, 0)
    assert sum(masks) == ALL_STATES and MASK_0 | MASK_1 | MASK_2 | MASK_3 == ALL_STATES


def test_a_key_of_small_ids_is_a_small_integer() -> None:
    # below 2**30 an integer is one digit of CPython's: boxed, hashed, compared and read back
    # (compiled) on the quick paths; most run states a layer holds have ids below 64
    for jokers in range(JOKER_MASK - 1):
        key = sum(colour_bits(63, colour) for colour in range(4)) + jokers
        assert key < 1 << 30
    assert MASK_0 << HALF_BITS == MASK_1


def test_all_closable_reads_every_colour() -> None:
    closable = [True] * (STATE_MASK + 1)
    closable[100] = False
    for colour in range(4):
        assert not all_closable(colour_bits(100, colour), closable)
        assert all_closable(colour_bits(101, colour), closable)


def test_a_layer_s_keys_differ_in_their_low_bits() -> None:
    # A dict finds an integer key's slot by its low bits: the states of a layer (run states of
    # a few dozen ids in every colour) must differ there, or most of them share a few slots
    # (with each colour's 12 bits in one piece, the low 16 bits held one colour only).
    rng = random.Random(3)
    keys = {
        sum(colour_bits(rng.randint(0, 40), colour) for colour in range(4)) + rng.randint(0, 4)
        for _ in range(3000)
    }
    low = {key & 0xFFFF for key in keys}
    assert len(low) > len(keys) // 2


def beats(run_states: RunStates, strong: int, weak: int) -> bool:
    strong_ids, weak_ids = colour_ids(strong), colour_ids(weak)
    return all(
        weak_id in run_states.weaker[strong_id]
        for strong_id, weak_id in zip(strong_ids, weak_ids, strict=True)
    ) and (strong & JOKER_MASK) <= (weak & JOKER_MASK)


def plainly(run_states: RunStates, order: list[int], layer: dict[int, int]) -> dict[int, int]:
    kept: dict[int, int] = {}
    for key in order:
        if not any(beats(run_states, other, key) for other in kept):
            kept[key] = layer[key]
    return kept


def a_layer(rng: random.Random, run_states: RunStates, size: int, jokers: int) -> dict[int, int]:
    ids = [run_states.id_of(state) for state in STATES]
    layer: dict[int, int] = {}
    while len(layer) < size:
        key = sum(colour_bits(rng.choice(ids), colour) for colour in range(4))
        key += rng.randint(0, jokers)
        layer[key] = rng.randint(0, 40) << 12  # ties in score are common
    return layer


def spare_order(layer: dict[int, int]) -> list[int]:
    """The spare filter's order: best value first; among equals fewest jokers first, then the
    order they came in."""
    order = sorted(layer, key=lambda key: key & JOKER_MASK)  # stable
    order.sort(key=layer.__getitem__, reverse=True)
    return order


@pytest.mark.parametrize("seed", range(4))
def test_the_spare_filter_keeps_what_the_rule_keeps_over_several_blocks(seed: int) -> None:
    rng, run_states = random.Random(seed), RunStates()
    layer = a_layer(rng, run_states, 1000, jokers=4)
    kept = undominated_spare(layer, run_states, 4)
    assert kept == plainly(run_states, spare_order(layer), layer)
    assert list(kept) == [key for key in spare_order(layer) if key in kept]
    assert len(kept) > 2 * BLOCK_BITS  # the blocks of masks are exercised, not just one


@pytest.mark.parametrize("seed", range(4))
def test_the_spare_filter_keeps_what_the_whole_keys_order_keeps_on_a_search_s_values(
    seed: int,
) -> None:
    # A search's value holds the strength of the state's runs below the score, and a state
    # that beats another with other runs is stronger: so among equal values no state beats
    # another of as many jokers, and the filter need not sort whole keys (it did until the
    # seventeenth session) to keep the same states.
    rng, run_states = random.Random(seed), RunStates()
    made = a_layer(rng, run_states, 1000, jokers=3)
    layer: dict[int, int] = {}
    for key in made:
        strength = sum(run_states.strengths[state_id] for state_id in colour_ids(key))
        value = (rng.randint(0, 12) << 12) + strength  # ties in score are common
        if rng.random() < 0.2:  # the same runs with a joker more, as good, come first
            layer[key + 1] = value
        layer[key] = value
    whole_keys = sorted(layer)
    whole_keys.sort(key=layer.__getitem__, reverse=True)  # best first, fewest jokers among equals
    kept = undominated_spare(layer, run_states, 4)
    assert kept == plainly(run_states, whole_keys, layer)
    assert 2 * BLOCK_BITS < len(kept) < len(layer)


@pytest.mark.parametrize("seed", range(4))
def test_the_plain_filter_keeps_what_the_rule_keeps_over_several_blocks(seed: int) -> None:
    rng, run_states = random.Random(seed), RunStates()
    layer = a_layer(rng, run_states, 1000, jokers=0)
    order = [key for key, _ in sorted(layer.items(), key=lambda item: item[1], reverse=True)]
    kept = undominated_plain(layer, run_states)
    assert kept == plainly(run_states, order, layer)
    assert len(kept) > 2 * BLOCK_BITS


def test_a_run_state_s_dominated_set_is_its_weaker_states() -> None:
    run_states = RunStates()
    for state in STATES:
        run_states.id_of(state)
    assert len(run_states.dominated) == len(run_states.states) > len(STATES)
    for state_id, weak_ids in enumerate(run_states.weaker):
        assert run_states.dominated[state_id] == set(weak_ids)
        assert state_id in weak_ids  # a state dominates itself


def test_a_filter_s_masks_are_machine_integers_held_in_place() -> None:
    # Compiled, a vec[i64]'s item is read and set in place as a machine integer; a list held
    # each mask as a boxed integer, and setting one made a new object (about 30 a kept state).
    block = _Block(12, 5)
    for masks in (block.masks0, block.masks1, block.masks2, block.masks3, block.by_jokers):
        assert isinstance(masks, vec)
        masks[-1] = (1 << BLOCK_BITS) - 1  # a block's bits all fit
        assert masks[-1] == (1 << BLOCK_BITS) - 1
    assert block.beats(11, 11, 11, 11, 4) and not block.beats(11, 11, 0, 11, 4)


@pytest.mark.parametrize("seed", range(4))
def test_a_loop_s_new_states_are_what_a_dict_of_best_values_holds(seed: int) -> None:
    # NewStates stands for the dict a loop filled with setdefault, and a set where the value
    # offered is higher: the same states, values and order (the filters and the unwinding read
    # the layer in order), through its growth from 64 slots to thousands and its collisions.
    rng, run_states = random.Random(seed), RunStates()
    ids = [run_states.id_of(state) for state in STATES]
    table, expected = NewStates(), {}
    for _ in range(20_000):
        key = sum(colour_bits(rng.choice(ids), colour) for colour in range(4)) + rng.randint(0, 5)
        value = rng.randint(0, 60) << 12
        held = expected.setdefault(key, value)
        if value > held:
            expected[key] = value
        table.offer(key, value)
    found = table.as_dict()
    assert list(found.items()) == list(expected.items())
    assert 4_000 < len(found) < 20_000  # grown many times over, keys offered again and again
