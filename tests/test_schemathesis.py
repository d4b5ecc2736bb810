"""Property-based contract tests: Schemathesis generates requests from openapi.yaml.

Every operation gets a bounded number of generated requests, valid and invalid (all
generation modes), sent to the app in-process (WSGI) on a real Redis, and every answer goes
through all of Schemathesis's checks: no server error, status codes, content types, headers
and bodies as the contract lists them, invalid data refused, valid data accepted, and the
checks that resend a request (missing auth, unsupported methods...).

The app runs as in production (``test_mode`` off), so the contract is loaded as a client of
such a deployment reads it: without the test-mode-only ``seed``, ``setup``, ``scenario`` and
``from_record`` of ``CreateMatch`` (sending them is then invalid data, which must be refused),
and so with ``players`` required.

To reach the match endpoints, half of the requests to a ``{id}`` path that Schemathesis made
valid go to a real match, and most of those carry the token of the seat whose turn it is, so
moves, drafts and views are exercised beyond 404 and 401. ``If-Match`` stays as generated
(mostly stale: 412) unless dropped, so moves also apply sometimes.

Apps: the app runs with one key. The real matches are created with it (so they are owned), and
most requests to an operation that takes a key carry it (the listing, new tokens, leave, cancel,
rematch), so the owner's paths answer beyond 401; a generated body with players' refs carries
it too (a ref without a key is refused by design).

Apps: the app runs with one key, which Schemathesis itself sends to every operation that takes
one (its ``auth`` configuration for the ``apiKey`` scheme), so the matches it creates are owned
and the owner's operations (listing, new tokens, leave, cancel, rematch) answer beyond 401; the
auth checks then probe each of them without the key and with a wrong one (401).

Valid data may still be refused for a documented reason the schema cannot express: 409 (not
your turn), 412 (stale ``If-Match``), 422 (a move that breaks a rule, a setup that cannot be
dealt). ``SCHEMATHESIS_MAX_EXAMPLES`` changes the number of examples per operation (default 100).
"""

from __future__ import annotations

import copy
import itertools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
import yaml
from flask import Flask
from schemathesis.core.parameters import ParameterLocation

from service.app import create_app
from tests.support.redis_process import RedisProcess

ROOT = Path(__file__).resolve().parents[1]
MAX_EXAMPLES = int(os.environ.get("SCHEMATHESIS_MAX_EXAMPLES", "100"))
TEST_MODE_ONLY = ("seed", "setup", "scenario", "from_record")
PLAYERS = {"players": [{"name": "Ann", "ref": "u-1"}, {"name": "Bo"}, {"name": "Cy"}]}
APP_KEY = "schemathesis-app-key-0123456789"
PUBLIC_TARGET = "https://93.184.215.14/hooks/rummikub"  # a public address: no DNS needed

CONFIG = schemathesis.Config.from_dict(
    {
        "generation": {"mode": "all", "max-examples": MAX_EXAMPLES},
        "auth": {"openapi": {"apiKey": {"api_key": APP_KEY}}},
        "checks": {
            "positive_data_acceptance": {
                "expected-statuses": ["2XX", "3XX", 401, 403, 404, 409, 412, 422, 429, 503]
            },
        },
        "operations": [
            {
                # SPEC 5: a record that cannot be read is a 400, also where the schema cannot
                # say why (turn numbers, a rack per seat, the text form's grammar).
                "include-operation-id": "verifyRecord",
                "checks": {
                    "positive_data_acceptance": {"expected-statuses": ["2XX", 400, 429]},
                },
            },
        ],
    }
)


def production_contract() -> dict[str, Any]:
    """openapi.yaml as seen by a client of a deployment without test mode."""
    raw: dict[str, Any] = yaml.safe_load((ROOT / "openapi.yaml").read_text(encoding="utf-8"))
    contract = copy.deepcopy(raw)
    create = contract["components"]["schemas"]["CreateMatch"]
    for name in TEST_MODE_ONLY:
        create["properties"].pop(name, None)
    create["required"] = ["players"]  # optional only beside a scenario
    return contract


class CurrentApp:
    """A WSGI app that passes each request to the app the module fixture built.

    The schema is loaded at import time, before any fixture runs, and the checks that
    resend a request (probes) use the schema's own transport: it needs an app from the start.
    """

    app: Flask | None = None

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        assert self.app is not None, "the contract_app fixture builds the app"
        return self.app(environ, start_response)


