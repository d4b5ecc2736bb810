"""A lock for short sections: the interpreter's own, not gevent's.

gevent's patched ``threading.Lock`` is Python code (a semaphore with its own bookkeeping),
paid on every section. A section that never waits (no I/O, no sleep, no switch to another
greenlet: dict and list operations, an event set) cannot be left for another greenlet of the
same thread, so on an event loop a native lock is never found held by one; it still guards
against real threads (the search pool, the tests' threads, a ``gthread`` worker).

Only the standard library and, once it has patched this process, gevent are imported: the
store takes its locks from here.
"""

from __future__ import annotations

import _thread
import sys

__all__ = ["short_lock"]


def short_lock() -> _thread.LockType:
    """A new lock for a section that never waits (see the module)."""
    if "gevent" in sys.modules:
        from gevent import monkey

        if monkey.is_module_patched("threading"):
            lock: _thread.LockType = monkey.get_original("_thread", "allocate_lock")()
            return lock
    return _thread.allocate_lock()
