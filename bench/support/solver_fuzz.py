"""Hunt for the solver's slowest positions with hypothesis (not part of ``make bench``).

Run as ``python bench/support/solver_fuzz.py [solve|can_play|any_play] [--examples N]
[--budget S]``. Hypothesis draws positions of the stress classes
(``bench/support/stress_positions.py``: both boxes, tables of 0-110 tiles, racks of 10-40,
every mode), often with every joker left in the rack and with meld thresholds of 12-100,
plus crowded tables with racks of 1-6 (what pass proofs meet late in a game), and steers
towards the slowest (``hypothesis.target`` on processor time). Prints the slowest
positions found, to keep as tests of correctness (``tests/rules/hard_positions.txt``,
``tests/rules/proof_positions.txt``). Each search has a budget (10 s by default) and the
process a 3 GB address-space limit, so a runaway search shows as ``gave_up``.
"""

from __future__ import annotations

import argparse
import random
import resource
import sys
import time
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, settings, target
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.support.stress_positions import StressCase, proof_case, stress_case
from service.rules import JOKER, Rules, Tile, TileSet
from service.rules.solver import any_play, can_play, solve

Found = tuple[float, str, str, StressCase, Rules]


@st.composite
def positions(draw: st.DrawFn) -> tuple[StressCase, Rules]:
    """A stress position (or a crowded table with a small rack) and its rules."""
    rng = random.Random(draw(st.integers(0, 2**32)))
    if draw(st.integers(0, 3)) == 0:
        case = proof_case(rng)
    else:
        box = draw(st.sampled_from(list(TileSet)))
        mode = draw(st.sampled_from(["melded", "initial", "locked"]))
        rack_size = draw(st.integers(10, 40))
        size = min(draw(st.integers(3 if mode == "locked" else 0, 110)), box.size - 6 - rack_size)
        case = stress_case(rng, box, mode, size, rack_size)
        if draw(st.booleans()):  # every joker not on the table goes to the rack
            on_table = sum(tile.is_joker for tiles in case.table for tile in tiles)
            case.rack[JOKER] = case.box.jokers - on_table
    rules = Rules(
        tile_set=case.box,
        joker_locked_sets=case.mode == "locked",
        initial_meld_points=draw(st.sampled_from([30, 30, 12, 50, 100])),
    )
    return case, rules


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("search", choices=["solve", "can_play", "any_play"], default="solve")
    parser.add_argument("--examples", type=int, default=200)
    parser.add_argument("--budget", type=float, default=10.0)
    args = parser.parse_args()
    resource.setrlimit(resource.RLIMIT_AS, (3_000_000_000, 3_000_000_000))
    found: list[Found] = []

    @settings(
        max_examples=args.examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.generate, Phase.target],
    )
    @given(positions())
    def hunt(drawn: tuple[StressCase, Rules]) -> None:
        case, rules = drawn
        rack: Counter[Tile] = case.rack
        start = time.process_time()
        if args.search == "can_play":
            answer = str(
                can_play(case.table, rack, melded=case.melded, rules=rules, time_budget=args.budget)
            )
        else:
            search = solve if args.search == "solve" else any_play
            answer = search(
                case.table, rack, melded=case.melded, rules=rules, time_budget=args.budget
            ).status.value
        seconds = time.process_time() - start
        target(seconds)
        found.append((seconds, case.label, answer, case, rules))

    hunt()
    found.sort(key=lambda item: -item[0])
    print(f"{len(found)} positions; the slowest ({args.search}, processor time):")
    for seconds, label, answer, case, rules in found[:10]:
        print(f"{seconds * 1000:9.1f} ms  {label} meld {rules.initial_meld_points}: {answer}")
        print(f"     table: {' / '.join(' '.join(t.code for t in s) for s in case.table)}")
        print(f"     rack:  {' '.join(sorted(t.code for t in case.rack.elements()))}")


if __name__ == "__main__":
    main()
