"""Notifications for apps: what a commit tells the owning app (webhooks and the app feed).

Pure: from a committed change (the match after it and the events it made) to the
notifications to deliver, written in the same atomic commit as the change
(:mod:`service.store.outbox`). Only owned matches notify (an anonymous match has no app).

Events and their ``data`` (see ``../shared/SPEC.md`` section 3 and docs/CLIENTS.md):

- ``turn.started``: ``match_id``, ``version``, ``seat``, ``ref``, ``deadline`` (epoch
  seconds or null) when a human seat's turn begins (a bot's turn is played by the referee);
- ``turn.expiring``: the same fields, sent by the sweeper when the larger of 10 s and a tenth
  of the turn is left (:func:`expiring_at`), unless the turn has ended before;
- ``game.ended``: ``match_id``, ``version``, ``game_number``, ``scores``, ``winner_seat``;
- ``match.finished``, ``player.left`` (with ``seat``, ``ref``), ``match.canceled``: ``match_id``
  and ``version``.

Each body is ``{"type", "timestamp" (ISO 8601, UTC), "data"}``, the Standard Webhooks shape.

**Stored compact.** The outbox keeps a notification 7 days (the feed resumes from it), and a
delivery keeps it 7 days more, so they hold its compact form (:meth:`Notice.compact`), not its
body: a JSON array of a letter for the type, the timestamp in milliseconds and the values of
``data`` in their fixed order, without the match id (the entry holds it)::

    ["s",1796144758062,3,2,"user-5-2",1796144818.062325]       about 50 bytes, not 190

:func:`expand` makes the same body again, byte for byte (the same values through the same
JSON writer), so a retry sends what the first attempt sent. A ``data`` that does not have
its type's fields in order is kept as its whole body (text starting with ``{``), which
:func:`expand` answers as it is; so does what was stored before the compact form.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cached_property
from typing import Any

from service import jsoncodec
from service.game import Event, EventType, Match, Status

__all__ = [
    "EVENT_TYPES",
    "PING",
    "Notice",
    "NoticeType",
    "Notices",
    "body",
    "expand",
    "expiring_at",
    "notices_of",
    "ping_body",
    "sample_body",
]


class NoticeType(enum.StrEnum):
    """The webhook event types an app subscribes to; the values travel in the bodies and in
    ``POST /v1/webhooks`` and never change."""

    TURN_STARTED = "turn.started"
    TURN_EXPIRING = "turn.expiring"
    GAME_ENDED = "game.ended"
    MATCH_FINISHED = "match.finished"
    PLAYER_LEFT = "player.left"
    MATCH_CANCELED = "match.canceled"


EVENT_TYPES = tuple(kind.value for kind in NoticeType)
"""The webhook event types' values, in their order (a webhook registered without a list of
events subscribes to them all)."""
PING = "webhook.ping"
"""What ``POST /v1/webhooks/{id}/ping`` sends: a check that the receiver answers and verifies."""
SAMPLE_MATCH = "sample_match"
WARN_MIN_SECONDS = 10.0
_TURN_ENDS = frozenset(
    {
        EventType.GAME_STARTED,
        EventType.PLAYED,
        EventType.DREW,
        EventType.PASSED,
        EventType.TURN_TIMED_OUT,
        EventType.FLAG_FELL,
    }
)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)
# Each type's letter in the compact form and the fields of its ``data`` after ``match_id``,
# in the order the body writes them. Never change a letter or an order: stored entries use
# them (add a type with a new letter).
_LAYOUTS = {
    NoticeType.TURN_STARTED: ("s", ("version", "seat", "ref", "deadline")),
    NoticeType.TURN_EXPIRING: ("x", ("version", "seat", "ref", "deadline")),
    NoticeType.GAME_ENDED: ("g", ("version", "game_number", "scores", "winner_seat")),
    NoticeType.MATCH_FINISHED: ("f", ("version",)),
    NoticeType.PLAYER_LEFT: ("l", ("version", "seat", "ref")),
    NoticeType.MATCH_CANCELED: ("c", ("version",)),
}
_TYPES = {letter: (kind, fields) for kind, (letter, fields) in _LAYOUTS.items()}
_SIMPLE = {
    EventType.MATCH_FINISHED: NoticeType.MATCH_FINISHED,
    EventType.MATCH_CANCELED: NoticeType.MATCH_CANCELED,
}


@dataclass(frozen=True)
class Notice:
    """One notification: its type, when (epoch seconds) and its ``data``."""

    type: NoticeType
    at: float
    data: dict[str, Any]

    @cached_property
    def body(self) -> str:
        """The JSON text delivered and streamed."""
        return body(self.type, self.at, self.data)

    def compact(self, match_id: str) -> str:
        """What the outbox stores of it, a notification of ``match_id`` (see the module):
        :func:`expand` makes :attr:`body` from it and the match id."""
        layout = _LAYOUTS.get(self.type)
        if (
            layout is None
            or list(self.data) != ["match_id", *layout[1]]
            or self.data["match_id"] != match_id
        ):
            return self.body
        letter, fields = layout
        values = [self.data[name] for name in fields]
        return jsoncodec.dumps([letter, _millis(self.at), *values]).decode()


@dataclass(frozen=True)
class Notices:
    """What a commit tells its app: ``notices`` in order, and the turn's warning:
    ``warn`` is ``None`` to leave it as it is, ``()`` to drop it, or (when, notice)."""

    app: str
    match_id: str
    notices: tuple[Notice, ...]
    warn: tuple[()] | tuple[float, Notice] | None


# A turn's warning: () to drop it, or (when it is due on the shared clock, the notification).
TurnWarning = tuple[()] | tuple[float, Notice]


def body(event_type: str, at: float, data: dict[str, Any]) -> str:
    """The JSON body of a notification (one line)."""
    return _body(event_type, datetime.fromtimestamp(at, UTC), data)


def _body(event_type: str, when: datetime, data: dict[str, Any], *, test: bool = False) -> str:
    stamp = when.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    held: dict[str, Any] = {"type": event_type, "timestamp": stamp, "data": data}
    if test:
        held["test"] = True
    return jsoncodec.dumps(held).decode()


def ping_body(webhook_id: str, at: float) -> str:
    """The body of a ``webhook.ping`` to ``webhook_id``: ``data`` names the webhook."""
    return _body(PING, datetime.fromtimestamp(at, UTC), {"webhook_id": webhook_id})


def sample_body(event_type: str, at: float) -> str:
    """A sample notification of ``event_type`` (one of :data:`EVENT_TYPES`) at ``at``, marked
    ``"test": true``, of the match ``sample_match``: every field its type carries, with
    made-up values (seat 0 whose ref is ``sample-user``, a game won by seat 0)."""
    values: dict[str, Any] = {
        "version": 7,
        "seat": 0,
        "ref": "sample-user",
        "deadline": round(at + 60, 3),
        "game_number": 1,
        "scores": [21, -21],
        "winner_seat": 0,
    }
    data = {"match_id": SAMPLE_MATCH} | {
        name: values[name] for name in _LAYOUTS[NoticeType(event_type)][1]
    }
    return _body(event_type, datetime.fromtimestamp(at, UTC), data, test=True)


def _millis(at: float) -> int:
    """The whole milliseconds of ``at`` as the body's timestamp shows them."""
    return (datetime.fromtimestamp(at, UTC) - _EPOCH) // _MS


