"""Rate limits per client address and per seat token, counted in Redis; the CORS allowlist."""

from __future__ import annotations

import hashlib
import time
from typing import Any

import pytest
import redis
from flask import Flask
from flask.testing import FlaskClient

from service.api import errors, limits
from service.api.limits import seat_key
from service.app import create_app
from service.config import Settings
from service.store import limits_storage_uri
from tests.support.contract import ContractClient
from tests.support.redis_process import RedisProcess
from tests.support.wire import Wire

MELD = {"sets": [["R11", "J", "R13"]]}
TOKEN = "s3cret-seat-token-for-the-tests"


def make_app(redis_url: str, **overrides: Any) -> Flask:
    app = create_app({"redis_url": redis_url, **overrides})
    app.test_client_class = ContractClient
    return app


def meld_check(client: FlaskClient, *, address: str = "10.0.0.1", token: str | None = None) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return client.post(
        "/v1/meld-check", json=MELD, headers=headers, environ_base={"REMOTE_ADDR": address}
    )


# --- rate limits -----------------------------------------------------------------------------


def test_without_a_rate_limit_setting_nothing_is_limited(redis_url: str) -> None:
    app = make_app(redis_url)
    assert "rate_limiter" not in app.extensions
    client = app.test_client()
    assert {meld_check(client).status_code for _ in range(30)} == {200}


def test_over_the_limit_an_address_gets_a_429_problem_with_retry_after(redis_url: str) -> None:
    client = make_app(redis_url, rate_limit="3/minute").test_client()
    assert [meld_check(client).status_code for _ in range(3)] == [200, 200, 200]
    refused = meld_check(client)
    assert refused.status_code == 429
    assert refused.content_type == "application/problem+json"
    body = refused.get_json()
    assert body["type"] == "urn:rummikub-referee:problem:too-many-requests"
    assert body["status"] == 429
    assert "3 per 1 minute" in body["detail"]
    assert 1 <= int(refused.headers["Retry-After"]) <= 60


def test_another_address_has_its_own_allowance(redis_url: str) -> None:
    client = make_app(redis_url, rate_limit="2/minute").test_client()
    for _ in range(2):
        meld_check(client, address="10.0.0.1")
    assert meld_check(client, address="10.0.0.1").status_code == 429
    assert meld_check(client, address="10.0.0.2").status_code == 200


def test_one_seat_token_is_limited_across_addresses(redis_url: str) -> None:
    client = make_app(redis_url, rate_limit="3/minute").test_client()
    codes = [meld_check(client, address=f"10.0.1.{n}", token=TOKEN).status_code for n in range(4)]
    assert codes == [200, 200, 200, 429]
    assert meld_check(client, address="10.0.1.9", token="another-token").status_code == 200


def test_tokens_do_not_lift_the_limit_of_an_address(redis_url: str) -> None:
    client = make_app(redis_url, rate_limit="3/minute").test_client()
    codes = [meld_check(client, token=f"token-{n}").status_code for n in range(4)]
    assert codes == [200, 200, 200, 429]


def test_every_limit_of_a_list_applies(redis_url: str) -> None:
    client = make_app(redis_url, rate_limit="100/minute;2/second").test_client()
    codes = [meld_check(client).status_code for _ in range(3)]
    assert codes[-1] == 429
    assert int(meld_check(client).headers["Retry-After"]) <= 2


def test_the_counters_are_shared_by_every_instance(redis_url: str) -> None:
    first = make_app(redis_url, rate_limit="4/minute").test_client()
    second = make_app(redis_url, rate_limit="4/minute").test_client()
    codes = [meld_check(client).status_code for client in (first, second, first, second)]
    assert codes == [200] * 4
    assert meld_check(first).status_code == 429
    assert meld_check(second).status_code == 429


