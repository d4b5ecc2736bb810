"""Where the service's work runs: waits on the worker's event loop, CPU work on threads.

gunicorn runs the app in its stock ``gevent`` worker (``deploy/gunicorn.conf.py``;
docs/ARCHITECTURE.md, "Worker model" has the measurements behind the choice). gevent patches
the standard library, so the code here and in the app is written against ``threading`` and
blocking sockets as usual, and a request that waits (on Redis, on a slow client, on an event
stream) costs a greenlet of a few kilobytes instead of a thread.

The one thing an event loop cannot take is long CPU work: while Python code runs, no other
request of the worker moves. A solver search may take its whole budget (seconds), so
:func:`cpu_bound` runs it on a small pool of real threads: the loop goes on serving while the
search runs, and the interpreter lock is handed back to the loop every few milliseconds.
Outside gevent (the Flask test client, the sweeper, a plain ``gthread`` worker) it runs the
function where it is called.

When the worker is told to stop (SIGTERM: a deploy or a scale-down), :data:`shutting_down` is
set (``deploy/gunicorn.conf.py`` chains gunicorn's handler) and the long waits end early
instead of holding the worker past its graceful timeout: a long-poll answers at once with the
match as it is, and an event stream ends, so its client reconnects (to another instance) where
it left off.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = [
    "CPU_THREADS",
    "cpu_bound",
    "deadline",
    "event_loop",
    "shutting_down",
    "when_closed",
]

T = TypeVar("T")

CPU_THREADS = 2
"""Searches a worker runs at once; more would only take turns at the interpreter lock."""

shutting_down = threading.Event()
"""Set when this process is told to stop (see the module): long waits end at their next
wake-up, within about a second."""

_pool: Any = None
_pool_pid = 0
_pool_lock = threading.Lock()


_patched = False  # once gevent has patched this process, it stays patched


def event_loop() -> bool:
    """True when this process runs on gevent (its ``threading`` is patched)."""
    global _patched
    if _patched:
        return True
    if "gevent" not in sys.modules:
        return False
    from gevent import monkey

    _patched = bool(monkey.is_module_patched("threading"))
    return _patched


def cpu_bound(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """Return ``fn(*args, **kwargs)``, computed on a real thread when on an event loop.

    The calling greenlet waits for the answer; every other request of the worker goes on.
    An exception raised by ``fn`` is raised here.
    """
    if not event_loop():
        return fn(*args, **kwargs)
    result: T = _native_pool().apply(fn, args, kwargs)
    return result


def deadline(seconds: float) -> contextlib.AbstractContextManager[Any]:
    """On an event loop: a block in which :class:`TimeoutError` is raised if it runs
    ``seconds`` long (its waits are cut short). Elsewhere the block runs unbounded."""
    if not event_loop():
        return contextlib.nullcontext()
    return _Deadline(seconds)


class _Deadline:
    """:func:`deadline` on gevent's loop: a timer of the loop (its public watcher API), started
    on entry to throw :class:`TimeoutError` into the greenlet that entered, closed on exit; as
    ``gevent.Timeout(seconds, TimeoutError)`` does, without its Python-level bookkeeping. Every
    request with a body enters one: 10,000 instructions against the ``Timeout``'s 21,500
    (callgrind)."""

    __slots__ = ("seconds", "timer")

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.timer: Any = None

    def __enter__(self) -> None:
        hub, current = _GEVENT or _gevent()
        self.timer = timer = hub().loop.timer(self.seconds)
        # the loop's time updated first, so that the deadline is not passed early
        timer.start(current().throw, TimeoutError, update=True)

    def __exit__(self, *exc_info: object) -> None:
        self.timer.close()


_GEVENT: tuple[Callable[[], Any], Callable[[], Any]] | None = None


def _gevent() -> tuple[Callable[[], Any], Callable[[], Any]]:
    """gevent's ``get_hub`` and ``getcurrent``, imported once (not at every deadline: an
    ``import`` statement looks the module up and asks whether it is being imported)."""
    global _GEVENT
    from gevent import get_hub, getcurrent

    _GEVENT = (get_hub, getcurrent)
    return _GEVENT


def when_closed(
    connection: socket.socket | None, callback: Callable[[], None]
) -> Callable[[], None]:
    """On an event loop: call ``callback`` once the client closes ``connection`` while a
    response streams to it (it sends nothing then, so a readable socket with nothing to
    read is a client gone). Return a function that stops watching.

    Without an event loop (or a socket) nothing is watched: the server then notices the
    client left when a write fails.
    """
    if connection is None or not event_loop():
        return lambda: None
    import gevent

    # An I/O watcher of the loop, not a greenlet: with thousands of streams open, a greenlet
    # each doubled the objects the garbage collector walks (docs/ARCHITECTURE.md, "Worker model").
    watcher = gevent.get_hub().loop.io(connection.fileno(), 1)

    def readable() -> None:
        try:
            peeked = connection.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
        except (BlockingIOError, InterruptedError):
            return  # woken with nothing to read after all: go on watching
        except (ConnectionResetError, BrokenPipeError):
            peeked = b""
        except OSError:
            peeked = None  # not a sign of the client leaving: the writes will tell
        stop()
        if peeked == b"":
            callback()  # the client closed its end
        # else it sent more (a pipelined request): the writes will tell

    def stop() -> None:
        with contextlib.suppress(Exception):
            watcher.stop()
            watcher.close()

    watcher.start(readable)
    return stop


def _native_pool() -> Any:
    """This process's pool of real threads (made again in a forked child)."""
    global _pool, _pool_pid
    with _pool_lock:
        if _pool is None or _pool_pid != os.getpid():
            from gevent.threadpool import ThreadPool

            _pool, _pool_pid = ThreadPool(CPU_THREADS), os.getpid()
        return _pool
