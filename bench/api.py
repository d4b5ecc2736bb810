"""Benchmark: the HTTP API under gunicorn, measured with wrk against a baseline in the same run.

Run as ``python bench/api.py`` (``make bench`` runs it); ``--rounds`` (default 3) and
``--duration`` (seconds of each measurement, default 5) set how long it measures, ``--strict``
exits 1 when a target is missed. It starts its own Redis (no append-only file: the figures are
the service's, not the disk's) and gunicorn (``deploy/gunicorn.conf.py``, test mode) on free
ports, then measures at 32 connections, in rounds that each run all three loads one after the
other (so a slow spell of a shared machine falls on every load of a round, not on one load):

- baseline: ``GET /readyz`` (routing, one Redis PING, a small JSON answer);
- view: ``GET /v1/matches/{id}`` over 256 live matches, a third of them with a seat token;
- write mix: per match, the seat whose turn it is shares a draft (``PUT .../draft``), then
  draws (``POST .../draw``), and the turn passes: test-mode matches dealt from a known setup
  with no time limit (``turn_seconds: 0``), each in the hands of one wrk connection at a time;

and Redis memory per active 4-player match (``INFO memory`` used_memory delta over 300 new
matches dealt from a shuffled box, 60 s turns, so their deadlines are scheduled too).

The load generator is wrk (C, one thread per core it is given; Lua scripts written here). When
it is missing the bench installs Debian's ``wrk`` package as root, else says how to get it and
exits 0 without measuring. Targets: view >= 0.6 x baseline throughput, write mix >= 0.4 x,
p99 latency < 50 ms, < 8 KiB of Redis memory per match. Every round is printed; a ratio is
taken within each round, and the targets are judged on the median over the rounds.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import runpy
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from statistics import median
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from service.rules import full_set  # noqa: E402
from tests.support.redis_process import RedisProcess, free_port  # noqa: E402

CONNECTIONS = 32
BASELINE = "baseline GET /readyz"
VIEW = "view GET /v1/matches/{id}"
WRITES = "writes PUT draft + POST draw"
VIEW_MATCHES = 256
WRITE_MATCHES = 512
MEMORY_MATCHES = 300
TARGET_VIEW_RATIO = 0.6
TARGET_WRITE_RATIO = 0.4
TARGET_P99_MS = 50.0
TARGET_BYTES_PER_MATCH = 8 * 1024

# Prints wrk's figures as one JSON line; shared by every script.
DONE_LUA = """
done = function(summary, latency, requests)
  local errors = summary.errors
  io.write(string.format(
    '{"requests": %d, "seconds": %.6f, "p50_us": %d, "p99_us": %d, "max_us": %d, ' ..
    '"non_2xx": %d, "socket_errors": %d}\\n',
    summary.requests, summary.duration / 1e6, latency:percentile(50), latency:percentile(99),
    latency.max, errors.status, errors.connect + errors.read + errors.write + errors.timeout))
