"""SPEC section 3, "Webhooks": registration, signed deliveries to a real receiver on loopback,
retries and their spacing, dead letters, redelivery, 410, event filters, order per match."""

from __future__ import annotations

import itertools
import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from standardwebhooks.webhooks import Webhook as PackageVerifier

from service.config import Settings
from service.dispatcher import Dispatcher
from service.store import MatchStore, notify
from service.store.notify import Notifications
from tests.api.matchclient import Seat
from tests.support.receiver import Received, Receiver, receiver, verify_signature

pytestmark = pytest.mark.usefixtures("redis_url")

MOBILE = "mobile-key-" + "m" * 20
PARTNER = "partner-key-" + "p" * 20
KEYS = f"mobile={MOBILE},partner={PARTNER}"


def key(value: str = MOBILE) -> dict[str, str]:
    return {"X-API-Key": value}


@pytest.fixture
def app_overrides() -> dict[str, Any]:
    return {"test_mode": True, "api_keys": KEYS}


def settings_for(redis_url: str, **more: Any) -> Settings:
    values: dict[str, Any] = {
        "redis_url": redis_url,
        "test_mode": True,
        "api_keys": KEYS,
        "webhook_retry_schedule": "0.3,0.6",
        "webhook_timeout_seconds": 2.0,
    }
    return Settings(**{**values, **more})


@pytest.fixture
def dispatcher_settings(redis_url: str) -> Settings:
    return settings_for(redis_url)


@pytest.fixture
def dispatcher(dispatcher_settings: Settings) -> Iterator[Dispatcher]:
    store = MatchStore.open(dispatcher_settings)
    running = Dispatcher(Notifications(store.topology), dispatcher_settings)
    thread = threading.Thread(target=running.run, daemon=True)
    thread.start()
    try:
        yield running
    finally:
        running.stop()
        thread.join(timeout=15)


@pytest.fixture
def hook_receiver() -> Iterator[Receiver]:
    with receiver() as r:
        yield r


def register(client: Any, url: str, events: list[str] | None = None, app_key: str = MOBILE) -> Any:
    body: dict[str, Any] = {"url": url}
    if events is not None:
        body["events"] = events
    response = client.post("/v1/webhooks", json=body, headers=key(app_key))
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def owned(
    client: Any,
    *players: Any,
    app_key: str = MOBILE,
    rules: dict[str, Any] | None = None,
    setup: dict[str, Any] | None = None,
) -> tuple[dict[str, Any], list[Seat]]:
    body_players = []
    for player in players or (("Ann", "u-ann"), ("Bo", "u-bo")):
        if isinstance(player, str):
            body_players.append({"name": player.removesuffix("*"), "bot": True})
        else:
            body_players.append({"name": player[0], "ref": player[1]})
    body: dict[str, Any] = {"players": body_players, "rules": {"turn_seconds": 0, **(rules or {})}}
    if setup is not None:
        body["setup"] = setup
    response = client.post("/v1/matches", json=body, headers=key(app_key))
    assert response.status_code == 201, response.get_json()
    created = response.get_json()
    return created, [Seat(client, created["id"], s["seat"], s["token"]) for s in created["seats"]]


def racks(
    *racks: str, pool: str = "O4 B9 K8 R1 O13 B2 B3 K9", first_seat: int = 0
) -> dict[str, Any]:
    return {"racks": [r.split() for r in racks], "pool": pool.split(), "first_seat": first_seat}


def of_type(kind: str) -> Any:
    return lambda r: r.json["type"] == kind


# -- registration ------------------------------------------------------------------------


def test_a_webhook_is_registered_with_a_secret_shown_once(client) -> None:
    made = register(client, "http://127.0.0.1:9/hook", ["turn.started"])
    assert made["secret"].startswith("whsec_") and made["events"] == ["turn.started"]
    assert made["disabled"] is False
    listed = client.get("/v1/webhooks", headers=key()).get_json()["webhooks"]
    assert [hook["id"] for hook in listed] == [made["id"]]
    shown = client.get(f"/v1/webhooks/{made['id']}", headers=key()).get_json()
    assert "secret" not in shown and "secret" not in listed[0]
    assert shown["url"] == "http://127.0.0.1:9/hook"
    every = register(client, "http://127.0.0.1:9/all")
    assert set(every["events"]) == {
        "turn.started",
        "turn.expiring",
        "game.ended",
        "match.finished",
        "player.left",
        "match.canceled",
    }


