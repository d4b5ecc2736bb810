"""What is worked out once per object: the parts of a match a move leaves alone.

A move copies the match but keeps the pool, the racks, the table and the rules it does not
change: the same objects in the next version. What is made of them (their stored form, the
multiset of a rack's or the table's tiles) is kept by the object itself, found by its
identity, which costs a dictionary look-up where hashing a tuple of tiles hashes each tile.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

__all__ = ["per_object"]

K = TypeVar("K")
V = TypeVar("V")


def per_object(make: Callable[[K], V], size: int) -> Callable[[K], V]:
    """``make(key)`` worked out once per object ``key`` (not per equal object). Each key is
    held, so that its id is never another object's; everything held is let go when ``size``
    is reached. What it hands out is shared: the caller must not change it.

    A function (a closure), not an object with ``__call__``: a draft asks a dozen of these,
    and calling an object's ``__call__`` cost 550 instructions more a call (callgrind)."""
    kept: dict[int, tuple[K, V]] = {}

    def lookup(key: K) -> V:
        held = kept.get(id(key))
        if held is not None and held[0] is key:
            return held[1]
        value = make(key)
        if len(kept) >= size:
            kept.clear()
        kept[id(key)] = (key, value)
        return value

    return lookup
