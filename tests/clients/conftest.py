"""A real gunicorn in test mode on the session's Redis, for clients that speak HTTP."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.gunicorn_process import GunicornProcess
from tests.support.redis_process import RedisProcess


@pytest.fixture(scope="module")
def web(redis_server: RedisProcess) -> Iterator[GunicornProcess]:
    """The service as a client meets it: gunicorn, test mode on (for ``setup``)."""
    env = {"REDIS_URL": redis_server.url, "REFEREE_TEST_MODE": "1"}
    with GunicornProcess(env=env, workers=1, threads=8) as process:
        yield process
