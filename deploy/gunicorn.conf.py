"""Gunicorn settings for the referee.

    gunicorn -c deploy/gunicorn.conf.py 'service.app:create_app()'

Everything comes from the environment, with these defaults:

    HOST=127.0.0.1  PORT=8000           where to listen
    WEB_CONCURRENCY=min(2*cores+1, 8)   worker processes
    GUNICORN_THREADS=64                 threads per worker (long polls each hold one)
    FORWARDED_ALLOW_IPS=127.0.0.1       proxies trusted for X-Forwarded-* headers
    LOG_LEVEL=info

Each worker builds its own app (and so its own Redis client): nothing is preloaded.
"""

import multiprocessing
import os


def _int_from_env(name: str, default: int) -> int:
    value = os.environ.get(name, "").strip()
    return int(value) if value else default


bind = f"{os.environ.get('HOST', '127.0.0.1')}:{_int_from_env('PORT', 8000)}"
workers = _int_from_env("WEB_CONCURRENCY", min(2 * multiprocessing.cpu_count() + 1, 8))
worker_class = "gthread"
threads = _int_from_env("GUNICORN_THREADS", 64)  # each open event stream or long-poll holds one
preload_app = False

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


def child_exit(server, worker):  # noqa: ANN001, ARG001 - gunicorn's hook signature
    """Drop a dead worker's live gauges from the shared Prometheus files."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)

# No runtime control socket (gunicorn 27 puts one in ~/.gunicorn by default, which two instances
# on one machine would share).
control_socket_disable = True
