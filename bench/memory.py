"""Benchmark: Redis memory per match, whole games played through the API on a real redis-server.

Run as ``python bench/memory.py`` (``make bench`` runs it; ``--games`` sets how many whole
games, ``--strict`` exits 1 when a target is missed). It starts its own Redis (no persistence)
and the app in this process (Flask's test client: memory, not speed, is measured here), then:

- **a whole 4-player game**: four human seats of an app's match (an ``X-API-Key``, each player
  with a ``ref``, 60 s turns), each played as the web table plays: every turn asks for a hint,
  shares it as a draft and plays it, or draws (or passes once the pool is empty), every move
  with ``If-Match`` and its own ``Idempotency-Key``; until the game is over. The same games
  again as anonymous matches (no key: no listing entries, no outbox).
- **a new 2-player game**: an anonymous match just created (dealt, first turn running).

For each it prints ``MEMORY USAGE`` of every key the match owns, by kind (its state, its
event log, its idempotency receipts), the shard-wide keys' growth per match (deadline and
listing indexes, the app's outbox of webhook notifications), and the ``INFO`` ``used_memory``
delta per match over all the games, which is the figure judged: at most 16 KiB per 4-player
match at the end of a whole game (a million live matches in 16 GiB). An app's match is
judged twice: on what it holds itself (its keys and index entries), and with its share of
the app's outbox, which keeps every notification ``OUTBOX_DAYS`` (7) days for the feed to
resume from, whatever became of the match (it grows with moves, not with live matches).
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from service.app import create_app  # noqa: E402
from tests.support.redis_process import RedisProcess  # noqa: E402

TARGET_BYTES = 16 * 1024
APP_KEY = "bench-memory-key-0123456789abcdef"
NEW_MATCHES = 300


@dataclass
class Usage:
    """Bytes by kind of key over some matches."""

    matches: int = 0
    keys: dict[str, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))
    used_memory: float = 0.0

    def add(self, kind: str, count: int, size: int) -> None:
        self.keys[kind][0] += count
        self.keys[kind][1] += size


class Client:
    """The API in this process, as a client of it sees it."""

    def __init__(self, redis_url: str) -> None:
        logging.disable(logging.INFO)  # the access log would drown the figures
        app = create_app(
            {"redis_url": redis_url, "test_mode": True, "api_keys": f"bench={APP_KEY}"}
        )
        self.http = app.test_client()

    def call(
        self,
        method: str,
        path: str,
        *,
        token: str | None = None,
        body: Any = None,
        if_match: int | None = None,
        owned: bool = False,
    ) -> Any:
        headers = {}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        if method != "GET" and not path.endswith("/matches"):
            headers["Idempotency-Key"] = uuid.uuid4().hex
        if if_match is not None:
            headers["If-Match"] = f'"{if_match}"'
        if owned:
            headers["X-API-Key"] = APP_KEY
        response = self.http.open(path, method=method, headers=headers, json=body)
        if response.status_code >= 300:
            raise RuntimeError(f"{method} {path}: {response.status_code} {response.data[:300]!r}")
        return response.get_json()

    def whole_game(self, seed: int, *, owned: bool) -> tuple[str, int]:
        """Play game 1 of a 4-player match to its end; return its id and its version."""
        players: list[dict[str, Any]] = [{"name": f"Player {n}"} for n in range(4)]
        if owned:
            for n, player in enumerate(players):
                player["ref"] = f"user-{seed}-{n}"
        body = {"players": players, "rules": {"turn_seconds": 60}, "seed": seed}
        created = self.call("POST", "/v1/matches", body=body, owned=owned)
        match_id, tokens = created["id"], [seat["token"] for seat in created["seats"]]
        view, path = created["match"], f"/v1/matches/{created['id']}"
        while view["status"] == "playing":
            token, version = tokens[view["current_seat"]], view["version"]
            hint = self.call("GET", f"{path}/hint", token=token)
            if hint["status"] == "play_found":
                table = {"table": hint["table"]}
                shared = self.call(
                    "PUT", f"{path}/draft", token=token, body=table, if_match=version
                )
                version = shared["match"]["version"]
                answer = self.call(
                    "POST", f"{path}/play", token=token, body=table, if_match=version
                )
            elif view["pool_count"]:
                answer = self.call("POST", f"{path}/draw", token=token, if_match=version)
            else:
                answer = self.call("POST", f"{path}/pass", token=token, if_match=version)
            view = answer["match"]
        return match_id, view["version"]


def kind_of(key: str, match_ids: set[str]) -> tuple[str, bool]:
    """What a key holds, and whether one match owns it (else a shard or an app shares it)."""
    _, _, rest = key.partition(":")
    match_id, _, what = rest.partition(":")
    if match_id in match_ids:
        return ("receipts" if what.startswith("idem") else what), True
    if rest.startswith("out:"):
        return "outbox (the app's webhook notifications)", False
    if rest.startswith("app:"):
        return "listing by app, ref, status", False
    return {
        "deadlines": "deadline index",
        "ix": "listing index",
        "sum": "listing summaries",
        "expiry": "expiry index",
        "warn": "turn.expiring schedule",
        "warnb": "turn.expiring bodies",
    }.get(rest, rest), False


def measure(redis: Any, play: Any, count: int) -> Usage:
    """Run ``play()`` ``count`` times on a flushed Redis (after one warm-up); what it holds."""
    redis.flushall()
    play()  # lazily made structures: the shard indexes, the outbox's first node
    redis.flushall()
    before = int(redis.info("memory")["used_memory"])
    ids = {play() for _ in range(count)}
    after = int(redis.info("memory")["used_memory"])
    usage = Usage(matches=count, used_memory=(after - before) / count)
    for key in redis.scan_iter(count=1000):
        kind, owned = kind_of(key, ids)
        size = int(redis.memory_usage(key, samples=0) or 0)
        usage.add(("match: " if owned else "shared: ") + kind, 1, size)
    return usage


def show(title: str, usage: Usage, extra: str = "") -> None:
    print(f"\n{title}: {usage.matches} matches{extra}")
    print(f"  {'key':<52} {'keys/match':>10} {'bytes/match':>12}")
    rows = sorted(usage.keys.items(), key=lambda item: -item[1][1])
    for kind, (count, size) in rows:
        print(f"  {kind:<52} {count / usage.matches:10.2f} {size / usage.matches:12.0f}")
    summed = sum(size for _, size in usage.keys.values()) / usage.matches
    print(f"  {'sum of MEMORY USAGE (shared keys: their growth)':<52} {'':>10} {summed:12.0f}")
    print(f"  {'INFO used_memory delta per match':<52} {'':>10} {usage.used_memory:12.0f}")


def verdict(name: str, value: float) -> bool:
    ok = value <= TARGET_BYTES
    print(
        f"{name}: {value / 1024:.2f} KiB per match (target <= {TARGET_BYTES // 1024} KiB):"
        f" {'PASS' if ok else 'FAIL'}"
    )
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20, help="whole 4-player games per kind")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench-memory-") as work:
        server = RedisProcess(data_dir=Path(work) / "redis")
        server.start()
        try:
            client = Client(server.url)
            with server.client(decode_responses=True) as redis:
                print(f"Redis {redis.info('server')['redis_version']} on :{server.port}")
                seeds = iter(range(1, 10**6))
                versions: list[int] = []

                def game(owned: bool) -> str:
                    match_id, version = client.whole_game(next(seeds), owned=owned)
                    versions.append(version)
                    return match_id

                owned = measure(redis, lambda: game(True), args.games)
                events = sum(versions[1:]) / (len(versions) - 1)
                versions.clear()
                anonymous = measure(redis, lambda: game(False), args.games)

                def new_game() -> str:
                    players = [{"name": "Ann"}, {"name": "Bo"}]
                    body = {"players": players, "rules": {"turn_seconds": 60}}
                    created: str = client.call("POST", "/v1/matches", body=body)["id"]
                    return created

                fresh = measure(redis, new_game, NEW_MATCHES)
        finally:
            server.cleanup()

    show("a whole 4-player game, an app's match", owned, f", {events:.0f} events a game")
    show("a whole 4-player game, anonymous", anonymous)
    show("a new 2-player game, anonymous", fresh)
    print()
    whole = "Redis per 4-player match at the end of a whole game"
    outbox = sum(size for kind, (_, size) in owned.keys.items() if "outbox" in kind)
    outbox /= owned.matches
    ok = verdict(f"{whole}, anonymous", anonymous.used_memory)
    ok &= verdict(f"{whole}, an app's (its own keys and index entries)", owned.used_memory - outbox)
    ok &= verdict(f"{whole}, an app's, with its share of the 7-day outbox", owned.used_memory)
    ok &= verdict("Redis per new 2-player game", fresh.used_memory)
    return 0 if ok or not args.strict else 1


if __name__ == "__main__":
    sys.exit(main())
