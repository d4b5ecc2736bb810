"""200 conflicting moves at once on one match, through a real gunicorn with several workers:
exactly one applies, the others are refused with 409 or 412, nothing answers 5xx, and the
stored match stays whole (tiles conserved, one event per version)."""

from __future__ import annotations

import http.client
from collections import Counter
from collections.abc import Callable

import pytest

from tests.faults.consistency import (
    Seat,
    check_stored_match,
    create_match,
    dealt_tiles,
    new_key,
)
from tests.support.gunicorn_process import Reply, StagedRequest

REQUESTS = 200
ROUNDS = 3  # each on a match of its own; the first also warms the workers up
RACKS = [
    ["R10", "B10", "K10", "R11", "B11", "K11", "O1"],
    ["K1", "K2", "K3", "O12"],
]
POOL = [f"O{n}" for n in range(2, 12)]


def race(requests: list[StagedRequest]) -> list[Reply | BaseException]:
    """Stage every request (all but its last byte sent), release them all in one tight
    loop, then read the answers (a request the server dropped is an answer we must see)."""
    for request in requests:
        request.stage()
    for request in requests:
        request.release()
    answers: list[Reply | BaseException] = []
    for request in requests:
        try:
            answers.append(request.read())
        except (OSError, http.client.HTTPException) as error:
            answers.append(error)
    return answers


def conflicting_moves(
    ann: Seat, bo: Seat, version: int
) -> list[tuple[StagedRequest, frozenset[int]]]:
    """Moves that each end Ann's turn, or could only apply to a version that is gone,
    each with the statuses it may get: a move guarded by ``If-Match`` that loses can only
    be refused as stale (412); an unguarded one finds that it is not Ann's turn (409)."""
    both_sets = [["R10", "B10", "K10"], ["R11", "B11", "K11"]]
    kinds: list[tuple[Callable[[], StagedRequest], set[int]]] = [
        (lambda: ann.staged("draw"), {200, 409}),
        (lambda: ann.staged("draw", if_match=version), {200, 412}),
        (lambda: ann.staged("play", [["R10", "B10", "K10"]], if_match=version), {200, 412}),
        (lambda: ann.staged("play", [["R11", "B11", "K11"]]), {200, 409}),
        (lambda: ann.staged("play", both_sets, key=new_key()), {200, 409}),
        (lambda: ann.staged("draw", key=new_key(), if_match=version), {200, 412}),
        (lambda: ann.staged("pass"), {409}),  # the pool is not empty: never applies
        (lambda: bo.staged("draw", if_match=version), {409, 412}),  # never Bo's turn at v
    ]
    return [
        (make(), frozenset(allowed))
        for make, allowed in (kinds[i % len(kinds)] for i in range(REQUESTS))
    ]


@pytest.mark.slow
@pytest.mark.parametrize("round_", range(ROUNDS))
def test_200_conflicting_moves_apply_exactly_once(redis_server, redis_url, shared_gunicorn, round_):
    web = shared_gunicorn(redis_server.url)
    created, (ann, bo) = create_match(
        web,
        [{"name": "Ann"}, {"name": "Bo"}],
        setup={"racks": RACKS, "pool": POOL, "first_seat": 0},
    )
    match_id, version = created["id"], created["match"]["version"]
    moves = conflicting_moves(ann, bo, version)

    answers = race([request for request, _ in moves])

    failures = [a for a in answers if isinstance(a, BaseException)]
    assert not failures, f"{len(failures)} requests got no answer: {failures[:3]}"
    replies = [a for a in answers if isinstance(a, Reply)]
    statuses = Counter(reply.status for reply in replies)
    assert statuses[200] == 1, statuses
    unexpected = [
        (reply, sorted(allowed))
        for reply, (_, allowed) in zip(replies, moves, strict=True)
        if reply.status not in allowed
    ]
    assert not unexpected, (statuses, unexpected[:5])
    for reply in replies:
        assert reply.status == 200 or reply.header("Content-Type") == "application/problem+json"
        if reply.status == 412:
            assert reply.body["current_version"] == version + 1, reply

    with redis_server.client() as redis_client:
        state, events = check_stored_match(redis_client, match_id, dealt_tiles(RACKS, POOL))
    moves_applied = [e for e in events if e["version"] > version]
    assert len(moves_applied) == 1, moves_applied
    assert moves_applied[0]["seat"] == 0 and moves_applied[0]["type"] in ("played", "drew")
    assert state["current_seat"] == 1
    (winner,) = [r for r in replies if r.status == 200]
    assert winner.header("ETag") == f'"{version + 1}"'
    assert web.request("GET", f"/v1/matches/{match_id}").body["version"] == version + 1
    assert "WORKER TIMEOUT" not in web.log_text()
