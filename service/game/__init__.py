"""The match state machine: pure Python, importing only the standard library and the rules.

A :class:`Match` is frozen; every transition is a function that takes it (with the clock
as ``now`` and randomness as ``rng`` where needed) and returns a :class:`Transition`:
the new match and the public :class:`Event` records it produced, one version each.

- creating: :func:`new_match`, :func:`from_setup` (test mode), :func:`next_game`;
- a turn: :func:`play`, :func:`draw`, :func:`pass_turn`, :func:`save_draft`;
- a match's life: :func:`leave` (a bot takes the seat), :func:`cancel`, :func:`rematch`
  and :func:`record_rematch`;
- time: :func:`settle` handles every passed deadline (a flag fall too), in order;
  :func:`advance` also plays bot turns and ends a stalemate the solver proves;
  :func:`give_time` adds to a bank;
- the MSO rules: :func:`redeal`;
- the solver's proof: :func:`stalemate_if_nobody_can_play`;
- storage: :func:`to_dict`, :func:`from_dict`, :func:`event_to_dict`, :func:`event_from_dict`;
- clients: :func:`public_view`, :func:`private_view`, :func:`owner_view` (with refs).

Errors are drawn in :mod:`service.game.errors`; a play that breaks the rules raises
:class:`service.rules.IllegalTurn`.
"""

from service.game.autoplay import Autoplay, advance
from service.game.clocks import MAX_GIFT_SECONDS, give_time, time_left
from service.game.codec import (
    FORMAT,
    event_from_dict,
    event_to_dict,
    from_dict,
    rules_from_dict,
    rules_to_dict,
    to_dict,
)
from service.game.deal import HAND_SIZE
from service.game.ending import match_winner
from service.game.errors import (
    BadSetup,
    BadTimeGift,
    DeadlinePassed,
    GameError,
    InvalidMatch,
    MatchCanceled,
    MatchDecodeError,
    NobodyToRematch,
    NotYourTurn,
    PassRefused,
    PoolEmpty,
    PoolNotEmpty,
    RedealRefused,
    RuleNotInForce,
    SeatIsBot,
    SeatReissued,
    UnknownSeat,
    WrongPhase,
)
from service.game.lifecycle import (
    cancel,
    leave,
    record_rematch,
    reissue_tokens,
    rematch,
    rematch_players,
    require_human,
)
from service.game.match import MAX_REF_LENGTH, MAX_TURN_SECONDS, from_setup, new_match, next_game
from service.game.redeal import redeal
from service.game.state import *  # the match and its values: state.__all__
from service.game.timers import advance_clock, draft_changes_table, settle
from service.game.turns import draw, pass_turn, play, save_draft, stalemate_if_nobody_can_play
from service.game.views import owner_view, private_view, public_view, summary

__all__ = [
    "Autoplay",
    "advance",
    "advance_clock",
    "FORMAT",
    "HAND_SIZE",
    "BadSetup",
    "BadTimeGift",
    "CanPlay",
    "DeadlinePassed",
    "Ending",
    "Event",
    "EventType",
    "GameError",
    "GameResult",
    "InvalidMatch",
    "MAX_GIFT_SECONDS",
    "MAX_REF_LENGTH",
    "MAX_TURN_SECONDS",
    "Match",
    "MatchCanceled",
    "NobodyToRematch",
    "MatchDecodeError",
    "NotYourTurn",
    "PassRefused",
    "Player",
    "PlayerSpec",
    "PoolEmpty",
    "PoolNotEmpty",
    "RedealRefused",
    "RuleNotInForce",
    "SeatIsBot",
    "SeatReissued",
    "Setup",
    "Status",
    "Table",
    "Transition",
    "UnknownSeat",
    "WrongPhase",
    "cancel",
    "draft_changes_table",
    "draw",
    "event_from_dict",
    "event_to_dict",
    "from_dict",
    "from_setup",
    "give_time",
    "leave",
    "match_winner",
    "new_match",
    "next_game",
    "owner_view",
    "pass_turn",
    "play",
    "private_view",
    "public_view",
    "record_rematch",
    "redeal",
    "reissue_tokens",
    "rematch",
    "rematch_players",
    "require_human",
    "rules_from_dict",
    "rules_to_dict",
    "save_draft",
    "settle",
    "stalemate_if_nobody_can_play",
    "summary",
    "time_left",
    "to_dict",
]
