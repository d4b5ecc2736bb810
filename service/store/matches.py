"""The repository of matches: :class:`~service.game.Match` in, ``Match`` out; Redis stays here.

The keys are drawn in :mod:`service.store.keys`, the values handed out in
:mod:`service.store.values`, the event log read and followed in :mod:`service.store.eventlog`.

A commit is one script: it checks the version, writes state, events, receipt and deadline
together, and (with replicas) waits for one on the same connection: one round trip. Each
commit carries an id, and the script recognises its own earlier run, so the store may send a
commit again when the first answer was lost: it is applied at most once. A worker keeps the
last decoded state of recent matches; a move computed on it commits in that one round trip
when it is still current (the script checks the version and the clock it was computed with).
Under gunicorn the workers of a host also publish the states they commit to each other
(``service.workers.shared_states``), so a worker whose copy another worker made old computes on the
newer one instead of having its commit refused. On a single Redis, the commits of concurrent
requests share round trips: those that come while one is on its way go together in the next
pipeline, each its own script with its own answer (``service.store.batching``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from functools import partial
from typing import Any, TypeVar

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisClusterException, RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from service import game, jsoncodec
from service.config import Settings
from service.game import Match
from service.store.batching import Batcher
from service.store.breaker import Breakers
from service.store.commitlink import KeptConnectionClosed
from service.store.copies import DecodedCache
from service.store.errors import OutcomeUnknown, Stale, StoreUnavailable
from service.store.eventlog import EventLog
from service.store.keys import SHARDS, Keys, shard_tag, tag_of
from service.store.listing import EXPIRE_IDLE, Listings, Page, indexed
from service.store.outage import Outage
from service.store.scripts import (
    COMMIT,
    DUE,
    LOAD,
    STATE_ARG,
    TIME,
    commit_argv,
    commit_keys,
    receipt_of,
)
from service.store.sending import Sending, interrupted, let_others_run, sending_of
from service.store.topology import Topology, open_topology, wait_replicas
from service.store.tracking import Freshness
from service.store.values import Change, Loaded, Receipt, StoredEvent, loaded_copy
from service.workers import shared_states
from service.workers.serving import serving

__all__ = ["MatchStore"]

log = logging.getLogger(__name__)
T = TypeVar("T")

COMMIT_SENDS = 2  # a commit whose answer was lost is sent once more (the script knows it)
COMMIT_BATCHES = 2  # batches of commits on their way at once (service.store.batching)
_FAILURES = (RedisError, RedisClusterException)
_NO_ANSWER = (RedisConnectionError, RedisTimeoutError)


class MatchStore:
    """Load, commit and follow matches in Redis, whatever the topology (see the module)."""

    def __init__(
        self,
        topology: Topology,
        *,
        idempotency_ttl: int = 24 * 3600,
        finished_ttl: int = 7 * 24 * 3600,
        idle_ttl: int = 30 * 24 * 3600,
        cache_size: int = 4096,
        kept_states: int = 4_096,
    ) -> None:
        self.topology = topology
        self.settings: Settings = topology.settings
        self.idempotency_ttl = idempotency_ttl
        self.finished_ttl = finished_ttl
        self.idle_ttl = idle_ttl
        self.listings = Listings(
            self, tags=[shard_tag(shard) for shard in range(SHARDS)], tag_of=tag_of
        )
        self.breakers = Breakers(pause=max(self.settings.redis_socket_timeout, 0.25))
        self.event_log = EventLog(topology, call=self._call)
        # the last 4,096 matches decoded, the 8,192 before as stored (service.store.copies)
        self._decoded = DecodedCache(cache_size, kept=kept_states, decode=_copy_of)
        self.freshness = Freshness(
            topology.tracking_client, topology.tracked_pool, enabled=self.settings.redis_tracking
        )
        self._clock: tuple[float, float] | None = None  # (Redis TIME, time.monotonic())
        self.commits: Batcher[Sending, tuple[Any, int]] | None = None
        if topology.together:  # concurrent commits share round trips (service.store.batching)
            self.commits = Batcher(
                self._send_together,
                interrupted=interrupted,
                gather=let_others_run,
                in_flight=COMMIT_BATCHES,
            )

    @classmethod
    def open(cls, settings: Settings) -> MatchStore:
        """The store on the Redis ``settings`` name (nothing connects yet)."""
        return cls(
            open_topology(settings),
            finished_ttl=settings.finished_match_ttl,
            idle_ttl=settings.idle_match_ttl,
        )

    # -- reading ---------------------------------------------------------------------------

    def now(self, match_id: str = "") -> float:
        """The one clock every instance shares: Redis ``TIME`` (on the node of ``match_id``)."""
        keys = Keys(match_id or "clock")
        seconds, micros = self._call(keys.state, lambda: self.topology.eval(TIME, [keys.state], []))
        return self._tick(seconds, micros)

    def clock(self) -> float:
        """The shared clock as this worker last read it, moved on by its own monotonic clock
        (no round trip); read from Redis when it has not been yet."""
        clock = self._clock
        if clock is None:
            return self.now()
        return clock[0] + (time.monotonic() - clock[1])

    def load(self, match_id: str) -> Loaded | None:
        """The match as stored now (``None`` when there is none), with the shared clock.

        One round trip; the state is not sent again when this worker holds its version.
        """
        keys = Keys(match_id)
        cached = self._copy(match_id)
        known = "" if cached is None else str(cached[0].version)
        version, state, seconds, micros = self._call(
            keys.state, lambda: self.topology.eval(LOAD, [keys.state], [known])
        )
        now = self._tick(seconds, micros)
        if version is None:
            return None
        if state is None and cached is not None:
            return Loaded(cached[0], cached[1], now)
        return self._decode(state, now)

    def cached(self, match_id: str) -> Loaded | None:
        """This worker's last copy of the match, with an estimate of the clock (no round
        trip); ``None`` when there is none. A commit computed on it is checked."""
        entry = self._copy(match_id)
        clock = self._clock
        if entry is None or clock is None:
            return None
        read_at = time.monotonic()
        return loaded_copy(entry[0], entry[1], clock[0] + (read_at - clock[1]), False, read_at)

    def _copy(self, match_id: str) -> tuple[Match, tuple[str, ...]] | None:
        """The newest copy of the match on this host: this worker's, or a newer one another
        worker published after its commit (``service.workers.shared_states``)."""
        table = shared_states.current()
        if table is None:
            return self._decoded.get(match_id)
        held = self._decoded.version(match_id)  # a kept state is decoded only when newest
        if held is None:
            newer = table.newest(match_id, newer_than=-1)
        else:  # what this worker published it holds, at that version or a newer one
            newer = table.newest(match_id, newer_than=held, others_only=True)
        if newer is None:
            return self._decoded.get(match_id)
        return self._parse(newer[1])

    def current(self, match_id: str, *, newer_than: int | None = None) -> Loaded | None:
        """The match as stored now, for reading it (``None`` when there is none).

        No round trip when Redis has said nothing of the match since this worker's copy
        (:mod:`service.store.tracking`); else one, with no script: the stored version and
        state are read together (on a tracked connection, so the next view asks nothing),
        and the state is decoded only when this worker's copy is not that version. A match
        the worker holds no copy of is read the same way (the load script cost Redis 36 us
        a read against 1, and was not tracked: the view after it read the match again).
        The clock is this worker's estimate (:meth:`clock`; read from Redis, with the
        match, before the worker has one), so the answer is not ``fresh``: a commit computed
        on it has its clock checked (moved on by the time since the read). A move on a match
        the worker holds no copy of reads it this way too (one ``HMGET``, not the load script:
        1 us of Redis against 36). ``newer_than``: a version the caller knows the match has
        gone past; a copy no newer is not trusted.
        """
        if self._clock is None:
            return self.load(match_id)
        cached = self._copy(match_id)
        if cached is not None:
            held = cached[0].version
            if (newer_than is None or held > newer_than) and self.freshness.confirms(
                match_id, held
            ):
                return loaded_copy(cached[0], cached[1], self.clock(), False, 0.0)
        key = Keys(match_id).state
        version, state = self._call(key, lambda: self._read_state(match_id, key))
        if version is None or state is None:
            return None
        read_at = time.monotonic()  # a commit computed on it moves the estimate on from here
        now = self._clock[0] + (read_at - self._clock[1])
        if cached is not None and int(version) == cached[0].version:
            return Loaded(cached[0], cached[1], now, fresh=False, read_at=read_at)
        return replace(self._decode(state, now), fresh=False, read_at=read_at)

    def _read_state(self, match_id: str, key: str) -> list[Any]:
        """The stored version and state: on a connection whose reads Redis tracks for this
        worker when there is one (:meth:`Freshness.read`), else on the shared pool."""
        answer = self.freshness.read(match_id, key)
        if answer is None:
            answer = self.topology.client.hmget(key, ["v", "s"])
        return answer

    def exists(self, match_id: str) -> bool:
        """Whether the match is stored."""
        key = Keys(match_id).state
        return bool(self._call(key, lambda: self.topology.client.exists(key)))

    def seats_of(self, match_id: str) -> tuple[str, ...]:
        """The seats' token digests of a match (empty when there is none)."""
        cached = self._decoded.get(match_id)
        if cached is not None:
            return cached[1]
        key = Keys(match_id).state
        state = self._call(key, lambda: self.topology.client.hget(key, "s"))
        return () if state is None else tuple(jsoncodec.loads(state)["t"])

    def receipt(self, match_id: str, seat: int, key: str) -> Receipt | None:
        """The receipt kept for ``key`` from ``seat``, if any."""
        name = Keys(match_id).receipts(seat)
        raw = self._call(name, lambda: self.topology.client.hget(name, key))
        return None if raw is None else receipt_of(raw)

    # -- the event log (service.store.eventlog) ---------------------------------------------

    def events(self, match_id: str, *, after: int = 0, limit: int = 100) -> list[dict[str, Any]]:
        """Up to ``limit`` public events with a version above ``after``."""
        return self.event_log.events(match_id, after=after, limit=limit)

    def stored_events(
        self, match_id: str, *, after: int, upto: int | None = None, limit: int = 100
    ) -> list[StoredEvent]:
        """Up to ``limit`` events with a version in (``after``, ``upto``], as stored."""
        return self.event_log.stored_events(match_id, after=after, upto=upto, limit=limit)

    def last_event(self, match_id: str) -> StoredEvent | None:
        """The match's last event, if any."""
        return self.event_log.last_event(match_id)

    def pack_log(self, match_id: str, *, seats: int = 0) -> bool:
        """Pack the match's log (see :meth:`EventLog.pack`)."""
        return self.event_log.pack(match_id, seats=seats)

    def follow(
        self, match_id: str, *, after: int, wake: float, batch: int = 100
    ) -> Iterator[list[StoredEvent]]:
        """Yield the match's events after ``after`` as they come (see :meth:`EventLog.follow`)."""
        return self.event_log.follow(match_id, after=after, wake=wake, batch=batch)

    # -- writing -----------------------------------------------------------------------------

    def commit(self, change: Change) -> Receipt | None:
        """Apply ``change`` if the stored version is still ``change.before``.

        Returns ``None`` when applied, or the receipt already kept for its idempotency key
        (the move was applied before: nothing is written). Raises :class:`Stale` when the
        match changed meanwhile (with the fresh state when known), :class:`OutcomeUnknown`
        when Redis stopped answering after the commit was sent, :class:`StoreUnavailable`
        when nothing was sent or Redis refused the script.
        """
        keys = Keys(change.match.id)
        ttl = self.ttl_of(change.match)
        listed = indexed(
            change.match,
            tag=keys.tag,
            updated_at=change.now,
            expires_at=change.now + ttl if ttl else None,
        )
        argv = commit_argv(change, keys, ttl=ttl, receipts_ttl=self.idempotency_ttl, listed=listed)
        script_keys = commit_keys(change, keys, listed)
        clock = (change.now, change.read_at) if change.check_clock and change.read_at else None
        node = self._node(keys.state)
        sent_at = self.breakers.check(node)
        attempt = unanswered = 0  # sends made; those that got no answer (the one below aside)
        kept_resent = False
        while unanswered < COMMIT_SENDS:
            try:
                answer, replicated = self._send(
                    script_keys, argv, keys, first=attempt == 0, clock=clock
                )
            except _NO_ANSWER as error:
                attempt += 1
                if isinstance(error, KeptConnectionClosed) and not kept_resent:
                    # The connection the commits kept was found closed before any answer:
                    # Redis closed it while it was kept (a restart), or after running this
                    # commit. Sent again at once on a connection the pool checks, as the same
                    # commit (recognised if it ran), once, not counted as a send and not
                    # tripping the breaker: what checking the kept connection before every
                    # round trip did, without its cost (service/store/commitlink.py).
                    kept_resent = True
                    continue
                unanswered += 1
                # Sent, and maybe run: only the same commit may go again (the script
                # recognises it), never a new one computed on top of it; and only after a
                # dropped connection, not a timeout (a frozen Redis would be waited for twice).
                self.breakers.trip(node, sent_at)
                log.warning("commit to %s got no answer: %s", keys.state, type(error).__name__)
                if not isinstance(error, RedisConnectionError):
                    break
                time.sleep(0.02 * unanswered)  # 0.02 s, then 0.04
                sent_at = time.monotonic()
                continue
            except _FAILURES as error:
                # Redis answered an error: this send wrote nothing (the script stops before
                # its first write), but an earlier send that got no answer may have.
                if attempt > 0:
                    raise OutcomeUnknown(
                        f"the commit was sent again and refused: {error}"
                    ) from error
                raise StoreUnavailable(f"the commit was refused: {error}") from error
            self.breakers.answered(node)
            state = argv[STATE_ARG]
            settled = self._settle(change, answer, replicated, resent=attempt > 0, state=state)
            if settled is None:
                self._share(change.match, state)
            if settled is None and change.match.status is not game.Status.PLAYING:
                self._pack_quietly(change.match.id, len(change.match.players))
            return settled
        raise OutcomeUnknown(f"Redis at {node} did not answer the commit, nor when sent again")

    def _pack_quietly(self, match_id: str, seats: int) -> None:
        """Pack the log of a match no game is being played in; a failure leaves it in the
        stream, to be packed with the next (readers read both forms)."""
        try:
            self.pack_log(match_id, seats=seats)
        except StoreUnavailable as error:
            log.warning("the log of %s was not packed: %s", match_id, error)

    def due(self, *, limit: int = 100, outage: Outage | None = None) -> list[str]:
        """Ids of matches whose deadline has passed, from every shard whose node answers
        (a node that does not is told to ``outage``, or logged)."""
        due: list[str] = []
        failed: set[str] = set()
        for shard in range(SHARDS):
            key = shard_tag(shard) + ":deadlines"
            try:
                node = self.topology.node_of(key)
            except _FAILURES:
                continue
            if node in failed:
                continue
            part = f"deadlines on {node}"
            try:
                due += self._call(key, partial(self.topology.eval, DUE, [key], [limit]))
            except StoreUnavailable as error:
                _unreachable(outage, part, error)
                failed.add(node)
            else:
                if outage is not None:
                    outage.answered(part)
        return due

    def page(
        self, app: str, *, ref: str | None, status: str | None, limit: int, cursor: str | None
    ) -> Page:
        """A page of ``app``'s matches (see :class:`service.store.listing.Listings`); raises
        :class:`service.store.listing.BadCursor` for a cursor of another listing."""
        now = self.clock()
        key = shard_tag(0) + ":sum"
        return self._call(
            key,
            lambda: self.listings.page(
                app, ref=ref, status=status, limit=limit, cursor=cursor, now=now
            ),
        )

    def expire_idle(self, *, limit: int = 100, outage: Outage | None = None) -> int:
        """Remove every key and listing entry of the matches whose time has come (idle, or
        finished that long ago), from every shard whose node answers (the others told to
        ``outage``, or logged); return how many."""
        expired = 0
        for shard in range(SHARDS):
            tag = shard_tag(shard)
            keys = [f"{tag}:expiry", f"{tag}:ix", f"{tag}:sum", f"{tag}:deadlines"]
            try:
                expired += int(
                    self._call(
                        keys[0], partial(self.topology.eval, EXPIRE_IDLE, keys, [limit, tag])
                    )
                )
            except StoreUnavailable as error:
                _unreachable(outage, f"expiries of shard {tag}", error)
            else:
                if outage is not None:
                    outage.answered(f"expiries of shard {tag}")
        return expired

    def unschedule(self, match_id: str) -> None:
        """Forget the deadline of a match that is gone."""
        keys = Keys(match_id)
        self._call(keys.deadlines, lambda: self.topology.client.zrem(keys.deadlines, match_id))

    def ping(self) -> None:
        """Raise :class:`StoreUnavailable` unless Redis answers."""
        self._call("ping", self.topology.ping)

    # -- internals -----------------------------------------------------------------------------

    def _node(self, key: str) -> str:
        try:
            return self.topology.node_of(key)
        except _FAILURES as error:
            raise StoreUnavailable(f"Redis is unreachable: {type(error).__name__}") from error

    def _call(self, key: str, call: Callable[[], T]) -> T:
        """Make one call (not a commit) to the node of ``key``, through its breaker; a read
        that lost its connection is sent once more (reads may be repeated), not one that
        timed out (a frozen Redis would make the caller wait twice)."""
        node = self._node(key)
        sent_at = self.breakers.check(node)
        for attempt in (1, 2):
            try:
                answer = call()
            except _NO_ANSWER as error:
                self.breakers.trip(node, sent_at)
                if attempt == 1 and isinstance(error, RedisConnectionError):
                    sent_at = time.monotonic()  # a dropped connection: once more, on a new one
                    continue
                raise StoreUnavailable(f"Redis at {node} did not answer") from error
            except _FAILURES as error:
                raise StoreUnavailable(f"Redis at {node}: {type(error).__name__}") from error
            self.breakers.answered(node)
            return answer
        raise AssertionError("unreachable")

    def _send(
        self,
        script_keys: list[str],
        argv: list[Any],
        keys: Keys,
        *,
        first: bool,
        clock: tuple[float, float] | None = None,
    ) -> tuple[Any, int]:
        """Run the commit script (``first``: not a commit sent again after a lost answer);
        answer its answer and how many replicas acknowledged it (-1: none was waited for).
        ``clock``: the estimate the change was computed at and when it was made (see
        :meth:`service.store.sending.Sending.stamped`)."""
        replicas = wait_replicas(self.settings, self.topology.replicas_of(keys.state))
        if self.commits is not None:
            sending = sending_of(script_keys, argv, replicas, first, clock)
            if serving.count != 1 or self.commits.sending:
                return self.commits(sending)
            # The only request the worker serves, and no batch on its way: nobody to share the
            # round trip with, so not through the batcher (its queue, locks and hand-over cost
            # a lone draft 20,000 instructions); the same round trip, the same answer.
            return self._send_alone(sending)
        argv = Sending(script_keys, argv, replicas, first, clock).stamped()
        if replicas <= 0:
            return self.topology.eval(COMMIT, script_keys, argv), -1
        return self.topology.eval_and_wait(COMMIT, script_keys, argv, replicas=replicas)

    def _send_alone(self, sending: Sending) -> tuple[Any, int]:
        """One commit in its own round trip, as :meth:`_send_together` sends a batch of one
        (a first send refused, unsent, while the node's breaker is open): the lists that
        batch, spread and gather answers cost a lone draft 15,000 instructions."""
        if sending.first:
            self.breakers.check(self.topology.node_of(sending.keys[0]))
        runs = ((sending.keys, sending.stamped()),)
        answers, replicated = self.topology.eval_together(COMMIT, runs, replicas=sending.replicas)
        answer = answers[0]
        if isinstance(answer, Exception):
            raise answer
        return answer, replicated

    def _send_together(self, sendings: Sequence[Sending]) -> list[tuple[Any, int] | Exception]:
        """The commits of concurrent requests in one round trip (the ``Batcher``'s call).

        A commit's first send is refused, unsent, while the node's breaker is open (as it
        would have been alone: its caller checked the breaker before it queued, and the batch
        ahead of it may have tripped it since); a commit sent again is sent, as it would
        have been alone."""
        answers: list[tuple[Any, int] | Exception | None] = [None] * len(sendings)
        try:
            self.breakers.check(self.topology.node_of(sendings[0].keys[0]))
            closed: StoreUnavailable | None = None
        except StoreUnavailable as error:
            closed = error
        going = [at for at, sending in enumerate(sendings) if closed is None or not sending.first]
        for at, sending in enumerate(sendings):
            if closed is not None and sending.first:
                answers[at] = closed
        if going:
            runs = [(sendings[at].keys, sendings[at].stamped()) for at in going]
            replicas = max(sendings[at].replicas for at in going)
            results, replicated = self.topology.eval_together(COMMIT, runs, replicas=replicas)
            for at, result in zip(going, results, strict=True):
                answers[at] = result if isinstance(result, Exception) else (result, replicated)
        return [answer for answer in answers if answer is not None]

    def _settle(
        self,
        change: Change,
        answer: list[Any],
        replicated: int,
        *,
        resent: bool = False,
        state: str | bytes | None = None,
    ) -> Receipt | None:
        outcome = answer[0]
        if outcome == "replay":
            kept = receipt_of(answer[1])
            if not (resent and change.receipt is not None and kept == change.receipt[2]):
                return kept
            outcome = "done"  # the receipt is this very commit's: its first send ran
        if outcome == "gone":
            raise Stale(None)
        if outcome == "clock":
            self._tick(answer[1], answer[2])
            raise Stale(None)
        if outcome == "conflict":
            now = self._tick(answer[3], answer[4])
            fresh = None if answer[2] is None else self._decode(answer[2], now)
            raise Stale(fresh)
        # "ok" or "done" (this very commit ran before, its answer lost)
        if replicated == 0:
            raise OutcomeUnknown("the move is on the master but no replica acknowledged it in time")
        self._decoded.put(change.match, change.seats, state)
        return None

    def ttl_of(self, match: Match) -> int:
        """Seconds ``match`` is kept after this change: ``idle_ttl``, or ``finished_ttl`` once
        it is over when that is shorter (0: kept for ever)."""
        idle = max(self.idle_ttl, 0)  # plain comparisons: on every commit (lists cost 5,000)
        finished = self.finished_ttl
        if finished > 0 and match.is_over:
            return min(idle, finished) if idle else finished
        return idle

    def _decode(self, state: str, now: float) -> Loaded:
        match, seats = self._parse(state)
        self._share(match, state)
        return Loaded(match, seats, now)

    def _parse(self, state: str | bytes) -> tuple[Match, tuple[str, ...]]:
        """The match and token digests of a stored state, kept as this worker's copy."""
        match, seats = _copy_of(state)
        self._decoded.put(match, seats, state)
        return match, seats

    @staticmethod
    def _share(match: Match, state: str | bytes) -> None:
        """Publish the stored state of ``match`` to the host's other workers."""
        table = shared_states.current()
        if table is not None:
            table.put(match.id, match.version, state.encode() if isinstance(state, str) else state)

    def _tick(self, seconds: Any, micros: Any) -> float:
        now = int(seconds) + int(micros) / 1_000_000
        self._clock = (now, time.monotonic())
        return now


def _copy_of(state: str | bytes) -> tuple[Match, tuple[str, ...]]:
    """The match and token digests of a stored state."""
    stored = jsoncodec.loads(state)
    return game.from_dict(stored["m"]), tuple(stored["t"])


def _unreachable(outage: Outage | None, part: str, error: StoreUnavailable) -> None:
    """Tell ``outage`` that ``part`` failed, or log it when no outage is kept."""
    if outage is None:
        log.warning("%s unreadable: %s", part, error)
    else:
        outage.failed(part, error)
