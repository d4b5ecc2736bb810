"""The solver on the hardest positions the tail bench found, and on random big ones.

Correctness, not time: each play must pass ``check_turn``, place at least what the
MILP of rummikub-solver placed (where it plays by the same rules: it knows no joker
locks), and match what the plain search finds, one search with every joker, no floor and no
future bound, without the shortcuts that make the solver fast on these positions
(floors from every rack tile down, fewer jokers first, the initial meld tried first
as free sets).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

import service.rules.solver as solver_module
from bench.support.stress_positions import classes, stress_case
from service.rules import Rules, Tile, TileSet, check_turn, parse_tiles
from service.rules.solver import Solution, any_play, can_play, solve
from service.rules.solver.position import Position, read_position

HARD = Path(__file__).with_name("hard_positions.txt")
PROOFS = Path(__file__).with_name("proof_positions.txt")
Table = tuple[tuple[Tile, ...], ...]


def positions(path: Path) -> Iterator[tuple[str, Table, Counter[Tile], str, str, list[str]]]:
    """Each line of a positions file (``box | mode | table | rack | ...``): id, table, rack,
    box, mode and the line's further fields."""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        if not line.strip() or line.startswith("#"):
            continue
        box, mode, sets, rack, *more = (part.strip() for part in line.split("|"))
        table = tuple(parse_tiles(codes.split()) for codes in sets.split(" / ") if codes)
        yield f"{number}-{box}-{mode}", table, Counter(parse_tiles(rack.split())), box, mode, more


def hard_positions() -> Iterator[tuple[str, Table, Counter[Tile], Rules, bool, int]]:
    """Each line of hard_positions.txt: id, table, rack, rules, melded, the MILP's count."""
    for name, table, rack, box, mode, (milp,) in positions(HARD):
        rules = Rules(tile_set=TileSet(box), joker_locked_sets=mode == "locked")
        yield name, table, rack, rules, mode != "initial", int(milp)


def proof_positions() -> Iterator[tuple[str, Table, Counter[Tile], Rules, bool]]:
    """Each line of proof_positions.txt: id, table, rack, rules, melded."""
    for name, table, rack, box, mode, meld in positions(PROOFS):
        rules = Rules(
            tile_set=TileSet(box),
            joker_locked_sets=mode == "locked",
            initial_meld_points=int(meld[0]) if meld else 30,
        )
        yield name, table, rack, rules, mode != "initial"


def plain(
    table: Table,
    rack: Counter[Tile],
    *,
    melded: bool,
    rules: Rules,
    monkeypatch: pytest.MonkeyPatch,
) -> Solution:
    """The solver with one search at floor 1, and the meld search straight away."""

    def best_sets(
        position: Position, deadline: float | None, *, most_tiles: int | None = None
    ) -> solver_module.Table | None:
        return solver_module._with_every_joker(position, deadline, 1, None)

    def best_meld(
        hand: Counter[Tile], rules: Rules, deadline: float | None
    ) -> solver_module.Table | None:
        position = read_position((), hand, melded=False, rules=rules)
        return solver_module._with_every_joker(position, deadline, 1, None)

    with monkeypatch.context() as patched:
        patched.setattr(solver_module, "_best_sets", best_sets)
        patched.setattr(solver_module, "_best_meld", best_meld)
        return solve(table, rack, melded=melded, rules=rules)


def assert_best(
    table: Table,
    rack: Counter[Tile],
    *,
    melded: bool,
    rules: Rules,
    monkeypatch: pytest.MonkeyPatch,
) -> Solution:
    solution = solve(table, rack, melded=melded, rules=rules)
    if solution.found:
        assert check_turn(table, solution.table, rack, melded=melded, rules=rules) == []
    reference = plain(table, rack, melded=melded, rules=rules, monkeypatch=monkeypatch)
    assert (solution.status, solution.tile_count, solution.points) == (
        reference.status,
        reference.tile_count,
        reference.points,
    )
    assert_any_play_agrees(table, rack, melded=melded, rules=rules, best=solution)
    return solution


def assert_any_play_agrees(
    table: Table, rack: Counter[Tile], *, melded: bool, rules: Rules, best: Solution
) -> Solution:
    """The search for any play (pass proofs, a bot out of time) agrees with the best play's
    on whether one exists, and what it plays is legal; returns its play."""
    assert can_play(table, rack, melded=melded, rules=rules) is best.found
    some = any_play(table, rack, melded=melded, rules=rules)
    assert some.status is best.status
    if some.found:
        assert check_turn(table, some.table, rack, melded=melded, rules=rules) == []
    return some


@pytest.mark.parametrize(
    ("table", "rack", "rules", "melded", "milp"),
    [pytest.param(*rest, id=name) for name, *rest in hard_positions()],
)
def test_the_slowest_positions_found_get_the_best_play(
    table: Table,
    rack: Counter[Tile],
    rules: Rules,
    melded: bool,
    milp: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    solution = assert_best(table, rack, melded=melded, rules=rules, monkeypatch=monkeypatch)
    if not rules.joker_locked_sets:
        assert solution.tile_count >= milp


@pytest.mark.parametrize(
    ("table", "rack", "rules", "melded"),
    [pytest.param(*rest, id=name) for name, *rest in proof_positions()],
)
def test_the_slowest_positions_for_pass_proofs_are_decided_rightly(
    table: Table, rack: Counter[Tile], rules: Rules, melded: bool
) -> None:
    # can_play and any_play say whether a play exists as the best play's search does, and
    # any_play's play is legal (the best play is checked against the plain search on the
    # positions above; on some of these the plain search takes half a minute)
    solution = solve(table, rack, melded=melded, rules=rules)
    if solution.found:
        assert check_turn(table, solution.table, rack, melded=melded, rules=rules) == []
    some = assert_any_play_agrees(table, rack, melded=melded, rules=rules, best=solution)
    if some.found:
        assert some.tile_count <= solution.tile_count


# Classes small enough for the plain search to run quickly: racks of 14.
SMALL = [c for c in classes() if c[3] == 14 and c[2] <= 60]


@pytest.mark.parametrize("seed", range(40))
def test_random_big_positions_get_what_the_plain_search_finds(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    box, mode, size, rack_size = SMALL[seed % len(SMALL)]
    case = stress_case(random.Random(seed), box, mode, size, rack_size)
    assert_best(
        case.table, case.rack, melded=case.melded, rules=case.rules, monkeypatch=monkeypatch
    )


@pytest.mark.parametrize("seed", range(30))
def test_an_initial_meld_out_of_reach_of_the_best_free_sets_is_still_found(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # High thresholds: the best sets the rack forms at all are often worth too little, and
    # the meld search must still find the best meld that reaches the threshold.
    rng = random.Random(seed)
    box = (TileSet.STANDARD, TileSet.XP)[seed % 2]
    case = stress_case(rng, box, "initial", 0, rng.choice((14, 18, 22)))
    rules = Rules(
        tile_set=box,
        initial_meld_points=rng.choice((40, 60, 80)),
        joker_worth_zero_in_meld=seed % 3 == 0,
    )
    assert_best(case.table, case.rack, melded=False, rules=rules, monkeypatch=monkeypatch)
