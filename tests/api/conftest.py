from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask

from service.app import create_app
from tests.support.contract import ContractClient


@pytest.fixture
def app_overrides() -> dict[str, Any]:
    """Settings a test module can override (see ``service.config.Settings``)."""
    return {}


@pytest.fixture
def app(redis_url: str, app_overrides: dict[str, Any]) -> Iterator[Flask]:
    app = create_app({"redis_url": redis_url, **app_overrides})
    app.test_client_class = ContractClient
    yield app


@pytest.fixture
def client(app: Flask) -> ContractClient:
    return app.test_client()  # type: ignore[return-value]
