"""Every response a test sees is validated against openapi.yaml, every event included.

- Every Flask test client of the suite is a :class:`ContractClient` (``tests/conftest.py``
  installs it as ``Flask.test_client_class``), and ``tests.support.gunicorn_process``'s
  ``http_request`` and ``StagedRequest`` check each answer they read over real HTTP.
- openapi-core validates the answer against its operation: the status must be listed, each
  declared header valid, and the body must match the schema of its content type, with no
  property the contract does not name (``additional_properties_default_policy="forbid"``).
  Each header the service sets beyond HTTP's own and CORS must be declared for that status.
- A ``text/event-stream`` answer has its status and headers checked at once, and each event's
  JSON against its own schema (``Event``'s ``oneOf``, picked by ``type``) as the test reads
  it; events in the event log's pages are checked the same way, so an event type or a field
  the service writes cannot go undeclared.
- The web pages (``/``, ``/docs``, ``/assets/...``) are not API, nor are CORS preflights; an
  answer to any other path or method the contract does not list must be a 404 or 405 problem.

The contract is loaded once per test session (``functools.cache``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import jsonschema
import yaml
from flask.testing import FlaskClient
from jsonschema_path import SchemaPath
from openapi_core import Config, OpenAPI
from openapi_core.casting.schemas import oas31_types_caster
from openapi_core.casting.schemas.factories import SchemaCastersFactory
from openapi_core.datatypes import RequestParameters
from openapi_core.deserializing.media_types.util import json_loads
from openapi_core.exceptions import OpenAPIError
from openapi_core.templating.paths.exceptions import OperationNotFound, PathNotFound
from openapi_core.validation.response import V31ResponseHeadersValidator
from openapi_core.validation.schemas import oas31_schema_validators_factory
from openapi_core.validation.schemas.datatypes import FormatValidatorsDict
from openapi_core.validation.schemas.factories import DialectSchemaValidatorsFactory
from openapi_core.validation.schemas.validators import SchemaValidator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012
from werkzeug.datastructures import Headers, ImmutableMultiDict

from service import i18n

SPEC = Path(__file__).resolve().parents[2] / "openapi.yaml"


# openapi-core reads JSON bodies by media type, and knows ``application/json`` but not RFC
# 9457's ``application/problem+json``.
MEDIA_TYPES: dict[str, Any] = {"application/problem+json": json_loads}

NDJSON_LINES = {"/v1/records": "GameRecord"}
"""An NDJSON answer's status and headers are checked as a stream's are, and each of its lines
against the component schema named here (the contract declares the body as text)."""


CONTRACT_URI = "urn:rummikub-referee:openapi"


def absolute(node: Any) -> Any:
    """``node`` with each local ``$ref`` (``#/components/...``) made absolute (the contract's
    URI), so a schema taken out of the document still finds what it refers to."""
    if isinstance(node, dict):
        return {key: _absolute_entry(key, value) for key, value in node.items()}
    if isinstance(node, list):
        return [absolute(item) for item in node]
    return node


def _absolute_entry(key: str, value: Any) -> Any:
    if key == "$ref" and isinstance(value, str) and value.startswith("#"):
        return CONTRACT_URI + value
    if key == "discriminator" and isinstance(value, dict) and "mapping" in value:
        # openapi-schema-validator follows a discriminator's mapping like a ``$ref``.
        mapping = {name: CONTRACT_URI + ref for name, ref in value["mapping"].items()}
        return {**value, "mapping": mapping}
    return absolute(value)


def inlined(node: Any, within: tuple[str, ...] = ()) -> Any:
    """``node`` with each ``$ref`` to a component schema replaced by that schema (a schema
    that refers to itself, directly or not, keeps an absolute ``$ref`` there): validating
    then follows no reference at all, which is most of jsonschema's time on our answers."""
    if isinstance(node, list):
        return [inlined(item, within) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    prefix = "#/components/schemas/"
    if not (isinstance(ref, str) and ref.startswith(prefix)) or ref in within:
        return {key: inlined(value, within) for key, value in node.items()}
    target = inlined(contract()["components"]["schemas"][ref[len(prefix) :]], (*within, ref))
    siblings = {key: inlined(value, within) for key, value in node.items() if key != "$ref"}
    return {**siblings, "allOf": [target]} if siblings else target


class BuiltOnce(DialectSchemaValidatorsFactory):
    """openapi-core's OpenAPI 3.1 schema validators, each built once per schema.

    openapi-core builds a fresh JSON Schema validator (and, with the ``forbid`` policy, a
    fresh validator class) for every schema of every answer it checks; that made each
    check cost about 0.1 s. The contract does not change during a session, so one validator
    per schema (and per option) serves every answer.
    """

    def __init__(self) -> None:
        default = oas31_schema_validators_factory
        super().__init__(
            default.schema_validator_cls,
            default.default_jsonschema_dialect_id,
            format_checker=default.format_checker,
        )
        self.built: dict[tuple[Any, ...], SchemaValidator] = {}
        document = Resource.from_contents(absolute(contract()), default_specification=DRAFT202012)
        self.registry: Registry[Any] = Registry().with_resource(CONTRACT_URI, document)

    def create(
        self,
        spec: SchemaPath,
        schema: SchemaPath,
        format_validators: FormatValidatorsDict | None = None,
        extra_format_validators: FormatValidatorsDict | None = None,
        forbid_unspecified_additional_properties: bool = False,
        enforce_properties_required: bool = False,
    ) -> SchemaValidator:
        key = (
            schema.parts,
            id(format_validators),
            id(extra_format_validators),
            forbid_unspecified_additional_properties,
            enforce_properties_required,
        )
        if key not in self.built:
            made = (
                super()
                .create(
                    spec,
                    schema,
                    format_validators,
                    extra_format_validators,
                    forbid_unspecified_additional_properties,
                    enforce_properties_required,
                )
                .validator
            )
            # The same validator class and checks, its ``$ref``s looked up in the contract as
            # plain data rather than through openapi-core's path objects (several times faster).
            fast = type(made)(
                absolute(inlined(made.schema)),
                registry=self.registry,
                format_checker=made.format_checker,
            )
            self.built[key] = SchemaValidator(schema, fast)
        return self.built[key]


@cache
def factories() -> dict[str, Any]:
    """openapi-core's schema validators and casters (headers are cast first), built once."""
    validators = BuiltOnce()
    return {
        "schema_validators_factory": validators,
        "schema_casters_factory": SchemaCastersFactory(validators, oas31_types_caster),
    }


@cache
def openapi() -> OpenAPI:
    """The contract, loaded once per test session: validates a whole answer."""
    config = Config(
        extra_media_type_deserializers=MEDIA_TYPES,
        additional_properties_default_policy="forbid",
        **factories(),
    )
    return OpenAPI.from_file_path(str(SPEC), config=config)


@cache
def openapi_heads() -> OpenAPI:
    """The contract validating only an answer's status and headers (a stream's body is
    checked message by message as it is read)."""
    config = Config(
        extra_media_type_deserializers=MEDIA_TYPES,
        response_validator_cls=V31ResponseHeadersValidator,
        **factories(),
    )
    return OpenAPI.from_file_path(str(SPEC), config=config)


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


class ContractError(AssertionError):
    """An answer that breaks ``openapi.yaml``: what was asked, what came back, and why."""


# Headers every HTTP answer may carry that an OpenAPI description does not list: framing,
# caching proxies, CORS, and the browser hardening of the web pages (RFC 9110 and Fetch).
GENERIC_HEADERS = frozenset(
    {
        "connection",
        "content-length",
        "content-type",
        "date",
        "keep-alive",
        "server",
        "transfer-encoding",
        "vary",
    }
)


def web_page(path: str) -> bool:
    """The web pages and their assets are not API: the contract does not describe them."""
    return path in ("/", "/docs") or path.startswith("/assets/")


def preflight(asked: Asked) -> bool:
    """A CORS preflight (Fetch): the browser's question, answered by the CORS layer for every
    path; OpenAPI describes the requests it clears, not the preflight itself."""
    return asked.method == "options" and "Access-Control-Request-Method" in asked.parameters.header


@dataclass(frozen=True)
class Answer:
    """One HTTP answer as openapi-core reads it (its ``Response`` protocol)."""

    status_code: int
    headers: Headers
    data: bytes

    @property
    def content_type(self) -> str:
        return self.headers.get("Content-Type", "").split(";", 1)[0].strip()


@dataclass
class Asked:
    """The request an answer belongs to, as openapi-core reads it (its ``Request`` protocol).

    Only what finds the operation is kept (method, path, query and headers): response
    validation never reads the request's body, and a test client's body is consumed by then.
    """

    method: str
    path: str
    parameters: RequestParameters
    host_url: str = "http://localhost/"
    body: bytes | None = None
    content_type: str = "application/octet-stream"

    @classmethod
    def of(cls, method: str, target: str, headers: Mapping[str, str] | Headers) -> Asked:
        parts = urlsplit(target)
        return cls(
            method=method.lower(),
            path=parts.path or "/",
            parameters=RequestParameters(
                query=ImmutableMultiDict(parse_qsl(parts.query, keep_blank_values=True)),
                header=Headers(dict(headers) if not isinstance(headers, Headers) else headers),
            ),
        )


def _reasons(error: BaseException) -> list[str]:
    """openapi-core's error with what it wraps: the schema errors or each header's problem."""
    reasons = [f"{type(error).__name__}: {error}"]
    for inner in getattr(error, "context", None) or ():
        reasons += ["  " + line for line in _reasons(inner)]
    for schema_error in getattr(error, "schema_errors", None) or ():
        where = "/".join(map(str, schema_error.absolute_path)) or "body"
        reasons.append(f"  {where}: {schema_error.message}")
    if error.__cause__ is not None:
        reasons += ["  " + line for line in _reasons(error.__cause__)]
    return reasons


@cache
def operations() -> list[tuple[re.Pattern[str], dict[str, Any]]]:
    """Each path of the contract as a pattern matching its concrete paths, with its item."""
    return [
        (re.compile("^" + re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(template)) + "$"), item)
        for template, item in contract()["paths"].items()
    ]


