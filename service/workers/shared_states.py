"""The last stored state of recent matches, shared by the gunicorn workers of one host.

Each worker keeps the last decoded state of the matches it saw (``MatchStore``), and a move
computed on a current copy commits in one round trip. But the kernel spreads a client's
connections over the workers, so the players of one match reach different workers: a worker's
copy was often made old by another worker's commit, and the move was then computed twice, with
a second round trip (the commit script answers "conflict" with the fresh state). With the
states of every worker's last commits in memory they all map, a worker sees the newer state
before it computes, and commits in one round trip again.

The block is mapped by gunicorn's master before it forks (``deploy/gunicorn.conf.py``): a row
per worker, :data:`WAYS` slots per match bucket (a CRC of the id), side by side. Each worker
writes only its own row, so no lock is shared between processes; a reader looks at the
bucket's slots in every row a state was ever written in (a byte a row, set by its first write
and cleared when the master empties it) and takes the newest version of the match it asked
for. The master maps two rows a worker, so that a replacement finds one free; the rows nobody
writes are not read, since reading a page of shared memory gives the reader a page of its own
(each worker's resident memory held all four rows' 32 MiB, half of them zeros).

A writer puts a state in the slot that already holds its match, else in one never written,
else in one whose match another row holds at a newer version (nobody needs it: that row's
worker holds the newer one, and every reader finds it), else in the one written longest ago.
With one slot a bucket, a match whose bucket another match had taken since (one match in nine,
at 256 matches a worker) was not found, and its move was computed twice (1.04-1.05 commit
scripts per draft); with two slots and no regard for newer versions elsewhere, the drafts over
4,096 live matches that followed 4,096 fresh matches played found the other worker's last
commit gone for one draft in ten at the shipped durability (docs/PERFORMANCE.md, "Twentieth
session").

A state larger than a slot's room is kept compressed (zlib, the fastest level; a flag in its
length says so), and decompressed by the reader that takes it; one still too large is not
shared.

A slot is written under a sequence number (odd while it is being written) and carries a CRC of
its state, so a reader never takes a state that was half written: it reads nothing instead.
What a reader takes is only a copy to compute on: the commit script still checks the version,
as for any worker's own copy.

This module imports only the standard library (and ``service.workers.rows``, which does
too): the master loads it before gevent patches anything.
"""

from __future__ import annotations

import mmap
import struct
import threading
import zlib

from service.workers.rows import WorkerRows

__all__ = ["HEADER_BYTES", "SLOTS", "SLOT_BYTES", "WAYS", "StateTable", "current", "install"]

# Slots per row: WAYS for each of SLOTS // WAYS buckets. A stored state is about 0.75-1.5 KB (a
# new match 760-900 bytes, a finished 4-player game about 950), so a row of 8 MiB holds 8,192
# of up to 956 bytes, and a larger one compressed (a new match's state to about 450 bytes, in
# 10 us; read back in 3.5 us). One that does not fit even so, such as a long match of many games,
# is not shared: a move on a copy another worker made old is refused once and committed again.
# With 2,048 slots of 4 KiB, a worker over 4,096 live matches found the other's last commit of
# most of them overwritten: 1.3-1.8 commit scripts a draft against 1.0 over 256; with 4,096 of
# 2 KiB, 1.1-1.3, a commit in 10-27% of the drafts refused (docs/PERFORMANCE.md, "Seventeenth
# session" and "Eighteenth session").
SLOTS = 8192
SLOT_BYTES = 1024
WAYS = 8  # slots a bucket (8 KiB: two pages)
# sequence, version, state length, state CRC, match id (UTF-8, zero-padded), when it was
# written (the row's count of writes, 0 for a slot never written: which was written longest ago)
_HEADER = struct.Struct("<QqII32sQ")
_SEQUENCE = struct.Struct("<Q")
_SEQUENCE_VERSION = struct.Struct("<Qq")
_STAMP = struct.Struct("<Q")
_STAMP_AT = _HEADER.size - _STAMP.size
_NAME_AT = 24  # where a slot's match id starts (after sequence, version, length and CRC)
_NAME_BYTES = 32
_NO_NAME = bytes(_NAME_BYTES)  # the id of a slot never written
HEADER_BYTES = _HEADER.size  # a slot's state starts here
_LARGEST = SLOT_BYTES - HEADER_BYTES
_COMPRESSED = 1 << 31  # in the length: the state is kept compressed (zlib)
_LENGTH = _COMPRESSED - 1


