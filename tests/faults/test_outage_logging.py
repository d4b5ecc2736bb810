"""A Redis outage is logged once when it starts and once when it ends by the periodic loops
(the sweeper, the dispatcher's shard readers), however many parts they read each round
(issue 30: a 3.5 s outage wrote about 500 warning lines from the sweeper)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from service.app import create_app
from service.dispatcher import Dispatcher
from service.sweeper import Sweeper
from tests.support.redis_process import RedisProcess

SAFETY = 60  # seconds: a bound on waiting for an event, never the event itself


class Heard(logging.Handler):
    """Every record at WARNING or above, and an event set when a message holds ``text``."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []
        self.waiting: dict[str, threading.Event] = {}

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)
        message = record.getMessage()
        for text, event in self.waiting.items():
            if text in message:
                event.set()

    def wait_for(self, text: str) -> None:
        event = self.waiting.setdefault(text, threading.Event())
        if any(text in record.getMessage() for record in list(self.records)):
            event.set()  # it came before anyone waited
        assert event.wait(SAFETY), f"never logged: {text!r}"

    def of(self, logger: str) -> list[str]:
        return [r.getMessage() for r in self.records if r.name == logger]


def until(condition: Any) -> None:
    """Wait for ``condition()`` to hold, looking again every few milliseconds."""
    done = threading.Event()
    for _ in range(SAFETY * 200):
        if condition():
            return
        done.wait(0.005)
    raise AssertionError("the condition never held")


@pytest.fixture
def heard() -> Iterator[Heard]:
    handler = Heard()
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield handler
    finally:
        root.removeHandler(handler)


@pytest.fixture
def server(tmp_path: Any) -> Iterator[RedisProcess]:
    running = RedisProcess(data_dir=tmp_path)
    running.start()
    try:
        yield running
    finally:
        running.cleanup()


def test_the_sweeper_logs_an_outage_once_when_it_starts_and_once_when_it_ends(
    server: RedisProcess, heard: Heard
) -> None:
    app = create_app({"redis_url": server.url, "redis_socket_timeout": 0.5})
    sweeper = Sweeper(app.extensions["referee"], interval=0.01)
    sweeping = threading.Thread(target=sweeper.run, daemon=True)
    sweeping.start()
    try:
        server.kill()
        heard.wait_for("sweeper: the store cannot be reached")
        until(lambda: sweeper.outage._failures >= 300)  # many rounds of failed reads
        server.start()
        heard.wait_for("sweeper: the store answers again")
    finally:
        sweeper.stop()
        sweeping.join(SAFETY)
    lines = heard.of("service.sweeper")
    assert len(lines) == 2, lines
    assert "cannot be reached" in lines[0] and "answers again" in lines[1]
    noisy = [r.getMessage() for r in heard.records if r.name.startswith("service.store")]
    assert len(noisy) <= 2, noisy  # the store's own notes (its connection), not per shard


def test_the_dispatcher_logs_an_outage_once_for_all_its_shards(
    server: RedisProcess, heard: Heard
) -> None:
    app = create_app(
        {"redis_url": server.url, "redis_socket_timeout": 0.5, "api_keys": "m=" + "k" * 24}
    )
    services = app.extensions["webhooks"]
    dispatcher = Dispatcher(services.notes, app.config["REFEREE_SETTINGS"])
    running = threading.Thread(target=dispatcher.run, daemon=True)
    running.start()
    try:
        server.kill()
        heard.wait_for("dispatcher: the store cannot be reached")
        until(lambda: dispatcher.outage._failures >= 100)  # every shard, several times
        server.start()
        heard.wait_for("dispatcher: the store answers again")
    finally:
        dispatcher.stop()
        running.join(SAFETY)
    lines = heard.of("service.dispatcher")
    assert len(lines) == 2, lines
