"""Notifications in Redis: the apps' outboxes (written by the commit script), webhooks, their
deliveries, and the app feed.

Every per-match key lives under the hash tag of the match's shard (``{s<k>}``, see
:mod:`service.store.matches`), so the commit script writes a notification in the same atomic
step as the move that causes it, on the node that holds the match::

    {s<k>}:out:<app>               stream: the app's notifications of matches on shard k
                                   (m match id, c the notification's compact form, see
                                   service.notices; entries written before that form hold
                                   t type, b the JSON body); entries and the key itself kept
                                   OUTBOX_DAYS (app history, not per match); consumer group
                                   "dispatch" (the dispatchers); the feed reads it
    {s<k>}:warn                    sorted set: match id -> when its turn.expiring is due
    {s<k>}:warnb                   hash: match id -> "<app>\\n<turn.expiring, compact>"
    {s<k>}:wh:d:<delivery>         hash: one delivery (webhook, type, match_id, body: the
                                   compact form, status, attempts, tries, code, next, created)
    {s<k>}:wh:q:<webhook>:<match>  list: the deliveries of one match to one webhook, in order
    {s<k>}:wh:due                  sorted set: "<webhook>:<match>" -> when its head is due
                                   (or until when a dispatcher holds it: the lease)
    {s<k>}:wh:log:<webhook>        sorted set: delivery id -> created (ms), the newest kept
    {s<k>}:wh:stats                hash: pending, delivered, retried, dead, latency buckets
    {wh}:hooks:<app>               hash: webhook id -> its JSON (url, events, secret...)

One dispatcher at a time reads a shard's outboxes (a lease, ``{s<k>}:wh:reader``, so the
outbox's order is kept), through the consumer group: it fans each entry out into one delivery
per subscribed webhook and acknowledges it in one script (so an entry is fanned out once even
when a crashed reader's pending entries are taken over by the next holder, which does that
first, before anything newer). Any dispatcher holds a lease on a queue's head while it sends
it: one delivery in flight per match and webhook, so deliveries keep the match's order, and a
crashed dispatcher's lease runs out and another sends the same delivery (same
``webhook-id``) again.
"""

from __future__ import annotations

import base64
import contextlib
import logging
import secrets
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property, partial
from typing import Any, TypeVar

from redis.exceptions import RedisClusterException, RedisError, ResponseError

from service import jsoncodec
from service.notices import Notices, expand
from service.store.errors import StoreUnavailable
from service.store.topology import ClusterTopology, Topology

__all__ = [
    "GROUP",
    "LATENCY_BUCKETS",
    "NOTIFY_LUA",
    "OUTBOX_DAYS",
    "Claimed",
    "Delivery",
    "FeedReader",
    "Notifications",
    "OutboxEntry",
    "OutboxReader",
    "Webhook",
    "notify_args",
]

log = logging.getLogger(__name__)
T = TypeVar("T")
_FAILURES = (RedisError, RedisClusterException)

GROUP = "dispatch"
OUTBOX_DAYS = 7  # how long an outbox keeps its entries (the feed can resume that far back)
LOG_KEPT = 200  # deliveries kept in a webhook's log, per shard (older finished ones go)
FINISHED_KEPT = 7 * 24 * 3600  # seconds a delivered or dead delivery in the log stays readable
REGISTRY = "{wh}:hooks:"
LATENCY_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 60.0, 600.0, 3600.0)

# A Lua function for the commit script: the app's notifications of the change (ARGV from
# ``at``: app ('' for none), the shard's tag, the outbox's age limit in seconds, the count,
# the notifications (each compact: :meth:`service.notices.Notice.compact`), then the turn's
# warning: '' leave it, '-' drop it, or when and the compact notification).
NOTIFY_LUA = """
local function notify(match_id, at)
  local app = ARGV[at]
  if app == nil or app == '' then return end
  local tag, n = ARGV[at + 1], tonumber(ARGV[at + 3])
  if n > 0 then
    local t = redis.call('TIME')
    local oldest = string.format('%d', (tonumber(t[1]) - tonumber(ARGV[at + 2])) * 1000)
    local out = tag .. ':out:' .. app
    for i = 0, n - 1 do
      redis.call('XADD', out, 'MINID', '~', oldest, '*', 'm', match_id, 'c', ARGV[at + 4 + i])
    end
    redis.call('EXPIRE', out, ARGV[at + 2])
  end
  local w = at + 4 + n
  if ARGV[w] == '-' then
    redis.call('ZREM', tag .. ':warn', match_id)
    redis.call('HDEL', tag .. ':warnb', match_id)
  elseif ARGV[w] ~= '' then
    redis.call('ZADD', tag .. ':warn', ARGV[w], match_id)
    redis.call('HSET', tag .. ':warnb', match_id, app .. '\\n' .. ARGV[w + 1])
  end
end
"""

