"""What verifying a record answers: its :class:`Verdict`, made of :class:`Finding` values
whose codes beyond a refused play's are :class:`RecordFault`'s, and the :class:`Position`
after a turn (see :mod:`service.record.replay`)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from service.game import Match
from service.record.model import Result

__all__ = ["Finding", "Position", "RecordFault", "Verdict", "finding"]


class RecordFault(enum.Enum):
    """What a record gets wrong beyond a refused play; the value is the stable code."""

    DEAL_NOT_TILE_SET = "deal_not_tile_set"
    DEAL_RACK_SIZE = "deal_rack_size"
    DEAL_NOT_FROM_BOX = "deal_table_not_empty"
    FIRST_PLAYER_DRAW_WRONG = "first_player_draw_wrong"
    NOT_YOUR_TURN = "not_your_turn"
    WRONG_ACTOR = "wrong_actor"
    TIME_OUT_OF_ORDER = "time_out_of_order"
    DEADLINE_PASSED = "deadline_passed"
    TIMEOUT_BEFORE_DEADLINE = "timeout_before_deadline"
    TIMEOUT_WITHOUT_LIMIT = "timeout_without_time_limit"
    GIVE_REFUSED = "time_given_refused"
    PLACED_WRONG = "placed_tiles_wrong"
    DRAW_NOT_FROM_POOL = "draw_not_from_pool"
    POOL_EMPTY = "pool_empty"
    POOL_NOT_EMPTY = "pool_not_empty"
    PASS_REFUSED = "pass_refused"
    PASS_UNPROVEN = "pass_unproven"
    SEAT_IS_BOT = "seat_is_bot"
    TURN_AFTER_GAME_END = "turn_after_game_end"
    GAME_NOT_OVER = "game_not_over"
    STALEMATE_UNPROVEN = "stalemate_unproven"
    RESULT_MISSING = "result_missing"
    RESULT_WRONG = "result_wrong"
    SCORE_WRONG = "score_wrong"
    RACKS_WRONG = "racks_left_wrong"


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing wrong: a stable code, a human sentence, and the tiles and numbers it names."""

    code: str
    message: str
    params: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The JSON form, as a refused play's violations are answered."""
        return {"code": self.code, "message": self.message, "params": dict(self.params)}


def finding(fault: RecordFault, message: str, **params: Any) -> Finding:
    """The finding of ``fault``, with its sentence and what it names."""
    return Finding(fault.value, message, params)


@dataclass(frozen=True, slots=True)
class Verdict:
    """What verification found: ``valid``, or the first wrong ``turn`` (0: the deal; ``None``:
    the result) with its findings; ``result`` is the result the rules give, once known."""

    valid: bool
    turn: int | None = None
    violations: tuple[Finding, ...] = ()
    result: Result | None = None

    @property
    def part(self) -> str | None:
        """Which part is wrong: ``"deal"``, ``"turn"`` or ``"result"`` (``None``: valid)."""
        if self.valid:
            return None
        return "result" if self.turn is None else "deal" if self.turn == 0 else "turn"


@dataclass(frozen=True, slots=True)
class Position:
    """The game after turn ``turn``: the match as the game core holds it, and its result
    once over."""

    turn: int
    match: Match
    result: Result | None