def test_another_app_sees_none_of_the_webhooks(client) -> None:
    made = register(client, "http://127.0.0.1:9/hook")
    assert client.get(f"/v1/webhooks/{made['id']}", headers=key(PARTNER)).status_code == 404
    assert client.delete(f"/v1/webhooks/{made['id']}", headers=key(PARTNER)).status_code == 404
    assert client.get("/v1/webhooks", headers=key(PARTNER)).get_json() == {"webhooks": []}
    assert client.get("/v1/webhooks").status_code == 401
    assert client.delete(f"/v1/webhooks/{made['id']}", headers=key()).status_code == 204
    assert client.get(f"/v1/webhooks/{made['id']}", headers=key()).status_code == 404


@pytest.mark.parametrize(
    "body",
    [
        {"url": "ftp://127.0.0.1/x"},
        {"url": "http://user:pw@127.0.0.1/x"},
        {"url": "not a url"},
        {"url": "http://127.0.0.1/x", "events": ["turn.begun"]},
        {"url": "http://127.0.0.1/x", "events": []},
        {"events": ["turn.started"]},
    ],
)
def test_malformed_registrations_are_400(client, body: dict[str, Any]) -> None:
    response = client.post("/v1/webhooks", json=body, headers=key())
    assert response.status_code == 400, response.get_json()


class TestOutsideTestMode:
    @pytest.fixture
    def app_overrides(self) -> dict[str, Any]:
        return {"test_mode": False, "api_keys": KEYS}

    @pytest.mark.parametrize(
        "url",
        [
            "http://93.184.215.14/hook",  # public, but not https
            "https://127.0.0.1/hook",
            "https://10.1.2.3/hook",
            "https://192.168.0.7/hook",
            "https://169.254.169.254/latest/meta-data",
            "https://[::1]/hook",
            "https://[fe80::1]/hook",
            "https://localhost/hook",
        ],
    )
    def test_only_https_to_public_addresses(self, client, url: str) -> None:
        response = client.post("/v1/webhooks", json={"url": url}, headers=key())
        assert response.status_code == 400, (url, response.get_json())
        assert response.get_json()["type"].endswith("bad-webhook-url")

    def test_a_public_https_address_is_accepted(self, client) -> None:
        made = register(client, "https://93.184.215.14/hook")
        assert made["url"] == "https://93.184.215.14/hook"


# -- deliveries --------------------------------------------------------------------------


def test_turn_started_is_signed_and_verifies_independently(
    client, dispatcher, hook_receiver
) -> None:
    made = register(client, hook_receiver.url)
    created, seats = owned(client, setup=racks("R10 R11 R12 K5", "K1 K2 K5"))
    first = hook_receiver.wait_for(1, where=of_type("turn.started"))[0]
    assert first.json["data"] == {
        "match_id": created["id"],
        "version": created["match"]["version"],
        "seat": 0,
        "ref": "u-ann",
        "deadline": None,
    }
    assert first.headers["webhook-id"].startswith("msg_")
    assert abs(int(first.headers["webhook-timestamp"]) - time.time()) < 30
    assert first.headers["content-type"] == "application/json"
    assert verify_signature(made["secret"], first)
    # the standardwebhooks package agrees, and a tampered body fails both
    PackageVerifier(made["secret"]).verify(first.body, first.headers)
    tampered = Received(first.at, first.path, first.headers, first.body.replace(b"u-ann", b"u-bob"))
    assert not verify_signature(made["secret"], tampered)
    assert seats[0].draw().status_code == 200
    second = hook_receiver.wait_for(2, where=of_type("turn.started"))[1]
    assert second.json["data"]["seat"] == 1 and second.json["data"]["ref"] == "u-bo"
    assert second.id != first.id and verify_signature(made["secret"], second)


def deliveries(client: Any, webhook: dict[str, Any], app_key: str = MOBILE) -> list[Any]:
    """The webhook's deliveries log, newest first."""
    log = client.get(f"/v1/webhooks/{webhook['id']}/deliveries", headers=key(app_key))
    assert log.status_code == 200, log.get_json()
    return log.get_json()["deliveries"]  # type: ignore[no-any-return]


