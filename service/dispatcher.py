"""The dispatcher: delivers the apps' notifications to their webhooks.

Run beside gunicorn and the sweeper: ``python -m service.dispatcher`` (as many replicas as
you like). Each replica reads every shard's outboxes (:mod:`service.store.outbox`) through
the Redis consumer group ``dispatch``, fans each notification out into one delivery per
subscribed webhook, and sends the due deliveries, one at a time per match and webhook (a
lease on the queue's head), in order, signed (:mod:`service.webhooks.send`).

- What comes of an attempt (delivered, retried after a delay, dead; a 410 disables the
  webhook) is :mod:`service.webhooks.policy`'s verdict.
- One replica at a time reads a shard's outboxes (a lease of ``SHARD_LEASE`` seconds, renewed
  each read), so each match's events are fanned out in order; deliveries are sent by any.
- A replica killed mid-delivery loses nothing: its outbox entries stay pending in the group
  until the shard's next reader takes them over (before anything newer), and its leases on
  deliveries run out so another sends them again, with the same ``webhook-id`` (receivers
  deduplicate on it).
- The secret and the bodies never reach a log line.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import signal
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from service import observability
from service.appkeys import AppKeys
from service.bootstrap import bootstrap
from service.config import Settings
from service.store import SHARDS, StoreError
from service.store.notify import Claimed, Notifications, Webhook
from service.store.outage import Outage
from service.store.outbox import OutboxEntry, OutboxReader
from service.webhooks.policy import Policy
from service.webhooks.send import Attempt, post, signed_headers
from service.webhooks.targets import BadTarget, parse_target, resolve

__all__ = ["Dispatcher", "main"]

log = logging.getLogger("service.dispatcher")

POLL_SECONDS = 0.5  # the longest an outbox read blocks: how late a retry may start
SHARD_LEASE = 5.0  # seconds a replica holds a shard's outboxes without renewing
TAKE_OVER_BATCH = 100  # entries taken over at a time (XAUTOCLAIM COUNT)
HOOK_FRESH = 1.0  # seconds a webhook read from Redis is used as is (a deletion takes that long)


class Dispatcher:
    """Fans out and delivers notifications until stopped (see the module)."""

    def __init__(
        self, notes: Notifications, settings: Settings, *, consumer: str | None = None
    ) -> None:
        self.notes = notes
        self.policy = Policy.from_settings(settings)
        self.timeout = settings.webhook_timeout_seconds
        self.lease = self.timeout * 1.5 + 2.0
        self.test_mode = settings.test_mode
        self.apps = AppKeys.from_settings(settings).names
        self.concurrency = max(1, settings.webhook_concurrency)
        self.consumer = consumer or (f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}")
        self.stopping = threading.Event()
        self.outage = Outage(log, "dispatcher")  # every shard's reader tells it
        self._pool = ThreadPoolExecutor(self.concurrency, thread_name_prefix="deliver")
        self._lock = threading.Lock()
        self._in_flight = 0
        self._hooks: dict[str, tuple[Webhook, float]] = {}  # id -> (webhook, read at)

    # -- running -----------------------------------------------------------------------------

    def run(self) -> None:
        """Serve every shard until :meth:`stop`; then let deliveries under way finish."""
        threads = [
            threading.Thread(target=self._shard_loop, args=(shard,), daemon=True)
            for shard in range(SHARDS)
        ]
        for thread in threads:
            thread.start()
        self.stopping.wait()
        for thread in threads:
            thread.join()
        self._pool.shutdown(wait=True)

    def stop(self, *_: object) -> None:
        self.stopping.set()

    def _shard_loop(self, shard: int) -> None:
        """Read the shard's outboxes while this replica holds their lease (taking over what
        earlier readers left first, so the outbox's order holds), and send its due deliveries
        in any case."""
        reader = self.notes.outbox_reader(shard, self.apps, self.consumer)
        backoff = POLL_SECONDS
        take_over = True
        try:
            while not self.stopping.is_set():
                try:
                    held = self.notes.hold_shard(shard, self.consumer, lease=SHARD_LEASE)
                    if held:
                        if held == 2 or take_over:
                            self._take_over(reader)
                            take_over = False
                        self.fan_out(reader.read(block=POLL_SECONDS))
                    else:
                        take_over = True
                    self.claim(shard)
                    if not held:
                        self.stopping.wait(POLL_SECONDS)
                    backoff = POLL_SECONDS
                    self.outage.answered(f"shard {shard}")
                except StoreError as error:
                    self.outage.failed(f"shard {shard}", error)  # logged once an outage
                    take_over = True  # what this reader left unacknowledged comes first
                    self.stopping.wait(backoff)
                    backoff = min(backoff * 2, 5.0)
        finally:
            reader.close()
            with contextlib.suppress(StoreError):
                self.notes.release_shard(shard, self.consumer)

    def _take_over(self, reader: OutboxReader) -> None:
        """Fan out, oldest first, every entry read but not acknowledged by any reader."""
        while True:
            entries = reader.claim_stale(idle=0)
            self.fan_out(entries)
            if len(entries) < TAKE_OVER_BATCH:
                return

    # -- the steps ---------------------------------------------------------------------------

    def fan_out(self, entries: list[OutboxEntry]) -> None:
        """One delivery per webhook subscribed to each entry (made before it was); those due
        now are sent at once, as far as there are free senders."""
        hooks: dict[str, list[Webhook]] = {}
        for entry in entries:
            if entry.app not in hooks:
                hooks[entry.app] = self.notes.webhooks(entry.app)
                now = time.monotonic()
                self._hooks.update({hook.id: (hook, now) for hook in hooks[entry.app]})
            subscribed = [
                hook
                for hook in hooks[entry.app]
                if entry.type in hook.events
                and not hook.disabled
                and hook.created_at * 1000 <= entry.created_ms
            ]
            due = self.notes.fan_out(entry, subscribed, lease=self.lease, take=self._free())
            self._send_all(due)

    def claim(self, shard: int) -> None:
        """Lease the shard's due deliveries, as many as there are free senders."""
        free = self._free()
        if free > 0:
            self._send_all(self.notes.claim(shard, lease=self.lease, limit=free))

    def _free(self) -> int:
        with self._lock:
            return self.concurrency - self._in_flight

    def _send_all(self, claimed: list[Claimed]) -> None:
        for one in claimed:
            with self._lock:
                self._in_flight += 1
            self._pool.submit(self._deliver, one)

    def _webhook(self, app: str, webhook_id: str) -> Webhook | None:
        """The webhook as read at most :data:`HOOK_FRESH` seconds ago (a fan-out reads them
        all), else from Redis."""
        held = self._hooks.get(webhook_id)
        if held is not None and time.monotonic() - held[1] <= HOOK_FRESH:
            return held[0]
        hook = self.notes.webhook(app, webhook_id)
        if hook is not None:
            self._hooks[webhook_id] = (hook, time.monotonic())
        return hook

    def _deliver(self, claimed: Claimed | None) -> None:
        try:
            while claimed is not None:
                claimed = self.attempt(claimed)
        except StoreError as error:  # the lease runs out: another attempt comes
            log.warning("delivery bookkeeping failed: %s", error)
        except Exception:
            log.exception("delivery failed unexpectedly")
        finally:
            with self._lock:
                self._in_flight -= 1

    def attempt(self, claimed: Claimed) -> Claimed | None:
        """Send ``claimed`` once and record what came of it; answer the queue's next head
        when it is due now (this sender keeps the lease)."""
        hook = self._webhook(claimed.app, claimed.webhook)
        if hook is None or hook.disabled:
            log.info(
                "delivery dropped: webhook gone or disabled",
                extra={"webhook": claimed.webhook, "delivery": claimed.id},
            )
            return self.notes.finish(claimed, "dead", code=None, sent=False, lease=self.lease)
        attempt = self._send(hook, claimed)
        fields = {
            "webhook": hook.id,
            "delivery": claimed.id,
            "event_type": claimed.type,
            "status": attempt.status,
            "error": attempt.error,
        }
        verdict = self.policy.judge(attempt, tries=claimed.tries + 1)
        latency = None
        if verdict.outcome == "delivered":
            latency = max(0.0, time.time() - claimed.created_ms / 1000)
            log.info("delivered", extra=fields)
        elif verdict.disable:
            log.info("receiver answered 410 Gone: webhook disabled", extra=fields)
            self.notes.disable(hook)
            self._hooks.pop(hook.id, None)
        elif verdict.outcome == "dead":
            log.warning("delivery dead after its last attempt", extra=fields)
        else:
            log.info("delivery failed; retrying in %.1f s", verdict.delay, extra=fields)
        return self.notes.finish(
            claimed,
            verdict.outcome,
            code=attempt.status,
            sent=True,
            delay=verdict.delay,
            latency=latency,
            lease=self.lease,
        )

    def _send(self, hook: Webhook, claimed: Claimed) -> Attempt:
        try:
            target = parse_target(hook.url, test_mode=self.test_mode)
            address = resolve(target, test_mode=self.test_mode)
        except BadTarget as error:
            return Attempt(None, error=str(error))
        headers = signed_headers(hook.secret, claimed.id, claimed.body, now=time.time())
        return post(target, address, claimed.body, headers, timeout=self.timeout)


def main() -> None:
    """Entry point: dispatch with the service's settings until SIGINT/SIGTERM."""
    observability.configure_logging()
    services = bootstrap()
    dispatcher = Dispatcher(services.notifications, services.settings)
    signal.signal(signal.SIGTERM, dispatcher.stop)
    signal.signal(signal.SIGINT, dispatcher.stop)
    log.info("dispatcher started as %s for apps %s", dispatcher.consumer, list(dispatcher.apps))
    started = time.monotonic()
    dispatcher.run()
    log.info("dispatcher stopped after %.0f s", time.monotonic() - started)


if __name__ == "__main__":
    main()
