"""The referee of record, checked after every API test: each game played to its end exports a
record that verifies as valid, with the scores the match gave (issue 34)."""

from __future__ import annotations

from typing import Any

import redis
from flask import Flask

from service import record
from service.referee import MatchNotFound, Records

__all__ = ["check_every_finished_game"]


def check_every_finished_game(app: Flask, redis_url: str) -> int:
    """Verify the record of every finished game of every match in the test's Redis; return how
    many were checked. A game dealt from a test-mode setup (which is no deal of the box) has
    its turns and result checked, not its deal."""
    records: Records = app.extensions["records"]
    checked = 0
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        ids = [key.split(":")[1] for key in client.scan_iter(match="{s*}:*:state", count=1000)]
    finally:
        client.close()
    for match_id in ids:
        try:
            match, _, _ = records.referee.view(match_id, None)
            events = records.referee.events(match_id, after=0, limit=max(match.version, 1))
        except (MatchNotFound, ValueError):
            continue
        for result in match.outcomes:
            try:
                kept = record.record_of(match, events, result.game_number)
            except record.NotRecorded:
                continue
            checked += 1
            _check(kept, list(result.outcome.scores))
    return checked


def _check(kept: record.Record, scores: list[int]) -> None:
    whole = record.from_json(record.to_json(kept))
    assert whole == kept and record.from_text(record.to_text(kept)) == kept
    verdict = record.verify(whole)
    if verdict.part == "deal":  # dealt from a setup: the deal is not the box's
        verdict = record.verify(whole, deal=False)
    detail: Any = (kept.match_id, kept.game_number, verdict)
    assert verdict.valid, f"the record of a game played through the API does not verify: {detail}"
    assert kept.result is not None and list(kept.result.scores) == scores, detail
