"""The state of a match, frozen: players, pool, table, whose turn, and what has happened.

Every change goes through a transition function that returns a :class:`Transition`:
the new :class:`Match` and the public :class:`Event` records it produced. Each event
raises the match's ``version`` by one and carries the version it produced, so the
n-th event of a match's log has version n and ``match.version`` is the version of
its last event.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

from service.game.frozen import maker
from service.rules import COLOURS, Outcome, Rules, Tile, codes_of, parse_tiles

__all__ = [
    "CanPlay",
    "Dealt",
    "Ending",
    "Event",
    "EventType",
    "GameResult",
    "Match",
    "Player",
    "PlayerSpec",
    "Setup",
    "Status",
    "Table",
    "Transition",
    "as_table",
    "sorted_rack",
    "table_codes",
]

Table = tuple[tuple[Tile, ...], ...]

CanPlay = Callable[[Table, Counter[Tile], bool, Rules], bool | None]
"""The solver's hook: ``can_play(table, rack, melded, rules)`` says whether a legal play
exists (``True``), none does (``False``) or it cannot tell (``None``)."""


class Status(enum.Enum):
    """The phase of a match."""

    PLAYING = "playing"
    GAME_OVER = "game_over"  # a game has ended; next_game starts the next one
    FINISHED = "finished"  # the last game has ended, or every human left (abandoned)
    CANCELED = "canceled"  # its owner called it off; nothing more happens


class Ending(enum.Enum):
    """What ended a game (the :class:`service.rules.Reason` says how it was scored)."""

    WENT_OUT = "went_out"  # a player emptied their rack
    ALL_PASSED = "all_passed"  # with an empty pool, every player passed in a row
    FIRST_CANNOT_PLAY = "first_cannot_play"  # option: the first pass with an empty pool
    NOBODY_CAN_PLAY = "nobody_can_play"  # the solver proved that no player can play
    FLAG = "flag"  # every other player's flag fell (bank clock)
    ABANDONED = "abandoned"  # the last human seat left


@dataclass(frozen=True, slots=True)
class PlayerSpec:
    """Who sits at a seat when a match is created; ``ref`` is the owning app's id for them."""

    name: str
    bot: bool = False
    ref: str | None = None


@dataclass(frozen=True, slots=True)
class Player:
    """A seat: its rack (sorted, see :func:`sorted_rack`), initial meld and match record.

    A seat whose player left is played by a bot from then on (``bot`` and ``left``).
    """

    name: str
    bot: bool
    rack: tuple[Tile, ...]
    melded: bool = False
    score: int = 0  # the match total
    games_won: int = 0
    left: bool = False
    ref: str | None = None  # the owning app's id for this player; never shown to others


@dataclass(frozen=True, slots=True)
class GameResult:
    """A finished game: its number, how it was scored and what ended it."""

    game_number: int
    outcome: Outcome
    ending: Ending


@dataclass(frozen=True, slots=True)
class Dealt:
    """What a game started from, kept for its record: each rack as dealt, the pool in draw
    order, and for a test-mode setup the table and who had melded (``melded`` empty: nobody)."""

    racks: tuple[tuple[Tile, ...], ...]
    pool: tuple[Tile, ...]
    table: Table = ()
    melded: tuple[bool, ...] = ()


@dataclass(frozen=True, slots=True)
class Match:
    """The whole state of a match; ``pool`` is secret and in draw order (``pool[0]`` next)."""

    id: str
    rules: Rules
    players: tuple[Player, ...]
    pool: tuple[Tile, ...]
    table: Table
    draft: Table | None
    status: Status
    current_seat: int
    turn_started: float
    turn_deadline: float | None
    game_number: int
    game_first_seat: int
    passes_in_a_row: int
    version: int
    outcomes: tuple[GameResult, ...]
    seed: int | None
    created_at: float
    winner: int | None = None  # the match winner, once finished (None: abandoned)
    owner: str | None = None  # the app that created the match (None: anonymous)
    rematch_id: str | None = None  # the match that follows this one, once asked for
    clock_offset: float = 0.0  # test mode: seconds this match's clock runs ahead of the server's
    # the deal of the game being played, deals[game_number - 1]; a game's game_over event takes
    # its deal into the public log, and earlier games' are dropped here (None, or cut off)
    deals: tuple[Dealt | None, ...] = ()
    owner_reissued: tuple[int, ...] = ()  # seats whose token the owning app handed out
    banks: tuple[float, ...] = ()  # bank clock: each seat's bank (see service.game.clocks)
    flagged: tuple[int, ...] = ()  # the seats whose flag fell this game: out of it
    turns_played: int = 0  # turns ended in this game (a redeal comes before the first)

    @property
    def is_over(self) -> bool:
        """Whether nothing more can happen: finished (or abandoned) or canceled."""
        return self.status in (Status.FINISHED, Status.CANCELED)

    @property
    def humans(self) -> tuple[int, ...]:
        """The seats a person still plays (neither a bot nor left)."""
        return tuple(seat for seat, player in enumerate(self.players) if not player.bot)

    @property
    def games_total(self) -> int:
        """How many games the match lasts without a target score: rounds × players."""
        return self.rules.rounds * len(self.players)

    def next_seat(self, seat: int) -> int:
        """The seat that plays after ``seat`` (clockwise)."""
        return (seat + 1) % len(self.players)

    @property
    def in_game(self) -> tuple[int, ...]:
        """The seats still in the game: every seat but those whose flag fell."""
        return tuple(seat for seat in range(len(self.players)) if seat not in self.flagged)

    def next_in_game(self, seat: int) -> int:
        """The seat still in the game that plays after ``seat`` (clockwise)."""
        following = self.next_seat(seat)
        while following in self.flagged and following != seat:
            following = self.next_seat(following)
        return following

    def with_player(self, seat: int, player: Player, **changes: Any) -> Match:
        """Return the match with ``player`` at ``seat``, and ``changes`` to its other fields
        made in the same copy."""
        players = list(self.players)
        players[seat] = player
        return replace(self, players=tuple(players), **changes)