# KEYS: a shard's warn and warnb keys. ARGV: the most to send, the tag, the outbox's age
# limit. Moves each turn.expiring that is due by Redis TIME into its app's outbox.
WARN_DUE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local oldest = string.format('%d', (tonumber(t[1]) - tonumber(ARGV[3])) * 1000)
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', string.format('%.6f', now),
                       'LIMIT', 0, tonumber(ARGV[1]))
for _, id in ipairs(ids) do
  local held = redis.call('HGET', KEYS[2], id)
  if held and redis.call('EXISTS', ARGV[2] .. ':' .. id .. ':state') == 1 then
    local cut = string.find(held, '\\n', 1, true)
    local out = ARGV[2] .. ':out:' .. string.sub(held, 1, cut - 1)
    redis.call('XADD', out, 'MINID', '~', oldest, '*', 'm', id, 'c', string.sub(held, cut + 1))
    redis.call('EXPIRE', out, ARGV[3])
  end
  redis.call('ZREM', KEYS[1], id)
  redis.call('HDEL', KEYS[2], id)
end
return #ids
"""

# A Lua function: lease the queue ``member`` until ``now + lease`` and answer its head.
_HEAD_LUA = """
local function head(tag, due, member, now, lease)
  local did = redis.call('LINDEX', tag .. ':wh:q:' .. member, 0)
  if not did then
    redis.call('ZREM', due, member)
    return nil
  end
  redis.call('ZADD', due, string.format('%.6f', now + lease), member)
  local d = redis.call('HMGET', tag .. ':wh:d:' .. did, 'webhook', 'type', 'match_id', 'body',
                       'tries', 'created', 'app')
  return {member, did, d[1], d[2], d[3], d[4], d[5], d[6], d[7]}
end
"""

# KEYS: the shard's due and stats keys. ARGV: tag, outbox, entry id, match id, type, the
# compact notification, created (ms), the log's size, the app, the lease, the most heads to
# lease, then (webhook, delivery id) pairs. One delivery per webhook (made once: a claimed
# entry may be fanned out again), then the entry is acknowledged; the queues it made due
# (nobody held them) are leased to the caller, up to the most it asked for, and their heads
# answered. A delivery that leaves the webhook's log (its LOG_KEPT newest on the shard) is
# forgotten if it is finished, and when it finishes if it is still pending.
FANOUT = (
    _HEAD_LUA
    + """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local tag = ARGV[1]
