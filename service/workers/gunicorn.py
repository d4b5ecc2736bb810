"""Gunicorn settings and server hooks for the referee (``deploy/gunicorn.conf.py`` imports them).

    gunicorn -c deploy/gunicorn.conf.py 'service.app:create_app()'

Everything comes from the environment, with these defaults:

    HOST=127.0.0.1  PORT=8000           where to listen
    WEB_CONCURRENCY=cores (2 to 8)      worker processes
    GUNICORN_WORKER_CLASS=gevent        gunicorn's stock gevent worker (ARCHITECTURE.md)
    GUNICORN_WORKER_CONNECTIONS=5000    open connections per worker (streams, requests, idle)
    GUNICORN_THREADS=64                 threads per worker, only with GUNICORN_WORKER_CLASS=gthread
    REQUEST_HEAD_TIMEOUT=5              seconds a request's line and headers have to arrive whole
    GUNICORN_REUSE_PORT=1               one listening socket per worker (0: one shared socket)
    FORWARDED_ALLOW_IPS=127.0.0.1       proxies trusted for X-Forwarded-* headers
    LOG_LEVEL=info

Each worker builds its own app (and so its own Redis client): nothing is preloaded.

Why these defaults (measured with ``make bench`` on 2 cores; see docs/ARCHITECTURE.md "Running
at scale" and "Worker model"):

- One worker per core. A worker is one Python process and uses at most about one core.
  More workers than cores made the machine's scheduler, not the work, decide the slowest
  answers: with 5 workers on 2 cores the p99 latency of the same load varied from 60 to 300 ms
  between runs, with 2 it stayed near 60 ms.
- ``gevent``: every connection is a greenlet of a few kilobytes, so open event streams,
  long-polls and slow clients cost no thread (``bench/live.py``: 5,000 open streams while
  moves keep their latency). Solver searches run on real threads (``service/workers/threads.py``).
  ``worker_connections`` bounds the connections of a worker; the app refuses streams beyond
  ``MAX_STREAMS_PER_WORKER`` (4,000) with a 503 before that bound is near, so requests
  always find room.
- ``keepalive`` is how long the gevent worker waits for a request's line and headers, for
  the first request of a connection as for the next ones: a client that sends half a
  request (slowloris) is dropped after ``REQUEST_HEAD_TIMEOUT`` seconds, holding nothing
  but its socket meanwhile.
- ``reuse_port``: each worker listens on a socket of its own (``SO_REUSEPORT``) and the kernel
  spreads new connections across them. With one shared socket the worker that happens to wake
  first takes most of a burst of connections (28 of 32 in one run) while the other idles;
  keep-alive connections then stay unbalanced for their whole life. Because ``SO_REUSEPORT``
  would also let a second server bind the same port silently, ``on_starting`` below first
  checks that nothing listens there yet.
- The open-file limit is raised to the hard limit at start (each connection is a file).
- The master maps a table of the states the workers last committed (``shared_states.py``) before
  it forks: the kernel spreads one match's players over the workers, and a move reaching a
  worker whose copy another worker made old is then still one commit script, not a refused
  commit and a second one (drafts spread over two workers: 1.5 commit scripts per draft without
  the table, 1.06 with it).
- After each answer the worker lets its other connections run once (``post_request``).
- ``gc.freeze()`` once the app is built: the tens of thousands of objects that importing
  Flask, redis-py and the app creates are never garbage, so the collector stops scanning them
  on every full collection. Then what each collection leaves is frozen as it ends, and the
  worker runs a young collection itself every ``YOUNG_COLLECTION_EVERY`` answers
  (``COLLECTOR_FREEZE``): the copies of matches and the other caches are walked once, in short
  pauses, not again by every middle and full collection as they age. Young collections every
  50,000 allocations (``GC_THRESHOLDS``) and gevent's greenlet-tree tracking off: with
  thousands of open streams, full collections over every stream's objects were the workers'
  longest pauses (docs/ARCHITECTURE.md "Many streams: what the profile showed").
"""

from __future__ import annotations

import errno
import gc
import logging
import multiprocessing
import os
import resource
import signal
import socket
import sys
from collections.abc import Callable
from typing import Any

from service.workers import shared_states, slots  # the standard library only

__all__ = [
    "GC_THRESHOLDS",
    "access_log_format",
    "accesslog",
    "bind",
    "child_exit",
    "control_socket_disable",
    "errorlog",
    "forwarded_allow_ips",
    "graceful_timeout",
    "keepalive",
    "limit_request_field_size",
    "limit_request_fields",
    "limit_request_line",
    "loglevel",
    "on_starting",
    "post_request",
    "post_worker_init",
    "pre_fork",
    "preload_app",
    "reuse_port",
    "threads",
    "timeout",
    "worker_class",
    "worker_connections",
    "worker_exit",
    "workers",
]


