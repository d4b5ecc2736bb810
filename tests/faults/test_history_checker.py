"""The history checker of the soak and fault tests is not vacuous: on hand-made logs it
accepts a true history and names each way a history can be wrong."""

from __future__ import annotations

from typing import Any

import pytest

from tests.faults.consistency import Ack, History


def event(version: int, kind: str, seat: int | None, **data: Any) -> dict[str, Any]:
    return {"type": kind, "version": version, "at": 0.0, "seat": seat, "data": data}


CREATED = [event(1, "match_created", None), event(2, "game_started", None, game_number=1)]
LOG = [
    *CREATED,
    event(3, "draft_updated", 0),
    event(4, "played", 0),
    event(5, "played", 2),  # the bot, in the same commit as 4
    event(6, "turn_timed_out", 1),
    event(7, "drew", 1),  # settling the timeout: nobody's request
    event(8, "drew", 0),
    event(9, "passed", 1, timed_out=True),
    event(10, "played", 1),
    event(11, "game_over", None),
    event(12, "game_started", None, game_number=2),
]
BOTS = frozenset({2})


def acks(*extra: Ack, leave_out: int | None = None) -> History:
    history = History()
    true = [
        Ack("m", 0, "draft", 3, key="k1"),
        Ack("m", 0, "draft", 3, key="k1", replayed=True),
        Ack("m", 0, "play", 5, if_match=3),
        Ack("m", 0, "draw", 8),
        Ack("m", 1, "play", 11),
        Ack("m", 1, "next_game", 12),
    ]
    for index, ack in enumerate([*true, *extra]):
        if index != leave_out:
            history.record(ack)
    return history


def check(history: History, log: list[dict[str, Any]] = LOG) -> dict[str, int]:
    return history.check("m", log, bots=BOTS, created_version=2)


def test_a_true_history_passes() -> None:
    assert check(acks()) == {"acknowledged": 5, "replayed": 1, "events": 12}


@pytest.mark.parametrize(
    ("history", "log", "message"),
    [
        (acks(leave_out=3), LOG, "event 8 (drew by seat 0) was never acknowledged"),
        (acks(leave_out=5), LOG, "event 12 (game_started by seat None) was never"),
        (acks(Ack("m", 0, "draw", 8)), LOG, "two acknowledged moves claim event 8"),
        (acks(Ack("m", 1, "draw", 7)), LOG, "matches a timeout's draw"),
        (acks(Ack("m", 1, "pass", 9)), LOG, "matches a timed-out pass"),
        (acks(Ack("m", 0, "draft", 4, key="k1")), LOG, "should be a draft_updated event"),
        (acks(Ack("m", 1, "draft", 9, key="k1", replayed=True)), LOG, "replay"),
        (acks(Ack("m", 0, "draw", 20)), LOG, "is not in the log"),
        (acks(), [e for e in LOG if e["version"] != 8], "draw.*is not in the log"),
        (acks(), [*LOG[:9], event(10, "played", 0), *LOG[10:]], "is by seat 1"),
    ],
)
def test_a_wrong_history_is_named(
    history: History, log: list[dict[str, Any]], message: str
) -> None:
    with pytest.raises(AssertionError, match=message.replace("(", r"\(").replace(")", r"\)")):
        check(history, log)


def test_a_move_guarded_by_if_match_must_produce_the_next_version() -> None:
    history = acks(Ack("m", 0, "draw", 8, if_match=6), leave_out=3)
    with pytest.raises(AssertionError, match="was sent with If-Match 6"):
        check(history)


def test_one_key_acting_twice_is_named() -> None:
    history = acks(Ack("m", 0, "draw", 8, key="k1"), leave_out=3)
    with pytest.raises(AssertionError, match="Idempotency-Key k1 acted twice"):
        check(history)
