"""Benchmark: our API side by side with a public peer, lstasi/rummikub-game, in one run.

Run as ``python bench/peer.py`` (``make bench`` runs it); ``--rounds`` (default 3),
``--duration`` (seconds per measurement, default 5), ``--games`` (default 1000) and ``--durable``
(both Redis servers write an append-only file and fsync every write) set what it measures;
``--strict`` exits 1 when a target is missed.

The peer (FastAPI + uvicorn + Redis, ``../shared/peers/lstasi-rummikub-game``, or
``$PEER_DIR``) runs from a copy, in a virtual environment of its own installed from PyPI with
its ``requirements.txt`` (kept in ``~/.cache/rummikub-referee/``), with a Redis of its own, 2
uvicorn workers as against our 2 gunicorn workers, each server on a Redis started the same way
(no persistence, or with ``--durable`` fsync on every write: equal durability). Its code is
never imported here. It is measured twice: as shipped, where every request opens a Redis
connection, and with that one flaw fixed (its ``get_redis_client`` keeps one client for the
process), the figure to beat. When the peer cannot be found or installed, the bench says so
and measures nothing (exit 0).

With wrk at 32 connections, games spread over ``--games`` matches, in rounds that run every
load of every server one after the other (the order turning each round): a read of one
player's state (ours ``GET /v1/matches/{id}`` with the seat's token; the peer's
``GET /api/v1/games/{id}/players/{player}``), draws (the player whose turn it is draws, turn
about; each game in the hands of one connection at a time), and each server's health probe
(ours pings Redis, the peer's does not) for reference. The peer checks far less than we do (no
token, no event log, clock, idempotency or version check), so only these operations, which it
does perform, are compared. Targets: our reads and draws faster than the fixed peer's (ratio
> 1.0, the median over the rounds).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from statistics import median
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.api import CONNECTIONS, SLICE_LUA, Measure, ensure_wrk  # noqa: E402
from bench.support.http import Client  # noqa: E402
from bench.support.servers import start_gunicorn, stop  # noqa: E402
from tests.support.redis_process import RedisProcess, free_port  # noqa: E402

PEER_DIR = Path(
    os.environ.get("PEER_DIR", "")
    or next(  # ../shared beside the project (or beside the folder of a git worktree)
        (
            path
            for path in (
                ROOT.parent / "shared/peers/lstasi-rummikub-game",
                ROOT.parent.parent / "shared/peers/lstasi-rummikub-game",
            )
            if path.is_dir()
        ),
        ROOT.parent / "shared/peers/lstasi-rummikub-game",
    )
)
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "rummikub-referee"
UNFIXED = "return Redis.from_url(redis_url, decode_responses=True)"
FIXED = """_clients = globals().setdefault("_bench_clients", {})
    if redis_url not in _clients:  # one client (and pool) per process: the flaw fixed
        _clients[redis_url] = Redis.from_url(redis_url, decode_responses=True)
    return _clients[redis_url]"""
TARGET_RATIO = 1.0

# A line per game: path token ('-': none).
READ_LUA = """
init = function(args)
  games = load_matches("%(data)s", tonumber(args[1]))
  cursor = 0
end

request = function()
  cursor = cursor %% #games + 1
  local g = games[cursor]
  local headers = {}
  if g[2] ~= "-" then headers["Authorization"] = "Bearer " .. g[2] end
  return wrk.format("GET", g[1], headers)
end
"""

# A line per game: id first-seat path0 token0 path1 token1 (token '-': none). The seat whose turn it
# is draws, then the other; a game's next draw waits for the answer to its last one.
DRAW_LUA = """
init = function(args)
  games = {}
  for _, f in ipairs(load_matches("%(data)s", tonumber(args[1]))) do
    games[#games + 1] = {id = f[1], seat = tonumber(f[2]), paths = {f[3], f[5]},
      auths = {f[4], f[6]}}
  end
  cursor = 0
  busy = {}
end

