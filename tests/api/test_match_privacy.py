"""Nobody sees another player's rack or the pool: not in views, events, answers or logs."""

from __future__ import annotations

import json
import logging
import re

import pytest

from tests.api.matchclient import setup


@pytest.fixture
def app_overrides() -> dict:
    return {"test_mode": True}


SECRET = re.compile(r'"[OK](1[0-3]|[1-9])"')  # seat 1 holds only orange, the pool only black


def test_other_racks_and_the_pool_never_appear_to_a_player_or_spectator(client, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    created, (ann, bo) = setup(
        client,
        ["R10 R11 R12 B1 B2 B3 B7", "O4 O5 O6 O9 O11"],
        pool="K1 K2 K3 K4 K5 K6",
        rules={"turn_seconds": 0},
    )
    seen_by_others: list[str] = [json.dumps(created["match"])]
    match_id = created["id"]

    def look() -> None:
        seen_by_others.append(ann.view().get_data(as_text=True))
        seen_by_others.append(client.get(f"/v1/matches/{match_id}").get_data(as_text=True))
        events = client.get(f"/v1/matches/{match_id}/events?limit=500")
        seen_by_others.append(events.get_data(as_text=True))

    plays = [["R10 R11 R12"], ["R10 R11 R12", "B1 B2 B3"]]
    for table in plays:
        look()
        seen_by_others.append(ann.play(*table).get_data(as_text=True))
        look()
        drawn = bo.draw().get_json()["drawn"]
        assert len(drawn) == 1 and drawn[0].startswith("K")  # bo sees what bo drew
        look()
    leaked = [text for text in seen_by_others if SECRET.search(text)]
    assert leaked == []
    for text in seen_by_others:
        assert '"pool"' not in text
    assert bo.token not in caplog.text and ann.token not in caplog.text
    assert not SECRET.search(caplog.text)
