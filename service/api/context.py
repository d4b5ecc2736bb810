"""The app and the request being served, as Flask handed them over, without its proxies.

``current_app`` and ``request`` are werkzeug ``LocalProxy`` objects: each attribute read
through one costs about 800 ns (the proxy's descriptor, its lookup function, its context
variable), and a move read them several times. :class:`Serving`, the app's Flask class, keeps
the app and the WSGI environ it is called with in a context variable of its own while it
serves the request (``wsgi_app``: the environ Flask makes ``request`` from, the same object),
and :func:`app` and :func:`request_environ` read them from there, about 100 ns each. Outside
that (``app.test_request_context()``, a streamed body iterated after ``wsgi_app`` returned,
another greenlet), they read the proxies' objects (``_get_current_object()``, werkzeug's
documented accessor), which raise Flask's own "working outside of ... context" error.
``tests/api/test_context.py`` checks them against the proxies.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from flask import Flask, current_app, request

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIEnvironment

__all__ = ["Serving", "app", "request_environ"]

_serving: ContextVar[tuple[Flask, Mapping[str, Any]]] = ContextVar("referee.serving")


class Serving(Flask):
    """A Flask app that keeps itself and the request's environ at hand while it serves it."""

    def wsgi_app(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        held = _serving.set((self, environ))
        try:
            return super().wsgi_app(environ, start_response)
        finally:
            _serving.reset(held)


def app() -> Flask:
    """The app of the request being served (``current_app``'s object)."""
    try:
        return _serving.get()[0]
    except LookupError:
        return current_app._get_current_object()  # type: ignore[attr-defined,no-any-return]


def request_environ() -> Mapping[str, Any]:
    """The WSGI environ of the request being served (``request.environ``)."""
    try:
        return _serving.get()[1]
    except LookupError:
        return request.environ  # raises Flask's "working outside of request context"
