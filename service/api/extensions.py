"""What ``create_app`` hangs on the app for the views to reach (``app.extensions``)."""

from __future__ import annotations

from flask import current_app

from service.referee import Referee

__all__ = ["referee"]


def referee() -> Referee:
    """The app's referee: the one service layer the views call."""
    ref: Referee = current_app.extensions["referee"]
    return ref
