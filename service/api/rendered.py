"""The JSON of the match views a worker answered last, kept by match, version and reader.

A view is the same for every request of one reader (a seat, the owning app, anyone else)
at one version of a match, but for ``server_time``, the clock of the request. Polling
clients ask again and again for a version that has not changed, so the worker keeps each
view it rendered as the JSON before and after ``server_time`` and writes only the clock
anew. The bytes are exactly those of rendering the whole view (``service.jsoncodec``).

A reader's view of a match is kept at one version, the newest asked for: a new version
replaces the one before (an older version asked for is rendered whole, not kept), so the
``size`` entries are the views of ``size`` readers of live matches, not old versions of a few
(with 4,096 live matches and their readers polling, the versions each move left behind had
pushed the live views out). The oldest go first once ``size`` are kept.
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
        # (match id, reader) -> the version and its JSON before and after the clock
        self._kept: dict[tuple[str, Reader], tuple[int, tuple[bytes, bytes] | None]] = {}

    def json(
        self,
        key: tuple[str, int, Reader],
        now: float,
        render: Callable[[float], dict[str, Any]],
    ) -> bytes:
        """The view of ``key`` as JSON at clock ``now``; ``render(now)`` makes the view when
        it is not kept (its ``server_time`` must be the ``now`` it is given)."""
        match_id, version, reader = key
        kept = self._kept.get((match_id, reader))
        if kept is not None and kept[0] == version:
            parts = kept[1]
        elif kept is not None and kept[0] > version:
            parts = None  # an older version than the one kept: rendered, not kept
        else:
            parts = self._split(render)
            self._keep((match_id, reader), version, parts)
        if parts is None:
            return dumps(render(now))
        return parts[0] + dumps(now) + parts[1]

    def _split(self, render: Callable[[float], dict[str, Any]]) -> tuple[bytes, bytes] | None:
        view = render(0.0)
        view["server_time"] = _CLOCK
        pieces = dumps(view).split(_CLOCK_JSON)
        return (pieces[0], pieces[1]) if len(pieces) == 2 else None

    def _keep(
        self, key: tuple[str, Reader], version: int, parts: tuple[bytes, bytes] | None
    ) -> None:
        kept = self._kept
        kept.pop(key, None)  # the version before: its place goes with it
        while len(kept) >= self.size:
            # The oldest first (dicts keep insertion order); another thread may have taken it.
            with suppress(KeyError, RuntimeError, StopIteration):
                del kept[next(iter(kept))]
        kept[key] = (version, parts)
