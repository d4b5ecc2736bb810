"""The language of an answer: ``Accept-Language`` picks one of :data:`service.i18n.LANGUAGES`."""

from __future__ import annotations

from typing import Any

from flask import has_request_context, request

from service import i18n

__all__ = ["localized", "request_language", "say"]


def request_language() -> str:
    """The language the request asks for (``Accept-Language``); English outside a request."""
    header = request.headers.get("Accept-Language") if has_request_context() else None
    return i18n.negotiate(header)


def localized(body: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The problem ``body`` in the request's language, and that language's tag."""
    language = request_language()
    return i18n.localize(body, language), language


def say(message: str, language: str) -> str:
    """``message`` in ``language``, or as it is when no catalogue has it."""
    return i18n.translate(message, language) or message
