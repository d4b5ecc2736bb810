"""Benchmark: game records (issue 34): verifying whole games, and what a record costs Redis.

Run as ``python bench/record.py`` (``make bench`` runs it; ``--games`` sets how many games of
each kind). It measures:

- **verification**: ``service.record.verify`` (what ``POST /v1/records/verify`` runs) on whole
  games played by the referee's bots: 4 players on the standard set and 6 on the XP set, the
  median and the worst over the games, and the body each record takes (JSON and text); and
  the longest games people make, 6 players on the XP set drawing while they can (every tile
  of the pool drawn, then played out), which the verifier's 1 MiB must hold;
- **the Redis cost of a record**: whole 4-player games played through the API as
  bench/memory.py plays them (four people asking hints, sharing drafts, playing or drawing),
  on a real redis-server; for each match at game end, the ``MEMORY USAGE`` of its state hash as
  stored (with the packed event log), and of the same hash with the log packed again without
  the deal its ``game_over`` event carries (what records added): their difference is all a
  record costs in Redis; beside it, the record's own size (JSON, text) and how long building
  it takes (``GET .../games/1/record``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.memory import Client, stream_settings  # noqa: E402
from service import jsoncodec, record  # noqa: E402
from service.rules import Rules, TileSet  # noqa: E402
from service.store import Keys, archive  # noqa: E402
from tests.record.games import bots_only, random_game  # noqa: E402
from tests.support.redis_process import RedisProcess  # noqa: E402


def verification(seats: int, tile_set: TileSet, games: int) -> None:
    """Verify ``games`` bot games of ``seats`` players; print the median and worst times."""
    times, sizes, texts, turns = [], [], [], []
    for seed in range(1, games + 1):
        played = bots_only(seats, rules=Rules(tile_set=tile_set), seed=seed).record()
        started = time.perf_counter()
        verdict = record.verify(played)
        times.append(time.perf_counter() - started)
        assert verdict.valid, verdict
        sizes.append(len(json.dumps(record.to_json(played))))
        texts.append(len(record.to_text(played).encode()))
        turns.append(len(played.turns))
    print(
        f"verify, {seats} players, {tile_set.value} set ({games} games, "
        f"{statistics.median(turns):.0f} turns median, {max(turns)} most): "
        f"median {statistics.median(times) * 1000:.1f} ms, worst {max(times) * 1000:.1f} ms; "
        f"a record takes {statistics.median(sizes) / 1024:.1f} KiB as JSON "
        f"(largest {max(sizes) / 1024:.1f} KiB; the verifier takes 1,024), "
        f"{statistics.median(texts) / 1024:.1f} KiB as text"
    )


def longest(seats: int, tile_set: TileSet, games: int) -> None:
    """Games as long as people make them: each draws while the pool holds tiles, then plays
    the smallest play it finds (tests/record/games.py); the body and the verification."""
    times, sizes, turns = [], [], []
    for seed in range(1, games + 1):
        played = random_game(
            seats,
            rules=Rules(tile_set=tile_set, turn_seconds=0),
            seed=seed,
            bots=(False,) * seats,
            choose=_drawing_first,
            pick=lambda below: 0,
            steps=2000,
        ).record()
        started = time.perf_counter()
        verdict = record.verify(played)
        times.append(time.perf_counter() - started)
        assert verdict.valid, verdict
        sizes.append(len(json.dumps(record.to_json(played))))
        turns.append(len(played.turns))
    print(
        f"verify, {seats} players, {tile_set.value} set, drawing first ({games} games, "
        f"{statistics.median(turns):.0f} turns median, {max(turns)} most): "
        f"median {statistics.median(times) * 1000:.1f} ms, worst {max(times) * 1000:.1f} ms; "
        f"the record takes {statistics.median(sizes) / 1024:.1f} KiB as JSON "
        f"(largest {max(sizes) / 1024:.1f} KiB of the verifier's 1,024)"
    )


def _drawing_first(options: list[str]) -> str:
    for choice in ("draw", "play", "pass"):
        if choice in options:
            return choice
    return options[0]


def redis_cost(games: int) -> None:
    """Play ``games`` whole 4-player games through the API; print what their records cost."""
    with tempfile.TemporaryDirectory(prefix="bench-record-") as work:
        server = RedisProcess(data_dir=Path(work) / "redis", extra_args=stream_settings())
        server.start()
        try:
            client = Client(server.url)
            with server.client(decode_responses=True) as redis:
                stored, without, deal_bytes, json_sizes, text_sizes, builds = [], [], [], [], [], []
                for seed in range(1, games + 1):
                    match_id, _ = client.whole_game(seed, owned=False)
                    key = Keys(match_id).state
                    fields = redis.hgetall(key)
                    assert "a" in fields, "the log is packed once the game is over"
                    state = jsoncodec.loads(fields["s"])
                    assert not state["m"].get("dl"), "the state keeps no deal once it is over"
                    lines = list(archive.unpack(fields["a"]))
                    kept = [_without_deal(line) for line in lines]
                    deal_bytes.append(sum(map(len, lines)) - sum(map(len, kept)))
                    stored.append(int(redis.memory_usage(key, samples=0) or 0))
                    copy = f"{key}:without-deal"
                    redis.hset(copy, mapping={**fields, "a": archive.pack(kept)})
                    without.append(int(redis.memory_usage(copy, samples=0) or 0))
                    redis.delete(copy)
                    started = time.perf_counter()
                    answer = client.http.get(f"/v1/matches/{match_id}/games/1/record")
                    builds.append(time.perf_counter() - started)
                    json_sizes.append(len(answer.data))
                    text = client.http.get(
                        f"/v1/matches/{match_id}/games/1/record", headers={"Accept": "text/plain"}
                    )
                    text_sizes.append(len(text.data))
        finally:
            server.cleanup()
    added = [a - b for a, b in zip(stored, without, strict=True)]
    print(
        f"Redis cost, a whole 4-player game through the API ({games} games): the deal, in the "
        f"game_over event once the game is over (the state keeps it only while the game is "
        f"played), adds {statistics.median(deal_bytes):.0f} bytes of JSON to the log and "
        f"{statistics.median(added):.0f} bytes of MEMORY USAGE to the state hash that holds "
        f"the packed log ({statistics.median(without):.0f} -> {statistics.median(stored):.0f} "
        f"bytes, +{statistics.median(added) / statistics.median(without) * 100:.1f}%); "
        f"the record it gives is {statistics.median(json_sizes) / 1024:.1f} KiB as JSON, "
        f"{statistics.median(text_sizes) / 1024:.1f} KiB as text "
        f"({statistics.median(json_sizes) / max(1, statistics.median(added)):.0f}x what it "
        f"costs); building it (GET .../record) median {statistics.median(builds) * 1000:.1f} ms, "
        f"worst {max(builds) * 1000:.1f} ms"
    )


def _without_deal(line: str) -> str:
    event = json.loads(line)
    if event.get("type") == "game_over":
        event["data"].pop("deal", None)
    return json.dumps(event, separators=(",", ":"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20, help="games of each kind")
    args = parser.parse_args()
    verification(4, TileSet.STANDARD, args.games)
    verification(6, TileSet.XP, args.games)
    longest(6, TileSet.XP, max(2, args.games // 4))
    redis_cost(args.games)
    return 0


if __name__ == "__main__":
    sys.exit(main())
