"""Which of this worker's copies of matches are still what Redis holds, known with no round trip.

A view used to ask Redis for the match's version (one ``HMGET``) only to learn, nearly always,
that the worker's copy was still current. That round trip was a quarter of a view's processor
time. Here Redis says when a match changes instead: each worker holds one connection with
Redis's *client tracking* on, in broadcast mode for every match key (``CLIENT TRACKING ON
REDIRECT <itself> BCAST PREFIX {s``), subscribed to ``__redis__:invalidate``. Whatever changes
a match's state (a commit from any worker or host, a log packed, an expiry, a ``FLUSHALL``),
Redis sends its key there.

:class:`Freshness` keeps, per match, the version this worker last read or committed
(:meth:`~Freshness.mark`) and forgets it when Redis names the key. Before it vouches for a copy
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
    "PREFIX",
    "TRUST_SECONDS",
    "Freshness",
    "Ticket",
]

CHANNEL = "__redis__:invalidate"
PREFIX = "{s"  # every key of a match (service.store.matches.Keys) begins so
STATE_SUFFIX = ":state"
PING_SECONDS = 0.2  # how often a PING goes out while copies are asked about
TRUST_SECONDS = 0.5  # how recent the last answered PING must be for a copy to be vouched for
PONG_SECONDS = 0.1  # a PING unanswered this long: nothing is vouched for until it is
DRAIN_SECONDS = 0.1  # a worker that only writes takes in its messages this often
RECONNECT_SECONDS = 1.0  # the least time between two attempts to connect
KNOWN_LIMIT = 16_384  # matches remembered; the oldest marked goes first
CHANGED_LIMIT = 16_384  # keys remembered as changed, for reads under way

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Ticket:
    """Taken before a read or commit is sent: which connection, and how many keys had come."""

    connection: int
    seen: int


_NO_TICKET = Ticket(0, 0)


class Freshness:
    """This worker's record of which match versions Redis still holds (see the module).

    ``connect`` returns a client of one connection to the node that holds every match, or
    ``None`` when there is no such node (a cluster): then nothing is vouched for.
    """

    def __init__(
        self,
        connect: Any,
        *,
        trust: float = TRUST_SECONDS,
        ping: float = PING_SECONDS,
        pong: float = PONG_SECONDS,
    ) -> None:
        self._connect = connect
        self.trust = trust
        self.ping = ping
        self.pong = pong
        self._lock = threading.Lock()
        self._client: redis.Redis | None = None
        self._connection = 0  # which connection, counting from 1; 0: none
        self._retry_at = 0.0
        self._opening = False
        self._failing = False  # the last attempt to connect failed
        self._drained = 0.0  # when messages were last taken in
        self._pings: deque[float] = deque()  # when each unanswered PING was sent
        self._pinged = 0.0
        self._heard = float("-inf")  # when the last answered PING was sent
        self._seen = 0  # keys that came on this connection
        self._floor = 0  # a ticket from before this may not mark (forgotten changes)
        self._changed: dict[str, int] = {}  # match id -> _seen when it last came
        self._known: dict[str, int] = {}  # match id -> version Redis holds
        self.enabled = True

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
            if now - self._pinged >= self.ping:
                self._send_ping(now)
            if now - self._heard >= self.trust:
                return False
            if self._pings and now - self._pings[0] >= self.pong:
                return False
            return self._known.get(match_id) == version

    def ticket(self) -> Ticket:
        """Take before sending a read or commit whose answer may be :meth:`mark` ed.

        It need not take in what has arrived: a message it leaves counts as come after the
        ticket, so it can only keep a mark out. It does every :data:`DRAIN_SECONDS`, so that
        a worker that only writes does not leave Redis holding its messages (a read of the
        socket was a tenth of a draft's commit)."""
        if not self.enabled:
            return _NO_TICKET
        with self._lock:
            due = self._client is None or time.monotonic() - self._drained >= DRAIN_SECONDS
            if due and not self._read():
                return _NO_TICKET
            return Ticket(self._connection, self._seen)

    def mark(self, match_id: str, version: int, ticket: Ticket) -> None:
        """Remember that Redis held ``version`` of the match when a read or commit that took
        ``ticket`` was answered, unless a key of the match has come since ``ticket``."""
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
        self._drained = time.monotonic()
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
        self._pinged = now
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
            client.client_tracking_on(clientid=own_id, bcast=True, prefix=[PREFIX])
            client.execute_command("SUBSCRIBE", CHANNEL)
        except ResponseError as error:
            # Redis refused (before 6.0, or an ACL without CLIENT or SUBSCRIBE): for good
            log.warning("views read Redis each time: no client tracking here (%s)", error)
            self.enabled = False
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
            self._connection += 1
            self._changed.clear()
            self._known.clear()
            self._seen = 0
            self._floor = 0
            self._pings.clear()
            self._heard = float("-inf")
            self._send_ping(time.monotonic())

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
