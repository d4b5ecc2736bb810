"""Creating a match and starting each of its games.

A match is created with :func:`new_match` (the draw for the first player, then game 1
is dealt) or, in test mode, with :func:`from_setup` (racks, pool, table and first seat
given). :func:`next_game` deals the next game once the last one is over; its first
seat is one seat on from the previous game's.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from service.game.clocks import starting_banks, time_left
from service.game.codec import rules_to_dict
from service.game.deal import deal, draw_for_first_player
from service.game.errors import BadSetup, InvalidMatch, MatchCanceled, WrongPhase
from service.game.state import (
    Dealt,
    EventType,
    Match,
    Player,
    PlayerSpec,
    Setup,
    Status,
    Table,
    Transition,
    record,
    sorted_rack,
    table_codes,
)
from service.game.turns import start_turn
from service.rules import (
    JOKER,
    PRESET_PLAYERS,
    Rules,
    Tile,
    TileSet,
    classify,
    codes_of,
    full_set,
    tiles_of,
)

__all__ = [
    "MAX_PLAYERS",
    "MAX_TURN_SECONDS",
    "MIN_PLAYERS",
    "from_setup",
    "new_match",
    "next_game",
]

MIN_PLAYERS = 2
MAX_REF_LENGTH = 128
MAX_TURN_SECONDS = 7 * 24 * 3600  # asynchronous play: a turn may last up to a week
MAX_PLAYERS = {TileSet.STANDARD: 4, TileSet.XP: 6}


def new_match(
    match_id: str,
    players: Sequence[PlayerSpec],
    *,
    rules: Rules,
    rng: random.Random,
    now: float,
    seed: int | None = None,
    owner: str | None = None,
) -> Transition:
    """Create a match: the draw for the first player, then game 1 dealt and started.

    Emits ``match_created``, ``first_player_draw`` and ``game_started``. Raises
    :class:`InvalidMatch` for a number of players the box does not allow or bad rules.
    """
    _check_match(players, rules)
    first = draw_for_first_player(len(players), rules=rules, rng=rng)
    dealt = deal(len(players), rules=rules, rng=rng)
    rounds = [
        [{"seat": seat, "tiles": codes_of(tiles)} for seat, tiles in draws]
        for draws in first.rounds
    ]
    return (
        _created(match_id, players, rules=rules, now=now, seed=seed, owner=owner)
        .then(
            lambda match: record(
                match,
                EventType.FIRST_PLAYER_DRAW,
                at=now,
                seat=None,
                rounds=rounds,
                first_seat=first.first_seat,
            )
        )
        .then(
            lambda match: _start_game(
                match,
                game_number=1,
                first_seat=first.first_seat,
                racks=dealt.racks,
                pool=dealt.pool,
                exchanged=dealt.exchanged,
                at=now,
            )
        )
    )


def from_setup(
    match_id: str,
    players: Sequence[PlayerSpec],
    *,
    rules: Rules,
    setup: Setup,
    now: float,
    seed: int | None = None,
    owner: str | None = None,
) -> Transition:
    """Create a test-mode match whose game 1 starts from ``setup``.

    Emits ``match_created`` and ``game_started``. Raises :class:`BadSetup` when the
    setup does not fit the players, uses more copies of a tile than the box holds,
    leaves a rack empty or puts an invalid set on the table.
    """
    _check_match(players, rules)
    _check_setup(setup, len(players), rules)
    return _created(match_id, players, rules=rules, now=now, seed=seed, owner=owner).then(
        lambda match: _start_game(
            match,
            game_number=1,
            first_seat=setup.first_seat,
            racks=setup.racks,
            pool=setup.pool,
            table=setup.table,
            melded=setup.melded,
            at=now,
        )
    )


def next_game(match: Match, *, now: float, rng: random.Random) -> Transition:
    """Shuffle, deal and start the next game; its first seat is one on from the last game's.

    Raises :class:`WrongPhase` unless the last game is over and the match is not finished.
    """
    if match.status is Status.CANCELED:
        raise MatchCanceled("the match was canceled by its owner")
    if match.status is not Status.GAME_OVER:
        raise WrongPhase(
            "the match is finished"
            if match.status is Status.FINISHED
            else f"game {match.game_number} is still being played"
        )
    dealt = deal(len(match.players), rules=match.rules, rng=rng)
    return _start_game(
        match,
        game_number=match.game_number + 1,
        first_seat=match.next_seat(match.game_first_seat),
        racks=dealt.racks,
        pool=dealt.pool,
        exchanged=dealt.exchanged,
        at=now,
    )


def _created(
    match_id: str,
    players: Sequence[PlayerSpec],
    *,
    rules: Rules,
    now: float,
    seed: int | None,
    owner: str | None,
) -> Transition:
    match = Match(
        id=match_id,
        rules=rules,
        players=tuple(Player(spec.name, spec.bot, (), ref=spec.ref) for spec in players),
        pool=(),
        table=(),
        draft=None,
        status=Status.PLAYING,
        current_seat=0,
        turn_started=now,
        turn_deadline=None,
        game_number=0,
        game_first_seat=0,
        passes_in_a_row=0,
        version=0,
        outcomes=(),
        seed=seed,
        created_at=now,
        owner=owner,
    )
    return record(
        match,
        EventType.MATCH_CREATED,
        at=now,
        seat=None,
        players=[
            {"seat": seat, "name": spec.name, "bot": spec.bot} for seat, spec in enumerate(players)
        ],
        rules=rules_to_dict(rules),
    )


def _start_game(
    match: Match,
    *,
    game_number: int,
    first_seat: int,
    racks: Sequence[Sequence[Tile]],
    pool: tuple[Tile, ...],
    table: Table = (),
    melded: Sequence[bool] | None = None,
    exchanged: Sequence[int] | None = None,
    at: float,
) -> Transition:
    melded = melded or [False] * len(racks)
    players = tuple(
        replace(player, rack=sorted_rack(rack), melded=has_melded)
        for player, rack, has_melded in zip(match.players, racks, melded, strict=True)
    )
    kept = Dealt(
        tuple(tuple(rack) for rack in racks),
        pool,
        table,
        tuple(melded) if any(melded) else (),
    )
    dealt = replace(
        match,
        deals=(*(None,) * (game_number - 1), kept),  # earlier deals are in their game_over
        players=players,
        pool=pool,
        table=table,
        status=Status.PLAYING,
        game_number=game_number,
        game_first_seat=first_seat,
        passes_in_a_row=0,
        banks=starting_banks(match.rules, len(racks)),
        flagged=(),
        turns_played=0,
    )
    started = start_turn(dealt, first_seat, at=at)
    clock: dict[str, Any] = {} if not started.banks else {"time_left": time_left(started, now=at)}
    return record(
        started,
        EventType.GAME_STARTED,
        at=at,
        seat=None,
        game_number=game_number,
        first_seat=first_seat,
        dealt=[len(rack) for rack in racks],
        returned=list(exchanged or [0] * len(racks)),
        pool_count=len(pool),
        table=table_codes(table),
        melded=list(melded),
        turn_deadline=started.turn_deadline,
        **clock,
    )


def _check_match(players: Sequence[PlayerSpec], rules: Rules) -> None:
    most = MAX_PLAYERS[rules.tile_set]
    if not MIN_PLAYERS <= len(players) <= most:
        needs_xp = rules.tile_set is TileSet.STANDARD and len(players) > most
        hint = " (5 or 6 players need the XP set)" if needs_xp else ""
        raise InvalidMatch(
            f"the {rules.tile_set.value} set is for {MIN_PLAYERS} to {most} players, "
            f"not {len(players)}{hint}"
        )
    for seat, spec in enumerate(players):
        if not spec.name.strip():
            raise InvalidMatch(f"the player at seat {seat} needs a name")
        if spec.ref is not None and not 1 <= len(spec.ref) <= MAX_REF_LENGTH:
            raise InvalidMatch(f"the ref of seat {seat} must be 1-{MAX_REF_LENGTH} characters")
    refs = [spec.ref for spec in players if spec.ref is not None]
    if len(set(refs)) != len(refs):
        raise InvalidMatch("two seats have the same ref: a ref names one user")
    wanted = PRESET_PLAYERS.get(rules.preset)
    if wanted is not None and len(players) != wanted:
        raise InvalidMatch(
            f"the {rules.preset.value} rules are for exactly {wanted} players, not {len(players)}"
        )
    _check_rules(rules)
    jokers = full_set(rules.tile_set)[JOKER]
    if rules.dealt_jokers * len(players) > jokers:
        raise InvalidMatch(
            f"{rules.dealt_jokers} jokers dealt to each of {len(players)} players: the "
            f"{rules.tile_set.value} set holds only {jokers}"
        )


def _check_rules(rules: Rules) -> None:
    if rules.rounds < 1:
        raise InvalidMatch("a match lasts at least 1 round")
    if rules.turn_seconds < 0:
        raise InvalidMatch("turn_seconds cannot be negative (0 means no time limit)")
    if rules.turn_seconds > MAX_TURN_SECONDS:
        raise InvalidMatch(f"a turn lasts at most {MAX_TURN_SECONDS} seconds (7 days)")
    if rules.initial_meld_points < 0:
        raise InvalidMatch("initial_meld_points cannot be negative")
    if rules.target_score is not None and rules.target_score < 1:
        raise InvalidMatch("target_score must be a positive number of points")


def _check_setup(setup: Setup, seats: int, rules: Rules) -> None:
    if len(setup.racks) != seats:
        raise BadSetup(f"the setup has {len(setup.racks)} racks for {seats} players")
    if setup.melded is not None and len(setup.melded) != seats:
        raise BadSetup(
            f"the setup's melded list has {len(setup.melded)} entries for {seats} players"
        )
    if not 0 <= setup.first_seat < seats:
        raise BadSetup(f"first_seat must be a seat from 0 to {seats - 1}, not {setup.first_seat}")
    for seat, rack in enumerate(setup.racks):
        if not rack:
            raise BadSetup(
                f"the rack of seat {seat} is empty: a game starts with tiles on every rack"
            )
    _check_box(setup, rules.tile_set)
    for index, tiles in enumerate(setup.table):
        info = classify(tiles)
        if not info.valid:
            raise BadSetup(f"table set {index + 1} ({' '.join(codes_of(tiles))}): {info.reason}")


def _check_box(setup: Setup, tile_set: TileSet) -> None:
    used: Counter[Tile] = tiles_of((*setup.racks, setup.pool, *setup.table))
    box = full_set(tile_set)
    over = sorted_rack((used - box).keys())
    if over:
        listed = ", ".join(f"{used[tile]} × {tile.code} (the box has {box[tile]})" for tile in over)
        raise BadSetup(f"the setup uses more tiles than the {tile_set.value} box holds: {listed}")
