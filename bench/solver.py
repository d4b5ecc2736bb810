"""Benchmark: our exact solver against the MILP solver of ``rummikub-solver`` (HiGHS).

Run as ``python bench/solver.py`` (``--quick`` for a short run, ``--strict`` to exit
with status 1 when a target is missed). Both solvers get the same seeded positions,
drawn from one standard 106-tile box: tables of 0, 20, 40, 60 and 80 tiles made of
valid sets (jokers on about a quarter of them) and racks of 5-20 tiles. Most
positions are after the initial meld (manipulation); some are initial melds.

Each solver runs in its own spawned process, so neither pays for the other's
imports (cvxpy and HiGHS weigh about 150 MB) and this process stays small; each
reports its times and its own peak memory (``ru_maxrss``). Prints per table size
the median, p90, p99 and max time of each solver and the ratio of medians, every
position where the two optima (rack tiles placed) differ with the reason, the
peak memory of the three processes, and a PASS or FAIL line for each target:
our median at least 10x the MILP's at every table size, our p99 under 50 ms at
80 tiles, and under 150 MB for this process and our solver's.

Then, unless ``--no-http``, every position is dealt as a test-mode match to gunicorn (the
service as ``make run`` serves it, with its own Redis, as in bench/solver_tail.py), and
on one connection a view of the match (``GET /v1/matches/{id}``) and then its hint are
timed: the hint less the view is what the hint adds (the search, its hand-over to a
thread, the answer), and its median at every table size must be 10x below the MILP's
too (issue 33).

The MILP solver's set family is smaller than the rules allow: runs of 3-5 tiles,
jokers at the ends of a run only in runs of 3, no group of four with a joker,
and its initial meld counts only numbered tiles. Where it places fewer tiles, the
bench checks our play against the rules and names the shape it lacks.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import random
import resource
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.support.stats import percentile
from bench.support.stress_positions import random_set
from service.rules import COLOURS, JOKER, Rules, Tile, check_turn, classify, full_set
from service.rules.sets import SetKind
from service.rules.solver import solve

TABLE_SIZES = (0, 20, 40, 60, 80)
PER_SIZE = 150  # melded positions per table size (and a fifth as many initial melds)
QUICK_PER_SIZE = 20
WARM_UP = 5  # per table size, untimed, before timing
MIN_RATIO = 10.0  # the targets: our median this many times faster than the MILP's
MAX_P99_MS = 50.0  # at the largest table
MAX_PEAK_MB = 150.0  # the bench process, and our solver's process
HTTP_VIEWS = 2  # views timed around each hint (before and after); the hint less their mean
Set = tuple[Tile, ...]


@dataclass(frozen=True)
class Case:
    """One position: the table, the rack, and whether the player has melded."""

    table: tuple[Set, ...]
    rack: Counter[Tile]
    melded: bool
    size: int


def random_case(rng: random.Random, size: int, *, melded: bool, jokers: bool) -> Case:
    """Draw a table of about ``size`` tiles in valid sets and a rack of 5-20 tiles."""
    pool = full_set()
    del pool[JOKER]
    table: list[list[Tile]] = []
    placed = 0
    misses = 0
    while placed < size and misses < 200:
        want = min(size - placed, rng.choice((3, 3, 4, 4, 5, 6)))
        if want < 3:
            # top up: lengthen a run or a group of three
            if not _lengthen(rng, table, pool):
                break
            placed += 1
            continue
        found = random_set(rng, pool, want)
        if found is None:
            misses += 1
            continue
        pool.subtract(found)
        table.append(found)
        placed += len(found)
    box_jokers = 2
    if jokers and table:
        for _ in range(rng.randint(1, 2)):
            tiles = rng.choice(table)
            index = rng.randrange(len(tiles))
            if tiles[index].is_joker or sum(1 for t in tiles if not t.is_joker) < 2:
                continue
            pool[tiles[index]] += 1
            tiles[index] = JOKER
            box_jokers -= 1
    pool[JOKER] = box_jokers
    bag = list(pool.elements())
    rng.shuffle(bag)
    rack = Counter(bag[: rng.randint(5, 20)])
    return Case(tuple(tuple(t) for t in table), rack, melded, size)


def _lengthen(rng: random.Random, table: list[list[Tile]], pool: Counter[Tile]) -> bool:
    for tiles in rng.sample(table, len(table)):
        info = classify(tiles)
        extra: Tile | None = None
        if (
            info.kind is SetKind.RUN
            and info.colour
            and info.start
            and info.start + len(tiles) <= 13
        ):
            extra = Tile(info.colour, info.start + len(tiles))
            if pool[extra]:
                tiles.append(extra)
        elif info.kind is SetKind.GROUP and len(tiles) == 3 and info.number:
            held = {t.colour for t in tiles}
            extra = next((Tile(c, info.number) for c in COLOURS if c not in held), None)
            if extra is not None and pool[extra]:
                tiles.append(extra)
            else:
                extra = None
        if extra is not None and pool[extra]:
            pool[extra] -= 1
            return True
    return False


def cases(seed: int, per_size: int) -> list[Case]:
    """The seeded positions: per table size, ``per_size`` melded and a few initial melds."""
    rng = random.Random(seed)
    out = []
    for size in TABLE_SIZES:
        for i in range(per_size):
            out.append(random_case(rng, size, melded=True, jokers=i % 4 == 0))
        for i in range(max(2, per_size // 5)):
            out.append(random_case(rng, size, melded=False, jokers=i % 4 == 0))
    return out


def ours(case: Case) -> int:
    """Solve with our solver; return the rack tiles placed."""
    return solve(case.table, case.rack, melded=case.melded).tile_count


class Milp:
    """The ``rummikub-solver`` MILP (HiGHS), built once; None when it is not installed."""

    def __init__(self) -> None:
        from rummikub_solver import MILPSolver, RuleSet

        self.rules = RuleSet(solver_backend=MILPSolver.HIGHS)
        colours = {"K": 0, "B": 1, "O": 2, "R": 3}  # its colour order
        self.index = {
            tile: self.rules.tile_count
            if tile.is_joker
            else 1 + colours[tile.code[0]] * 13 + (tile.number or 0) - 1
            for tile in full_set()
        }
        self.set_family = {tuple(sorted(int(t) for t in tiles)) for tiles in self.rules.sets}

    def __call__(self, case: Case) -> int:
        """Solve with the MILP; return the rack tiles it places."""
        from rummikub_solver import SolverMode

        state = self.rules.new_game()
        rack = [self.index[t] for t in case.rack.elements()]
        state.add_rack(*rack)
        if case.melded:
            state.add_table(*(self.index[t] for tiles in case.table for t in tiles))
            state.initial = False
            found = self.rules.solve(state, SolverMode.TILE_COUNT)
        else:
            found = self.rules.solve(state, SolverMode.INITIAL)
        return 0 if found is None else len(found.tiles)

    def lacks(self, sets: Sequence[Set]) -> list[str]:
        """The shapes in ``sets`` that the MILP's set family cannot build."""
        missing = []
        for tiles in sets:
            info = classify(tiles)
            jokers = info.joker_count
            if info.kind is SetKind.GROUP and jokers and len(tiles) == 4:
                missing.append(f"a group of four with a joker ({_codes(tiles)})")
            elif info.kind is SetKind.RUN and jokers and not self._splits(tiles):
                missing.append(
                    f"a run of {len(tiles)} with a joker at an end or that cannot be cut "
                    f"into runs of 3-5 it knows ({_codes(tiles)})"
                )
        return missing

    def _splits(self, tiles: Sequence[Tile]) -> bool:
        """Whether a run cuts into pieces of 3-5 tiles that are all in the family."""
        if not tiles:
            return True
        return any(
            self._known(tiles[:size]) and self._splits(tiles[size:])
            for size in range(3, 6)
            if size <= len(tiles) and (len(tiles) - size == 0 or len(tiles) - size >= 3)
        )

    def _known(self, tiles: Sequence[Tile]) -> bool:
        return tuple(sorted(self.index[t] for t in tiles)) in self.set_family


