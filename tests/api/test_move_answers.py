"""A move's answer (``service.api.matches._Answer``) is the object werkzeug's constructor makes:
every attribute the same, the headers in the same order, the same bytes on the wire."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Response

from service.api.matches import JSON, _Answer


class _Generic(Response):
    default_mimetype = None  # a 204 without Content-Type, as the move's answer had


def _werkzeug(body: bytes | None, *headers: tuple[str, str]) -> Response:
    """The answer as werkzeug's constructor makes it, with ``headers`` added."""
    made = _Generic(status=204) if body is None else Response(body, content_type=JSON)
    for name, value in headers:
        made.headers.add(name, value)
    return made


def _wire(response: Response) -> tuple[str, list[tuple[str, str]], bytes]:
    started: list[Any] = []
    environ = {"REQUEST_METHOD": "PUT", "SERVER_NAME": "x", "SERVER_PORT": "80",
               "wsgi.url_scheme": "http", "SERVER_PROTOCOL": "HTTP/1.1"}  # fmt: skip
    body = b"".join(response(environ, lambda status, headers: started.extend([status, headers])))
    return started[0], started[1], body


MINIMAL = ("Preference-Applied", "return=minimal")
REPLAYED = ("Idempotent-Replayed", "true")
VIEW = b'{"match":{"name":"\xc3\xa9"},"drawn":["R1"]}\n'


@pytest.mark.parametrize(
    ("body", "headers"),
    [
        (b'{"match":{},"drawn":[]}\n', [("ETag", '"12"')]),
        (VIEW, [("ETag", '"3"'), REPLAYED]),
        (None, [MINIMAL, ("ETag", '"7"')]),
        (None, [MINIMAL, ("ETag", '"7"'), REPLAYED]),
    ],
)
def test_a_move_answer_is_what_the_constructor_makes(
    body: bytes | None, headers: list[tuple[str, str]]
) -> None:
    made, expected = _Answer(body, *headers), _werkzeug(body, *headers)
    assert isinstance(made, Response)
    assert vars(made).keys() == vars(expected).keys()  # werkzeug set nothing more
    assert list(made.headers.items()) == list(expected.headers.items())
    for name in vars(expected).keys() - {"headers"}:
        assert getattr(made, name) == getattr(expected, name), name
    assert made.status == expected.status and made.mimetype == expected.mimetype
    assert _wire(made) == _wire(expected)