class EventType(enum.StrEnum):
    """What an event records; the values travel in the event log and never change."""

    MATCH_CREATED = "match_created"
    FIRST_PLAYER_DRAW = "first_player_draw"
    GAME_STARTED = "game_started"
    PLAYED = "played"
    DREW = "drew"
    DRAFT_UPDATED = "draft_updated"
    TURN_TIMED_OUT = "turn_timed_out"
    PASSED = "passed"
    GAME_OVER = "game_over"
    MATCH_FINISHED = "match_finished"
    PLAYER_LEFT = "player_left"
    MATCH_CANCELED = "match_canceled"
    REMATCH_CREATED = "rematch_created"
    TOKENS_REISSUED = "tokens_reissued"
    CLOCK_ADVANCED = "clock_advanced"  # test mode only
    FLAG_FELL = "flag_fell"
    TIME_GIVEN = "time_given"
    REDEALT = "redealt"


@dataclass(frozen=True, slots=True)
class Event:
    """One public record of the event log; ``data`` is JSON-ready and never secret."""

    type: EventType
    version: int
    at: float
    seat: int | None
    data: dict[str, object] = field(default_factory=dict)


_MATCH_FIELDS = tuple(each.name for each in fields(Match))
_MATCH_FIELD_SET = frozenset(_MATCH_FIELDS)


class _Unfrozen:
    """A ``Match``'s slots on a class of its own with no frozen ``__setattr__``: a copy is
    filled in here, then becomes a ``Match`` (``__class__`` may change between two classes of
    the same slots on the same base)."""

    __slots__ = Match.__slots__


def _copier() -> Callable[[Match], _Unfrozen]:
    """``copy(match)``: an ``_Unfrozen`` with the fields of ``match``, written as one plain
    attribute store a field (as ``dataclasses`` writes ``__init__``): a store on a frozen
    dataclass goes through ``object.__setattr__``'s argument tuple, 1,200 instructions a field
    against 50."""
    lines = [f"    copy.{name} = match.{name}\n" for name in _MATCH_FIELDS]
    source = "def copy(match):\n    copy = new(Unfrozen)\n" + "".join(lines) + "    return copy\n"
    namespace: dict[str, Any] = {"new": object.__new__, "Unfrozen": _Unfrozen}
    exec(source, namespace)  # the source is built from the field names above
    copy: Callable[[Match], _Unfrozen] = namespace["copy"]
    return copy


_copy = _copier()


def evolver(*names: str) -> Callable[..., Match]:
    """``change(match, *values)``: ``evolve(match, dict(zip(names, values)))`` for these
    fields, written out as one function (the copy, a plain store per value, the class): a
    draft's new version without the changes' dict, its check against the fields, and a
    ``setattr`` call a value (2,000 instructions fewer a draft)."""
    unknown = set(names) - _MATCH_FIELD_SET
    if unknown or len(set(names)) != len(names):
        raise TypeError(f"Match fields named once each are needed, not {names}")
    kept = [f"    copy.{name} = match.{name}\n" for name in _MATCH_FIELDS if name not in names]
    given = [f"    copy.{name} = {name}\n" for name in names]
    source = (
        f"def change(match, {', '.join(names)}):\n    copy = new(Unfrozen)\n"
        + "".join(kept + given)
        + "    copy.__class__ = Match\n    return copy\n"
    )
    namespace: dict[str, Any] = {"new": object.__new__, "Unfrozen": _Unfrozen, "Match": Match}
    exec(source, namespace)  # the source is built from the field names above
    change: Callable[..., Match] = namespace["change"]
    return change