def _codes(tiles: Sequence[Tile]) -> str:
    return " ".join(t.code for t in tiles)


def timed(run: Callable[[Case], int], case: Case) -> tuple[float, int]:
    """Run once; return the seconds taken and the tiles placed."""
    start = time.perf_counter()
    result = run(case)
    return time.perf_counter() - start, result


def peak_mb() -> float:
    """The peak resident memory of this process so far, in MB (``ru_maxrss``).

    In a spawned child this is at least what the parent held when it forked: Linux
    keeps the high-water mark across the exec. :func:`own_peak_mb` has the child's own.
    """
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def own_peak_mb() -> float | None:
    """The peak resident memory of this process image (``VmHWM``), in MB; None off Linux."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


@dataclass(frozen=True)
class Timings:
    """What one solver's process reports: per position (seconds, tiles placed), its peak."""

    results: list[tuple[float, int]]
    peak_mb: float
    own_peak_mb: float | None
    notes: dict[int, str]

    def memory(self) -> str:
        """The peak, for a report."""
        own = "" if self.own_peak_mb is None else f" (VmHWM {self.own_peak_mb:.0f} MB)"
        return f"{self.peak_mb:.0f} MB{own}"


def measure_ours(seed: int, per_size: int) -> Timings:
    """In its own process: time our solver on every position, checking each play."""
    positions = cases(seed, per_size)
    # first run untimed on other positions, as a long-lived server would
    for case in cases(seed + 1, WARM_UP):
        ours(case)
    results = []
    for number, case in enumerate(positions, 1):
        seconds, placed = timed(ours, case)
        results.append((seconds, placed))
        solution = solve(case.table, case.rack, melded=case.melded)
        if solution.found:
            faults = check_turn(case.table, solution.table, case.rack, melded=case.melded)
            assert not faults, (case, faults)
        if number % 150 == 0 or number == len(positions):
            print(f"  ours: {number}/{len(positions)} positions", flush=True)
    return Timings(results, peak_mb(), own_peak_mb(), {})


