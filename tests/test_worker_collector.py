"""A gunicorn worker runs a young collection every so many answers, freezes what each garbage
collection leaves, and collects everything frozen in full after an answer when that is due
(service/workers/gunicorn.py, COLLECTOR_FREEZE; service/rules/solver/collector.py). Run in a
process of its own: the hooks tune the collector of the process they run in."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

WORKER = """
import gc, json, weakref
from types import SimpleNamespace
from service.rules.solver import collector
from service.workers import gunicorn

gunicorn.post_worker_init(SimpleNamespace(cfg=None))  # as gunicorn calls it in a new worker

class Node:
    def __init__(self):
        self.me = self

held = [Node()]
dead = weakref.ref(held[0])
frozen = gc.get_freeze_count()
kept = [[n] for n in range(1000)]  # lives on, as the copies of matches do
for _ in range(gunicorn.YOUNG_COLLECTION_EVERY):
    gunicorn.post_request(None, None, None, None)  # after each answer
grew = gc.get_freeze_count() - frozen
held.clear()  # garbage in a cycle: frozen with the rest if the collection froze it
gc.collect()
alive_after_collections = dead() is not None
collector.freeze_after_collections(reclaim_every=0.0)  # the reclaim's time has come
gc.collect(0)
for _ in range(gunicorn.YOUNG_COLLECTION_EVERY):
    gunicorn.post_request(None, None, None, None)
print(json.dumps({"grew": grew, "alive": alive_after_collections, "reclaimed": dead() is None}))
"""


def _worker(collector_freeze: str) -> dict[str, object]:
    env = {**os.environ, "COLLECTOR_FREEZE": collector_freeze, "SOLVER_FREEZE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", WORKER],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    answer: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return answer


def test_a_worker_collects_after_answers_freezes_what_is_left_and_reclaims_it() -> None:
    seen = _worker("1")
    assert seen["grew"] >= 1000  # type: ignore[operator]
    assert seen["alive"]  # frozen while alive: only the reclaim can free its cycle
    assert seen["reclaimed"]


def test_a_worker_with_collector_freeze_off_freezes_nothing_a_collection_leaves() -> None:
    seen = _worker("0")
    assert seen["grew"] == 0
    assert not seen["alive"]  # an ordinary full collection freed the cycle