def evolve(match: Match, changes: Mapping[str, Any]) -> Match:
    """``dataclasses.replace(match, **changes)`` at a tenth of its cost: every move and draft
    copies the match, and ``replace`` goes through the frozen ``__init__`` by keyword (a
    ``Match`` has no ``__post_init__`` and no field outside ``__init__``): 12,000 instructions
    a draft's copy, against 52,000 setting each field by ``object.__setattr__``."""
    unknown = changes.keys() - _MATCH_FIELD_SET
    if unknown:
        raise TypeError(f"Match has no field {sorted(unknown)[0]!r}")
    copy = _copy(match)
    for name, value in changes.items():
        setattr(copy, name, value)
    copy.__class__ = Match  # type: ignore[assignment]
    return copy  # type: ignore[return-value]


@dataclass(frozen=True, slots=True)
class Transition:
    """What a transition returns: the new match, its events, and the tiles the actor drew."""

    match: Match
    events: tuple[Event, ...]
    drawn: tuple[Tile, ...] = ()

    def then(self, step: Callable[[Match], Transition]) -> Transition:
        """Apply ``step`` to the new match and return both transitions as one."""
        return self.joined(step(self.match))

    def joined(self, following: Transition) -> Transition:
        """This transition and ``following``, made from its new match, as one: either of
        them alone when the other did nothing (nearly every move: no time owed before it, and
        nothing it leaves owed), with no new transition made."""
        if not self.events and not self.drawn:
            return following
        if not following.events and not following.drawn and following.match is self.match:
            return self
        return made_transition(
            following.match, self.events + following.events, self.drawn + following.drawn
        )


made_transition: Callable[[Match, tuple[Event, ...], tuple[Tile, ...]], Transition] = maker(
    Transition
)
"""``Transition(match, events, drawn)``, made faster (``service.game.frozen.maker``): every
argument given; a draft makes seven."""
made_event: Callable[[EventType, int, float, int | None, dict[str, object]], Event] = maker(Event)
"""``Event(type, version, at, seat, data)``, made faster (``service.game.frozen.maker``)."""


def record(
    match: Match,
    event_type: EventType,
    *,
    at: float,
    seat: int | None,
    changes: Mapping[str, Any] | None = None,
    **data: Any,
) -> Transition:
    """Return ``match`` one version on, with ``changes`` to its fields made in the same step
    (one copy of the match, not two), and the event that produced that version."""
    version = match.version + 1
    return made_transition(
        evolve(match, {**(changes or {}), "version": version}),
        (made_event(event_type, version, at, seat, dict(data)),),
        (),
    )


@dataclass(frozen=True, slots=True)
class Setup:
    """A test-mode start: the racks, the pool in draw order, the table, who melded, who starts."""

    racks: tuple[tuple[Tile, ...], ...]
    pool: tuple[Tile, ...] = ()
    table: Table = ()
    melded: tuple[bool, ...] | None = None  # None: nobody has melded
    first_seat: int = 0

    @classmethod
    def parse(
        cls,
        racks: Sequence[Sequence[str]],
        pool: Sequence[str] = (),
        table: Sequence[Sequence[str]] = (),
        melded: Sequence[bool] | None = None,
        first_seat: int = 0,
    ) -> Setup:
        """Build a setup from tile codes; raise ``InvalidTileCode`` at a bad code."""
        return cls(
            tuple(parse_tiles(rack) for rack in racks),
            parse_tiles(pool),
            tuple(parse_tiles(tiles) for tiles in table),
            None if melded is None else tuple(melded),
            first_seat,
        )


def _rack_order(tile: Tile) -> tuple[int, int]:
    if tile.colour is None or tile.number is None:
        return (len(COLOURS), 0)
    return (COLOURS.index(tile.colour), tile.number)


def sorted_rack(tiles: Iterable[Tile]) -> tuple[Tile, ...]:
    """Return ``tiles`` sorted as a rack shows them: by colour (R B K O), number; jokers last."""
    return tuple(sorted(tiles, key=_rack_order))


def as_table(sets: Iterable[Iterable[Tile]]) -> Table:
    """Return ``sets`` as a table: a tuple of tuples of tiles, in display order."""
    return tuple(tuple(tiles) for tiles in sets)


def table_codes(table: Table) -> list[list[str]]:
    """Return the JSON form of a table: a list of sets, each a list of tile codes."""
    return [codes_of(tiles) for tiles in table]
