"""Calls made at the same moment by many requests, sent together in one round trip.

Under load a worker has many requests waiting on Redis at once: with gevent, every request
that reaches its commit while another commit's answer is on its way sends a command of its
own, and each pays a whole round trip in the worker and in Redis (taking a connection from the
pool and giving it back, a write, a wait, a read). A :class:`Batcher` lets them share: the
first caller to arrive *leads*, sends its call with every call queued behind it in one
pipeline, hands each caller its own answer, and passes the lead to the first caller that
queued while it was sending. Nobody waits for a batch to fill: a caller alone is sent at once,
and a batch is whatever piled up during the previous round trip.

Up to ``in_flight`` batches may be on their way at once, each on a connection of its own: while
they are, callers queue, and when one comes back the first caller queued leads the next. With
one, the commits that queued while a batch waited for its answer waited for it to come back,
for the worker to get round to reading it, and only then were sent: behind a Redis that
fsyncs before it answers (``appendfsync always``, what ``make run`` ships) a commit waited for
up to two fsyncs and the worker's delay between them. Redis runs everything that has arrived
in one turn of its event loop before one fsync, so a second batch sent meanwhile shares the
next fsync with whatever else is waiting there.

Each caller gets exactly what its call alone would have given: its own answer, or its own
error. An error of the whole round trip (a lost connection, a timeout) is every caller's, as
it would have been had each sent alone. When the leader itself is interrupted (its greenlet
killed mid-send), the calls it carried get ``interrupted()``: they may or may not have run. A
caller interrupted while it waits leaves the queue (unless a batch on its way carries its call),
and passes the lead on if it had just been handed it: no caller's death stops the others.

It uses ``threading`` events and a native lock for its short sections (they never wait:
``service.workers.locks``), so it works for threads and, once gevent has patched them, for
greenlets.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

from service.workers.locks import short_lock

__all__ = ["Batcher"]

Item = TypeVar("Item")
Answer = TypeVar("Answer")


class _Call(Generic[Item, Answer]):
    """One caller's call: its item, then its answer or error; ``turn`` is set when either is
    in, or when this caller is to lead the next batch (``leads``). A caller that leads at
    once never waits, and has no ``turn`` (an event costs a lone commit 5,000 instructions
    and more to make)."""

    __slots__ = ("answer", "answered", "error", "item", "leads", "turn")

    def __init__(self, item: Item) -> None:
        self.item = item
        self.turn: threading.Event | None = None
        self.leads = False
        self.answered = False
        self.answer: Answer | None = None
        self.error: BaseException | None = None

    def wake(self) -> None:
        """Let the caller, waiting for its turn, go on."""
        if self.turn is not None:
            self.turn.set()

    def outcome(self) -> Answer:
        if self.error is not None:
            raise self.error
        return self.answer  # type: ignore[return-value]


class Batcher(Generic[Item, Answer]):
    """Send concurrent calls in batches through ``send`` (see the module).

    ``send(items)`` makes one round trip for ``items`` and answers one entry per item, in
    order: the item's answer, or the exception that is the item's error. An exception it
    raises is every item's error. At most ``most`` items go in one batch, and at most
    ``in_flight`` batches are on their way at once.
    """

    def __init__(
        self,
        send: Callable[[Sequence[Item]], Sequence[Answer | BaseException]],
        *,
        interrupted: Callable[[], BaseException],
        most: int = 32,
        gather: Callable[[], None] | None = None,
        in_flight: int = 1,
    ) -> None:
        if most < 1:
            raise ValueError("a batch holds at least one call")
        if in_flight < 1:
            raise ValueError("at least one batch is on its way at a time")
        self._send = send
        self._interrupted = interrupted
        self._gather = gather
        self.most = most
        self.in_flight = in_flight
        self._lock = short_lock()  # its sections never wait
        self._queue: list[_Call[Item, Answer]] = []
        self._leaders = 0  # callers leading a batch now (the queue waits for one of them)
        self.batches = 0  # round trips made, and the calls they carried (read by the tests)
        self.calls = 0

    def __call__(self, item: Item) -> Answer:
        """Send ``item`` (with whatever else is waiting) and answer its own outcome."""
        call: _Call[Item, Answer] = _Call(item)
        with self._lock:
            # With a leader gathering its batch (the queue is not empty) this call joins it.
            fresh = not self._queue and self._leaders < self.in_flight
            if fresh:
                self._leaders += 1
                call.leads = True
            else:
                call.turn = turn = threading.Event()
            self._queue.append(call)
        if not fresh:
            try:
                turn.wait()
            except BaseException:  # interrupted while it waited (its greenlet killed)
                self._abandon(call)
                raise
            if call.answered:
                return call.outcome()
        self._lead(call, gather=fresh)
        return call.outcome()

    @property
    def sending(self) -> bool:
        """Whether a batch is on its way now (calls made meanwhile may queue behind it)."""
        return self._leaders > 0

    def waiting(self) -> int:
        """How many calls are queued behind the batch being sent."""
        with self._lock:
            return len(self._queue)

    def _lead(self, call: _Call[Item, Answer], *, gather: bool) -> None:
        """Send ``call`` and those queued behind it, answer each, and pass the lead on."""
        batch: list[_Call[Item, Answer]] = []
        answered = False
        try:
            if gather and self._gather is not None:
                self._gather()
            with self._lock:
                batch = self._queue[: self.most]  # ``call`` first: it heads the queue
                del self._queue[: self.most]
                if self._queue and self._leaders < self.in_flight:  # more than one batch's
                    self._leaders += 1
                    self._hand_lead()
            answers = list(self._send([queued.item for queued in batch]))
            if len(answers) != len(batch):
                raise RuntimeError(f"{len(answers)} answers to a batch of {len(batch)} calls")
            for queued, answer in zip(batch, answers, strict=True):
                if isinstance(answer, BaseException):
                    queued.error = answer
                else:
                    queued.answer = answer
                queued.answered = True
            answered = True
        except Exception as error:  # the round trip's error is every call's
            for queued in batch:
                queued.error, queued.answered = error, True
            answered = True
        finally:
            others = [queued for queued in batch if queued is not call]
            if not answered:  # the leader was interrupted: the others may or may not have run
                for queued in others:
                    queued.error, queued.answered = self._interrupted(), True
            with self._lock:
                if batch:
                    self.batches += 1
                    self.calls += len(batch)
                else:  # interrupted before it took its batch: its call goes unsent
                    self._drop(call)
                self._pass_lead()
            for queued in others:
                queued.wake()

    def _abandon(self, call: _Call[Item, Answer]) -> None:
        """A caller was interrupted while it waited: its call goes unless a batch on its way
        carries it, and if it had just been handed the lead, the lead goes on."""
        with self._lock:
            self._drop(call)
            if call.leads and not call.answered:
                self._pass_lead()

    def _drop(self, call: _Call[Item, Answer]) -> None:
        for at, queued in enumerate(self._queue):  # under the lock
            if queued is call:
                del self._queue[at]
                return

    def _pass_lead(self) -> None:
        """A leader is done: the first call queued leads the next batch in its place, unless
        it leads already; else there is one leader fewer (under the lock)."""
        if self._queue and not self._queue[0].leads:
            self._hand_lead()
        else:
            self._leaders -= 1

    def _hand_lead(self) -> None:
        """The first call queued leads the next batch (under the lock)."""
        following = self._queue[0]
        following.leads = True
        following.wake()
