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

    def sweep_once(self) -> int:
        """Settle the matches due now, and remove those whose idle time is over; return how
        many matches were looked at."""
        expired = self.referee.store.expire_idle(limit=self.batch)
        warned = self.warnings.send_due_warnings(limit=self.batch)
        due = self.referee.store.due(limit=self.batch)
        for match_id in due:
            try:
                self.referee.settle_due(match_id)
            except Busy:
                log.info("match %s busy; it will be settled on the next sweep", match_id)
            except StoreError as error:  # that match's node: the others go on
                log.warning("could not settle %s: %s", match_id, error)
        return len(due) + expired + warned

    def run(self) -> None:
        """Sweep until :meth:`stop`; back off while Redis is unreachable."""
        backoff = self.interval
        while not self.stopping.is_set():
            try:
                swept = self.sweep_once()
                backoff = self.interval
            except StoreError as error:
                log.warning("sweep failed (%s); retrying in %.1f s", error, backoff)
                backoff = min(backoff * 2, 5.0)
                swept = 0
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
