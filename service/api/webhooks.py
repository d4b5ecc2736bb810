"""Webhooks and the app feed (an app's key): register, list, get, delete, the deliveries log,
redelivery, a ping and a test event sent now, and ``GET /v1/feed``, one Server-Sent Events
stream of all the app's notifications.

What is delivered, and how, is :mod:`service.notices` and :mod:`service.dispatcher`; the
use cases are :class:`service.webhooks.registry.Webhooks`. The secret is answered once, by
the registration; never again, nor logged.

The feed reads the app's outboxes on every shard (:class:`service.store.outbox.FeedReader`),
once per worker for all the app's listeners (:class:`service.fanout.AppFeeds`): a hundred
listeners of one app cost one Redis connection per worker, not a hundred.
Each message's ``id`` is the position reached in every shard's outbox (32 entry ids, ``.``
between them; ``0`` for a shard with nothing yet), so a client that reconnects with
``Last-Event-ID`` resumes exactly after the last message it got, with no gap nor repeat;
without it, the feed starts with what happens from now on. Outboxes keep 7 days.
"""

from __future__ import annotations

import re
from typing import Any

from flask import Blueprint, Response, current_app, jsonify, request, url_for
from marshmallow import Schema, fields, validate
from prometheus_client.registry import Collector

from service.api import apps
from service.api.connections import admit
from service.api.errors import BadRequest
from service.api.extensions import webhooks
from service.api.parsing import load_body, load_query
from service.api.sse import event_stream, sse_response
from service.config import Settings
from service.fanout import AppFeeds, FeedEntry
from service.notices import EVENT_TYPES
from service.webhooks.registry import Webhooks

__all__ = [
    "blueprint",
    "feed_id",
    "init_app",
    "parse_feed_id",
]

blueprint = Blueprint("webhooks", __name__)
MAX_LOG = 100
_ENTRY = re.compile(r"0|[0-9]{1,15}(-[0-9]{1,10})?")


class Register(Schema):
    url = fields.String(required=True, validate=validate.Length(min=1, max=2048))
    events = fields.List(
        fields.String(validate=validate.OneOf(EVENT_TYPES)),
        validate=validate.Length(min=1, max=len(EVENT_TYPES)),
    )


class LogQuery(Schema):
    limit = fields.Integer(load_default=50, validate=validate.Range(min=1, max=MAX_LOG))


class TestEvent(Schema):
    type = fields.String(required=True, validate=validate.OneOf(EVENT_TYPES))


register_body, log_query, test_body = Register(), LogQuery(), TestEvent()


def _settings() -> Settings:
    settings: Settings = current_app.config["REFEREE_SETTINGS"]
    return settings


@blueprint.post("/v1/webhooks")
def register() -> tuple[Response, int, dict[str, str]]:
    """A new webhook; its secret is in this answer only."""
    app = apps.required_app()
    body = load_body(register_body)
    hook = webhooks().register(app, body["url"], body.get("events"))
    answer = {**hook.public(), "secret": hook.secret}
    location = url_for("webhooks.get_webhook", webhook_id=hook.id)
    return jsonify(answer), 201, {"Location": location}


@blueprint.get("/v1/webhooks")
def list_webhooks() -> dict[str, Any]:
    app = apps.required_app()
    return {"webhooks": [hook.public() for hook in webhooks().of_app(app)]}


@blueprint.get("/v1/webhooks/<webhook_id>")
def get_webhook(webhook_id: str) -> dict[str, Any]:
    return webhooks().get(apps.required_app(), webhook_id).public()


@blueprint.delete("/v1/webhooks/<webhook_id>")
def delete_webhook(webhook_id: str) -> tuple[str, int]:
    webhooks().delete(apps.required_app(), webhook_id)
    return "", 204


@blueprint.get("/v1/webhooks/<webhook_id>/deliveries")
def deliveries(webhook_id: str) -> dict[str, Any]:
    app = apps.required_app()
    limit = load_query(log_query)["limit"]
    found = webhooks().deliveries(app, webhook_id, limit=limit)
    return {"deliveries": [delivery.public() for delivery in found]}


