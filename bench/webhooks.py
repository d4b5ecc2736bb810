"""Benchmark: how soon a ``turn.started`` webhook reaches a receiver after the move's answer.

Run as ``python bench/webhooks.py`` (``make bench`` runs it); ``--matches`` (default 1000),
``--moves`` (default 2000) and ``--rate`` (moves per second, default 200) set the load,
``--strict`` exits 1 when the target is missed. It starts its own Redis, gunicorn
(``deploy/gunicorn.conf.py``, test mode, one app key) and one dispatcher
(``python -m service.dispatcher``) on free ports, and a receiver on loopback in a process of
its own (an HTTP server answering 204, writing down when each webhook came). It creates the
matches (two human players each, owned by the app), registers a webhook for
``turn.started``, then makes draws spread over the matches from 4 threads at a steady pace,
and for each one measures from the moment its answer is read to the moment the receiver got
the ``turn.started`` of the version it made (a webhook that arrives first counts as 0).

Baseline in the same run: the moves' own latency (request to answer). Target: p99 of the
webhook delay <= 100 ms (the issue's), printed with the ratio to the moves' p99.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.support.http import Client  # noqa: E402
from bench.support.servers import start_dispatcher, start_gunicorn, stop  # noqa: E402
from bench.support.stats import percentile  # noqa: E402
from tests.support.receiver import Received, receiver  # noqa: E402
from tests.support.redis_process import RedisProcess, free_port  # noqa: E402

KEY = "bench-app-key-" + "k" * 24
TARGET_P99_MS = 100.0
THREADS = 4


def serve(arrivals: Path) -> int:
    """The receiver process: print its URL, then write ``match version time`` per webhook."""
    with arrivals.open("a", buffering=1) as out, receiver() as hook:
        lock = threading.Lock()

        def record(got: Received) -> tuple[int, dict[str, str], bytes, float]:
            data = got.json["data"]
            with lock:
                out.write(f"{data['match_id']} {data['version']} {got.at!r}\n")
            return 204, {}, b"", 0.0

        hook.behave = record
        print(hook.url, flush=True)
        threading.Event().wait()
    return 0


def read_arrivals(path: Path) -> dict[tuple[str, int], float]:
    arrived: dict[tuple[str, int], float] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            parts = line.split()
            if len(parts) == 3:
                arrived.setdefault((parts[0], int(parts[1])), float(parts[2]))
    return arrived


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=1000)
    parser.add_argument("--moves", type=int, default=2000)
    parser.add_argument("--rate", type=float, default=200.0)
    parser.add_argument("--strict", action="store_true", help="exit 1 when the target is missed")
    parser.add_argument("--serve", help=argparse.SUPPRESS)  # the receiver process
    args = parser.parse_args()
    if args.serve:
        return serve(Path(args.serve))
    with ExitStack() as stack, tempfile.TemporaryDirectory(prefix="bench-webhooks-") as work:
        folder = Path(work)
        arrivals = folder / "arrivals.txt"
        receiving = subprocess.Popen(
            [sys.executable, __file__, "--serve", str(arrivals)],
            stdout=subprocess.PIPE,
            start_new_session=True,
        )
        stack.callback(stop, receiving)
        assert receiving.stdout is not None
        hook_url = receiving.stdout.readline().decode().strip()
        redis_server = RedisProcess(data_dir=folder / "redis")
        stack.callback(redis_server.cleanup)
        redis_server.start()
        port = free_port()
        os.environ["REFEREE_API_KEYS"] = f"bench={KEY}"  # both processes read it
        gunicorn = start_gunicorn(port, redis_server.url, folder / "gunicorn.log")
        stack.callback(stop, gunicorn)
        Client(port).wait_ready(gunicorn, folder / "gunicorn.log")
        dispatcher = start_dispatcher(redis_server.url, folder / "dispatcher.log")
        stack.callback(stop, dispatcher)
        client = Client(port)
        owner = {"X-API-Key": KEY}
        client.call("POST", "/v1/webhooks", {"url": hook_url, "events": ["turn.started"]}, **owner)
        print(f"creating {args.matches} matches...", flush=True)
        matches: list[dict[str, Any]] = []
        for number in range(args.matches):
            body = {
                "players": [
                    {"name": "Ann", "ref": f"a-{number}"},
                    {"name": "Bo", "ref": f"b-{number}"},
                ],
                "rules": {"turn_seconds": 0},
            }
            created = client.call("POST", "/v1/matches", body, **owner)
            matches.append(
                {
                    "id": created["id"],
                    "tokens": [seat["token"] for seat in created["seats"]],
                    "current": created["match"]["current_seat"],
                }
            )
        time.sleep(1.0)  # the creations' own turn.started come in first
        answered: list[tuple[str, int, float]] = []
        move_seconds: list[float] = []
        per_thread = args.moves // THREADS
        interval = THREADS / args.rate

        def play(offset: int) -> None:
            own = Client(port)
            next_at = time.monotonic()
            for number in range(per_thread):
                match = matches[(offset + number * THREADS) % len(matches)]
                token = match["tokens"][match["current"]]
                started = time.perf_counter()
                moved = own.call(
                    "POST", f"/v1/matches/{match['id']}/draw", Authorization=f"Bearer {token}"
                )
                answered_at = time.time()
                move_seconds.append(time.perf_counter() - started)
                match["current"] = moved["match"]["current_seat"]
                answered.append((match["id"], moved["match"]["version"], answered_at))
                next_at += interval
                time.sleep(max(0.0, next_at - time.monotonic()))

        print(f"{args.moves} draws at {args.rate:g}/s from {THREADS} threads...", flush=True)
        threads = [threading.Thread(target=play, args=(offset,)) for offset in range(THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        deadline = time.monotonic() + 15
        while True:
            arrived = read_arrivals(arrivals)
            missing = [(m, v) for m, v, _ in answered if (m, v) not in arrived]
            if not missing or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        delays = [
            max(0.0, arrived[(m, v)] - at) * 1000 for m, v, at in answered if (m, v) in arrived
        ]
    moves_ms = [s * 1000 for s in move_seconds]
    p50, p95, p99 = (percentile(delays, q) for q in (0.5, 0.95, 0.99))
    move_p99 = percentile(moves_ms, 0.99)
    ok = not missing and p99 <= TARGET_P99_MS
    print()
    print(f"{len(answered)} moves over {args.matches} matches; {len(missing)} webhooks missing")
    print(
        f"move answer (baseline)   p50 {percentile(moves_ms, 0.5):6.1f} ms  p99 {move_p99:6.1f} ms"
    )
    print(f"turn.started after it    p50 {p50:6.1f} ms  p95 {p95:6.1f} ms  p99 {p99:6.1f} ms"
          f"  (x{p99 / move_p99:.2f} the move's p99)")  # fmt: skip
    print(
        f"webhook p99 {p99:.1f} ms  target <= {TARGET_P99_MS:g} ms, none missing  "
        f"{'PASS' if ok else 'FAIL'}"
    )
    return 1 if args.strict and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
