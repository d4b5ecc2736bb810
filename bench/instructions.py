"""Benchmark: the instructions a worker spends on one request, counted by valgrind's callgrind.

Run as ``python bench/instructions.py`` (``make bench`` runs it); ``--requests`` (default 200)
sets how many of each are counted, ``--strict`` exits 1 when a target is missed, ``--keep DIR``
keeps callgrind's files (read them with ``callgrind_annotate``), ``--profile KIND`` runs the same
requests under cProfile instead (no valgrind: where the Python time goes, by function).

Wall-clock figures on a shared machine move with the other processes' load; the instructions a
request executes do not. So one process is built as a gunicorn gevent worker runs the app
(gevent's patches, ``create_app()``, the workers' collector settings and freeze from
``service.workers.gunicorn.post_worker_init``), on a real redis-server in memory started here,
and one 2-player test-mode match is dealt (as bench/api.py deals its drafts' matches). Then for
each kind of request: 20 to warm up, then ``--requests`` counted (callgrind's counters zeroed
before them and dumped after, by client requests from a small C helper compiled here):

- readyz: ``GET /readyz``, the baseline (routing, one Redis PING, a small JSON answer);
- view: ``GET /v1/matches/{id}`` with seat 0's token;
- cold view: the same of a match this worker has never read (2- to 4-player matches dealt by
  another app in the same process, as another worker or host deals them; a new one each
  request): what every view costs a worker that holds too few copies for the matches it
  serves (the read of Redis, the state decoded, the view rendered);
- view again: the second view of each of those matches (the copy held since the cold view);
- draft: ``PUT .../draft`` by seat 0, each draft a different part of the rack (as bench/api.py);
- short draft: the same with ``Prefer: return=minimal`` (204, no view rendered);
- batched draft: 4 greenlets draft at once, each by seat 0 of its own match, so their commits
  go through the batcher together (as under bench/api.py's 32 connections, where a worker
  serves many requests at once; a draft alone takes the lone commit's shorter path), one more
  request counted as served meanwhile (so the first greenlet does not commit alone): counted
  per draft, the greenlets' spawning and joining included;
- hint: ``GET .../hint`` on the empty table with a rack of 14.

Before each kind's counted requests the collector runs once (not counted), so that each kind
pays the collections its own allocations make: a full collection left pending by the kinds
before would otherwise land in one kind's count or another's, moving it by up to 30,000 a
request between runs of the same code.

The requests go straight to the WSGI app: gunicorn's own HTTP work, the same for every request,
is left out (bench/api.py's wall-clock ratio of worker time has it in both). Each kind is
printed as instructions per request and as a ratio of ``/readyz``'s in the same run. Target
(issue 33): a draft at most 1.5 x a ``/readyz``. Without valgrind, or without a C compiler and
valgrind's headers for the helper, it says so and exits 0 without measuring.
"""

from __future__ import annotations

import sys

if __name__ == "__main__" and "--subject" in sys.argv:  # a worker patches before any import
    from gevent import monkey

    monkey.patch_all()

import argparse
import gc
import io
import json
import os
import random
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

