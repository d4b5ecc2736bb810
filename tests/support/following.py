"""Cutting a follower's connection while it waits for a match's events."""

from __future__ import annotations

import threading
import time

import redis

from service.store import MatchStore


def cut_while_following(store: MatchStore, node: redis.Redis, match_id: str, after: int) -> object:
    """Follow the match's events after ``after`` on a thread; once the follower blocks in
    ``XREAD`` on its own connection, kill that connection (``CLIENT KILL`` on ``node``, the
    Redis that holds the match). Answer what the follow did next: the batch it yielded, or
    the exception it raised. A follower that reconnects blocks again for its ``wake`` (5 s)
    and then yields ``[]``."""
    following = store.follow(match_id, after=after, wake=5.0)
    outcome: list[object] = []

    def read() -> None:
        try:
            outcome.append(next(following))
        except Exception as error:  # the outcome is what the caller checks
            outcome.append(error)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    name = "sse:" + match_id
    deadline = time.monotonic() + 30  # a safety bound: the loop ends at the event
    # Named as it connects, then blocked in XREAD (its last command until an event comes).
    while not (
        blocked := [c for c in node.client_list() if (c["name"], c["cmd"]) == (name, "xread")]
    ):
        assert time.monotonic() < deadline, "the follower never blocked on its own connection"
        time.sleep(0.01)
    assert node.client_kill_filter(_id=blocked[0]["id"]) == 1
    reader.join(30)
    assert not reader.is_alive(), "the follower neither ended nor woke up"
    assert not [c for c in node.client_list() if c["name"] == name], "it connected again"
    following.close()
    return outcome[0]
