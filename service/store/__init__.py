"""The one place that knows Redis: the repository of matches and the topology behind it.

- :class:`MatchStore` loads, commits and follows :class:`~service.game.Match` objects
  (:mod:`service.store.matches`), handing out the values of :mod:`service.store.values`
  (:class:`Loaded`, :class:`Change`, :class:`Receipt`, :class:`StoredEvent`), with the keys of
  :mod:`service.store.keys` and the event log of :mod:`service.store.eventlog`;
- :class:`~service.store.notify.Notifications`: webhooks and their deliveries, fed by the
  apps' outboxes (:mod:`service.store.outbox`);
- :func:`open_topology` picks a single Redis or a Redis Cluster (:mod:`service.store.topology`);
- :mod:`service.store.errors` is all that callers catch.
"""

from service.store.errors import OutcomeUnknown, Stale, StoreError, StoreUnavailable
from service.store.keys import SHARDS, Keys
from service.store.listing import BadCursor, Page
from service.store.matches import MatchStore
from service.store.topology import Topology, limits_storage_uri, open_topology
from service.store.values import Change, Loaded, Receipt, StoredEvent, change

__all__ = [
    "SHARDS",
    "BadCursor",
    "Change",
    "Keys",
    "Loaded",
    "MatchStore",
    "OutcomeUnknown",
    "Page",
    "Receipt",
    "Stale",
    "StoreError",
    "StoreUnavailable",
    "StoredEvent",
    "Topology",
    "change",
    "limits_storage_uri",
    "open_topology",
]
