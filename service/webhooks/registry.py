"""An app's webhooks: the use cases the API answers, one method each (register, list, get,
delete, the deliveries log, redelivery, a ping and a test event), as
:class:`service.referee.Referee` is for matches.

Redis is :class:`service.store.notify.Notifications`; the clock is Redis's
(:meth:`service.store.MatchStore.now`), as for every time the service stores.
"""

from __future__ import annotations

import re
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from service.notices import EVENT_TYPES, PING, ping_body, sample_body
from service.store.notify import Delivery, Notifications, Webhook
from service.webhooks import DeliveryNotFound, TooManyWebhooks, WebhookNotFound
from service.webhooks.send import Attempt, post, signed_headers
from service.webhooks.targets import BadTarget, check_target, parse_target, resolve

__all__ = ["MAX_WEBHOOKS", "Check", "Webhooks"]

MAX_WEBHOOKS = 16  # an app's
_ID = re.compile(r"[A-Za-z0-9_]{1,128}")  # of a webhook or a delivery


@dataclass(frozen=True)
class Check:
    """A ping or test event sent once, now: its ``webhook-id``, its type and what came of it."""

    id: str
    type: str
    attempt: Attempt

    def public(self) -> dict[str, Any]:
        """What the API answers."""
        return {
            "id": self.id,
            "type": self.type,
            "delivered": self.attempt.delivered,
            "status_code": self.attempt.status,
            "error": self.attempt.error,
        }


class Webhooks:
    """The webhooks of the apps, on their store.

    ``test_mode`` lets a webhook point at loopback and private addresses, over ``http`` too,
    and at a name that does not resolve yet (see :mod:`service.webhooks.targets`);
    ``timeout``, the longest a ping or test event waits for the receiver.
    """

    def __init__(
        self,
        notes: Notifications,
        *,
        now: Callable[[], float],
        test_mode: bool = False,
        timeout: float = 10.0,
    ) -> None:
        self.notes = notes
        self.now = now
        self.test_mode = test_mode
        self.timeout = timeout

    @property
    def shards(self) -> int:
        """How many outboxes an app's notifications are spread over (its feed's position
        names one place in each)."""
        return self.notes.shards

    def register(self, app: str, url: str, events: Sequence[str] | None = None) -> Webhook:
        """A new webhook of ``app`` for ``events`` (every type when none is named), with a
        fresh secret. Raise :class:`BadTarget` for a URL it may not call and
        :class:`TooManyWebhooks` beyond :data:`MAX_WEBHOOKS`."""
        check_target(parse_target(url, test_mode=self.test_mode), test_mode=self.test_mode)
        chosen = list(dict.fromkeys(events or EVENT_TYPES))
        hook = self.notes.register(app, url, chosen, self.now(), most=MAX_WEBHOOKS)
        if hook is None:
            raise TooManyWebhooks(f"an app has at most {MAX_WEBHOOKS} webhooks: delete one first")
        return hook

    def of_app(self, app: str) -> list[Webhook]:
        """``app``'s webhooks, oldest first."""
        return self.notes.webhooks(app)

    def get(self, app: str, webhook_id: str) -> Webhook:
        """``app``'s webhook ``webhook_id``; raise :class:`WebhookNotFound` (another app's
        is not found either)."""
        hook = self.notes.webhook(app, webhook_id) if _ID.fullmatch(webhook_id) else None
        if hook is None:
            raise WebhookNotFound(f"this app has no webhook {webhook_id}")
        return hook

    def delete(self, app: str, webhook_id: str) -> None:
        """Forget ``app``'s webhook (its pending deliveries are dropped); raise
        :class:`WebhookNotFound`."""
        self.notes.delete(app, self.get(app, webhook_id).id)

    def deliveries(self, app: str, webhook_id: str, *, limit: int) -> list[Delivery]:
        """The webhook's latest ``limit`` deliveries, newest first; raise
        :class:`WebhookNotFound`."""
        return self.notes.deliveries(self.get(app, webhook_id).id, limit=limit)

    def redeliver(self, app: str, webhook_id: str, delivery_id: str) -> None:
        """Queue the delivery again; raise :class:`WebhookNotFound` or
        :class:`DeliveryNotFound`."""
        hook = self.get(app, webhook_id)
        if not _ID.fullmatch(delivery_id) or not self.notes.redeliver(hook.id, delivery_id):
            raise DeliveryNotFound(f"webhook {hook.id} has no delivery {delivery_id}")

    def ping(self, app: str, webhook_id: str) -> Check:
        """Send a signed ``webhook.ping`` to ``app``'s webhook now, once (no retry, not in the
        deliveries log); raise :class:`WebhookNotFound`."""
        hook = self.get(app, webhook_id)
        return self._send_now(hook, PING, ping_body(hook.id, time.time()))

    def send_test(self, app: str, webhook_id: str, event_type: str) -> Check:
        """Send a signed sample of ``event_type`` marked ``"test": true`` to ``app``'s webhook
        now, once, whatever it subscribed to; raise :class:`WebhookNotFound`."""
        hook = self.get(app, webhook_id)
        return self._send_now(hook, event_type, sample_body(event_type, time.time()))

    def _send_now(self, hook: Webhook, event_type: str, body: str) -> Check:
        """One attempt to the address the target rules allow, as a delivery's."""
        message_id = "msg_check_" + secrets.token_hex(8)
        try:
            target = parse_target(hook.url, test_mode=self.test_mode)
            address = resolve(target, test_mode=self.test_mode)
        except BadTarget as error:
            return Check(message_id, event_type, Attempt(None, error=str(error)))
        headers = signed_headers(hook.secret, message_id, body, now=time.time())
        attempt = post(target, address, body, headers, timeout=self.timeout)
        return Check(message_id, event_type, attempt)
