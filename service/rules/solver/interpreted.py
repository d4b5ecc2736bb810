"""What must stay interpreted Python, never compiled (setup.py compiles search, options,
packing, runs and groups only: tests/rules/test_solver_compiled.py checks the list).

The interpreter hands its lock to a thread waiting for it every few milliseconds (the switch
interval), at the points where it checks for pending work: between some bytecodes, and on
entering a Python function. Compiled code never does (README, "The solver, compiled"): a
search on a worker's thread would hold up the worker's event loop for as long as it runs. So
the compiled search and its filters call :func:`let_others_run` every few hundred states.
"""

from __future__ import annotations

__all__ = ["let_others_run"]


def let_others_run() -> None:
    """Hand the interpreter's lock to the thread waiting for it, if one has asked for it.

    Entering this function does it (about 0.1 µs when no thread waits). ``os.sched_yield()``
    lets the lock go only for a microsecond, too short for a waiting thread to take it, and
    ``time.sleep(0)`` costs 0.1 ms and is gevent's own sleep in a worker.
    """