def fanned_out(redis_client: redis.Redis) -> bool:
    """Whether the dispatcher has read and fanned out every notification of every outbox
    (its consumer group has read each to its end and acknowledged all it read)."""
    for name in redis_client.scan_iter("*:out:*"):
        groups = [g for g in redis_client.xinfo_groups(name) if g["name"] == "dispatch"]
        if redis_client.xlen(name) and not groups:
            return False
        if any(g["pending"] or g.get("lag") for g in groups):
            return False
    return True


def test_event_filters_and_game_ended_match_finished(client, dispatcher, hook_receiver) -> None:
    made = register(client, hook_receiver.url, ["game.ended", "match.finished"])
    created, seats = owned(
        client, setup=racks("R10 R11 R12", "K1 K2 K5"), rules={"target_score": 1}
    )
    assert seats[0].play("R10 R11 R12").status_code == 200
    got = hook_receiver.wait_for(2)
    assert [r.json["type"] for r in got] == ["game.ended", "match.finished"]
    ended = got[0].json["data"]
    assert ended["match_id"] == created["id"] and ended["game_number"] == 1
    assert ended["winner_seat"] == 0 and sum(ended["scores"]) == 0
    assert got[1].json["data"]["version"] > ended["version"] - 1
    # the match's earlier notifications (turn.started...) were fanned out before these two:
    # only these two became deliveries
    assert [d["type"] for d in deliveries(client, made)] == ["match.finished", "game.ended"]
    assert all(r.json["type"] != "turn.started" for r in hook_receiver.received)


def test_player_left_and_match_canceled(client, dispatcher, hook_receiver) -> None:
    register(client, hook_receiver.url, ["player.left", "match.canceled"])
    created, _seats = owned(client, ("Ann", "u-ann"), ("Bo", "u-bo"), ("Cy", "u-cy"))
    left = client.post(f"/v1/matches/{created['id']}/leave", json={"seat": 2}, headers=key())
    assert left.status_code == 200
    assert client.post(f"/v1/matches/{created['id']}/cancel", headers=key()).status_code == 200
    got = hook_receiver.wait_for(2)
    assert [r.json["type"] for r in got] == ["player.left", "match.canceled"]
    assert got[0].json["data"]["seat"] == 2 and got[0].json["data"]["ref"] == "u-cy"
    assert got[1].json["data"]["match_id"] == created["id"]


def test_another_apps_webhook_never_gets_this_apps_events(client, dispatcher) -> None:
    with receiver() as mine, receiver() as theirs:
        register(client, mine.url)
        their_hook = register(client, theirs.url, app_key=PARTNER)
        owned(client)
        assert mine.wait_for(1)
        # fanned out to every webhook at once: theirs would have its delivery by now
        assert deliveries(client, their_hook, PARTNER) == []
        assert theirs.received == []
        _created, _ = owned(client, ("Pat", "p-1"), ("Quinn", "p-2"), app_key=PARTNER)
        got = theirs.wait_for(1)
        assert got[0].json["data"]["ref"] in ("p-1", "p-2")
        assert all(b"u-ann" not in r.body and b"u-bo" not in r.body for r in theirs.received)


def test_anonymous_matches_notify_nobody(client, dispatcher, hook_receiver, redis_client) -> None:
    made = register(client, hook_receiver.url)
    response = client.post("/v1/matches", json={"players": [{"name": "A"}, {"name": "B"}]})
    assert response.status_code == 201
    wait(lambda: fanned_out(redis_client))
    assert deliveries(client, made) == []
    assert hook_receiver.received == []


def test_order_per_match(client, dispatcher, hook_receiver) -> None:
    register(client, hook_receiver.url, ["turn.started"])
    matches = [owned(client) for _ in range(3)]
    for _ in range(4):
        for _, seats in matches:
            for seat in seats:
                if seat.view().get_json()["current_seat"] == seat.seat:
                    assert seat.draw().status_code == 200
                    break
    got = hook_receiver.wait_for(15)
    assert len(got) == 15
    for created, _ in matches:
        versions = [
            r.json["data"]["version"] for r in got if r.json["data"]["match_id"] == created["id"]
        ]
        assert versions == sorted(versions) and len(versions) == 5


