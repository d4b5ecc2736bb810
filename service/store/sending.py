"""A commit on its way from :class:`~service.store.matches.MatchStore` to Redis: its arguments
as sent (:class:`Sending`), and what the batcher of commits (``service.store.batching``) does
before a batch is sent and when the request carrying one is interrupted."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from redis.exceptions import ConnectionError as RedisConnectionError

from service.game.frozen import maker
from service.jsoncodec import number
from service.store.scripts import with_clock
from service.workers.serving import serving

__all__ = ["Sending", "interrupted", "let_others_run", "sending_of"]


@dataclass(frozen=True, slots=True)
class Sending:
    """A commit on its way (see ``MatchStore._send_together``)."""

    keys: list[str]
    argv: list[Any]
    replicas: int
    first: bool
    clock: tuple[float, float] | None = None  # the change's clock estimate, and when it was made

    def stamped(self) -> list[Any]:
        """The arguments as sent now. A change computed on the worker's copy carries the
        worker's estimate of the shared clock, which Redis checks against its own; it goes
        moved on by the time the worker held it since (the request's turn at the processor,
        the queue behind a batch on its way), so that only the estimate's own error and the
        trip to Redis count against the tolerance. Checked as it was computed, a commit that
        had waited 100 ms behind another batch's fsync was refused, loaded again and sent a
        second time (a second fsync), and under load more of them waited that long."""
        if self.clock is None:
            return self.argv
        now, read_at = self.clock
        return with_clock(self.argv, number(now + (time.monotonic() - read_at)))


sending_of = maker(Sending)  # made on every commit (service.game.frozen)


def let_others_run() -> None:
    """What the first commit of a batch does before it is sent: let every other request that
    can run now run once (gevent's ``sleep(0)``; a thread's turn at the interpreter lock), so
    that those about to commit join it. Under load it makes the batches larger (Redis's time a
    draft: 36-50 us with it, 52-62 without, in alternated runs). Not when this commit's request
    is the only one the worker is serving: nobody could join, and the turn of the loop cost a
    lone draft 15,000 instructions (``bench/instructions.py``). Outside a request (the
    sweeper, a test's threads) it always does."""
    if serving.count != 1:
        time.sleep(0)


def interrupted() -> Exception:
    """What a commit gets when the request that was sending it with others was interrupted:
    no answer (it may have run, so only it may be sent again)."""
    return RedisConnectionError("the round trip carrying this commit was interrupted")
