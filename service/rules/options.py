"""The rule options a match is created with (SPEC section 1), with their defaults."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from service.rules.clock import TURN_CLOCK, Clock
from service.rules.tiles import TileSet

__all__ = [
    "FAILED_TURN_PENALTIES",
    "FirstPlayerJoker",
    "FreedJoker",
    "MatchWinner",
    "Preset",
    "Rules",
    "StalemateEnd",
    "StalemateScoring",
]

# Tiles drawn when a turn runs out with a draft that changed the table: 3 in the official
# rules (000: "draw 3 tiles from the pool as a penalty"), 1 in the Spanish ones (002:
# "tomar una ficha como castigo").
FAILED_TURN_PENALTIES = (3, 1)


class StalemateScoring(enum.Enum):
    """How losers score when nobody empties their rack."""

    DIFFERENCE = "difference"  # minus the difference to the winner's total (000)
    FULL_TOTAL = "full_total"  # minus their whole rack total (003)


class StalemateEnd(enum.Enum):
    """When a game with an empty pool ends."""

    NOBODY_CAN_PLAY = "nobody_can_play"  # default
    FIRST_CANNOT_PLAY = "first_cannot_play"  # option from 000


class MatchWinner(enum.Enum):
    """How the winner of a match is decided."""

    TOTAL_SCORE = "total_score"
    MOST_GAMES = "most_games"  # points break ties


class FirstPlayerJoker(enum.Enum):
    """What a joker drawn for the first player counts as."""

    DRAW_AGAIN = "draw_again"
    THIRTY = "thirty"


class FreedJoker(enum.Enum):
    """Where a joker freed from the table may go that turn (it never goes to a rack)."""

    ANY_SET = "any_set"  # default: any set of the new table
    NEW_SET = "new_set"  # 000's literal text: a set holding no whole set of the table before


class Preset(enum.Enum):
    """A published rule set; :mod:`service.rules.presets` holds what each one sets."""

    OFFICIAL = "official"  # the Sabra rules of 000 (section 1)
    MSO = "mso"  # the Mind Sports Olympiad's two-player tournament rules


@dataclass(frozen=True, slots=True)
class Rules:
    """Every rule option of a match; the defaults are the official Sabra rules."""

    tile_set: TileSet = TileSet.STANDARD
    turn_seconds: int = 60
    initial_meld_points: int = 30
    joker_worth_zero_in_meld: bool = False
    joker_locked_sets: bool = False
    hints: bool = True
    rounds: int = 1
    target_score: int | None = None
    match_winner: MatchWinner = MatchWinner.TOTAL_SCORE
    stalemate_scoring: StalemateScoring = StalemateScoring.DIFFERENCE
    stalemate_end: StalemateEnd = StalemateEnd.NOBODY_CAN_PLAY
    first_player_joker: FirstPlayerJoker = FirstPlayerJoker.DRAW_AGAIN
    redeal_duplicates: bool = False
    failed_turn_penalty: int = 3
    preset: Preset = Preset.OFFICIAL
    clock: Clock = TURN_CLOCK
    freed_joker: FreedJoker = FreedJoker.ANY_SET
    dealt_jokers: int = 0  # jokers dealt to each rack before the random tiles (MSO: 1)
    joker_penalty: int = 30  # what a joker left on a rack costs (MSO: 50)
    never_melded_penalty: int = 0  # 0: the rack's total; else this charge (MSO: 100, see scoring)
    redeal_three_doubles: bool = False  # MSO: a rack dealt 3 doubles may ask for a redeal

    def __post_init__(self) -> None:
        if self.failed_turn_penalty not in FAILED_TURN_PENALTIES:
            raise ValueError(
                f"failed_turn_penalty must be one of {FAILED_TURN_PENALTIES}, "
                f"not {self.failed_turn_penalty!r}"
            )