def measure_milp(seed: int, per_size: int, our_counts: list[int]) -> Timings | None:
    """In its own process: time the MILP on every position; explain where optima differ.

    The peak memory is read before the explanations, which run our solver too.
    Returns None when rummikub-solver is not installed.
    """
    try:
        milp = Milp()
    except ImportError:
        return None
    positions = cases(seed, per_size)
    for case in cases(seed + 1, WARM_UP):
        milp(case)
    results = []
    for number, case in enumerate(positions, 1):
        results.append(timed(milp, case))
        if number % 150 == 0 or number == len(positions):
            print(f"  MILP: {number}/{len(positions)} positions", flush=True)
    peak, own_peak = peak_mb(), own_peak_mb()
    notes = {
        i: explain(milp, case, our_counts[i], results[i][1])
        for i, case in enumerate(positions)
        if our_counts[i] != results[i][1]
    }
    return Timings(results, peak, own_peak, notes)


def measure_http(seed: int, per_size: int) -> list[float] | None:
    """Deal every position as a match, then time, on one connection, a view of each and its
    hint; return per position the hint's seconds less the view's (the mean of one before and
    one after). None when gunicorn cannot be started here."""
    import http.client

    # imported here: the solvers' spawned processes import this module, and need none of it
    from bench.solver_tail import call, deal, served
    from bench.support.stress_positions import StressCase
    from service.rules import TileSet

    def dealt(client: http.client.HTTPConnection, case: Case) -> tuple[str, str]:
        mode = "melded" if case.melded else "initial"
        rack_size = case.rack.total()
        stress = StressCase(TileSet.STANDARD, case.size, rack_size, mode, case.table, case.rack)
        return deal(client, stress)

    def timed_get(client: http.client.HTTPConnection, path: str, token: str) -> float:
        start = time.perf_counter()
        call(client, "GET", path, None, token)
        return time.perf_counter() - start

    positions = cases(seed, per_size)
    try:
        with served() as client:
            for case in cases(seed + 1, WARM_UP):  # warm up, as in process
                match_id, token = dealt(client, case)
                call(client, "GET", f"/v1/matches/{match_id}/hint", None, token)
            matches = [dealt(client, case) for case in positions]
            added = []
            for number, (match_id, token) in enumerate(matches, 1):
                view = timed_get(client, f"/v1/matches/{match_id}", token)
                hint = timed_get(client, f"/v1/matches/{match_id}/hint", token)
                view += timed_get(client, f"/v1/matches/{match_id}", token)
                added.append(hint - view / HTTP_VIEWS)
                if number % 150 == 0 or number == len(matches):
                    print(f"  hints over HTTP: {number}/{len(matches)}", flush=True)
            return added
    except (OSError, RuntimeError, http.client.HTTPException) as error:
        print(f"  the service could not be measured over HTTP: {error}")
        return None


