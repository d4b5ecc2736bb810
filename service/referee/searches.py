"""Where the solver's searches run: the worker model passes a :data:`Runner`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from service import game
from service.rules import Rules, Tile
from service.rules.solver import Solution

__all__ = ["Runner", "SteppingAside", "run_inline"]

Runner = Callable[[Callable[[], Any]], Any]
"""Runs a solver search (``runner(work)`` returns ``work()``): the worker model decides how,
e.g. off its request threads, since a search may take its whole budget."""


def run_inline(work: Callable[[], Any]) -> Any:
    """The plain :data:`Runner`: run the search here and now."""
    return work()


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
