"""How time is kept (SPEC section 6): a limit per turn, or a bank per player as on a chess clock.

A :class:`Clock` of type ``bank`` gives each player ``bank_seconds``; the bank runs while its
player is to move. Three ways to soften it, as chess clocks do:

- Fischer increment: ``increment_seconds`` are added after each turn the player ended
  themselves (a play, a draw, a pass), never after a timeout or a flag fall;
- Bronstein delay: the bank runs from the start of the turn, and at its end the player gets
  back the time they used, up to ``delay_seconds`` (so the bank never grows by it);
- simple delay: the bank only starts running ``delay_seconds`` into the turn.

Both delays charge a finished turn the same ``max(0, used - delay)``; they differ while the
turn runs: a Bronstein bank shows every second go and falls at ``bank`` seconds in, a simple
delay's bank stands still for the delay and falls at ``delay + bank``. The functions here
are the arithmetic of one turn; :mod:`service.game.clocks` applies them to a match.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "MAX_BANK_SECONDS",
    "MAX_CLOCK_STEP_SECONDS",
    "Clock",
    "ClockType",
    "Delay",
    "TurnEnd",
    "clock_from_dict",
    "clock_to_dict",
]

MAX_BANK_SECONDS = 7 * 24 * 3600  # a bank of a week, for asynchronous play
MAX_CLOCK_STEP_SECONDS = 3600  # an increment or a delay of an hour at most


class ClockType(enum.Enum):
    """A limit per turn (``turn_seconds``) or a bank per player."""

    TURN = "turn"
    BANK = "bank"


class Delay(enum.Enum):
    """How ``delay_seconds`` spare the bank."""

    BRONSTEIN = "bronstein"  # the time used comes back, up to the delay
    SIMPLE = "simple"  # the bank starts running after the delay


class TurnEnd(enum.Enum):
    """How a turn ended, for the clock: the player ended it, its cap ran out, or its bank."""

    PLAYER = "player"  # a play, a draw or a pass: earns the increment
    TIMEOUT = "timeout"  # the per-turn cap: charged, no increment
    FLAG = "flag"  # the bank reached zero: it stays at zero


@dataclass(frozen=True, slots=True)
class Clock:
    """The clock of a match; the defaults are a per-turn limit, and a 600 s bank with no
    increment and no delay once ``type`` is ``bank``. Raises ``ValueError`` for a negative
    or absurd time."""

    type: ClockType = ClockType.TURN
    bank_seconds: int = 600
    increment_seconds: int = 0
    delay_seconds: int = 0
    delay: Delay = Delay.BRONSTEIN

    def __post_init__(self) -> None:
        if not 1 <= self.bank_seconds <= MAX_BANK_SECONDS:
            raise ValueError(f"bank_seconds must be 1 to {MAX_BANK_SECONDS}")
        for name in ("increment_seconds", "delay_seconds"):
            if not 0 <= getattr(self, name) <= MAX_CLOCK_STEP_SECONDS:
                raise ValueError(f"{name} must be 0 to {MAX_CLOCK_STEP_SECONDS}")

    @property
    def is_bank(self) -> bool:
        """Whether each player has a bank of time."""
        return self.type is ClockType.BANK

    def zero_after(self, bank: float) -> float:
        """Seconds into a turn at which a bank of ``bank`` reaches zero (the flag falls)."""
        if self.delay is Delay.SIMPLE:
            return bank + self.delay_seconds
        return bank

    def charge(self, used: float) -> float:
        """What a turn that lasted ``used`` seconds and ended before the flag costs the bank."""
        return max(0.0, used - self.delay_seconds)

    def running(self, bank: float, used: float) -> float:
        """What a bank of ``bank`` shows ``used`` seconds into its player's turn (never below 0):
        a Bronstein bank counts every second (the delay comes back at the end), a simple
        delay's bank stands still for the delay."""
        spent = used if self.delay is Delay.BRONSTEIN else self.charge(used)
        return max(0.0, bank - max(0.0, spent))

    def after_turn(self, bank: float, used: float, ended: TurnEnd) -> float:
        """The bank after a turn that lasted ``used`` seconds and ended as ``ended``."""
        if ended is TurnEnd.FLAG:
            return 0.0
        left = max(0.0, bank - self.charge(used))
        return left + (self.increment_seconds if ended is TurnEnd.PLAYER else 0)


TURN_CLOCK = Clock()


_BANK_FIELDS = ("bank_seconds", "increment_seconds", "delay_seconds", "delay")


def clock_to_dict(clock: Clock) -> dict[str, object]:
    """The JSON form of ``clock``: ``{"type": "turn"}``, or a bank with every field."""
    if not clock.is_bank:
        return {"type": clock.type.value}
    return {
        "type": clock.type.value,
        "bank_seconds": clock.bank_seconds,
        "increment_seconds": clock.increment_seconds,
        "delay_seconds": clock.delay_seconds,
        "delay": clock.delay.value,
    }


def clock_from_dict(data: Mapping[str, Any]) -> Clock:
    """The clock of its JSON form (omitted fields take their defaults; bank fields without a
    ``type`` make a bank, beside ``"type": "turn"`` they are ignored). Raises ``ValueError``
    for an unknown field or value, or a bad time."""
    unknown = sorted(set(data) - {"type", *_BANK_FIELDS})
    if unknown:
        raise ValueError(f"unknown clock fields: {', '.join(unknown)}")
    inferred = ClockType.BANK.value if set(data) - {"type"} else ClockType.TURN.value
    kind = ClockType(data.get("type", inferred))
    if kind is ClockType.TURN:  # bank fields beside "type": "turn" are ignored
        return TURN_CLOCK
    values = {name: data[name] for name in _BANK_FIELDS[:3] if name in data}
    for name, value in values.items():
        if type(value) is not int:
            raise ValueError(f"{name} is a whole number of seconds")
    return Clock(kind, **values, delay=Delay(data.get("delay", Delay.BRONSTEIN.value)))