def _operation(path: str, method: str) -> dict[str, Any] | None:
    """The contract's operation for a concrete path and method, or None."""
    for pattern, item in operations():
        if pattern.match(path) and method in item:
            operation: dict[str, Any] = item[method]
            return operation
    return None


def _described(asked: Asked, status: int) -> dict[str, Any]:
    """The contract's response object for an answer's operation and status (``{}`` if none)."""
    operation = _operation(asked.path, asked.method)
    if operation is None:
        return {}
    responses = operation["responses"]
    described: dict[str, Any] = responses.get(str(status)) or responses.get("default") or {}
    if "$ref" in described:
        described = contract()["components"]["responses"][described["$ref"].rsplit("/", 1)[1]]
    return described


def undeclared_headers(asked: Asked, answer: Answer) -> list[str]:
    """Headers of ``answer`` its operation does not declare for that status."""
    declared = {name.lower() for name in _described(asked, answer.status_code).get("headers", {})}
    return sorted(
        name
        for name in {key.lower() for key, _ in answer.headers.items()}
        if name not in declared
        and name not in GENERIC_HEADERS
        and not name.startswith("access-control-")
    )


def check(asked: Asked, answer: Answer, *, streamed: bool = False) -> None:
    """Raise ``ContractError`` when ``answer`` to ``asked`` breaks the contract.

    The operation must list the status, declare each header the service set (beyond HTTP's
    own), and the body must match the schema of its content type (a ``streamed`` answer's
    body is left to :class:`CheckedEventStream`). An answer to a path or method the contract
    does not list must be a 404 or 405 problem. Every problem says its language, and each
    English message has its translations; each event of an event-log page is typed.
    """
    if web_page(asked.path) or preflight(asked):
        return
    where = f"{asked.method.upper()} {asked.path} answered {answer.status_code}"
    body: Any = None
    if answer.content_type in ("application/json", "application/problem+json") and answer.data:
        body = json.loads(answer.data)
    if answer.content_type == "application/problem+json":
        validate_problem_language(body, answer.headers.get("Content-Language"))
    if answer.content_type == "application/x-ndjson":
        streamed = True
        for line in answer.data.splitlines():
            component_validator(NDJSON_LINES[asked.path]).validate(json.loads(line))
    try:
        if _operation(asked.path, asked.method) is None:
            # openapi-core reads "/v1/webhooks//deliveries" as its template with an empty
            # id; a path with an empty segment is no operation's (a route's are never empty)
            raise PathNotFound(asked.path)
        (openapi_heads() if streamed else openapi()).validate_response(asked, answer)
    except (PathNotFound, OperationNotFound):
        problem = answer.content_type == "application/problem+json"
        if answer.status_code not in (404, 405) or not problem:
            raise ContractError(f"{where}, an operation the contract does not list") from None
        component_validator("Problem").validate(body)
        return
    except OpenAPIError as error:
        reasons = "\n".join(_reasons(error))
        raise ContractError(f"{where} ({answer.content_type}):\n{reasons}") from None
    if streamed and answer.content_type not in _described(asked, answer.status_code).get(
        "content", {}
    ):
        raise ContractError(f"{where} {answer.content_type}, a content type it does not list")
    if answer.status_code == 401 and not answer.headers.get("WWW-Authenticate"):
        raise ContractError(f"{where} without WWW-Authenticate (RFC 9110: a 401 names its scheme)")
    extra = undeclared_headers(asked, answer)
    if extra:
        raise ContractError(f"{where} with headers its contract does not declare: {extra}")
    if answer.status_code == 200 and asked.path.endswith("/events"):
        validate_events(body)


