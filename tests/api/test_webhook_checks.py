"""SPEC section 7, "Webhook checks": a ping and test events, signed, to a real receiver on
loopback, sent now by the request itself (no dispatcher runs here)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from service.notices import EVENT_TYPES
from tests.support.receiver import Receiver, receiver, verify_signature

pytestmark = pytest.mark.usefixtures("redis_url")

MOBILE = "mobile-key-" + "m" * 20
PARTNER = "partner-key-" + "p" * 20


def key(value: str = MOBILE) -> dict[str, str]:
    return {"X-API-Key": value}


@pytest.fixture
def app_overrides() -> dict[str, Any]:
    return {"test_mode": True, "api_keys": f"mobile={MOBILE},partner={PARTNER}"}


@pytest.fixture
def hook_receiver() -> Iterator[Receiver]:
    with receiver() as running:
        yield running


def register(client: Any, url: str, events: list[str] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"url": url, **({"events": events} if events else {})}
    response = client.post("/v1/webhooks", json=body, headers=key())
    assert response.status_code == 201, response.get_json()
    hook: dict[str, Any] = response.get_json()
    return hook


def test_a_ping_is_signed_names_the_webhook_and_says_what_came_of_it(client, hook_receiver) -> None:
    hook = register(client, hook_receiver.url + "/ping-here", events=["turn.started"])
    answer = client.post(f"/v1/webhooks/{hook['id']}/ping", headers=key())
    assert answer.status_code == 200, answer.get_json()
    check = answer.get_json()
    assert check | {"id": None} == {
        "id": None,
        "type": "webhook.ping",
        "delivered": True,
        "status_code": 204,
        "error": None,
    }
    (got,) = hook_receiver.received
    assert got.path.endswith("/ping-here") and got.id == check["id"]
    assert verify_signature(hook["secret"], got)
    assert got.json["type"] == "webhook.ping"
    assert got.json["data"] == {"webhook_id": hook["id"]}
    assert "test" not in got.json


def test_a_ping_reports_the_receivers_refusal(client, hook_receiver) -> None:
    hook_receiver.behave = lambda _: (500, {}, b"broken", 0.0)
    hook = register(client, hook_receiver.url)
    check = client.post(f"/v1/webhooks/{hook['id']}/ping", headers=key()).get_json()
    assert (check["delivered"], check["status_code"]) == (False, 500)


def test_a_ping_to_nobody_listening_says_so(client) -> None:
    with receiver() as gone:
        url = gone.url
    hook = register(client, url)
    check = client.post(f"/v1/webhooks/{hook['id']}/ping", headers=key()).get_json()
    assert check["delivered"] is False and check["status_code"] is None
    assert check["error"]


@pytest.mark.parametrize("event_type", EVENT_TYPES)
def test_a_test_event_of_any_type_is_a_signed_sample_marked_as_a_test(
    client, hook_receiver, event_type: str
) -> None:
    hook = register(client, hook_receiver.url, events=["match.canceled"])  # subscribed or not
    answer = client.post(
        f"/v1/webhooks/{hook['id']}/test", json={"type": event_type}, headers=key()
    )
    assert answer.status_code == 200, answer.get_json()
    assert answer.get_json()["delivered"] is True
    (got,) = hook_receiver.received
    assert verify_signature(hook["secret"], got)
    body = got.json
    assert (body["type"], body["test"]) == (event_type, True)
    assert body["data"]["match_id"] == "sample_match"
    if event_type == "game.ended":
        assert sum(body["data"]["scores"]) == 0
        assert set(body["data"]) == {"match_id", "version", "game_number", "scores", "winner_seat"}


def test_checks_are_the_owners_only_and_a_bad_type_is_400(client, hook_receiver) -> None:
    hook = register(client, hook_receiver.url)
    url = f"/v1/webhooks/{hook['id']}"
    assert client.post(f"{url}/ping", headers=key(PARTNER)).status_code == 404
    assert client.post(f"{url}/ping").status_code == 401
    assert (
        client.post(f"{url}/test", json={"type": "game.ended"}, headers=key(PARTNER)).status_code
        == 404
    )
    assert client.post(f"{url}/test", json={"type": "webhook.ping"}, headers=key()).status_code == (
        400
    )
    assert hook_receiver.received == []
