"""Scoring one game: going out, or a stalemate when nobody can empty their rack.

Every outcome is zero-sum. A tile left on a rack costs its number, a joker 30.
Ties for the lowest rack total in a stalemate are broken, in order, by the
fewest tiles left, then by the seat that would have played next after the last
turn (the player earliest in turn order from ``next_seat``).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from service.rules.options import StalemateScoring
from service.rules.tiles import Tile

__all__ = [
    "Outcome",
    "Reason",
    "rack_total",
    "score_abandoned",
    "score_stalemate",
    "score_went_out",
]


class Reason(enum.Enum):
    """How a game ended."""

    WENT_OUT = "went_out"
    STALEMATE = "stalemate"
    ABANDONED = "abandoned"  # every human left: nobody wins, nobody scores


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a game ended, who won it (``None``: abandoned) and what each seat scored (sum 0)."""

    reason: Reason
    winner: int | None
    scores: tuple[int, ...]


def rack_total(rack: Iterable[Tile]) -> int:
    """Return what ``rack`` costs its holder: numbers at face value, jokers 30."""
    return sum(tile.penalty for tile in rack)


def score_went_out(racks: Sequence[Iterable[Tile]], winner: int) -> Outcome:
    """Score a game that ``winner`` ended by emptying their rack.

    Each other seat scores minus its rack total; the winner plus their sum.
    """
    losses = [0 if seat == winner else -rack_total(rack) for seat, rack in enumerate(racks)]
    losses[winner] = -sum(losses)
    return Outcome(Reason.WENT_OUT, winner, tuple(losses))


def score_stalemate(
    racks: Sequence[Iterable[Tile]],
    *,
    scoring: StalemateScoring = StalemateScoring.DIFFERENCE,
    next_seat: int = 0,
) -> Outcome:
    """Score a game that ended with nobody able to play.

    The lowest rack total wins (ties: fewest tiles, then the earliest seat in
    turn order from ``next_seat``). The others score minus the difference to
    the winner's total, or minus their full total with
    :attr:`StalemateScoring.FULL_TOTAL`; the winner scores plus the sum.
    """
    held = [list(rack) for rack in racks]
    totals = [rack_total(rack) for rack in held]
    seats = len(held)

    def rank(seat: int) -> tuple[int, int, int]:
        return (totals[seat], len(held[seat]), (seat - next_seat) % seats)

    winner = min(range(seats), key=rank)
    base = totals[winner] if scoring is StalemateScoring.DIFFERENCE else 0
    scores = [0 if seat == winner else base - totals[seat] for seat in range(seats)]
    scores[winner] = -sum(scores)
    return Outcome(Reason.STALEMATE, winner, tuple(scores))


def score_abandoned(seats: int) -> Outcome:
    """Score a game that nobody finished because every human left: no winner, all zero."""
    return Outcome(Reason.ABANDONED, None, (0,) * seats)
