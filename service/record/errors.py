"""Why a record cannot be read or replayed.

Exception tree (each with a stable ``kind``, the end of the problem ``type``)::

    RecordError (ValueError)
    ├── RecordFormatError    record-malformed     not a rummikub-record/1 (says where)
    └── RecordIncomplete     record-incomplete    tiles are hidden: it cannot be replayed

A record that reads well but breaks the rules is no error: :func:`service.record.verify`
answers which turn is wrong.
"""

from __future__ import annotations

__all__ = ["RecordError", "RecordFormatError", "RecordIncomplete"]


class RecordError(ValueError):
    """Base of the record's refusals."""

    kind = "record-error"


class RecordFormatError(RecordError):
    """The input is not a record of this format; ``where`` names the part (``turns.3.seat``,
    ``line 12``)."""

    kind = "record-malformed"

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}" if where else message)
        self.where = where


class RecordIncomplete(RecordError):
    """The record hides tiles (exported while its game was on): it cannot be replayed."""

    kind = "record-incomplete"
