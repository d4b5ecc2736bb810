"""``service.workers.threads.deadline``: on gevent's loop, a block that waits past its seconds
gets TimeoutError in its own greenlet; one that ends in time leaves nothing behind."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from service.workers import threads

ON_THE_LOOP = r"""
from gevent import monkey

monkey.patch_all()

import gevent
from gevent.event import Event

from service.workers.threads import deadline

# a wait that nothing ends: cut short by the deadline (without it gevent says it would block
# for ever, and the script fails)
try:
    with deadline(0.01):
        Event().wait()
    print("not cut")
except TimeoutError:
    print("cut")

# a block that ended in time: waiting past its seconds afterwards raises nothing
with deadline(0.01):
    pass
later = Event()
gevent.spawn_later(0.05, later.set)
later.wait()
print("in time")

# the greenlet that entered the block gets the error, not another one waiting meanwhile
other_done = Event()


def other():
    gevent.sleep(0.05)
    other_done.set()


helper = gevent.spawn(other)
try:
    with deadline(0.01):
        Event().wait()
except TimeoutError:
    print("cut here")
other_done.wait()
print("other went on", helper.successful())
"""


def test_on_the_loop_a_late_block_is_cut_and_a_block_in_time_leaves_nothing_behind() -> None:
    done = subprocess.run(
        [sys.executable, "-c", ON_THE_LOOP],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).resolve().parents[1],
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["cut", "in time", "cut here", "other went on True"]


def test_off_the_loop_the_block_runs_unbounded() -> None:
    with threads.deadline(0.0):  # no error, whatever the block takes
        pass
