"""The solver's hot modules run compiled (mypyc, see setup.py) wherever a C compiler is at
hand, built from the sources as they are now, and answer exactly as those sources do."""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import random
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

import service.rules.solver as solver_module
from bench.support.stress_positions import StressCase, classes, stress_case
from service.rules import Rules
from service.rules.solver import any_play, can_play, solve
from tests.rules.test_solver_hard import hard_positions

ROOT = Path(__file__).resolve().parents[2]
HOT = ("search", "options", "packing", "runs", "groups")
PURE_ASKED = os.environ.get("REFEREE_PURE_PYTHON", "") not in ("", "0")


def setup_script() -> ModuleType:
    """setup.py as a module (it calls setup() only when run)."""
    spec = importlib.util.spec_from_file_location("referee_setup", ROOT / "setup.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_setup_compiles_exactly_the_hot_modules() -> None:
    compiled = setup_script().COMPILED
    assert compiled == [f"service/rules/solver/{name}.py" for name in HOT]


@pytest.mark.skipif(PURE_ASKED, reason="REFEREE_PURE_PYTHON is set: pure Python asked for")
def test_the_solver_runs_compiled_where_a_compiler_is_at_hand() -> None:
    problem = setup_script()._compiler_works()
    if problem is not None:
        pytest.skip(f"setup.py cannot compile here either: {problem}")
    assert solver_module.compiled(), (
        "the solver runs from its Python source though a C compiler is at hand: install it "
        "with `make install` (pip install -e .), whose setup.py compiles it, and read its warning"
    )


def test_each_compiled_module_is_built_from_its_source_as_it_is_now() -> None:
    # Python imports an extension before the source beside it: one built from older sources
    # would run, silently, instead of the code under test. `make install` rebuilds them.
    compiled = 0
    for name in HOT:
        module = importlib.import_module(f"service.rules.solver.{name}")
        # (the folder in a compiled module's __file__ may be wrong: mypyc sets it)
        folder = Path(solver_module.__file__ or "").parent
        built, source = folder / Path(module.__file__ or "").name, folder / f"{name}.py"
        if built == source:
            continue
        compiled += 1
        assert source.exists(), source
        assert built.stat().st_mtime >= source.stat().st_mtime, (
            f"{built.name} is older than {source.name}: run `make install` to rebuild it"
        )
    if not compiled:
        pytest.skip("nothing compiled: the sources run")


def test_a_search_on_a_thread_lets_the_other_threads_run() -> None:
    # Compiled code never hands the interpreter's lock to another thread by itself (the
    # interpreter does every 5 ms): the search does it, or a worker's event loop would wait
    # for whole searches (up to 600 ms at a time on the hard positions before it did). The
    # test thread asks for the lock every millisecond while a hard position is solved, the
    # options it needs already worked out (as in a server that has run a while: working them
    # out runs Python code, which hands the lock over); held for whole searches, the lock
    # came to it 4 times in 206 ms.
    *_, (_, table, rack, rules, melded, _) = hard_positions()
    solve(table, rack, melded=melded, rules=rules)
    done = threading.Event()

    cpu: list[float] = []

    def search() -> None:
        started = time.thread_time()  # this thread's processor time
        solve(table, rack, melded=melded, rules=rules)
        cpu.append(time.thread_time() - started)
        done.set()

    thread = threading.Thread(target=search)
    turns = 0
    thread.start()
    while not done.is_set():
        time.sleep(0.001)
        turns += 1
    thread.join()
    # Counted against the processor time the search took (its thread runs only while it holds
    # the lock), not the time on the wall, which a loaded machine stretches while neither
    # thread runs: a turn for every 20 ms of search at least.
    searched_ms = cpu[0] * 1000
    assert turns >= searched_ms / 20, f"{turns} turns in {searched_ms:.0f} ms of search"


# A run in a child process of its own, so that both start from an empty option cache (the
# play chosen among the best depends on the order the cache met run states and steps), with
# the hot modules compiled or, with the import hook, from their sources.
CHILD_RUN = """
import importlib.util, json, sys
sys.path.insert(0, {root!r})
HOT = {hot!r}
SOURCES = {sources!r}

class Sources:
    @staticmethod
    def find_spec(name, path=None, target=None):
        short = name.rpartition(".")[2]
        if name == "service.rules.solver." + short and short in HOT:
            return importlib.util.spec_from_file_location(
                name, {root!r} + "/service/rules/solver/" + short + ".py"
            )
        return None

if SOURCES:
    sys.meta_path.insert(0, Sources)
from tests.rules.test_solver_compiled import answers
from service.rules.solver import compiled
assert compiled() is not SOURCES
print(json.dumps(answers()))
"""


def cases() -> Iterator[tuple[StressCase, Rules]]:
    """A position of every other class with a rack of 14 or 27 (quick in pure Python)."""
    rng = random.Random(14)
    for number, (box, mode, size, rack_size) in enumerate(classes()):
        if rack_size <= 27 and number % 2 == 0:
            case = stress_case(rng, box, mode, size, rack_size)
            yield case, Rules(tile_set=box, joker_locked_sets=mode == "locked")


def answers() -> list[list[object]]:
    """solve, any_play and can_play on every case: status, count, points and the table."""
    found: list[list[object]] = []
    for case, rules in cases():
        row: list[object] = [case.label]
        for search in (solve, any_play):
            solution = search(case.table, case.rack, melded=case.melded, rules=rules)
            table = [[tile.code for tile in tiles] for tiles in solution.table]
            row.append([solution.status.value, solution.tile_count, solution.points, table])
        row.append(can_play(case.table, case.rack, melded=case.melded, rules=rules))
        found.append(row)
    return found


@pytest.mark.slow
def test_the_compiled_search_answers_as_its_source_does() -> None:
    if not solver_module.compiled():
        pytest.skip("not compiled: the sources are what runs")

    def child_run(sources: bool) -> list[list[object]]:
        script = CHILD_RUN.format(root=str(ROOT), hot=HOT, sources=sources)
        run = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=ROOT
        )
        found: list[list[object]] = json.loads(run.stdout)
        return found

    expected = child_run(sources=True)
    assert len(expected) > 20
    assert child_run(sources=False) == expected