def _asked(response: Any) -> Asked:
    """What a Werkzeug test response answered (the request's body is not read again)."""
    request = response.request
    target = request.full_path if request.query_string else request.path
    return Asked.of(request.method, target, request.headers)


def validate(response: Any) -> None:
    """Raise when ``response`` (a Werkzeug test response, read in full) breaks the contract."""
    answer = Answer(response.status_code, Headers(response.headers), response.get_data())
    check(_asked(response), answer)


def validate_stream_head(response: Any) -> None:
    """A stream's status and headers; its messages are checked as they are read."""
    answer = Answer(response.status_code, Headers(response.headers), b"")
    check(_asked(response), answer, streamed=True)


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


def check_http(
    method: str,
    target: str,
    sent: Mapping[str, str],
    status: int,
    headers: Iterable[tuple[str, str]],
    raw: bytes,
) -> None:
    """Raise when an answer read over real HTTP breaks the contract (a stream read to its
    end has each of its messages checked too)."""
    answer = Answer(status, Headers(list(headers)), raw)
    asked = Asked.of(method, target, sent)
    if answer.content_type != "text/event-stream":
        check(asked, answer)
        return
    check(asked, Answer(status, answer.headers, b""), streamed=True)
    each = validate_notification if asked.path == "/v1/feed" else validate_event
    for _ in CheckedEventStream([raw], each):
        pass


class ContractClient(FlaskClient):
    """A Flask test client that checks each response against the contract.

    An answer is read in full (``get_data`` buffers the app's iterator) and validated before
    the test sees it; a ``text/event-stream`` answer has its status and headers checked at
    once and each message as the test reads it.
    """

    def open(self, *args: Any, **kwargs: Any) -> Any:
        response = super().open(*args, **kwargs)
        if response.mimetype == "text/event-stream":
            validate_stream_head(response)
            # The app feed carries webhook notifications; a match's stream carries its events.
            each = validate_notification if response.request.path == "/v1/feed" else None
            response.response = CheckedEventStream(response.response, each)
        else:
            validate(response)
        return response
