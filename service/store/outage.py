"""An outage of the store, told once when it starts and once when it ends.

A periodic loop (the sweeper, the dispatcher's shard readers) reads many parts of the store
each round: every shard's deadlines, expiries and warnings, every shard's outbox. While Redis
is down each part fails on every round; logging each failure wrote about 500 warning lines
for a 3.5 s outage. An :class:`Outage` is told which part failed and which answered: the
first failure while everything answered logs one warning, the answer that leaves no part
failing logs one more (with how long it lasted); the failures between are debug lines.
"""

from __future__ import annotations

import logging
import threading
import time

__all__ = ["Outage"]


class Outage:
    """The parts of the store a loop (``who``) cannot reach now; thread-safe."""

    def __init__(self, log: logging.Logger, who: str) -> None:
        self.log = log
        self.who = who
        self._failing: dict[str, str] = {}
        self._since = 0.0
        self._failures = 0
        self._lock = threading.Lock()

    @property
    def down(self) -> bool:
        """Whether some part has failed and not answered since."""
        return bool(self._failing)

    def failed(self, part: str, error: object) -> None:
        """``part`` could not be reached (``error`` says why): a warning if it starts an
        outage, a debug line otherwise."""
        with self._lock:
            starts = not self._failing
            self._failing[part] = str(error)
            self._failures += 1
            if starts:
                self._since = time.monotonic()
        if starts:
            self.log.warning(
                "%s: the store cannot be reached (%s: %s); retrying, and saying so again "
                "only when every part answers",
                self.who,
                part,
                error,
            )
        else:
            self.log.debug("%s: %s still unreachable: %s", self.who, part, error)

    def answered(self, part: str) -> None:
        """``part`` answered: a warning when that ends the outage."""
        if part not in self._failing:  # the common case, without the lock
            return
        with self._lock:
            self._failing.pop(part, None)
            ends = not self._failing and self._failures > 0
            failures, self._failures = (self._failures, 0) if ends else (0, self._failures)
            lasted = time.monotonic() - self._since
        if ends:
            self.log.warning(
                "%s: the store answers again after %.1f s (%d failed reads meanwhile)",
                self.who,
                lasted,
                failures,
            )