def test_retries_follow_the_schedule_then_the_delivery_is_dead_and_redelivered(
    client, dispatcher, hook_receiver, caplog
) -> None:
    caplog.set_level("INFO", logger="service.dispatcher")
    hook_receiver.behave = lambda _: (500, {}, b"no", 0.0)
    made = register(client, hook_receiver.url, ["turn.started"])
    owned(client)
    got = hook_receiver.wait_for(3)
    wait(lambda: deliveries(client, made)[0]["status"] == "dead")  # no attempt after this
    assert len(hook_receiver.received) == 3  # the first try and the schedule's two retries
    assert len({r.id for r in got}) == 1
    # The delays chosen are the schedule's (0.3 s, 0.6 s) plus at most 20 % jitter, and no retry
    # comes early. How late one comes depends on the outbox poll and on the machine's load, so
    # the gaps are checked only from below (a loaded CI machine once saw 1.02 s for 0.3 s).
    delays = [
        r.args[0]
        for r in caplog.records
        if r.name == "service.dispatcher" and r.msg.startswith("delivery failed; retrying")
    ]
    assert len(delays) == 2, delays
    assert 0.3 <= delays[0] <= 0.3 * 1.2 and 0.6 <= delays[1] <= 0.6 * 1.2, delays
    gaps = [b.at - a.at for a, b in itertools.pairwise(got)]
    assert gaps[0] >= delays[0] and gaps[1] >= delays[1], (gaps, delays)
    log = client.get(f"/v1/webhooks/{made['id']}/deliveries", headers=key()).get_json()
    [dead] = log["deliveries"]
    assert dead["id"] == got[0].id and dead["status"] == "dead"
    assert dead["attempts"] == 3 and dead["last_status_code"] == 500
    assert dead["next_attempt_at"] is None and dead["type"] == "turn.started"
    hook_receiver.behave = lambda _: (200, {}, b"ok", 0.0)
    url = f"/v1/webhooks/{made['id']}/deliveries/{dead['id']}/redeliver"
    assert client.post(url, headers=key()).status_code == 202
    again = hook_receiver.wait_for(4)[3]
    assert again.id == dead["id"] and again.body == got[0].body
    deadline = time.monotonic() + 60  # a safety bound: the loop ends at the event
    while time.monotonic() < deadline:
        [entry] = client.get(f"/v1/webhooks/{made['id']}/deliveries", headers=key()).get_json()[
            "deliveries"
        ]
        if entry["status"] == "delivered":
            break
        time.sleep(0.05)
    assert entry["status"] == "delivered" and entry["attempts"] == 4
    assert entry["last_status_code"] == 200
    missing = f"/v1/webhooks/{made['id']}/deliveries/msg_1_2_3_4/redeliver"
    assert client.post(missing, headers=key()).status_code == 404
    other = client.post(url, headers=key(PARTNER))
    assert other.status_code == 404


def test_a_longer_retry_after_is_honoured(client, dispatcher, hook_receiver) -> None:
    answers = iter([(503, {"Retry-After": "2"}, b"", 0.0)])
    hook_receiver.behave = lambda _: next(answers, (204, {}, b"", 0.0))
    register(client, hook_receiver.url, ["turn.started"])
    owned(client)
    got = hook_receiver.wait_for(2, timeout=60)
    assert got[1].at - got[0].at >= 2.0 and got[1].id == got[0].id


def test_a_410_disables_the_webhook(client, dispatcher, hook_receiver, redis_client) -> None:
    hook_receiver.behave = lambda _: (410, {}, b"gone", 0.0)
    made = register(client, hook_receiver.url, ["turn.started"])
    owned(client)
    hook_receiver.wait_for(1)
    deadline = time.monotonic() + 60  # a safety bound: the loop ends at the event
    while time.monotonic() < deadline:
        if client.get(f"/v1/webhooks/{made['id']}", headers=key()).get_json()["disabled"]:
            break
        time.sleep(0.05)
    assert client.get(f"/v1/webhooks/{made['id']}", headers=key()).get_json()["disabled"]
    owned(client)
    wait(lambda: fanned_out(redis_client))  # the new match's notifications: to nobody
    assert len(hook_receiver.received) == 1
    [entry] = client.get(f"/v1/webhooks/{made['id']}/deliveries", headers=key()).get_json()[
        "deliveries"
    ]
    assert entry["status"] == "dead" and entry["last_status_code"] == 410


