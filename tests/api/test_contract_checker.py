"""The contract checker itself: it must reject answers that break openapi.yaml.

Every other test trusts that what it sees was validated; these prove the check runs and
fails, on a real app with one answer spoiled after the view made it, and over real HTTP.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from flask import Flask, Response, request

from service.app import create_app
from tests.support.contract import ContractClient, ContractError
from tests.support.gunicorn_process import http_request


def spoiled(redis_url: str, spoil: Callable[[Response], None], path: str) -> Flask:
    """An app whose answers to ``path`` go through ``spoil`` after the view made them."""
    app = create_app({"redis_url": redis_url, "test_mode": True})

    @app.after_request
    def _spoil(response: Response) -> Response:
        if request.path == path:
            spoil(response)
        return response

    return app


def rewrite(change: Callable[[dict[str, Any]], None]) -> Callable[[Response], None]:
    def spoil(response: Response) -> None:
        body = json.loads(response.get_data())
        change(body)
        response.set_data(json.dumps(body))

    return spoil


def test_every_flask_test_client_of_the_suite_checks_the_contract(redis_url: str) -> None:
    assert isinstance(create_app({"redis_url": redis_url}).test_client(), ContractClient)


def test_a_correct_answer_passes(redis_url: str) -> None:
    app = spoiled(redis_url, lambda response: None, "/healthz")
    assert app.test_client().get("/healthz").get_json() == {"status": "ok", "test_mode": True}


@pytest.mark.parametrize(
    ("spoil", "reason"),
    [
        (rewrite(lambda body: body.update(status=5)), "5 is not of type 'string'"),
        (rewrite(lambda body: body.pop("status")), "'status' is a required property"),
        (rewrite(lambda body: body.update(extra=1)), "'extra' was unexpected"),
        (lambda response: setattr(response, "status_code", 418), "418"),
        (lambda response: response.headers.update({"X-Sneaky": "1"}), "x-sneaky"),
        (lambda response: setattr(response, "mimetype", "text/plain"), "text/plain"),
    ],
    ids=["wrong-type", "missing-field", "undeclared-field", "status", "header", "media-type"],
)
def test_a_spoiled_answer_of_a_real_operation_is_refused(
    redis_url: str, spoil: Callable[[Response], None], reason: str
) -> None:
    client = spoiled(redis_url, spoil, "/healthz").test_client()
    with pytest.raises(ContractError, match=reason):
        client.get("/healthz")


def test_a_match_view_missing_its_version_is_refused(redis_url: str) -> None:
    app = create_app({"redis_url": redis_url, "test_mode": True})
    created = app.test_client().post(
        "/v1/matches", json={"players": [{"name": "Ann"}, {"name": "Bo"}]}
    )
    path = f"/v1/matches/{created.get_json()['id']}"
    client = spoiled(redis_url, rewrite(lambda body: body.pop("version")), path).test_client()
    with pytest.raises(ContractError, match="'version' is a required property"):
        client.get(path)


def test_a_stream_with_an_undeclared_header_is_refused(redis_url: str) -> None:
    app = create_app({"redis_url": redis_url, "test_mode": True})
    created = app.test_client().post(
        "/v1/matches", json={"players": [{"name": "Ann"}, {"name": "Bo"}]}
    )
    path = f"/v1/matches/{created.get_json()['id']}/stream"
    client = spoiled(
        redis_url, lambda response: response.headers.update({"X-Sneaky": "1"}), path
    ).test_client()
    with pytest.raises(ContractError, match="x-sneaky"):
        client.get(path, query_string={"after": "0"})


def test_an_answer_to_an_unlisted_operation_must_be_a_404_problem(redis_url: str) -> None:
    client = spoiled(redis_url, lambda response: setattr(response, "status_code", 200), "/nowhere")
    with pytest.raises(ContractError, match="does not list"):
        client.test_client().get("/nowhere")


@pytest.fixture
def liar() -> Iterator[int]:
    """A plain HTTP server whose ``/healthz`` answers a body the contract refuses."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            payload = b'{"status": 5}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def test_answers_read_over_real_http_are_checked_too(liar: int) -> None:
    with pytest.raises(ContractError, match="5 is not of type 'string'"):
        http_request(liar, "GET", "/healthz")


def test_an_event_with_an_undeclared_field_is_refused(redis_url: str) -> None:
    app = create_app({"redis_url": redis_url, "test_mode": True})
    created = app.test_client().post(
        "/v1/matches", json={"players": [{"name": "Ann"}, {"name": "Bo"}]}
    )
    path = f"/v1/matches/{created.get_json()['id']}/events"
    spoil = rewrite(lambda body: body["events"][0]["data"].update(surprise=1))
    with pytest.raises(ContractError, match="surprise"):
        spoiled(redis_url, spoil, path).test_client().get(path)
