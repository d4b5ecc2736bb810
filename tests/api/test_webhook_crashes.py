"""Webhook delivery survives a dispatcher that dies: ``kill -9`` mid-delivery loses nothing,
and anything sent twice carries the same ``webhook-id``; an outbox entry a dispatcher read
but never fanned out is claimed by another."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from service.dispatcher import Dispatcher
from service.store import MatchStore
from service.store.notify import Notifications
from tests.api.test_webhooks import KEYS, deliveries, owned, register, settings_for, wait
from tests.support.receiver import Receiver, receiver

pytestmark = pytest.mark.usefixtures("redis_url")
ROOT = Path(__file__).resolve().parents[2]


def every_delivery_sent(client: Any, webhook: dict[str, Any], count: int) -> bool:
    """Whether the webhook's ``count`` deliveries are all in its log and delivered."""
    log = deliveries(client, webhook)
    return len(log) >= count and all(d["status"] == "delivered" for d in log)


@pytest.fixture
def app_overrides() -> dict[str, Any]:
    return {"test_mode": True, "api_keys": KEYS}


def start_dispatcher(redis_url: str, log: Path) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "REDIS_URL": redis_url,
        "REFEREE_API_KEYS": KEYS,
        "REFEREE_TEST_MODE": "1",
        "WEBHOOK_TIMEOUT_SECONDS": "2",  # a lease of 5 s
        "WEBHOOK_RETRY_SCHEDULE": "0.2,0.4,0.8,1.6",
    }
    return subprocess.Popen(
        [sys.executable, "-m", "service.dispatcher"],
        cwd=ROOT,
        env=env,
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
    )


@pytest.fixture
def hook_receiver() -> Iterator[Receiver]:
    with receiver() as r:
        yield r


def test_a_dispatcher_killed_mid_delivery_loses_nothing(
    client, redis_url, hook_receiver, tmp_path
) -> None:
    hold, killed = threading.Event(), threading.Event()

    def behave(got: Any) -> tuple[int, dict[str, str], bytes, float]:
        if not hold.is_set():  # the first request hangs until its dispatcher is killed
            hold.set()
            killed.wait(60)
            return 200, {}, b"", 0.0
        return 204, {}, b"", 0.0

    hook_receiver.behave = behave
    made = register(client, hook_receiver.url, ["turn.started"])
    first = start_dispatcher(redis_url, tmp_path / "first.log")
    second = None
    try:
        matches = [owned(client) for _ in range(4)]
        assert hold.wait(60), (tmp_path / "first.log").read_text()
        first.send_signal(signal.SIGKILL)
        first.wait(10)
        killed.set()
        # moves go on while no dispatcher runs
        expected = 4
        for _, seats in matches:
            for _ in range(2):
                current = seats[0].view().get_json()["current_seat"]
                assert seats[current].draw().status_code == 200
                expected += 1
        second = start_dispatcher(redis_url, tmp_path / "second.log")
        # every event once, and the cut-off one again; then nothing more is on its way
        wait(lambda: len({r.id for r in hook_receiver.received}) >= expected)
        wait(lambda: every_delivery_sent(client, made, expected))
        got = list(hook_receiver.received)
    finally:
        for process in (first, second):
            if process is not None and process.poll() is None:
                process.terminate()
                process.wait(10)
    by_id: dict[str, set[bytes]] = {}
    for request in got:
        by_id.setdefault(request.id, set()).add(request.body)
    assert len(by_id) == expected, "an event was lost (or made twice)"
    changed = {delivery: bodies for delivery, bodies in by_id.items() if len(bodies) > 1}
    assert not changed, f"a resend changed the body: {changed}"
    assert len(got) - len(by_id) >= 1  # the killed delivery came again, with its id
    for created, _ in matches:
        versions = []
        for request in got:
            data = request.json["data"]
            if data["match_id"] == created["id"] and data["version"] not in versions:
                versions.append(data["version"])
        assert versions == sorted(versions) and len(versions) == 3, "out of order"


def test_an_entry_read_by_a_dead_dispatcher_is_claimed_by_another(
    client, redis_url, hook_receiver
) -> None:
    register(client, hook_receiver.url, ["turn.started"])
    settings = settings_for(redis_url)
    notes = Notifications(MatchStore.open(settings).topology)
    created, _ = owned(client)
    # a dispatcher reads the entry and dies before fanning it out (nothing acknowledged)
    read = []
    for shard in range(32):
        dead = notes.outbox_reader(shard, ["mobile", "partner"], "dead-consumer")
        read += dead.read(block=0.01)
        dead.close()
    assert [entry.match_id for entry in read] == [created["id"]]
    running = Dispatcher(notes, settings)
    thread = threading.Thread(target=running.run, daemon=True)
    thread.start()
    try:
        [got] = hook_receiver.wait_for(1, timeout=60)
        assert got.json["data"]["match_id"] == created["id"]
    finally:
        running.stop()
        thread.join(15)


def test_two_dispatchers_share_the_work_without_sending_anything_twice(
    client, redis_url, hook_receiver
) -> None:
    made = register(client, hook_receiver.url, ["turn.started"])
    settings = settings_for(redis_url)
    replicas = [
        Dispatcher(Notifications(MatchStore.open(settings).topology), settings) for _ in range(2)
    ]
    threads = [threading.Thread(target=one.run, daemon=True) for one in replicas]
    for thread in threads:
        thread.start()
    try:
        matches = [owned(client) for _ in range(10)]
        for _ in range(3):
            for _, seats in matches:
                current = seats[0].view().get_json()["current_seat"]
                assert seats[current].draw().status_code == 200
        hook_receiver.wait_for(40, timeout=60)
        wait(lambda: every_delivery_sent(client, made, 40))  # nothing more on its way
        got = list(hook_receiver.received)
    finally:
        for one in replicas:
            one.stop()
        for thread in threads:
            thread.join(15)
    assert len(got) == 40 and len({r.id for r in got}) == 40  # each once
    for created, _ in matches:
        versions = [
            r.json["data"]["version"] for r in got if r.json["data"]["match_id"] == created["id"]
        ]
        assert versions == sorted(versions) and len(versions) == 4
