"""A match's event log once packed (no game being played): every answer as before.

When a game ends the store packs the match's events into one compressed blob in its state
hash and empties its stream (``service/store/archive.py``). The event log, its pages, the
event stream with ``Last-Event-ID`` and the receipts of ``Idempotency-Key`` answer as they
did from the stream.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from service.store import Keys
from tests.api.matchclient import Seat, setup
from tests.api.test_stream import Reader

pytestmark = pytest.mark.usefixtures("redis_url")

# Ann goes out with her first play: the game is over after a handful of events.
RACKS = ["R10 R11 R12", "K1 K2 K7"]
POOL = "O4 O5 O6 O7"


@pytest.fixture
def app_overrides() -> dict:
    return {"test_mode": True, "stream_keepalive_seconds": 0.2}


def whole_log(client: Any, match_id: str, *, page: int = 100) -> list[dict[str, Any]]:
    """Every event of the log, read a page of ``page`` at a time."""
    events: list[dict[str, Any]] = []
    while True:
        after = events[-1]["version"] if events else 0
        url = f"/v1/matches/{match_id}/events?after={after}&limit={page}"
        batch = client.get(url).get_json()["events"]
        events += batch
        if len(batch) < page:
            return events


def game_to_its_end(client: Any, *, rules: dict | None = None) -> tuple[str, list[Seat]]:
    """A match whose first game Ann wins at once (a draw, a draft, then her play)."""
    created, (ann, bo) = setup(client, RACKS, pool=POOL, rules=rules)
    assert ann.draft("R10 R11").status_code == 200
    assert ann.draft("R10 R11 R12").status_code == 200
    assert ann.play("R10 R11 R12", **{"Idempotency-Key": "ann-goes-out"}).status_code == 200
    return created["id"], [ann, bo]


def stream_length(redis_client: Any, match_id: str) -> int:
    return int(redis_client.xlen(Keys(match_id).events))


def test_the_log_of_a_game_that_ended_is_packed_and_answers_whole(client, redis_client) -> None:
    match_id, _ = game_to_its_end(client)
    events = whole_log(client, match_id)
    assert [e["version"] for e in events] == list(range(1, len(events) + 1))
    assert [e["type"] for e in events][-3:] == ["draft_updated", "played", "game_over"]
    assert stream_length(redis_client, match_id) == 0
    assert int(redis_client.hget(Keys(match_id).state, "ap")) == events[-1]["version"]
    for page in (1, 2, 3):
        assert whole_log(client, match_id, page=page) == events


def test_pages_run_on_from_the_packed_games_into_the_one_being_played(client, redis_client) -> None:
    match_id, (ann, _) = game_to_its_end(client)
    packed = whole_log(client, match_id)
    assert ann.next_game().status_code == 200
    events = whole_log(client, match_id)
    assert events[: len(packed)] == packed
    assert events[len(packed)]["type"] == "game_started"
    assert stream_length(redis_client, match_id) == len(events) - len(packed)
    for page in (1, 2, 5):
        assert whole_log(client, match_id, page=page) == events
    for after in range(len(events) + 1):
        url = f"/v1/matches/{match_id}/events?after={after}&limit=3"
        assert client.get(url).get_json()["events"] == events[after : after + 3]


def test_a_stream_resumes_inside_the_packed_log_and_goes_on_live(client) -> None:
    match_id, (ann, _) = game_to_its_end(client)
    packed = whole_log(client, match_id)
    response = client.get(
        f"/v1/matches/{match_id}/stream", headers={"Last-Event-ID": "2"}, buffered=False
    )
    assert response.status_code == 200
    reader = Reader(response)
    try:
        caught_up = [reader.event() for _ in packed[2:]]
        assert [json.loads(m["data"]) for m in caught_up] == packed[2:]
        assert [int(m["id"]) for m in caught_up] == [e["version"] for e in packed[2:]]
        assert ann.next_game().status_code == 200
        live = reader.event()
        assert (live["event"], int(live["id"])) == ("game_started", len(packed) + 1)
    finally:
        reader.close()


def test_the_stream_of_a_finished_packed_match_ends_and_then_answers_204(client) -> None:
    match_id, _ = game_to_its_end(client, rules={"target_score": 1})
    events = whole_log(client, match_id)
    assert events[-1]["type"] == "match_finished"
    response = client.get(f"/v1/matches/{match_id}/stream?after=0", buffered=False)
    reader = Reader(response)
    try:
        assert [json.loads(reader.event()["data"]) for _ in events] == events
        assert reader.ended()
    finally:
        reader.close()
    last = events[-1]["version"]
    headers = {"Last-Event-ID": str(last)}
    assert client.get(f"/v1/matches/{match_id}/stream", headers=headers).status_code == 204


def test_a_resent_move_gets_its_first_answer_after_the_log_was_packed(client) -> None:
    _, (ann, _) = game_to_its_end(client)
    view = ann.view().get_json()
    again = ann.play("R10 R11 R12", **{"Idempotency-Key": "ann-goes-out"})
    assert again.status_code == 200
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.get_json()["match"]["version"] == view["version"]
    assert again.get_json()["match"]["status"] == "game_over"


def test_receipts_stay_while_the_game_is_played(client, redis_client) -> None:
    created, (ann, _) = setup(client, RACKS, pool=POOL)
    keys = [f"draft-{n}" for n in range(6)]
    first = {key: ann.draft("R10 R11", **{"Idempotency-Key": key}) for key in keys}
    assert redis_client.hlen(Keys(created["id"]).receipts(0)) == len(keys)
    for key in keys:
        again = ann.draft("R10 R11", **{"Idempotency-Key": key})
        assert again.headers["Idempotent-Replayed"] == "true"
        assert again.get_json() == first[key].get_json()


def test_when_a_game_ends_only_receipts_a_resent_request_still_needs_stay(
    client, redis_client
) -> None:
    created, (ann, _) = setup(client, RACKS, pool=POOL)
    version = created["match"]["version"]
    guarded = {"If-Match": f'"{version}"', "Idempotency-Key": "guarded"}
    assert ann.draft("R10 R11", **guarded).status_code == 200
    plain = ann.draft("R10 R11 R12", **{"Idempotency-Key": "plain"})
    last = {"If-Match": f'"{version + 2}"', "Idempotency-Key": "last"}
    first = ann.play("R10 R11 R12", **last)
    assert first.get_json()["match"]["status"] == "game_over"
    assert set(redis_client.hkeys(Keys(created["id"]).receipts(0))) == {"plain", "last"}

    for headers, answer in ((last, first), ({"Idempotency-Key": "plain"}, plain)):
        again = (ann.play("R10 R11 R12", **headers) if headers is last
                 else ann.draft("R10 R11 R12", **headers))  # fmt: skip
        assert again.headers["Idempotent-Replayed"] == "true"
        assert again.get_json() == answer.get_json()
    stale = ann.draft("R10 R11", **guarded)  # its receipt is gone: refused, not applied
    assert stale.status_code == 412
    assert ann.view().get_json()["version"] == first.get_json()["match"]["version"]
