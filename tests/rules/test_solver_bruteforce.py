"""The solver against a brute force over every way to lay small positions out in sets.

Each position is small enough to try every partition of its tiles into valid
sets. The solver must reach the same optimum (rack tiles placed, then their
points), every table it returns must pass ``check_turn``, and it must say
``NO_PLAY`` exactly when the brute force finds nothing.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from functools import cache
from itertools import combinations

import pytest

import service.rules.solver as solver_module
from service.rules import (
    COLOURS,
    JOKER,
    Rules,
    Tile,
    TileSet,
    check_turn,
    classify,
    full_set,
    set_points,
)
from service.rules.solver import Solution, SolveStatus, any_play, can_play, solve

Set = tuple[Tile, ...]
Score = tuple[int, int]
NOTHING: Score = (0, 0)


def candidate_sets(pool: Counter[Tile]) -> list[Set]:
    """Every valid set (in display order) that ``pool`` can supply."""
    jokers = pool[JOKER]
    sets: list[Set] = []
    for number in range(1, 14):
        present = [c for c in COLOURS if pool[Tile(c, number)]]
        for size in range(1, 5):
            for colours in combinations(present, size):
                for extra in range(max(0, 3 - size), min(jokers, 4 - size) + 1):
                    sets.append((*(Tile(c, number) for c in colours), *[JOKER] * extra))
    for colour in COLOURS:
        for start in range(1, 12):
            for end in range(start + 2, 14):
                sets.extend(_runs(pool, colour, start, end, jokers))
    return [s for s in sets if classify(s).valid]


def _runs(pool: Counter[Tile], colour: object, start: int, end: int, jokers: int) -> Iterator[Set]:
    tiles = [Tile(colour, n) for n in range(start, end + 1)]  # type: ignore[arg-type]
    missing = [i for i, t in enumerate(tiles) if not pool[t]]
    present = [i for i, t in enumerate(tiles) if pool[t]]
    if len(missing) > jokers or not present:
        return
    for swapped in range(jokers - len(missing) + 1):
        for extra in combinations(present, swapped):
            if len(extra) == len(present):
                continue
            as_joker = set(missing) | set(extra)
            yield tuple(JOKER if i in as_joker else t for i, t in enumerate(tiles))


def brute_force(table: list[Set], rack: Counter[Tile], *, melded: bool, rules: Rules) -> Score:
    """The best (rack tiles placed, their points) over every legal new table."""
    if not melded:
        return _best_packing(rack, rules.initial_meld_points, rules)
    table_tiles: Counter[Tile] = Counter()
    for tiles in table:
        table_tiles.update(tiles)
    containing: dict[Tile, list[Counter[Tile]]] = {}
    for tiles in candidate_sets(table_tiles + rack):
        used = Counter(tiles)
        for tile in used:
            containing.setdefault(tile, []).append(used)

    @cache
    def cover(
        table_left: frozenset[tuple[Tile, int]], rack_left: frozenset[tuple[Tile, int]]
    ) -> Score | None:
        """The best rack tiles placed, once every table tile left is in a set."""
        on_table, on_rack = Counter(dict(table_left)), Counter(dict(rack_left))
        if not on_table:
            return _best_packing(on_rack, 0, rules)
        tile = min(on_table, key=lambda t: t.code)
        found: Score | None = None
        for used in containing.get(tile, ()):
            if used - (on_table + on_rack):
                continue
            from_table = used & on_table
            from_rack = used - from_table
            after = cover(
                frozenset((on_table - from_table).items()), frozenset((on_rack - from_rack).items())
            )
            if after is not None:
                score = (after[0] + from_rack.total(), after[1] + _points(from_rack))
                found = score if found is None else max(found, score)
        return found

    return cover(frozenset(table_tiles.items()), frozenset(rack.items())) or NOTHING


def _points(tiles: Counter[Tile]) -> int:
    return sum(tile.penalty * n for tile, n in tiles.items())


def _best_packing(pool: Counter[Tile], threshold: int, rules: Rules) -> Score:
    """The best sets made of ``pool`` alone worth ``threshold`` (NOTHING if none, or empty)."""
    candidates = candidate_sets(pool)
    worth = {
        tiles: set_points(tiles, joker_worth_zero=rules.joker_worth_zero_in_meld)
        for tiles in candidates
    }

    @cache
    def walk(left: frozenset[tuple[Tile, int]], need: int) -> Score | None:
        rest = Counter(dict(left))
        if not rest:
            return NOTHING if need <= 0 else None
        tile = min(rest, key=lambda t: t.code)
        found = walk(frozenset((rest - Counter([tile])).items()), need)
        for tiles in candidates:
            used = Counter(tiles)
            if tile in used and not used - rest:
                after = walk(frozenset((rest - used).items()), max(0, need - worth[tiles]))
                if after is not None:
                    score = (after[0] + len(tiles), after[1] + _points(used))
                    found = score if found is None else max(found, score)
        return found

    return walk(frozenset(pool.items()), threshold) or NOTHING


# --- random small positions ------------------------------------------------------------


def random_position(rng: random.Random, tile_set: TileSet) -> tuple[list[Set], Counter[Tile], bool]:
    """A small table of valid sets and a small rack, all from one box, often playable."""
    box = full_set(tile_set)
    table: list[Set] = []
    for _ in range(rng.choice((0, 1, 2, 2, 3, 3))):
        found = _random_set(rng, box)
        if found is not None and sum(map(len, table)) + len(found) <= 11:
            table.append(found)
            box.subtract(found)
    box = +box
    melded = rng.random() < 0.75
    rack_size = rng.randint(2, 6) if melded else rng.randint(4, 8)
    # draw from a few colours and a band of numbers so that plays are likely
    numbers = [t.number for s in table for t in s if t.number] or [rng.randint(1, 13)]
    centre = rng.choice(numbers)
    colours = rng.sample(COLOURS, rng.choice((1, 2, 2, 3, 4)))
    near = [
        t
        for t in sorted(box.elements(), key=lambda t: t.code)
        if t.is_joker or (t.colour in colours and abs(t.number - centre) <= 3)  # type: ignore[operator]
    ]
    hand = Counter(rng.sample(near, min(rack_size, len(near))))
    return table, hand, melded


def _random_set(rng: random.Random, box: Counter[Tile]) -> Set | None:
    jokers = rng.random() < 0.35 and box[JOKER] > 0
    if rng.random() < 0.5:
        number = rng.randint(1, 13)
        colours = rng.sample(COLOURS, rng.choice((3, 3, 4)))
        tiles = [Tile(c, number) for c in colours]
    else:
        colour = rng.choice(COLOURS)
        length = rng.choice((3, 3, 4, 5))
        start = rng.randint(1, 14 - length)
        tiles = [Tile(colour, n) for n in range(start, start + length)]
    if jokers:
        tiles[rng.randrange(len(tiles))] = JOKER
    found = tuple(tiles)
    return found if classify(found).valid and not Counter(found) - box else None


SEEDS = range(450)
OPTIONS = [
    Rules(),
    Rules(tile_set=TileSet.XP),
    Rules(joker_worth_zero_in_meld=True),
    Rules(initial_meld_points=20),
    # Thresholds a rack can only just reach, or not at all: the search drops the melds that
    # can no longer reach theirs, and must not drop one that can.
    Rules(initial_meld_points=60),
    Rules(initial_meld_points=90, joker_worth_zero_in_meld=True),
]


@cache
def _position(seed: int) -> tuple[list[Set], Counter[Tile], bool, Rules]:
    rules = OPTIONS[seed % len(OPTIONS)]
    rng = random.Random(seed)
    table, rack, melded = random_position(rng, rules.tile_set)
    return table, rack, melded, rules


@cache
def _expected(seed: int) -> Score:
    table, rack, melded, rules = _position(seed)
    return brute_force(table, rack, melded=melded, rules=rules)


def _check(
    solution: Solution,
    expected: Score,
    table: list[Set],
    rack: Counter[Tile],
    *,
    melded: bool,
    rules: Rules,
) -> None:
    """The solution reaches ``expected``, is legal, and says truly what it places."""
    assert (solution.tile_count, solution.points) == expected
    if expected == NOTHING:
        assert solution.status is SolveStatus.NO_PLAY
        assert solution.table == tuple(table) and not solution.placed
        return
    assert solution.status is SolveStatus.PLAY_FOUND
    assert check_turn(table, solution.table, rack, melded=melded, rules=rules) == []
    before: Counter[Tile] = Counter(tile for tiles in table for tile in tiles)
    after: Counter[Tile] = Counter(tile for tiles in solution.table for tile in tiles)
    assert solution.placed == after - before and not solution.placed - rack
    assert solution.points == _points(solution.placed)


def _check_any_play(
    table: list[Set], rack: Counter[Tile], *, melded: bool, rules: Rules, exists: bool
) -> Solution:
    """any_play and can_play say whether a play exists as the brute force does, and the
    play any_play finds is legal and says truly what it places."""
    assert can_play(table, rack, melded=melded, rules=rules) is exists
    some = any_play(table, rack, melded=melded, rules=rules)
    assert some.found is exists
    if not exists:
        assert some.status is SolveStatus.NO_PLAY and some.table == tuple(table)
        return some
    assert check_turn(table, some.table, rack, melded=melded, rules=rules) == []
    before: Counter[Tile] = Counter(tile for tiles in table for tile in tiles)
    after: Counter[Tile] = Counter(tile for tiles in some.table for tile in tiles)
    assert some.placed == after - before and some.placed and not some.placed - rack
    assert some.tile_count == some.placed.total() and some.points == _points(some.placed)
    return some


@pytest.mark.parametrize("seed", SEEDS)
def test_the_solver_finds_the_same_optimum_as_trying_every_partition(seed: int) -> None:
    table, rack, melded, rules = _position(seed)
    solution = solve(table, rack, melded=melded, rules=rules)
    _check(solution, _expected(seed), table, rack, melded=melded, rules=rules)


@pytest.mark.parametrize("seed", SEEDS)
def test_any_play_finds_a_legal_play_exactly_when_one_exists(seed: int) -> None:
    table, rack, melded, rules = _position(seed)
    exists = _expected(seed) != NOTHING
    _check_any_play(table, rack, melded=melded, rules=rules, exists=exists)


def _meld_near_its_threshold(seed: int) -> tuple[Counter[Tile], Rules]:
    """A rack holding a meld worth about the threshold: some sets, exactly worth it or a
    few points either side, and a few stray tiles."""
    rng = random.Random(seed)
    box = full_set(TileSet.STANDARD)
    rack: Counter[Tile] = Counter()
    worth = 0
    joker_worth_zero = seed % 3 == 0
    wanted = rng.randint(1, 3)
    while wanted:
        found = _random_set(rng, box)
        if found is None:
            continue
        wanted -= 1
        if rack.total() + len(found) <= 10:
            rack.update(found)
            box.subtract(found)
            worth += set_points(found, joker_worth_zero=joker_worth_zero)
    strays = [t for t in sorted((+box).elements(), key=lambda t: t.code) if not t.is_joker]
    rack.update(rng.sample(strays, rng.randint(0, 2)))
    threshold = max(1, worth + rng.choice((-3, 0, 0, 1, 4)))
    return rack, Rules(initial_meld_points=threshold, joker_worth_zero_in_meld=joker_worth_zero)


@pytest.mark.parametrize("seed", range(120))
def test_an_initial_meld_near_its_threshold_is_found_exactly_when_one_exists(seed: int) -> None:
    rack, rules = _meld_near_its_threshold(seed)
    expected = _best_packing(rack, rules.initial_meld_points, rules)
    solution = solve([], rack, melded=False, rules=rules)
    _check(solution, expected, [], rack, melded=False, rules=rules)
    _check_any_play([], rack, melded=False, rules=rules, exists=expected != NOTHING)


def _with_jokers(seed: int) -> bool:
    table, rack, melded, _ = _position(seed)
    return melded and (rack[JOKER] > 0 or any(JOKER in tiles for tiles in table))


@pytest.mark.parametrize("seed", [seed for seed in SEEDS if _with_jokers(seed)])
def test_the_series_of_searches_for_large_tables_finds_the_same_optimum(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Large tables search with no joker laid first, then with more, each search
    # bounded by the one before and by a search from 13 down: the same optimum.
    monkeypatch.setattr(solver_module, "SERIES_FROM_TABLE_TILES", 0)
    table, rack, melded, rules = _position(seed)
    solution = solve(table, rack, melded=melded, rules=rules)
    _check(solution, _expected(seed), table, rack, melded=melded, rules=rules)


# --- joker-locked sets -------------------------------------------------------------------
#
# The solver reads the option strictly: each table set holding a joker is kept by a set
# of the new table (extended, its joker possibly swapped for the real tile), and no two
# locked sets share a tile there (a locked run may run on into another). The brute force
# tries every new table and keeps those where such an assignment exists.


def legal_tables(table: list[Set], rack: Counter[Tile]) -> Iterator[list[Set]]:
    """Every new table: all table tiles and some rack tiles in valid sets."""
    table_tiles: Counter[Tile] = Counter()
    for tiles in table:
        table_tiles.update(tiles)
    candidates = candidate_sets(table_tiles + rack)

    def extend(start: int, left: Counter[Tile], chosen: list[Set]) -> Iterator[list[Set]]:
        yield chosen
        for index in range(start, len(candidates)):
            need = Counter(candidates[index])
            if not need - left:
                yield from extend(index, left - need, [*chosen, candidates[index]])

    def cover(
        on_table: Counter[Tile], on_rack: Counter[Tile], chosen: list[Set]
    ) -> Iterator[list[Set]]:
        on_table = +on_table
        if not on_table:
            yield from extend(0, on_rack, chosen)
            return
        tile = min(on_table, key=lambda t: t.code)
        for tiles in candidates:
            need = Counter(tiles)
            if tile in need and not need - (on_table + on_rack):
                from_table = need & on_table
                yield from cover(
                    on_table - from_table, on_rack - (need - from_table), [*chosen, tiles]
                )

    yield from cover(table_tiles, Counter(rack), [])


def keeps_every_lock(before: list[Set], after: list[Set]) -> bool:
    """Whether each locked set is kept by a set of ``after``, no two sharing a tile."""
    held = [classify(tiles) for tiles in before]
    held = [info for info in held if info.valid and info.joker_count]
    infos = [classify(tiles) for tiles in after]
    taken: list[list[tuple[int, int]]] = [[] for _ in after]

    def place(index: int) -> bool:
        if index == len(held):
            return True
        lock = held[index]
        for target, info in enumerate(infos):
            span = _embedding(lock, info)
            if span is None or any(span[0] <= b and a <= span[1] for a, b in taken[target]):
                continue
            taken[target].append(span)
            if place(index + 1):
                return True
            taken[target].pop()
        return False

    return place(0)


def _embedding(lock: object, info: object) -> tuple[int, int] | None:
    from service.rules import SetInfo, SetKind

    assert isinstance(lock, SetInfo) and isinstance(info, SetInfo)
    reals = Counter(t for t in lock.tiles if not t.is_joker)
    if lock.kind is SetKind.GROUP:
        fits = (
            info.kind is SetKind.GROUP
            and info.number == lock.number
            and len(info.tiles) >= len(lock.tiles)
            and not reals - Counter(info.tiles)
        )
        return (0, 99) if fits else None
    if info.kind is not SetKind.RUN or info.colour != lock.colour:
        return None
    assert lock.start is not None and info.start is not None
    offset = lock.start - info.start
    if offset < 0 or offset + len(lock.tiles) > len(info.tiles):
        return None
    if any(not t.is_joker and info.tiles[offset + i] != t for i, t in enumerate(lock.tiles)):
        return None
    return lock.start, lock.start + len(lock.tiles) - 1


def brute_force_locked(table: list[Set], rack: Counter[Tile]) -> Score:
    """The best score over every new table that keeps the locked sets."""
    before: Counter[Tile] = Counter()
    for tiles in table:
        before.update(tiles)
    best = NOTHING
    for after in legal_tables(table, rack):
        placed: Counter[Tile] = Counter()
        for tiles in after:
            placed.update(tiles)
        placed -= before
        score = (placed.total(), _points(placed))
        if score > best and keeps_every_lock(table, after):
            best = score
    return best


def _locked_position(seed: int) -> tuple[list[Set], Counter[Tile]]:
    rng = random.Random(10_000 + seed)
    box = full_set()
    table: list[Set] = []
    while not any(JOKER in tiles for tiles in table):
        table, box = [], full_set()
        for _ in range(rng.choice((1, 2, 2))):
            found = _random_set(rng, box)
            if found is not None and sum(map(len, table)) + len(found) <= 7:
                table.append(found)
                box.subtract(found)
    box = +box
    held = [t for s in table for t in s if t.number]
    near = [
        t
        for t in sorted(box.elements(), key=lambda t: t.code)
        if any(
            t.number
            and (t.colour == h.colour or t.number == h.number)
            and abs(t.number - h.number) <= 2  # type: ignore[operator]
            for h in held
        )
    ]
    return table, Counter(rng.sample(near, min(rng.randint(2, 4), len(near))))


@pytest.mark.parametrize("series", [False, True], ids=["one-search", "series"])
@pytest.mark.parametrize("seed", range(150))
def test_with_joker_locked_sets_the_solver_matches_every_table_that_keeps_them(
    seed: int, series: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if series:
        monkeypatch.setattr(solver_module, "SERIES_FROM_TABLE_TILES", 0)
    table, rack = _locked_position(seed)
    rules = Rules(joker_locked_sets=True)
    expected = _expected_locked(seed)
    solution = solve(table, rack, melded=True, rules=rules)
    _check(solution, expected, table, rack, melded=True, rules=rules)
    if solution.found:
        assert keeps_every_lock(table, list(solution.table))
    some = _check_any_play(table, rack, melded=True, rules=rules, exists=expected != NOTHING)
    if some.found:
        assert keeps_every_lock(table, list(some.table))


@cache
def _expected_locked(seed: int) -> Score:
    return brute_force_locked(*_locked_position(seed))
