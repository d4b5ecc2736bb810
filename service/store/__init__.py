"""The one place that knows Redis: the repository of matches and the topology behind it.

- :class:`MatchStore` loads, commits and follows :class:`~service.game.Match` objects
  (:mod:`service.store.matches`);
- :func:`open_topology` picks a single Redis or a Redis Cluster (:mod:`service.store.topology`);
- :mod:`service.store.errors` is all that callers catch.
"""

from service.store.errors import OutcomeUnknown, Stale, StoreError, StoreUnavailable
from service.store.listing import BadCursor, Page
from service.store.matches import (
    SHARDS,
    Change,
    Keys,
    Loaded,
    MatchStore,
    Receipt,
    StoredEvent,
)
from service.store.topology import Topology, limits_storage_uri, open_topology

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
    "limits_storage_uri",
    "open_topology",
]
