"""Python's cyclic garbage collector held off while searches run (README, "The solver, compiled").

A search makes hundreds of thousands of short-lived tuples (its links) and no reference
cycle: reference counting frees all it makes. While a search runs, its live links count
as new objects to the collector, which then runs young collections; they promote the
option cache's new tuples to older generations, which each later collection walks again.
On the tail positions of bench/solver_tail.py one collection took up to 225 ms in the middle
of a search that takes 13 ms without it, under the workers' thresholds
(deploy/gunicorn.conf.py), and full collections up to 200 ms under Python's defaults.
With the collector off during searches the links are gone before it counts them.

:func:`collector_paused` turns automatic collection off while at least one search of the
process runs (threads included), and back on when the last one ends. It never turns on a
collector that someone else turned off, and it turns the collector back on after
``MAX_PAUSE`` seconds even while searches overlap without a gap (two threads kept busy), so
that cyclic garbage made meanwhile elsewhere in the process (other requests) is collected
as before, only a little later.
"""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["MAX_PAUSE", "collector_paused"]

MAX_PAUSE = 2.0  # seconds: the longest the collector stays off while searches overlap

_lock = threading.Lock()
_running = 0  # searches under way
_paused_at: float | None = None  # when this module turned the collector off, if it did


@contextmanager
def collector_paused() -> Iterator[None]:
    """Hold automatic garbage collection off while the block runs (see the module)."""
    global _running, _paused_at
    with _lock:
        _running += 1
        if _running == 1 and _paused_at is None and gc.isenabled():
            gc.disable()
            _paused_at = time.monotonic()
    try:
        yield
    finally:
        with _lock:
            _running -= 1
            if _paused_at is not None and (
                _running == 0 or time.monotonic() - _paused_at > MAX_PAUSE
            ):
                gc.enable()
                _paused_at = None