def in_child(function: Callable[..., Timings | None], *args: object) -> Timings | None:
    """Run ``function`` in a fresh process (spawned: nothing inherited) and return its answer."""
    with ProcessPoolExecutor(
        max_workers=1, mp_context=multiprocessing.get_context("spawn")
    ) as pool:
        return pool.submit(function, *args).result()


def explain(milp: Milp, case: Case, our_count: int, milp_count: int) -> str:
    """Why the two optima differ."""
    solution = solve(case.table, case.rack, melded=case.melded)
    new_sets = solution.table if case.melded else solution.table[len(case.table) :]
    if our_count < milp_count:
        return "the MILP places more: its play breaks a rule we enforce, or we miss a play"
    reasons = [f"it lacks {shape}" for shape in milp.lacks(new_sets)]
    if not case.melded:
        numbers = {t.number or 0 for t in case.rack.elements()}
        if case.rack[JOKER]:
            numbers.add(13)
            reasons.append("its initial meld maximises numbered tiles only, not jokers")
        if sum(numbers) < Rules().initial_meld_points:
            reasons.append(
                "its initial-meld precheck adds up each number once (a set, not a multiset: "
                f"{sum(numbers)} here) and refuses the meld before solving"
            )
    if not reasons:
        reasons.append("our play is legal (checked) but outside the MILP's set family")
    return "; ".join(reasons)


@dataclass(frozen=True)
class Row:
    """One table size: our times and the MILP's (milliseconds)."""

    size: int
    ours: list[float]
    milp: list[float] | None
    http: list[float] | None = None  # a hint less a view, over HTTP

    @property
    def ratio(self) -> float | None:
        """How many times faster our median is."""
        if self.milp is None:
            return None
        return statistics.median(self.milp) / statistics.median(self.ours)

    @property
    def http_ratio(self) -> float | None:
        """How many times faster the median hint less a view is than the MILP's median
        (infinite when the hint took no longer than the view: its answer is shorter)."""
        if self.milp is None or self.http is None:
            return None
        added = statistics.median(self.http)
        return statistics.median(self.milp) / added if added > 0 else math.inf


def report(
    positions: list[Case],
    mine: list[tuple[float, int]],
    theirs: list[tuple[float, int]] | None,
    served: list[float] | None = None,
) -> list[Row]:
    """Print the timing table per table size (and the hints over HTTP) and return its rows."""
    header = f"{'table':>5} {'n':>4} | {'ours: median':>12} {'p90':>7} {'p99':>7} {'max':>7}"
    if theirs is not None:
        header += f" | {'MILP: median':>12} {'p90':>7} {'p99':>7} {'max':>7} | {'ratio':>6}"
    print(header + "   (milliseconds)")
    rows = []
    for size in TABLE_SIZES:
        picked = [i for i, case in enumerate(positions) if case.size == size]
        row = Row(
            size,
            [mine[i][0] * 1000 for i in picked],
            None if theirs is None else [theirs[i][0] * 1000 for i in picked],
            None if served is None else [served[i] * 1000 for i in picked],
        )
        line = f"{size:5d} {len(picked):4d} | {_spread(row.ours)}"
        if row.milp is not None:
            line += f" | {_spread(row.milp)} | {row.ratio:5.1f}x"
        print(line)
        rows.append(row)
    if served is not None:
        print("hints over HTTP, each less a view on the same connection (milliseconds):")
        for row in rows:
            assert row.http is not None
            line = f"{row.size:5d} {len(row.http):4d} | {_spread(row.http)}"
            if row.http_ratio is not None:
                line += f" | {row.http_ratio:5.1f}x the MILP's median"
            print(line)
    return rows


def _spread(ms: list[float]) -> str:
    return (
        f"{statistics.median(ms):12.2f} {percentile(ms, 0.9):7.2f} "
        f"{percentile(ms, 0.99):7.2f} {max(ms):7.2f}"
    )


