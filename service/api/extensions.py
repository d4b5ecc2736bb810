"""What ``create_app`` hangs on the app for the views to reach (``app.extensions``)."""

from __future__ import annotations

from service.api import context
from service.referee import Referee
from service.webhooks.registry import Webhooks

__all__ = ["referee", "webhooks"]


def referee() -> Referee:
    """The app's referee: the one service layer the views call (``service.api.context``)."""
    ref: Referee = context.app().extensions["referee"]
    return ref


def webhooks() -> Webhooks:
    """The apps' webhooks: the service layer the webhook views call."""
    hooks: Webhooks = context.app().extensions["webhooks"]
    return hooks
