"""Fixtures shared by the whole suite.

Redis: tests run against real redis-server processes that the suite starts itself.

- `redis_server` (session): one server on a free port, data in a temporary folder, append-only
  file off. Has `.port`, `.url` (redis://127.0.0.1:PORT/0), `.pid`, `.client()`.
- `redis_url` (function): the URL of that server, flushed (FLUSHALL) before the test.
- `redis_client` (function): a redis-py client (decode_responses=True) on that flushed server.

Tests that crash, pause or restart Redis start their own `tests.support.redis_process.
RedisProcess` instead of touching the shared one.

Contract: every Flask app's test client is a `tests.support.contract.ContractClient`, so each
answer any test sees is validated against openapi.yaml before the test reads it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
import redis
from flask import Flask
from hypothesis import settings

from tests.support.contract import ContractClient
from tests.support.redis_process import RedisNotFound, RedisProcess

Flask.test_client_class = ContractClient

# No per-example deadline: a loaded 2-core CI machine must not turn slow examples into failures.
settings.register_profile("dev", deadline=None, print_blob=True)
settings.register_profile("ci", deadline=None, print_blob=True, derandomize=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisProcess]:
    """A redis-server for the whole session; stopped at the end."""
    try:
        server = RedisProcess(data_dir=tmp_path_factory.mktemp("redis"))
    except RedisNotFound as error:
        pytest.fail(str(error), pytrace=False)
    server.start()
    try:
        yield server
    finally:
        server.cleanup()


@pytest.fixture
def redis_url(redis_server: RedisProcess) -> str:
    """The session server's URL, with every database flushed before the test."""
    if not redis_server.running:
        pytest.fail(f"the session's redis-server died; its log:\n{redis_server.log_tail()}")
    with redis_server.client() as client:
        client.flushall()
    return redis_server.url


@pytest.fixture
def redis_client(redis_url: str) -> Iterator[redis.Redis]:
    """A client (decode_responses=True) on the session server, flushed before the test."""
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        yield client
    finally:
        client.close()
