"""Helpers that let rule tests speak in tile codes."""

from collections import Counter

from service.rules import Tile, parse_tiles


def tiles(text: str) -> tuple[Tile, ...]:
    """``"R11 J R13"`` -> the tiles."""
    return parse_tiles(text.split())


def table(text: str) -> list[tuple[Tile, ...]]:
    """``"R1 R2 R3 | B5 K5 O5"`` -> a table of sets; ``""`` -> an empty table."""
    return [tiles(part) for part in text.split("|") if part.strip()]


def rack(text: str) -> Counter[Tile]:
    """``"R7 R7 J"`` -> a rack multiset."""
    return Counter(tiles(text))