@blueprint.post("/v1/webhooks/<webhook_id>/deliveries/<delivery_id>/redeliver")
def redeliver(webhook_id: str, delivery_id: str) -> tuple[Response, int]:
    webhooks().redeliver(apps.required_app(), webhook_id, delivery_id)
    return jsonify({"id": delivery_id, "status": "pending"}), 202


@blueprint.post("/v1/webhooks/<webhook_id>/ping")
def ping(webhook_id: str) -> Response:
    """Send a signed ``webhook.ping`` now and answer what came of it."""
    return jsonify(webhooks().ping(apps.required_app(), webhook_id).public())


@blueprint.post("/v1/webhooks/<webhook_id>/test")
def send_test(webhook_id: str) -> Response:
    """Send a signed sample of an event type, marked as a test (test mode or a sandbox key)."""
    app = apps.required_app()
    if not apps.may_use_test_features(app):
        raise apps.TestFeaturesOff(
            f"test events need a sandbox app's key ({Settings.variable('sandbox_keys')}) "
            "or test mode"
        )
    event_type = load_body(test_body)["type"]
    return jsonify(webhooks().send_test(app, webhook_id, event_type).public())


# -- the feed --------------------------------------------------------------------------------


def feed_id(positions: list[str]) -> str:
    """The SSE id of a feed message: every shard's position."""
    return ".".join("0" if p in ("0-0", "0") else p for p in positions)


def parse_feed_id(raw: str, shards: int) -> list[str]:
    """The positions in a ``Last-Event-ID`` in each of the ``shards`` outboxes (shards it
    does not name: from the start, so ``0`` reads everything kept); raise
    :class:`BadRequest` for a malformed one."""
    parts = raw.split(".")
    if len(parts) > shards or not all(_ENTRY.fullmatch(part) for part in parts):
        raise BadRequest(
            "Last-Event-ID is not an id of this feed (send the last id you received)",
            kind="bad-last-event-id",
        )
    parts += ["0"] * (shards - len(parts))
    return ["0-0" if part == "0" else part if "-" in part else part + "-0" for part in parts]


@blueprint.get("/v1/feed")
def feed() -> Response:
    """The app's notifications as Server-Sent Events, from ``Last-Event-ID`` or from now."""
    app = apps.required_app()
    raw = request.headers.get("Last-Event-ID")
    positions = parse_feed_id(raw, webhooks().shards) if raw is not None else None
    ticket = admit()  # a feed is an open stream like any other: the same caps
    settings = _settings()
    feeds: AppFeeds = current_app.extensions["app_feeds"]
    try:
        follower = feeds.follow(app, positions)
    except BaseException:
        ticket.close()
        raise
    reached = list(follower.positions)

    def write(found: list[FeedEntry]) -> str:
        """Each message's id is every shard's position once it has been read."""
        chunks = []
        for shard, entry in found:
            reached[shard] = entry.entry_id
            chunks.append(f"id: {feed_id(reached)}\nevent: {entry.type}\ndata: {entry.body}\n\n")
        return "".join(chunks)

    messages = event_stream(
        lambda: follower,
        request.environ.get("gunicorn.socket"),
        opening=f"feed of app {app}",
        write=write,
        keepalive=max(settings.stream_keepalive_seconds, 0.05),
        lifetime=settings.stream_max_seconds,
        name=f"feed of {app}",
    )
    return sse_response(messages, ticket)


def init_app(app: Any, *, webhooks: Webhooks, feeds: AppFeeds, metrics: Collector) -> None:
    """Give the app its webhooks (the use cases), the apps' feeds (one reader per followed
    app: service/fanout.py), and ``/metrics`` the delivery figures."""
    app.extensions["webhooks"] = webhooks
    app.extensions["app_feeds"] = feeds
    app.extensions.setdefault("metric_collectors", []).append(metrics)