current_app = CurrentApp()
schema = schemathesis.openapi.from_dict(production_contract(), config=CONFIG)
schema.app = current_app


class RealMatches:
    """Real matches for the generated requests to reach, one per operation."""

    def __init__(self, app: Flask) -> None:
        self.client = app.test_client()
        self.current: dict[str, dict[str, Any]] = {}
        self.counter = itertools.count()

    def for_operation(self, label: str) -> dict[str, Any]:
        """The match for ``label`` (created on first use)."""
        if label not in self.current:
            created = self.client.post("/v1/matches", json=PLAYERS, headers={"X-API-Key": APP_KEY})
            assert created.status_code == 201, created.get_json()
            self.current[label] = created.get_json()
        return self.current[label]

    def token_of_current_seat(self, match: dict[str, Any]) -> str:
        """The token of the seat whose turn it is now (seat 0 when nobody's)."""
        view = self.client.get(f"/v1/matches/{match['id']}").get_json()
        seat = view.get("current_seat") or 0
        return str(match["seats"][seat]["token"])

    def aim(self, case: schemathesis.Case) -> None:
        """Point half of the valid ``{id}`` requests at a real match, mostly with a token;
        give the app's key to most requests of an operation that takes one."""
        turn = next(self.counter)
        self.with_key(case, turn)
        self.public_target(case)
        if "id" not in (case.path_parameters or {}) or turn % 2:
            return
        if case.meta is not None and case.meta.is_negative_at(ParameterLocation.PATH):
            return
        match = self.for_operation(case.operation.label)
        case.path_parameters["id"] = match["id"]
        if case.meta is not None and case.meta.is_negative_at(ParameterLocation.HEADER):
            return
        headers = case.headers if case.headers is not None else {}
        if turn % 6 != 4:
            headers["Authorization"] = "Bearer " + self.token_of_current_seat(match)
        if turn % 4 == 0:
            headers.pop("If-Match", None)
        case.headers = headers

    @staticmethod
    def public_target(case: schemathesis.Case) -> None:
        """A valid webhook registration names a public https address: whether a generated
        host resolves to one is known only at run time (else a documented 400)."""
        if case.operation.label != "POST /v1/webhooks" or not isinstance(case.body, dict):
            return
        if case.meta is not None and case.meta.is_negative_at(ParameterLocation.BODY):
            return
        case.body["url"] = PUBLIC_TARGET

    @staticmethod
    def with_key(case: schemathesis.Case, turn: int) -> None:
        if case.meta is not None and case.meta.is_negative_at(ParameterLocation.HEADER):
            return
        security = case.operation.definition.raw.get("security", [])
        body = case.body if isinstance(case.body, dict) else {}
        players = body.get("players") if isinstance(body.get("players"), list) else []
        has_refs = any(isinstance(p, dict) and "ref" in p for p in players)
        takes_key = any("apiKey" in option for option in security)
        if has_refs or (takes_key and turn % 5 != 3):
            case.headers = {**(case.headers or {}), "X-API-Key": APP_KEY}


@pytest.fixture(scope="module")
def contract_app(redis_server: RedisProcess) -> Iterator[Flask]:
    """The app as deployed (no test mode), on the session's Redis, flushed first."""
    with redis_server.client() as client:
        client.flushall()
    # Long-polls answer at once here: the fuzzer checks their answers, not their patience.
    app = create_app(
        {
            "redis_url": redis_server.url,
            "test_mode": False,
            "api_keys": f"fuzz={APP_KEY}",
            "long_poll_max_seconds": 0.05,
            "stream_max_seconds": 0.3,
            "stream_keepalive_seconds": 0.1,
            "webhook_timeout_seconds": 0.5,  # a ping to the public target gets no answer here
        }
    )
    current_app.app = app
    try:
        yield app
    finally:
        current_app.app = None


@pytest.fixture(scope="module")
def real_matches(contract_app: Flask) -> RealMatches:
    return RealMatches(contract_app)


@schema.parametrize()
def test_every_answer_keeps_the_contract(
    case: schemathesis.Case, contract_app: Flask, real_matches: RealMatches
) -> None:
    real_matches.aim(case)
    case.call_and_validate()
