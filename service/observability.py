"""Operations: Prometheus metrics at ``/metrics``, JSON logs with a request id.

Metrics (``referee_`` prefix): request latency histograms by route, method and status;
moves applied by kind; refusals by reason code; turn timeouts; games ended; open event
streams. Under gunicorn set ``PROMETHEUS_MULTIPROC_DIR`` (``make run`` does) so every
worker's figures are summed. Logs are one JSON object a line on stderr, each with the
``request_id`` (taken from a well-formed ``X-Request-ID`` header, or made up, and sent
back in the answer). No log line carries a token, a rack or the pool.
"""

from __future__ import annotations

import logging
import os
import re
import time
import uuid
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from flask import Blueprint, Flask, Response, current_app, g, has_request_context, request
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)
from pythonjsonlogger.json import JsonFormatter

from service.game import Event, EventType

__all__ = [
    "STREAMS_OPEN",
    "blueprint",
    "configure_logging",
    "flush_moves",
    "init_app",
    "record_events",
    "record_refusal",
    "tally_moves",
]

REQUEST_SECONDS = Histogram(
    "referee_request_duration_seconds",
    "Time to answer a request.",
    ["route", "method", "status"],
    buckets=(0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 30.0),
)
MOVES = Counter("referee_moves_applied_total", "Moves applied, by kind.", ["kind"])
REFUSALS = Counter("referee_refusals_total", "Moves refused, by reason code.", ["reason"])
TIMEOUTS = Counter("referee_turn_timeouts_total", "Turns that ran out of time.", ["reverted"])
GAMES = Counter("referee_games_ended_total", "Games ended, by how.", ["ending"])
STREAMS_OPEN = Gauge("referee_open_streams", "Event streams open now.", multiprocess_mode="livesum")

_MOVE_EVENTS = frozenset(
    {
        EventType.PLAYED,
        EventType.DREW,
        EventType.PASSED,
        EventType.DRAFT_UPDATED,
        EventType.GAME_STARTED,
    }
)
_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")

blueprint = Blueprint("metrics", __name__)
access_log = logging.getLogger("service.access")


@blueprint.get("/metrics")
def metrics() -> Response:
    """The Prometheus exposition of every worker's metrics."""
    _tally.flush()  # this worker's moves counted in bulk (the others': their last second)
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        body = generate_latest(registry)
    else:
        body = generate_latest()
    extra = current_app.extensions.get("metric_collectors", ())
    if extra:  # figures read from storage when scraped (webhook deliveries)
        shared = CollectorRegistry(auto_describe=False)
        for collector in extra:
            shared.register(collector)
        body += generate_latest(shared)
    return Response(body, content_type=CONTENT_TYPE_LATEST)


@lru_cache(maxsize=64)
def _moves(kind: EventType) -> Any:
    """The moves counter of one kind of move (its labels looked up once)."""
    return MOVES.labels(kind)


class _MovesTally:
    """The moves a gevent worker applied and has not yet added to :data:`MOVES`.

    Every draft and move is counted; ``inc`` on a prometheus_client counter takes its lock
    (gevent's, Python-level, under the worker's patches) and, with ``PROMETHEUS_MULTIPROC_DIR``,
    writes the worker's file: 9,100 instructions a move, 13,100 with the file (callgrind),
    where adding to a plain dict costs a few hundred. So a gevent worker (:func:`tally_moves`)
    counts its moves here and adds them to the counter in bulk: a timer of its loop
    :data:`FLUSH_SECONDS` after the first move since the last addition, before the worker
    answers ``/metrics`` itself, and when it exits (the gunicorn hook ``worker_exit``). Another
    worker's ``/metrics`` may so miss this worker's last second of moves, never more. Exact
    without a lock because a gevent worker counts on greenlets of one thread, which never
    interrupt one another between two bytecodes; elsewhere (threads, the sweeper's process)
    moves go to the counter at once, as they always did."""

    def __init__(self) -> None:
        self.on = False
        self.pending: dict[EventType, int] = {}
        self._timer: Any = None

    def add(self, kind: EventType) -> None:
        pending = self.pending
        pending[kind] = pending.get(kind, 0) + 1
        if self._timer is None:
            import gevent

            self._timer = timer = gevent.get_hub().loop.timer(FLUSH_SECONDS, ref=False)
            timer.start(self.flush)

    def flush(self) -> None:
        """Add the moves counted here to :data:`MOVES`."""
        timer, self._timer = self._timer, None
        if timer is not None:
            timer.close()
        pending, self.pending = self.pending, {}
        for kind, count in pending.items():
            _moves(kind).inc(count)


