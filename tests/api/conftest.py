from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from flask import Flask

from service.app import create_app
from service.workers.threads import shutting_down
from tests.support.contract import ContractClient
from tests.support.records import check_every_finished_game


@pytest.fixture
def app_overrides() -> dict[str, Any]:
    """Settings a test module can override (see ``service.config.Settings``)."""
    return {}


@pytest.fixture
def app(redis_url: str, app_overrides: dict[str, Any]) -> Iterator[Flask]:
    app = create_app({"redis_url": redis_url, **app_overrides})
    app.test_client_class = ContractClient
    yield app
    # Every game the test played to its end exports a record that verifies, with its scores.
    check_every_finished_game(app, redis_url)


@pytest.fixture
def client(app: Flask) -> ContractClient:
    return app.test_client()  # type: ignore[return-value]


@pytest.fixture
def stop_soon() -> Iterator[Callable[[], None]]:
    """``stop_soon()`` tells this process to stop (``shutting_down``) 0.3 s later, as
    gunicorn's SIGTERM does in a worker; cleared again after the test (it is process-wide)."""
    stop = threading.Timer(0.3, shutting_down.set)
    try:
        yield stop.start
    finally:
        stop.cancel()
        if stop.is_alive():
            stop.join()
        shutting_down.clear()
