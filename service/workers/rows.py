"""Memory the gunicorn master maps before it forks, a row per worker (stdlib only).

The base of the tables the workers of one host share (``slots.py``, ``shared_states.py``): the
master hands each worker about to be forked a free row, and empties a dead worker's row (even
one killed by SIGKILL) before it goes to a replacement. Each worker writes only its own row, so
no lock is shared between processes.
"""

from __future__ import annotations

import mmap

__all__ = ["WorkerRows"]


class WorkerRows:
    """``rows`` rows of ``row_bytes`` bytes of anonymous memory shared with forked children."""

    def __init__(self, rows: int, row_bytes: int) -> None:
        self.rows = rows
        self.row_bytes = row_bytes
        self._memory = mmap.mmap(-1, rows * row_bytes)  # anonymous, MAP_SHARED
        self._free = list(range(rows - 1, -1, -1))
        self.row: int | None = None  # the row this process writes (set before the fork)

    # -- in the master ---------------------------------------------------------------------

    def assign(self) -> int | None:
        """Take a free row for the worker about to be forked (``None`` if all are taken)."""
        self.row = self._free.pop() if self._free else None
        return self.row

    def release(self, row: int | None) -> None:
        """A worker exited: zero its row and make it free again."""
        if row is None or row in self._free:
            return
        start = row * self.row_bytes
        self._memory[start : start + self.row_bytes] = bytes(self.row_bytes)
        self._free.append(row)
