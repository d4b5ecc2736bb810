"""Gunicorn settings for the referee.

    gunicorn -c deploy/gunicorn.conf.py 'service.app:create_app()'

Everything comes from the environment, with these defaults:

    HOST=127.0.0.1  PORT=8000           where to listen
    WEB_CONCURRENCY=cores (2 to 8)      worker processes
    GUNICORN_THREADS=64                 most threads per worker (long polls each hold one)
    GUNICORN_ACTIVE_THREADS=3           requests a worker runs at once (service/worker.py)
    GUNICORN_REUSE_PORT=1               one listening socket per worker (0: one shared socket)
    FORWARDED_ALLOW_IPS=127.0.0.1       proxies trusted for X-Forwarded-* headers
    LOG_LEVEL=info

Each worker builds its own app (and so its own Redis client): nothing is preloaded.

Why these defaults (measured with ``make bench`` on 2 cores; see README "Scale"):

- One worker per core. A worker is one Python process, and its threads share one interpreter
  lock, so a worker uses at most about one core; the threads only cover the waits on Redis and
  on slow clients. More workers than cores made the machine's scheduler, not the work, decide
  the slowest answers: with 5 workers on 2 cores the p99 latency of the same load varied from
  60 to 300 ms between runs, with 2 it stayed near 60 ms (before the worker below).
- ``reuse_port``: each worker listens on a socket of its own (``SO_REUSEPORT``) and the kernel
  spreads new connections across them. With one shared socket the worker that happens to wake
  first takes most of a burst of connections (28 of 32 in one run) while the other idles;
  keep-alive connections then stay unbalanced for their whole life. Because ``SO_REUSEPORT``
  would also let a second server bind the same port silently, ``on_starting`` below first
  checks that nothing listens there yet.
- ``service.worker.ThreadWorker``: gunicorn's ``gthread`` worker, but a worker runs at most
  ``GUNICORN_ACTIVE_THREADS`` requests at once and queues the rest in order; long-polls,
  event streams and solver searches give their slot up while they wait
  (``service/threads.py``). With 64 threads all taking turns at the interpreter lock a move
  cost 33 context switches and ~1,200 us of CPU; with 4 at a time, 13 and ~900 us. Enough
  slots keep a core busy while some requests wait on Redis: about 1 + (a request's time
  waiting on Redis / its CPU time). With Redis on the same machine or network, 2 to 4 did
  best in the bench (3: the write mix's p99 36 ms, 4: 46 ms); raise it for a distant Redis.
- ``gc.freeze()`` once the app is built: the tens of thousands of objects that importing
  Flask, redis-py and the app creates are never garbage, so the collector stops scanning them
  on every full collection (which holds the worker's lock while it runs).
"""

import errno
import gc
import multiprocessing
import os
import socket


def _int_from_env(name: str, default: int) -> int:
    value = os.environ.get(name, "").strip()
    return int(value) if value else default


bind = f"{os.environ.get('HOST', '127.0.0.1')}:{_int_from_env('PORT', 8000)}"
workers = _int_from_env("WEB_CONCURRENCY", max(2, min(multiprocessing.cpu_count(), 8)))
worker_class = "service.worker.ThreadWorker"  # gthread on an elastic pool: see service/threads.py
threads = _int_from_env("GUNICORN_THREADS", 64)  # each open event stream or long-poll holds one
preload_app = False
reuse_port = os.environ.get("GUNICORN_REUSE_PORT", "1").strip() != "0"

timeout = 30  # a worker silent for this long is restarted
graceful_timeout = 20  # on SIGTERM, in-flight requests get this long to finish
keepalive = 5

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


def on_starting(server):
    """Refuse to start when the address is taken (``SO_REUSEPORT`` would share it silently)."""
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


def post_worker_init(worker):
    """Leave the objects that building the app made out of every later garbage collection."""
    gc.freeze()


def child_exit(server, worker):
    """Drop a dead worker's live gauges from the shared Prometheus files."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)


# No runtime control socket (gunicorn 27 puts one in ~/.gunicorn by default, which two instances
# on one machine would share).
control_socket_disable = True
