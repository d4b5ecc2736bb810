"""The gunicorn worker: gunicorn's ``gthread`` worker on an :class:`ElasticPool`.

``deploy/gunicorn.conf.py`` selects it (``worker_class = "service.worker.ThreadWorker"``):
``GUNICORN_THREADS`` is the pool's most threads (open long-polls and event streams each hold
one) and ``GUNICORN_ACTIVE_THREADS`` (default 3) how many requests run at once.
"""

from __future__ import annotations

import os
from types import FrameType

from gunicorn.workers import gthread

from service.threads import ElasticPool, long_wait, shutting_down

__all__ = ["DEFAULT_ACTIVE_THREADS", "ThreadWorker", "active_threads"]

DEFAULT_ACTIVE_THREADS = 3


def active_threads() -> int:
    """``GUNICORN_ACTIVE_THREADS``, else :data:`DEFAULT_ACTIVE_THREADS`."""
    value = os.environ.get("GUNICORN_ACTIVE_THREADS", "").strip()
    return int(value) if value else DEFAULT_ACTIVE_THREADS


class ThreadWorker(gthread.ThreadWorker):
    """gunicorn's threaded worker, running requests on an :class:`ElasticPool`."""

    def get_thread_pool(self) -> ElasticPool:
        maximum = self.cfg.threads
        active = min(max(active_threads(), 1), maximum)
        return ElasticPool(active, maximum, name="request")

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        # SIGTERM: gunicorn stops accepting and gives the requests in flight the graceful
        # timeout to finish. Long-polls and event streams end now rather than be cut then.
        shutting_down.set()
        super().handle_exit(sig, frame)

    def handle(self, conn: gthread.TConn) -> object:
        # A new connection may stay silent for seconds (browsers open spare ones): wait for
        # its first bytes without holding a run slot. gunicorn then defers a silent one to
        # its poller, as it does itself.
        if not conn.initialized and not conn.data_ready:
            with long_wait():
                ready = conn.wait_for_data(gthread.DEFAULT_WORKER_DATA_TIMEOUT)
            if not ready:
                return gthread._DEFER
        return super().handle(conn)
