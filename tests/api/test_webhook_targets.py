"""SPEC section 3: where a webhook may point, in production and in test mode, at registration
and at every delivery, on the address actually connected to (issue 30).

Production: https to a global address only. Test mode: http too, loopback and private ranges,
never link-local, multicast, reserved or other non-global addresses. An IPv6 address carrying
an IPv4 one (mapped, IPv4-compatible, 6to4, NAT64, Teredo) is judged by what it carries.
"""

from __future__ import annotations

import socket
from typing import Any

import pytest

from service.webhooks import targets
from service.webhooks.targets import allowed_address, parse_target
from tests.support.receiver import receiver

MOBILE = "mobile-key-" + "m" * 20

# Refused in both modes: never a place for a webhook.
NEVER = [
    "169.254.169.254",  # cloud metadata (link-local)
    "fe80::1",
    "fe80::1%1",
    "224.0.0.1",  # multicast
    "239.255.255.250",
    "ff02::1",
    "0.0.0.0",
    "::",
    "240.0.0.1",  # reserved
    "255.255.255.255",
    "192.0.2.1",  # documentation
    "2001:db8::1",
    "198.18.0.1",  # benchmarking
    "192.88.99.1",  # 6to4 relay anycast
    "fec0::1",  # site-local
    "2002:a9fe:a9fe::",  # 6to4 of 169.254.169.254
    "64:ff9b::a9fe:a9fe",  # NAT64 of 169.254.169.254
    "64:ff9b::e000:1",  # NAT64 of 224.0.0.1
    "::ffff:169.254.169.254",  # mapped
    "::169.254.169.254",  # IPv4-compatible
    "2001:0:4136:e378:8000:63bf:3fff:fdd2",  # Teredo, client 192.0.2.45
]
# Allowed in test mode only: loopback and private ranges, however written.
TEST_MODE_ONLY = [
    "127.0.0.1",
    "127.8.9.10",
    "::1",
    "10.1.2.3",
    "172.16.0.9",
    "192.168.0.7",
    "100.64.0.1",
    "fd00::7",
    "::ffff:127.0.0.1",
    "::ffff:10.0.0.1",
    "2002:7f00:1::",  # 6to4 of 127.0.0.1
    "2002:c0a8:1::",  # 6to4 of 192.168.0.1
    "64:ff9b::a00:1",  # NAT64 of 10.0.0.1
]
# Allowed in both modes: global addresses, however written.
GLOBAL = [
    "93.184.215.14",
    "2606:4700::1111",
    "::ffff:93.184.215.14",
    "2002:5db8:d70e::",  # 6to4 of 93.184.215.14
    "64:ff9b::5db8:d70e",  # NAT64 of 93.184.215.14
]


@pytest.mark.parametrize("address", NEVER)
def test_link_local_multicast_reserved_and_other_non_global_addresses_are_never_allowed(
    address: str,
) -> None:
    assert not allowed_address(address, test_mode=False)
    assert not allowed_address(address, test_mode=True)


@pytest.mark.parametrize("address", TEST_MODE_ONLY)
def test_loopback_and_private_addresses_are_allowed_in_test_mode_only(address: str) -> None:
    assert not allowed_address(address, test_mode=False)
    assert allowed_address(address, test_mode=True)


@pytest.mark.parametrize("address", GLOBAL)
def test_global_addresses_are_allowed_in_both_modes(address: str) -> None:
    assert allowed_address(address, test_mode=False)
    assert allowed_address(address, test_mode=True)


def test_port_0_and_non_ascii_urls_are_refused() -> None:
    for url in (
        "https://example.com:0/hook",
        "https://93.184.215.14:0/",
        "https://exämple.com/",
        "https://example.com/\u202ekoob",
    ):
        with pytest.raises(targets.BadTarget):
            parse_target(url, test_mode=True)


def literal(address: str) -> str:
    return f"[{address}]" if ":" in address else address


def register(client: Any, url: str) -> Any:
    return client.post("/v1/webhooks", json={"url": url}, headers={"X-API-Key": MOBILE})