def test_a_redirect_is_not_followed(client, dispatcher, hook_receiver) -> None:
    with receiver() as elsewhere:
        hook_receiver.behave = lambda _: (307, {"Location": elsewhere.url}, b"", 0.0)
        register(client, hook_receiver.url, ["turn.started"])
        owned(client)
        assert len(hook_receiver.wait_for(3)) == 3
        assert elsewhere.received == []


def test_a_hanging_receiver_is_cut_off_and_tried_again(client, dispatcher, hook_receiver) -> None:
    released = threading.Event()
    hanging = [True]

    def behave(_: Received) -> tuple[int, dict[str, str], bytes, float]:
        if hanging:  # the first attempt hangs until the test lets it answer
            hanging.clear()
            released.wait(60)
            return (200, {}, b"", 0.0)
        return (204, {}, b"", 0.0)

    hook_receiver.behave = behave
    register(client, hook_receiver.url, ["turn.started"])
    owned(client)
    try:
        got = hook_receiver.wait_for(2, timeout=60)
    finally:
        released.set()
    # tried again while the first attempt still hung: it was cut off, at its 2 s timeout
    assert len(got) == 2 and got[0].id == got[1].id
    assert got[1].at - got[0].at >= 2.0


def test_a_huge_answer_is_not_read(client, dispatcher, hook_receiver) -> None:
    hook_receiver.behave = lambda _: (200, {}, b"x" * (10 * 1024 * 1024), 0.0)
    made = register(client, hook_receiver.url, ["turn.started"])
    owned(client)
    hook_receiver.wait_for(1)
    deadline = time.monotonic() + 60  # a safety bound: the loop ends at the event
    while time.monotonic() < deadline:
        log = client.get(f"/v1/webhooks/{made['id']}/deliveries", headers=key()).get_json()
        if log["deliveries"] and log["deliveries"][0]["status"] == "delivered":
            break
        time.sleep(0.05)
    assert log["deliveries"][0]["status"] == "delivered"


def test_the_secret_is_in_no_log_line_nor_delivery_record(
    client, dispatcher, hook_receiver, caplog, redis_client
) -> None:
    caplog.set_level("DEBUG")
    hook_receiver.behave = lambda _: (500, {}, b"", 0.0)
    made = register(client, hook_receiver.url)
    owned(client)
    hook_receiver.wait_for(3)
    wait(lambda: deliveries(client, made)[0]["status"] == "dead")  # the last attempt logged
    secret = made["secret"]
    assert secret not in caplog.text and secret.removeprefix("whsec_") not in caplog.text
    assert any(r.name == "service.dispatcher" for r in caplog.records)  # attempts were logged
    for record in caplog.records:  # every field of every record, extras too
        assert secret.removeprefix("whsec_") not in repr(record.__dict__)
    log = client.get(f"/v1/webhooks/{made['id']}/deliveries", headers=key())
    assert secret.removeprefix("whsec_") not in log.get_data(as_text=True)
    for name in redis_client.scan_iter("*:wh:d:*"):
        assert secret.removeprefix("whsec_") not in json.dumps(redis_client.hgetall(name))


def test_metrics_show_pending_delivered_retried_dead_and_latency(
    client, dispatcher, hook_receiver
) -> None:
    answers = iter([(500, {}, b"", 0.0)])
    hook_receiver.behave = lambda _: next(answers, (204, {}, b"", 0.0))
    register(client, hook_receiver.url, ["turn.started"])
    owned(client)
    hook_receiver.wait_for(2)

    def figures() -> dict[str, float]:
        text = client.get("/metrics").get_data(as_text=True)
        return {
            line.split(" ")[0]: float(line.split(" ")[1])
            for line in text.splitlines()
            if line.startswith("referee_webhook")
        }

    # the receiver has answered; the dispatcher records the delivery right after
    wait(lambda: figures().get("referee_webhook_deliveries_delivered_total") == 1)
    values = figures()
    assert values["referee_webhook_deliveries_delivered_total"] == 1
    assert values["referee_webhook_deliveries_retried_total"] == 1
    assert values["referee_webhook_deliveries_dead_total"] == 0
    assert values["referee_webhook_deliveries_pending"] == 0
    assert values["referee_webhook_delivery_latency_seconds_count"] == 1


