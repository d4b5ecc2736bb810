"""The compact form the outbox and the deliveries keep of a notification
(:meth:`service.notices.Notice.compact`): it makes the very same body again."""

from __future__ import annotations

import json
from typing import Any

import pytest

from service.notices import Notice, body, expand

MATCH = "eyaqRJys_iu7DXQ8"


def data(**more: Any) -> dict[str, Any]:
    return {"match_id": MATCH, "version": 12, **more}


CASES = [
    Notice("turn.started", 1796144758.0623, data(seat=2, ref="user-5-2", deadline=1796144818.0623)),
    Notice("turn.started", 1796144758.9999996, data(seat=0, ref=None, deadline=None)),
    Notice("turn.expiring", 1796144808.062325, data(seat=1, ref='a "ref" \\ ñ 🀄', deadline=5.0)),
    Notice("game.ended", 1.5, data(game_number=2, scores=[92, -66, -15, -11], winner_seat=0)),
    Notice("game.ended", 1796144758.001, data(game_number=1, scores=[0, 0], winner_seat=None)),
    Notice("player.left", 1796144758.5, data(seat=3, ref="x" * 128)),
    Notice("match.finished", 1796144758.25, data()),
    Notice("match.canceled", 0.0, data()),
]


@pytest.mark.parametrize("notice", CASES, ids=[n.type for n in CASES])
def test_the_compact_form_makes_the_same_body_byte_for_byte(notice: Notice) -> None:
    stored = notice.compact(MATCH)
    assert expand(MATCH, stored) == (notice.type, notice.body)
    assert notice.body == body(notice.type, notice.at, notice.data)
    assert MATCH not in stored and notice.type not in stored
    assert len(stored) < len(notice.body) - 60


def test_a_turn_started_takes_about_fifty_bytes() -> None:
    assert len(CASES[0].compact(MATCH)) <= 55, CASES[0].compact(MATCH)


@pytest.mark.parametrize(
    "notice",
    [
        Notice("turn.started", 1.0, {"match_id": MATCH, "seat": 1, "version": 2}),  # not in order
        Notice("match.finished", 1.0, data(extra=True)),
        Notice("table.changed", 1.0, data()),  # a type it has no layout for
    ],
)
def test_what_has_no_compact_layout_is_kept_whole(notice: Notice) -> None:
    assert notice.compact(MATCH) == notice.body
    assert expand(MATCH, notice.compact(MATCH)) == (notice.type, notice.body)


def test_another_matchs_notice_is_kept_whole() -> None:
    notice = CASES[0]
    assert notice.compact("another") == notice.body


def test_a_body_stored_before_the_compact_form_is_read_as_it_is() -> None:
    old = json.dumps({"type": "turn.started", "timestamp": "x", "data": {"seat": 1}})
    assert expand(MATCH, old) == ("turn.started", old)


def test_a_compact_form_with_missing_fields_is_refused() -> None:
    with pytest.raises(ValueError, match="fields"):
        expand(MATCH, '["s",1,2]')