class TestTestMode:
    @pytest.fixture
    def app_overrides(self) -> dict[str, Any]:
        return {"test_mode": True, "api_keys": f"mobile={MOBILE}"}

    @pytest.mark.parametrize("address", [a for a in NEVER if "%" not in a])
    def test_registration_refuses_what_no_delivery_may_reach(self, client, address) -> None:
        refused = register(client, f"http://{literal(address)}:8080/hook")
        assert refused.status_code == 400, (address, refused.get_json())
        assert refused.get_json()["type"].endswith("bad-webhook-url")

    @pytest.mark.parametrize("address", ["127.0.0.1", "::1", "10.1.2.3", "fd00::7"])
    def test_registration_takes_loopback_and_private_targets_by_http(self, client, address) -> None:
        assert register(client, f"http://{literal(address)}:8080/hook").status_code == 201

    @pytest.mark.parametrize("address", ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"])
    def test_a_public_target_needs_https_in_test_mode_too(self, client, address) -> None:
        """Issue 30: test mode took public http targets; http is for a receiver beside the
        service (loopback, a container network), and a public one still needs https."""
        refused = register(client, f"http://{literal(address)}:8080/hook")
        assert refused.status_code == 400, refused.get_json()
        assert "needs https" in refused.get_json()["detail"]
        assert register(client, f"https://{literal(address)}/hook").status_code == 201

    def test_a_name_is_checked_again_on_the_address_each_delivery_connects_to(
        self, client, monkeypatch
    ) -> None:
        """DNS rebinding: a name that pointed at the receiver points at the cloud metadata
        address by the time of the delivery: nothing is sent there."""
        with receiver() as running:
            port = running.url.rsplit(":", 1)[1].split("/")[0]
            answers = {"rebinding.test": "127.0.0.1"}
            real = socket.getaddrinfo

            def lookup(host: str, *args: Any, **kwargs: Any) -> Any:
                if host in answers:
                    return real(answers[host], *args, **kwargs)
                return real(host, *args, **kwargs)

            monkeypatch.setattr(targets.socket, "getaddrinfo", lookup)
            made = register(client, f"http://rebinding.test:{port}/hook")
            assert made.status_code == 201, made.get_json()
            hook = made.get_json()
            ping = f"/v1/webhooks/{hook['id']}/ping"
            headers = {"X-API-Key": MOBILE}
            assert client.post(ping, headers=headers).get_json()["delivered"] is True
            answers["rebinding.test"] = "169.254.169.254"
            check = client.post(ping, headers=headers).get_json()
            assert check["delivered"] is False and check["status_code"] is None
            assert "may not reach" in check["error"]
            assert len(running.received) == 1


class TestProduction:
    @pytest.fixture
    def app_overrides(self) -> dict[str, Any]:
        return {"test_mode": False, "api_keys": f"mobile={MOBILE}"}

    @pytest.mark.parametrize(
        "address",
        [
            "2002:a9fe:a9fe::",
            "2002:7f00:1::",
            "fec0::1",
            "192.88.99.1",
            "64:ff9b::a9fe:a9fe",
            "64:ff9b::7f00:1",
            "::ffff:127.0.0.1",
            "2001:0:4136:e378:8000:63bf:3fff:fdd2",
            "10.1.2.3",
        ],
    )
    def test_registration_refuses_an_embedded_private_address_and_the_other_holes(
        self, client, address
    ) -> None:
        refused = register(client, f"https://{literal(address)}/hook")
        assert refused.status_code == 400, (address, refused.get_json())
        assert refused.get_json()["type"].endswith("bad-webhook-url")

    def test_registration_refuses_port_0(self, client) -> None:
        assert register(client, "https://93.184.215.14:0/hook").status_code == 400

    def test_registration_takes_a_global_address_however_written(self, client) -> None:
        for address in ("93.184.215.14", "2002:5db8:d70e::", "64:ff9b::5db8:d70e"):
            assert register(client, f"https://{literal(address)}/hook").status_code == 201


def test_the_contract_states_the_scheme_rule() -> None:
    import re
    from pathlib import Path

    import yaml

    spec = yaml.safe_load((Path(__file__).parents[2] / "openapi.yaml").read_text("utf-8"))
    url = spec["components"]["schemas"]["WebhookRequest"]["properties"]["url"]
    pattern = re.compile(url["pattern"])
    for good in ("https://backend.example/hooks", "http://127.0.0.1:9/x", "HTTPS://A.B/"):
        assert pattern.search(good), good
    for bad in (
        "ftp://backend.example/",
        "javascript:alert(1)",
        "//backend.example/",
        "backend.example/hook",
        "https://exämple.com/",
        "https://a b/",
    ):
        assert not pattern.search(bad), bad


class TestTheCap:
    @pytest.fixture
    def app_overrides(self) -> dict[str, Any]:
        return {"test_mode": True, "api_keys": f"mobile={MOBILE}"}

    def test_forty_registrations_at_once_leave_sixteen_webhooks(self, app, client) -> None:
        """Each registration counts and adds in one step on the real Redis: 40 at once
        (each on its own client and thread) get 16 webhooks and 24 refusals."""
        import threading

        start = threading.Barrier(40)
        statuses: list[int] = []

        def one(number: int) -> None:
            own = app.test_client()
            start.wait()
            answer = register(own, f"http://127.0.0.1:9/hook-{number}")
            statuses.append(answer.status_code)

        threads = [threading.Thread(target=one, args=(n,)) for n in range(40)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(statuses) == [201] * 16 + [422] * 24
        listed = client.get("/v1/webhooks", headers={"X-API-Key": MOBILE}).get_json()
        assert len(listed["webhooks"]) == 16
