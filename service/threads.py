"""A thread pool that runs few requests at once but lets long waits step aside.

A gunicorn ``gthread`` worker hands each request to a thread of its pool. With the standard
pool, 32 requests in flight in one worker are 32 threads taking turns at one interpreter lock:
every wait on Redis hands the lock to another thread, and each hand-over is a context switch.
Measured with ``make bench`` (2 cores, 32 connections), a move cost 33 context switches and
about 1,200 us of CPU with 64 threads per worker, 13 switches and about 900 us with 4.

But a long-poll or an event stream holds its thread for seconds or minutes, so the pool
cannot simply be small. :class:`ElasticPool` keeps ``active`` run slots: a thread needs a slot
to start a request, and requests beyond that wait in order in a queue, where they cost
nothing. A request about to wait long enters :func:`long_wait`, which gives its slot to the
next request (starting another thread if none is idle, up to ``maximum``) and, when the wait
is over, takes a slot back before the request goes on (requests back from a wait come before
queued ones). So the active requests stay few while any number of waits, up to ``maximum``,
are open.

When the worker is told to stop (SIGTERM: a deploy or a scale-down), :data:`shutting_down` is
set and the long waits end early instead of holding the worker past its graceful timeout: a
long-poll answers at once with the match as it is, and an event stream ends, so its client
reconnects (to another instance) where it left off.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future
from contextlib import contextmanager
from typing import Any

__all__ = ["ElasticPool", "long_wait", "shutting_down"]

_here = threading.local()  # .pool: the ElasticPool running this thread; .slot: holds a slot

shutting_down = threading.Event()
"""Set when this process is told to stop (see the module): long waits end at their next
wake-up, within about a second."""


@contextmanager
def long_wait() -> Iterator[None]:
    """Mark a wait that may last long (a long-poll, a stream, a search): free the run slot.

    The slot goes to the next queued request for the while; afterwards the thread takes a
    slot again (waiting for one if need be) to finish its request. Outside an
    :class:`ElasticPool` thread this does nothing.
    """
    pool: ElasticPool | None = getattr(_here, "pool", None)
    if pool is None or not getattr(_here, "slot", False):
        yield
        return
    pool._give_up_slot()
    thread = threading.get_ident()
    try:
        yield
    finally:
        # A generator (an event stream) may be closed by another thread: only the thread
        # that gave the slot up takes one again.
        if threading.get_ident() == thread:
            pool._take_slot()


class ElasticPool(Executor):
    """At most ``active`` jobs running (see the module), on up to ``maximum`` threads."""

    def __init__(self, active: int, maximum: int, *, name: str = "pool") -> None:
        if not 1 <= active <= maximum:
            raise ValueError(f"need 1 <= active <= maximum, got {active} and {maximum}")
        self.active = active
        self.maximum = maximum
        self._name = name
        lock = threading.Lock()
        self._ready = threading.Condition(lock)  # idle threads wait here for a job
        self._slot_back = threading.Condition(lock)  # threads back from a long wait
        self._jobs: deque[tuple[Future[Any], Callable[..., Any], tuple[Any, ...], dict[str, Any]]]
        self._jobs = deque()
        self._slots = active  # free run slots
        self._idle = 0  # threads waiting for a job and not yet woken for one
        self._starting = 0  # threads started or woken for a job that have not looked yet
        self._back = 0  # threads back from a long wait that wait for a slot
        self._handed = 0  # slots handed to those, not yet taken
        self._threads: list[threading.Thread] = []
        self._shut = False

    # -- Executor ---------------------------------------------------------------------------

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        with self._ready:
            if self._shut:
                raise RuntimeError("cannot schedule new futures after shutdown")
            self._jobs.append((future, fn, args, kwargs))
            self._start_one()
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._ready:
            self._shut = True
            if cancel_futures:
                while self._jobs:
                    self._jobs.popleft()[0].cancel()
            self._ready.notify_all()
            threads = list(self._threads)
        if wait:
            for thread in threads:
                thread.join()

    # -- what tests read ----------------------------------------------------------------------

    @property
    def threads(self) -> int:
        """Threads started so far (they are kept, idle, for later jobs)."""
        return len(self._threads)

    # -- internals ----------------------------------------------------------------------------

    def _start_one(self) -> None:
        """With the lock held: see that a thread takes the next job if a slot is free."""
        if min(len(self._jobs), self._slots) <= self._starting:
            return  # enough threads are on their way
        if self._idle > 0:
            # Counted as woken now: until it runs, the thread must not be woken again.
            self._idle -= 1
            self._starting += 1
            self._ready.notify()
        elif len(self._threads) < self.maximum:
            self._starting += 1
            thread = threading.Thread(
                target=self._run, name=f"{self._name}-{len(self._threads)}", daemon=True
            )
            self._threads.append(thread)
            thread.start()

    def _give_up_slot(self) -> None:
        with self._ready:
            self._release_slot()

    def _take_slot(self) -> None:
        with self._ready:
            if self._slots > 0:
                self._slots -= 1
            else:
                self._back += 1
                while self._handed == 0:
                    self._slot_back.wait()
                self._handed -= 1
                self._back -= 1
            _here.slot = True

    def _release_slot(self, *, wake: bool = True) -> None:
        """With the lock held: free this thread's slot, first for a request back from a wait
        (finishing what has started comes before starting more), else for the queue."""
        _here.slot = False
        if self._back > self._handed:
            self._handed += 1
            self._slot_back.notify()
        else:
            self._slots += 1
            if wake:
                self._start_one()

    def _run(self) -> None:
        _here.pool = self
        _here.slot = False
        on_its_way = True  # counted in _starting, as every thread woken by a notify() is
        while True:
            with self._ready:
                while True:
                    if on_its_way:
                        self._starting -= 1
                        on_its_way = False
                    if self._jobs and self._slots > 0:
                        break
                    if self._shut:
                        return
                    self._idle += 1
                    self._ready.wait()  # until _start_one wakes this thread (or shutdown)
                    on_its_way = True
                self._slots -= 1
                _here.slot = True
                future, fn, args, kwargs = self._jobs.popleft()
            if future.set_running_or_notify_cancel():
                try:
                    result = fn(*args, **kwargs)
                except BaseException as error:  # handed to the future, as the standard pool does
                    future.set_exception(error)
                else:
                    future.set_result(result)
            del future, fn, args, kwargs
            with self._ready:
                if _here.slot:
                    # When the slot goes back to the queue, this thread takes the next job
                    # itself: no other thread is woken for it.
                    self._release_slot(wake=False)