request = function()
  local g
  repeat
    cursor = cursor %% #games + 1
    g = games[cursor]
  until busy[g.id] == nil or os.time() - busy[g.id] > 10
  busy[g.id] = os.time()
  local seat = g.seat + 1
  g.seat = 1 - g.seat
  local headers = {["Content-Type"] = "application/json"}
  if g.auths[seat] ~= "-" then headers["Authorization"] = "Bearer " .. g.auths[seat] end
  return wrk.format("POST", g.paths[seat], headers, "%(body)s")
end

response = function(status, headers, body)
  local id = body:match('%(id_pattern)s')
  if id ~= nil then busy[id] = nil end
end
"""


@dataclass
class Server:
    """One server under test: its name, port and the data files of its loads."""

    name: str
    port: int
    health: str
    reads: Path
    draws: list[Path]  # fresh games for each round: each starts with its first player
    draw_body: str
    id_pattern: str


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=5, help="seconds per measurement")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the loads")
    parser.add_argument("--games", type=int, default=1000, help="games the loads spread over")
    parser.add_argument("--durable", action="store_true", help="both Redis fsync every write")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args()

    wrk = ensure_wrk()
    if wrk is None:
        return 0
    python = peer_python()
    if python is None:
        return 0
    with ExitStack() as stack, tempfile.TemporaryDirectory(prefix="bench-peer-") as work:
        folder = Path(work)

        def redis_for(name: str) -> str:
            server = RedisProcess(data_dir=folder / f"redis-{name}", appendonly=args.durable)
            stack.callback(server.cleanup)
            return server.start().url

        servers = []
        port = free_port()
        gunicorn = start_gunicorn(port, redis_for("ours"), folder / "gunicorn.log")
        stack.callback(stop, gunicorn)
        Client(port).wait_ready(gunicorn, folder / "gunicorn.log")
        print(f"dealing {args.games} matches of ours...", flush=True)
        servers.append(our_server(Client(port), port, folder, args.games, args.rounds))
        for fixed in (True, False):
            name = "peer, flaw fixed" if fixed else "peer as shipped"
            source = peer_copy(folder / ("peer-fixed" if fixed else "peer-shipped"), fixed=fixed)
            if source is None:
                print(f"{name}: its get_redis_client is not the one this bench knows: skipped")
                continue
            peer_port = free_port()
            process = start_peer(python, source, peer_port, redis_for(name.split()[-1]), folder)
            stack.callback(stop, process)
            wait_for(f"http://127.0.0.1:{peer_port}/api/v1/health", process, folder / "peer.log")
            print(f"dealing {args.games} games of the {name}...", flush=True)
            servers.append(peer_server(name, peer_port, folder, args.games, args.rounds))
        print(
            f"wrk at {CONNECTIONS} connections, {args.rounds} rounds of {args.duration} s"
            f" per load, Redis {'with fsync on every write' if args.durable else 'in memory'};"
            f" load average {os.getloadavg()[0]:.1f}",
            flush=True,
        )
        rounds = measure(wrk, folder, servers, args)
    return 1 if report(rounds, [s.name for s in servers]) and args.strict else 0


# --- the peer ----------------------------------------------------------------------------------


def peer_python() -> str | None:
    """The peer's own interpreter, in a virtual environment made from its requirements (once);
    None, having said why, when the peer cannot be found or installed."""
    requirements = PEER_DIR / "requirements.txt"
    if not requirements.is_file():
        print(f"bench/peer.py: the peer is not at {PEER_DIR} (set PEER_DIR): nothing measured")
        return None
    digest = hashlib.sha256(requirements.read_bytes()).hexdigest()[:12]
    venv = CACHE / f"peer-lstasi-{digest}"
    python = venv / "bin" / "python"
    if (venv / ".installed").exists():
        return str(python)
    print(f"installing the peer's requirements into {venv} (from PyPI)...", flush=True)
    shutil.rmtree(venv, ignore_errors=True)
    try:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", "-r", str(requirements)],
            check=True,
            timeout=900,
        )
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as error:
        print(f"bench/peer.py: the peer could not be installed ({error}): nothing measured")
        return None
    (venv / ".installed").touch()
    return str(python)


def peer_copy(target: Path, *, fixed: bool) -> Path | None:
    """A copy of the peer to run; with ``fixed``, its Redis client kept for the process.
    None when its dependency is not written as this bench expects."""
    shutil.copytree(PEER_DIR, target)
    dependencies = target / "src" / "rummikub" / "api" / "dependencies.py"
    text = dependencies.read_text()
    if UNFIXED not in text:
        return None
    if fixed:
        dependencies.write_text(text.replace(UNFIXED, FIXED))
    return target


def start_peer(
    python: str, source: Path, port: int, redis_url: str, folder: Path
) -> subprocess.Popen[bytes]:
    command = [
        python, "-m", "uvicorn", "main:create_app", "--factory", "--host", "127.0.0.1",
        "--port", str(port), "--workers", "2", "--no-access-log", "--log-level", "warning",
    ]  # fmt: skip
    env = {**os.environ, "REDIS_URL": redis_url}
    with (folder / "peer.log").open("ab") as log:
        return subprocess.Popen(
            command, cwd=source, env=env, stdout=log, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip


def wait_for(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the peer exited:\n{log.read_text(errors='replace')[-2000:]}")
        try:
            with urllib.request.urlopen(url, timeout=5):
                return
        except (OSError, urllib.error.URLError):
            time.sleep(0.2)
    raise SystemExit(f"the peer was not ready within 60 s:\n{log.read_text()[-2000:]}")


# --- the games ---------------------------------------------------------------------------------


def our_server(api: Any, port: int, folder: Path, games: int, rounds: int) -> Server:
    reads: list[str] = []
    draws: list[list[str]] = [[] for _ in range(rounds + 1)]  # the reads' games, then fresh
    for number in range(games * (rounds + 1)):
        # No turn clock, as the peer has none: a turn that timed out between the setup and a
        # later round's draws would be the other seat's (a 409, and that game stalled for 10 s).
        body = {"players": [{"name": "A"}, {"name": "B"}], "rules": {"turn_seconds": 0}}
        created = api.call("POST", "/v1/matches", body)
        match_id, first = created["id"], created["match"]["current_seat"]
        auths = [seat["token"] for seat in created["seats"]]
        path = f"/v1/matches/{match_id}"
        if number < games:
            reads.append(f"{path} {auths[first]}")
        line = f"{match_id} {first} {path}/draw {auths[0]} {path}/draw {auths[1]}"
        draws[number // games].append(line)
    return Server(
        "ours",
        port,
        "/readyz",
        lines(folder / "ours-reads.txt", reads),
        [lines(folder / f"ours-draws-{n}.txt", rows) for n, rows in enumerate(draws[1:])],
        "",
        '"id":"([^"]+)"',  # the answer's match view comes first
    )


def peer_server(name: str, port: int, folder: Path, games: int, rounds: int) -> Server:
    api = PeerClient(port)
    reads: list[str] = []
    draws: list[list[str]] = [[] for _ in range(rounds + 1)]  # the reads' games, then fresh
    for number in range(games * (rounds + 1)):
        created = api.call("POST", "/api/v1/games", {"num_players": 2}, f"ann{number}")
        game_id = created["game_id"]
        joined = api.call("POST", f"/api/v1/games/{game_id}/players", {}, f"bo{number}")
        players = [player["id"] for player in joined["players"]]
        first = joined["current_player_index"]
        paths = [f"/api/v1/games/{game_id}/players/{player}" for player in players]
        if number < games:
            reads.append(f"{paths[first]} -")
        line = f"{game_id} {first} {paths[0]}/actions/draw - {paths[1]}/actions/draw -"
        draws[number // games].append(line)
    slug = name.replace(" ", "-").replace(",", "")
    return Server(
        name,
        port,
        "/api/v1/health",
        lines(folder / f"{slug}-reads.txt", reads),
        [lines(folder / f"{slug}-draws-{n}.txt", rows) for n, rows in enumerate(draws[1:])],
        "{}",
        '"game_id":"([^"]+)"',
    )


class PeerClient:
    """A keep-alive client for setting the peer's games up (Basic auth with a player name)."""

    def __init__(self, port: int) -> None:
        import http.client

        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def call(self, method: str, path: str, body: Any, player: str) -> Any:
        import json

        credentials = base64.b64encode(f"{player}:x".encode()).decode()
        headers = {"Content-Type": "application/json", "Authorization": f"Basic {credentials}"}
        self.connection.request(method, path, body=json.dumps(body), headers=headers)
        response = self.connection.getresponse()
        data = response.read()
        if response.status >= 300:
            raise RuntimeError(f"peer {method} {path}: {response.status} {data[:300]!r}")
        return json.loads(data)


