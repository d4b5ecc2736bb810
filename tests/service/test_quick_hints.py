"""A hint's search runs where it is asked first, for a short while, and is handed to the worker's
runner (a thread, on an event loop) only when that is not enough (``quick_here``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from service.bootstrap import bootstrap
from service.config import Settings
from service.game import PlayerSpec, Setup
from service.referee import Referee
from service.referee.searches import QUICK_JOKERS, QUICK_RACK, likely_quick, quick_here
from service.rules import JOKER, Rules, parse_tiles
from service.rules.solver import Solution, SolveStatus, solve
from service.store import MatchStore

ANSWER = Solution(SolveStatus.NO_PLAY, ())
GAVE_UP = Solution(SolveStatus.GAVE_UP, ())
RACKS = [["R10", "R11", "R12", "K1", "B4", "O4", "K4"], ["B7", "B8", "B9", "O2"]]
POOL = ["R13", "O3", "O5", "O6", "O7"]


class Runner:
    """A runner that runs the work where it is asked, and counts how often it was asked."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, work: Callable[[], Any]) -> Any:
        self.calls += 1
        return work()


def searches(*answers: Solution) -> tuple[Callable[[float], Solution], list[float]]:
    """A search answering ``answers`` in turn, and the budgets it was given."""
    given: list[float] = []
    left = list(answers)

    def search(seconds: float) -> Solution:
        given.append(seconds)
        return left.pop(0)

    return search, given


def test_a_search_that_answers_in_time_is_not_handed_over() -> None:
    run = Runner()
    search, given = searches(ANSWER)
    assert quick_here(run, search, budget=3.0, here=0.001) is ANSWER
    assert run.calls == 0
    assert given == [0.001]


def test_a_search_that_gives_up_there_is_handed_over_with_what_is_left_of_the_budget() -> None:
    run = Runner()
    search, given = searches(GAVE_UP, ANSWER)
    assert quick_here(run, search, budget=3.0, here=0.001) is ANSWER
    assert run.calls == 1
    assert given[0] == 0.001
    assert 0 < given[1] <= 3.0


def test_without_time_here_the_search_goes_to_the_runner_with_the_whole_budget() -> None:
    run = Runner()
    search, given = searches(ANSWER)
    assert quick_here(run, search, budget=3.0, here=0.0) is ANSWER
    assert (run.calls, given) == (1, [3.0])


def test_a_budget_spent_here_is_not_searched_again() -> None:
    run = Runner()
    search, given = searches(GAVE_UP)
    assert quick_here(run, search, budget=0.5, here=1.0) is GAVE_UP
    assert (run.calls, given) == (0, [0.5])


@pytest.fixture
def store(redis_url: str) -> MatchStore:
    return MatchStore.open(Settings(redis_url=redis_url))


def hint_with(
    store: MatchStore, *, here: float, racks: list[list[str]] = RACKS
) -> tuple[Solution, int]:
    """Ann's hint on a fresh match, from a referee that searches ``here`` seconds first; and
    how many searches its runner was handed."""
    run = Runner()
    referee = Referee(store, run_search=run, hint_here=here)
    created = referee.create(
        [PlayerSpec("Ann"), PlayerSpec("Bo")],
        rules=Rules(initial_meld_points=0),
        setup=Setup.parse(racks, POOL),
    )
    _, solution = referee.hint(created.match.id, created.tokens[0])
    return solution, run.calls


def test_a_hint_found_in_the_time_here_never_reaches_the_runner(store: MatchStore) -> None:
    solution, handed = hint_with(store, here=60.0)
    assert handed == 0
    rack = Counter(Setup.parse(RACKS, POOL).racks[0])
    assert solution == solve((), rack, melded=False, rules=Rules(initial_meld_points=0))
    assert solution.found


def test_a_hint_out_of_time_here_is_found_by_the_runner(store: MatchStore) -> None:
    solution, handed = hint_with(store, here=1e-9)  # past before the search looks
    assert handed == 1
    rack = Counter(Setup.parse(RACKS, POOL).racks[0])
    assert solution == solve((), rack, melded=False, rules=Rules(initial_meld_points=0))


def test_a_long_rack_or_many_jokers_are_not_likely_quick() -> None:
    numbered = [f"{colour}{number}" for colour in "RBKO" for number in range(1, 14)]
    assert likely_quick((), Counter(parse_tiles(numbered[:QUICK_RACK])))
    assert not likely_quick((), Counter(parse_tiles(numbered[: QUICK_RACK + 1])))
    jokers = Counter({JOKER: QUICK_JOKERS})
    assert likely_quick((), jokers)
    assert not likely_quick((parse_tiles(["R1", "R2", "J"]),), jokers)


def test_a_hint_unlikely_to_be_quick_goes_to_the_runner_at_once(store: MatchStore) -> None:
    long_rack = [f"{colour}{number}" for colour in "RB" for number in range(1, 12)]
    racks = [long_rack, RACKS[1]]
    solution, handed = hint_with(store, here=60.0, racks=racks)
    assert handed == 1
    assert solution.found


def test_the_service_searches_hints_where_they_are_asked_first(redis_url: str) -> None:
    assert bootstrap({"redis_url": redis_url}).referee.hint_here > 0
