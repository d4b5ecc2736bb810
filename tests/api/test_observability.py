"""Operations: metrics at /metrics, a request id on every answer, JSON logs without secrets."""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Iterator

import gevent
import pytest
from prometheus_client import REGISTRY

from service import observability
from tests.api.matchclient import setup


@pytest.fixture
def app_overrides() -> dict:
    return {"test_mode": True}


def metric(client, name: str, **labels: str) -> float:
    text = client.get("/metrics").get_data(as_text=True)
    wanted = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    for line in text.splitlines():
        match = re.match(r"^(\w+)(?:\{(.*)\})? (\S+)$", line)
        if match and match[1] == name:
            found = ",".join(sorted((match[2] or "").split(",")))
            found = found.strip(",")
            if found == wanted:
                return float(match[3])
    return 0.0


def test_moves_and_refusals_are_counted_by_kind_and_reason(client) -> None:
    drew = metric(client, "referee_moves_applied_total", kind="drew")
    refused = metric(client, "referee_refusals_total", reason="joker_out_of_range")
    _, (ann, _bo) = setup(client, ["R12 R13 J", "K1"], pool="O1 O2")
    assert ann.play("R12 R13 J").status_code == 422
    assert ann.draw().status_code == 200
    assert metric(client, "referee_moves_applied_total", kind="drew") == drew + 1
    assert metric(client, "referee_refusals_total", reason="joker_out_of_range") == refused + 1


@pytest.fixture
def tallied() -> Iterator[None]:
    """Moves counted in bulk, as a gevent worker counts them (gunicorn's post_worker_init)."""
    observability.tally_moves()
    yield
    observability.tally_moves(False)


def counted(kind: str) -> float:
    """The moves counter of ``kind`` as this process holds it (no /metrics read: no flush)."""
    return REGISTRY.get_sample_value("referee_moves_applied_total", {"kind": kind}) or 0.0


def test_a_gevent_worker_counts_moves_in_bulk_and_every_one_reaches_the_counter(
    client, tallied
) -> None:
    _, (ann, bo) = setup(client, ["R12 R13", "K1 K2"], pool="O1 O2 O3")
    drew = counted("drew")
    assert ann.draw().status_code == 200
    assert counted("drew") == drew  # held by the worker, not yet added to the counter
    assert metric(client, "referee_moves_applied_total", kind="drew") == drew + 1  # its /metrics
    assert bo.draw().status_code == 200
    deadline = time.monotonic() + 10 * observability.FLUSH_SECONDS
    while counted("drew") == drew + 1:  # the worker's loop adds it within FLUSH_SECONDS
        assert time.monotonic() < deadline, "the moves counted in bulk were never added"
        gevent.sleep(0.01)
    assert counted("drew") == drew + 2
    assert ann.draw().status_code == 200
    observability.tally_moves(False)  # as a worker that exits (gunicorn's worker_exit)
    assert counted("drew") == drew + 3


def test_request_latency_is_a_histogram_by_route(client) -> None:
    client.post("/v1/meld-check", json={"sets": []})
    count = metric(
        client,
        "referee_request_duration_seconds_count",
        method="POST",
        route="/v1/meld-check",
        status="200",
    )
    assert count >= 1


def test_every_answer_carries_a_request_id_and_keeps_a_well_formed_one(client) -> None:
    assert (
        client.get("/healthz", headers={"X-Request-ID": "trace-42"}).headers["X-Request-ID"]
        == "trace-42"
    )
    made_up = client.get("/healthz", headers={"X-Request-ID": "bad id\x7f"}).headers["X-Request-ID"]
    assert re.fullmatch(r"[0-9a-f]{32}", made_up)


def test_the_access_log_is_json_with_the_request_id_and_never_a_token(client, caplog) -> None:
    caplog.set_level(logging.INFO, logger="service.access")
    _, (ann, _) = setup(client, ["R1", "K1"], pool="O1")
    ann.draw(**{"X-Request-ID": "req-7"})
    records = [r for r in caplog.records if getattr(r, "request_id", None) == "req-7"]
    assert records and records[0].status == 200 and records[0].route.endswith("/draw")
    handler = next(h for h in logging.getLogger("service").handlers if getattr(h, "_referee", 0))
    line = json.loads(handler.format(records[0]))
    assert line["request_id"] == "req-7" and line["status"] == 200
    assert ann.token not in caplog.text


def test_static_files_are_logged_only_at_debug_level(client, caplog) -> None:
    """A page's scripts and styles were most of `make run`'s terminal (433 of 706 lines)."""
    caplog.set_level(logging.INFO, logger="service.access")
    assert client.get("/assets/app.css", headers={"X-Request-ID": "asset-1"}).status_code == 200
    assert client.get("/", headers={"X-Request-ID": "page-1"}).status_code == 200
    logged = {getattr(r, "request_id", None): r for r in caplog.records}
    assert "asset-1" not in logged and logged["page-1"].route == "/"
    caplog.set_level(logging.DEBUG, logger="service.access")
    client.get("/assets/app.css", headers={"X-Request-ID": "asset-2"})
    debug = [r for r in caplog.records if getattr(r, "request_id", None) == "asset-2"]
    assert [r.levelno for r in debug] == [logging.DEBUG]
    assert debug[0].route.startswith("/assets/")


def test_open_event_streams_are_counted_while_they_are_open(client) -> None:
    created, _ = setup(client, ["R1", "K1"], pool="O1")
    before = metric(client, "referee_open_streams")
    response = client.get(f"/v1/matches/{created['id']}/stream", buffered=False)
    chunks = response.response
    next(iter(chunks))  # the stream has started
    assert metric(client, "referee_open_streams") == before + 1
    response.close()
    assert metric(client, "referee_open_streams") == before
