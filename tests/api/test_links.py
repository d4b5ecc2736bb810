"""openapi.yaml's ``links``: from a created match, a stateful tester (Schemathesis, Prism's
docs, a generated SDK's docs) finds the match's view, moves and events. Each link names an
operation that exists, and followed on a real answer it reaches that match."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.support.contract import contract

pytestmark = pytest.mark.usefixtures("redis_url")


@pytest.fixture
def app_overrides() -> dict[str, Any]:
    return {"test_mode": True}


def pointed(document: Any, pointer: str) -> Any:
    """The value at a JSON Pointer (RFC 6901) such as ``/seats/0/token``."""
    for part in pointer.lstrip("/").split("/"):
        key = part.replace("~1", "/").replace("~0", "~")
        document = document[int(key)] if isinstance(document, list) else document[key]
    return document


def operations() -> dict[str, tuple[str, str, dict[str, Any]]]:
    """operationId -> (method, path template, operation)."""
    return {
        operation["operationId"]: (method, path, operation)
        for path, item in contract()["paths"].items()
        for method, operation in item.items()
        if isinstance(operation, dict) and "operationId" in operation
    }


def created_links() -> dict[str, Any]:
    links: dict[str, Any] = contract()["paths"]["/v1/matches"]["post"]["responses"]["201"]["links"]
    return links


def test_a_created_match_links_to_its_view_moves_and_events() -> None:
    targets = {link["operationId"] for link in created_links().values()}
    assert {"getMatch", "play", "draw", "pass", "putDraft", "listEvents"} <= targets
    known = operations()
    for name, link in created_links().items():
        _, path, _ = known[link["operationId"]]
        path_params = set(re.findall(r"\{(\w+)\}", path))
        assert set(link["parameters"]) == path_params, name


def test_each_link_followed_on_a_real_answer_reaches_the_match(client) -> None:
    body = {
        "players": [{"name": "Ann"}, {"name": "Bo"}],
        "rules": {"turn_seconds": 0},
        "setup": {"racks": [["R10", "R11", "R12", "K3"], ["K1", "K2"]], "pool": ["O4", "B9"]},
    }
    created = client.post("/v1/matches", json=body).get_json()
    token = created["seats"][0]["token"]
    known = operations()
    for name, link in created_links().items():
        method, path, _ = known[link["operationId"]]
        values = {
            param: pointed(created, expression.split("#", 1)[1])
            for param, expression in link["parameters"].items()
        }
        target = path.format(**values)
        json_body = {"table": [["R10", "R11", "R12"]]} if name in ("Play", "PutDraft") else None
        response = client.open(
            target,
            method=method.upper(),
            json=json_body,
            headers={"Authorization": f"Bearer {token}"},
        )
        assert response.status_code not in (400, 401, 403, 404), (name, response.get_json())
