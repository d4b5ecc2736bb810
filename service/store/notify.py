"""Webhooks in Redis: the registry, the deliveries fanned out of the apps' outboxes (see
:mod:`service.store.outbox`), their queues, leases and log.

Every delivery key lives under the hash tag of its match's shard (``{s<k>}``, see
:mod:`service.store.keys`), beside the outbox it is fanned out of::

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
import logging
import secrets
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

from redis.exceptions import RedisClusterException, RedisError

from service import jsoncodec
from service.notices import expand
from service.store.errors import StoreUnavailable
from service.store.keys import SHARDS, shard_tag
from service.store.outage import Outage
from service.store.outbox import (
    OUTBOX_DAYS,
    WARN_DUE,
    FeedReader,
    OutboxEntry,
    OutboxReader,
    outbox_key,
)
from service.store.topology import Topology
from service.store.webhook_scripts import (
    CLAIM,
    FANOUT,
    FINISH,
    HOLD,
    LOG,
    REDELIVER,
    REGISTER,
    RELEASE,
    REPLACE,
)

__all__ = [
    "FINISHED_KEPT",
    "LATENCY_BUCKETS",
    "LOG_KEPT",
    "Claimed",
    "Delivery",
    "Notifications",
    "Webhook",
    "delivery_id",
    "shard_of_delivery",
]

log = logging.getLogger(__name__)
T = TypeVar("T")
_FAILURES = (RedisError, RedisClusterException)

LOG_KEPT = 200  # deliveries kept in a webhook's log, per shard (older finished ones go)
FINISHED_KEPT = 7 * 24 * 3600  # seconds a delivered or dead delivery in the log stays readable
REGISTRY = "{wh}:hooks:"
LATENCY_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 60.0, 600.0, 3600.0)


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
    return shard if 0 <= shard < SHARDS else None


class Notifications:
    """Webhooks, deliveries and outboxes on the store's topology (see the module)."""

    def __init__(self, topology: Topology, *, shards: int = SHARDS) -> None:
        self.topology = topology
        self.shards = shards

    # -- webhooks ---------------------------------------------------------------------------

    def register(
        self, app: str, url: str, events: Sequence[str], now: float, *, most: int
    ) -> Webhook | None:
        """A new webhook of ``app`` with a fresh secret, unless ``app`` has ``most`` already
        (``None``): counted and added in one script, so registrations at once keep the cap."""
        secret = "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()
        hook = Webhook("wh_" + secrets.token_hex(8), app, url, tuple(events), secret, now)
        argv = [hook.id, hook._json(), most]
        added = self._call(lambda: self.topology.eval(REGISTER, [REGISTRY + app], argv))
        return hook if int(added) else None

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
        self._call(lambda: self.topology.eval(REPLACE, [key], [hook.id, gone._json()]))

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
            outbox_key(tag, entry.app),
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

    def send_due_warnings(self, *, limit: int = 100, outage: Outage | None = None) -> int:
        """Move every due ``turn.expiring`` into its app's outbox; return how many. A shard
        that cannot be read is told to ``outage`` (or logged)."""
        sent = 0
        for shard in range(self.shards):
            tag = shard_tag(shard)
            keys = [f"{tag}:warn", f"{tag}:warnb"]
            argv = [limit, tag, OUTBOX_DAYS * 86400]
            part = f"warnings of shard {tag}"
            try:
                sent += int(self._call(partial(self.topology.eval, WARN_DUE, keys, argv)))
            except StoreUnavailable as error:
                if outage is None:
                    log.warning("%s unreadable: %s", part, error)
                else:
                    outage.failed(part, error)
            else:
                if outage is not None:
                    outage.answered(part)
        return sent

    # -- readers -------------------------------------------------------------------------------

    def outbox_reader(self, shard: int, apps: Sequence[str], consumer: str) -> OutboxReader:
        return OutboxReader(self.topology, shard, tuple(apps), consumer)

    def feed_reader(self, app: str, positions: Sequence[str] | None) -> FeedReader:
        return FeedReader(self.topology, app, positions, shards=self.shards)

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
