"""Webhooks under a bank clock: turn.started carries the bank's zero as its deadline, a flag
fall starts the next seat's turn, and time given to the running seat moves its turn.expiring
without a second turn.started."""

from __future__ import annotations

import pytest

from service.game import Match, PlayerSpec, Setup, Transition, from_setup, give_time, settle
from service.notices import expiring_at, notices_of
from service.rules import Clock, ClockType, Rules
from tests.game.support import NOW, tiles

RULES = Rules(clock=Clock(ClockType.BANK, bank_seconds=300), turn_seconds=0)


def owned_match() -> Transition:
    setup = Setup((tiles("R1 R2"), tiles("K1 K2"), tiles("O1 O2")), tiles("B1 B2 B3 B4"))
    players = [PlayerSpec(name, ref=name.lower()) for name in ("Ann", "Bo", "Cy")]
    return from_setup("m", players, rules=RULES, setup=setup, now=NOW, owner="app")


def test_turn_started_names_the_moment_the_bank_reaches_zero() -> None:
    created = owned_match()
    notices = notices_of(created.match, created.events, NOW)
    assert notices is not None
    started = [n for n in notices.notices if n.type == "turn.started"]
    assert started and started[0].data["deadline"] == NOW + 300
    assert expiring_at(created.match) == pytest.approx(NOW + 300 - 30)  # a tenth of the bank


def test_a_flag_fall_starts_the_next_seats_turn() -> None:
    match: Match = owned_match().match
    fell = settle(match, now=NOW + 300)
    notices = notices_of(fell.match, fell.events, NOW + 300)
    assert notices is not None
    started = [n for n in notices.notices if n.type == "turn.started"]
    assert [n.data["seat"] for n in started] == [1]


def test_time_given_to_the_running_seat_moves_its_warning_only() -> None:
    match = owned_match().match
    given = give_time(match, 0, 60, by=1, now=NOW + 10)
    notices = notices_of(given.match, given.events, NOW + 10)
    assert notices is not None
    assert [n.type for n in notices.notices] == []  # no second turn.started
    assert notices.warn and notices.warn[1].data["deadline"] == NOW + 360