class StateTable(WorkerRows):
    """``rows`` rows of :data:`SLOTS` slots of :data:`SLOT_BYTES` in memory shared with
    forked children."""

    def __init__(self, rows: int) -> None:
        super().__init__(rows, SLOTS * SLOT_BYTES)
        self._in_use = mmap.mmap(-1, max(rows, 1))  # a byte a row: 1 once a state is written
        self._writing = threading.Lock()  # one writer per row: the threads of a gthread worker
        self._written = 0  # states this process wrote in its row (each slot keeps its count)

    # -- in the master ---------------------------------------------------------------------

    def release(self, row: int | None) -> None:
        """A worker exited: no reader looks at its row any more, then it is emptied."""
        if row is not None and row not in self._free:
            self._in_use[row] = 0
        super().release(row)

    # -- in a worker -----------------------------------------------------------------------

    def put(self, match_id: str, version: int, state: bytes) -> bool:
        """Publish ``state``, the stored JSON of ``match_id`` at ``version``, in this worker's
        row (compressed when it is larger than a slot holds); ``False`` (nothing written) when
        this process has no row or the state does not fit a slot even compressed."""
        row = self.row
        if row is None:
            return False
        name = match_id.encode("utf-8")
        if len(name) > _NAME_BYTES:
            return False
        flags = 0
        if len(state) > _LARGEST:
            state, flags = zlib.compress(state, 1), _COMPRESSED
            if len(state) > _LARGEST:
                return False
        with self._writing:
            if not self._in_use[row]:
                self._in_use[row] = 1  # before its first state: readers look at the row
            at = self._slot_to_write(row, match_id, name)
            self._written += 1
            (sequence,) = _SEQUENCE.unpack_from(self._memory, at)
            _SEQUENCE.pack_into(self._memory, at, sequence + 1)  # odd: being written
            _HEADER.pack_into(
                self._memory,
                at,
                sequence + 1,
                version,
                len(state) | flags,
                zlib.crc32(state),
                name,
                self._written,
            )
            start = at + HEADER_BYTES
            self._memory[start : start + len(state)] = state
            _SEQUENCE.pack_into(self._memory, at, sequence + 2)  # even: whole
        return True

    def newest(
        self, match_id: str, *, newer_than: int, others_only: bool = False
    ) -> tuple[int, bytes] | None:
        """The newest (version, state) of ``match_id`` any worker published, if newer than
        ``newer_than``; ``None`` otherwise (or when every newer slot was being written).
        ``others_only``: not in this worker's own row (what it published, it holds)."""
        name = match_id.encode("utf-8")
        padded = name.ljust(_NAME_BYTES, b"\0")
        memory, in_use = self._memory, self._in_use
        best: tuple[int, bytes] | None = None
        first = self._bucket(match_id)
        own = self.row if others_only else None
        for row in range(self.rows):
            if not in_use[row] or row == own:
                continue
            base = self._at(row, first)
            for at in range(base, base + WAYS * SLOT_BYTES, SLOT_BYTES):
                if memory[at + _NAME_AT : at + _NAME_AT + _NAME_BYTES] != padded:
                    continue
                sequence, version, length, crc, held, _ = _HEADER.unpack_from(memory, at)
                if sequence % 2 or version <= newer_than or held != padded:
                    continue
                if best is not None and version <= best[0]:
                    continue
                compressed, length = length & _COMPRESSED, length & _LENGTH
                if length > _LARGEST:
                    continue
                start = at + HEADER_BYTES
                state = memory[start : start + length]
                (after,) = _SEQUENCE.unpack_from(memory, at)
                if after != sequence or zlib.crc32(state) != crc:
                    continue  # written meanwhile
                best = (version, zlib.decompress(state) if compressed else state)
        return best

    def _slot_to_write(self, row: int, match_id: str, name: bytes) -> int:
        """Where ``row`` keeps ``match_id``: the slot of its bucket that holds it, else one
        never written, else one whose match another row holds at a newer version, else the
        one written longest ago. The slots' match ids are compared as slices; a header is
        read only where it decides."""
        memory = self._memory
        padded = name.ljust(_NAME_BYTES, b"\0")
        first = self._bucket(match_id)
        base = self._at(row, first)
        slots: dict[bytes, int] = {}  # the match id each slot holds (padded) -> where
        for at in range(base, base + WAYS * SLOT_BYTES, SLOT_BYTES):
            held = memory[at + _NAME_AT : at + _NAME_AT + _NAME_BYTES]
            if held == padded:
                return at
            slots.setdefault(held, at)  # the first of the slots never written
        never = slots.get(_NO_NAME)
        if never is not None:
            return never  # never written since the row was emptied
        superseded = []
        in_use = self._in_use
        for other in range(self.rows):
            if other == row or not in_use[other]:
                continue
            other_base = self._at(other, first)
            for at in range(other_base, other_base + WAYS * SLOT_BYTES, SLOT_BYTES):
                mine = slots.get(memory[at + _NAME_AT : at + _NAME_AT + _NAME_BYTES])
                if mine is None:
                    continue
                sequence, version = _SEQUENCE_VERSION.unpack_from(memory, at)
                if sequence % 2 == 0 and version > _SEQUENCE_VERSION.unpack_from(memory, mine)[1]:
                    superseded.append(mine)
        return min(superseded or slots.values(), key=self._stamp)

    def _stamp(self, at: int) -> int:
        """When the slot at ``at`` was written (its row's count of writes)."""
        stamp: int = _STAMP.unpack_from(self._memory, at + _STAMP_AT)[0]
        return stamp

    @staticmethod
    def _bucket(match_id: str) -> int:
        """The first of the :data:`WAYS` slots of ``match_id``'s bucket."""
        return WAYS * (zlib.crc32(match_id.encode("utf-8")) % (SLOTS // WAYS))

    @staticmethod
    def _at(row: int, slot: int) -> int:
        return (row * SLOTS + slot) * SLOT_BYTES


_table: StateTable | None = None


def install(rows: int) -> StateTable:
    """Map the shared table (in gunicorn's master, before any worker is forked)."""
    global _table
    _table = StateTable(rows)
    return _table


def current() -> StateTable | None:
    """The table mapped by this process or its parent (``None`` outside gunicorn)."""
    return _table
