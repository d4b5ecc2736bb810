"""What comes of a delivery attempt: delivered, tried again later, or given up.

- A 2xx answer is a delivery.
- A 410 Gone gives the delivery up and disables the webhook.
- Anything else, or no answer within ``WEBHOOK_TIMEOUT_SECONDS``, is tried again after the
  next delay of ``WEBHOOK_RETRY_SCHEDULE``, with up to :data:`JITTER` of it added (so the
  receivers of one outage are not all called again at the same instant), or after the
  answer's ``Retry-After`` when that is longer (at most :data:`MAX_RETRY_AFTER`). After the
  last delay the delivery is dead, and the match's next delivery goes.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from service.config import Settings
from service.webhooks.send import Attempt

__all__ = ["JITTER", "MAX_RETRY_AFTER", "Policy", "Verdict", "parse_schedule"]

JITTER = 0.2  # a retry waits its delay plus up to this fraction of it
MAX_RETRY_AFTER = 86400.0


def parse_schedule(text: str) -> tuple[float, ...]:
    """The retry schedule: seconds, comma-separated; raise ValueError if malformed."""
    variable = Settings.variable("webhook_retry_schedule")
    try:
        delays = tuple(float(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise ValueError(f"{variable} is not a list of seconds: {text!r}") from None
    if any(delay < 0 for delay in delays):
        raise ValueError(f"{variable} has a negative delay")
    return delays


@dataclass(frozen=True)
class Verdict:
    """What to record of an attempt: ``outcome`` (``delivered``, ``retry`` or ``dead``),
    after ``delay`` seconds for a retry; ``disable``, the webhook is gone (410)."""

    outcome: str
    delay: float = 0.0
    disable: bool = False


@dataclass(frozen=True)
class Policy:
    """The retry schedule (the delays before the second attempt, the third...)."""

    schedule: tuple[float, ...]

    @classmethod
    def from_settings(cls, settings: Settings) -> Policy:
        return cls(parse_schedule(settings.webhook_retry_schedule))

    def judge(self, attempt: Attempt, *, tries: int) -> Verdict:
        """The verdict on ``attempt``, the delivery's ``tries``-th (see the module)."""
        if attempt.delivered:
            return Verdict("delivered")
        if attempt.status == 410:
            return Verdict("dead", disable=True)
        if tries > len(self.schedule):
            return Verdict("dead")
        delay = self.schedule[tries - 1] * (1 + random.uniform(0, JITTER))
        if attempt.retry_after is not None and attempt.retry_after > delay:
            delay = min(attempt.retry_after, MAX_RETRY_AFTER)
        return Verdict("retry", delay=delay)