end
"""

VIEW_LUA = """
local ids, tokens = {}, {}
for line in io.lines("%(data)s") do
  local id, token = line:match("(%%S+) (%%S+)")
  ids[#ids + 1] = id
  tokens[#tokens + 1] = token
end
local n = 0
request = function()
  n = n + 1
  local i = (n * 7919) %% #ids + 1
  if n %% 3 == 0 then
    return wrk.format("GET", "/v1/matches/" .. ids[i], {["Authorization"] = "Bearer " .. tokens[i]})
  end
  return wrk.format("GET", "/v1/matches/" .. ids[i])
end
"""

# Each wrk thread gets its own slice of the matches (setup() hands out thread numbers), walks
# them round robin, and keeps per match whose turn it is and which step comes next.
WRITE_LUA = """
local threads = {}
local counter = 0
setup = function(thread)
  thread:set("index", counter)
  counter = counter + 1
  table.insert(threads, thread)
end

init = function(args)
  local total = tonumber(args[1])
  matches = {}
  local all = {}
  for line in io.lines("%(data)s") do
    local id, t0, t1, d0, d1 = line:match("(%%S+) (%%S+) (%%S+) (%%S+) (%%S+)")
    all[#all + 1] = {id = id, tokens = {t0, t1}, drafts = {d0, d1}, seat = 1, step = 0}
  end
  for i = 1, #all do
    if (i - 1) %% total == index then matches[#matches + 1] = all[i] end
  end
  cursor = 0
end

request = function()
  cursor = cursor %% #matches + 1
  local m = matches[cursor]
  local headers = {["Authorization"] = "Bearer " .. m.tokens[m.seat]}
  local path = "/v1/matches/" .. m.id
  if m.step == 0 then
    m.step = 1
    headers["Content-Type"] = "application/json"
    local body = '{"table": [["' .. m.drafts[m.seat] .. '"]]}'
    return wrk.format("PUT", path .. "/draft", headers, body)
  end
  m.step = 0
  m.seat = 3 - m.seat
  return wrk.format("POST", path .. "/draw", headers)
end
"""


@dataclass(frozen=True)
class Run:
    """One wrk measurement."""

    name: str
    requests: int
    seconds: float
    p50_ms: float
    p99_ms: float
    max_ms: float
    non_2xx: int
    socket_errors: int

    @property
    def throughput(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=5, help="seconds per measurement")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the three loads")
    parser.add_argument("--threads", type=int, default=1, help="wrk threads")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args()

    wrk = ensure_wrk()
    if wrk is None:
        return 0
    with ExitStack() as stack, tempfile.TemporaryDirectory(prefix="bench-api-") as work:
        folder = Path(work)
        redis_server = RedisProcess(data_dir=folder / "redis")
        stack.callback(redis_server.cleanup)
        redis_server.start()
        port = free_port()
        gunicorn = start_gunicorn(port, redis_server.url, folder / "gunicorn.log")
        stack.callback(stop, gunicorn)
        api = Api(port)
        api.wait_ready(gunicorn, folder / "gunicorn.log")
        print(
            f"gunicorn on :{port} ({workers()} workers, {worker_class()}),"
            f" Redis on :{redis_server.port}, wrk {args.threads} thread(s),"
            f" {CONNECTIONS} connections, {args.rounds} rounds of {args.duration} s per load"
        )

        per_match = memory_per_match(api, redis_server)
        print("dealing the matches...", flush=True)
        view_data = folder / "view.txt"
        view_data.write_text("".join(f"{m} {t}\n" for m, t in view_matches(api)))
        write_data = []
        for number in range(args.rounds):  # fresh matches for each round: each starts at seat 0
            path = folder / f"write-{number}.txt"
            path.write_text("".join(" ".join(row) + "\n" for row in write_matches(api, number)))
            write_data.append(path)

        measure = Measure(wrk, port, folder, args.duration, args.threads)
        measure.warm_up()
        rounds = []
        for number in range(args.rounds):
            baseline = measure.run(BASELINE, "", "/readyz")
            view = measure.run(VIEW, VIEW_LUA % {"data": view_data}, "/")
            writes = measure.run(
                WRITES, WRITE_LUA % {"data": write_data[number]}, "/",
                script_args=[str(args.threads)],
            )  # fmt: skip
            rounds.append((baseline, view, writes))
            print(f"round {number + 1}: " + "; ".join(
                f"{run.name.split()[0]} {run.throughput:.0f} req/s p99 {run.p99_ms:.1f} ms"
                for run in (baseline, view, writes)
            ), flush=True)  # fmt: skip
        missed = report(rounds, per_match)
    return 1 if missed and args.strict else 0


# --- the tools ---------------------------------------------------------------------------------


def ensure_wrk() -> str | None:
    """Return wrk's path, installing Debian's package as root when missing; None if absent."""
    found = shutil.which("wrk")
    if found:
        return found
    if os.geteuid() == 0 and shutil.which("apt-get"):
        print("wrk is missing: installing Debian's wrk package...")
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.STDOUT, "env": env}
        install = ["apt-get", "install", "-y", "-qq", "--no-install-recommends", "wrk"]
        if subprocess.run(install, check=False, **quiet).returncode != 0:
            subprocess.run(["apt-get", "update", "-qq"], check=False, **quiet)
            subprocess.run(install, check=False, **quiet)
        found = shutil.which("wrk")
        if found:
            return found
    print(
        "bench/api.py needs wrk, the HTTP load generator, and found none: install it "
        "(Debian/Ubuntu: `sudo apt-get install wrk`; macOS: `brew install wrk`) and run again. "
        "Nothing was measured."
    )
    return None


def gunicorn_setting(name: str) -> int:
    """A setting as deploy/gunicorn.conf.py works it out from this environment."""
    value: int = runpy.run_path(str(ROOT / "deploy" / "gunicorn.conf.py"))[name]
    return value


def workers() -> int:
    return gunicorn_setting("workers")


def worker_class() -> str:
    value: str = runpy.run_path(str(ROOT / "deploy" / "gunicorn.conf.py"))["worker_class"]
    return value


def start_gunicorn(port: int, redis_url: str, log: Path) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "HOST": "127.0.0.1",
        "PORT": str(port),
        "REDIS_URL": redis_url,
        "REFEREE_TEST_MODE": "1",
        "LOG_LEVEL": "warning",
        "WEB_CONCURRENCY": str(workers()),
        "RATE_LIMIT": "",
    }
    # deploy/gunicorn.conf.py leaves gunicorn's own access log off (the app writes its own).
    command = [sys.executable, "-m", "gunicorn", "-c", "deploy/gunicorn.conf.py",
               "service.app:create_app()"]  # fmt: skip
    with log.open("wb") as output:
        return subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, 15)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, 9)
            process.wait()


class Api:
    """A keep-alive HTTP client for setting matches up."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def call(self, method: str, path: str, body: Any = None, token: str | None = None) -> Any:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        payload = None if body is None else json.dumps(body)
        self.connection.request(method, path, body=payload, headers=headers)
        response = self.connection.getresponse()
        data = response.read()
        if response.status >= 300:
            raise RuntimeError(f"{method} {path}: {response.status} {data[:300]!r}")
        return json.loads(data) if data else None

    def wait_ready(self, process: subprocess.Popen[bytes], log: Path) -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise SystemExit(f"gunicorn exited:\n{log.read_text(errors='replace')[-2000:]}")
            try:
                self.call("GET", "/readyz")
                return
            except (OSError, http.client.HTTPException, RuntimeError):
                self.connection.close()
                time.sleep(0.1)
        raise SystemExit("gunicorn was not ready within 30 s")


# --- the matches -------------------------------------------------------------------------------


def memory_per_match(api: Api, redis_server: RedisProcess) -> float:
    """Redis bytes per new 4-player match (public deal, 60 s turns)."""
    players = [{"name": name} for name in ("Ann", "Bo", "Cy", "Di")]
    with redis_server.client() as client:
        client.flushall()
        api.call("POST", "/v1/matches", {"players": players})  # lazily made structures
        before = int(client.info("memory")["used_memory"])
        for _ in range(MEMORY_MATCHES):
            api.call("POST", "/v1/matches", {"players": players, "rules": {"turn_seconds": 60}})
        after = int(client.info("memory")["used_memory"])
    return (after - before) / MEMORY_MATCHES


def view_matches(api: Api) -> list[tuple[str, str]]:
    rows = []
    for n in range(VIEW_MATCHES):
        players = [{"name": f"P{i}"} for i in range(2 + n % 3)]
        created = api.call("POST", "/v1/matches", {"players": players})
        rows.append((created["id"], created["seats"][n % len(players)]["token"]))
    return rows


def write_matches(api: Api, number: int) -> list[tuple[str, str, str, str, str]]:
    """Test-mode matches for the write mix: (id, token 0, token 1, draft tile 0, draft tile 1)."""
    rng = random.Random(7 + number)
    rows = []
    for _ in range(WRITE_MATCHES):
        box = [tile.code for tile, count in full_set().items() for _ in range(count)]
        rng.shuffle(box)
        racks = [box[:14], box[14:28]]
        setup = {"racks": racks, "pool": box[28:], "first_seat": 0}
        body = {
            "players": [{"name": "Ann"}, {"name": "Bo"}],
            "rules": {"turn_seconds": 0},
            "setup": setup,
        }
        created = api.call("POST", "/v1/matches", body)
        tokens = [seat["token"] for seat in created["seats"]]
        drafts = [next(code for code in rack if code != "J") for rack in racks]
        rows.append((created["id"], tokens[0], tokens[1], drafts[0], drafts[1]))
    return rows


# --- measuring ---------------------------------------------------------------------------------


class Measure:
    def __init__(self, wrk: str, port: int, folder: Path, seconds: int, threads: int) -> None:
        self.wrk, self.port, self.folder = wrk, port, folder
        self.seconds, self.threads = seconds, threads

    def warm_up(self) -> None:
        self.run("warm-up", "", "/readyz", seconds=2)

    def run(
        self,
        name: str,
        script: str,
        path: str,
        *,
        seconds: int | None = None,
        script_args: list[str] | None = None,
    ) -> Run:
        lua = self.folder / f"{abs(hash(name))}.lua"
        lua.write_text(script + DONE_LUA)
        command = [
            self.wrk, f"-t{self.threads}", f"-c{CONNECTIONS}", f"-d{seconds or self.seconds}s",
            "--timeout", "5s", "-s", str(lua), f"http://127.0.0.1:{self.port}{path}",
        ]  # fmt: skip
        if script_args:
            command += ["--", *script_args]
        output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
        line = next(text for text in output.splitlines() if text.startswith('{"requests"'))
        figures = json.loads(line)
        return Run(
            name,
            figures["requests"],
            figures["seconds"],
            figures["p50_us"] / 1000,
            figures["p99_us"] / 1000,
            figures["max_us"] / 1000,
            figures["non_2xx"],
            figures["socket_errors"],
        )


def report(rounds: list[tuple[Run, Run, Run]], per_match: float) -> bool:
    """Print the medians over the rounds against the targets; return whether any was missed."""
    rows: list[tuple[str, str, str, bool | None]] = []
    names = (BASELINE, VIEW, WRITES)
    targets = (None, TARGET_VIEW_RATIO, TARGET_WRITE_RATIO)
    for index, (name, target) in enumerate(zip(names, targets, strict=True)):
        throughput = median(r[index].throughput for r in rounds)
        ratio = median(
            r[index].throughput / r[0].throughput if r[0].throughput else 0.0 for r in rounds
        )
        value = f"{throughput:8.0f} req/s  x{ratio:4.2f}"
        if target is None:
            rows.append((name, value, "reference", None))
        else:
            rows.append((name, value, f">= {target} x baseline", ratio >= target))
    for index, name in enumerate(names):
        p99 = median(r[index].p99_ms for r in rounds)
        p50 = median(r[index].p50_ms for r in rounds)
        latency = f"{p99:8.1f} ms (p50 {p50:.1f})"
        label = f"  p99 latency, {name.split()[0]}"
        rows.append((label, latency, f"< {TARGET_P99_MS:.0f} ms", p99 < TARGET_P99_MS))
    rows.append(
        ("Redis memory per 4-player match", f"{per_match / 1024:8.2f} KiB",
         f"< {TARGET_BYTES_PER_MATCH // 1024} KiB", per_match < TARGET_BYTES_PER_MATCH)
    )  # fmt: skip
    width = max(len(name) for name, *_ in rows)
    print()
    print(f"median of {len(rounds)} rounds")
    print(f"{'measure':<{width}}  {'value':<28}  {'target':<20}  result")
    print(f"{'-' * width}  {'-' * 28}  {'-' * 20}  ------")
    for name, value, target, ok in rows:
        verdict = "" if ok is None else ("ok" if ok else "MISSED")
        print(f"{name:<{width}}  {value:<28}  {target:<20}  {verdict}")
    failed = False
    for run in (run for runs in rounds for run in runs):
        if run.non_2xx or run.socket_errors:
            failed = True
            errors = f"{run.non_2xx} non-2xx answers, {run.socket_errors} socket errors"
            print(f"note: {run.name}: {errors}")
    return any(ok is False for *_, ok in rows) or failed


if __name__ == "__main__":
    sys.exit(main())
