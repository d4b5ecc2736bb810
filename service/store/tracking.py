"""Which of this worker's copies of matches are still what Redis holds, known with no round trip.

A view used to ask Redis for the match's version (one ``HMGET``) only to learn, nearly always,
that the worker's copy was still current. That round trip was a quarter of a view's processor
time. Here Redis says when a match changes instead, with its *client tracking*: each worker
holds one connection subscribed to ``__redis__:invalidate``, and reads the matches it views
on connections of their own with tracking on and redirected there (``CLIENT TRACKING ON
REDIRECT <id>``, :meth:`Freshness.read`). Redis remembers which keys such a connection read,
and the first time one changes afterwards (a commit from any worker or host, a log packed,
an expiry, a ``FLUSHALL``) it sends the key to the subscribed connection, once.

Only keys a worker has read are tracked, so a write costs Redis nothing more unless some
worker views that match, and then one message to each such worker. (Broadcast mode, every
match key to every worker, was measured first: it cost each write 3-6% of its throughput,
about 30 us of Redis time, and grows with the number of workers.)

:class:`Freshness` keeps, per match, the version this worker last read on a tracked
connection (:meth:`~Freshness.mark`) and forgets it when Redis names the key. A commit does
not mark: its key may not be tracked for this worker, and then nothing would say when it
changes again. Before it vouches for a copy
(:meth:`~Freshness.confirms`) it reads every message that has reached the worker, on the
caller's own thread: no background thread, and no copy trusted past a message that has
arrived. What is left is the message still on the wire: a view may trail a commit made
elsewhere by the time Redis takes to send the key (it writes it out in the same turn of its
event loop as the commit's answer).

Trust also needs the connection to be alive, which a socket alone does not show (a half-open
connection just stays silent). A ``PING`` goes out on the connection at most every
:data:`PING_SECONDS` while views come; its answer comes after every message Redis sent before
it, so once it is read, nothing from before the ``PING`` is missing. A copy is vouched for
only while the last answered ``PING`` was sent less than :data:`TRUST_SECONDS` ago and no
``PING`` has waited :data:`PONG_SECONDS` for its answer; after a quiet spell the first view
reads Redis, as before. So a Redis that freezes (a silent connection) may have views answered
from copies for at most half a second after it last answered.

A read that was under way while a key of its match came in may have read the older state; it
is not marked (:meth:`~Freshness.ticket` is taken before the read is sent). A lost or replaced
connection forgets everything it vouched for. On a Redis Cluster (no single node sees every
change) nothing is vouched for and every view reads Redis.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

import redis
from redis.exceptions import RedisError, ResponseError

__all__ = [
    "CHANNEL",
    "PING_SECONDS",
    "PONG_SECONDS",
    "TRUST_SECONDS",
    "Freshness",
    "Ticket",
]

CHANNEL = "__redis__:invalidate"
STATE_SUFFIX = ":state"
PING_SECONDS = 0.2  # how often a PING goes out while copies are asked about
TRUST_SECONDS = 0.5  # how recent the last answered PING must be for a copy to be vouched for
PONG_SECONDS = 0.1  # a PING unanswered this long: nothing is vouched for until it is
RECONNECT_SECONDS = 1.0  # the least time between two attempts to connect
KNOWN_LIMIT = 16_384  # matches remembered; the oldest marked goes first
CHANGED_LIMIT = 16_384  # keys remembered as changed, for reads under way

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Ticket:
    """Taken before a read is sent: which connection, and how many keys had come."""

    connection: int
    seen: int


_NO_TICKET = Ticket(0, 0)


class Freshness:
    """This worker's record of which match versions Redis still holds (see the module).

    ``connect`` returns a client of one connection to the node that holds every match, or
    ``None`` when there is no such node (a cluster): then nothing is vouched for.
    ``tracked_pool(on_connect)`` returns a pool of connections to that node, each set up by
    ``on_connect`` (``None``: no reads are tracked, nothing is vouched for).
    """

    def __init__(
        self,
        connect: Any,
        tracked_pool: Any = None,
        *,
        enabled: bool = True,
        trust: float = TRUST_SECONDS,
        ping: float = PING_SECONDS,
        pong: float = PONG_SECONDS,
    ) -> None:
        self._connect = connect
        self._tracked_pool = tracked_pool
        self._pool: redis.ConnectionPool | None = None
        self._subscriber = 0  # the subscribed connection's CLIENT ID
        self.trust = trust
        self.ping = ping
        self.pong = pong
        self._lock = threading.Lock()
        self._client: redis.Redis | None = None
        self._connection = 0  # which connection, counting from 1; 0: none
        self._retry_at = 0.0
        self._opening = False
        self._failing = False  # the last attempt to connect failed
        self._pings: deque[float] = deque()  # when each unanswered PING was sent
        self._heard = float("-inf")  # when the last answered PING was sent
        self._seen = 0  # keys that came on this connection
        self._floor = 0  # a ticket from before this may not mark (forgotten changes)
        self._changed: dict[str, int] = {}  # match id -> _seen when it last came
        self._known: dict[str, int] = {}  # match id -> version Redis holds
        self.enabled = enabled

    # -- asked by the store ------------------------------------------------------------------

    def confirms(self, match_id: str, version: int) -> bool:
        """Whether Redis still holds ``version`` of the match, as far as every message that
        has arrived says, on a connection known to be alive."""
        if not self.enabled:
            return False
        with self._lock:
            if not self._read():
                return False
            now = time.monotonic()
            # the last PING sent: the newest unanswered, or else the last answered
            if now - (self._pings[-1] if self._pings else self._heard) >= self.ping:
                self._send_ping(now)
            if now - self._heard >= self.trust:
                return False
            if self._pings and now - self._pings[0] >= self.pong:
                return False
            return self._known.get(match_id) == version

    def read(self, match_id: str, key: str) -> list[Any] | None:
        """``HMGET key v s`` on a tracked connection, the version read marked; ``None`` when
        no tracked connection can be had now (the caller reads as it would without). With no
        invalidation connection yet, one is opened for the reads after this one (a worker
        whose first views were all of matches it held no copy of never asked :meth:`confirms`,
        which opens it, so none of those reads was tracked)."""
        if not self.enabled or self._tracked_pool is None:
            return None
        if self._client is None:
            with self._lock:
                self._open_soon()
            return None
        pool = self._pool
        if pool is None:
            pool = self._pool = self._tracked_pool(self._on_connect)
            if pool is None:
                self.enabled = False
                return None
        connection: Any = pool.get_connection()
        try:
            ticket = self.ticket(getattr(connection, "tracked_by", 0))
            connection.send_command("HMGET", key, "v", "s")
            answer: list[Any] = connection.read_response()
            if ticket.connection == 0:
                connection.disconnect()  # set up again, for the connection of now, next time
        finally:
            pool.release(connection)
        if answer[0] is not None:
            self.mark(match_id, int(answer[0]), ticket)
        return answer

    def ticket(self, tracked_by: int | None = None) -> Ticket:
        """Take before sending a read whose answer may be :meth:`mark` ed; ``tracked_by``,
        the subscribed connection the read's own connection was set up for (a ticket of no
        use when that is not the one of now). A message not yet taken in counts as come after
        the ticket, so it can only keep a mark out."""
        if not self.enabled:
            return _NO_TICKET
        with self._lock:
            if self._client is None or tracked_by not in (None, self._connection):
                return _NO_TICKET
            return Ticket(self._connection, self._seen)

    def mark(self, match_id: str, version: int, ticket: Ticket) -> None:
        """Remember that Redis held ``version`` of the match when a read or commit that took
        ``ticket`` was answered, unless a key of the match has come since ``ticket``. Only a
        read that Redis tracks for this worker may be marked."""
        if ticket.connection == 0:
            return
        with self._lock:
            if ticket.connection != self._connection or ticket.seen < self._floor:
                return
            if self._changed.get(match_id, -1) > ticket.seen:
                return
            known = self._known
            known.pop(match_id, None)
            known[match_id] = version
            if len(known) > KNOWN_LIMIT:
                del known[next(iter(known))]

    def close(self) -> None:
        """Drop the connection (the next question opens another)."""
        with self._lock:
            self._drop()

    # -- the connection (under the lock) -------------------------------------------------------

    def _read(self) -> bool:
        """Connect if need be, then take every message that has arrived; ``False`` when there
        is no working connection."""
        client = self._client
        if client is None:
            self._open_soon()
            return False
        connection: Any = client.connection
        try:
            while connection.can_read(0):
                self._take(connection.read_response())
        except (RedisError, OSError, ValueError) as error:
            log.warning("the invalidation connection was lost: %s", error)
            self._drop()
            return False
        return True

    def _take(self, message: Any) -> None:
        kind = message[0]
        if kind == "pong":
            if self._pings:
                self._heard = self._pings.popleft()
            return
        if kind != "message":
            return
        keys = message[2]
        if keys is None:  # FLUSHALL / FLUSHDB: every key changed
            self._known.clear()
            self._seen += 1
            self._floor = self._seen
            return
        changed = self._changed
        for key in keys:
            if not key.endswith(STATE_SUFFIX):
                continue
            match_id = key[key.index(":") + 1 : -len(STATE_SUFFIX)]
            self._seen += 1
            changed[match_id] = self._seen
            self._known.pop(match_id, None)
        if len(changed) > CHANGED_LIMIT:
            changed.clear()
            self._seen += 1
            self._floor = self._seen

    def _send_ping(self, now: float) -> None:
        client = self._client
        if client is None:
            return
        connection: Any = client.connection
        try:
            connection.send_command("PING")
        except (RedisError, OSError) as error:
            log.warning("the invalidation connection was lost: %s", error)
            self._drop()
            return
        self._pings.append(now)

    def _open_soon(self) -> None:
        """Open a connection on a thread of its own (a greenlet under gevent): a request
        never waits for it, however slow Redis is to answer. At most one at a time, and at
        most one a second."""
        now = time.monotonic()
        if self._opening or now < self._retry_at:
            return
        self._opening = True
        self._retry_at = now + RECONNECT_SECONDS
        threading.Thread(target=self._open, name="redis-tracking", daemon=True).start()

    def _open(self) -> None:
        client: redis.Redis | None = None
        try:
            client = self._connect()
            if client is None:
                self.enabled = False  # no node sees every change
                return
            own_id: Any = client.client_id()
            client.execute_command("SUBSCRIBE", CHANNEL)
        except ResponseError as error:
            self._refused(error)  # an ACL without CLIENT or SUBSCRIBE
            _close(client)
            client = None
        except (RedisError, OSError) as error:
            # Redis unreachable: said once, until a connection works again
            (log.debug if self._failing else log.warning)(
                "no invalidations from Redis for now: %s", error
            )
            self._failing = True
            _close(client)
            client = None
        finally:
            if client is None:
                self._opening = False
        if client is None:
            return
        with self._lock:
            self._opening = False
            self._failing = False
            self._client = client
            self._subscriber = int(own_id)
            self._connection += 1
            self._changed.clear()
            self._known.clear()
            self._seen = 0
            self._floor = 0
            self._pings.clear()
            self._heard = float("-inf")
            self._send_ping(time.monotonic())

    def _on_connect(self, connection: Any) -> None:
        """Set up a new connection of the tracked pool: tracking on, redirected to the
        subscribed connection of now (none: the connection is used untracked, unmarked)."""
        connection.on_connect()
        with self._lock:
            connection.tracked_by = 0
            if self._client is None or not self.enabled:
                return
            try:
                connection.send_command(
                    "CLIENT", "TRACKING", "ON", "REDIRECT", str(self._subscriber)
                )
                connection.read_response()
            except ResponseError as error:
                self._refused(error)  # before Redis 6.0, or an ACL without CLIENT
                return
            connection.tracked_by = self._connection

    def _refused(self, error: ResponseError) -> None:
        """Redis refused what tracking needs: views read Redis each time, for good."""
        log.warning("views read Redis each time: no client tracking here (%s)", error)
        self.enabled = False

    def _drop(self) -> None:
        client, self._client = self._client, None
        self._known.clear()
        self._pings.clear()
        self._heard = float("-inf")
        self._connection += 1  # tickets of the old connection no longer mark
        if client is not None:
            _close(client)


def _close(client: redis.Redis | None) -> None:
    if client is not None:
        with contextlib.suppress(RedisError, OSError):
            client.close()
