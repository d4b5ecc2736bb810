"""SPEC section 7, "Sandbox keys": on a production server (test mode off) a sandbox app's key
may use the test features for its own matches, a live key never may, and sandbox and live
apps never see each other's matches."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from service.api.apps import AppKeys, BadKeyConfig
from service.config import Settings
from tests.api.matchclient import Seat

pytestmark = pytest.mark.usefixtures("redis_url")

LIVE = "live-key-" + "l" * 20
SANDBOX = "sandbox-key-" + "s" * 20
OTHER_SANDBOX = "other-sandbox-" + "o" * 20
SETUP = {"racks": [["R10", "R11", "R12", "K3"], ["K1", "K2", "O9"]], "pool": ["O4", "B9", "K8"]}


def key(value: str) -> dict[str, str]:
    return {"X-API-Key": value}


@pytest.fixture
def app_overrides() -> dict[str, Any]:
    return {
        "test_mode": False,
        "api_keys": f"mobile={LIVE}",
        "sandbox_keys": f"mobile-sandbox={SANDBOX},partner-sandbox={OTHER_SANDBOX}",
    }


def create(client: Any, app_key: str | None, **extra: Any) -> Any:
    body = {"players": [{"name": "Ann"}, {"name": "Bo"}], "rules": {"turn_seconds": 60}, **extra}
    return client.post("/v1/matches", json=body, headers=key(app_key) if app_key else {})


def test_sandbox_apps_are_read_beside_live_ones_and_a_name_is_one_or_the_other(
    tmp_path: Path,
) -> None:
    secret = tmp_path / "sandbox-keys"
    secret.write_text(f"# sandbox\nboard-sandbox={OTHER_SANDBOX}\n", encoding="utf-8")
    keys = AppKeys.from_settings(
        Settings(
            api_keys=f"mobile={LIVE}",
            sandbox_keys=f"mobile-sandbox={SANDBOX}",
            sandbox_keys_file=str(secret),
        )
    )
    assert keys.names == ("mobile", "mobile-sandbox", "board-sandbox")
    assert keys.identify(OTHER_SANDBOX) == "board-sandbox"
    assert [keys.is_sandbox(n) for n in (*keys.names, None)] == [False, True, True, False]
    with pytest.raises(BadKeyConfig, match="live or sandbox"):
        AppKeys.from_settings(Settings(api_keys=f"mobile={LIVE}", sandbox_keys=f"mobile={SANDBOX}"))
    with pytest.raises(BadKeyConfig):  # the same key for a live and a sandbox app
        AppKeys.from_settings(Settings(api_keys=f"mobile={LIVE}", sandbox_keys=f"other={LIVE}"))
    assert SANDBOX not in repr(Settings(sandbox_keys=f"mobile-sandbox={SANDBOX}"))


@pytest.mark.parametrize(
    "extra",
    [{"seed": 7}, {"setup": SETUP}, {"scenario": "stalemate", "players": None}],
    ids=["seed", "setup", "scenario"],
)
def test_a_live_key_and_no_key_never_use_the_test_features_a_sandbox_key_does(
    client, extra: dict[str, Any]
) -> None:
    body = {k: v for k, v in extra.items() if v is not None}
    if "players" in extra:
        refused = [
            client.post("/v1/matches", json=body, headers=key(LIVE)),
            client.post("/v1/matches", json=body),
        ]
        allowed = client.post("/v1/matches", json=body, headers=key(SANDBOX))
    else:
        refused = [create(client, LIVE, **body), create(client, None, **body)]
        allowed = create(client, SANDBOX, **body)
    for response in refused:
        assert response.status_code == 400, response.get_json()
        (error,) = response.get_json()["errors"]
        assert error["field"] == next(iter(body))
        assert "sandbox" in error["message"]
    assert allowed.status_code == 201, allowed.get_json()


def test_a_sandbox_match_is_dealt_its_setup_on_a_production_server(client) -> None:
    created = create(client, SANDBOX, setup=SETUP).get_json()
    ann = Seat(client, created["id"], 0, created["seats"][0]["token"])
    assert ann.rack() == ["R10", "R11", "R12", "K3"]
    assert ann.play("R10 R11 R12").status_code == 200


def test_a_sandbox_key_runs_the_clock_of_its_own_matches_only(client) -> None:
    mine = create(client, SANDBOX, setup=SETUP).get_json()["id"]
    theirs = create(client, OTHER_SANDBOX, setup=SETUP).get_json()["id"]
    live = create(client, LIVE).get_json()["id"]
    advance = {"advance": 61}

    moved = client.post(f"/v1/matches/{mine}/clock", json=advance, headers=key(SANDBOX))
    assert moved.status_code == 200, moved.get_json()
    assert moved.get_json()["current_seat"] == 1  # Ann's 60 s turn timed out
    assert moved.get_json()["players"][0]["rack_count"] == 5

    assert (
        client.post(f"/v1/matches/{theirs}/clock", json=advance, headers=key(SANDBOX)).status_code
        == 403
    )
    assert client.post(
        f"/v1/matches/{live}/clock", json=advance, headers=key(LIVE)
    ).status_code == (404)
    assert client.post(f"/v1/matches/{mine}/clock", json=advance).status_code == 404


def test_sandbox_and_live_apps_never_see_each_others_matches_or_listings(client) -> None:
    sandboxed = create(client, SANDBOX).get_json()["id"]
    live = create(client, LIVE).get_json()["id"]
    assert client.get(f"/v1/matches/{sandboxed}", headers=key(LIVE)).status_code == 404
    assert client.get(f"/v1/matches/{live}", headers=key(SANDBOX)).status_code == 404
    assert client.get(f"/v1/matches/{sandboxed}", headers=key(SANDBOX)).status_code == 200
    assert client.get(f"/v1/matches/{live}", headers=key(LIVE)).status_code == 200
    for app_key, own, other in ((LIVE, live, sandboxed), (SANDBOX, sandboxed, live)):
        listed = [
            m["id"] for m in client.get("/v1/matches", headers=key(app_key)).get_json()["matches"]
        ]
        assert listed == [own] and other not in listed


def test_a_sandbox_key_keeps_the_production_rules_for_webhook_targets(client) -> None:
    for url in ("http://127.0.0.1:9/hook", "https://127.0.0.1/hook", "https://10.0.0.8/hook"):
        refused = client.post("/v1/webhooks", json={"url": url}, headers=key(SANDBOX))
        assert refused.status_code == 400, url
        assert refused.get_json()["type"].endswith("bad-webhook-url")


def test_webhook_test_events_need_a_sandbox_key_on_a_production_server(client) -> None:
    body = {"type": "game.ended"}
    live = client.post("/v1/webhooks/wh_0123456789abcdef/test", json=body, headers=key(LIVE))
    assert live.status_code == 403
    assert live.get_json()["type"].endswith("test-features-off")
    sandboxed = client.post(
        "/v1/webhooks/wh_0123456789abcdef/test", json=body, headers=key(SANDBOX)
    )
    assert sandboxed.status_code == 404  # past the gate: this app has no such webhook


class TestInTestMode:
    """On a test server every caller may use the test features; apps still keep apart."""

    @pytest.fixture
    def app_overrides(self) -> dict[str, Any]:
        return {
            "test_mode": True,
            "api_keys": f"mobile={LIVE}",
            "sandbox_keys": f"mobile-sandbox={SANDBOX}",
        }

    def test_a_live_key_and_no_key_may_use_them_too(self, client) -> None:
        assert create(client, LIVE, setup=SETUP).status_code == 201
        assert create(client, None, seed=7).status_code == 201

    def test_sandbox_and_live_apps_never_see_each_others_webhooks(self, client) -> None:
        url = "http://127.0.0.1:9/hook"
        live = client.post("/v1/webhooks", json={"url": url}, headers=key(LIVE)).get_json()
        sandboxed = client.post("/v1/webhooks", json={"url": url}, headers=key(SANDBOX)).get_json()
        for app_key, own, other in ((LIVE, live, sandboxed), (SANDBOX, sandboxed, live)):
            listed = client.get("/v1/webhooks", headers=key(app_key)).get_json()["webhooks"]
            assert [hook["id"] for hook in listed] == [own["id"]]
            assert (
                client.get(f"/v1/webhooks/{other['id']}", headers=key(app_key)).status_code == 404
            )
            assert client.post(
                f"/v1/webhooks/{other['id']}/ping", headers=key(app_key)
            ).status_code == (404)
