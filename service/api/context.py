"""The app and the request being served, read from Flask's context variables at once.

``current_app`` and ``request`` are werkzeug ``LocalProxy`` objects over Flask's context
variables (``flask.globals``: ``LocalProxy(_cv_app, "app")``, ``LocalProxy(_cv_request,
"request")``): each attribute read through one costs about 800 ns (the proxy's descriptor,
its lookup function, ``_get_current_object``), and a move read them several times. These read
the same objects from the same variables, about 100 ns each; outside a context they fall back
to the proxies, which raise Flask's own "working outside of ... context" error. Flask is
pinned (pyproject.toml); ``tests/api/test_context.py`` checks them against the proxies.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flask import Flask, current_app, request
from flask.globals import _cv_app, _cv_request

__all__ = ["app", "request_environ"]


def app() -> Flask:
    """The app of the current context (``current_app``'s object)."""
    try:
        return _cv_app.get().app
    except LookupError:
        return current_app._get_current_object()  # type: ignore[attr-defined,no-any-return]


def request_environ() -> Mapping[str, Any]:
    """The WSGI environ of the request being served (``request.environ``)."""
    try:
        return _cv_request.get().request.environ
    except LookupError:
        return request.environ  # raises Flask's "working outside of request context"