def expand(match_id: str, stored: str) -> tuple[str, str]:
    """The type and body of a notification of ``match_id`` stored as ``stored`` (its
    :meth:`Notice.compact`, or a whole body); raise ValueError when it is neither."""
    if stored.startswith("{"):
        held = jsoncodec.loads(stored)
        return str(held["type"]), stored
    letter, millis, *values = jsoncodec.loads(stored)
    kind, fields = _TYPES[letter]
    if len(values) != len(fields):
        raise ValueError(f"a stored {kind} notification has {len(values)} fields")
    data = {"match_id": match_id, **dict(zip(fields, values, strict=True))}
    return kind, _body(kind, _EPOCH + millis * _MS, data)


def expiring_at(match: Match) -> float | None:
    """When ``turn.expiring`` is due for the current turn (None: no time limit)."""
    if match.turn_deadline is None:
        return None
    turn = match.turn_deadline - match.turn_started
    return match.turn_deadline - max(WARN_MIN_SECONDS, turn / 10)


def notices_of(match: Match, events: Sequence[Event], now: float) -> Notices | None:
    """The notifications of a commit that leaves ``match`` after ``events``, made at ``now``
    on the shared clock; ``None`` for an anonymous match or a commit that changes nothing an
    app hears of.

    One match, one clock: every notification carries the match's own time (its events',
    its turn's start, its warning's), which a test-mode advance runs ahead of the shared
    clock by ``match.clock_offset``; only the warning's due time, which the sweeper compares
    with Redis's clock, is on the shared clock.
    """
    if match.owner is None:
        return None
    found: list[Notice] = []
    turn_moved = retimed = False
    advanced_by = 0.0
    for event in events:
        data: dict[str, Any] = {"match_id": match.id, "version": event.version}
        if event.type in _TURN_ENDS:
            turn_moved = True
        elif event.type is EventType.CLOCK_ADVANCED:
            seconds = event.data.get("seconds")
            advanced_by += seconds if isinstance(seconds, int | float) else 0.0
        elif event.type is EventType.TIME_GIVEN and event.seat == match.current_seat:
            retimed = True  # the running turn's bank got time: its warning moves
        if event.type is EventType.GAME_OVER:
            data["game_number"] = event.data.get("game_number")
            data["scores"] = event.data.get("scores")
            data["winner_seat"] = event.data.get("winner")
            found.append(Notice(NoticeType.GAME_ENDED, event.at, data))
        elif event.type is EventType.PLAYER_LEFT and event.seat is not None:
            data["seat"] = event.seat
            data["ref"] = match.players[event.seat].ref
            found.append(Notice(NoticeType.PLAYER_LEFT, event.at, data))
        elif event.type in _SIMPLE:
            kind = _SIMPLE[event.type]
            found.append(Notice(kind, event.at, data))
    warn: TurnWarning | None = None
    if match.status is not Status.PLAYING:
        warn = ()
    elif turn_moved or retimed:
        warn = ()
        player = match.players[match.current_seat]
        if not player.bot:
            data = _turn_data(match)
            if turn_moved:
                found.append(Notice(NoticeType.TURN_STARTED, match.turn_started, data))
            warn = _warning(match, data)
    elif advanced_by and not match.players[match.current_seat].bot:
        warn = _rewarn(match, now, advanced_by)
    if not found and warn is None:
        return None
    return Notices(match.owner, match.id, tuple(found), warn)


def _turn_data(match: Match) -> dict[str, Any]:
    player = match.players[match.current_seat]
    return {
        "match_id": match.id,
        "version": match.version,
        "seat": match.current_seat,
        "ref": player.ref,
        "deadline": match.turn_deadline,
    }


def _warning(match: Match, data: dict[str, Any]) -> TurnWarning:
    """The current turn's ``turn.expiring``: due when the shared clock reaches the match's
    warning time less the match's lead (``clock_offset``), dated by the match's clock."""
    when = expiring_at(match)
    if when is None:
        return ()
    return (when - match.clock_offset, Notice(NoticeType.TURN_EXPIRING, when, data))


def _rewarn(match: Match, now: float, advanced_by: float) -> TurnWarning | None:
    """After the match's clock ran ``advanced_by`` seconds ahead with the turn going on: its
    warning falls due that much sooner on the shared clock, at once if the advance passed it.
    One already due before the advance (so sent, or on its way) is left as it is (None)."""
    when = expiring_at(match)
    if when is None or when - (match.clock_offset - advanced_by) <= now:
        return None
    return _warning(match, _turn_data(match))
