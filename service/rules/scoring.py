"""Scoring one game: going out, or a stalemate when nobody can empty their rack.

Every outcome is zero-sum. A tile left on a rack costs its number, a joker 30
(``rules.joker_penalty``: 50 under the MSO rules). Ties for the lowest rack total in a
stalemate are broken, in order, by the fewest tiles left, then by the seat that would have
played next after the last turn (the player earliest in turn order from ``next_seat``).

A seat's *charge* is what it pays as a loser: its rack total, or, with
``rules.never_melded_penalty`` (MSO: 100), that charge for a player who never made an initial
meld, doubled when the rack they end with holds sets worth the initial meld
(:func:`never_melded_charge`). Scoring functions take the charges worked out beside them.
"""

from __future__ import annotations

import enum
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from service.rules.options import StalemateScoring
from service.rules.tiles import JOKER_PENALTY, Tile

__all__ = [
    "Outcome",
    "Reason",
    "never_melded_charge",
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
    FLAG = "flag"  # the others' flags fell: the one left scores as if they had gone out


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a game ended, who won it (``None``: abandoned) and what each seat scored (sum 0)."""

    reason: Reason
    winner: int | None
    scores: tuple[int, ...]


def rack_total(rack: Iterable[Tile], *, joker: int = JOKER_PENALTY) -> int:
    """Return what ``rack`` costs its holder: numbers at face value, a joker ``joker`` (30)."""
    return sum(joker if tile.is_joker else tile.penalty for tile in rack)


def never_melded_charge(penalty: int, *, could_meld: bool | None) -> int:
    """What a player who never melded pays under ``never_melded_penalty``: ``penalty``, or
    twice it when their rack holds sets worth the initial meld (``could_meld``: True). When
    the solver could not decide (``None``), the lower charge: the higher one needs a proof."""
    return 2 * penalty if could_meld else penalty


def score_went_out(
    racks: Sequence[Iterable[Tile]],
    winner: int,
    *,
    charges: Sequence[int] | None = None,
    reason: Reason = Reason.WENT_OUT,
) -> Outcome:
    """Score a game that ``winner`` ended by emptying their rack (or, ``reason`` FLAG, by
    being the last player whose flag had not fallen).

    Each other seat scores minus its charge (its rack total unless ``charges`` says);
    the winner plus their sum.
    """
    paid = _charges(racks, charges)
    losses = [0 if seat == winner else -paid[seat] for seat in range(len(paid))]
    losses[winner] = -sum(losses)
    return Outcome(reason, winner, tuple(losses))


def score_stalemate(
    racks: Sequence[Iterable[Tile]],
    *,
    scoring: StalemateScoring = StalemateScoring.DIFFERENCE,
    next_seat: int = 0,
    charges: Sequence[int] | None = None,
    out: Collection[int] = (),
) -> Outcome:
    """Score a game that ended with nobody able to play.

    The lowest total (each seat's charge: its rack total unless ``charges`` says) wins,
    among the seats not ``out`` (whose flag fell); ties: fewest tiles, then the earliest
    seat in turn order from ``next_seat``. The others score minus the difference to the
    winner's total, or minus their full total with :attr:`StalemateScoring.FULL_TOTAL`;
    a seat that is out never gains (at worst 0); the winner scores plus the sum.
    """
    held = [list(rack) for rack in racks]
    totals = _charges(held, charges)
    seats = len(held)

    def rank(seat: int) -> tuple[int, int, int]:
        return (totals[seat], len(held[seat]), (seat - next_seat) % seats)

    winner = min((seat for seat in range(seats) if seat not in out), key=rank)
    base = totals[winner] if scoring is StalemateScoring.DIFFERENCE else 0
    scores = [0 if seat == winner else min(0, base - totals[seat]) for seat in range(seats)]
    scores[winner] = -sum(scores)
    return Outcome(Reason.STALEMATE, winner, tuple(scores))


def _charges(racks: Sequence[Iterable[Tile]], charges: Sequence[int] | None) -> list[int]:
    if charges is not None:
        return list(charges)
    return [rack_total(rack) for rack in racks]


def score_abandoned(seats: int) -> Outcome:
    """Score a game that nobody finished because every human left: no winner, all zero."""
    return Outcome(Reason.ABANDONED, None, (0,) * seats)
