"""How many requests the app of this process is serving now.

The WSGI middleware ``service.api.connections.WholeBody`` counts them in :data:`serving`. A
commit lets the worker's other requests run before it is sent, so that those about to commit
join its round trip (``service.store.matches``); with no other request being served there is
nobody to join it, and letting them run (a turn of gevent's loop) cost a lone draft 15,000
instructions (``bench/instructions.py``).

This module imports nothing: the store and the API both read it.
"""

from __future__ import annotations

__all__ = ["Serving", "serving"]


class Serving:
    """``count``: the requests being served now (a plain count: no lock is needed for a hint)."""

    __slots__ = ("count",)

    def __init__(self) -> None:
        self.count = 0


serving = Serving()
"""This process's count."""