def lines(path: Path, rows: list[str]) -> Path:
    path.write_text("".join(row + "\n" for row in rows))
    return path


# --- measuring ---------------------------------------------------------------------------------

LOADS = ("read", "draw", "health")


def measure(wrk: str, folder: Path, servers: list[Server], args: Any) -> list[dict]:
    rounds: list[dict[tuple[str, str], Any]] = []
    plan = [(server, load) for load in LOADS for server in servers]
    for number in range(args.rounds):
        turn = number % len(plan)
        runs = {}
        for server, load in plan[turn:] + plan[:turn]:
            meter = Measure(wrk, server.port, folder, args.duration, 1)
            if load == "read":
                script = SLICE_LUA + READ_LUA % {"data": server.reads}
                path = "/"
            elif load == "draw":
                script = SLICE_LUA + DRAW_LUA % {
                    "data": server.draws[number], "body": server.draw_body,
                    "id_pattern": server.id_pattern,
                }  # fmt: skip
                path = "/"
            else:
                script, path = "", server.health
            runs[(server.name, load)] = meter.run(f"{server.name} {load}", script, path)
        rounds.append(runs)
        print(f"round {number + 1}: " + "; ".join(
            f"{server.name} " + ", ".join(
                f"{load} {runs[(server.name, load)].throughput:.0f}/s" for load in LOADS
            ) for server in servers
        ) + f" (load average {os.getloadavg()[0]:.1f})", flush=True)  # fmt: skip
    return rounds