KINDS = (
    "readyz", "view", "cold view", "view again", "draft", "short draft", "batched draft", "hint",
)  # fmt: skip
TOGETHER = 4  # a batched draft: this many greenlets draft at once, on as many matches
PER_CALL = {"batched draft": TOGETHER}  # requests one call of a kind makes (else 1)
WARM_UP = 20
TARGET_DRAFT_RATIO = 1.5
HELPER_C = """
#include <valgrind/callgrind.h>
void counting_start(void) { CALLGRIND_START_INSTRUMENTATION; }
void counting_zero(void) { CALLGRIND_ZERO_STATS; }
void counting_dump(const char *name) { CALLGRIND_DUMP_STATS_AT(name); }
void counting_stop(void) { CALLGRIND_STOP_INSTRUMENTATION; }
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200, help="requests counted per kind")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--keep", type=Path, help="keep callgrind's files in this folder")
    parser.add_argument("--profile", choices=KINDS, help="cProfile one kind instead (no valgrind)")
    parser.add_argument("--subject", help=argparse.SUPPRESS)  # the process measured
    args = parser.parse_args()
    if args.subject is not None:
        if args.profile is not None:
            return profiled(args.profile, args.requests)
        return subject(args.subject, args.requests)
    if args.profile is not None:
        return profile(args.profile, args.requests)

    valgrind = shutil.which("valgrind")
    if valgrind is None:
        print("valgrind not found (Debian: apt-get install valgrind): nothing measured")
        return 0
    with tempfile.TemporaryDirectory(prefix="bench-instructions-") as work:
        folder = args.keep or Path(work)
        folder.mkdir(parents=True, exist_ok=True)
        helper = build_helper(folder)
        if helper is None:
            return 0
        counts = count(valgrind, helper, folder, args.requests)
    return report(counts, args.requests, strict=args.strict)


def build_helper(folder: Path) -> Path | None:
    """The shared library whose functions make callgrind's client requests, or ``None`` (said)."""
    compiler = shutil.which(os.environ.get("CC", "cc"))
    if compiler is None or not Path("/usr/include/valgrind/callgrind.h").exists():
        print("no C compiler or no valgrind/callgrind.h for the counting helper: nothing measured")
        return None
    source, library = folder / "counting.c", folder / "counting.so"
    source.write_text(HELPER_C)
    built = subprocess.run(
        [compiler, "-shared", "-fPIC", "-O1", "-o", str(library), str(source)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if built.returncode != 0:
        print(f"the counting helper did not compile: nothing measured\n{built.stderr[-2000:]}")
        return None
    return library


def count(valgrind: str, helper: Path, folder: Path, requests: int) -> dict[str, int]:
    """Run the subject under callgrind; the instructions each kind's counted requests took."""
    from tests.support.redis_process import RedisProcess

    out = folder / "callgrind.out"
    with RedisProcess(data_dir=folder / "redis") as server:
        env = {
            **os.environ,
            "REDIS_URL": server.url,
            "REFEREE_TEST_MODE": "1",
            "LOG_LEVEL": "warning",
            "RATE_LIMIT": "",
            "COUNTING_HELPER": str(helper),
        }
        command = [
            valgrind, "--tool=callgrind", "--instr-atstart=no", "--dump-instr=no",
            f"--callgrind-out-file={out}", sys.executable, str(Path(__file__).resolve()),
            "--subject", str(helper), "--requests", str(requests),
        ]  # fmt: skip
        run = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit(f"the measured process failed:\n{run.stdout[-2000:]}{run.stderr[-3000:]}")
    counts: dict[str, int] = {}
    for dump in folder.glob("callgrind.out.*"):
        text = dump.read_text(errors="replace")
        trigger = re.search(r"^desc: Trigger: Client Request: (.+)$", text, re.MULTILINE)
        total = re.search(r"^(?:summary|totals): (\d+)", text, re.MULTILINE)
        if trigger and total and trigger.group(1) in KINDS:
            counts[trigger.group(1)] = int(total.group(1))
    missing = [kind for kind in KINDS if kind not in counts]
    if missing:
        raise SystemExit(f"callgrind wrote no counts for {missing} (files in {folder})")
    return counts


def report(counts: dict[str, int], requests: int, *, strict: bool) -> int:
    base = counts["readyz"] / requests
    print(f"instructions per request, {requests} of each (callgrind, one worker-like process)")
    for kind in KINDS:
        each = counts[kind] / requests / PER_CALL.get(kind, 1)
        print(f"  {kind:<13} {each:>12,.0f}   x{each / base:.2f} of /readyz")
    ratio = counts["draft"] / counts["readyz"]
    verdict = "PASS" if ratio <= TARGET_DRAFT_RATIO else "FAIL"
    print(f"a draft x{ratio:.2f} of a /readyz (target <= {TARGET_DRAFT_RATIO}): {verdict}")
    batched = counts["batched draft"] / TOGETHER / counts["readyz"]
    print(f"a batched draft x{batched:.2f} of a /readyz (as under load; not judged by --strict)")
    return 1 if strict and verdict == "FAIL" else 0


# -- the measured process ------------------------------------------------------------------


def subject(helper: str, requests: int) -> int:
    """Build the app as a worker does, deal a match, and count each kind of request."""
    import ctypes

    counting = ctypes.CDLL(helper)
    counting.counting_dump.argtypes = [ctypes.c_char_p]
    call = worker_app()
    kinds = requests_of(call, requests + WARM_UP)
    counting.counting_start()
    for kind in KINDS:
        for _ in range(WARM_UP):
            kinds[kind]()
        gc.collect()  # every kind counted from the same collector's state (see the module)
        counting.counting_zero()
        for _ in range(requests):
            kinds[kind]()
        counting.counting_dump(kind.encode())
    counting.counting_stop()
    return 0


def profile(kind: str, requests: int) -> int:
    """cProfile ``requests`` of ``kind`` in a worker-like process (a Redis started here)."""
    from tests.support.redis_process import RedisProcess

    with (
        tempfile.TemporaryDirectory(prefix="bench-instructions-") as work,
        RedisProcess(data_dir=Path(work) / "redis") as server,
    ):
        env = {**os.environ, "REDIS_URL": server.url, "REFEREE_TEST_MODE": "1",
               "LOG_LEVEL": "warning", "RATE_LIMIT": ""}  # fmt: skip
        command = [sys.executable, str(Path(__file__).resolve()), "--subject", "",
                   "--profile", kind, "--requests", str(requests)]  # fmt: skip
        return subprocess.run(command, cwd=ROOT, env=env, check=False).returncode


def profiled(kind: str, requests: int) -> int:
    """The measured process under cProfile: the functions ``kind`` spends most in."""
    import cProfile
    import pstats

    make = requests_of(worker_app(), requests + WARM_UP)[kind]
    for _ in range(WARM_UP):
        make()
    profiler = cProfile.Profile()
    profiler.runcall(lambda: [make() for _ in range(requests)])
    pstats.Stats(profiler).sort_stats("tottime").print_stats(40)
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(60)
    return 0


def worker_app() -> Callable[..., bytes]:
    """The app built as a gunicorn gevent worker builds it; a function that calls it."""
    from types import SimpleNamespace

    from service.app import create_app
    from service.workers import gunicorn

    app = create_app()
    gunicorn.post_worker_init(SimpleNamespace(cfg=None))  # the collector's settings and freeze
    return caller(app)


def caller(app: Any) -> Callable[..., bytes]:
    """A function that calls the WSGI app ``app`` and answers the body (a non-2xx exits)."""

    def call(method: str, path: str, body: bytes | None = None, **headers: str) -> bytes:
        environ = {
            "REQUEST_METHOD": method, "PATH_INFO": path, "QUERY_STRING": "",
            "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "8000", "SERVER_PROTOCOL": "HTTP/1.1",
            "wsgi.url_scheme": "http", "wsgi.input": io.BytesIO(body or b""),
            "wsgi.errors": sys.stderr, "wsgi.version": (1, 0), "wsgi.multithread": False,
            "wsgi.multiprocess": True, "wsgi.run_once": False, "REMOTE_ADDR": "127.0.0.1",
            "CONTENT_LENGTH": str(len(body or b"")),
            **{f"HTTP_{name.upper()}": value for name, value in headers.items()},
        }  # fmt: skip
        if body is not None:
            environ["CONTENT_TYPE"] = "application/json"
        status: list[str] = []
        answer = b"".join(app(environ, lambda line, headers, info=None: status.append(line)))
        if not status[0].startswith("2"):
            raise SystemExit(f"{method} {path}: {status[0]} {answer[:300]!r}")
        return answer  # not decoded: only the worker's own work is counted

    return call


def requests_of(call: Callable[..., bytes], fresh: int) -> dict[str, Callable[[], bytes]]:
    """Each kind of request, on one dealt 2-player match (seat 0 to play, no time limit); the
    cold views on ``fresh`` matches dealt by another app (another worker's store)."""
    from service.app import create_app
    from service.rules import full_set

    box = [tile.code for tile, number in full_set().items() for _ in range(number)]
    random.Random(7).shuffle(box)
    rack = box[:14]
    created = json.loads(call("POST", "/v1/matches", json.dumps({
        "players": [{"name": "Ann"}, {"name": "Bo"}], "rules": {"turn_seconds": 0},
        "setup": {"racks": [rack, box[14:28]], "pool": box[28:], "first_seat": 0},
    }).encode()))  # fmt: skip
    match = f"/v1/matches/{created['id']}"
    token = f"Bearer {created['seats'][0]['token']}"
    # 1 to 3 tiles of the rack laid out, a different part each time (bench/api.py's DRAFT_LUA)
    drafts = [json.dumps({"table": [rack[turn + 2 : turn + 2 + turn % 3 + 1]]}).encode()
              for turn in range(12)]  # fmt: skip
    turns = iter(range(10**9))

    def draft(**headers: str) -> bytes:
        body = drafts[next(turns) % 12]
        return call("PUT", f"{match}/draft", body, authorization=token, **headers)

    others = []  # (path, bearer) of the batched drafts' matches, seat 0 to play in each
    for _ in range(TOGETHER):
        dealt = json.loads(call("POST", "/v1/matches", json.dumps({
            "players": [{"name": "Ann"}, {"name": "Bo"}], "rules": {"turn_seconds": 0},
            "setup": {"racks": [rack, box[14:28]], "pool": box[28:], "first_seat": 0},
        }).encode()))  # fmt: skip
        others.append((f"/v1/matches/{dealt['id']}", f"Bearer {dealt['seats'][0]['token']}"))
    rounds = iter(range(10**9))

    def batched() -> bytes:
        import gevent

        from service.workers.serving import serving

        body = drafts[next(rounds) % 12]
        serving.count += 1  # one more request served meanwhile (a long poll), as under load:
        try:  # else the first greenlet, alone in the app when it commits, commits alone
            drafting = [
                gevent.spawn(call, "PUT", f"{path}/draft", body, authorization=bearer)
                for path, bearer in others
            ]
            gevent.joinall(drafting, raise_error=True)
        finally:
            serving.count -= 1
        return b"".join(greenlet.value for greenlet in drafting)

    elsewhere = caller(create_app())
    unseen: list[tuple[str, str]] = []
    for n in range(fresh):
        players = [{"name": f"P{i}"} for i in range(2 + n % 3)]
        dealt = json.loads(
            elsewhere("POST", "/v1/matches", json.dumps({"players": players}).encode())
        )
        unseen.append(
            (f"/v1/matches/{dealt['id']}", f"Bearer {dealt['seats'][n % len(players)]['token']}")
        )
    cold, again = iter(unseen), iter(unseen)

    def view_of(matches: Iterator[tuple[str, str]]) -> bytes:
        path, bearer = next(matches)
        return call("GET", path, authorization=bearer)

    return {
        "readyz": lambda: call("GET", "/readyz"),
        "view": lambda: call("GET", match, authorization=token),
        "cold view": lambda: view_of(cold),
        "view again": lambda: view_of(again),
        "draft": draft,
        "short draft": lambda: draft(prefer="return=minimal"),
        "batched draft": batched,
        "hint": lambda: call("GET", f"{match}/hint", authorization=token),
    }


if __name__ == "__main__":
    sys.exit(main())
