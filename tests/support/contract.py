"""Every response a test sees is validated against openapi.yaml."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from flask.testing import FlaskClient
from openapi_core import OpenAPI
from openapi_core.contrib.werkzeug import WerkzeugOpenAPIRequest, WerkzeugOpenAPIResponse
from openapi_core.templating.paths.exceptions import OperationNotFound, PathNotFound

SPEC = Path(__file__).resolve().parents[2] / "openapi.yaml"


@cache
def openapi() -> OpenAPI:
    """The contract, loaded once per test session."""
    return OpenAPI.from_file_path(str(SPEC))


@cache
def problem_schema() -> dict[str, Any]:
    """The Problem schema, for answers to paths or methods the contract does not list."""
    spec = yaml.safe_load(SPEC.read_text())
    schema: dict[str, Any] = spec["components"]["schemas"]["Problem"]
    return schema


def validate(response: Any) -> None:
    """Raise when ``response`` (a Werkzeug test response) breaks the contract.

    An answer to a path or method the contract does not list must be a problem.
    """
    request = WerkzeugOpenAPIRequest(response.request)
    try:
        openapi().validate_response(request, WerkzeugOpenAPIResponse(response))
    except (PathNotFound, OperationNotFound):
        assert response.status_code in (404, 405), response.status_code
        assert response.content_type == "application/problem+json"
        jsonschema.validate(response.get_json(), problem_schema())


class ContractClient(FlaskClient):
    """A Flask test client that checks each response against the contract."""

    def open(self, *args: Any, **kwargs: Any) -> Any:
        response = super().open(*args, **kwargs)
        if response.status_code != 304 and not response.is_streamed:
            validate(response)
        return response
