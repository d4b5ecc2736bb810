"""Python's garbage collector is off while searches run, and back as it was after them
(service/rules/solver/collector.py)."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest

from service.rules import Rules, TileSet, parse_tiles
from service.rules.solver import SolveStatus, collector, solve
from service.rules.solver.collector import collector_paused

TABLE = ((*parse_tiles(["R4", "R5", "R6", "R7"]),), (*parse_tiles(["B9", "O9", "K9"]),))
RACK = parse_tiles(["R3", "R8", "B2", "B3", "B4", "J", "K13", "O1"])


@pytest.fixture(autouse=True)
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if was:
        gc.enable()
    else:
        gc.disable()


def test_a_search_turns_the_collector_off_and_back_on() -> None:
    seen: list[bool] = []

    def watch(phase: str, info: dict[str, int]) -> None:
        seen.append(gc.isenabled())

    with collector_paused():
        assert not gc.isenabled()
        gc.callbacks.append(watch)
        try:
            gc.collect(0)  # an explicit collection still runs
        finally:
            gc.callbacks.remove(watch)
    assert gc.isenabled()
    assert seen == [False, False]
    found = solve(TABLE, RACK, melded=True, rules=Rules(tile_set=TileSet.XP))
    assert found.status is SolveStatus.PLAY_FOUND
    assert gc.isenabled()


def test_a_search_that_runs_out_of_time_turns_it_back_on() -> None:
    found = solve(TABLE, RACK, melded=True, time_budget=0.0)
    assert found.status is SolveStatus.GAVE_UP
    assert gc.isenabled()


def test_a_collector_turned_off_elsewhere_stays_off() -> None:
    gc.disable()
    with collector_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()
    solve(TABLE, RACK, melded=True)
    assert not gc.isenabled()


def test_overlapping_searches_turn_it_back_on_when_the_last_ends() -> None:
    first, second = collector_paused(), collector_paused()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    assert not gc.isenabled()
    second.__exit__(None, None, None)
    assert gc.isenabled()


def test_searches_that_overlap_without_a_gap_let_it_run_after_a_while(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(collector, "MAX_PAUSE", -1.0)  # any pause is past it
    first, second = collector_paused(), collector_paused()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    assert gc.isenabled()  # paused longer than MAX_PAUSE: back on though a search still runs
    third = collector_paused()
    third.__enter__()
    assert gc.isenabled()  # not paused again until every search has ended
    third.__exit__(None, None, None)
    second.__exit__(None, None, None)
    assert gc.isenabled()


def test_searches_on_threads_leave_it_on() -> None:
    barrier = threading.Barrier(4)

    def search() -> int:
        barrier.wait()
        return solve(TABLE, RACK, melded=True).tile_count

    threads = [threading.Thread(target=search) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert gc.isenabled()


class _Node:
    """An object that can be weakly referenced and can hold itself (a reference cycle)."""

    def __init__(self) -> None:
        self.me = self


@pytest.fixture
def freezing() -> Iterator[None]:
    """freeze_after_searches() for one test, then off and everything unfrozen again."""
    collector.freeze_after_searches()
    try:
        yield
    finally:
        collector.freeze_after_searches(None)
        gc.unfreeze()


def test_freezing_is_off_unless_a_process_asks_for_it() -> None:
    frozen = gc.get_freeze_count()
    with collector_paused():
        kept = [[n] for n in range(1000)]
    assert gc.get_freeze_count() == frozen  # a test process, a script: nothing frozen
    assert kept


def test_what_a_search_leaves_is_frozen_and_its_cyclic_garbage_is_collected(freezing) -> None:
    import weakref

    with collector_paused():
        kept = [[n] for n in range(1000)]  # lives on, as the option cache's new entries do
        cycle = _Node()
        gone = weakref.ref(cycle)
        del cycle  # garbage in a cycle, made during the search
        frozen = gc.get_freeze_count()
    assert gc.get_freeze_count() >= frozen + 1000
    assert gone() is None  # collected with the young generations, not frozen
    assert gc.isenabled()
    assert kept[999] == [999]


def test_something_frozen_that_dies_in_a_cycle_goes_at_the_next_full_collection(freezing) -> None:
    import weakref

    held = [_Node()]
    dead = weakref.ref(held[0])
    with collector_paused():
        pass  # the node is frozen
    held.clear()  # now garbage in a cycle, but frozen: no collection sees it
    collector.freeze_after_searches(reclaim_every=3600.0)
    with collector_paused():
        pass
    assert dead() is not None  # the price, until the next full collection
    collector.freeze_after_searches(reclaim_every=0.0)
    with collector_paused():
        pass
    assert dead() is None  # unfrozen, collected in full, what lives frozen again
    assert gc.get_freeze_count() > 0


@pytest.fixture
def freezing_survivors() -> Iterator[None]:
    """freeze_after_collections() for one test, then off and everything unfrozen again."""
    collector.freeze_after_collections()
    try:
        yield
    finally:
        collector.freeze_after_collections(None)
        gc.unfreeze()


def test_what_a_collection_leaves_is_frozen_as_it_ends(freezing_survivors) -> None:
    frozen = gc.get_freeze_count()
    kept = [[n] for n in range(1000)]  # lives on, as a worker's copies of matches do
    gc.collect(0)
    assert gc.get_freeze_count() >= frozen + 1000
    assert not gc.get_objects(generation=1)  # nothing left for the next collections to walk
    assert kept[999] == [999]


def test_the_collections_the_collector_starts_itself_freeze_too(freezing_survivors) -> None:
    thresholds = gc.get_threshold()
    gc.collect()
    frozen = gc.get_freeze_count()
    gc.set_threshold(100)
    try:
        kept = [[n] for n in range(1000)]  # young collections come while these are made
    finally:
        gc.set_threshold(*thresholds)
    assert gc.get_freeze_count() >= frozen + 900
    assert kept[0] == [0]


def test_cyclic_garbage_is_collected_before_what_is_left_is_frozen(freezing_survivors) -> None:
    import weakref

    cycle = _Node()
    gone = weakref.ref(cycle)
    del cycle
    gc.collect(0)
    assert gone() is None


def test_something_frozen_that_dies_in_a_cycle_goes_at_the_reclaim(freezing_survivors) -> None:
    import weakref

    held = [_Node()]
    dead = weakref.ref(held[0])
    gc.collect(0)  # the node is frozen
    held.clear()  # now garbage in a cycle, but frozen: no collection sees it
    gc.collect()
    collector.collect_now()
    assert dead() is not None  # the price, until the next reclaim
    collector.freeze_after_collections(reclaim_every=0.0)
    gc.collect(0)  # a collection ends: the reclaim is due
    assert dead() is not None  # not in the collection's callback
    collector.collect_now()
    assert dead() is None  # unfrozen, collected in full, what lives frozen again
    assert gc.get_freeze_count() > 0
    assert not collector.reclaim_due


def test_a_collection_at_a_quiet_point_frees_cyclic_garbage_and_freezes_the_rest(
    freezing_survivors,
) -> None:
    import weakref

    cycle = _Node()
    gone = weakref.ref(cycle)
    del cycle
    frozen = gc.get_freeze_count()
    kept = [[n] for n in range(1000)]
    collector.collect_now()
    assert gone() is None
    assert gc.get_freeze_count() >= frozen + 1000
    assert kept[0] == [0]


def test_no_collection_at_a_quiet_point_while_a_search_holds_the_collector_off(
    freezing_survivors,
) -> None:
    import weakref

    with collector_paused():
        cycle = _Node()
        gone = weakref.ref(cycle)
        del cycle
        collector.collect_now()
        assert gone() is not None  # a search's links are not walked
    collector.collect_now()
    assert gone() is None


def test_no_reclaim_while_a_search_holds_the_collector_off(freezing_survivors) -> None:
    import weakref

    held = [_Node()]
    dead = weakref.ref(held[0])
    gc.collect(0)
    held.clear()
    collector.freeze_after_collections(reclaim_every=0.0)
    gc.collect(0)
    with collector_paused():
        collector.collect_now()
        assert dead() is not None
    collector.collect_now()
    assert dead() is None


def test_collections_freeze_nothing_once_turned_off() -> None:
    collector.freeze_after_collections()
    collector.freeze_after_collections(None)
    kept = [[n] for n in range(1000)]
    frozen = gc.get_freeze_count()
    gc.collect(0)
    assert gc.get_freeze_count() == frozen
    assert kept
