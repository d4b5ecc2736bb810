"""Benchmark: Redis memory per match, whole games played through the API on a real redis-server.

Run as ``python bench/memory.py`` (``make bench`` runs it; ``--games`` sets how many whole
games, ``--strict`` exits 1 when a target is missed). It starts its own Redis (no persistence;
the stream node settings of ``deploy/redis.conf``, which it prints) and the app in this process
(Flask's test client: memory, not speed, is measured here), then:

- **a whole 4-player game**: four human seats of an app's match (an ``X-API-Key``, each player
  with a ``ref``, 60 s turns), each played as the web table plays: every turn asks for a hint,
  shares it as a draft and plays it, or draws (or passes once the pool is empty), every move
  with ``If-Match`` and its own ``Idempotency-Key``; until the game is over. The same games
  again with a webhook registered (every event) and the dispatcher delivering them to a
  receiver on loopback, and again as anonymous matches (no key: no listing entries, no outbox).
- **a new 2-player game**: an anonymous match just created (dealt, first turn running).

For each it prints ``MEMORY USAGE`` of every key the match owns, by kind (its state, its
event log, its idempotency receipts), the shard-wide keys' growth per match (deadline and
listing indexes, the app's outbox of notifications, the webhook's deliveries), and the
``INFO`` ``used_memory`` delta per match over all the games, which is the figure judged: at
most 16 KiB per 4-player match at the end of a whole game (a million live matches in 16
GiB). An app's match is judged on what it holds itself (its keys and index entries), and
with its share of the app's outbox, which keeps every notification ``OUTBOX_DAYS`` (7) days
for the feed to resume from, whatever became of the match. That share is measured here over
a few games spread over 32 shards' outboxes, each with its newest node preallocated whole,
so it is also given at scale: the bytes a notification takes in a long outbox, times the
notifications of a game. A webhook's finished deliveries are kept while they are among its
``LOG_KEPT`` (200) newest of a shard: a bound per webhook (printed), not a share per match.
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from service.app import create_app  # noqa: E402
from service.config import Settings  # noqa: E402
from service.dispatcher import Dispatcher  # noqa: E402
from service.store import SHARDS, MatchStore  # noqa: E402
from service.store.notify import LOG_KEPT, Notifications  # noqa: E402
from tests.support.receiver import receiver  # noqa: E402
from tests.support.redis_process import RedisProcess  # noqa: E402

TARGET_BYTES = 16 * 1024
APP_KEY = "bench-memory-key-0123456789abcdef"
APP_KEYS = f"bench={APP_KEY}"
NEW_MATCHES = 300
REDIS_CONF = ROOT / "deploy" / "redis.conf"


def stream_settings() -> tuple[str, ...]:
    """``deploy/redis.conf``'s stream node settings, as redis-server arguments."""
    found: list[str] = []
    for line in REDIS_CONF.read_text().splitlines():
        name, _, value = line.partition(" ")
        if name.startswith("stream-node-"):
            found += [f"--{name}", value.strip()]
    return tuple(found)


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
        app = create_app({"redis_url": redis_url, "test_mode": True, "api_keys": APP_KEYS})
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
    if rest.startswith("wh:d:"):
        return "deliveries (the webhook's newest a shard, 7 days)", False
    if rest.startswith("wh:"):
        return "delivery log, queues, leases, stats", False
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


def measure(
    redis: Any,
    play: Callable[[], str],
    count: int,
    *,
    prepare: Callable[[], None] = lambda: None,
    settle: Callable[[], None] = lambda: None,
) -> Usage:
    """Run ``play()`` ``count`` times on a flushed Redis (after one warm-up); what it holds.
    ``prepare`` runs after the flush, before the first reading; ``settle`` after the games,
    before the second."""
    redis.flushall()
    play()  # lazily made structures: the shard indexes, the outbox's first node
    redis.flushall()
    prepare()
    before = int(redis.info("memory")["used_memory"])
    ids = {play() for _ in range(count)}
    settle()
    after = int(redis.info("memory")["used_memory"])
    usage = Usage(matches=count, used_memory=(after - before) / count)
    for key in redis.scan_iter(count=1000):
        kind, owned = kind_of(key, ids)
        size = int(redis.memory_usage(key, samples=0) or 0)
        usage.add(("match: " if owned else "shared: ") + kind, 1, size)
    return usage


def notification_bytes(redis: Any) -> tuple[int, float]:
    """How many notifications the outboxes hold, and the bytes one takes in a long outbox
    (every entry copied, ten times over, into one stream: its nodes full, as at scale)."""
    entries = [fields for key in redis.scan_iter("*:out:*") for _, fields in redis.xrange(key)]
    copies = 10
    for _ in range(copies):
        for fields in entries:
            redis.xadd("bench:long-outbox", fields)
    size = int(redis.memory_usage("bench:long-outbox", samples=0) or 0)
    redis.delete("bench:long-outbox")
    return len(entries), size / max(1, copies * len(entries))


