"""Marshmallow fields for the referee's notation: tile codes and tables of sets."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from marshmallow import ValidationError, fields, validate

from service.rules import InvalidTileCode, Tile

__all__ = [
    "MAX_SET_TILES",
    "MAX_TABLE_SETS",
    "TEXT_PATTERN",
    "Flag",
    "Table",
    "TileCode",
    "WholeNumber",
    "plain_text",
]

MAX_TABLE_SETS = 60
MAX_SET_TILES = 40


TEXT_PATTERN = (
    "^[^\\u0000-\\u001F\\u007F-\\u009F\\u061C\\u200B\\u200E\\u200F\\u2028-\\u202E"
    "\\u2060-\\u206F\\uFEFF\\uFFF9-\\uFFFB]*$"
)
"""What a player's name or ref may hold, as ``openapi.yaml`` writes it: any text but control
characters (C0, DEL, C1), bidirectional controls (U+061C, U+200E, U+200F, U+202A-U+202E,
U+2066-U+2069), line and paragraph separators and invisible characters (U+200B, U+2060-U+2064,
U+FEFF...), which would let a name rewrite what a page or a log shows around it. Letters of any
script, and the joiners scripts and emoji need (U+200C, U+200D), are welcome."""

_TEXT = re.compile(TEXT_PATTERN)


def plain_text(value: str) -> None:
    """Refuse a control, bidirectional or invisible character, or a lone surrogate (JSON's
    ``"\\ud800"``), which no client can show; raise :class:`ValidationError`."""
    if _TEXT.fullmatch(value) is None:
        raise ValidationError(
            "Control, bidirectional and invisible characters (line breaks, U+202E...) "
            "are not allowed."
        )
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValidationError("Not valid Unicode text (a lone surrogate).") from None


class TileCode(fields.Field[Tile]):
    """A tile written as its code (``R7``, ``J``), loaded as a :class:`Tile`.

    ``readings=True`` (tiles of a table's sets) also takes a joker naming its reading
    (``J=R1``); elsewhere (racks, the pool) a joker is just ``J``.
    """

    def __init__(self, *, readings: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.readings = readings

    def _deserialize(
        self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any
    ) -> Tile:
        try:
            tile = Tile.parse(value)
        except InvalidTileCode as error:
            raise ValidationError(str(error)) from None
        if tile.reading is not None and not self.readings:
            raise ValidationError(f"{value!r}: a joker names its reading only in a set: use J")
        return tile

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any) -> str | None:
        return None if value is None else str(value)


class Flag(fields.Boolean):
    """A JSON ``true`` or ``false``: nothing else (not ``1``, not ``"yes"``)."""

    def _deserialize(
        self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any
    ) -> bool:
        if not isinstance(value, bool):
            raise ValidationError("Not a valid boolean: use true or false.")
        return value


class WholeNumber(fields.Integer):
    """A JSON integer: ``30`` or ``30.0`` (JSON Schema's integers), not ``"30"`` or ``30.5``."""

    def _deserialize(
        self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any
    ) -> int:
        whole = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
        if isinstance(value, bool) or not whole:
            raise ValidationError("Not a valid integer.")
        return int(value)


def Table(**kwargs: Any) -> fields.List[list[Tile | None]]:
    """A list of sets, each a list of tile codes in display order."""
    a_set = fields.List(TileCode(readings=True), validate=validate.Length(max=MAX_SET_TILES))
    return fields.List(a_set, validate=validate.Length(max=MAX_TABLE_SETS), **kwargs)
