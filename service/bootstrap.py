"""Wiring: settings, the store on its Redis topology, the referee and the webhooks, for
every process.

``create_app`` (the API), the sweeper and the webhook dispatcher all start from
:func:`bootstrap`, so they run the same referee on the same store; nothing here connects yet.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from service import observability
from service.config import Settings
from service.referee import Referee, SteppingAside
from service.store import MatchStore, limits_storage_uri
from service.store.notify import Notifications
from service.webhooks.registry import Webhooks
from service.workers.threads import cpu_bound

__all__ = ["HINT_HERE_SECONDS", "Services", "bootstrap"]

HINT_HERE_SECONDS = 0.002
"""A hint's search runs this long where it is asked (on the worker's event loop) before it is
handed to a thread: most answer within it, and handing one over cost a worker 0.3-0.5 ms of
processor time (service/referee/searches.py, quick_here; docs/PERFORMANCE.md, "Sixteenth
session")."""


@dataclass(frozen=True)
class Services:
    """What a process of the service works with."""

    settings: Settings
    store: MatchStore
    referee: Referee
    notifications: Notifications  # webhooks, deliveries and the apps' outboxes (Redis)
    webhooks: Webhooks  # the apps' webhooks: the use cases the API answers

    @property
    def limits_storage_uri(self) -> str:
        """Where the rate limits count (flask-limiter's URI): the store's own Redis."""
        return limits_storage_uri(self.settings)


def bootstrap(overrides: Mapping[str, Any] | None = None) -> Services:
    """Settings from the environment, then ``overrides`` (:class:`Settings` field names);
    the store on the Redis they name; the referee on that store."""
    settings = Settings.from_env().with_overrides(overrides)
    store = MatchStore.open(settings)
    referee = Referee(
        store,
        autoplay=SteppingAside(run=_off_the_loop),
        on_events=observability.record_events,
        run_search=_off_the_loop,
        hint_here=HINT_HERE_SECONDS,
    )
    notifications = Notifications(store.topology)
    hooks = Webhooks(
        notifications,
        now=store.now,
        test_mode=settings.test_mode,
        timeout=settings.webhook_timeout_seconds,
    )
    return Services(settings, store, referee, notifications, hooks)


def _off_the_loop(work: Callable[[], Any]) -> Any:
    """Run a solver search on a real thread when the worker runs an event loop, so that the
    worker's other requests go on meanwhile (see service/workers/threads.py)."""
    return cpu_bound(work)
