"""The exact solver on hand-made positions whose best play is known."""

from __future__ import annotations

import functools
import importlib.util
import random
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType

import pytest
from cases import rack, table, tiles

import service.rules.solver as solver_module
import service.rules.solver.search as search_module
from service.rules import JOKER, Rules, Tile, TileSet, check_turn, classify, full_set
from service.rules.solver import Solution, SolveStatus, can_play, solve
from service.rules.solver.options import CACHE, OptionCache
from service.rules.solver.position import read_position


def best(before: str, hand: str, *, melded: bool = True, **options: object) -> Solution:
    """Solve, and check the play against the rules before handing it back."""
    rules = Rules(**options)  # type: ignore[arg-type]
    solution = solve(table(before), rack(hand), melded=melded, rules=rules)
    if solution.found:
        assert (
            check_turn(table(before), solution.table, rack(hand), melded=melded, rules=rules) == []
        )
        assert all(classify(tiles).valid for tiles in solution.table)
    return solution


@functools.cache
def search_source() -> ModuleType:
    """service/rules/solver/search.py run from its source, as a module of its own, whether or
    not the search is compiled (``solver.compiled()``); it shares the other modules."""
    name = "service.rules.solver.search_source"
    path = Path(search_module.__file__ or "").with_name("search.py")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # where dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def shown(solution: Solution) -> set[str]:
    return {" ".join(tile.code for tile in tiles) for tiles in solution.table}


def test_the_public_names_are_pinned() -> None:
    assert sorted(solver_module.__all__) == [
        "Solution",
        "SolveStatus",
        "any_play",
        "can_play",
        "compiled",
        "solve",
    ]


# The manipulation examples of the Spanish rules (002).


def test_adding_at_one_end_of_a_run_frees_the_other_end_for_a_group() -> None:
    solution = best("R3 R4 R5", "R6 B3 K3")
    assert solution.tile_count == 3
    assert shown(solution) == {"R4 R5 R6", "R3 B3 K3"}


def test_inserting_b8_splits_b6_to_b10_into_two_runs() -> None:
    solution = best("B6 B7 B8 B9 B10", "B8")
    assert solution.tile_count == 1
    assert shown(solution) == {"B6 B7 B8", "B8 B9 B10"}


def test_swapping_a_group_member_frees_it_for_a_run() -> None:
    solution = best("B6 R6 O6", "K6 B7 B8")
    assert solution.tile_count == 3
    assert shown(solution) == {"R6 K6 O6", "B6 B7 B8"}


def test_b5_frees_the_joker_which_then_completes_the_sevens() -> None:
    solution = best("B3 B4 J", "B5 R7 O7")
    assert (solution.tile_count, solution.points) == (3, 19)
    assert "B3 B4 B5" in shown(solution)
    assert solution.placed == rack("B5 R7 O7")


# Splitting, rejoining, jokers.


def test_taking_an_end_and_joining_two_runs_places_every_tile() -> None:
    solution = best("R1 R2 R3 R4 | R6 R7 R8 R9", "R5 B4 K4")
    assert solution.tile_count == 3
    assert shown(solution) == {"R1 R2 R3", "R4 B4 K4", "R5 R6 R7 R8 R9"}


def test_a_missing_tile_joins_two_runs_into_one() -> None:
    assert shown(best("R1 R2 R3 | R5 R6 R7", "R4")) == {"R1 R2 R3 R4 R5 R6 R7"}


def test_a_joker_in_a_group_of_three_is_freed_and_used_in_a_new_run() -> None:
    solution = best("R5 B5 J", "K5 R9 R10")
    assert solution.tile_count == 3
    assert {"R5 B5 K5"} <= shown(solution)


def test_a_freed_joker_stays_on_the_table() -> None:
    solution = best("B3 B4 J", "B5")
    assert solution.tile_count == 1
    assert Counter(tile for tiles in solution.table for tile in tiles)[JOKER] == 1


def test_a_group_of_four_may_hold_a_joker() -> None:
    solution = best("", "R7 B7 K7 J")
    assert (solution.tile_count, solution.points) == (4, 51)
    assert len(solution.table) == 1 and len(solution.table[0]) == 4


