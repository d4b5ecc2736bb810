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

A long-lived process that searches often (a gunicorn worker: ``deploy/gunicorn.conf.py``)
can also keep the option cache out of later collections, with :func:`freeze_after_searches`.
What a search leaves behind is mostly the cache's new entries, which live on; every later
collection walked them again as they aged (in a worker during bench/solver_tail.py's hints,
38 young collections took 526 ms, one of the middle generation 227 ms and one full
collection 393 ms, each inside a hint, and stalling every other request of the worker).
Then, when the last search ends, the young generations are collected (the cyclic garbage
made meanwhile goes) and what is left is frozen (:func:`gc.freeze`): never walked again,
and still freed by reference counting when the cache drops it. An object frozen while alive
that later dies in a reference cycle is not collected; so that such objects cannot pile up,
at most every :data:`RECLAIM_SECONDS` everything is unfrozen, collected in full once (the
pause a full collection was before), and frozen again.

A worker's other caches grow the same way (its decoded copies of matches, their stored
states, rendered views, the tracking record): :func:`freeze_after_collections` freezes what
each collection of the process leaves, as it ends, so that no collection walks a survivor
twice, and a full one no longer walks every copy (at 4,096 live matches, 94-121 ms of
processor time in a worker). A young collection still walks what was made since the last:
Python starts one when the objects made *less those freed* pass its threshold, and a move
that replaces a copy frees about what it makes, so under moves that count barely grows while
the new copies pile up (a young collection of 114,000 objects, 56-80 ms, at a threshold of
50,000). So a worker also runs one itself every so many answers, at a quiet point
(:func:`collect_now`), which keeps each short; everything frozen is collected in full there
too, when due.
"""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = [
    "MAX_PAUSE",
    "RECLAIM_SECONDS",
    "collect_now",
    "collector_paused",
    "freeze_after_collections",
    "freeze_after_searches",
]

MAX_PAUSE = 2.0  # seconds: the longest the collector stays off while searches overlap
RECLAIM_SECONDS = 600.0  # at most this long between two full collections of what was frozen

_lock = threading.Lock()
_running = 0  # searches under way
_paused_at: float | None = None  # when this module turned the collector off, if it did
_reclaim_every: float | None = None  # set by freeze_after_searches: freeze what searches leave
_reclaimed_at = 0.0  # when everything frozen was last collected in full
_survivors_reclaim_every: float | None = None  # set by freeze_after_collections
reclaim_due = False  # a reclaim is due (set as a collection ends): collect_now does it


def freeze_after_searches(reclaim_every: float | None = RECLAIM_SECONDS) -> None:
    """From now on, when the last search ends, collect the young generations and freeze
    what is left, and at most every ``reclaim_every`` seconds collect everything frozen in full
    first (see the module); ``None`` turns it off. For a long-lived process: a test or a
    script need not."""
    global _reclaim_every, _reclaimed_at
    with _lock:
        _reclaim_every = reclaim_every
        _reclaimed_at = time.monotonic()


def _freeze_what_is_left(reclaim_every: float) -> None:
    now = time.monotonic()
    if now - _reclaimed_at > reclaim_every:  # what died in a cycle since it was frozen goes
        _reclaim(now)
    else:
        gc.collect(1)  # the young generations: their cyclic garbage is freed, not frozen
    gc.freeze()


def _reclaim(now: float) -> None:
    """Unfreeze everything and collect it in full (what died in a cycle while frozen goes)."""
    global _reclaimed_at, reclaim_due
    gc.unfreeze()
    gc.collect()
    _reclaimed_at = now
    reclaim_due = False


def freeze_after_collections(reclaim_every: float | None = RECLAIM_SECONDS) -> None:
    """From now on, freeze what each garbage collection of the process leaves, as it ends, and
    have :func:`collect_now` collect everything frozen in full at most every
    ``reclaim_every`` seconds (see the module); ``None`` turns it off. For a long-lived
    process whose caches grow (a gunicorn worker): a test or a script need not."""
    global _survivors_reclaim_every, _reclaimed_at, reclaim_due
    with _lock:
        if _freeze_survivors in gc.callbacks:
            gc.callbacks.remove(_freeze_survivors)
        _survivors_reclaim_every = reclaim_every
        reclaim_due = False
        if reclaim_every is not None:
            _reclaimed_at = time.monotonic()
            gc.callbacks.append(_freeze_survivors)


def _freeze_survivors(phase: str, info: dict[str, int]) -> None:
    """A collection's callback: when it ends, freeze what it left (the younger generations
    are empty then but for its survivors), and say whether a reclaim is due."""
    global reclaim_due
    if phase != "stop":
        return
    gc.freeze()  # moves every generation's list to the frozen one: no collection runs now
    every = _survivors_reclaim_every
    if every is not None and time.monotonic() - _reclaimed_at > every:
        reclaim_due = True


def collect_now() -> None:
    """At a quiet point (not from a collection's callback): collect the young generations,
    or everything frozen in full when :func:`freeze_after_collections`'s time for that has
    come (checked as each collection ends); what is left is frozen. Nothing while a search
    holds the collector off (its links are not to be walked)."""
    with _lock:
        if _running:
            return
        if reclaim_due:
            _reclaim(time.monotonic())
            gc.freeze()
        else:
            gc.collect(0)  # what it leaves is frozen as it ends, when survivors are frozen


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
                if _reclaim_every is not None:
                    _freeze_what_is_left(_reclaim_every)
                gc.enable()
                _paused_at = None