def test_a_seat_token_is_never_stored_only_its_digest(
    redis_url: str, redis_client: redis.Redis
) -> None:
    client = make_app(redis_url, rate_limit="5/minute").test_client()
    meld_check(client, token=TOKEN)
    keys = redis_client.keys("*")
    assert keys, "the counters are in Redis"
    dump = " ".join(keys) + " ".join(str(redis_client.get(k)) for k in keys)
    assert TOKEN not in dump
    digest = hashlib.sha256(TOKEN.encode()).hexdigest()[:32]
    assert any(digest in key for key in keys)
    assert seat_key(TOKEN) == "seat:" + digest


def test_the_token_does_not_appear_in_the_log_of_a_refusal(
    redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    client = make_app(redis_url, rate_limit="1/minute").test_client()
    with caplog.at_level("DEBUG"):
        meld_check(client, token=TOKEN)
        assert meld_check(client, token=TOKEN).status_code == 429
    assert TOKEN not in caplog.text


def test_probes_and_cors_preflights_are_not_counted(redis_url: str) -> None:
    app = make_app(redis_url, rate_limit="2/minute", cors_origins=("https://a.example",))
    client = app.test_client()
    for _ in range(5):
        assert client.get("/healthz", environ_base={"REMOTE_ADDR": "10.0.0.1"}).status_code == 200
        assert client.get("/readyz", environ_base={"REMOTE_ADDR": "10.0.0.1"}).status_code == 200
    for _ in range(5):
        preflight = client.options(
            "/v1/meld-check",
            headers={
                "Origin": "https://a.example",
                "Access-Control-Request-Method": "POST",
            },
            environ_base={"REMOTE_ADDR": "10.0.0.1"},
        )
        assert preflight.status_code == 200
    assert [meld_check(client).status_code for _ in range(3)] == [200, 200, 429]


def test_a_match_endpoint_answers_429_within_the_contract(redis_url: str) -> None:
    client = make_app(redis_url, rate_limit="1/minute").test_client()
    body = {"players": [{"name": "Ann"}, {"name": "Bo"}]}
    assert client.post("/v1/matches", json=body).status_code == 201
    refused = client.post("/v1/matches", json=body)
    assert refused.status_code == 429
    assert refused.headers["Retry-After"].isdigit()


def test_the_storage_uri_is_the_services_own_redis_or_cluster() -> None:
    assert limits_storage_uri(Settings(redis_url="redis://db:6379/2")) == "redis://db:6379/2"
    cluster = Settings(redis_cluster_nodes="a:7000, b:7001")
    assert limits_storage_uri(cluster) == "redis+cluster://a:7000,b:7001"


# --- when the counters' Redis is away: fail open, never a 500 ----------------------------------


def test_with_the_limit_storage_unreachable_requests_still_succeed(redis_server) -> None:
    app = make_app("redis://127.0.0.1:1/0", rate_limit="2/minute")
    client = app.test_client()
    assert client.get("/healthz").status_code == 200
    # meld-check needs no storage: it succeeds, limited per worker in memory meanwhile
    assert [meld_check(client).status_code for _ in range(3)] == [200, 200, 429]
    # what needs the store gets the store's own 503, not a 500
    answer = client.get("/readyz")
    assert answer.status_code == 503
    assert answer.headers["Retry-After"] == "1"


def test_a_limit_storage_that_dies_and_comes_back_is_used_again(tmp_path) -> None:
    with RedisProcess(data_dir=tmp_path / "limits") as server:
        client = make_app(server.url, rate_limit="100/minute").test_client()
        assert meld_check(client).status_code == 200
        assert server.client().keys("referee-limits*")
        server.stop()
        assert {meld_check(client).status_code for _ in range(5)} == {200}
        server.start()
        server.client().flushall()
        deadline = time.monotonic() + 30  # a safety bound: the loop ends at the event
        while not server.client().keys("referee-limits*"):
            assert time.monotonic() < deadline, "the limiter never went back to Redis"
            assert meld_check(client).status_code == 200
            time.sleep(0.2)


def test_a_frozen_limit_storage_delays_a_request_by_the_timeout_at_most(
    tmp_path, monkeypatch
) -> None:
    with RedisProcess(data_dir=tmp_path / "frozen") as server:
        client = make_app(server.url, rate_limit="100/minute").test_client()
        assert meld_check(client).status_code == 200
        wire = Wire().install(monkeypatch)
        server.pause()
        waited = []  # socket timeouts each request waited out
        try:
            codes = []
            for _ in range(5):
                wire.clear()
                codes.append(meld_check(client).status_code)
                waited.append(wire["timeout"])
        finally:
            server.resume()
        assert codes == [200] * 5  # answered while the storage was frozen
        # The first finds the storage frozen: its count and then the limiter's look at the
        # storage each wait a socket timeout (2 x 0.5 s); the others count in memory at once.
        assert waited[0] <= 2 and waited[1:] == [0, 0, 0, 0], waited


def test_a_cluster_unreachable_when_a_worker_starts_leaves_it_counting_in_memory() -> None:
    app = Flask("bare")
    app.config["REFEREE_SETTINGS"] = Settings(
        redis_cluster_nodes="127.0.0.1:1", rate_limit="2/minute", redis_connect_timeout=0.2
    )
    errors.init_app(app)
    limits.init_app(app, storage_uri=limits_storage_uri(app.config["REFEREE_SETTINGS"]))
    app.add_url_rule("/hello", "hello", lambda: {"hello": "world"})
    client = FlaskClient(app)  # a bare app of its own, not the referee: no contract to keep
    assert [client.get("/hello").status_code for _ in range(3)] == [200, 200, 429]


# --- CORS ----------------------------------------------------------------------------------------


def test_without_an_allowlist_no_cors_header_is_sent(client: FlaskClient) -> None:
    answer = client.get("/healthz", headers={"Origin": "https://a.example"})
    assert "Access-Control-Allow-Origin" not in answer.headers


@pytest.fixture
def cors_app(redis_url: str) -> Flask:
    return make_app(redis_url, cors_origins=("https://a.example", "https://b.example"))


def test_an_allowed_origin_is_named_and_sees_the_etag(cors_app: Flask) -> None:
    client = cors_app.test_client()
    created = client.post(
        "/v1/matches",
        json={"players": [{"name": "Ann"}, {"name": "Bo"}]},
        headers={"Origin": "https://b.example"},
    )
    assert created.headers["Access-Control-Allow-Origin"] == "https://b.example"
    exposed = {
        h.strip().lower() for h in created.headers["Access-Control-Expose-Headers"].split(",")
    }
    assert {"etag", "location", "retry-after", "idempotent-replayed", "x-request-id"} <= exposed
    assert "Origin" in created.headers.get("Vary", "")
    assert "Access-Control-Allow-Credentials" not in created.headers


def test_an_origin_not_on_the_list_gets_no_cors_header(cors_app: Flask) -> None:
    answer = cors_app.test_client().get("/healthz", headers={"Origin": "https://evil.example"})
    assert "Access-Control-Allow-Origin" not in answer.headers


def test_a_preflight_allows_the_headers_a_move_needs(cors_app: Flask) -> None:
    wanted = ["Authorization", "If-Match", "If-None-Match", "Idempotency-Key", "Content-Type"]
    preflight = cors_app.test_client().options(
        "/v1/matches/abc/play",
        headers={
            "Origin": "https://a.example",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": ", ".join(wanted),
        },
    )
    assert preflight.status_code == 200
    assert preflight.headers["Access-Control-Allow-Origin"] == "https://a.example"
    allowed = {
        h.strip().lower() for h in preflight.headers["Access-Control-Allow-Headers"].split(",")
    }
    assert {h.lower() for h in wanted} <= allowed
    assert "POST" in preflight.headers["Access-Control-Allow-Methods"]


def test_a_preflight_from_an_unknown_origin_is_not_allowed(cors_app: Flask) -> None:
    preflight = cors_app.test_client().options(
        "/v1/matches",
        headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"},
    )
    assert "Access-Control-Allow-Origin" not in preflight.headers
