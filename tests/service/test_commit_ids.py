"""A commit's id is never another commit's: a count under a prefix drawn per process.

The commit script takes a commit whose id is the stored one for the same commit sent again
(its answer was lost) and writes nothing: two commits sharing an id would lose the second.
"""

from __future__ import annotations

import os

from service.store.values import Change, _commit_ids


def test_ids_in_one_process_never_repeat() -> None:
    ids = [_commit_ids() for _ in range(10_000)]
    assert len(set(ids)) == len(ids)


def test_every_change_gets_its_own_id() -> None:
    assert len({Change(None, None, (), (), 0.0).commit_id for _ in range(100)}) == 100  # type: ignore[arg-type]


def test_a_forked_child_draws_its_own_prefix() -> None:
    mine = _commit_ids()
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # the child: its first id, to the parent, then out without cleanup
        try:
            os.write(write, _commit_ids().encode())
        finally:
            os._exit(0)
    os.close(write)
    theirs = os.read(read, 100).decode()
    os.close(read)
    os.waitpid(child, 0)
    assert theirs.split(".")[0] != mine.split(".")[0]
    assert theirs != _commit_ids()
