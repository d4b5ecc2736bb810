"""Webhooks: where they may point (:mod:`.targets`), how one delivery is sent and signed
(:mod:`.send`), and the refusals the API answers. The dispatcher is :mod:`service.dispatcher`;
Redis is :mod:`service.store.notify`."""

from __future__ import annotations

from service.webhooks.targets import BadTarget

__all__ = ["BadTarget", "DeliveryNotFound", "TooManyWebhooks", "WebhookNotFound"]


class WebhookNotFound(LookupError):
    """404: no webhook of the calling app has this id."""

    kind = "webhook-not-found"


class DeliveryNotFound(LookupError):
    """404: the webhook has no delivery with this id."""

    kind = "delivery-not-found"


class TooManyWebhooks(ValueError):
    """422: the app has as many webhooks as it may have."""

    kind = "too-many-webhooks"
