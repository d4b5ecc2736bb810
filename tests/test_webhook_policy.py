"""What comes of a delivery attempt (service/webhooks/policy.py), without a receiver."""

from __future__ import annotations

import pytest

from service.config import Settings
from service.webhooks.policy import JITTER, Policy, parse_schedule
from service.webhooks.send import Attempt

POLICY = Policy((5.0, 30.0))


@pytest.mark.parametrize("status", [200, 204, 299])
def test_a_2xx_is_delivered(status: int) -> None:
    assert POLICY.judge(Attempt(status), tries=1).outcome == "delivered"


def test_a_410_gives_up_and_disables_the_webhook() -> None:
    verdict = POLICY.judge(Attempt(410), tries=1)
    assert (verdict.outcome, verdict.disable) == ("dead", True)


@pytest.mark.parametrize(("tries", "delay"), [(1, 5.0), (2, 30.0)])
def test_a_failure_is_tried_again_after_its_delay_with_some_jitter(
    tries: int, delay: float
) -> None:
    verdict = POLICY.judge(Attempt(500), tries=tries)
    assert verdict.outcome == "retry"
    assert delay <= verdict.delay <= delay * (1 + JITTER)


def test_a_longer_retry_after_wins_and_is_capped_at_a_day() -> None:
    assert POLICY.judge(Attempt(503, retry_after=100.0), tries=1).delay == 100.0
    assert POLICY.judge(Attempt(503, retry_after=1e9), tries=1).delay == 86400.0
    assert POLICY.judge(Attempt(503, retry_after=1.0), tries=1).delay >= 5.0


def test_after_the_last_delay_the_delivery_is_dead() -> None:
    verdict = POLICY.judge(Attempt(None, error="timed out"), tries=3)
    assert (verdict.outcome, verdict.disable) == ("dead", False)


def test_the_schedule_comes_from_the_settings_and_a_bad_one_names_its_variable() -> None:
    assert Policy.from_settings(Settings(webhook_retry_schedule="1, 2")).schedule == (1.0, 2.0)
    with pytest.raises(ValueError, match="WEBHOOK_RETRY_SCHEDULE"):
        parse_schedule("1,soon")
    with pytest.raises(ValueError, match="negative"):
        parse_schedule("1,-2")
