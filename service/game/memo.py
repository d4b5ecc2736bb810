"""What is worked out once per object: the parts of a match a move leaves alone.

A move copies the match but keeps the pool, the racks, the table and the rules it does not
change: the same objects in the next version. What is made of them (their stored form, the
multiset of a rack's or the table's tiles) is kept by the object itself, found by its
identity, which costs a dictionary look-up where hashing a tuple of tiles hashes each tile.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["PerObject"]

K = TypeVar("K")
V = TypeVar("V")


class PerObject(Generic[K, V]):
    """``make(key)`` worked out once per object ``key`` (not per equal object). Each key is
    held, so that its id is never another object's; everything held is let go when ``size``
    is reached. What it hands out is shared: the caller must not change it."""

    def __init__(self, make: Callable[[K], V], size: int) -> None:
        self.make, self.size = make, size
        self._kept: dict[int, tuple[K, V]] = {}

    def __call__(self, key: K) -> V:
        kept = self._kept.get(id(key))
        if kept is not None and kept[0] is key:
            return kept[1]
        value = self.make(key)
        if len(self._kept) >= self.size:
            self._kept.clear()
        self._kept[id(key)] = (key, value)
        return value