def test_a_run_of_five_may_hold_a_joker_at_its_start() -> None:
    solution = best("", "R9 R10 R11 R12 J")
    assert solution.tile_count == 5
    assert shown(solution) <= {"J R9 R10 R11 R12", "R9 R10 R11 R12 J"}


def test_a_joker_before_r12_r13_stands_for_r11() -> None:
    assert shown(best("", "R12 R13 J")) == {"J R12 R13"}


def test_two_jokers_bridge_a_gap_in_a_run() -> None:
    solution = best("", "R3 J J R6")
    assert shown(solution) == {"R3 J J R6"}


def test_a_rack_joker_is_always_worth_placing_after_the_meld() -> None:
    solution = best("R1 R2 R3", "J K9")
    assert solution.placed == rack("J")
    assert solution.points == 30


def test_a_joker_with_no_room_left_splits_a_full_run_to_make_room() -> None:
    full_run = "R1 R2 R3 R4 R5 R6 R7 R8 R9 R10 R11 R12 R13"
    solution = best(f"{full_run} | B5 K5 O5 R5", "J")
    assert solution.tile_count == 1
    solution = best(f"{full_run} | B5 K5 O5 J", "R5")
    assert solution.tile_count == 1


def test_more_tiles_beat_more_points() -> None:
    solution = best("R10 R11 R12", "R9 R13 K1 K2 K3")
    assert solution.tile_count == 5


def test_equal_counts_are_broken_by_points() -> None:
    # R13 or R9 can extend the run; only one fits with B13 K13 absent
    solution = best("R10 R11 R12 | R13 B13 K13", "R9 O13")
    assert solution.tile_count == 2


# The initial meld.


def test_an_initial_meld_of_exactly_thirty_is_enough() -> None:
    solution = best("", "R10 B10 K10", melded=False)
    assert (solution.tile_count, solution.points) == (3, 30)


def test_an_initial_meld_just_under_thirty_is_no_play() -> None:
    assert best("", "R8 R9 R10 K1 K2", melded=False).status is SolveStatus.NO_PLAY


def test_two_small_sets_together_reach_thirty() -> None:
    assert best("", "R8 R9 R10 K1 K2 K3", melded=False).tile_count == 6


def test_a_joker_in_the_initial_meld_is_worth_the_number_it_stands_for() -> None:
    assert best("", "R9 R10 J", melded=False).tile_count == 3


def test_with_the_option_a_joker_is_worth_nothing_in_the_initial_meld() -> None:
    solution = best("", "R9 R10 J", melded=False, joker_worth_zero_in_meld=True)
    assert solution.status is SolveStatus.NO_PLAY


def test_the_initial_meld_leaves_the_table_untouched() -> None:
    solution = best("R1 R2 R3 | B7 K7 O7", "R4 R10 B10 K10 R7", melded=False)
    assert solution.tile_count == 3
    assert solution.table[:2] == tuple(table("R1 R2 R3 | B7 K7 O7"))


def test_another_threshold_can_be_chosen() -> None:
    assert best("", "R5 R6 R7", melded=False).status is SolveStatus.NO_PLAY
    assert best("", "R5 R6 R7", melded=False, initial_meld_points=18).tile_count == 3


