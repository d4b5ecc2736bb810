"""The one error table: each exception is answered by the nearest class of its MRO listed."""

from __future__ import annotations

import pytest

from service import game
from service.api.errors import ANSWERS, BadRequest, answer_for
from service.referee import Busy, MatchNotFound, RefereeError, StaleVersion
from service.rules import IllegalTurn
from service.store import OutcomeUnknown, StoreUnavailable


@pytest.mark.parametrize(
    ("error", "status", "kind"),
    [
        (game.BadSetup("no such tile"), 422, "bad-setup"),  # via InvalidMatch
        (game.DeadlinePassed("too late"), 409, "deadline-passed"),  # via GameError
        (game.PoolEmpty("empty"), 409, "pool-empty"),
        (game.UnknownSeat("seat 9"), 403, "unknown-seat"),
        (MatchNotFound("abc"), 404, "match-not-found"),
        (StaleVersion(7), 412, "stale-version"),
        (Busy("busy"), 409, "busy"),
        (IllegalTurn([]), 422, "illegal-play"),
        (OutcomeUnknown("lost"), 503, "storage-unavailable"),  # via StoreUnavailable
        (BadRequest("no", kind="bad-header"), 400, "bad-header"),
    ],
)
def test_an_exception_is_answered_by_the_nearest_class_in_the_table(
    error: Exception, status: int, kind: str
) -> None:
    found = answer_for(error)
    assert found is not None
    assert (found[0].status, found[1]) == (status, kind)


def test_every_referee_error_and_the_store_are_in_the_table_and_carry_a_kind() -> None:
    referee_errors = RefereeError.__subclasses__()
    assert referee_errors and all(cls in ANSWERS for cls in referee_errors)
    assert len({cls.kind for cls in referee_errors}) == len(referee_errors)
    assert StoreUnavailable in ANSWERS


def test_an_exception_outside_the_table_has_no_answer() -> None:
    assert answer_for(KeyError("x")) is None