def report(rounds: list[dict], names: list[str]) -> bool:
    """Print each server's medians and our ratios to each peer; return whether a target was
    missed."""
    print()
    print(f"median of {len(rounds)} rounds: requests a second (p99 latency)")
    print(f"{'':18}" + "".join(f"{load:>22}" for load in LOADS))
    for name in names:
        cells = []
        for load in LOADS:
            rate = median(r[(name, load)].throughput for r in rounds)
            p99 = median(r[(name, load)].p99_ms for r in rounds)
            cells.append(f"{rate:8.0f} ({p99:6.1f} ms)")
        print(f"{name:18}" + "".join(f"{cell:>22}" for cell in cells))
    missed = False
    for name in names[1:]:
        for load in LOADS:
            ratios = [r[("ours", load)].throughput / r[(name, load)].throughput for r in rounds]
            ratio = median(ratios)
            spread = f" ({min(ratios):.2f}-{max(ratios):.2f})"
            line = f"ours / {name}, {load}: x{ratio:.2f}{spread}"
            if load != "health" and name == "peer, flaw fixed":
                ok = ratio > TARGET_RATIO
                missed = missed or not ok
                line += f"  target > {TARGET_RATIO}  {'PASS' if ok else 'FAIL'}"
            print(line)
    for runs in rounds:
        for (name, load), run in runs.items():
            if run.non_2xx or run.socket_errors:
                missed = True
                print(
                    f"note: {name} {load}: {run.non_2xx} non-2xx, {run.socket_errors} socket errors"
                )
    return missed


if __name__ == "__main__":
    sys.exit(main())