def verdicts(
    rows: list[Row], our_peak: float, bench_peak: float, milp_faster: int | None
) -> list[tuple[bool | None, str]]:
    """The issue's targets, each (passed, or None when not measured; what it says)."""
    out: list[tuple[bool | None, str]] = []
    for row in rows:
        ours_ms = statistics.median(row.ours)
        if row.ratio is None:
            out.append((None, f"median at {row.size} tiles >= {MIN_RATIO:g}x faster than the MILP"))
        else:
            out.append(
                (
                    row.ratio >= MIN_RATIO,
                    f"median at {row.size} tiles >= {MIN_RATIO:g}x faster than the MILP: "
                    f"{row.ratio:.1f}x ({ours_ms:.2f} ms vs "
                    f"{statistics.median(row.milp or [0.0]):.2f} ms)",
                )
            )
        if row.http_ratio is not None:
            out.append(
                (
                    row.http_ratio >= MIN_RATIO,
                    f"hint less a view over HTTP at {row.size} tiles >= {MIN_RATIO:g}x faster "
                    f"than the MILP: {row.http_ratio:.1f}x "
                    f"({statistics.median(row.http or [0.0]):.2f} ms)",
                )
            )
    largest = rows[-1]
    p99 = percentile(largest.ours, 0.99)
    out.append((p99 < MAX_P99_MS, f"p99 at {largest.size} tiles < {MAX_P99_MS:g} ms: {p99:.2f} ms"))
    out.append(
        (
            bench_peak < MAX_PEAK_MB,
            f"peak memory of the bench process < {MAX_PEAK_MB:g} MB: {bench_peak:.0f} MB",
        )
    )
    out.append(
        (
            our_peak < MAX_PEAK_MB,
            f"peak memory of our solver's process < {MAX_PEAK_MB:g} MB: {our_peak:.0f} MB",
        )
    )
    if milp_faster is None:
        out.append((None, "our optimum is never below the MILP's"))
    else:
        out.append(
            (
                milp_faster == 0,
                f"our optimum is never below the MILP's: {milp_faster} positions where it is",
            )
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a short run")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--ours-only", action="store_true", help="skip the MILP solver")
    parser.add_argument("--no-http", action="store_true", help="skip the hints over HTTP")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args()
    per_size = QUICK_PER_SIZE if args.quick else PER_SIZE
    positions = cases(args.seed, per_size)
    started = time.perf_counter()
    print(f"{len(positions)} positions, seed {args.seed}; each solver in its own process")
    print("our solver:", flush=True)
    mine = in_child(measure_ours, args.seed, per_size)
    assert mine is not None
    theirs = None
    if not args.ours_only:
        print("the MILP (rummikub-solver, HiGHS):", flush=True)
        theirs = in_child(measure_milp, args.seed, per_size, [n for _, n in mine.results])
        if theirs is None:
            print("rummikub-solver is not installed (pip install '.[bench]'): ours only")
    served = None
    if not args.no_http:
        print("hints over HTTP (gunicorn, test mode):", flush=True)
        served = measure_http(args.seed, per_size)
    rows = report(positions, mine.results, None if theirs is None else theirs.results, served)
    milp_faster = None
    if theirs is not None:
        print(f"optima differ on {len(theirs.notes)} of {len(positions)} positions")
        milp_faster = 0
        for i, note in sorted(theirs.notes.items()):
            case = positions[i]
            kind = "melded" if case.melded else "initial meld"
            ours_n, milp_n = mine.results[i][1], theirs.results[i][1]
            milp_faster += milp_n > ours_n
            print(f"  #{i} {kind}, table {case.size}: ours {ours_n}, MILP {milp_n}: {note}")
            print(f"     table: {' | '.join(_codes(s) for s in case.table)}")
            print(f"     rack:  {_codes(sorted(case.rack.elements(), key=lambda t: t.code))}")
    bench_peak = peak_mb()
    milp_peak = "not run" if theirs is None else theirs.memory()
    print(
        f"peak memory (ru_maxrss): our solver's process {mine.memory()}, "
        f"the MILP's process {milp_peak}, this bench process {bench_peak:.0f} MB"
    )
    print(f"ran in {time.perf_counter() - started:.0f} s")
    failed = 0
    for passed, text in verdicts(rows, mine.peak_mb, bench_peak, milp_faster):
        label = "SKIP" if passed is None else "PASS" if passed else "FAIL"
        failed += passed is False
        print(f"{label}  {text}")
    if failed and args.strict:
        sys.exit(1)


if __name__ == "__main__":
    main()
