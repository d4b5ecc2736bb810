"""The app and the request's environ as the app's Flask class keeps them while it serves a
request (service/api/context.py) are the objects Flask's proxies give; outside that they are
the proxies' own objects, and outside any context they fail as the proxies do."""

from __future__ import annotations

from typing import Any

import pytest
from flask import current_app, request
from werkzeug.test import EnvironBuilder

from service.api import context
from service.api.extensions import referee


def test_while_serving_they_are_the_objects_of_the_proxies() -> None:
    app = context.Serving("context")
    app.extensions["referee"] = object()
    seen: dict[str, Any] = {}

    @app.put("/v1/matches/<match_id>/draft")
    def draft(match_id: str) -> str:
        held = context.request_environ()
        seen.update(
            app=context.app() is current_app._get_current_object(),  # type: ignore[attr-defined]
            environ=held is request.environ,
            held=held,
            referee=referee() is app.extensions["referee"],
        )
        return "ok"

    environ = EnvironBuilder("/v1/matches/m/draft", method="PUT", data=b"{}").get_environ()
    answered: list[str] = []
    app.wsgi_app(environ, lambda status, headers, info=None: answered.append(status))
    assert answered == ["200 OK"]
    assert seen["app"] and seen["environ"] and seen["referee"]
    assert seen["held"] is environ
    with pytest.raises(RuntimeError, match="outside of request context"):
        context.request_environ()  # let go once the request is served


def test_outside_serving_they_are_the_proxies_objects() -> None:
    app = context.Serving("context")
    with app.test_request_context("/v1/matches/m", method="GET"):
        assert context.app() is app
        assert context.request_environ() is request.environ
    with app.app_context():  # an app without a request
        assert context.app() is app
        with pytest.raises(RuntimeError, match="outside of request context"):
            context.request_environ()


def test_outside_a_context_they_fail_as_the_proxies_do() -> None:
    with pytest.raises(RuntimeError, match="outside of application context"):
        context.app()
    with pytest.raises(RuntimeError, match="outside of request context"):
        context.request_environ()
