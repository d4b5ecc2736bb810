"""What the store raises; nothing outside ``service/store`` sees a Redis client's exceptions.

Exception tree::

    StoreError
    ├── StoreUnavailable    Redis did not answer, or answered an error: retry later (503)
    │   └── OutcomeUnknown  a commit was sent but whether it was applied cannot be told now
    └── Stale               the change was computed on a version (or clock) no longer current
"""

from __future__ import annotations

from service.store.values import Loaded

__all__ = ["OutcomeUnknown", "Stale", "StoreError", "StoreUnavailable"]


class StoreError(Exception):
    """Base of the store's exceptions."""


class StoreUnavailable(StoreError):
    """Redis (or the node holding the match) cannot serve the call now; nothing is known to
    have changed, except for :class:`OutcomeUnknown`."""


class OutcomeUnknown(StoreUnavailable):
    """A commit was sent, Redis may have run it, and asking again failed too.

    Resending the same request with its ``Idempotency-Key`` settles it: the store recognises
    the commit if it was applied, and applies the move at most once.
    """


class Stale(StoreError):
    """The change was computed on a state (or a clock) that is no longer current.

    ``fresh`` is the match as stored now when the commit's answer carried it, else ``None``.
    """

    def __init__(self, fresh: Loaded | None) -> None:
        super().__init__("the match changed since it was read")
        self.fresh = fresh
