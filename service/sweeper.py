"""The sweeper: settles passed deadlines (and bot turns) even when nobody polls a match.

Run beside gunicorn: ``python -m service.sweeper``. Deadlines are indexed per shard, beside
the matches (see :mod:`service.store.matches`), so a Redis Cluster node that fails stops no
timer of the matches on the others; each due match is settled with the same atomic,
version-checked step a request uses, so several sweepers and requests can race harmlessly.
"""

from __future__ import annotations

import logging
import signal
import threading
import time

from service import observability
from service.bootstrap import bootstrap
from service.referee import Busy, Referee
from service.rules.solver.collector import freeze_after_searches
from service.store import StoreError
from service.store.notify import Notifications
from service.store.outage import Outage

__all__ = ["Sweeper", "main"]

log = logging.getLogger("service.sweeper")


class Sweeper:
    """Settles every due match, again and again, until stopped."""

    def __init__(self, referee: Referee, *, interval: float = 0.2, batch: int = 100) -> None:
        self.referee = referee
        self.interval = interval
        self.batch = batch
        self.stopping = threading.Event()
        self.warnings = Notifications(referee.store.topology)  # turn.expiring, by our clock
        self.outage = Outage(log, "sweeper")

    def sweep_once(self) -> int:
        """Settle the matches due now, and remove those whose idle time is over; return how
        many matches were looked at. What cannot be reached is told to :attr:`outage`."""
        store, outage = self.referee.store, self.outage
        expired = store.expire_idle(limit=self.batch, outage=outage)
        warned = self.warnings.send_due_warnings(limit=self.batch, outage=outage)
        due = store.due(limit=self.batch, outage=outage)
        unsettled: StoreError | None = None
        for match_id in due:
            try:
                self.referee.settle_due(match_id)
            except Busy:
                log.info("match %s busy; it will be settled on the next sweep", match_id)
            except StoreError as error:  # that match's node: the others go on
                unsettled = error
        if unsettled is not None:
            outage.failed("settling due matches", unsettled)
        else:
            outage.answered("settling due matches")
        return len(due) + expired + warned

    def run(self) -> None:
        """Sweep until :meth:`stop`; back off while Redis is unreachable (an outage is
        logged once when it starts and once when it ends: :class:`Outage`)."""
        backoff = self.interval
        while not self.stopping.is_set():
            try:
                swept = self.sweep_once()
                self.outage.answered("a sweep")
            except StoreError as error:
                self.outage.failed("a sweep", error)
                swept = 0
            backoff = min(backoff * 2, 5.0) if self.outage.down else self.interval
            if swept < self.batch:
                self.stopping.wait(backoff)

    def stop(self, *_: object) -> None:
        """Ask :meth:`run` to return after the current sweep."""
        self.stopping.set()


def main() -> None:
    """Entry point: sweep with the service's referee until SIGINT/SIGTERM."""
    observability.configure_logging()
    services = bootstrap()
    if services.settings.solver_freeze:  # it plays bots' turns: as the workers do
        freeze_after_searches()
    sweeper = Sweeper(services.referee)
    signal.signal(signal.SIGTERM, sweeper.stop)
    signal.signal(signal.SIGINT, sweeper.stop)
    log.info("sweeper started")
    started = time.monotonic()
    sweeper.run()
    log.info("sweeper stopped after %.0f s", time.monotonic() - started)


if __name__ == "__main__":
    main()
