"""Every example in openapi.yaml is valid against the schema it illustrates: a media type's
``example`` (a response, a request, a problem), a header's or a parameter's, and each of a
schema's JSON Schema ``examples``. A mock serves them as answers (tests/clients/test_mock.py)
and generated docs show them, so an example that breaks its own schema teaches clients wrong."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest

from tests.support.contract import contract

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
