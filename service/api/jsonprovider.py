"""Flask's JSON answers, written with orjson (``service.jsoncodec``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from flask import Response
from flask.json.provider import DefaultJSONProvider

from service.jsoncodec import dumps

if TYPE_CHECKING:
    from werkzeug.sansio.response import Response as BaseResponse

__all__ = ["OrjsonProvider"]


class OrjsonProvider(DefaultJSONProvider):
    """Flask's JSON provider, answering with orjson: compact, keys in insertion order.

    Only answers (``jsonify``, views that return a dict) change; ``dumps`` and ``loads`` stay
    the standard library's.
    """

    sort_keys = False
    compact = True

    def response(self, *args: Any, **kwargs: Any) -> BaseResponse:
        if len(args) == 1 and not kwargs:
            return self.encoded(dumps(args[0]))
        return super().response(*args, **kwargs)

    def encoded(self, body: bytes) -> Response:
        """The answer whose body is the JSON ``body``, already encoded (a rendered view)."""
        response_class = cast("type[Response]", self._app.response_class)  # a Flask app's
        return response_class(body + b"\n", mimetype=self.mimetype)
