"""Redis streams' answers, read once whatever the protocol: RESP2 answers ``XREAD`` with a list
of ``[stream, entries]`` pairs and a script's entry as a flat ``[field, value, ...]`` list,
RESP3 with a map ``{stream: [entries]}`` and a script's entry as a map."""

from __future__ import annotations

from typing import Any

__all__ = ["Entry", "entries_of", "entry_of", "streams_of"]

Entry = tuple[str, dict[str, str]]
"""A stream entry: its id and its fields."""


def streams_of(answer: Any) -> list[tuple[str, list[Entry]]]:
    """``XREAD``'s or ``XREADGROUP``'s answer as (stream, entries) pairs."""
    if not answer:
        return []
    if isinstance(answer, dict):
        return [(name, list(value[0])) for name, value in answer.items()]
    return [(name, list(entries)) for name, entries in answer]


def entries_of(answer: Any) -> list[Entry]:
    """The entries of an ``XREAD`` answer on one stream."""
    streams = streams_of(answer)
    return streams[0][1] if streams else []


def entry_of(entry: Any) -> Entry:
    """A stream entry as a script answers it."""
    entry_id, flat = entry
    if isinstance(flat, dict):
        return entry_id, flat
    return entry_id, dict(zip(flat[::2], flat[1::2], strict=True))
