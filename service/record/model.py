"""The game record, ``rummikub-record/1``, as frozen values (docs/RECORD-FORMAT.md).

A :class:`Record` is one game of a match: its rules, players, the first-player draw, the deal,
every turn and the result. Tiles are kept as codes (``"R7"``, ``"J"``, ``"J=R7"`` on the
table), ``"?"`` where a tile is hidden (a record exported while its game is on).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from service.rules import Rules

__all__ = [
    "FORMAT",
    "HIDDEN",
    "Action",
    "By",
    "Deal",
    "FirstDraw",
    "RecordPlayer",
    "Record",
    "Result",
    "Turn",
]

FORMAT = "rummikub-record/1"
HIDDEN = "?"  # a tile nobody may see yet

Codes = tuple[str, ...]
Sets = tuple[Codes, ...]


class Action(enum.Enum):
    """What a turn entry records."""

    PLAY = "play"
    DRAW = "draw"
    PASS = "pass"
    TIMEOUT = "timeout"
    LEAVE = "leave"
    GIVE = "give"  # time given to the seat's bank (a bank clock): not a turn of its own


class By(enum.Enum):
    """Who acted: the seat's player, the bot playing the seat, or the referee at a deadline."""

    PLAYER = "player"
    BOT = "bot"
    REFEREE = "referee"


@dataclass(frozen=True, slots=True)
class RecordPlayer:
    """A seat as the game started: its name, whether a bot played it, the owner's ``ref``."""

    seat: int
    name: str
    bot: bool
    ref: str | None = None


@dataclass(frozen=True, slots=True)
class FirstDraw:
    """The draw for the first player: each round, the tiles each seat drew, in order."""

    rounds: tuple[tuple[tuple[int, Codes], ...], ...]
    first_seat: int


@dataclass(frozen=True, slots=True)
class Deal:
    """The racks as dealt, the pool in draw order (``pool[0]`` drawn first), and for a
    test-mode setup the table and who had melded at the start."""

    racks: tuple[Codes, ...]
    pool: Codes
    table: Sets = ()
    melded: tuple[bool, ...] = ()

    @property
    def hidden(self) -> bool:
        """Whether some tile of the deal is hidden."""
        return HIDDEN in self.pool or any(HIDDEN in rack for rack in self.racks)


@dataclass(frozen=True, slots=True)
class Turn:
    """One entry: turn ``n`` (from 1) of ``seat``; ``table`` and ``placed`` for a play,
    ``drawn`` for a draw or a timeout, ``reverted`` for a timeout whose draft had changed
    the table (a penalty), ``seconds`` for time given to ``seat`` (by another seat, ``by``
    player, or by the owning app, ``by`` referee); ``at`` is when it ended (epoch seconds).
    Under a bank clock a timeout at the bank's zero is the seat's flag fall."""

    n: int
    seat: int
    action: Action
    by: By
    at: float
    table: Sets = ()
    placed: Codes = ()
    drawn: Codes = ()
    reverted: bool = False
    seconds: int = 0


@dataclass(frozen=True, slots=True)
class Result:
    """How the game ended: the scoring ``reason``, what ended it, the winner (``None``:
    abandoned), each seat's score and the rack each seat was left with."""

    reason: str
    ending: str
    winner: int | None
    scores: tuple[int, ...]
    racks: tuple[Codes, ...]


@dataclass(frozen=True, slots=True)
class Record:
    """One game of a match, from its deal to its result (``None`` while it is on)."""

    match_id: str
    game_number: int
    rules: Rules
    players: tuple[RecordPlayer, ...]
    first_player_draw: FirstDraw | None
    first_seat: int
    started_at: float
    deal: Deal
    turns: tuple[Turn, ...]
    result: Result | None

    @property
    def hidden(self) -> bool:
        """Whether some tile is hidden (the deal or a draw): it cannot be replayed."""
        return self.deal.hidden or any(HIDDEN in turn.drawn for turn in self.turns)