def _int_from_env(name: str, default: int) -> int:
    value = os.environ.get(name, "").strip()
    return int(value) if value else default


bind = f"{os.environ.get('HOST', '127.0.0.1')}:{_int_from_env('PORT', 8000)}"
workers = _int_from_env("WEB_CONCURRENCY", max(2, min(multiprocessing.cpu_count(), 8)))
worker_class = os.environ.get("GUNICORN_WORKER_CLASS", "").strip() or "gevent"
worker_connections = _int_from_env("GUNICORN_WORKER_CONNECTIONS", 5000)
threads = _int_from_env("GUNICORN_THREADS", 64)  # gthread only: each open stream holds one
preload_app = False
reuse_port = os.environ.get("GUNICORN_REUSE_PORT", "1").strip() != "0"

# The garbage collector's thresholds (gen0 allocations, then collections of the younger
# generation): with thousands of streams waiting, the default (700, 10, 10) promoted each
# stream's per-wait objects (a timer, a waiter: alive until the next event, seconds later) to
# the oldest generation, and a full collection over every open stream's objects (100-170 ms
# of CPU at 2,500 streams a worker) ran about every 30 s. With young collections every 50,000
# allocations those objects are gone before they age. The price is a longer young collection
# when one comes, so a request must not leave garbage in reference cycles: werkzeug's router
# left 7 objects a call, which filled the young generation in seconds under load and made
# collections of 13-68 ms (service/api/routing.py remembers its answers instead).
GC_THRESHOLDS = (50_000, 20, 10)

timeout = 30  # a worker silent for this long is restarted
graceful_timeout = 20  # on SIGTERM, in-flight requests get this long to finish
keepalive = _int_from_env("REQUEST_HEAD_TIMEOUT", 5)  # gevent: a request head's time to arrive

forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")

# Request limits: the API takes small JSON bodies; refuse absurd request lines and headers early.
limit_request_line = 8190
limit_request_fields = 100
limit_request_field_size = 8190

# The app writes its own access log, as JSON with a request id (service/observability.py), so
# gunicorn's is off unless GUNICORN_ACCESS_LOG=1. Its format names the path without its query
# string and never a header that carries a secret: no %(u)s, no Authorization, no cookies.
accesslog = "-" if os.environ.get("GUNICORN_ACCESS_LOG") == "1" else None
errorlog = "-"
loglevel = os.environ.get("LOG_LEVEL", "info")
access_log_format = '%(h)s %(t)s "%(m)s %(U)s %(H)s" %(s)s %(b)s %(M)sms "%(a)s"'


def on_starting(server: Any) -> None:
    """Raise the open-file limit, map the table of streams per address (``slots.py``), name
    the listening address in the log, and refuse to start when it is taken
    (``SO_REUSEPORT`` would share it silently)."""
    _raise_open_files_limit(server.log)
    slots.install(rows=max(2 * server.cfg.workers, 16))
    shared_states.install(rows=max(2 * server.cfg.workers, 4))
    logging.getLogger("gunicorn.error").addFilter(_ListeningAt(server.cfg.bind))
    if not server.cfg.reuse_port:
        return  # gunicorn's own bind reports EADDRINUSE
    for address in server.cfg.address:
        if not isinstance(address, tuple):
            continue  # a Unix socket path: not shared by SO_REUSEPORT
        family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            # SO_REUSEADDR, so that old connections in TIME_WAIT do not count; no SO_REUSEPORT,
            # so that the bind fails while any socket listens on the address.
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(address)
            except OSError as error:
                if error.errno == errno.EADDRINUSE:
                    raise SystemExit(f"{address[0]}:{address[1]} is already in use") from None
                raise


