"""Where the solver's searches run: the worker model passes a :data:`Runner`."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from service import game
from service.rules import JOKER, Rules, Tile
from service.rules.solver import Solution, SolveStatus

__all__ = [
    "QUICK_JOKERS",
    "QUICK_RACK",
    "Runner",
    "SteppingAside",
    "likely_quick",
    "quick_here",
    "run_inline",
]

QUICK_RACK = 20
QUICK_JOKERS = 2
"""A search on a rack of at most ``QUICK_RACK`` tiles with at most ``QUICK_JOKERS`` jokers in play
(rack and table) is likely quick (:func:`likely_quick`)."""

Runner = Callable[[Callable[[], Any]], Any]
"""Runs a solver search (``runner(work)`` returns ``work()``): the worker model decides how,
e.g. off its request threads, since a search may take its whole budget."""


def run_inline(work: Callable[[], Any]) -> Any:
    """The plain :data:`Runner`: run the search here and now."""
    return work()


def likely_quick(table: game.Table, rack: Counter[Tile]) -> bool:
    """Whether a search on this position likely takes well under a millisecond: a rack of at
    most ``QUICK_RACK`` tiles and at most ``QUICK_JOKERS`` jokers in play, as in ordinary play
    with the standard box (bench/solver.py's positions: a median of 0.1-1 ms). Racks of 27-40
    or the XP box's 4 jokers (bench/solver_tail.py) take several milliseconds, most of which a
    first try of :func:`quick_here` would spend for nothing."""
    if rack.total() > QUICK_RACK:
        return False
    jokers = rack[JOKER] + sum(1 for tiles in table for tile in tiles if tile.is_joker)
    return jokers <= QUICK_JOKERS


def quick_here(
    run: Runner, search: Callable[[float], Solution], *, budget: float, here: float
) -> Solution:
    """``search(seconds)`` within ``budget`` seconds: first where it is asked, for at most
    ``here`` seconds, then, when that is not enough, through ``run`` with what is left.

    Most hints are searches of a fraction of a millisecond, and handing one to a thread and
    back cost about as much again (docs/PERFORMANCE.md, "Sixteenth session"): they answer
    here. The few long ones block the caller (a worker's event loop) for ``here`` at most,
    then go on as before; the options the first try worked out serve the second. The
    answer is the search's either way: exact, or given up when the whole budget ran out.
    """
    left = budget
    if here > 0:
        started = time.perf_counter()
        first = search(min(here, budget))
        if first.status is not SolveStatus.GAVE_UP or here >= budget:
            return first
        left = max(budget - (time.perf_counter() - started), 0.0)
    solution: Solution = run(lambda: search(left))
    return solution


@dataclass(frozen=True, slots=True)
class SteppingAside(game.Autoplay):
    """Bot turns and stalemate proofs, each run through ``run`` (see :data:`Runner`)."""

    run: Runner = run_inline

    def best_play(
        self, table: game.Table, rack: Counter[Tile], melded: bool, rules: Rules
    ) -> Solution:
        solution: Solution = self.run(
            lambda: game.Autoplay.best_play(self, table, rack, melded, rules)
        )
        return solution

    def can_play(
        self, table: game.Table, rack: Counter[Tile], melded: bool, rules: Rules
    ) -> bool | None:
        found: bool | None = self.run(
            lambda: game.Autoplay.can_play(self, table, rack, melded, rules)
        )
        return found