@contextmanager
def delivering(redis_url: str, client: Client, redis: Any) -> Iterator[tuple[Any, Any]]:
    """A receiver on loopback and a dispatcher delivering to it, for :func:`measure`:
    (prepare, settle): register a webhook of every event and start reading every shard's
    outbox; wait until every notification was delivered."""
    settings = Settings(redis_url=redis_url, test_mode=True, api_keys=APP_KEYS)
    with receiver() as hook:
        dispatcher = Dispatcher(Notifications(MatchStore.open(settings).topology), settings)
        thread = threading.Thread(target=dispatcher.run, daemon=True)

        def prepare() -> None:
            body = {"url": hook.url}
            client.call("POST", "/v1/webhooks", body=body, owned=True)
            if not thread.is_alive():
                thread.start()
            wait(lambda: len(list(redis.scan_iter("*:out:*"))) == SHARDS, "outbox groups")

        def settle() -> None:
            def delivered() -> bool:
                sent = sum(redis.xlen(key) for key in redis.scan_iter("*:out:*"))
                due = sum(redis.zcard(key) for key in redis.scan_iter("*:wh:due"))
                pending = sum(
                    float(redis.hget(key, "pending") or 0) for key in redis.scan_iter("*:wh:stats")
                )
                return len(hook.received) >= sent and not due and not pending

            wait(delivered, "every delivery")

        try:
            yield prepare, settle
        finally:
            dispatcher.stop()
            thread.join(timeout=30)


def wait(check: Callable[[], bool], what: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise RuntimeError(f"waited {timeout:.0f} s for {what}")
        time.sleep(0.1)


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
        server = RedisProcess(data_dir=Path(work) / "redis", extra_args=stream_settings())
        server.start()
        try:
            client = Client(server.url)
            with server.client(decode_responses=True) as redis:
                config = redis.config_get("stream-node-*")
                print(
                    f"Redis {redis.info('server')['redis_version']} on :{server.port},"
                    f" {', '.join(f'{k} {v}' for k, v in sorted(config.items()))}"
                    f" (deploy/redis.conf's)"
                )
                seeds = iter(range(1, 10**6))
                versions: list[int] = []

                def game(owned: bool) -> str:
                    match_id, version = client.whole_game(next(seeds), owned=owned)
                    versions.append(version)
                    return match_id

                owned = measure(redis, lambda: game(True), args.games)
                events = sum(versions[1:]) / (len(versions) - 1)
                notifications, per_notification = notification_bytes(redis)
                notifications_a_game = notifications / args.games
                with delivering(server.url, client, redis) as (prepare, settle):
                    hooked = measure(
                        redis, lambda: game(True), args.games, prepare=prepare, settle=settle
                    )
                delivery_keys = [key for key in redis.scan_iter("*:wh:d:*")]
                per_delivery = sum(
                    int(redis.memory_usage(key, samples=0) or 0) for key in delivery_keys
                ) / max(1, len(delivery_keys))
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
    show("a whole 4-player game, an app's match with a webhook delivered", hooked)
    show("a whole 4-player game, anonymous", anonymous)
    show("a new 2-player game, anonymous", fresh)
    print()
    at_scale = notifications_a_game * per_notification
    bound = LOG_KEPT * SHARDS * per_delivery
    print(
        f"an app's outbox at scale: {per_notification:.0f} B a notification in a long outbox,"
        f" {notifications_a_game:.1f} notifications a game: {at_scale:.0f} B a match"
    )
    print(
        f"a webhook's finished deliveries: {per_delivery:.0f} B each, at most {LOG_KEPT} a"
        f" shard: {bound / 2**20:.1f} MiB a webhook, whatever the matches played"
    )
    print()
    whole = "Redis per 4-player match at the end of a whole game"
    outbox = sum(size for kind, (_, size) in owned.keys.items() if "outbox" in kind)
    outbox /= owned.matches
    own = owned.used_memory - outbox
    ok = verdict(f"{whole}, anonymous", anonymous.used_memory)
    ok &= verdict(f"{whole}, an app's (its own keys and index entries)", own)
    ok &= verdict(f"{whole}, an app's, with its share of the 7-day outbox", owned.used_memory)
    ok &= verdict(f"{whole}, an app's, with its outbox share at scale", own + at_scale)
    ok &= verdict("Redis per new 2-player game", fresh.used_memory)
    kept = sum(size for kind, (_, size) in hooked.keys.items() if "deliveries (" in kind)
    print(
        f"(not judged: with a webhook, these {hooked.matches} games' deliveries add"
        f" {kept / hooked.matches / 1024:.2f} KiB a match: fewer than {LOG_KEPT} a shard, so"
        f" all are kept; at scale, the bound above)"
    )
    return 0 if ok or not args.strict else 1


if __name__ == "__main__":
    sys.exit(main())
