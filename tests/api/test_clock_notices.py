"""One match, one clock: after ``POST /v1/matches/{id}/clock`` runs a match ahead (test mode),
the sweeper warns of that turn's end and the next one's by the match's clock, and every
timestamp of the match (its webhooks' bodies, its events) is the match's own and never goes
back. Against a real receiver, the dispatcher and the sweeper, on real Redis."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from tests.api.test_feed import sweeper
from tests.api.test_webhooks import (
    KEYS,
    dispatcher,
    dispatcher_settings,
    hook_receiver,
    owned,
    racks,
    register,
)
from tests.support.receiver import Received, Receiver

pytestmark = pytest.mark.usefixtures("redis_url")
__all__ = ["dispatcher", "dispatcher_settings", "hook_receiver", "sweeper"]  # the fixtures used


@pytest.fixture
def app_overrides() -> dict[str, Any]:
    return {"test_mode": True, "api_keys": KEYS}


def advance(client: Any, match_id: str, seconds: float) -> dict[str, Any]:
    response = client.post(f"/v1/matches/{match_id}/clock", json={"advance": seconds})
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def stamp(received: Received) -> float:
    """A notification's timestamp (its body's ISO time) as epoch seconds."""
    return datetime.fromisoformat(received.json["timestamp"].replace("Z", "+00:00")).timestamp()


def expiring(hook: Receiver, seat: int, count: int = 1) -> Received:
    """The ``count``-th ``turn.expiring`` of ``seat``, once it came (a 60 s safety bound)."""
    got = hook.wait_for(
        count,
        timeout=60,
        where=lambda r: r.json["type"] == "turn.expiring" and r.json["data"]["seat"] == seat,
    )
    assert len(got) >= count, [r.json for r in hook.received]
    return got[count - 1]


def test_an_advance_past_the_warning_warns_of_that_turn_and_then_of_the_next(
    client: Any, dispatcher: Any, hook_receiver: Receiver, sweeper: Any
) -> None:
    # 12 s turns: the warning is due when 10 s are left, 2 s into the turn.
    register(client, hook_receiver.url, ["turn.started", "turn.expiring"])
    created, _seats = owned(client, rules={"turn_seconds": 12}, setup=racks("R1 K5", "K1 K7"))
    match_id, start = created["id"], created["match"]
    # 11 s ahead: Ann's warning time has passed and her turn still runs (to 12): it is sent
    # now. (It was due 2 s after her turn began by the shared clock, 1 s after its deadline.)
    advance(client, match_id, 11)
    ann = expiring(hook_receiver, seat=0)
    assert ann.json["data"]["deadline"] == pytest.approx(start["turn_deadline"])
    assert stamp(ann) == pytest.approx(start["turn_deadline"] - 10, abs=0.01)
    # 2 s more: Ann timed out at 12; Bo's turn runs from 12 to 24 on the match's clock, and
    # his warning is due 2 s into it, about 1 s from now by the shared clock (not 13 s late,
    # after his turn would have ended).
    view = advance(client, match_id, 2)
    assert view["current_seat"] == 1 and view["turn_deadline"] == start["turn_deadline"] + 12
    bo = expiring(hook_receiver, seat=1)
    assert bo.json["data"]["deadline"] == pytest.approx(view["turn_deadline"])
    assert stamp(bo) == pytest.approx(view["turn_deadline"] - 10, abs=0.01)

    # One clock: every notification is dated by the match's clock, in the order they came.
    got = [r for r in hook_receiver.received if r.json["data"]["match_id"] == match_id]
    assert [(r.json["type"], r.json["data"]["seat"]) for r in got] == [
        ("turn.started", 0),
        ("turn.expiring", 0),
        ("turn.started", 1),
        ("turn.expiring", 1),
    ]
    stamps = [stamp(r) for r in got]
    assert stamps == sorted(stamps), stamps
    assert stamps[2] == pytest.approx(start["turn_deadline"], abs=0.01)  # Bo's turn began at 12
    events = client.get(f"/v1/matches/{match_id}/events?after=0").get_json()["events"]
    times = [event["at"] for event in events]
    assert times == sorted(times), events
    assert max(times) <= view["server_time"]


def test_a_warning_sent_before_an_advance_is_not_sent_again(
    client: Any, dispatcher: Any, hook_receiver: Receiver, sweeper: Any
) -> None:
    register(client, hook_receiver.url, ["turn.started", "turn.expiring"])
    created, seats = owned(client, rules={"turn_seconds": 11}, setup=racks("R1 K5", "K1 K7"))
    first = expiring(hook_receiver, seat=0)  # 1 s into the turn, by the shared clock
    advance(client, created["id"], 5)  # her turn still runs: to 11
    advance(client, created["id"], 1)
    sweeper.sweep_once()  # a sweep after the advances, whatever the sweeper's thread did
    assert seats[0].draw().status_code == 200
    # Bo's turn.started comes after anything the sweep sent of this match (one match, one
    # queue): by then a second warning for Ann's turn would have come.
    hook_receiver.wait_for(
        1, where=lambda r: r.json["type"] == "turn.started" and r.json["data"]["seat"] == 1
    )
    warned = [r.id for r in hook_receiver.received if r.json["type"] == "turn.expiring"]
    assert warned == [first.id]
