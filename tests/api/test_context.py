"""The app and the request read from Flask's context variables (service/api/context.py) are the
objects Flask's proxies give, and outside a context they fail as the proxies do."""

from __future__ import annotations

import pytest
from flask import Flask, current_app, request

from service.api import context
from service.api.extensions import referee


def test_the_app_and_the_environ_are_those_of_the_proxies() -> None:
    app = Flask("context")
    app.extensions["referee"] = object()
    with app.test_request_context("/v1/matches/m/draft", method="PUT", data=b"{}"):
        assert context.app() is current_app._get_current_object()  # type: ignore[attr-defined]
        assert context.app() is app
        assert context.request_environ() is request.environ
        assert referee() is app.extensions["referee"]
    with app.app_context():  # an app without a request
        assert context.app() is app
        with pytest.raises(RuntimeError, match="outside of request context"):
            context.request_environ()


def test_outside_a_context_they_fail_as_the_proxies_do() -> None:
    with pytest.raises(RuntimeError, match="outside of application context"):
        context.app()
    with pytest.raises(RuntimeError, match="outside of request context"):
        context.request_environ()
