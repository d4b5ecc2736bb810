"""Matches in Redis: every change is one atomic, version-checked Lua script.

Keys of a match share one Redis Cluster hash tag, ``{m:<id>}``:

``{m:<id>}:state``   a hash: ``v`` the version, ``s`` the state as JSON (secret: racks, pool)
``{m:<id>}:events``  a stream of public events, entry ids ``0-<seq>`` (seq counts from 1)
``{m:<id>}:idem:<seat>:<key>``  the first answer to an ``Idempotency-Key``

The commit script checks the version, then writes the state, the events and the
idempotency record together, so no update is lost, and a move is either wholly
applied or not at all. Deadlines live in ``deadlines`` (a sorted set scored by
the turn deadline) for the sweeper; it is written after the commit and is only a
hint: settling always reads the match itself.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from redis import Redis
from redis.exceptions import RedisClusterException, RedisError

from service import jsoncodec
from service.threads import shutting_down

__all__ = ["Committed", "MatchStore", "StoredMatch", "VersionConflict"]

log = logging.getLogger(__name__)
DEADLINES = "deadlines"
WAIT_SLICE = 0.25  # seconds; under the client's socket timeout

_COMMIT = """
local current = redis.call('HGET', KEYS[1], 'v')
if ARGV[1] == '' then
  if current then return {0, current} end
elseif current ~= ARGV[1] then
  return {0, current or ''}
