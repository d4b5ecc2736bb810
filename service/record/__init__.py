"""The referee of record: a game's record, ``rummikub-record/1`` (docs/RECORD-FORMAT.md).

Pure Python over the game core (no Flask, no Redis):

- the record as values (:class:`Record`, :class:`Turn`...), its JSON form (:func:`to_json`,
  :func:`from_json`) and its text form (:func:`to_text`, :func:`from_text`), which round-trip;
- :func:`record_of`: the record of a game of a :class:`~service.game.Match`, built from its
  event log and the deal it keeps, and :func:`redacted`: what a reader may see of it;
- :func:`verify`: the whole game replayed under its rules, the first wrong turn named;
- :func:`position` / :func:`positions`: the game after any turn, and :func:`position_view`.

Errors are drawn in :mod:`service.record.errors`.
"""

from service.record.errors import RecordError, RecordFormatError, RecordIncomplete
from service.record.export import NotRecorded, position_view, record_of, redacted, setup_at
from service.record.jsonform import MAX_TURNS, from_json, result_to_json, to_json
from service.record.model import *  # the record's values: model.__all__
from service.record.replay import (
    Finding,
    Position,
    RecordFault,
    Verdict,
    position,
    positions,
    verify,
)
from service.record.text import from_text, to_text

__all__ = [
    "FORMAT",
    "MAX_TURNS",
    "HIDDEN",
    "Action",
    "By",
    "Deal",
    "Finding",
    "FirstDraw",
    "NotRecorded",
    "Position",
    "Record",
    "RecordError",
    "RecordFault",
    "RecordFormatError",
    "RecordIncomplete",
    "RecordPlayer",
    "Result",
    "Turn",
    "Verdict",
    "from_json",
    "from_text",
    "position",
    "position_view",
    "positions",
    "record_of",
    "redacted",
    "result_to_json",
    "setup_at",
    "to_json",
    "to_text",
    "verify",
]
