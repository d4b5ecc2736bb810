"""Tiles and their text notation.

A tile is written as a code: a colour letter and a number (``R7``, ``B13``,
``K1``, ``O10``) or ``J`` for a joker. On the table a joker may name the tile it
stands for: ``J=R1`` is a joker read as R1 (its *reading*); it is still a joker,
equal to ``J`` in every multiset. :meth:`Tile.parse` and
:attr:`Tile.code` round-trip, and ``repr`` gives an expression you can paste.
Multisets of tiles are :class:`collections.Counter` objects.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache

__all__ = [
    "COLOURS",
    "JOKER",
    "PLAIN_TILES",
    "Colour",
    "InvalidTileCode",
    "Tile",
    "TileSet",
    "full_set",
    "parse_tiles",
    "codes_of",
]

MIN_NUMBER = 1
MAX_NUMBER = 13
JOKER_PENALTY = 30


class InvalidTileCode(ValueError):
    """Raised for a string that is not a tile code."""

    def __init__(self, code: object) -> None:
        super().__init__(
            f"{code!r} is not a tile code: use a colour R, B, K or O and a number 1-13 "
            "(R7, K13), or J for a joker (J=R7 on the table: a joker read as R7)"
        )
        self.code = code


class Colour(enum.Enum):
    """The four tile colours, valued by their letter."""

    RED = "R"
    BLUE = "B"
    BLACK = "K"
    ORANGE = "O"


COLOURS: tuple[Colour, ...] = tuple(Colour)


@dataclass(frozen=True, slots=True, order=False)
class Tile:
    """One tile: a coloured number, or a joker (``colour`` and ``number`` both ``None``).

    A joker's ``reading`` is the numbered tile a client named for it (``J=R1``); it does
    not take part in equality or hashing: ``Tile.parse("J=R1") == JOKER``.
    """

    colour: Colour | None
    number: int | None
    reading: Tile | None = field(default=None, compare=False, repr=False)
    code: str = field(init=False, repr=False, compare=False)
    """The tile's code, such as ``"R7"`` or ``"J"``."""
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Both worked out once: tiles are hashed in every multiset operation, and codes are
        # written for every stored state and view.
        if self.colour is None or self.number is None:
            code = "J" if self.reading is None else f"J={self.reading.code}"
        else:
            code = f"{self.colour.value}{self.number}"
        object.__setattr__(self, "code", code)
        object.__setattr__(self, "_hash", hash((self.colour, self.number)))

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self) -> tuple[object, tuple[Colour | None, int | None, Tile | None]]:
        # Pickled (and copied) by its fields, so that another process works its own hash out:
        # string hashes differ between processes.
        return (Tile, (self.colour, self.number, self.reading))

    @staticmethod
    def parse(code: str) -> Tile:
        """Return the tile written as ``code``; raise :class:`InvalidTileCode` otherwise."""
        return _parse(code) if isinstance(code, str) else _raise(code)

    @property
    def plain(self) -> Tile:
        """The tile without a reading (a named joker is a plain joker on a rack)."""
        return JOKER if self.reading is not None else self

    @property
    def is_joker(self) -> bool:
        """Whether this tile is a joker."""
        return self.colour is None

    @property
    def penalty(self) -> int:
        """What the tile costs when left on a rack at the end of a game (joker 30)."""
        return JOKER_PENALTY if self.number is None else self.number

    def __repr__(self) -> str:
        return f"Tile.parse({self.code!r})"

    def __str__(self) -> str:
        return self.code


def _raise(code: object) -> Tile:
    raise InvalidTileCode(code)


@cache
def _parse(code: str) -> Tile:
    if code == "J":
        return JOKER
    if code.startswith("J="):
        reading = _parse(code[2:]) if code[2:] != "J" and "=" not in code[2:] else None
        if reading is None:
            raise InvalidTileCode(code)
        return Tile(None, None, reading)
    if len(code) < 2 or len(code) > 3:
        raise InvalidTileCode(code)
    try:
        colour = Colour(code[0])
    except ValueError:
        raise InvalidTileCode(code) from None
    digits = code[1:]
    if not digits.isdigit() or not digits.isascii() or digits[0] == "0":
        raise InvalidTileCode(code)
    number = int(digits)
    if not MIN_NUMBER <= number <= MAX_NUMBER:
        raise InvalidTileCode(code)
    return Tile(colour, number)


JOKER = Tile(None, None)


class TileSet(enum.Enum):
    """The boxes the referee can play with: copies of each numbered tile and jokers."""

    STANDARD = "standard"
    XP = "xp"

    @property
    def copies(self) -> int:
        """How many copies of each numbered tile the box holds."""
        return 2 if self is TileSet.STANDARD else 3

    @property
    def jokers(self) -> int:
        """How many jokers the box holds."""
        return 2 if self is TileSet.STANDARD else 4

    @property
    def size(self) -> int:
        """The number of tiles in the box (106 or 160)."""
        return self.copies * len(COLOURS) * MAX_NUMBER + self.jokers


def full_set(tile_set: TileSet = TileSet.STANDARD) -> Counter[Tile]:
    """Return every tile of the box as a multiset: the tile objects ``Tile.parse`` answers,
    made once (a match dealt from tiles of its own held 52 more objects, about 8 KB, in every
    copy of it a worker kept), in the same order each time (a seeded deal shuffles it)."""
    return Counter(_box(tile_set))


@cache
def _box(tile_set: TileSet) -> dict[Tile, int]:
    tiles: dict[Tile, int] = {}
    for colour in COLOURS:
        for number in range(MIN_NUMBER, MAX_NUMBER + 1):
            tiles[_parse(f"{colour.value}{number}")] = tile_set.copies
    tiles[JOKER] = tile_set.jokers
    return tiles


def parse_tiles(codes: Iterable[str]) -> tuple[Tile, ...]:
    """Parse a sequence of codes; raise :class:`InvalidTileCode` at the first bad one."""
    held = codes if isinstance(codes, (list, tuple)) else list(codes)
    try:  # the plain codes, looked up at once: every stored state holds a whole box of them
        return tuple(map(_PLAIN.__getitem__, held))
    except (KeyError, TypeError):  # a named joker, or a code to refuse with its reason
        return tuple(Tile.parse(code) for code in held)


def codes_of(tiles: Iterable[Tile]) -> list[str]:
    """Return the codes of ``tiles`` in order."""
    return [tile.code for tile in tiles]


_PLAIN: dict[str, Tile] = {
    tile.code: _parse(tile.code) for tile in full_set(TileSet.XP)
}  # every plain code (and "J"), as Tile.parse makes it
PLAIN_TILES: Mapping[str, Tile] = _PLAIN
"""Every plain code (and ``"J"``) and its tile, as :meth:`Tile.parse` makes it (not a named
joker's ``"J=R1"``): a body's codes looked up at once (read only)."""