end
-- the deadline index first: if it fails (an ACL, say) nothing has been written yet
if KEYS[4] then
  if ARGV[#ARGV - 1] == '' then
    redis.call('ZREM', KEYS[4], ARGV[#ARGV])
  else
    redis.call('ZADD', KEYS[4], ARGV[#ARGV - 1], ARGV[#ARGV])
  end
end
redis.call('HSET', KEYS[1], 'v', ARGV[2], 's', ARGV[3])
local events = tonumber(ARGV[6])
for i = 0, events - 1 do
  redis.call('XADD', KEYS[2], '0-' .. ARGV[7 + 2 * i], 'e', ARGV[8 + 2 * i])
end
if ARGV[4] ~= '' then
  redis.call('SET', KEYS[3], ARGV[4], 'EX', ARGV[5])
end
local ttl = tonumber(ARGV[#ARGV - 2])
if ttl > 0 then
  redis.call('EXPIRE', KEYS[1], ttl)
  redis.call('EXPIRE', KEYS[2], ttl)
end
return {1, ARGV[2]}
"""


_LOAD = """
local time = redis.call('TIME')
local version = redis.call('HGET', KEYS[1], 'v')
if not version then return {false, false, time[1], time[2]} end
if version == ARGV[1] then return {version, false, time[1], time[2]} end
return {version, redis.call('HGET', KEYS[1], 's'), time[1], time[2]}
"""


class VersionConflict(Exception):
    """The stored version is not the one the change was computed from."""

    def __init__(self, current: int | None) -> None:
        super().__init__(f"stored version is {current}")
        self.current = current


@dataclass(frozen=True)
class StoredMatch:
    """A match as stored: its version and its state (a JSON-ready dict; ``None`` when the
    caller already holds that version)."""

    version: int
    state: dict[str, Any] | None


@dataclass(frozen=True)
class Committed:
    """What a commit wrote."""

    version: int


def _tag(match_id: str) -> str:
    return "{m:" + match_id + "}"


class MatchStore:
    """Load and save matches atomically in Redis (or Redis Cluster)."""

    def __init__(
        self, redis: Any, *, blocking: Any = None, idempotency_ttl: int = 24 * 3600
    ) -> None:
        self.redis = redis
        self.blocking = blocking if blocking is not None else redis
        self.cluster = not isinstance(redis, Redis)
        self.idempotency_ttl = idempotency_ttl
        self._commit = redis.register_script(_COMMIT)
        self._load = redis.register_script(_LOAD)

    @staticmethod
    def state_key(match_id: str) -> str:
        """The key of a match's state hash."""
        return _tag(match_id) + ":state"

    @staticmethod
    def events_key(match_id: str) -> str:
        """The key of a match's event stream."""
        return _tag(match_id) + ":events"

    @staticmethod
    def idempotency_key(match_id: str, seat: int, key: str) -> str:
        """The key of an idempotency record."""
        return f"{_tag(match_id)}:idem:{seat}:{key}"

    def now(self) -> float:
        """Return the one clock every instance shares: Redis ``TIME`` in seconds."""
        seconds, micros = self.redis.time()
        return int(seconds) + int(micros) / 1_000_000

    def load_with_time(
        self, match_id: str, *, known_version: int | None = None
    ) -> tuple[StoredMatch | None, float]:
        """Return the stored match (or ``None``) and Redis ``TIME``, in one round trip.

        When the stored version is ``known_version`` the state is not sent again: the
        answer's ``state`` is ``None`` (a version's state never changes).
        """
        known = "" if known_version is None else str(known_version)
        version, state, seconds, micros = self._load(keys=[self.state_key(match_id)], args=[known])
        now = int(seconds) + int(micros) / 1_000_000
        if version is None:
            return None, now
        return StoredMatch(int(version), None if state is None else jsoncodec.loads(state)), now

    def exists(self, match_id: str) -> bool:
        """Whether the match is stored (without reading its state)."""
        return bool(self.redis.exists(self.state_key(match_id)))

    def load(self, match_id: str) -> StoredMatch | None:
        """Return the stored match, or ``None`` when there is none."""
        version, state = self.redis.hmget(self.state_key(match_id), "v", "s")
        if version is None or state is None:
            return None
        return StoredMatch(int(version), jsoncodec.loads(state))

    def commit(
        self,
        match_id: str,
        *,
        expected_version: int | None,
        version: int,
        state: dict[str, Any],
        events: Sequence[tuple[int, dict[str, Any]]],
        idempotency: tuple[str, dict[str, Any]] | None = None,
        ttl: int = 0,
        deadline: float | None = None,
    ) -> Committed:
        """Write ``state`` at ``version`` if the stored version is ``expected_version``.

        ``expected_version`` ``None`` means the match must not exist yet. ``events``
        are ``(seq, event)`` pairs appended to the stream; ``idempotency`` is
        ``(redis key, record)``; ``ttl`` > 0 makes the match expire (finished);
        ``deadline`` is the match's next deadline for the sweeper (``None``: none),
        indexed by the same script on a single Redis, or just after it on a Cluster
        (where the index lives in another slot; see :meth:`schedule`).
        Raises :class:`VersionConflict` when another change got there first.
        """
        idem_key, idem_value = "", b""
        if idempotency is not None:
            idem_key, record = idempotency
            idem_value = jsoncodec.dumps(record)
        argv: list[Any] = [
            "" if expected_version is None else str(expected_version),
            str(version),
            jsoncodec.dumps(state),
            idem_value,
            str(self.idempotency_ttl),
            str(len(events)),
        ]
        for seq, event in events:
            argv += [str(seq), jsoncodec.dumps(event)]
        argv += [str(ttl), "" if deadline is None else repr(deadline), match_id]
        keys = [
            self.state_key(match_id),
            self.events_key(match_id),
            idem_key or self.state_key(match_id),
        ]
        if not self.cluster:
            keys.append(DEADLINES)
        ok, current = self._commit(keys=keys, args=argv)
        if int(ok) != 1:
            raise VersionConflict(int(current) if current not in (None, "") else None)
        if self.cluster:
            self.schedule(match_id, deadline)
        return Committed(version)

    def events(self, match_id: str, *, after: int = 0, limit: int = 100) -> list[dict[str, Any]]:
        """Return up to ``limit`` public events with a sequence number above ``after``."""
        entries = self.redis.xrange(
            self.events_key(match_id), min=f"(0-{after}", max="+", count=limit
        )
        return [jsoncodec.loads(fields["e"]) for _, fields in entries]

    def wait_after(self, match_id: str, version: int, *, timeout: float) -> None:
        """Block until an event after ``version`` exists, or ``timeout`` seconds pass.

        The wait is cut in slices shorter than the socket timeout, so a frozen Redis fails
        it within that timeout (a 503) instead of holding a worker thread for the whole wait.
        It also ends after the slice in which this process is told to stop
        (:data:`service.threads.shutting_down`).
        """
        deadline = time.monotonic() + timeout
        streams = {self.events_key(match_id): f"0-{version}"}
        while (left := deadline - time.monotonic()) > 0 and not shutting_down.is_set():
            block = max(1, int(min(left, WAIT_SLICE) * 1000))
            if self.blocking.xread(streams, count=1, block=block):
                return

    def idempotent_answer(self, match_id: str, seat: int, key: str) -> dict[str, Any] | None:
        """Return the recorded first answer to ``key`` from ``seat``, if any."""
        raw = self.redis.get(self.idempotency_key(match_id, seat, key))
        return None if raw is None else dict(jsoncodec.loads(raw))

    def schedule(self, match_id: str, deadline: float | None) -> None:
        """Record (or clear) the match's next deadline for the sweeper, as a hint.

        Called after a commit: the move stands whatever happens here, so a failure is
        logged, not raised; the next request for the match settles its deadlines anyway.
        """
        try:
            if deadline is None:
                self.redis.zrem(DEADLINES, match_id)
            else:
                self.redis.zadd(DEADLINES, {match_id: deadline})
        except (RedisError, RedisClusterException) as error:
            log.warning("could not index the deadline of %s: %s", match_id, type(error).__name__)

    def due(self, now: float, *, limit: int = 100) -> list[str]:
        """Return ids of matches whose deadline has passed."""
        return list(self.redis.zrangebyscore(DEADLINES, "-inf", now, start=0, num=limit))
