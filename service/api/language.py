"""The language of an answer: ``Accept-Language`` picks one of :data:`service.i18n.LANGUAGES`."""

from __future__ import annotations

from typing import Any

from flask import has_request_context, request

from service import i18n

__all__ = ["localized"]


def localized(body: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The problem ``body`` in the request's language, and that language's tag."""
    header = request.headers.get("Accept-Language") if has_request_context() else None
    language = i18n.negotiate(header)
    return i18n.localize(body, language), language
