"""Every response a test sees is validated against openapi.yaml, every event included.

Events are checked against their own schema (``Event``'s ``oneOf``, picked by ``type``), in
the event log's pages and in each Server-Sent Events message a test reads from a stream, so
an event type or a field the service writes cannot go undeclared.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from flask.testing import FlaskClient
from openapi_core import OpenAPI
from openapi_core.contrib.werkzeug import WerkzeugOpenAPIRequest, WerkzeugOpenAPIResponse
from openapi_core.templating.paths.exceptions import OperationNotFound, PathNotFound

from service import i18n

SPEC = Path(__file__).resolve().parents[2] / "openapi.yaml"


@cache
def openapi() -> OpenAPI:
    """The contract, loaded once per test session."""
    return OpenAPI.from_file_path(str(SPEC))


@cache
def contract() -> dict[str, Any]:
    """The contract as plain data."""
    loaded: dict[str, Any] = yaml.safe_load(SPEC.read_text())
    return loaded


def component_validator(name: str) -> jsonschema.Draft202012Validator:
    """A JSON Schema validator for ``components.schemas.<name>``, with every ``$ref`` resolved."""
    schema = {"$ref": f"#/components/schemas/{name}", "components": contract()["components"]}
    return jsonschema.Draft202012Validator(schema)


@cache
def event_validators() -> dict[str, jsonschema.Draft202012Validator]:
    """One validator per event type, from ``Event``'s discriminator mapping."""
    event = contract()["components"]["schemas"]["Event"]
    mapping: dict[str, str] = event["discriminator"]["mapping"]
    return {kind: component_validator(ref.rsplit("/", 1)[1]) for kind, ref in mapping.items()}


def problem_schema() -> dict[str, Any]:
    """The Problem schema, for answers to paths or methods the contract does not list."""
    schema: dict[str, Any] = contract()["components"]["schemas"]["Problem"]
    return schema


def validate_event(event: Any) -> None:
    """Raise ``AssertionError`` unless ``event`` is one of the contract's typed events."""
    assert isinstance(event, dict), event
    kinds = event_validators()
    assert event.get("type") in kinds, f"event type {event.get('type')!r} is not in the contract"
    errors = sorted(kinds[event["type"]].iter_errors(event), key=lambda e: list(e.path))
    assert not errors, f"event {event} breaks its schema: " + "; ".join(
        f"{'/'.join(map(str, e.path)) or 'event'}: {e.message}" for e in errors
    )


def validate_notification(body: Any) -> None:
    """Raise ``AssertionError`` unless ``body`` is a webhook notification of the contract."""
    errors = list(component_validator("Notification").iter_errors(body))
    assert not errors, f"notification {body} breaks its schema: " + "; ".join(
        e.message for e in errors
    )


def validate_events(body: Any) -> None:
    """Check each event of an event-log page (``{"events": [...]}``)."""
    for event in body["events"]:
        validate_event(event)


def validate_problem_language(body: dict[str, Any], content_language: str | None) -> None:
    """A problem says its language, and an English one has every message translated."""
    assert content_language in i18n.LANGUAGES, content_language
    if content_language == i18n.DEFAULT:
        for language in i18n.LANGUAGES[1:]:
            missing = i18n.untranslated(body, language)
            assert not missing, f"no {language} translation in service/i18n for {missing}"


def validate(response: Any) -> None:
    """Raise when ``response`` (a Werkzeug test response) breaks the contract.

    An answer to a path or method the contract does not list must be a problem. Every
    problem says its language, and each English message has its translations.
    """
    if response.mimetype == "application/problem+json":
        validate_problem_language(response.get_json(), response.headers.get("Content-Language"))
    request = WerkzeugOpenAPIRequest(response.request)
    try:
        openapi().validate_response(request, WerkzeugOpenAPIResponse(response))
    except (PathNotFound, OperationNotFound):
        assert response.status_code in (404, 405), response.status_code
        assert response.content_type == "application/problem+json"
        component_validator("Problem").validate(response.get_json())
        return
    if response.status_code == 200 and response.request.path.endswith("/events"):
        validate_events(response.get_json())
    elif response.status_code == 200 and response.mimetype == "text/event-stream":
        for _ in CheckedEventStream([response.get_data(as_text=True)]):
            pass


def validate_content(response: Any) -> None:
    """Check what an answer holds without its request: events and problems."""
    if response.mimetype == "application/problem+json":
        body = response.get_json()
        component_validator("Problem").validate(body)
        validate_problem_language(body, response.headers.get("Content-Language"))
    elif response.status_code == 200 and response.request.path.endswith("/events"):
        validate_events(response.get_json())


class CheckedEventStream:
    """Wraps a streamed ``text/event-stream`` body: each event's JSON is checked as it is read."""

    def __init__(
        self, chunks: Iterable[bytes | str], check: Callable[[Any], None] | None = None
    ) -> None:
        self.chunks = chunks
        self.check = check or validate_event
        self.iterator: Iterator[bytes | str] = iter(chunks)
        self.buffer = ""

    def __iter__(self) -> CheckedEventStream:
        return self

    def __next__(self) -> bytes | str:
        chunk = next(self.iterator)
        self.buffer += chunk.decode() if isinstance(chunk, bytes) else chunk
        while "\n\n" in self.buffer:
            block, self.buffer = self.buffer.split("\n\n", 1)
            data = [line[5:].lstrip(" ") for line in block.split("\n") if line.startswith("data:")]
            if data:
                self.check(json.loads("\n".join(data)))
        return chunk

    def close(self) -> None:
        close = getattr(self.chunks, "close", None)
        if close is not None:
            close()


class ContractClient(FlaskClient):
    """A Flask test client that checks each response against the contract."""

    def open(self, *args: Any, **kwargs: Any) -> Any:
        response = super().open(*args, **kwargs)
        if response.status_code == 304:
            return response
        if not response.is_streamed:
            validate(response)
        elif response.mimetype == "text/event-stream":
            # The app feed carries webhook notifications; a match's stream carries its events.
            check = validate_notification if response.request.path == "/v1/feed" else None
            response.response = CheckedEventStream(response.response, check)
        else:
            # Answers come back from the app as iterators, so ``is_streamed`` holds for nearly
            # every one and openapi-core's check above is skipped (it cannot read the request
            # body again either). What needs no request is checked here: each event of an event
            # log page, and each problem's shape and translations.
            validate_content(response)
        return response
