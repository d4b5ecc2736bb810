"""Notifications for apps: what a commit tells the owning app (webhooks and the app feed).

Pure: from a committed change (the match after it and the events it made) to the
notifications to deliver, written in the same atomic commit as the change
(:mod:`service.store.notify`). Only owned matches notify (an anonymous match has no app).

Events and their ``data`` (see ``../shared/SPEC.md`` section 3 and docs/CLIENTS.md):

- ``turn.started``: ``match_id``, ``version``, ``seat``, ``ref``, ``deadline`` (epoch
  seconds or null) when a human seat's turn begins (a bot's turn is played by the referee);
- ``turn.expiring``: the same fields, sent by the sweeper when the larger of 10 s and a tenth
  of the turn is left (:func:`expiring_at`), unless the turn has ended before;
- ``game.ended``: ``match_id``, ``version``, ``game_number``, ``scores``, ``winner_seat``;
- ``match.finished``, ``player.left`` (with ``seat``, ``ref``), ``match.canceled``: ``match_id``
  and ``version``.

Each body is ``{"type", "timestamp" (ISO 8601, UTC), "data"}``, the Standard Webhooks shape.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from service import jsoncodec
from service.game import Event, EventType, Match, Status

__all__ = [
    "EVENT_TYPES",
    "Notice",
    "Notices",
    "body",
    "expiring_at",
    "notices_of",
]

EVENT_TYPES = (
    "turn.started",
    "turn.expiring",
    "game.ended",
    "match.finished",
    "player.left",
    "match.canceled",
)
WARN_MIN_SECONDS = 10.0
_TURN_ENDS = frozenset(
    {
        EventType.GAME_STARTED,
        EventType.PLAYED,
        EventType.DREW,
        EventType.PASSED,
        EventType.TURN_TIMED_OUT,
    }
)
_SIMPLE = {
    EventType.MATCH_FINISHED: "match.finished",
    EventType.MATCH_CANCELED: "match.canceled",
}


@dataclass(frozen=True)
class Notice:
    """One notification: its type and its body (the JSON text delivered and streamed)."""

    type: str
    body: str


@dataclass(frozen=True)
class Notices:
    """What a commit tells its app: ``notices`` in order, and the turn's warning:
    ``warn`` is ``None`` to leave it as it is, ``()`` to drop it, or (when, notice)."""

    app: str
    notices: tuple[Notice, ...]
    warn: tuple[()] | tuple[float, Notice] | None


def body(event_type: str, at: float, data: dict[str, Any]) -> str:
    """The JSON body of a notification (one line)."""
    stamp = datetime.fromtimestamp(at, UTC).isoformat(timespec="milliseconds")
    return jsoncodec.dumps(
        {"type": event_type, "timestamp": stamp.replace("+00:00", "Z"), "data": data}
    ).decode()


def expiring_at(match: Match) -> float | None:
    """When ``turn.expiring`` is due for the current turn (None: no time limit)."""
    if match.turn_deadline is None:
        return None
    turn = match.turn_deadline - match.turn_started
    return match.turn_deadline - max(WARN_MIN_SECONDS, turn / 10)


def notices_of(match: Match, events: Sequence[Event], now: float) -> Notices | None:
    """The notifications of a commit that leaves ``match`` after ``events``; ``None`` for
    an anonymous match or a commit that changes nothing an app hears of."""
    if match.owner is None:
        return None
    found: list[Notice] = []
    turn_moved = False
    for event in events:
        data: dict[str, Any] = {"match_id": match.id, "version": event.version}
        if event.type in _TURN_ENDS:
            turn_moved = True
        if event.type is EventType.GAME_OVER:
            data["game_number"] = event.data.get("game_number")
            data["scores"] = event.data.get("scores")
            data["winner_seat"] = event.data.get("winner")
            found.append(Notice("game.ended", body("game.ended", event.at, data)))
        elif event.type is EventType.PLAYER_LEFT and event.seat is not None:
            data["seat"] = event.seat
            data["ref"] = match.players[event.seat].ref
            found.append(Notice("player.left", body("player.left", event.at, data)))
        elif event.type in _SIMPLE:
            kind = _SIMPLE[event.type]
            found.append(Notice(kind, body(kind, event.at, data)))
    warn: tuple[()] | tuple[float, Notice] | None = None
    if match.status is not Status.PLAYING:
        warn = ()
    elif turn_moved:
        warn = ()
        player = match.players[match.current_seat]
        if not player.bot:
            data = {
                "match_id": match.id,
                "version": match.version,
                "seat": match.current_seat,
                "ref": player.ref,
                "deadline": match.turn_deadline,
            }
            found.append(Notice("turn.started", body("turn.started", now, data)))
            when = expiring_at(match)
            if when is not None:
                warn = (when, Notice("turn.expiring", body("turn.expiring", when, data)))
    if not found and warn is None:
        return None
    return Notices(match.owner, tuple(found), warn)
