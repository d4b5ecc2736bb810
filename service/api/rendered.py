"""The JSON of the match views a worker answered last, kept by match, version and reader.

A view is the same for every request of one reader (a seat, the owning app, anyone else)
at one version of a match, but for ``server_time``, the clock of the request. Polling
clients ask again and again for a version that has not changed, so the worker keeps each
view it rendered as the JSON before and after ``server_time`` and writes only the clock
anew. The bytes are exactly those of rendering the whole view (``service.jsoncodec``).

A new version is a new key: an entry is never stale, only old, and the oldest go first
once ``size`` entries are kept.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from typing import Any

from service.jsoncodec import dumps

__all__ = ["RenderedViews"]

Reader = tuple[str, int | None]  # ("seat", n), ("owner", None) or ("public", None)

# What stands for the clock while a view is rendered; a view where it shows up anywhere
# else (a player may name herself anything) is rendered whole each time, never kept.
_CLOCK = "\u0000server-time\u0000"
_CLOCK_JSON = dumps(_CLOCK)


class RenderedViews:
    """Views rendered to JSON, kept by (match id, version, reader); see the module."""

    def __init__(self, size: int = 4096) -> None:
        self.size = max(size, 1)
        self._kept: dict[tuple[str, int, Reader], tuple[bytes, bytes] | None] = {}

    def json(
        self,
        key: tuple[str, int, Reader],
        now: float,
        render: Callable[[float], dict[str, Any]],
    ) -> bytes:
        """The view of ``key`` as JSON at clock ``now``; ``render(now)`` makes the view when
        it is not kept (its ``server_time`` must be the ``now`` it is given)."""
        try:
            parts = self._kept[key]
        except KeyError:
            parts = self._split(render)
            self._keep(key, parts)
        if parts is None:
            return dumps(render(now))
        return parts[0] + dumps(now) + parts[1]

    def _split(self, render: Callable[[float], dict[str, Any]]) -> tuple[bytes, bytes] | None:
        view = render(0.0)
        view["server_time"] = _CLOCK
        pieces = dumps(view).split(_CLOCK_JSON)
        return (pieces[0], pieces[1]) if len(pieces) == 2 else None

    def _keep(self, key: tuple[str, int, Reader], parts: tuple[bytes, bytes] | None) -> None:
        kept = self._kept
        while len(kept) >= self.size:
            # The oldest first (dicts keep insertion order); another thread may have taken it.
            with suppress(KeyError, RuntimeError, StopIteration):
                del kept[next(iter(kept))]
        kept[key] = parts
