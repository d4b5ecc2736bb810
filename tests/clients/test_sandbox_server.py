"""SPEC section 7, "Sandbox keys", end to end on a production-mode server (gunicorn as `make run`
serves it, REFEREE_TEST_MODE off) configured by its environment: a sandbox key deals a named
scenario, plays its point and runs its match's clock; a live key gets none of it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.gunicorn_process import GunicornProcess, http_request
from tests.support.redis_process import RedisProcess

LIVE = "live-key-" + "l" * 24
SANDBOX = "sandbox-key-" + "s" * 24


@pytest.fixture(scope="module")
def production(redis_server: RedisProcess) -> Iterator[GunicornProcess]:
    env = {
        "REDIS_URL": redis_server.url,
        "REFEREE_TEST_MODE": "0",
        "REFEREE_API_KEYS": f"mobile={LIVE}",
        "REFEREE_SANDBOX_KEYS": f"mobile-sandbox={SANDBOX}",
    }
    with GunicornProcess(env=env, workers=1, threads=4) as process:
        yield process


def test_a_sandbox_key_uses_the_test_features_on_a_production_server(
    production: GunicornProcess,
) -> None:
    port = production.port
    health = http_request(port, "GET", "/healthz")
    assert health.body["test_mode"] is False

    refused = http_request(
        port, "POST", "/v1/matches", {"scenario": "timeout_with_draft"}, headers={"X-API-Key": LIVE}
    )
    assert refused.status == 400

    created = http_request(
        port,
        "POST",
        "/v1/matches",
        {"scenario": "timeout_with_draft"},
        headers={"X-API-Key": SANDBOX},
    )
    assert created.status == 201, created.body
    match_id = created.body["id"]
    assert created.body["match"]["draft"] == [["R6", "R7", "R8", "R9"]]

    clock = f"/v1/matches/{match_id}/clock"
    assert (
        http_request(port, "POST", clock, {"advance": 60}, headers={"X-API-Key": LIVE}).status
        == 404
    )
    moved = http_request(port, "POST", clock, {"advance": 60}, headers={"X-API-Key": SANDBOX})
    assert moved.status == 200, moved.body
    assert moved.body["draft"] is None and moved.body["players"][0]["rack_count"] == 6

    assert (
        http_request(port, "GET", f"/v1/matches/{match_id}", headers={"X-API-Key": LIVE}).status
        == 404
    )
    webhook = http_request(
        port,
        "POST",
        "/v1/webhooks",
        {"url": "http://127.0.0.1:9/hook"},
        headers={"X-API-Key": SANDBOX},
    )
    assert webhook.status == 400  # the production rules for targets hold for a sandbox too
