"""Sets on the table: classifying a run or a group, what each joker stands for, points.

A *group* is 3 or 4 tiles of one number in different colours. A *run* is 3 or more
consecutive numbers of one colour, listed in ascending order; a joker's position in a
run fixes the number it stands for (``R11 J R13``: the joker is R12). A set with a
single numbered tile and jokers can be read both ways (``J R5 J``); the referee takes
the reading worth more points, and the run when both are worth the same.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, replace

from service.rules.tiles import COLOURS, MAX_NUMBER, MIN_NUMBER, Colour, Tile

__all__ = [
    "SetFault",
    "SetInfo",
    "SetKind",
    "classify",
    "is_valid_set",
    "name_readings",
    "set_points",
]

MIN_SET_SIZE = 3
MAX_GROUP_SIZE = len(COLOURS)


class SetKind(enum.Enum):
    """The two shapes a valid set can have."""

    RUN = "run"
    GROUP = "group"


class SetFault(enum.Enum):
    """Why a set is invalid; the value is the stable code clients see."""

    TOO_FEW_TILES = "set_too_short"
    JOKERS_ONLY = "set_of_jokers_only"
    MIXED = "not_a_run_or_group"
    GROUP_TOO_LARGE = "group_too_large"
    GROUP_REPEATS_COLOUR = "group_repeats_colour"
    RUN_NOT_CONSECUTIVE = "run_not_consecutive"
    RUN_WRAPS_AROUND = "run_wraps_around"
    JOKER_OUT_OF_RANGE = "joker_out_of_range"


@dataclass(frozen=True, slots=True)
class SetInfo:
    """What the referee reads in one set.

    ``jokers`` names what each joker stands for, in order: a tile code in a run
    (``"R12"``), the possible codes joined by ``|`` in a group (``"K5|O5"``).
    ``points`` counts each joker as the number it stands for; 0 when invalid.
    ``reason_params`` are the tiles and numbers ``reason`` names, by name, for a client
    that words the reason itself (``{"tile": "R3", "previous": "R5"}``).
    """

    tiles: tuple[Tile, ...]
    kind: SetKind | None
    fault: SetFault | None
    reason: str | None
    jokers: tuple[str, ...] = ()
    points: int = 0
    number: int | None = None
    colour: Colour | None = None
    start: int | None = None
    reason_params: tuple[tuple[str, str | int], ...] = ()

    @property
    def valid(self) -> bool:
        """Whether the set is a valid run or group."""
        return self.fault is None

    @property
    def joker_count(self) -> int:
        """How many jokers the set holds."""
        return sum(1 for tile in self.tiles if tile.is_joker)

    @property
    def stands_for(self) -> tuple[Tile, ...]:
        """For a valid run: the tile each position stands for, jokers resolved."""
        if self.kind is not SetKind.RUN or self.start is None or self.colour is None:
            return ()
        return tuple(Tile(self.colour, self.start + i) for i in range(len(self.tiles)))


def classify(tiles: Sequence[Tile]) -> SetInfo:
    """Read ``tiles`` (in display order) as a run or a group; never raises.

    A joker that names its reading (``J=R1``) is read as that tile: ``J=R1 J=R2 R3`` is a
    run, where ``J J R3`` is read the way worth more (a group of 3s). A joker with no
    reading stands for what the set needs. Returns a :class:`SetInfo` whose ``fault`` and
    ``reason`` say what is wrong when the set is invalid (a reading the set cannot have
    included).

    Kept by the sets' codes (readings included): a move's check reads every set of the table
    it leaves, most of them the sets it found there, and some sets twice.
    """
    tiles = tuple(tiles)
    key = tuple([tile.code for tile in tiles])
    info = _CLASSIFIED.get(key)
    if info is None:
        info = _classify(tiles)
        if len(_CLASSIFIED) >= _CLASSIFIED_KEPT:
            _CLASSIFIED.clear()
        _CLASSIFIED[key] = info
    return info


_CLASSIFIED: dict[tuple[str, ...], SetInfo] = {}
_CLASSIFIED_KEPT = 8192


def _classify(tiles: tuple[Tile, ...]) -> SetInfo:
    numbered = [tile for tile in tiles if not tile.is_joker]
    if len(tiles) < MIN_SET_SIZE:
        return _invalid(tiles, SetFault.TOO_FEW_TILES, "a set needs at least 3 tiles")
    if not numbered:
        return _invalid(tiles, SetFault.JOKERS_ONLY, "a set of jokers only has no defined value")
    if any(tile.reading is not None for tile in tiles):
        return _with_readings(tiles)
    same_number = len({tile.number for tile in numbered}) == 1
    same_colour = len({tile.colour for tile in numbered}) == 1
    if len(numbered) == 1:
        return _best_reading(_as_run(tiles), _as_group(tiles))
    if same_number:
        return _as_group(tiles)
    if same_colour:
        return _as_run(tiles)
    return _invalid(
        tiles,
        SetFault.MIXED,
        "a set must be a run (one colour, consecutive numbers) or a group "
        "(one number, different colours)",
    )


def _with_readings(tiles: tuple[Tile, ...]) -> SetInfo:
    """Read ``tiles`` with each named joker taken as the tile it names."""
    read = classify(tuple(tile.reading or tile for tile in tiles))
    if not read.valid:
        return replace(read, tiles=tiles)
    if read.kind is SetKind.RUN:
        assert read.colour is not None and read.start is not None
        jokers = tuple(
            Tile(read.colour, read.start + i).code for i, tile in enumerate(tiles) if tile.is_joker
        )
        return replace(read, tiles=tiles, jokers=jokers)
    assert read.number is not None
    real = {tile.colour for tile in tiles if not tile.is_joker and tile.colour is not None}
    named = {tile.reading.colour for tile in tiles if tile.reading is not None}
    free = "|".join(Tile(c, read.number).code for c in COLOURS if c not in real | named)
    jokers = tuple(
        tile.reading.code if tile.reading is not None else free for tile in tiles if tile.is_joker
    )
    return replace(read, tiles=tiles, jokers=jokers)


def name_readings(tiles: Sequence[Tile]) -> tuple[Tile, ...]:
    """``tiles`` with each joker of a valid run named by the tile it stands for (``J=R12``).

    A group's jokers, an invalid set's and jokers already named are left as they are.
    """
    info = classify(tiles)
    if info.kind is not SetKind.RUN:
        return tuple(tiles)
    return tuple(
        Tile(None, None, reading) if tile.is_joker and tile.reading is None else tile
        for tile, reading in zip(tiles, info.stands_for, strict=True)
    )


def is_valid_set(tiles: Sequence[Tile]) -> bool:
    """Return whether ``tiles`` form a valid run or group."""
    return classify(tiles).valid


def set_points(tiles: Sequence[Tile], *, joker_worth_zero: bool = False) -> int:
    """Return the points of a valid set (0 for an invalid one).

    A tile is worth its number; a joker the number it stands for, or 0 with
    ``joker_worth_zero`` (the house rule of 002 for the initial meld).
    """
    info = classify(tiles)
    if not joker_worth_zero or not info.valid:
        return info.points
    return sum(tile.number or 0 for tile in info.tiles)


def _best_reading(run: SetInfo, group: SetInfo) -> SetInfo:
    if run.valid and (not group.valid or run.points >= group.points):
        return run
    if group.valid:
        return group
    return run


def _as_group(tiles: tuple[Tile, ...]) -> SetInfo:
    numbered = [tile for tile in tiles if not tile.is_joker]
    number = numbered[0].number
    assert number is not None
    colours = [tile.colour for tile in numbered]
    for colour in COLOURS:
        if colours.count(colour) > 1:
            code = Tile(colour, number).code
            return _invalid(
                tiles,
                SetFault.GROUP_REPEATS_COLOUR,
                f"a group cannot hold two {code} tiles: its colours must all differ",
                tile=code,
            )
    if len(tiles) > MAX_GROUP_SIZE:
        return _invalid(tiles, SetFault.GROUP_TOO_LARGE, "a group holds at most 4 tiles")
    missing = "|".join(Tile(c, number).code for c in COLOURS if c not in colours)
    jokers = tuple(missing for tile in tiles if tile.is_joker)
    return SetInfo(tiles, SetKind.GROUP, None, None, jokers, number * len(tiles), number=number)


def _as_run(tiles: tuple[Tile, ...]) -> SetInfo:
    first = next(i for i, tile in enumerate(tiles) if not tile.is_joker)
    colour, first_number = tiles[first].colour, tiles[first].number
    assert colour is not None and first_number is not None
    start = first_number - first
    for position, tile in enumerate(tiles):
        if tile.number is not None and tile.number != start + position:
            return _broken_run(tiles, position)
    end = start + len(tiles) - 1
    if start < MIN_NUMBER:
        return _invalid(
            tiles,
            SetFault.JOKER_OUT_OF_RANGE,
            f"a joker cannot stand for {start}: 1 is the lowest",
            number=start,
        )
    if end > MAX_NUMBER:
        return _invalid(
            tiles,
            SetFault.JOKER_OUT_OF_RANGE,
            f"a joker cannot stand for {end}: nothing follows 13",
            number=end,
        )
    # The codes of the tiles the jokers stand for, written as Tile.code writes them.
    jokers = tuple(f"{colour.value}{start + i}" for i, tile in enumerate(tiles) if tile.is_joker)
    points = sum(range(start, end + 1))
    return SetInfo(tiles, SetKind.RUN, None, None, jokers, points, colour=colour, start=start)


def _broken_run(tiles: tuple[Tile, ...], position: int) -> SetInfo:
    tile = tiles[position]
    previous = next((tiles[i] for i in range(position - 1, -1, -1) if not tiles[i].is_joker), None)
    assert tile.number is not None and previous is not None and previous.number is not None
    if previous.number == MAX_NUMBER and tile.number == MIN_NUMBER:
        return _invalid(
            tiles,
            SetFault.RUN_WRAPS_AROUND,
            f"{tile.code} cannot follow {previous.code}: 1 is always the lowest number",
            tile=tile.code,
            previous=previous.code,
        )
    if tile.number <= previous.number:
        reason = f"{tile.code} cannot follow {previous.code}: a run is listed in ascending order"
    else:
        reason = (
            f"{tile.code} cannot follow {previous.code} here: the numbers of a run are consecutive"
        )
    return _invalid(
        tiles, SetFault.RUN_NOT_CONSECUTIVE, reason, tile=tile.code, previous=previous.code
    )


def _invalid(tiles: tuple[Tile, ...], fault: SetFault, reason: str, **params: str | int) -> SetInfo:
    return SetInfo(tiles, None, fault, reason, reason_params=tuple(params.items()))
