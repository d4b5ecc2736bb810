"""Open event streams and long-polls per client address, counted across gunicorn's workers.

``MAX_STREAMS_PER_ADDRESS`` caps one address's open waits over the whole server, but each
gunicorn worker is a process of its own and the kernel spreads one address's connections over
all of them. The counts therefore live in one block of shared memory that the master maps
before it forks (``deploy/gunicorn.conf.py``): a row per worker, a column per address bucket
(a CRC of the address). Each worker writes only its own row, so no lock is shared between
processes, and an address's count is the sum of its column. When a worker dies, even by
SIGKILL, the master zeroes its row before handing it to the replacement, so a dead worker's
streams never count against anyone.

Two workers admitting the same address at the same instant may each see one below the cap:
the cap may be passed by at most one stream per other worker. Addresses whose CRCs share a
bucket share a count; with 65,536 buckets that takes many thousands of busy addresses.

This module imports only the standard library (and ``service.workers.rows``, which does
too): the master loads it before gevent patches anything.
"""

from __future__ import annotations

import zlib

from service.workers.rows import WorkerRows

__all__ = ["BUCKETS", "SlotTable", "current", "current_table", "install"]

BUCKETS = 1 << 16
_INT = 4


class SlotTable(WorkerRows):
    """``rows`` rows of :data:`BUCKETS` counters in memory shared with forked children."""

    def __init__(self, rows: int) -> None:
        super().__init__(rows, BUCKETS * _INT)
        self._counts = memoryview(self._memory).cast("i")

    # -- in a worker -----------------------------------------------------------------------

    def count(self, address: str) -> int:
        """Open waits of ``address`` over every worker."""
        bucket = _bucket(address)
        return sum(self._counts[row * BUCKETS + bucket] for row in range(self.rows))

    def add(self, address: str, delta: int) -> None:
        """Count ``delta`` more (or fewer) open waits of ``address`` in this worker's row."""
        if self.row is None:
            raise RuntimeError("this process has no row of the table")
        index = self.row * BUCKETS + _bucket(address)
        self._counts[index] = max(0, self._counts[index] + delta)


def _bucket(address: str) -> int:
    return zlib.crc32(address.encode("utf-8", "replace")) % BUCKETS


_table: SlotTable | None = None


def install(rows: int) -> SlotTable:
    """Map the shared table (in gunicorn's master, before any worker is forked)."""
    global _table
    _table = SlotTable(rows)
    return _table


def current_table() -> SlotTable | None:
    """The table this process mapped (gunicorn's master), if any."""
    return _table


def current() -> SlotTable | None:
    """The table mapped by this process or its parent, if this process has a row in it."""
    return _table if _table is not None and _table.row is not None else None
