"""The app factory: ``gunicorn 'service.app:create_app()'``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flask import Flask
from werkzeug.middleware.proxy_fix import ProxyFix

from service import observability, web
from service.api import (
    apps,
    backends,
    clock,
    errors,
    limits,
    matches,
    meld,
    meta,
    records,
    stream,
    webhooks,
)
from service.api.connections import WholeBody
from service.api.jsonprovider import OrjsonProvider
from service.api.rendered import RenderedViews
from service.api.routing import RoutedOnce
from service.bootstrap import bootstrap
from service.fanout import AppFeeds, Fanout
from service.referee import Records
from service.webhooks.metrics import DeliveryMetrics
from service.workers.threads import shutting_down

__all__ = ["create_app"]


def create_app(overrides: Mapping[str, Any] | None = None) -> Flask:
    """Build the app: settings from the environment, then ``overrides``, then resources.

    ``overrides`` holds :class:`Settings` field names (``redis_url``, ``test_mode``...).
    """
    services = bootstrap(overrides)
    settings = services.settings
    app = RoutedOnce(__name__)  # werkzeug's router leaves a cycle per call: service/api/routing.py
    if settings.trusted_proxies:
        n = settings.trusted_proxies
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=n, x_proto=n, x_host=n)  # type: ignore[method-assign]
    # A body still arriving after REQUEST_BODY_TIMEOUT is dropped (service/api/connections.py).
    app.wsgi_app = WholeBody(  # type: ignore[method-assign]
        app.wsgi_app,
        seconds=settings.request_body_timeout,
        max_bytes=settings.max_body_bytes,
        larger={records.VERIFY_PATH: max(records.VERIFY_MAX_BYTES, settings.max_body_bytes)},
    )
    app.config.update(
        REFEREE_SETTINGS=settings,
        MAX_CONTENT_LENGTH=settings.max_body_bytes,
        JSON_SORT_KEYS=False,
    )
    app.json = OrjsonProvider(app)
    app.extensions["store"] = services.store
    app.extensions["referee"] = services.referee
    app.extensions["records"] = Records(services.referee, visible=records.same_world)
    app.extensions["rendered_views"] = RenderedViews()
    # One reader per followed match feeds its streams and long-polls (service/fanout.py).
    app.extensions["fanout"] = Fanout(services.store, stopping=shutting_down)
    app.extensions["openapi_text"] = meta.SPEC_PATH.read_text(encoding="utf-8")
    observability.init_app(app)
    errors.init_app(app)
    apps.init_app(app)
    limits.init_app(app, storage_uri=services.limits_storage_uri)
    webhooks.init_app(
        app,
        webhooks=services.webhooks,
        # One reader per followed app feeds its listeners (service/fanout.py).
        feeds=AppFeeds(services.notifications, stopping=shutting_down),
        metrics=DeliveryMetrics(services.notifications),
    )
    for blueprint in (
        meta.blueprint,
        meld.blueprint,
        matches.blueprint,
        records.blueprint,
        clock.blueprint,
        backends.blueprint,
        stream.blueprint,
        webhooks.blueprint,
        web.blueprint,
    ):
        app.register_blueprint(blueprint)
    return app