@pytest.mark.parametrize(("size", "threshold"), [(40, 1000), (40, 600), (14, 200)])
def test_a_threshold_out_of_the_rack_s_reach_is_proven_so_at_the_first_number(
    size: int, threshold: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A rack worth less than the threshold, as a player who has drawn all game may hold.
    # The search drops each meld that can no longer reach the threshold, so it knows after
    # the 1s that none does; it used to read all 13 numbers, trying every meld (up to
    # seconds each time, for a bot that can never meld).
    box = sorted(full_set().elements(), key=lambda tile: tile.code)
    hand = Counter(random.Random(size).sample(box, size))
    assert sum(tile.number or 13 for tile in hand.elements()) < threshold
    numbers_read = []
    # the search from its source: a compiled class's methods cannot be wrapped
    source = search_source()
    advance = source._Search.advance

    def counted(self: search_module._Search, number: int, layer: dict[int, int]) -> object:
        if self.meld is not None:  # not the search for the best sets regardless of the meld
            numbers_read.append(number)
        return advance(self, number, layer)

    monkeypatch.setattr(source._Search, "advance", counted)
    monkeypatch.setattr(solver_module, "best_plan", source.best_plan)
    monkeypatch.setattr(solver_module, "future_bounds", source.future_bounds)
    solution = solve([], hand, melded=False, rules=Rules(initial_meld_points=threshold))
    assert solution.status is SolveStatus.NO_PLAY
    # one meld search per floor tried (every tile placed, all but 1, 3, 7, ... then any
    # play), and each knows at the 1s
    assert numbers_read
    assert set(numbers_read) == {1}
    assert len(numbers_read) <= size.bit_length() + 1


# No play.


def test_no_play_is_certain_when_no_rack_tile_fits() -> None:
    solution = best("R1 R2 R3 | B5 B6 B7", "K9 O12")
    assert solution.status is SolveStatus.NO_PLAY
    assert solution.table == tuple(table("R1 R2 R3 | B5 B6 B7"))
    assert can_play(table("R1 R2 R3 | B5 B6 B7"), rack("K9 O12"), melded=True) is False


def test_an_empty_rack_has_no_play() -> None:
    assert best("R1 R2 R3", "").status is SolveStatus.NO_PLAY


def test_a_tile_cannot_be_wedged_into_a_full_run() -> None:
    assert best("R1 R2 R3 R4 R5 R6 R7 R8 R9 R10 R11 R12 R13", "B5").status is SolveStatus.NO_PLAY


# The XP box: three copies of each tile, four jokers.


def test_three_copies_make_three_runs_side_by_side() -> None:
    solution = best("R5 R6 R7 | R5 R6 R7", "R5 R6 R7", tile_set=TileSet.XP)
    assert shown(solution) == {"R5 R6 R7"} and len(solution.table) == 3


def test_three_copies_and_four_jokers_are_all_placed() -> None:
    hand = "R5 R5 R5 B5 B5 B5 K5 K5 K5 J J J J"
    solution = best("", hand, tile_set=TileSet.XP)
    assert solution.tile_count == 13


# Joker-locked sets (001).


def test_a_locked_set_may_still_have_its_joker_swapped_for_the_real_tile() -> None:
    assert best("B3 B4 J", "B5 R7 O7", joker_locked_sets=True).tile_count == 3


def test_a_locked_set_may_not_give_up_a_tile() -> None:
    assert best("K6 K7 K8 J", "R6 B6").tile_count == 2
    assert best("K6 K7 K8 J", "R6 B6", joker_locked_sets=True).status is SolveStatus.NO_PLAY


def test_a_locked_run_may_be_extended() -> None:
    solution = best("K6 K7 J", "K9 K5", joker_locked_sets=True)
    assert shown(solution) == {"K5 K6 K7 J K9"}


def test_a_locked_group_gives_up_its_joker_to_either_missing_colour() -> None:
    for colour in "KO":
        solution = best("R5 B5 J", f"{colour}5 R9 R10", joker_locked_sets=True)
        assert solution.tile_count == 3


@pytest.mark.parametrize("locked", ["J B1 J", "J J B4", "J J B13"])
def test_a_locked_group_of_one_tile_and_two_jokers_comes_back_as_a_group(locked: str) -> None:
    # B1 J J reads as the run B1 B2 B3 (the reading worth more), which would break the lock;
    # the solver lays a lone real tile after its jokers. Found by bench/solver_tail.py.
    solution = best(f"{locked} | R7 R8 R9", "R10 K2 O2 O3", joker_locked_sets=True)
    assert solution.tile_count >= 1
    number = locked.replace("J", "").strip()
    assert f"J J {number}" in shown(solution)


def test_a_freed_joker_with_nowhere_to_go_keeps_a_group_at_four() -> None:
    solution = best("R5 B5 J", "K5 O5")
    assert solution.tile_count == 1


# Time budgets and the cheap check.


def test_a_spent_time_budget_gives_up_instead_of_guessing() -> None:
    solution = solve(table("R1 R2 R3"), rack("K9"), melded=True, time_budget=0)
    assert solution.status is SolveStatus.GAVE_UP
    assert can_play(table("R1 R2 R3"), rack("K9"), melded=True, time_budget=0) is None


def test_can_play_sees_a_tile_that_extends_a_run_at_once() -> None:
    assert can_play(table("R1 R2 R3"), rack("R4"), melded=True, time_budget=0) is True


def test_can_play_before_the_initial_meld_needs_thirty_points() -> None:
    assert can_play([], rack("R8 R9 R10"), melded=False) is False
    assert can_play([], rack("R9 R10 R11"), melded=False) is True


# Larger positions: every play is legal.


def _big_position(seed: int, tile_set: TileSet) -> tuple[list[tuple[Tile, ...]], Counter[Tile]]:
    rng = random.Random(seed)
    box = list(full_set(tile_set).elements())
    rng.shuffle(box)
    sets: list[tuple[Tile, ...]] = []
    used: Counter[Tile] = Counter()
    pool = Counter(box)
    for _ in range(60):
        colour = rng.choice([t.colour for t in box if t.colour])
        start, length = rng.randint(1, 11), rng.randint(3, 5)
        run = tuple(Tile(colour, n) for n in range(start, min(14, start + length)))
        if len(run) >= 3 and not Counter(run) + used - pool:
            if rng.random() < 0.2 and used[JOKER] < pool[JOKER]:
                run = (*run[:1], JOKER, *run[2:])
            used.update(run)
            sets.append(run)
    left = list((pool - used).elements())
    rng.shuffle(left)
    return sets, Counter(left[: rng.randint(5, 20)])


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize(
    "rules",
    [Rules(), Rules(tile_set=TileSet.XP), Rules(joker_locked_sets=True)],
    ids=["standard", "xp", "joker-locked"],
)
def test_every_play_on_a_crowded_table_is_legal(seed: int, rules: Rules) -> None:
    before, hand = _big_position(seed, rules.tile_set)
    solution = solve(before, hand, melded=True, rules=rules)
    assert solution.status is not SolveStatus.GAVE_UP
    if solution.found:
        assert check_turn(before, solution.table, hand, melded=True, rules=rules) == []
        assert solution.placed.total() == solution.tile_count
        assert solution.points == sum(t.penalty * n for t, n in solution.placed.items())
        assert can_play(before, hand, melded=True, rules=rules) is True


def test_tiles_parses_codes() -> None:
    assert tiles("R1 J") == (Tile.parse("R1"), JOKER)


# Crowded tables search in a series (no joker laid, then more), bounded by a search from
# 13 down; the optimum must be the one a single search with every joker finds.


def _crowded_position(seed: int) -> tuple[list[tuple[Tile, ...]], Counter[Tile]]:
    """30-60 table tiles in runs and groups, a joker on the table or rack, a rack of 6-16."""
    rng = random.Random(50_000 + seed)
    pool = full_set()
    del pool[JOKER]
    sets: list[list[Tile]] = []
    size = rng.randint(30, 60)
    while sum(map(len, sets)) < size:
        if rng.random() < 0.4:
            number = rng.randint(1, 13)
            colours = [t.colour for t in pool if t.number == number and pool[t]]
            if len(colours) < 3:
                continue
            count = min(len(colours), rng.choice((3, 4)))
            found = [Tile(c, number) for c in rng.sample(colours, count)]
        else:
            colour = rng.choice([t.colour for t in pool if pool[t]])
            length = rng.randint(3, 6)
            start = rng.randint(1, 14 - length)
            found = [Tile(colour, n) for n in range(start, start + length)]
        if all(pool[t] >= found.count(t) for t in found):
            pool.subtract(found)
            sets.append(found)
    jokers = 2
    for _ in range(rng.randint(0, 2)):
        tiles = rng.choice(sets)
        index = rng.randrange(len(tiles))
        if not tiles[index].is_joker and sum(1 for t in tiles if not t.is_joker) > 2:
            pool[tiles[index]] += 1
            tiles[index] = JOKER
            jokers -= 1
    bag = list((+pool).elements())
    rng.shuffle(bag)
    hand = Counter(bag[: rng.randint(6, 16)])
    if jokers and not any(JOKER in tiles for tiles in sets):
        hand[JOKER] += 1
    return [tuple(tiles) for tiles in sets], hand


@pytest.mark.parametrize("seed", range(30))
def test_the_series_on_a_crowded_table_finds_what_one_search_finds(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    before, hand = _crowded_position(seed)
    assert sum(map(len, before)) >= solver_module.SERIES_FROM_TABLE_TILES
    series = solve(before, hand, melded=True)
    monkeypatch.setattr(solver_module, "SERIES_FROM_TABLE_TILES", 10**9)
    single = solve(before, hand, melded=True)
    assert (series.tile_count, series.points) == (single.tile_count, single.points)
    if series.found:
        assert check_turn(before, series.table, hand, melded=True) == []


def test_the_shared_caches_may_be_dropped_at_any_time(monkeypatch: pytest.MonkeyPatch) -> None:
    positions = [_crowded_position(seed) for seed in range(4)]
    expected = [solve(before, hand, melded=True) for before, hand in positions]
    monkeypatch.setattr(CACHE, "options_limit", 0)
    monkeypatch.setattr(CACHE, "kits_limit", 0)
    monkeypatch.setattr(CACHE, "choices_limit", 0)
    for (before, hand), solution in zip(positions, expected, strict=True):
        again = solve(before, hand, melded=True)
        assert (again.tile_count, again.points, again.table) == (
            solution.tile_count,
            solution.points,
            solution.table,
        )


def test_threads_may_solve_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    positions = [_crowded_position(seed) for seed in range(30, 38)]
    expected = [solve(before, hand, melded=True).points for before, hand in positions]
    monkeypatch.setattr(CACHE, "options_limit", 50)  # the shared cache churns
    with ThreadPoolExecutor(max_workers=4) as pool:
        found = list(pool.map(lambda p: solve(p[0], p[1], melded=True).points, positions * 3))
    assert found == expected * 3


def test_a_budget_that_runs_out_mid_search_gives_up() -> None:
    before, hand = _crowded_position(0)
    assert solve(before, hand, melded=True, time_budget=1e-5).status is SolveStatus.GAVE_UP


def test_every_entry_holds_its_options_packed_as_the_spare_loop_reads_them() -> None:
    # The spare loop (_Search._advance_spare) reads a colour's options from packed arrays of
    # machine integers (each option's key bits, then its value, in the options' order), not
    # from the options' tuples: every entry the searches filled holds both, alike.
    for seed in range(4):
        before, hand = _crowded_position(seed)
        solve(before, hand, melded=True)  # a joker at hand: essential searches, the spare loop
    checked = 0
    for colour_options in list(CACHE.colours.values()):
        for lists, _needs, _tops, packed in list(colour_options.entries.values()):
            assert len(packed) == len(lists)
            for options, found in zip(lists, packed, strict=True):
                assert list(found) == [field for option in options for field in option[:2]]
                checked += len(options)
    assert checked > 1000


def test_the_cache_stays_within_its_bounds() -> None:
    cache = OptionCache(options_limit=30, kits_limit=10, entries_limit=12, choices_limit=5)
    for seed in range(6):
        before, hand = _crowded_position(seed)
        position = read_position(before, hand, melded=True, rules=Rules())
        for number in range(1, 14):
            _, options = cache.kit(position, number, position.jokers, 0)
            for colour_options in options:
                colour_options.entry(0)  # the options from no open run, worked out on demand
            assert len(cache.kits) <= cache.kits_limit + 1
            assert len(cache.choices) <= cache.choices_limit + 1
            filled = sum(len(found.entries) for found in cache.colours.values())
            assert filled <= cache.entries_limit + 4
            assert cache.kits  # past a limit a table keeps its newer half
    assert len(cache.templates) <= cache.options_limit + 4 * 13
