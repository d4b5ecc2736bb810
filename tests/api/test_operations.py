"""Health, readiness, the served contract, and the error envelope."""

import re
from pathlib import Path

import yaml
from openapi_spec_validator import validate

from service.app import create_app
from tests.support.contract import ContractClient

ROOT = Path(__file__).resolve().parents[2]


def test_healthz_answers_while_the_process_is_up(client) -> None:
    assert client.get("/healthz").get_json() == {"status": "ok", "test_mode": False}


def test_healthz_says_when_test_mode_is_on(redis_url) -> None:
    app = create_app({"redis_url": redis_url, "test_mode": True})
    app.test_client_class = ContractClient
    assert app.test_client().get("/healthz").get_json() == {"status": "ok", "test_mode": True}


def test_readyz_answers_when_redis_answers(client) -> None:
    assert client.get("/readyz").status_code == 200


def test_readyz_is_a_503_with_retry_after_when_redis_is_down(redis_server) -> None:
    app = create_app({"redis_url": "redis://127.0.0.1:1/0"})
    app.test_client_class = ContractClient
    response = app.test_client().get("/readyz")
    assert response.status_code == 503
    assert response.headers["Retry-After"] == "1"
    assert response.content_type == "application/problem+json"


def test_the_served_contract_is_the_file_and_is_valid_openapi_3_1(client) -> None:
    response = client.get("/openapi.yaml")
    served = yaml.safe_load(response.get_data(as_text=True))
    assert served == yaml.safe_load((ROOT / "openapi.yaml").read_text())
    assert served["openapi"].startswith("3.1")
    validate(served)


def test_an_unknown_path_is_a_404_problem(client) -> None:
    response = client.get("/v1/nothing-here")
    assert response.status_code == 404
    assert response.content_type == "application/problem+json"


def test_a_wrong_method_is_a_405_problem(client) -> None:
    response = client.get("/v1/meld-check")
    assert response.status_code == 405
    assert response.content_type == "application/problem+json"
    assert "POST" in response.headers["Allow"]


def shape(path: str) -> str:
    """A path with its parameter names erased: ``/v1/matches/{}``."""
    return re.sub(r"[{<][^}>]*[}>]", "{}", path)


def test_the_routes_the_app_serves_are_the_paths_the_contract_lists(app) -> None:
    """Every API route is in the contract and the reverse (the web pages are not API)."""
    spec = yaml.safe_load((ROOT / "openapi.yaml").read_text())
    listed = {
        (shape(path), method.upper())
        for path, item in spec["paths"].items()
        for method in item
        if method in {"get", "post", "put", "delete", "patch"}
    }
    served = set()
    for rule in app.url_map.iter_rules():
        if rule.endpoint == "static" or rule.endpoint.startswith("web."):
            continue
        served |= {(shape(rule.rule), m) for m in rule.methods - {"HEAD", "OPTIONS"}}
    assert served == listed