def _raise_open_files_limit(log: Any) -> None:
    """Every open connection is a file: allow as many as the hard limit does."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
        except (ValueError, OSError) as error:
            log.warning("could not raise the open files limit from %s: %s", soft, error)


class _ListeningAt(logging.Filter):
    """gunicorn names no address in "Listening at:" when each worker binds its own socket
    (``reuse_port``): name the configured ones."""

    def __init__(self, bind: list[str]) -> None:
        super().__init__()
        self.bind = ",".join(f"http://{address}" for address in bind)

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if record.msg == "Listening at: %s (%s)" and isinstance(args, tuple) and not args[0]:
            record.args = (self.bind, *args[1:])
        return True


def pre_fork(server: Any, worker: Any) -> None:
    """Give the worker about to be forked its rows of the streams table and of the table of
    match states (``service/workers/shared_states.py``)."""
    table = slots.current_table()
    worker.slots_row = table.assign() if table is not None else None
    states = shared_states.current()
    worker.states_row = states.assign() if states is not None else None


_yield: Callable[[float], object] | None = None  # gevent.sleep in a gevent worker
# Answers between two young collections the worker runs itself, what they leave frozen: each
# walks what these answers left (a move's new copy of its match, about 30 objects), 1-7 ms at
# 4,096 live matches under bench/api.py's loads, where the collections Python started itself
# came rarely and walked up to 114,000 objects, 56-80 ms (service/rules/solver/collector.py).
YOUNG_COLLECTION_EVERY = 256
_collect_now: Callable[[], None] | None = None  # the collector's, with COLLECTOR_FREEZE
_answers = 0  # answers since the last young collection the worker ran
NEXT_LOOP = 1e-6  # seconds: a timer due at once, run after the loop's next look at the sockets


def post_worker_init(worker: Any) -> None:
    """Tune the garbage collector and gevent for thousands of open streams (see the module's
    notes), and let SIGTERM end the long waits at once (``threads.shutting_down``)."""
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
    # What the solver's searches leave (its option cache) is frozen too, so that later
    # collections stop walking it (service/rules/solver/collector.py; SOLVER_FREEZE).
    # And what every collection leaves (the copies of matches, the other caches): with a
    # young collection every YOUNG_COLLECTION_EVERY answers (COLLECTOR_FREEZE).
    from service.config import Settings
    from service.rules.solver import collector

    settings = Settings.from_env()
    if settings.solver_freeze:
        collector.freeze_after_searches()
    if settings.collector_freeze:
        collector.freeze_after_collections()
        global _collect_now
        _collect_now = collector.collect_now
    if "gevent" in sys.modules:
        import gevent

        gevent.config.track_greenlet_tree = False
        if "gevent" in worker_class:
            global _yield
            _yield = gevent.sleep
            from service import observability

            observability.tally_moves()  # its moves counted in bulk: flushed by worker_exit
    from service.workers.threads import shutting_down  # imported after gevent patched threading

    graceful = signal.getsignal(signal.SIGTERM)

    def stop(signum: int, frame: Any) -> None:
        shutting_down.set()
        # Kept-alive connections (a stream that just ended, an idle client) close now rather
        # than after their keep-alive time: the gevent worker reads the setting each time.
        worker.cfg.set("keepalive", 0)
        if callable(graceful):
            graceful(signum, frame)

    signal.signal(signal.SIGTERM, stop)


def post_request(worker: Any, req: Any, environ: Any, resp: Any) -> None:
    """Let every other connection of the worker run before this one reads its next request.

    A gevent greenlet runs until a read or write would block. On a fast loopback the next
    request of a kept-alive connection (and Redis's answer) is often already there, so one
    connection could be served many times in a row while the others' requests waited: with 32
    connections the p99 of ``GET /readyz`` was 250 ms at a p50 of 16 ms. Waiting for the event
    loop's next look at the sockets after each answer serves the connections in turn (p99 57
    ms, same throughput). A sleep of 0 would not do: it only queues the greenlet behind the
    callbacks already due, and the loop runs many of those before it looks at the sockets
    again (a request on another connection waited for 249 of 400 pipelined ones).

    Every ``YOUNG_COLLECTION_EVERY`` answers, first a young collection (``COLLECTOR_FREEZE``).
    """
    if _collect_now is not None:
        global _answers
        _answers += 1
        if _answers >= YOUNG_COLLECTION_EVERY:
            _answers = 0
            _collect_now()
    if _yield is not None:
        _yield(NEXT_LOOP)


def worker_exit(server: Any, worker: Any) -> None:
    """In the worker as it exits: the moves it counted in bulk go to the Prometheus counter
    (``service.observability``), so that none is lost with it."""
    from service import observability

    observability.flush_moves()


def child_exit(server: Any, worker: Any) -> None:
    """Free a dead worker's rows of the streams and states tables, and drop its live gauges from the
    shared Prometheus files."""
    table = slots.current_table()
    if table is not None:
        table.release(getattr(worker, "slots_row", None))
    states = shared_states.current()
    if states is not None:
        states.release(getattr(worker, "states_row", None))
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)  # type: ignore[no-untyped-call]


# No runtime control socket (gunicorn 27 puts one in ~/.gunicorn by default, which two instances
# on one machine would share).
control_socket_disable = True