def test_a_receiver_that_drips_its_answer_is_cut_off_at_the_timeout(client, dispatcher) -> None:
    """A byte every 0.2 s never trips a read timeout: the whole attempt's deadline does."""
    server = socket.create_server(("127.0.0.1", 0))
    accepted: list[float] = []
    stop = threading.Event()

    def drip() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                connection, _ = server.accept()
            except TimeoutError:
                continue
            accepted.append(time.monotonic())
            threading.Thread(target=answer_slowly, args=(connection,), daemon=True).start()

    def answer_slowly(connection: socket.socket) -> None:
        with connection:
            connection.recv(65536)
            try:
                for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 1000:
                    if stop.is_set():
                        return
                    connection.sendall(bytes([byte]))
                    time.sleep(0.2)
            except OSError:
                return  # cut off

    thread = threading.Thread(target=drip, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.getsockname()[1]}/hook"
        register(client, url, ["turn.started"])
        owned(client)
        deadline = time.monotonic() + 60  # a safety bound: the loop ends at the event
        while len(accepted) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        stop.set()
        thread.join(5)
        server.close()
    assert len(accepted) >= 2
    # cut off at the 2 s timeout, then the first retry 0.3 s (+ up to 20 %) later
    assert 2.0 + 0.3 <= accepted[1] - accepted[0] < 2.0 + 0.3 * 1.2 + 1.5


class TestTheLogKeepsTheNewest:
    """A webhook's finished deliveries are kept while they are among its newest on their
    shard (``LOG_KEPT``, 200; 3 here), and not after: what a match leaves behind is bounded by
    the log, not by the matches played. A pending delivery is kept until it finishes."""

    @pytest.fixture
    def dispatcher_settings(self, redis_url: str) -> Settings:
        return settings_for(redis_url, webhook_retry_schedule="0.2,0.2,0.2,0.2,0.2,0.2,0.2,0.2")

    def test_older_finished_deliveries_go_pending_ones_stay(
        self, client, redis_url, monkeypatch, dispatcher, hook_receiver
    ) -> None:
        monkeypatch.setattr(notify, "LOG_KEPT", 3)
        release = threading.Event()
        hook_receiver.behave = lambda _: ((204 if release.is_set() else 500), {}, b"", 0.0)
        made = register(client, hook_receiver.url, ["turn.started"])
        log_url = f"/v1/webhooks/{made['id']}/deliveries"

        def log() -> list[dict[str, Any]]:
            listed: list[dict[str, Any]] = client.get(log_url, headers=key()).get_json()[
                "deliveries"
            ]
            return listed

        raw = redis.Redis.from_url(redis_url, decode_responses=True)
        try:
            created, seats = owned(client, setup=racks("R1 R2 K5", "K1 K2 K7"))
            first = hook_receiver.wait_for(1)[0].id  # refused: it waits for its retry
            for turn in range(4):
                assert seats[turn % 2].draw().status_code == 200
            wait(lambda: len(log()) == 3)
            held = f"{{s{first.split('_')[1]}}}:wh:d:"
            assert raw.hget(held + first, "status") == "pending"  # out of the log, not gone
            release.set()
            wait(lambda: len({r.id for r in hook_receiver.received}) == 5, timeout=60)
            later = [r.json["data"]["version"] for r in hook_receiver.received if r.id != first]
            assert later == sorted(later) and len(later) == 4  # in order, after the first
            wait(lambda: {d["status"] for d in log()} == {"delivered"})
            kept = [d["id"] for d in log()]
            gone = sorted({r.id for r in hook_receiver.received} - set(kept))
            assert len(gone) == 2 and first in gone
            for delivery in gone:
                assert not raw.exists(held + delivery)
                redeliver = f"{log_url}/{delivery}/redeliver"
                assert client.post(redeliver, headers=key()).status_code == 404
            for delivery in kept:
                assert 0 < raw.ttl(held + delivery) <= notify.FINISHED_KEPT
            assert client.post(f"{log_url}/{kept[0]}/redeliver", headers=key()).status_code == 202
            assert created
        finally:
            raw.close()


def wait(check: Any, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)
