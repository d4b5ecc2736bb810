"""Every example in openapi.yaml is valid against the schema it illustrates: a media type's
``example`` (a response, a request, a problem), a header's or a parameter's, and each of a
schema's JSON Schema ``examples``. A mock serves them as answers (tests/clients/test_mock.py)
and generated docs show them, so an example that breaks its own schema teaches clients wrong."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest

from tests.support.contract import NDJSON_LINES, component_validator, contract

SCHEMA_KEYWORDS = ("properties", "items", "allOf", "anyOf", "oneOf", "additionalProperties")


def examples(node: Any, where: str = "") -> Iterator[tuple[str, Any, dict[str, Any]]]:
    """(where, example, schema) for each example in ``node``, found anywhere below it."""
    if isinstance(node, list):
        for index, item in enumerate(node):
            yield from examples(item, f"{where}/{index}")
        return
    if not isinstance(node, dict):
        return
    schema = node.get("schema")
    if isinstance(schema, dict):  # a media type, a header or a parameter
        if "example" in node:
            yield f"{where}/example", node["example"], schema
        for name, example in (node.get("examples") or {}).items():
            if isinstance(example, dict) and "value" in example:
                yield f"{where}/examples/{name}", example["value"], schema
    looks_like_schema = "type" in node or any(key in node for key in SCHEMA_KEYWORDS)
    if looks_like_schema and isinstance(node.get("examples"), list):
        for index, example in enumerate(node["examples"]):
            yield f"{where}/examples/{index}", example, node
    for key, value in node.items():
        if key not in ("example", "examples"):
            yield from examples(value, f"{where}/{key}")


def all_examples() -> list[tuple[str, Any, dict[str, Any]]]:
    spec = contract()
    return [*examples(spec["paths"], "#/paths"), *examples(spec["components"], "#/components")]


def test_there_are_examples_on_headers_problems_and_answers() -> None:
    found = [where for where, _, _ in all_examples()]
    assert any(w.startswith("#/components/headers/ETag") for w in found)
    assert any(w.startswith("#/components/responses/NotFound") for w in found)
    assert any(w.startswith("#/components/schemas/MatchView") for w in found)
    assert len(found) >= 60, len(found)


@pytest.mark.parametrize(
    ("where", "example", "schema"), all_examples(), ids=lambda value: str(value)[:80]
)
def test_each_example_is_valid_against_its_own_schema(
    where: str, example: Any, schema: dict[str, Any]
) -> None:
    validator = jsonschema.Draft202012Validator(
        {"allOf": [schema], "components": contract()["components"]},
        format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER,
    )
    errors = [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
        for e in validator.iter_errors(example)
    ]
    assert not errors, f"{where}: {errors}"


def node_path(ref: str) -> list[str]:
    return ref.removeprefix("#/").split("/")


def test_every_answer_header_and_request_body_has_an_example() -> None:
    """What a mock serves and a doc shows: each JSON answer and request body (an example of
    its own, or of the schema it names), and each header an answer declares."""
    spec = contract()

    def resolve(node: Any) -> Any:
        while isinstance(node, dict) and "$ref" in node:
            target: Any = spec
            for part in node_path(node["$ref"]):
                target = target[part]
            node = target
        return node

    def illustrated(media: dict[str, Any]) -> bool:
        schema = resolve(media.get("schema", {}))
        return any(key in media for key in ("example", "examples")) or "examples" in schema

    missing = []
    for path, item in spec["paths"].items():
        for method, operation in item.items():
            if method not in ("get", "post", "put", "delete"):
                continue
            where = f"{method.upper()} {path}"
            body = resolve(operation.get("requestBody", {}))
            for kind, media in body.get("content", {}).items():
                if not illustrated(media):
                    missing.append(f"{where} request {kind}")
            for status, answer in operation["responses"].items():
                answer = resolve(answer)
                for kind, media in answer.get("content", {}).items():
                    if not illustrated(media):
                        missing.append(f"{where} {status} {kind}")
                for name, header in answer.get("headers", {}).items():
                    header = resolve(header)
                    if "example" not in header and "examples" not in header.get("schema", {}):
                        missing.append(f"{where} {status} header {name}")
    assert not missing, "\n".join(sorted(set(missing)))


def test_each_line_of_an_ndjson_example_is_valid_against_its_schema() -> None:
    """An NDJSON answer's example is text; each of its lines is what NDJSON_LINES names."""
    checked = 0
    for path, component in NDJSON_LINES.items():
        for operation in contract()["paths"][path].values():
            if not isinstance(operation, dict):
                continue
            for answer in operation.get("responses", {}).values():
                media = answer.get("content", {}).get("application/x-ndjson")
                if media is None or "example" not in media:
                    continue
                for line in media["example"].splitlines():
                    component_validator(component).validate(json.loads(line))
                    checked += 1
    assert checked >= len(NDJSON_LINES)
