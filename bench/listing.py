"""Benchmark: a player's listing with 1,000 matches against a match view, in the same run.

Run as ``python bench/listing.py`` (``make bench`` runs it); ``--matches`` (default 1000)
and ``--rounds`` (default 5) set the size, ``--strict`` exits 1 when a target is missed. It
starts its own Redis and gunicorn (``deploy/gunicorn.conf.py``, one app key) on free ports,
creates the matches (each with the player ``user-1`` and one other), half of them with one
draw made so that it is the other player's turn, then measures one request at a time over a
keep-alive connection, in rounds that each take every measure in turn:

- view: ``GET /v1/matches/{id}`` (a match of that player; the reference);
- first page: ``GET /v1/matches?ref=user-1&limit=50`` with the app's key (a new walk each time:
  the order of all 1,000 is taken, your-turn first, and kept for the next pages);
- next page: the same walk's second page (``cursor``);
- app page: ``GET /v1/matches?limit=50`` (the app's matches, newest first).

Target: the first page's median latency within 2.5 x the view's (the issue: "in about the time
of a match view"); every median is printed per round, and the ratio is judged on the median of
the rounds' ratios.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path
from statistics import median

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.support.http import Client  # noqa: E402
from bench.support.servers import start_gunicorn, stop  # noqa: E402
from tests.support.redis_process import RedisProcess, free_port  # noqa: E402

KEY = "bench-app-key-" + "k" * 24
REF = "user-1"
TARGET_FIRST_PAGE_RATIO = 2.5
SAMPLES = 60  # requests per measure per round


def create_matches(client: Client, count: int) -> list[str]:
    ids = []
    for number in range(count):
        body = {
            "players": [{"name": "Ann", "ref": REF}, {"name": "Bo", "ref": f"other-{number}"}],
            "rules": {"turn_seconds": 0},
        }
        created = client.call("POST", "/v1/matches", body, **{"X-API-Key": KEY})
        ids.append(created["id"])
        if number % 2:
            seat = created["match"]["current_seat"]
            token = created["seats"][seat]["token"]
            client.call(
                "POST", f"/v1/matches/{created['id']}/draw", Authorization=f"Bearer {token}"
            )
    return ids


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args()
    with ExitStack() as stack, tempfile.TemporaryDirectory(prefix="bench-listing-") as work:
        folder = Path(work)
        redis_server = RedisProcess(data_dir=folder / "redis")
        stack.callback(redis_server.cleanup)
        redis_server.start()
        port = free_port()
        os.environ["REFEREE_API_KEYS"] = f"bench={KEY}"  # start_gunicorn passes the environment
        gunicorn = start_gunicorn(port, redis_server.url, folder / "gunicorn.log")
        stack.callback(stop, gunicorn)
        Client(port).wait_ready(gunicorn, folder / "gunicorn.log")
        client = Client(port)
        print(f"creating {args.matches} matches of {REF}...", flush=True)
        ids = create_matches(client, args.matches)
        owner = {"X-API-Key": KEY}
        first = f"/v1/matches?ref={REF}&limit=50"
        ratios, rows = [], []
        for number in range(args.rounds):
            times: dict[str, list[float]] = {"view": [], "first": [], "next": [], "app": []}
            for sample in range(SAMPLES):
                match_id = ids[(sample * 7919 + number) % len(ids)]
                times["view"].append(client.timed(f"/v1/matches/{match_id}")[0])
                seconds, page = client.timed(first, **owner)
                times["first"].append(seconds)
                assert len(page["matches"]) == 50 and page["next_cursor"], page.keys()
                cursor = page["next_cursor"]
                times["next"].append(client.timed(f"{first}&cursor={cursor}", **owner)[0])
                times["app"].append(client.timed("/v1/matches?limit=50", **owner)[0])
            medians = {name: median(values) * 1000 for name, values in times.items()}
            ratio = medians["first"] / medians["view"]
            ratios.append(ratio)
            rows.append(medians)
            print(
                f"round {number + 1}: view {medians['view']:.2f} ms, first page "
                f"{medians['first']:.2f} ms (x{ratio:.2f}), next page {medians['next']:.2f} ms, "
                f"app page {medians['app']:.2f} ms",
                flush=True,
            )
        ratio = median(ratios)
        ok = ratio <= TARGET_FIRST_PAGE_RATIO
        view = median(row["view"] for row in rows)
        first_ms = median(row["first"] for row in rows)
        print()
        print(f"median of {args.rounds} rounds, {SAMPLES} requests each, {args.matches} matches")
        print(f"view GET /v1/matches/{{id}}          {view:6.2f} ms  reference")
        print(
            f"first page of {REF}'s {args.matches} matches {first_ms:6.2f} ms  x{ratio:.2f}"
            f"  target <= {TARGET_FIRST_PAGE_RATIO} x view  {'PASS' if ok else 'FAIL'}"
        )
        return 1 if args.strict and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
