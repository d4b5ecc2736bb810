"""The gunicorn worker: gunicorn's ``gthread`` worker on an :class:`ElasticPool`.

``deploy/gunicorn.conf.py`` selects it (``worker_class = "service.worker.ThreadWorker"``):
``GUNICORN_THREADS`` is the pool's most threads (open long-polls and event streams each hold
one) and ``GUNICORN_ACTIVE_THREADS`` (default 3) how many requests run at once.
"""

from __future__ import annotations

import os

from gunicorn.workers import gthread

from service.threads import ElasticPool, long_wait

__all__ = ["DEFAULT_ACTIVE_THREADS", "ThreadWorker"]

DEFAULT_ACTIVE_THREADS = 3


class ThreadWorker(gthread.ThreadWorker):
    """gunicorn's threaded worker, running requests on an :class:`ElasticPool`."""

    def get_thread_pool(self) -> ElasticPool:
        maximum = self.cfg.threads
        value = os.environ.get("GUNICORN_ACTIVE_THREADS", "").strip()
        active = int(value) if value else DEFAULT_ACTIVE_THREADS
        return ElasticPool(min(max(active, 1), maximum), maximum, name="request")

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