FLUSH_SECONDS = 1.0  # the most a worker's moves wait before they are in MOVES
_tally = _MovesTally()


def tally_moves(on: bool = True) -> None:
    """Count this gevent worker's moves in bulk from now on (see :class:`_MovesTally`);
    ``on=False``: at once again, after the moves counted so far are added."""
    if not on:
        _tally.flush()
    _tally.on = on


def flush_moves() -> None:
    """Add the moves this worker counted in bulk to :data:`MOVES` now."""
    _tally.flush()


def record_events(events: Iterable[Event]) -> None:
    """Count what a commit did: moves, timeouts, games ended."""
    for event in events:
        if event.type in _MOVE_EVENTS:
            if _tally.on:
                _tally.add(event.type)
            else:
                _moves(event.type).inc()
        elif event.type is EventType.TURN_TIMED_OUT:
            TIMEOUTS.labels(str(bool(event.data.get("reverted"))).lower()).inc()
        elif event.type is EventType.GAME_OVER:
            GAMES.labels(str(event.data.get("ending", "unknown"))).inc()


def record_refusal(reasons: Iterable[str]) -> None:
    """Count a refused move under each of its reason codes."""
    for reason in reasons:
        REFUSALS.labels(reason).inc()


class _RequestIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = g.get("request_id") if has_request_context() else None
        return True


def configure_logging() -> None:
    """One JSON object a line on stderr for the "service" loggers (once per process)."""
    logger = logging.getLogger("service")
    if any(getattr(h, "_referee", False) for h in logger.handlers):
        return
    handler = logging.StreamHandler()
    handler.setFormatter(
        JsonFormatter(
            "%(asctime)s %(levelname)s %(name)s %(message)s %(request_id)s",
            rename_fields={"asctime": "time", "levelname": "level", "name": "logger"},
        )
    )
    handler.addFilter(_RequestIdFilter())
    handler._referee = True  # type: ignore[attr-defined]
    logger.addHandler(handler)
    logger.setLevel(os.environ.get("LOG_LEVEL", "INFO").upper())


def _start() -> None:
    supplied = request.headers.get("X-Request-ID", "")
    g.request_id = supplied if _REQUEST_ID.match(supplied) else uuid.uuid4().hex
    g.started = time.perf_counter()


@lru_cache(maxsize=1024)
def _latency(route: str, method: str, status: int) -> Any:
    """The latency histogram of one route, method and status (labels are looked up once)."""
    return REQUEST_SECONDS.labels(route, method, str(status))


def _finish(response: Response) -> Response:
    elapsed = time.perf_counter() - g.get("started", time.perf_counter())
    route = request.url_rule.rule if request.url_rule is not None else "unmatched"
    _latency(route, request.method, response.status_code).observe(elapsed)
    response.headers["X-Request-ID"] = g.get("request_id", "")
    # A page's scripts and styles are most lines of a terminal and tell nothing: debug level.
    static = (request.endpoint or "").rpartition(".")[2] == "static"
    level = logging.DEBUG if static else logging.INFO
    if not access_log.isEnabledFor(level):
        return response
    fields: dict[str, Any] = {
        "method": request.method,
        "route": route,
        "status": response.status_code,
        "duration_ms": round(elapsed * 1000, 2),
    }
    if request.view_args and "match_id" in request.view_args:
        fields["match_id"] = request.view_args["match_id"]
    access_log.log(level, "request", extra=fields)
    return response


def init_app(app: Flask) -> None:
    """Register the request id, the access log, the metrics route and the JSON log format."""
    configure_logging()
    app.before_request(_start)
    app.after_request(_finish)
    app.register_blueprint(blueprint)
