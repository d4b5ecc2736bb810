"""Shuffling the box, the draw for the first player, and dealing 14 tiles to each seat.

Randomness is always the ``rng`` argument: ``secrets.SystemRandom()`` in production,
a seeded ``random.Random`` in test mode.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from service.rules import JOKER, FirstPlayerJoker, Rules, Tile, TileSet, full_set

__all__ = [
    "HAND_SIZE",
    "MAX_EXCHANGES",
    "Deal",
    "FirstPlayerDraw",
    "deal",
    "deal_tiles",
    "doubles",
    "draw_for_first_player",
    "shuffled_box",
]

HAND_SIZE = 14
MAX_EXCHANGES = 100  # per seat, for the house rule that returns duplicate tiles
JOKER_DRAW_VALUE = 30  # what a joker counts in the first-player draw with that option


@dataclass(frozen=True, slots=True)
class FirstPlayerDraw:
    """Every round of the draw for the first player, and who starts.

    Each round lists, for each seat that drew, the tiles it drew in order: a joker
    drawn with :attr:`FirstPlayerJoker.DRAW_AGAIN` is followed by the tile drawn
    instead, and the last tile counts. Later rounds hold only the seats tied highest.
    """

    rounds: tuple[tuple[tuple[int, tuple[Tile, ...]], ...], ...]
    first_seat: int


@dataclass(frozen=True, slots=True)
class Deal:
    """The racks dealt, the pool left in draw order, and how many tiles each seat exchanged."""

    racks: tuple[tuple[Tile, ...], ...]
    pool: tuple[Tile, ...]
    exchanged: tuple[int, ...]


def shuffled_box(tile_set: TileSet, rng: random.Random) -> list[Tile]:
    """Return every tile of the box in a random order."""
    tiles = list(full_set(tile_set).elements())
    rng.shuffle(tiles)
    return tiles


def draw_for_first_player(seats: int, *, rules: Rules, rng: random.Random) -> FirstPlayerDraw:
    """Have each seat draw one tile; the highest number starts, the tied highest draw again.

    Drawn tiles stay out of the box until the draw is decided (should the box run out,
    they all go back and it is shuffled again).
    """
    bag = _bag(rules.tile_set, rng)
    contenders = list(range(seats))
    rounds = []
    while True:
        draws = tuple((seat, _draw_one(bag, rules)) for seat in contenders)
        rounds.append(draws)
        values = {seat: _draw_value(tiles[-1]) for seat, tiles in draws}
        best = max(values.values())
        contenders = [seat for seat in contenders if values[seat] == best]
        if len(contenders) == 1:
            return FirstPlayerDraw(tuple(rounds), contenders[0])


def deal(seats: int, *, rules: Rules, rng: random.Random) -> Deal:
    """Shuffle the box and deal :data:`HAND_SIZE` tiles to each seat; the rest is the pool.

    With ``rules.redeal_duplicates`` each seat in turn returns one of two identical
    numbered tiles to a random place in the pool (never its head) and takes the
    pool's next tile, until its rack holds no duplicate (at most :data:`MAX_EXCHANGES`
    times per seat).
    """
    return deal_tiles(list(full_set(rules.tile_set).elements()), seats, rules=rules, rng=rng)


def deal_tiles(tiles: list[Tile], seats: int, *, rules: Rules, rng: random.Random) -> Deal:
    """Shuffle ``tiles`` and deal them as :func:`deal` deals the box (a redeal deals the
    tiles of the racks and the pool again). With ``rules.dealt_jokers`` each rack gets that
    many jokers first, then the random tiles that fill it."""
    box = list(tiles)
    rng.shuffle(box)
    given = rules.dealt_jokers
    for _ in range(given * seats):
        box.remove(JOKER)
    size = HAND_SIZE - given
    racks = [[JOKER] * given + box[seat * size : (seat + 1) * size] for seat in range(seats)]
    pool = box[seats * size :]
    exchanged = [0] * seats
    if rules.redeal_duplicates:
        for seat, rack in enumerate(racks):
            exchanged[seat] = _return_duplicates(rack, pool, rng)
    return Deal(tuple(tuple(rack) for rack in racks), tuple(pool), tuple(exchanged))


def doubles(rack: Iterable[Tile]) -> list[Tile]:
    """The numbered tiles ``rack`` holds twice or more (a double: a pair of identical tiles)."""
    counts = Counter(tile for tile in rack if not tile.is_joker)
    return sorted((tile for tile, count in counts.items() if count >= 2), key=lambda t: t.code)


def _bag(tile_set: TileSet, rng: random.Random) -> Iterator[Tile]:
    while True:
        yield from shuffled_box(tile_set, rng)


def _draw_one(bag: Iterator[Tile], rules: Rules) -> tuple[Tile, ...]:
    tiles = [next(bag)]
    while tiles[-1].is_joker and rules.first_player_joker is FirstPlayerJoker.DRAW_AGAIN:
        tiles.append(next(bag))
    return tuple(tiles)


def _draw_value(tile: Tile) -> int:
    return JOKER_DRAW_VALUE if tile.number is None else tile.number


def _return_duplicates(rack: list[Tile], pool: list[Tile], rng: random.Random) -> int:
    """Exchange duplicates of ``rack`` with the pool in place; return how many were exchanged."""
    exchanges = 0
    while exchanges < MAX_EXCHANGES and pool:
        duplicate = _first_duplicate(rack)
        if duplicate is None:
            break
        rack.remove(duplicate)
        pool.insert(rng.randint(1, len(pool)), duplicate)
        rack.append(pool.pop(0))
        exchanges += 1
    return exchanges


def _first_duplicate(rack: list[Tile]) -> Tile | None:
    counts = Counter(tile for tile in rack if not tile.is_joker)
    return next((tile for tile in rack if counts[tile] > 1), None)
