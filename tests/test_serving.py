"""The count of requests being served, and what a commit does with it (service.workers.serving)."""

from __future__ import annotations

from typing import Any

import pytest

from service.api.connections import WholeBody
from service.store import sending
from service.workers.serving import serving


def test_a_request_is_counted_while_the_app_serves_it_and_not_after() -> None:
    seen: list[int] = []

    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        seen.append(serving.count)
        start_response("200 OK", [])
        return [b""]

    def failing(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        seen.append(serving.count)
        raise RuntimeError("the app failed")

    before = serving.count
    WholeBody(app, seconds=0, max_bytes=100)({"PATH_INFO": "/"}, lambda *args: None)
    with pytest.raises(RuntimeError):
        WholeBody(failing, seconds=0, max_bytes=100)({"PATH_INFO": "/"}, lambda *args: None)
    assert seen == [before + 1, before + 1]
    assert serving.count == before


@pytest.mark.parametrize(("count", "yields"), [(0, True), (1, False), (2, True), (5, True)])
def test_a_commit_lets_other_requests_run_first_unless_its_own_is_the_only_one(
    monkeypatch: pytest.MonkeyPatch, count: int, yields: bool
) -> None:
    slept: list[float] = []
    monkeypatch.setattr(sending.time, "sleep", slept.append)
    monkeypatch.setattr(serving, "count", count)
    sending.let_others_run()
    assert slept == ([0] if yields else [])
