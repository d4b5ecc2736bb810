"""Gunicorn settings for the referee.

    gunicorn -c deploy/gunicorn.conf.py 'service.app:create_app()'

Everything comes from the environment (HOST, PORT, WEB_CONCURRENCY, GUNICORN_WORKER_CLASS,
GUNICORN_WORKER_CONNECTIONS, GUNICORN_THREADS, REQUEST_HEAD_TIMEOUT, GUNICORN_REUSE_PORT,
FORWARDED_ALLOW_IPS, LOG_LEVEL). The settings, their defaults, the measurements behind them
and the server hooks live with the rest of the worker model in ``service/workers/gunicorn.py``.
"""

from service.workers.gunicorn import (  # the standard library only: safe before gevent patches
    access_log_format,
    accesslog,
    bind,
    child_exit,
    control_socket_disable,
    errorlog,
    forwarded_allow_ips,
    graceful_timeout,
    keepalive,
    limit_request_field_size,
    limit_request_fields,
    limit_request_line,
    loglevel,
    on_starting,
    post_request,
    post_worker_init,
    pre_fork,
    preload_app,
    reuse_port,
    threads,
    timeout,
    worker_class,
    worker_connections,
    worker_exit,
    workers,
)

__all__ = [
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