local fresh = {}
for i = 12, #ARGV, 2 do
  local hook, did = ARGV[i], ARGV[i + 1]
  local d = tag .. ':wh:d:' .. did
  if redis.call('EXISTS', d) == 0 then
    redis.call('HSET', d, 'webhook', hook, 'type', ARGV[5], 'match_id', ARGV[4], 'body', ARGV[6],
               'status', 'pending', 'attempts', 0, 'tries', 0, 'code', '', 'next', now,
               'created', ARGV[7], 'app', ARGV[9])
    local member = hook .. ':' .. ARGV[4]
    redis.call('RPUSH', tag .. ':wh:q:' .. member, did)
    if redis.call('ZADD', KEYS[1], 'NX', string.format('%.6f', now), member) == 1 then
      fresh[#fresh + 1] = member
    end
    local log = tag .. ':wh:log:' .. hook
    redis.call('ZADD', log, ARGV[7], did)
    local older = redis.call('ZRANGE', log, 0, -(tonumber(ARGV[8]) + 1))
    if #older > 0 then
      redis.call('ZREMRANGEBYRANK', log, 0, -(tonumber(ARGV[8]) + 1))
      for _, old in ipairs(older) do
        local od = tag .. ':wh:d:' .. old
        if redis.call('HGET', od, 'status') ~= 'pending' then redis.call('DEL', od) end
      end
    end
    redis.call('HINCRBY', KEYS[2], 'pending', 1)
  end
end
redis.call('XACK', ARGV[2], 'dispatch', ARGV[3])
local out = {}
for i = 1, math.min(#fresh, tonumber(ARGV[11])) do
  local h = head(tag, KEYS[1], fresh[i], now, tonumber(ARGV[10]))
  if h then out[#out + 1] = h end
end
return out
"""
)

# KEYS: the shard's due key. ARGV: tag, lease seconds, the most to claim. Leases the queues
# whose head is due by Redis TIME and answers their heads.
CLAIM = (
    _HEAD_LUA
    + """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local members = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', string.format('%.6f', now),
                           'LIMIT', 0, tonumber(ARGV[3]))
local out = {}
for _, member in ipairs(members) do
  local h = head(ARGV[1], KEYS[1], member, now, tonumber(ARGV[2]))
  if h then out[#out + 1] = h end
end
return out
"""
)

# KEYS: the shard's due and stats keys. ARGV: tag, member, delivery id, outcome (delivered,
# retry, dead), status code ('' none), delay (retry), whether it was sent ('1'), latency
# bucket field ('' none), latency, lease, how long a finished delivery is kept (while it is
# in its webhook's log; out of it, it is forgotten at once). The queue's next head comes back
# (leased) when the delivery left the queue and another one is due now.
FINISH = (
    _HEAD_LUA
    + """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local tag, member, did, outcome = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local q = tag .. ':wh:q:' .. member
if redis.call('LINDEX', q, 0) ~= did then return false end
local d = tag .. ':wh:d:' .. did
if ARGV[7] == '1' then
  redis.call('HINCRBY', d, 'attempts', 1)
  redis.call('HINCRBY', d, 'tries', 1)
end
if outcome == 'retry' then
  local next = now + tonumber(ARGV[6])
  redis.call('HSET', d, 'code', ARGV[5], 'next', string.format('%.3f', next))
  redis.call('ZADD', KEYS[1], string.format('%.6f', next), member)
  redis.call('HINCRBY', KEYS[2], 'retried', 1)
  return false
end
redis.call('HSET', d, 'status', outcome, 'code', ARGV[5], 'next', '')
if redis.call('ZSCORE', tag .. ':wh:log:' .. redis.call('HGET', d, 'webhook'), did) then
  redis.call('EXPIRE', d, tonumber(ARGV[11]))
else
  redis.call('DEL', d)
end
redis.call('LPOP', q)
redis.call('HINCRBY', KEYS[2], 'pending', -1)
redis.call('HINCRBY', KEYS[2], outcome, 1)
if ARGV[8] ~= '' then
  redis.call('HINCRBY', KEYS[2], ARGV[8], 1)
  redis.call('HINCRBYFLOAT', KEYS[2], 'latency_sum', ARGV[9])
end
return head(tag, KEYS[1], member, now, tonumber(ARGV[10])) or false
"""
)

# KEYS: the shard's due and stats keys. ARGV: tag, webhook, delivery id. Queues the delivery
# again (at the end of its match's queue); answers 0 when it is not that webhook's.
REDELIVER = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local tag, hook, did = ARGV[1], ARGV[2], ARGV[3]
local d = tag .. ':wh:d:' .. did
if redis.call('HGET', d, 'webhook') ~= hook then return 0 end
if redis.call('HGET', d, 'status') == 'pending' then return 1 end
redis.call('PERSIST', d)
redis.call('HSET', d, 'status', 'pending', 'tries', 0, 'next', string.format('%.3f', now))
local member = hook .. ':' .. redis.call('HGET', d, 'match_id')
redis.call('RPUSH', tag .. ':wh:q:' .. member, did)
redis.call('ZADD', KEYS[1], 'NX', string.format('%.6f', now), member)
redis.call('HINCRBY', KEYS[2], 'pending', 1)
return 1
"""

# KEYS: a shard's reader lease. ARGV: the consumer, the lease in ms. Answers 2 when the
# consumer takes the lease now, 1 when it held it (renewed), 0 when another holds it.
HOLD = """
local held = redis.call('GET', KEYS[1])
if not held then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 2
end
if held == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
"""

# KEYS: a shard's reader lease. ARGV: the consumer. Gives the lease up if it holds it.
RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0
"""

# KEYS: a hash. ARGV: field, value. Sets the field only if it exists.
_REPLACE = """
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
end
"""

# KEYS: a webhook's log on one shard. ARGV: tag, limit. Its newest deliveries' fields.
LOG = """
local ids = redis.call('ZREVRANGE', KEYS[1], 0, tonumber(ARGV[2]) - 1)
local out = {}
for _, did in ipairs(ids) do
  local d = redis.call('HMGET', ARGV[1] .. ':wh:d:' .. did, 'type', 'match_id', 'status',
                       'attempts', 'code', 'next', 'created')
  if d[1] then out[#out + 1] = {did, d[1], d[2], d[3], d[4], d[5], d[6], d[7]} end
end
return out
"""


def shard_tag(shard: int) -> str:
    return "{s" + str(shard) + "}"


def notify_args(notices: Notices | None, tag: str) -> list[Any]:
    """The commit script's arguments for :data:`NOTIFY_LUA` (appended after the others)."""
    if notices is None:
        return [""]
    match_id = notices.match_id
    argv: list[Any] = [notices.app, tag, str(OUTBOX_DAYS * 86400), str(len(notices.notices))]
    argv += [notice.compact(match_id) for notice in notices.notices]
    warn = notices.warn
    if warn is None:
        argv.append("")
    elif len(warn) == 2:
        argv += [repr(warn[0]), warn[1].compact(match_id)]
    else:
        argv.append("-")
    return argv


@dataclass(frozen=True)
class Webhook:
    """A registered webhook; ``secret`` is ``whsec_`` + base64 and never shown again."""

    id: str
    app: str
    url: str
    events: tuple[str, ...]
    secret: str
    created_at: float
    disabled: bool = False

    def public(self) -> dict[str, Any]:
        """What the API shows (never the secret)."""
        return {
            "id": self.id,
            "url": self.url,
            "events": list(self.events),
            "created_at": self.created_at,
            "disabled": self.disabled,
        }

    def __repr__(self) -> str:
        return f"Webhook(id={self.id!r}, app={self.app!r}, url={self.url!r})"

    def _json(self) -> str:
        return jsoncodec.dumps(
            {
                "id": self.id,
                "url": self.url,
                "events": list(self.events),
                "secret": self.secret,
                "created_at": self.created_at,
                "disabled": self.disabled,
            }
        ).decode()

    @classmethod
    def _from(cls, app: str, raw: str) -> Webhook:
        held = jsoncodec.loads(raw)
        return cls(
            held["id"],
            app,
            held["url"],
            tuple(held["events"]),
            held["secret"],
            float(held["created_at"]),
            bool(held.get("disabled")),
        )


@dataclass(frozen=True)
class OutboxEntry:
    """One notification read from an app's outbox on a shard; ``stored`` is its compact
    form (:meth:`service.notices.Notice.compact`) or, written before that form, its body."""

    shard: int
    app: str
    entry_id: str
    match_id: str
    stored: str

    @classmethod
    def of(cls, shard: int, app: str, entry_id: str, fields: dict[str, str]) -> OutboxEntry:
        """The entry of the stream fields ``fields`` (``m``, ``c``; or ``m``, ``t``, ``b``)."""
        return cls(shard, app, entry_id, fields["m"], fields.get("c") or fields["b"])

    @cached_property
    def _expanded(self) -> tuple[str, str]:
        return expand(self.match_id, self.stored)

    @property
    def type(self) -> str:
        return self._expanded[0]

    @property
    def body(self) -> str:
        """The JSON text delivered and streamed."""
        return self._expanded[1]

    @property
    def created_ms(self) -> int:
        return int(self.entry_id.partition("-")[0])


@dataclass(frozen=True)
class Claimed:
    """A delivery a dispatcher holds the lease of: send it, then :meth:`Notifications.finish`."""

    shard: int
    member: str
    id: str
    webhook: str
    type: str
    match_id: str
    body: str
    tries: int
    created_ms: int
    app: str


@dataclass(frozen=True)
class Delivery:
    """A delivery as the deliveries log shows it."""

    id: str
    type: str
    match_id: str
    status: str
    attempts: int
    last_status_code: int | None
    next_attempt_at: float | None
    created_ms: int

    def public(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": self.type,
            "match_id": self.match_id,
            "status": self.status,
            "attempts": self.attempts,
            "last_status_code": self.last_status_code,
            "next_attempt_at": self.next_attempt_at,
            "created_at": self.created_ms / 1000,
        }


def delivery_id(shard: int, entry_id: str, webhook: str) -> str:
    """The ``webhook-id`` of an outbox entry's delivery to ``webhook`` (deterministic, so a
    claimed entry fanned out again makes the same deliveries); it names its shard."""
    return f"msg_{shard}_{entry_id.replace('-', '_')}_{webhook.removeprefix('wh_')}"


def shard_of_delivery(delivery: str) -> int | None:
    parts = delivery.split("_")
    if len(parts) != 5 or parts[0] != "msg" or not parts[1].isdigit():
        return None
    shard = int(parts[1])
    return shard if 0 <= shard < 32 else None


class Notifications:
    """Webhooks, deliveries and outboxes on the store's topology (see the module)."""

    def __init__(self, topology: Topology, *, shards: int = 32) -> None:
        self.topology = topology
        self.shards = shards

    # -- webhooks ---------------------------------------------------------------------------

    def register(self, app: str, url: str, events: Sequence[str], now: float) -> Webhook:
        """A new webhook of ``app`` with a fresh secret."""
        secret = "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()
        hook = Webhook("wh_" + secrets.token_hex(8), app, url, tuple(events), secret, now)
        self._call(lambda: self.topology.client.hset(REGISTRY + app, hook.id, hook._json()))
        return hook

    def webhooks(self, app: str) -> list[Webhook]:
        """``app``'s webhooks, oldest first."""
        held = self._call(lambda: self.topology.client.hgetall(REGISTRY + app))
        hooks = [Webhook._from(app, raw) for raw in held.values()]
        return sorted(hooks, key=lambda hook: (hook.created_at, hook.id))

    def webhook(self, app: str, webhook_id: str) -> Webhook | None:
        """``app``'s webhook ``webhook_id`` (None: none of ``app``'s)."""
        raw = self._call(lambda: self.topology.client.hget(REGISTRY + app, webhook_id))
        return None if raw is None else Webhook._from(app, raw)

    def delete(self, app: str, webhook_id: str) -> bool:
        """Forget the webhook; its pending deliveries are dropped when their turn comes."""
        return bool(self._call(lambda: self.topology.client.hdel(REGISTRY + app, webhook_id)))

    def disable(self, hook: Webhook) -> None:
        """Mark ``hook`` disabled (its receiver answered 410 Gone)."""
        gone = Webhook(hook.id, hook.app, hook.url, hook.events, hook.secret, hook.created_at, True)
        key = REGISTRY + hook.app
        self._call(lambda: self.topology.eval(_REPLACE, [key], [hook.id, gone._json()]))

    # -- deliveries -------------------------------------------------------------------------

    def deliveries(self, webhook_id: str, *, limit: int) -> list[Delivery]:
        """The webhook's recent deliveries, newest first (every shard's log, merged)."""
        found: list[Delivery] = []
        for shard in range(self.shards):
            tag = shard_tag(shard)
            key = f"{tag}:wh:log:{webhook_id}"
            rows = self._call(partial(self.topology.eval, LOG, [key], [tag, limit]))
            for row in rows:
                did, kind, match_id, status, attempts, code, when, created = row
                found.append(
                    Delivery(
                        did,
                        kind,
                        match_id,
                        status,
                        int(attempts or 0),
                        int(code) if code else None,
                        float(when) if when else None,
                        int(created),
                    )
                )
        found.sort(key=lambda d: (d.created_ms, d.id), reverse=True)
        return found[:limit]

    def redeliver(self, webhook_id: str, delivery: str) -> bool:
        """Queue ``delivery`` of ``webhook_id`` again; False when there is no such one."""
        shard = shard_of_delivery(delivery)
        if shard is None:
            return False
        tag = shard_tag(shard)
        keys = [f"{tag}:wh:due", f"{tag}:wh:stats"]
        done = self._call(lambda: self.topology.eval(REDELIVER, keys, [tag, webhook_id, delivery]))
        return bool(done)

    def fan_out(
        self, entry: OutboxEntry, hooks: Iterable[Webhook], *, lease: float, take: int
    ) -> list[Claimed]:
        """Make ``entry``'s deliveries to ``hooks`` and acknowledge it, in one step; answer
        up to ``take`` of them due now, leased to the caller for ``lease`` seconds."""
        tag = shard_tag(entry.shard)
        pairs: list[str] = []
        for hook in hooks:
            pairs += [hook.id, delivery_id(entry.shard, entry.entry_id, hook.id)]
        argv = [
            tag,
            f"{tag}:out:{entry.app}",
            entry.entry_id,
            entry.match_id,
            entry.type,
            entry.stored,
            str(entry.created_ms),
            str(LOG_KEPT),
            entry.app,
            repr(lease),
            str(max(0, take)),
            *pairs,
        ]
        keys = [f"{tag}:wh:due", f"{tag}:wh:stats"]
        rows = self._call(lambda: self.topology.eval(FANOUT, keys, argv))
        return [_claimed(entry.shard, row) for row in rows]

    def claim(self, shard: int, *, lease: float, limit: int) -> list[Claimed]:
        """Lease up to ``limit`` due queues of ``shard`` and answer their heads."""
        tag = shard_tag(shard)
        rows = self._call(
            lambda: self.topology.eval(CLAIM, [f"{tag}:wh:due"], [tag, repr(lease), limit])
        )
        return [_claimed(shard, row) for row in rows]

    def finish(
        self,
        claimed: Claimed,
        outcome: str,
        *,
        code: int | None,
        sent: bool,
        delay: float = 0.0,
        latency: float | None = None,
        lease: float = 30.0,
    ) -> Claimed | None:
        """Record the attempt at ``claimed``: ``delivered``, ``retry`` (after ``delay``) or
        ``dead``; answer the queue's next head (leased) when it is due now."""
        tag = shard_tag(claimed.shard)
        bucket = ""
        if latency is not None:
            bucket = "le_" + next((str(b) for b in LATENCY_BUCKETS if latency <= b), "inf")
        argv = [
            tag,
            claimed.member,
            claimed.id,
            outcome,
            "" if code is None else str(code),
            repr(delay),
            "1" if sent else "0",
            bucket,
            repr(latency or 0.0),
            repr(lease),
            str(FINISHED_KEPT),
        ]
        keys = [f"{tag}:wh:due", f"{tag}:wh:stats"]
        row = self._call(lambda: self.topology.eval(FINISH, keys, argv))
        return _claimed(claimed.shard, row) if row else None

    def stats(self) -> dict[str, float]:
        """The sums over every shard of the stats hashes (see :data:`FINISH`)."""
        total: dict[str, float] = {}
        for shard in range(self.shards):
            key = f"{shard_tag(shard)}:wh:stats"
            for name, value in self._call(partial(self.topology.client.hgetall, key)).items():
                total[name] = total.get(name, 0.0) + float(value)
        return total

    def hold_shard(self, shard: int, consumer: str, *, lease: float) -> int:
        """Take or renew the lease on reading ``shard``'s outboxes: 2 taken now, 1 renewed,
        0 another dispatcher holds it. One reader per shard keeps the outbox's order: a new
        holder first takes over what earlier readers left unacknowledged."""
        key = f"{shard_tag(shard)}:wh:reader"
        argv = [consumer, str(int(lease * 1000))]
        return int(self._call(lambda: self.topology.eval(HOLD, [key], argv)))

    def release_shard(self, shard: int, consumer: str) -> None:
        key = f"{shard_tag(shard)}:wh:reader"
        self._call(lambda: self.topology.eval(RELEASE, [key], [consumer]))

    # -- the sweeper's warnings ---------------------------------------------------------------

    def send_due_warnings(self, *, limit: int = 100) -> int:
        """Move every due ``turn.expiring`` into its app's outbox; return how many."""
        sent = 0
        for shard in range(self.shards):
            tag = shard_tag(shard)
            keys = [f"{tag}:warn", f"{tag}:warnb"]
            argv = [limit, tag, OUTBOX_DAYS * 86400]
            try:
                sent += int(self._call(partial(self.topology.eval, WARN_DUE, keys, argv)))
            except StoreUnavailable as error:
                log.warning("warnings of shard %s unreadable: %s", tag, error)
        return sent

    # -- readers -------------------------------------------------------------------------------

    def outbox_reader(self, shard: int, apps: Sequence[str], consumer: str) -> OutboxReader:
        return OutboxReader(self, shard, tuple(apps), consumer)

    def feed_reader(self, app: str, positions: Sequence[str] | None) -> FeedReader:
        return FeedReader(self, app, positions)

    def _call(self, call: Callable[[], T]) -> T:
        try:
            return call()
        except _FAILURES as error:
            raise StoreUnavailable(f"Redis: {type(error).__name__}: {error}") from error


def _claimed(shard: int, row: Sequence[Any]) -> Claimed:
    member, did, hook, kind, match_id, stored, tries, created, app = row
    return Claimed(
        shard,
        member,
        did,
        hook or "",
        kind or "",
        match_id or "",
        expand(match_id or "", stored)[1] if stored else "",
        int(tries or 0),
        int(created or 0),
        app or "",
    )


def _stream_entries(answer: Any) -> list[tuple[str, list[tuple[str, dict[str, str]]]]]:
    """``XREAD``/``XREADGROUP``'s answer as (stream, entries) pairs (RESP2 or RESP3)."""
    if not answer:
        return []
    if isinstance(answer, dict):
        return [(name, list(value[0])) for name, value in answer.items()]
    return [(name, list(entries)) for name, entries in answer]


class OutboxReader:
    """A dispatcher's reader of one shard's outboxes (one connection of its own)."""

    def __init__(self, notes: Notifications, shard: int, apps: tuple[str, ...], consumer: str):
        self.notes = notes
        self.shard = shard
        self.apps = apps
        self.consumer = consumer
        self.tag = shard_tag(shard)
        self.keys = {f"{self.tag}:out:{app}": app for app in apps}
        self._client: Any = None

    def _connection(self, block: float) -> Any:
        if self._client is None:
            client = self.notes.topology.dedicated(
                f"{self.tag}:wh:due",
                read_timeout=block + 5.0,
                name=f"dispatch:{self.shard}",
            )
            for key in self.keys:
                try:
                    client.xgroup_create(key, GROUP, id="0", mkstream=True)
                except ResponseError as error:
                    if "BUSYGROUP" not in str(error):
                        raise
            self._client = client
        return self._client

    def read(self, *, block: float, count: int = 100) -> list[OutboxEntry]:
        """New entries for this consumer, waiting up to ``block`` seconds."""
        if not self.keys:
            time.sleep(block)
            return []
        try:
            client = self._connection(block)
            answer = client.xreadgroup(
                GROUP,
                self.consumer,
                {key: ">" for key in self.keys},
                count=count,
                block=max(1, int(block * 1000)),
            )
        except _FAILURES as error:
            self.close()
            raise StoreUnavailable(f"outbox {self.tag}: {type(error).__name__}") from error
        return self._entries(_stream_entries(answer))

    def claim_stale(self, *, idle: float, count: int = 100) -> list[OutboxEntry]:
        """Entries another consumer read but did not acknowledge for ``idle`` seconds."""
        found: list[tuple[str, list[tuple[str, dict[str, str]]]]] = []
        try:
            client = self._connection(1.0)
            for key in self.keys:
                answer = client.xautoclaim(
                    key, GROUP, self.consumer, int(idle * 1000), start_id="0-0", count=count
                )
                found.append((key, [entry for entry in answer[1] if entry and entry[1]]))
        except _FAILURES as error:
            self.close()
            raise StoreUnavailable(f"outbox {self.tag}: {type(error).__name__}") from error
        return self._entries(found)

    def _entries(
        self, streams: list[tuple[str, list[tuple[str, dict[str, str]]]]]
    ) -> list[OutboxEntry]:
        entries = []
        for key, items in streams:
            app = self.keys[key]
            for entry_id, fields in items:
                entries.append(OutboxEntry.of(self.shard, app, entry_id, fields))
        return entries

    def close(self) -> None:
        if self._client is not None:
            with contextlib.suppress(*_FAILURES, OSError):
                self._client.close()
            self._client = None


class FeedReader:
    """The app feed: every shard's outbox of one app, read after ``positions`` (one entry
    id per shard; ``None``: from now)."""

    def __init__(self, notes: Notifications, app: str, positions: Sequence[str] | None) -> None:
        self.notes = notes
        self.app = app
        self.keys = [f"{shard_tag(shard)}:out:{app}" for shard in range(notes.shards)]
        self._client: Any = None
        if positions is None:
            positions = [self._last(key) for key in self.keys]
        self.positions = list(positions)

    def _last(self, key: str) -> str:
        last = self.notes._call(lambda: self.notes.topology.client.xrevrange(key, "+", "-", 1))
        return str(last[0][0]) if last else "0-0"

    def read(self, *, block: float, count: int = 100) -> list[tuple[int, OutboxEntry]]:
        """Entries after the positions (each with its shard), waiting up to ``block``; the
        positions move past them."""
        try:
            if isinstance(self.notes.topology, ClusterTopology):
                streams = self._read_each(count)
                if not streams:
                    time.sleep(min(block, 0.1))
            else:
                if self._client is None:
                    self._client = self.notes.topology.dedicated(
                        self.keys[0], read_timeout=block + 5.0, name=f"feed:{self.app}"
                    )
                answer = self._client.xread(
                    dict(zip(self.keys, self.positions, strict=True)),
                    count=count,
                    block=max(1, int(block * 1000)),
                )
                streams = _stream_entries(answer)
        except (OSError, *_FAILURES) as error:
            raise StoreUnavailable(f"feed of {self.app}: {type(error).__name__}") from error
        return self._entries(streams)

    def read_now(self, *, count: int = 100) -> list[tuple[int, OutboxEntry]]:
        """Entries after the positions, without waiting (on the shared pool, no connection
        of its own): a follower of the app's feed catching up (``service/fanout.py``)."""
        try:
            if isinstance(self.notes.topology, ClusterTopology):
                streams = self._read_each(count)
            else:
                answer = self.notes.topology.client.xread(
                    dict(zip(self.keys, self.positions, strict=True)), count=count
                )
                streams = _stream_entries(answer)
        except (OSError, *_FAILURES) as error:
            raise StoreUnavailable(f"feed of {self.app}: {type(error).__name__}") from error
        return self._entries(streams)

    def _entries(
        self, streams: list[tuple[str, list[tuple[str, dict[str, str]]]]]
    ) -> list[tuple[int, OutboxEntry]]:
        found: list[tuple[int, OutboxEntry]] = []
        index = {key: shard for shard, key in enumerate(self.keys)}
        for key, items in streams:
            shard = index[key]
            for entry_id, fields in items:
                found.append((shard, OutboxEntry.of(shard, self.app, entry_id, fields)))
        return found

    def _read_each(self, count: int) -> list[tuple[str, list[tuple[str, dict[str, str]]]]]:
        streams = []
        for key, position in zip(self.keys, self.positions, strict=True):
            answer = self.notes.topology.client.xread({key: position}, count=count)
            streams += _stream_entries(answer)
        return streams

    def close(self) -> None:
        if self._client is not None:
            with contextlib.suppress(*_FAILURES, OSError):
                self._client.close()
            self._client = None
