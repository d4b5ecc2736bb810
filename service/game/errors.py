"""Why the match state machine refuses a transition.

Exception tree (each class carries a stable ``kind``, the end of the problem ``type``)::

    GameError                    every refusal; the match is left unchanged
    ├── InvalidMatch (ValueError)    players or rules a match cannot start with
    │   └── BadSetup                 a test-mode setup the box or the rules cannot produce
    ├── UnknownSeat (LookupError)    a seat number the match does not have
    ├── NotYourTurn                  another seat is playing
    ├── WrongPhase                   not possible in this phase of the match
    │   ├── DeadlinePassed           the turn's deadline has passed: settle the match first
    │   ├── PoolEmpty                a draw with an empty pool: play or pass instead
    │   ├── PoolNotEmpty             a pass with tiles left in the pool: draw instead
    │   ├── MatchCanceled            the match's owner canceled it: nothing more happens
    │   └── NobodyToRematch          every person left the match: a rematch would seat only bots
    ├── SeatIsBot                    a bot plays that seat (from the start, or since it left)
    ├── SeatReissued                 the owner gave the seat a token: a seat token of the match
    │                                before it no longer claims it (a rematch)
    ├── PassRefused                  a pass although a legal play exists (or none is proven)
    ├── RuleNotInForce               the match's rules have no such thing (a bank, a redeal)
    ├── RedealRefused                a redeal asked for by a rack without 3 doubles
    └── BadTimeGift (ValueError)     time given to oneself, or outside 1 to 3600 seconds

A play or a draft that breaks a rule raises :class:`service.rules.IllegalTurn`
with its violations; :class:`MatchDecodeError` (a ``ValueError``) means stored
state could not be read back.
"""

from __future__ import annotations

__all__ = [
    "BadSetup",
    "BadTimeGift",
    "DeadlinePassed",
    "GameError",
    "InvalidMatch",
    "MatchCanceled",
    "MatchDecodeError",
    "NobodyToRematch",
    "NotYourTurn",
    "PassRefused",
    "PoolEmpty",
    "PoolNotEmpty",
    "RedealRefused",
    "RuleNotInForce",
    "SeatIsBot",
    "SeatReissued",
    "UnknownSeat",
    "WrongPhase",
]


class GameError(Exception):
    """Base of every refused transition; ``kind`` is its stable code."""

    kind = "game-error"


class InvalidMatch(GameError, ValueError):
    """Players or rules a match cannot be created with (e.g. 5 players on the standard set)."""

    kind = "invalid-match"


class BadSetup(InvalidMatch):
    """A test-mode setup that the box or the rules cannot produce."""

    kind = "bad-setup"


class UnknownSeat(GameError, LookupError):
    """A seat number outside the match."""

    kind = "unknown-seat"


class NotYourTurn(GameError):
    """The seat acting is not the seat whose turn it is."""

    kind = "not-your-turn"


class WrongPhase(GameError):
    """The transition is not possible in this phase (game over, match finished...)."""

    kind = "wrong-phase"


class DeadlinePassed(WrongPhase):
    """The turn's deadline has passed and :func:`settle` has not been applied yet."""

    kind = "deadline-passed"


class PoolEmpty(WrongPhase):
    """A draw was asked for with an empty pool: the player must play or pass."""

    kind = "pool-empty"


class PoolNotEmpty(WrongPhase):
    """A pass was asked for while the pool still holds tiles: the player must play or draw."""

    kind = "pool-not-empty"


class MatchCanceled(WrongPhase):
    """The match was canceled by its owner: every later move is refused."""

    kind = "match-canceled"


class NobodyToRematch(WrongPhase):
    """A rematch of a match every person left: it would seat only bots, play itself and end."""

    kind = "nobody-to-rematch"


class SeatIsBot(GameError):
    """The seat is played by a bot: it cannot leave, and has no token to reissue."""

    kind = "seat-is-bot"


class SeatReissued(GameError):
    """The owning app gave the seat a new token: a seat token of the match before (a rematch's
    first match) no longer claims it. A reissue by the owner wins."""

    kind = "seat-reissued"


class PassRefused(GameError):
    """A pass was asked for although the solver found a legal play, or could not rule."""

    kind = "pass-refused"


class RuleNotInForce(GameError):
    """The match's rules have no such thing: time given without a bank clock, a redeal
    asked for under rules that have none."""

    kind = "rule-not-in-force"


class RedealRefused(GameError):
    """A redeal asked for by a seat whose dealt rack does not hold 3 doubles."""

    kind = "redeal-refused"


class BadTimeGift(GameError, ValueError):
    """Time given by a seat to itself, or a number of seconds outside 1 to 3600."""

    kind = "bad-time-gift"


class MatchDecodeError(ValueError):
    """Stored match state or events that cannot be decoded."""

    kind = "corrupt-state"
