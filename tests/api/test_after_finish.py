"""What follows a match's finish (``rematch_created``, ``tokens_reissued``) and how a client
learns of it: the event stream ends with ``match_finished`` (asked again: 204), and a
long-poll of the finished match waits for the next version (docs/ARCHITECTURE.md, "Worker
model", "After the finish")."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from tests.api.test_backends import MOBILE, finished

pytestmark = pytest.mark.usefixtures("redis_url")


@pytest.fixture
def app_overrides() -> dict[str, Any]:
    return {"test_mode": True, "api_keys": f"mobile={MOBILE}", "stream_keepalive_seconds": 0.2}


def test_a_long_poll_of_a_finished_match_wakes_with_its_rematch(client) -> None:
    created, seats = finished(client)
    url = f"/v1/matches/{created['id']}"
    view = client.get(url).get_json()
    assert view["status"] == "finished"
    # the stream has nothing more to say about the finished match
    stream = client.get(f"{url}/stream", headers={"Last-Event-ID": str(view["version"])})
    assert stream.status_code == 204
    answers: list[Any] = []
    poll = threading.Thread(
        target=lambda: answers.append(
            client.get(url, query_string={"wait_version": view["version"], "timeout": 20})
        )
    )
    poll.start()
    poll.join(0.5)
    assert poll.is_alive(), "the long-poll should wait for a version after the finish"
    assert client.post(f"{url}/rematch", headers=seats[1].auth).status_code == 201
    poll.join(10)
    assert not poll.is_alive()
    [answer] = answers
    assert answer.status_code == 200
    woke = answer.get_json()
    assert woke["version"] == view["version"] + 1 and woke["rematch_id"]
    events = client.get(f"{url}/events", query_string={"after": view["version"]}).get_json()
    assert [e["type"] for e in events["events"]] == ["rematch_created"]
