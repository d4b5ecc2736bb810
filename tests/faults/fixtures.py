"""Fixtures for tests against real processes (the conftests of tests/faults and tests/soak
import them): a gunicorn on the session's Redis, or on a Redis the test owns (to kill, stop
or freeze it)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.support.gunicorn_process import GunicornProcess
from tests.support.redis_process import RedisProcess


@pytest.fixture
def start_gunicorn() -> Iterator[Callable[..., GunicornProcess]]:
    """``start_gunicorn(redis_url, workers=..., env=...)``: a started gunicorn, stopped after.

    Test mode is on. A failing test gets the end of each gunicorn log in its report.
    """
    started: list[GunicornProcess] = []

    def start(
        redis_url: str, *, env: dict[str, str] | None = None, **options: Any
    ) -> GunicornProcess:
        web = GunicornProcess(
            env={"REDIS_URL": redis_url, "REFEREE_TEST_MODE": "1", **(env or {})}, **options
        )
        started.append(web)
        return web.start()

    yield start
    for web in started:
        web.stop()
        print(f"--- end of the log of {web!r} ---\n{web.log_tail(30)}")
        web.cleanup()


@pytest.fixture(scope="module")
def shared_gunicorn() -> Iterator[Callable[..., GunicornProcess]]:
    """Like ``start_gunicorn``, but one gunicorn per Redis URL and options for a whole module."""
    started: dict[tuple[Any, ...], GunicornProcess] = {}

    def get(redis_url: str, **options: Any) -> GunicornProcess:
        key = (redis_url, *sorted(options.items()))
        web = started.get(key)
        if web is None or not web.running:
            web = GunicornProcess(
                env={"REDIS_URL": redis_url, "REFEREE_TEST_MODE": "1"},
                **{"workers": 4, "threads": 8, **options},
            )
            started[key] = web.start()
            web.wait_workers()
        return web

    yield get
    for web in started.values():
        web.stop()
        print(f"--- end of the log of {web!r} ---\n{web.log_tail(30)}")
        web.cleanup()


@pytest.fixture
def own_redis() -> Iterator[Callable[..., RedisProcess]]:
    """``own_redis(appendonly=...)``: a started redis-server of the test's own, removed after."""
    started: list[RedisProcess] = []

    def start(**options: Any) -> RedisProcess:
        server = RedisProcess(**options)
        started.append(server)
        return server.start()

    yield start
    for server in started:
        server.cleanup()
