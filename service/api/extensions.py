"""What ``create_app`` hangs on the app for the views to reach (``app.extensions``)."""

from __future__ import annotations

from flask import current_app

from service.referee import Referee
from service.webhooks.registry import Webhooks

__all__ = ["referee", "webhooks"]


def referee() -> Referee:
    """The app's referee: the one service layer the views call."""
    ref: Referee = current_app.extensions["referee"]
    return ref


def webhooks() -> Webhooks:
    """The apps' webhooks: the service layer the webhook views call."""
    hooks: Webhooks = current_app.extensions["webhooks"]
    return hooks
