"""Benchmark: the HTTP API under gunicorn, measured with wrk against a baseline in the same run.

Run as ``python bench/api.py`` (``make bench`` runs it); ``--rounds`` (default 3) and ``--duration``
(seconds of each measurement, default 5) set how long it measures, ``--strict`` exits 1 when a
target is missed. It starts its own Redis and gunicorn (``deploy/gunicorn.conf.py``, test mode) on
free ports, then measures at 32 connections, in rounds that each run every load one after the other,
in an order that turns by one each round (so a slow spell of a shared machine falls on every load of
a round, not on one load, nor always on the same one):

- baseline: ``GET /readyz`` (routing, one Redis PING, a small JSON answer);
- view: ``GET /v1/matches/{id}`` with a seat's token, over the 256 live matches;
- drafts: ``PUT .../draft`` by the seat whose turn it is, over the same 256 live matches, each
  draft a different part of the rack;
- short drafts: the same drafts with ``Prefer: return=minimal`` (answered 204 with the version,
  no view rendered), which a client sharing its work in progress can send;
- mix: per match, the seat whose turn it is shares a draft, then either plays (its initial meld,
  then one more tile on its own run each time) or draws, turn about, over 256 matches; each
  match in the hands of one wrk connection at a time, fresh matches each round;

Each write load (drafts, short drafts, mix) runs twice a round: with Redis in memory (no
append-only file: the service's own figures) and at the durability ``make run`` ships
(``deploy/redis.conf``: the append-only file, fsynced before every answer), the same Redis
switched between the two by ``CONFIG SET`` (``--durability`` picks one). For the shipped
durability it says where a draft's time goes: a lone fsync of this disk (a ``SET`` on one
connection, durable against in memory), the wait the disk adds to a draft (p50 durable less
p50 in memory), the commit script's time in Redis, and the view's rendering (a draft's worker
time less a short draft's).

It prints the processor time each load cost per request, split between gunicorn's workers, Redis and
wrk (from ``/proc``: where a request's cost goes; it moves between rounds too, as the machine's
caches are shared), the resident memory (RSS) of the largest worker after the write loads (and what
it holds: the worker's own pages, the libraries' and the host's shared tables'), and Redis
memory per active 4-player match (``INFO memory`` used_memory delta over 300 new matches dealt from
a shuffled box, 60 s turns, so their deadlines are scheduled too).

The load generator is wrk (C, one thread per core it is given; Lua scripts written here). When
it is missing the bench installs Debian's ``wrk`` package as root, else says how to get it and
exits 0 without measuring. Targets (issues 14 and 33): view >= 0.9 x baseline throughput, drafts
>= 0.6 x with a p99 at most 2 x the baseline's p99 in the same round (judged for both forms of the
answer, in memory and at the shipped durability), the mix >= 0.5 x, a draft's worker processor
time at most 1.5 x a baseline request's, a worker < 150 MB RSS, < 8 KiB of Redis memory per match.
Every round is printed; a ratio is taken within each round, and the targets are judged on the
median over the rounds.

``--matches`` sets how many live matches each load spreads over (default 256); given several
counts (``--matches 256 4096``), every load but the baseline runs once per count in the same
rounds, against the same baseline, and is reported side by side (a load over other than 256
matches is named with its count).

The live matches: at each count, the views, the drafts and the short drafts run over one set
of that many matches (2 to 4 players, test-mode matches dealt from a known setup, turns of a
day, seat 0 to play; a view by one of the seats, a draft by seat 0), as a server's live matches
are both viewed and moved; the mix plays fresh matches each round (it plays them on from the
start). Before the rounds, each live set gets a *first pass*, measured and reported on its own:
each match viewed once, when no worker has read it (all the matches were dealt, the live sets
first, and every other deal since pushed them out of the workers' copies: what a view costs a
server that has not seen the match, read from Redis and decoded); then unmeasured views, each
match 8 times (so that each of the workers has read nearly every one), and the rounds measure
the steady state of a server that serves these matches. Per load it also prints the Redis
commands a request cost (``INFO commandstats``; the scripts are commits and loads, ``HMGET`` a
view's read of a match).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
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

from bench.support.http import Client  # noqa: E402
from bench.support.processes import children, cpu_seconds  # noqa: E402
from bench.support.servers import start_gunicorn, stop, worker_class, workers  # noqa: E402
from service.rules import COLOURS, full_set  # noqa: E402
from tests.support.redis_process import RedisProcess, free_port  # noqa: E402

CONNECTIONS = 32
MATCHES = 256
MEMORY_MATCHES = 300
LIVE_TURN_SECONDS = 24 * 3600
WARM_PASSES = 8  # unmeasured views of each live match before the rounds (about; the steady state)
FIRST = "first pass, views"
BASELINE = "baseline GET /readyz"
VIEW = "view GET /v1/matches/{id} (token)"
DRAFTS = "drafts PUT .../draft"
SHORT_DRAFTS = "short drafts, Prefer: return=minimal"
MIX = "mix draft + play or draw"
# The write loads again, at the durability `make run` ships (deploy/redis.conf).
SHIPPED = " [fsync always]"
WRITES = (DRAFTS, SHORT_DRAFTS, MIX)
TARGET_VIEW_RATIO = 0.9
TARGET_DRAFT_RATIO = 0.6
TARGET_MIX_RATIO = 0.5
TARGET_DRAFT_P99_RATIO = 2.0  # a draft's p99 over the baseline's p99 in the same round
TARGET_DRAFT_CPU_RATIO = 1.5  # a draft's worker processor time over a baseline request's
# How the bench switches its Redis between in memory and what deploy/redis.conf ships.
DURABILITIES = {
    "memory": {"appendonly": "no"},
    "shipped": {"appendonly": "yes", "appendfsync": "always"},
}
TARGET_WORKER_RSS_MB = 150.0
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

# Each wrk thread takes its own slice of the matches (setup() hands out thread numbers), so that
# a match is only ever in the hands of one thread; within a thread, requests walk the matches
# round robin, and 256 matches are many more than 32 connections.
SLICE_LUA = """
local counter = 0
threads = {}
setup = function(thread)
  thread:set("index", counter)
  counter = counter + 1
  threads[#threads + 1] = thread
end

load_matches = function(path, total)
  local all, mine = {}, {}
  for line in io.lines(path) do
    local fields = {}
    for field in line:gmatch("%S+") do fields[#fields + 1] = field end
    all[#all + 1] = fields
  end
  for i = 1, #all do
    if (i - 1) % total == index then mine[#mine + 1] = all[i] end
  end
  return mine
end
"""

# A line per match: id token
VIEW_LUA = """
init = function(args)
  requests = {}
  for i, m in ipairs(load_matches("%(data)s", tonumber(args[1]))) do
    requests[i] = wrk.format("GET", "/v1/matches/" .. m[1], {["Authorization"] = "Bearer " .. m[2]})
  end
  cursor = 0
end

request = function()
  cursor = cursor %% #requests + 1
  return requests[cursor]
end
"""

# The first pass over the live matches (a line per match: id token): each viewed once, then the
# thread stops once every view is answered (an answer is known by the match id it starts with).
# A connection asking for a request after the last view was sent gets a /readyz; a view still
# unanswered 2 s after the last was sent is sent again (none should be: the one request wrk
# asks the script for and never sends is its check of the first thread's script), counted once.
PASS_LUA = """
init = function(args)
  requests, by_id, answered_at, queue = {}, {}, {}, {}
  for i, m in ipairs(load_matches("%(data)s", tonumber(args[1]))) do
    requests[i] = wrk.format("GET", "/v1/matches/" .. m[1], {["Authorization"] = "Bearer " .. m[2]})
    by_id[m[1]] = i
  end
  filler = wrk.format("GET", "/readyz")
  sent, answered, fillers, resent, all_sent = 0, 0, 0, 0, nil
  verifying = index == 0  -- wrk calls the first thread's request() once to check it, unsent
  if #requests == 0 then wrk.thread:stop() end
end

request = function()
  if verifying then
    verifying = false
    return filler
  end
  if sent < #requests then
    sent = sent + 1
    if sent == #requests then all_sent = os.time() end
    return requests[sent]
  end
  if #queue == 0 and all_sent ~= nil and os.time() - all_sent >= 2 then
    all_sent = os.time()
    for i = 1, #requests do
      if not answered_at[i] then queue[#queue + 1] = i end
    end
  end
  if #queue > 0 then
    resent = resent + 1
    return requests[table.remove(queue)]
  end
  fillers = fillers + 1
  return filler
end

response = function(status, headers, body)
  local i = by_id[body:match('^{"id":"([^"]+)"') or ""]
  if i ~= nil and not answered_at[i] then
    answered_at[i] = true
    answered = answered + 1
    if answered >= #requests then wrk.thread:stop() end
  end
end
"""

# The figures of a pass: its views answered, not the /readyz asked for after the last was sent.
PASS_DONE_LUA = """
done = function(summary, latency, requests)
  local answered, fillers = 0, 0
  for _, thread in ipairs(threads) do
    answered = answered + thread:get("answered")
    fillers = fillers + thread:get("fillers") + thread:get("resent")
  end
  local errors = summary.errors
  io.write(string.format(
    '{"requests": %d, "seconds": %.6f, "p50_us": %d, "p99_us": %d, "max_us": %d, ' ..
    '"non_2xx": %d, "socket_errors": %d, "fillers": %d}\\n',
    answered, summary.duration / 1e6, latency:percentile(50), latency:percentile(99),
    latency.max, errors.status, errors.connect + errors.read + errors.write + errors.timeout,
    fillers))
end
"""

# A line per match: id token tile1 ... tile14 (the rack of the seat to play, which never changes:
# drafts are no moves). Each draft lays out 1 to 3 tiles of the rack, a different part each time.
DRAFT_LUA = """
init = function(args)
  requests = {}
  for i, m in ipairs(load_matches("%(data)s", tonumber(args[1]))) do
    local headers = {["Authorization"] = "Bearer " .. m[2], ["Content-Type"] = "application/json"}
    requests[i] = {}
    for turn = 0, 11 do  -- size and first repeat every 12 turns
      local size = turn %% 3 + 1
      local first = turn + 3
      local tiles = {}
      for t = first, first + size - 1 do tiles[#tiles + 1] = '"' .. m[t] .. '"' end
      local body = '{"table": [[' .. table.concat(tiles, ", ") .. ']]}'
      requests[i][turn + 1] = wrk.format("PUT", "/v1/matches/" .. m[1] .. "/draft", headers, body)
    end
  end
  cursor = 0
  turn = 0
end

request = function()
  cursor = cursor %% #requests + 1
  if cursor == 1 then turn = turn + 1 end
  return requests[cursor][turn %% 12 + 1]
end
"""

# The same drafts asking for the short answer (204 and the version, no view: docs/CLIENTS.md).
SHORT_DRAFT_LUA = DRAFT_LUA.replace(
    '["Content-Type"] = "application/json"}',
    '["Content-Type"] = "application/json", ["Prefer"] = "return=minimal"}',
)
assert SHORT_DRAFT_LUA != DRAFT_LUA

# A line per match: id token0 token1 colour0 colour1 spare0 spare1. Seat s holds the 13 tiles of
# its colour 1-13 and a spare tile; it opens with its 10 11 12 (33 points), then adds one tile at
# a time to that run (13, then 9 down to 1); every other turn it draws instead. Each turn starts
# with a draft of what it is about to do. Seat 0 starts. A match is not sent its next request
# before the answer to the last one came (a move raced by the next one would be refused).
MIX_LUA = """
init = function(args)
  matches = {}
  for _, f in ipairs(load_matches("%(data)s", tonumber(args[1]))) do
    matches[#matches + 1] = {id = f[1], tokens = {f[2], f[3]}, colours = {f[4], f[5]},
      spares = {f[6], f[7]}, runs = {}, seat = 1, turn = {0, 0}, step = 0}
  end
  cursor = 0
  busy = {}
  -- Each match's requests, worked out before the run (next_request below) so that wrk
  -- spends little on each: 200 a match over 256 matches, far more than a run sends it
  -- (fewer over more matches: a run sends each fewer; past them they are worked out then).
  for _, m in ipairs(matches) do
    m.queue, m.sent = {}, 0
    for k = 1, %(ahead)s do m.queue[k] = next_request(m) end
  end
end

local function run_codes(colour, run)
  local codes = {}
  for n = run[1], run[2] do codes[#codes + 1] = '"' .. colour .. n .. '"' end
  return "[" .. table.concat(codes, ", ") .. "]"
end

local function grown(run)
  if run == nil then return {10, 12} end
  if run[2] < 13 then return {run[1], 13} end
  if run[1] > 1 then return {run[1] - 1, run[2]} end
  return nil
end

local function table_json(m, seat, own, extra)
  local sets = {}
  for s = 1, 2 do
    local run = m.runs[s]
    if s == seat then run = own end
    if run ~= nil then sets[#sets + 1] = run_codes(m.colours[s], run) end
  end
  if extra ~= nil then sets[#sets + 1] = '["' .. extra .. '"]' end
  return '{"table": [' .. table.concat(sets, ", ") .. ']}'
end

next_request = function(m)
  local seat = m.seat
  local headers = {["Authorization"] = "Bearer " .. m.tokens[seat]}
  local path = "/v1/matches/" .. m.id
  local playing = m.turn[seat] %% 2 == 0 and grown(m.runs[seat]) ~= nil
  if m.step == 0 then
    m.step = 1
    headers["Content-Type"] = "application/json"
    local body
    if playing then
      body = table_json(m, seat, grown(m.runs[seat]), nil)
    else
      body = table_json(m, seat, m.runs[seat], m.spares[seat])
    end
    return wrk.format("PUT", path .. "/draft", headers, body)
  end
  m.step = 0
  m.turn[seat] = m.turn[seat] + 1
  m.seat = 3 - seat
  if playing then
    m.runs[seat] = grown(m.runs[seat])
    headers["Content-Type"] = "application/json"
    return wrk.format("POST", path .. "/play", headers, table_json(m, seat, m.runs[seat], nil))
  end
  return wrk.format("POST", path .. "/draw", headers)
end

request = function()
  local m
  repeat  -- a match whose last request is still out (a slow answer) waits its turn
    cursor = cursor %% #matches + 1
    m = matches[cursor]
  until busy[m.id] == nil or os.time() - busy[m.id] > 10
  busy[m.id] = os.time()
  m.sent = m.sent + 1
  return m.queue[m.sent] or next_request(m)
end

response = function(status, headers, body)
  local id = body:match('"id":"([^"]+)"')  -- the answer's match view comes first
  if id ~= nil then busy[id] = nil end
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
    cpu: dict[str, float]  # processor seconds the run cost: workers, Redis, wrk
    fillers: int = 0  # a pass's requests beyond one view a match: /readyz, views resent (PASS_LUA)

    @property
    def throughput(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0

    def cpu_us(self, part: str | None = None) -> float:
        """Processor time of ``part`` (all parts: ``None``) per request, in microseconds."""
        spent = sum(self.cpu.values()) if part is None else self.cpu[part]
        return 1e6 * spent / max(self.requests, 1)


@dataclass(frozen=True)
class Load:
    """A load to measure: its wrk script and a data file per round (or one for all)."""

    name: str
    script: str
    path: str
    data: list[Path]
    durability: str = "memory"

    def lua(self, number: int) -> str:
        if not self.script:
            return ""
        return SLICE_LUA + self.script % {"data": self.data[number % len(self.data)]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=5, help="seconds per measurement")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the loads")
    parser.add_argument("--threads", type=int, default=1, help="wrk threads")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument(
        "--matches", type=int, nargs="+", default=[MATCHES], metavar="N",
        help=f"live matches each load spreads over (default {MATCHES}); several counts are"
        " measured side by side in the same rounds, against the same baseline (--matches 256 4096)",
    )  # fmt: skip
    parser.add_argument(
        "--durability", choices=("both", *DURABILITIES), default="both",
        help="Redis for the write loads: in memory, as make run ships it (fsync always), or both",
    )  # fmt: skip
    args = parser.parse_args()
    durabilities = list(DURABILITIES) if args.durability == "both" else [args.durability]

    wrk = ensure_wrk()
    if wrk is None:
        return 0
    with ExitStack() as stack, tempfile.TemporaryDirectory(prefix="bench-api-") as work:
        folder = Path(work)
        redis_server = RedisProcess(data_dir=folder / "redis", appendonly=True)
        stack.callback(redis_server.cleanup)
        redis_server.start()
        port = free_port()
        gunicorn = start_gunicorn(port, redis_server.url, folder / "gunicorn.log")
        stack.callback(stop, gunicorn)
        api = Client(port)
        api.wait_ready(gunicorn, folder / "gunicorn.log")
        print(
            f"gunicorn on :{port} ({workers()} workers, {worker_class()}),"
            f" Redis on :{redis_server.port}, wrk {args.threads} thread(s),"
            f" {CONNECTIONS} connections, {args.rounds} rounds of {args.duration} s per load;"
            f" load average {os.getloadavg()[0]:.1f}"
        )

        redis_client = redis_server.client()
        durable = Durability(redis_client)
        fsync_ms = durable.lone_fsync_ms() if "shipped" in durabilities else None
        durable.use("memory")  # dealing the matches
        per_match = memory_per_match(api, redis_server)
        print("dealing the matches...", flush=True)
        loads = [Load(BASELINE, "", "/readyz", [])]
        live: dict[int, Path] = {}  # the view rows of each count's live matches
        for count in args.matches:
            at_count = counted(count)
            viewing, drafting = live_matches(api, count)
            viewed = live[count] = write_rows(folder / f"view-{count}.txt", viewing)
            drafted = write_rows(folder / f"drafts-{count}.txt", drafting)
            loads.append(Load(VIEW + at_count, VIEW_LUA, "/", [viewed]))
            mix_lua = MIX_LUA.replace("%(ahead)s", str(max(16, 51_200 // count)))
            for at, durability in enumerate(durabilities):
                suffix = (SHIPPED if durability == "shipped" else "") + at_count
                loads += [
                    Load(DRAFTS + suffix, DRAFT_LUA, "/", [drafted], durability),
                    Load(SHORT_DRAFTS + suffix, SHORT_DRAFT_LUA, "/", [drafted], durability),
                    Load(MIX + suffix, mix_lua, "/", [  # fresh matches each round: each at seat 0
                        write_rows(folder / f"mix-{count}-{n}.txt", mix_matches(api, n, count))
                        for n in range(at * args.rounds, (at + 1) * args.rounds)
                    ], durability),
                ]  # fmt: skip
        writes = [load.name for load in loads if base_name(load.name) in WRITES]
        parts = {
            "workers": lambda: children(gunicorn.pid),
            "Redis": lambda: [redis_server.pid] if redis_server.pid else [],
        }
        measure = Measure(wrk, port, folder, args.duration, args.threads, parts)
        measure.warm_up()
        first: dict[int, tuple[Run, dict[str, int]]] = {}
        for count in args.matches:  # no worker has read these matches since they were dealt
            before_commands = commands(redis_client)
            script = SLICE_LUA + PASS_LUA % {"data": live[count]}
            seconds = pass_seconds(count, 1)
            run = measure.run(FIRST, script, "/", seconds=seconds, done=PASS_DONE_LUA)
            first[count] = (run, spent(before_commands, commands(redis_client)))
        for count in args.matches:  # the steady state: each worker has read nearly every match
            script = SLICE_LUA + VIEW_LUA % {"data": live[count]}
            measure.run("warm", script, "/", seconds=pass_seconds(count, WARM_PASSES))
        rounds: list[dict[str, Run]] = []
        largest = Resident()
        scripts: dict[str, list[float]] = {name: [] for name in writes}
        script_us: dict[str, list[float]] = {name: [] for name in writes}
        background: list[float] = []  # scripts a second while only /readyz runs (the sweeper)
        asked: dict[str, list[dict[str, int]]] = {load.name: [] for load in loads}  # Redis commands
        for number in range(args.rounds):
            turn = number % len(loads)
            runs = {}
            for load in loads[turn:] + loads[:turn]:
                durable.use(load.durability)
                before, before_us = scripts_run(redis_client), scripts_us(redis_client)
                before_commands = commands(redis_client)
                runs[load.name] = measure.run(load.name, load.lua(number), load.path)
                asked[load.name].append(spent(before_commands, commands(redis_client)))
                sent = scripts_run(redis_client) - before
                if sent and load.name in script_us:
                    script_us[load.name].append((scripts_us(redis_client) - before_us) / sent)
                if load.name == BASELINE:
                    background.append(sent / runs[load.name].seconds)
                if load.name in scripts:
                    largest = max(largest, largest_worker(gunicorn.pid), key=resident_mb)
                    scripts[load.name].append(sent / max(runs[load.name].requests, 1))
            rounds.append(runs)
            print(f"round {number + 1}: " + "; ".join(
                f"{short_name(load.name)} {runs[load.name].throughput:.0f} req/s"
                f" p99 {runs[load.name].p99_ms:.1f} ms" for load in loads
            ) + f" (load average {os.getloadavg()[0]:.1f})", flush=True)  # fmt: skip
        missed = report(rounds, per_match, largest, [load.name for load in loads])
        drafts = writes[0]
        idle = (
            median(background) * args.duration / max(median(r[drafts].requests for r in rounds), 1)
        )
        print(
            "Redis scripts per request (a commit or a load; 1.0 when every worker's copy was"
            " current): " + ", ".join(
                f"{short_name(name)} {median(counts):.2f}" for name, counts in scripts.items()
            ) + f", of which the sweeper's about {idle:.2f} (its rate while only /readyz ran)"
        )  # fmt: skip
        print_commands(rounds, asked)
        print_first_passes(rounds, first)
        if fsync_ms is not None:
            print_durable_costs(rounds, fsync_ms, script_us, counted(args.matches[0]))
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


def memory_per_match(api: Client, redis_server: RedisProcess) -> float:
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


def write_rows(path: Path, rows: list[tuple[str, ...]]) -> Path:
    path.write_text("".join(" ".join(row) + "\n" for row in rows))
    return path


def dealt(api: Client, racks: list[list[str]], pool: list[str]) -> tuple[str, list[str]]:
    """A test-mode 2-player match dealt ``racks`` and ``pool``, no time limit, seat 0 first:
    its id and the seats' tokens."""
    body = {
        "players": [{"name": "Ann"}, {"name": "Bo"}],
        "rules": {"turn_seconds": 0},
        "setup": {"racks": racks, "pool": pool, "first_seat": 0},
    }
    created = api.call("POST", "/v1/matches", body)
    return created["id"], [seat["token"] for seat in created["seats"]]


def box_codes(rng: random.Random) -> list[str]:
    box = [tile.code for tile, count in full_set().items() for _ in range(count)]
    rng.shuffle(box)
    return box


def live_matches(api: Client, count: int) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    """The live matches of a count: ``count`` test-mode matches of 2 to 4 players dealt from a
    shuffled box, seat 0 to play, turns of a day (the view shows a turn clock, and no turn runs
    out during the run: with 60 s turns, the views of 4,096 matches measured the timeouts they
    settled, each a commit). Their rows for the views, (id, token of one of the seats), and
    for the drafts, (id, token of seat 0, the 14 tiles of seat 0's rack): the same matches."""
    rng = random.Random(7)
    viewed: list[tuple[str, ...]] = []
    drafted: list[tuple[str, ...]] = []
    for n in range(count):
        seats = 2 + n % 3
        box = box_codes(rng)
        racks = [box[14 * seat : 14 * (seat + 1)] for seat in range(seats)]
        body = {
            "players": [{"name": f"P{seat}"} for seat in range(seats)],
            "rules": {"turn_seconds": LIVE_TURN_SECONDS},
            "setup": {"racks": racks, "pool": box[14 * seats :], "first_seat": 0},
        }
        created = api.call("POST", "/v1/matches", body)
        tokens = [seat["token"] for seat in created["seats"]]
        viewed.append((created["id"], tokens[n % seats]))
        drafted.append((created["id"], tokens[0], *racks[0]))
    return viewed, drafted


def mix_matches(api: Client, number: int, count: int) -> list[tuple[str, ...]]:
    """(id, token 0, token 1, colour 0, colour 1, spare tile 0, spare tile 1) of ``count``
    matches: seat s holds its colour's 1-13 and a spare tile (see MIX_LUA)."""
    rng = random.Random(11 + number)
    rows: list[tuple[str, ...]] = []
    for _ in range(count):
        colours = rng.sample([colour.value for colour in COLOURS], 2)
        runs = [[f"{colour}{k}" for k in range(1, 14)] for colour in colours]
        box = box_codes(rng)
        for code in runs[0] + runs[1]:
            box.remove(code)
        spares = [next(code for code in box if code != "J" and code[0] not in colours)]
        box.remove(spares[0])
        spares.append(next(code for code in box if code != "J" and code[0] not in colours))
        box.remove(spares[1])
        racks = [runs[0] + [spares[0]], runs[1] + [spares[1]]]
        match_id, tokens = dealt(api, racks, box)
        rows.append((match_id, *tokens, *colours, *spares))
    return rows


def pass_seconds(count: int, passes: int) -> int:
    """How long wrk is given for ``passes`` views of each of ``count`` matches: long enough at
    800 views a second. A first pass's thread stops once its views are answered, but wrk
    itself runs this long (so a first pass's rate is not measured, only its processor time
    and Redis commands)."""
    return 2 + (count * passes) // 800


def commands(client: Any) -> dict[str, int]:
    """How many of each command Redis has run since it started (``INFO commandstats``)."""
    stats = client.info("commandstats")
    return {name.removeprefix("cmdstat_"): int(figures["calls"]) for name, figures in stats.items()}


def spent(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    """The commands run between two readings of :func:`commands` (the ``INFO`` asking
    for the second reading not counted)."""
    ran = {name: calls - before.get(name, 0) for name, calls in after.items()}
    ran["info"] = ran.get("info", 0) - 1
    return {name: calls for name, calls in ran.items() if calls > 0}


def per_request(ran: dict[str, int], requests: int) -> str:
    """The commands a request cost, the most run first (those under 0.01 a request left out):
    ``evalsha`` is a script (a commit or a load), ``hmget`` a view's read of a match; the
    commands a script runs are counted too (``hset``, ``xadd``...)."""
    each = max(requests, 1)
    ranked = sorted(ran.items(), key=lambda item: -item[1])
    shown = [f"{name} {calls / each:.2f}" for name, calls in ranked if calls / each >= 0.01]
    return ", ".join(shown) or "none"


def scripts_run(client: Any) -> int:
    """How many scripts Redis has run (``EVALSHA`` and ``EVAL``) since it started."""
    stats = client.info("commandstats")
    return sum(
        int(stats.get(f"cmdstat_{name}", {}).get("calls", 0)) for name in ("evalsha", "eval")
    )


def scripts_us(client: Any) -> int:
    """The microseconds Redis has spent running scripts since it started."""
    stats = client.info("commandstats")
    return sum(int(stats.get(f"cmdstat_{name}", {}).get("usec", 0)) for name in ("evalsha", "eval"))


@dataclass(frozen=True)
class Resident:
    """A worker's resident memory (``/proc/PID/status``), in MB: in all (``VmRSS``, the bound's
    figure), its own (anonymous pages), the files it maps (libraries), and the shared memory
    it has read (the host's tables, ``service/workers/shared_states.py`` and ``slots.py``)."""

    rss: float = 0.0
    own: float = 0.0
    files: float = 0.0
    shared: float = 0.0


def largest_worker(master: int) -> Resident:
    """The resident memory of gunicorn's largest worker (a child of ``master``)."""
    largest = Resident()
    for child in children(master):
        try:
            status = Path(f"/proc/{child}/status").read_text()
        except OSError:
            continue
        kib = {}
        for line in status.splitlines():
            name, _, value = line.partition(":")
            if name in ("VmRSS", "RssAnon", "RssFile", "RssShmem"):
                kib[name] = int(value.split()[0])
        resident = Resident(*(kib.get(name, 0) / 1024
                              for name in ("VmRSS", "RssAnon", "RssFile", "RssShmem")))  # fmt: skip
        if resident.rss > largest.rss:
            largest = resident
    return largest


def resident_mb(resident: Resident) -> float:
    return resident.rss


# --- measuring ---------------------------------------------------------------------------------


class Measure:
    def __init__(
        self,
        wrk: str,
        port: int,
        folder: Path,
        seconds: int,
        threads: int,
        pids: dict[str, Any] | None = None,
    ) -> None:
        self.wrk, self.port, self.folder = wrk, port, folder
        self.seconds, self.threads = seconds, threads
        self.pids = pids or {}  # part name -> a function giving its process ids now

    def warm_up(self) -> None:
        self.run("warm-up", "", "/readyz", seconds=2)

    def run(
        self,
        name: str,
        script: str,
        path: str,
        *,
        seconds: int | None = None,
        done: str = DONE_LUA,
    ) -> Run:
        lua = self.folder / f"{abs(hash(name))}.lua"
        lua.write_text(script + done)
        command = [
            self.wrk, f"-t{self.threads}", f"-c{CONNECTIONS}", f"-d{seconds or self.seconds}s",
            "--timeout", "5s", "-s", str(lua), f"http://127.0.0.1:{self.port}{path}",
            "--", str(self.threads),
        ]  # fmt: skip
        before = {part: cpu_seconds(pids()) for part, pids in self.pids.items()}
        wrk_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
        wrk_after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = {part: cpu_seconds(pids()) - before[part] for part, pids in self.pids.items()}
        cpu["wrk"] = (wrk_after.ru_utime + wrk_after.ru_stime) - (
            wrk_before.ru_utime + wrk_before.ru_stime
        )
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
            cpu,
            figures.get("fillers", 0),
        )


def report(
    rounds: list[dict[str, Run]], per_match: float, largest: Resident, names: list[str]
) -> bool:
    """Print the medians over the rounds against the targets; return whether any was missed."""
    rows: list[tuple[str, str, str, bool | None]] = []
    ratio_targets = {BASELINE: None, VIEW: TARGET_VIEW_RATIO, DRAFTS: TARGET_DRAFT_RATIO,
                     SHORT_DRAFTS: TARGET_DRAFT_RATIO, MIX: TARGET_MIX_RATIO}  # fmt: skip
    targets = {name: ratio_targets[base_name(name)] for name in names}
    for name, target in targets.items():
        throughput = median(r[name].throughput for r in rounds)
        ratios = [r[name].throughput / r[BASELINE].throughput for r in rounds]
        value = f"{throughput:6.0f} req/s  x{ranged(ratios)}"
        if target is None:
            rows.append((name, value, "reference", None))
        else:
            rows.append((name, value, f">= {target} x baseline", median(ratios) >= target))
    for name in targets:
        p99 = median(r[name].p99_ms for r in rounds)
        p50 = median(r[name].p50_ms for r in rounds)
        label = f"  p99 latency, {short_name(name)}"
        if base_name(name) in (DRAFTS, SHORT_DRAFTS):
            ratios = [r[name].p99_ms / max(r[BASELINE].p99_ms, 1e-9) for r in rounds]
            latency = f"{p99:8.1f} ms (p50 {p50:.1f}) x{ranged(ratios)}"
            target_text = f"<= {TARGET_DRAFT_P99_RATIO} x baseline"
            rows.append((label, latency, target_text, median(ratios) <= TARGET_DRAFT_P99_RATIO))
        else:
            rows.append((label, f"{p99:8.1f} ms (p50 {p50:.1f})", "", None))
    for name in targets:
        if base_name(name) not in (DRAFTS, SHORT_DRAFTS):
            continue
        ratios = [r[name].cpu_us("workers") / max(r[BASELINE].cpu_us("workers"), 1e-9)
                  for r in rounds]  # fmt: skip
        worker_us = median(r[name].cpu_us("workers") for r in rounds)
        rows.append(
            (f"  worker time, {short_name(name)}", f"{worker_us:8.0f} us  x{ranged(ratios)}",
             f"<= {TARGET_DRAFT_CPU_RATIO} x baseline", median(ratios) <= TARGET_DRAFT_CPU_RATIO)
        )  # fmt: skip
    rows.append(
        ("largest worker RSS after writes", f"{largest.rss:8.1f} MB",
         f"< {TARGET_WORKER_RSS_MB:.0f} MB", largest.rss < TARGET_WORKER_RSS_MB)
    )  # fmt: skip
    rows.append(
        ("Redis memory per 4-player match", f"{per_match / 1024:8.2f} KiB",
         f"< {TARGET_BYTES_PER_MATCH // 1024} KiB", per_match < TARGET_BYTES_PER_MATCH)
    )  # fmt: skip
    width = max(len(name) for name, *_ in rows)
    print()
    print(f"median of {len(rounds)} rounds (ratios: median, then the range over the rounds)")
    print(f"{'measure':<{width}}  {'value':<34}  {'target':<20}  result")
    print(f"{'-' * width}  {'-' * 34}  {'-' * 20}  ------")
    for name, value, target, ok in rows:
        verdict = "" if ok is None else ("PASS" if ok else "FAIL")
        print(f"{name:<{width}}  {value:<34}  {target:<20}  {verdict}")
    print(
        f"the largest worker's {largest.rss:.1f} MB: {largest.own:.1f} MB its own (anonymous),"
        f" {largest.files:.1f} MB files (libraries), {largest.shared:.1f} MB of the host's shared"
        " tables it has read"
    )
    print()
    print(
        "processor time per request, us (median over the rounds), and the baseline's total over"
        " each load's (median, then the range over the rounds)"
    )
    parts = ("workers", "Redis", "wrk")
    print(
        f"{'load':<{width}}  "
        + "".join(f"{part:>9}" for part in parts)
        + "    total  ratio (range)"
    )
    for name in targets:
        each = [median(r[name].cpu_us(part) for r in rounds) for part in parts]
        total = median(r[name].cpu_us() for r in rounds)
        ratios = [r[BASELINE].cpu_us() / max(r[name].cpu_us(), 1e-9) for r in rounds]
        print(
            f"{name:<{width}}  " + "".join(f"{value:9.0f}" for value in each)
            + f"{total:9.0f}  x{ranged(ratios)}"
        )  # fmt: skip
    failed = False
    for run in (run for runs in rounds for run in runs.values()):
        if run.non_2xx or run.socket_errors:
            failed = True
            errors = f"{run.non_2xx} non-2xx answers, {run.socket_errors} socket errors"
            print(f"note: {run.name}: {errors}")
    return any(ok is False for *_, ok in rows) or failed


def print_commands(rounds: list[dict[str, Run]], asked: dict[str, list[dict[str, int]]]) -> None:
    """The Redis commands a request of each load cost (over every round together)."""
    print(
        "Redis commands per request, over every round (evalsha: a script, a commit or a load;"
        " hmget: a view's read; the commands the scripts ran are counted too):"
    )
    for name, readings in asked.items():
        ran: dict[str, int] = {}
        for reading in readings:
            for command, calls in reading.items():
                ran[command] = ran.get(command, 0) + calls
        print(f"  {short_name(name)}: {per_request(ran, sum(r[name].requests for r in rounds))}")


def print_first_passes(
    rounds: list[dict[str, Run]], first: dict[int, tuple[Run, dict[str, int]]]
) -> None:
    """The first pass over each count's live matches (measured before the rounds), against
    the baseline's median over the rounds."""
    baseline_us = median(r[BASELINE].cpu_us("workers") for r in rounds)
    print()
    print(
        "first pass over the live matches (each viewed once, no worker having read it:"
        " read from Redis and decoded), against the rounds' /readyz's worker time:"
    )
    for count, (run, ran) in first.items():
        # the requests beyond a view a match, each taken to cost what a /readyz does
        worker_us = run.cpu_us("workers") - run.fillers * baseline_us / max(run.requests, 1)
        print(
            f"  {count} matches ({run.requests} views answered): worker time"
            f" {worker_us:.0f} us a view x{worker_us / baseline_us:.2f},"
            f" Redis commands a view {per_request(ran, run.requests)} ({run.fillers} more"
            " requests, sent after the last view, taken out of the worker time at a /readyz's)"
        )


def print_durable_costs(
    rounds: list[dict[str, Run]],
    fsync_ms: float,
    script_us: dict[str, list[float]],
    at_count: str = "",
) -> None:
    """Where a draft's time goes at the shipped durability, beside the same drafts in memory
    (over the matches ``at_count`` names: ``counted``)."""
    drafts, short = DRAFTS + at_count, SHORT_DRAFTS + at_count
    durable, short_durable = DRAFTS + SHIPPED + at_count, SHORT_DRAFTS + SHIPPED + at_count
    if durable not in rounds[0] or drafts not in rounds[0]:
        return
    waited = median(r[durable].p50_ms - r[drafts].p50_ms for r in rounds)
    render = {
        name: median(r[name].cpu_us("workers") - r[shorter].cpu_us("workers") for r in rounds)
        for name, shorter in ((drafts, short), (durable, short_durable))
    }
    extra = {
        name: median(
            r[name].cpu_us("workers") - r[BASELINE].cpu_us("workers") for r in rounds
        )
        for name in (short, short_durable)
    }  # fmt: skip
    print()
    print(
        "where a draft's time goes (median over the rounds; in memory / fsync always)"
        + (f", over {at_count.strip(' []')}" if at_count else "")
        + ":"
    )
    print(f"  one fsync of this disk (a lone SET, durable less in memory): {fsync_ms:.2f} ms")
    print(
        f"  the wait the disk adds to a draft (its p50 durable less in memory): {waited:.2f} ms"
        f" ({waited / max(fsync_ms, 1e-9):.1f} lone fsyncs)"
    )
    print(
        "  the commit script in Redis: "
        f"{median(script_us[drafts]):.0f} / {median(script_us[durable]):.0f} us a script"
    )
    print(
        "  rendering the view (a draft's worker time less a short draft's): "
        f"{render[drafts]:.0f} / {render[durable]:.0f} us"
    )
    print(
        "  the rest of a short draft beyond /readyz in the worker: "
        f"{extra[short]:.0f} / {extra[short_durable]:.0f} us"
    )


class Durability:
    """Switches the bench's Redis between in memory and the shipped durability."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.now = ""

    def use(self, name: str) -> None:
        if name == self.now:
            return
        for setting, value in DURABILITIES[name].items():
            self.client.config_set(setting, value)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # turning the file on rewrites it in the background
            info = self.client.info("persistence")
            if not (info["aof_rewrite_in_progress"] or info["aof_rewrite_scheduled"]):
                break
            time.sleep(0.05)
        else:
            raise SystemExit("Redis did not finish rewriting its append-only file within 60 s")
        self.now = name

    def lone_fsync_ms(self, count: int = 200) -> float:
        """The median time of a ``SET`` on one connection durable, less in memory: what one
        fsync of this disk costs now."""
        times: dict[str, list[float]] = {}
        for name in ("shipped", "memory", "shipped", "memory"):
            self.use(name)
            for _ in range(count // 2):
                start = time.perf_counter()
                self.client.set("bench:fsync", "x")
                times.setdefault(name, []).append(time.perf_counter() - start)
        self.client.delete("bench:fsync")
        return 1000 * (median(times["shipped"]) - median(times["memory"]))


def counted(count: int) -> str:
    """The suffix of the loads over ``count`` matches: none for the default count."""
    return "" if count == MATCHES else f" [{count} matches]"


def base_name(load: str) -> str:
    """A load's name without its durability and its count of matches (``counted``)."""
    if load.endswith(" matches]"):
        load = load[: load.rindex(" [")]
    return load.removesuffix(SHIPPED)


def short_name(load: str) -> str:
    """A load's name in a round's line and the latency rows."""
    count = ""
    if load.endswith(" matches]"):
        count = " @" + load[load.rindex(" [") + 2 :].split()[0]
    durable = " durable" if SHIPPED in load else ""
    load = base_name(load)
    return ("short drafts" if load == SHORT_DRAFTS else load.split()[0]) + durable + count


def ranged(ratios: list[float]) -> str:
    """The median of ``ratios``, then their range when there are several."""
    spread = f" ({min(ratios):.2f}-{max(ratios):.2f})" if len(ratios) > 1 else ""
    return f"{median(ratios):4.2f}{spread}"


if __name__ == "__main__":
    sys.exit(main())
