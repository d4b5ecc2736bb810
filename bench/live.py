"""Benchmark: live connections (event streams, half-sent requests) against the real service.

Run as ``python bench/live.py`` (``make bench`` runs it); ``--streams`` (default 5000),
``--seconds`` (of each write measurement, default 30: 300 writes, so that the p99 is not just
the slowest one) and ``--worker-class`` (default: the one deploy/gunicorn.conf.py picks) change
the load, ``--strict`` exits 1 when a target is missed. ``--profile DIR`` samples the workers
with py-spy (when installed) while the writes are timed with the streams open, and
``--gunicorn-conf`` runs another (say, instrumented) gunicorn config. It starts its own Redis
and gunicorn (``deploy/gunicorn.conf.py``, test mode, 2 workers) on free ports of 127.0.0.1,
and its own load generator: this process, on asyncio, with raw sockets (no client library),
bounded in connections and time. Two parts:

1. **Many streams** (``MAX_STREAMS_PER_ADDRESS=0``, the per-address cap off): draft writes
   (``PUT .../draft``, paced at :data:`WRITE_RATE` a second over :data:`MATCHES` matches: a
   draft every 5 s at each table; ``LIVE_WRITE_RATE`` changes the rate) are
   timed with no stream open (the baseline), then again with ``--streams`` event streams open
   on those matches. Every stream must get every event; the delay from a write's request to
   each stream's receipt of its event is measured. Memory per open stream is the growth of the
   workers' resident memory divided by the streams; Redis connections are counted too (one
   reader per followed match and worker, not one per stream). The streams are held by
   :data:`HOLDERS` processes of the load generator, so that reading them does not slow the
   process that times the writes.
2. **Flood and slowloris** (default settings): 300 event streams and 300 half-sent requests
   (``GET /readyz HTTP/1.1``, ``Host`` and half a header, then nothing) from one address;
   meanwhile ``GET /readyz``, ``POST /v1/meld-check`` and moves (draft, draw) must answer, and
   the streams beyond the cap get their 429 at once.

Targets: with the cap off at least 5,000 open streams, draft p99 < 50 ms while they are open,
every event at every stream within 1 s; with the defaults every request of part 2 answered
within 2 s. The ratio of the write p99 with streams open to the baseline is printed too.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import multiprocessing.queues
import os
import random
import resource
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.support.processes import children, cpu_seconds  # noqa: E402
from service.rules import full_set  # noqa: E402
from tests.support.redis_process import RedisProcess, free_port  # noqa: E402

MATCHES = 50  # matches the streams follow (and the writes change)
# Draft writes a second over the matches: a draft every 5 s at each of 50 tables, each event
# going to 100 streams (1,000 deliveries a second). LIVE_WRITE_RATE changes it.
WRITE_RATE = float(os.environ.get("LIVE_WRITE_RATE", "10"))
OPEN_AT_ONCE = 200  # streams being opened at the same time
HOLDERS = 4  # processes holding the streams of part 1
FLOOD = 300  # part 2: streams and half-sent requests from one address
PROBES = 20  # part 2: requests of each kind timed
TARGET_STREAMS = 5000
TARGET_P99_MS = 50.0
TARGET_DELIVERY_S = 1.0
TARGET_ANSWER_S = 2.0
WORKERS = 2


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=TARGET_STREAMS)
    parser.add_argument("--seconds", type=float, default=30.0, help="of each write measurement")
    parser.add_argument("--worker-class", default="", help="gunicorn worker class to measure")
    parser.add_argument("--threads", type=int, default=64, help="threads (gthread only)")
    parser.add_argument("--skip-flood", action="store_true", help="measure part 1 only")
    parser.add_argument("--skip-many", action="store_true", help="measure part 2 only")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument(
        "--gunicorn-conf", default="", help="another gunicorn config (an instrumented copy)"
    )
    parser.add_argument(
        "--profile", type=Path, help="folder for py-spy profiles of the workers (part 1, loaded)"
    )
    args = parser.parse_args()
    raise_open_files_limit(2 * args.streams + 2 * FLOOD + 1000)

    missed: list[str] = []
    with ExitStack() as stack, tempfile.TemporaryDirectory(prefix="bench-live-") as work:
        folder = Path(work)
        redis_server = RedisProcess(data_dir=folder / "redis")
        stack.callback(redis_server.cleanup)
        redis_server.start()
        common = {"GUNICORN_WORKER_CLASS": args.worker_class, "GUNICORN_THREADS": str(args.threads)}

        server = Server(redis_server.url, folder / "many.log", {**common,
                        "MAX_STREAMS_PER_ADDRESS": "0"}, args.gunicorn_conf)  # fmt: skip
        stack.callback(server.stop)
        if not args.skip_many:
            server.start()
            print(
                f"part 1: gunicorn ({WORKERS} workers, {server.worker_class()}) on"
                f" :{server.port}, Redis on :{redis_server.port}; {args.streams} streams over"
                f" {MATCHES} matches, drafts at {WRITE_RATE:.0f}/s for {args.seconds:.0f} s",
                flush=True,
            )
            missed += many_streams(server, redis_server, args.streams, args.seconds, args.profile)
            server.stop()

        if not args.skip_flood:
            flood = Server(redis_server.url, folder / "flood.log", common, args.gunicorn_conf)
            stack.callback(flood.stop)
            flood.start()
            print(f"part 2: gunicorn with default settings on :{flood.port}", flush=True)
            missed += asyncio.run(flood_and_slowloris(flood))
            flood.stop()
    for line in missed:
        print(line)
    return 1 if missed and args.strict else 0


# --- part 1 ------------------------------------------------------------------------------------


def many_streams(
    server: Server,
    redis_server: RedisProcess,
    streams: int,
    seconds: float,
    profile: Path | None = None,
) -> list[str]:
    """Part 1. The streams are held by :data:`HOLDERS` processes of their own, so that reading
    them does not slow this process's event loop, which times the writes."""
    matches = asyncio.run(create_matches(server.port, MATCHES))
    asyncio.run(Writer(server.port, matches).run(2.0))  # warm up
    baseline = asyncio.run(Writer(server.port, matches).run(seconds))
    rss_before = server.workers_rss()

    context = multiprocessing.get_context("fork")
    stop = context.Event()
    results: multiprocessing.queues.Queue[Any] = context.Queue()
    shares = [range(first, streams, HOLDERS) for first in range(HOLDERS)]
    holders = [
        context.Process(target=hold_streams, args=(server.port, matches, share, stop, results))
        for share in shares
    ]
    for holder in holders:
        holder.start()
    opened_reports = [results.get(timeout=300) for _ in holders]
    statuses = [status for report in opened_reports for status in report]
    open_now = statuses.count(200)
    refused = [status for status in statuses if status != 200]
    time.sleep(1.0)
    rss_after = server.workers_rss()
    per_stream = (rss_after - rss_before) / max(open_now, 1)
    with redis_server.client() as admin:
        readers = sum(1 for c in admin.client_list() if c.get("name", "").startswith("sse:"))
        redis_clients = len(admin.client_list())

    spies = start_profiles(server.worker_pids(), seconds, profile) if profile else []
    holder_pids = [holder.pid for holder in holders if holder.pid is not None]
    cpu_before, wall_before = server.workers_cpu(), time.monotonic()
    holders_before = cpu_seconds(holder_pids)
    window = time.time()
    loaded = asyncio.run(Writer(server.port, matches).run(seconds))
    if server.conf != "deploy/gunicorn.conf.py":  # an instrumented config: say when to look
        print(f"  (writes timed with the streams open from {window:.1f} to {time.time():.1f})")
    wall = time.monotonic() - wall_before
    busy = (server.workers_cpu() - cpu_before) / wall
    holders_busy = (cpu_seconds(holder_pids) - holders_before) / wall
    for spy in spies:
        spy.wait(seconds + 30)
    time.sleep(TARGET_DELIVERY_S + 0.5)  # the last events on their way
    stop.set()
    received = [results.get(timeout=60) for _ in holders]  # [(match index, {version: at})]
    for holder in holders:
        holder.join(30)
    ended = sum(report[2] for share in received for report in share)
    delays: list[float] = []
    missing = 0
    for share in received:
        for match_index, arrivals, _ in share:
            for index, version, sent_at in loaded.committed:
                if index != match_index:
                    continue
                if version in arrivals:
                    delays.append(arrivals[version] - sent_at)
                else:
                    missing += 1
    delays.sort()

    ratio = loaded.p99_ms / baseline.p99_ms if baseline.p99_ms else float("inf")
    print(f"  baseline (no stream open): drafts {baseline.summary()}")
    print(f"  with {open_now} streams open: drafts {loaded.summary()}  (p99 x{ratio:.2f})")
    print(
        f"  meanwhile the workers used {busy:.2f} cores, the stream holders {holders_busy:.2f}"
        f" (of {os.cpu_count()}; load average {os.getloadavg()[0]:.1f})"
    )
    print(
        f"  deliveries: {len(delays)} events received, {missing} missing;"
        f" delay p50 {pct(delays, 50) * 1000:.0f} ms, p99 {pct(delays, 99) * 1000:.0f} ms,"
        f" max {(delays[-1] if delays else 0) * 1000:.0f} ms"
    )
    print(
        f"  memory: workers' RSS {rss_before / 2**20:.0f} MiB -> {rss_after / 2**20:.0f} MiB,"
        f" {per_stream / 1024:.1f} KiB per open stream; Redis: {readers} stream readers,"
        f" {redis_clients} connections in all"
    )
    if refused:
        print(f"  refused streams: {len(refused)} ({sorted(set(refused))})")
    if ended:
        print(f"  streams the server ended early: {ended}")
    for line in server.complaints():
        print(f"  server log: {line}")
    verdicts = [
        (open_now >= TARGET_STREAMS, f"open streams {open_now} >= {TARGET_STREAMS}"),
        (loaded.p99_ms < TARGET_P99_MS, f"draft p99 {loaded.p99_ms:.1f} ms < {TARGET_P99_MS:.0f}"),
        (loaded.errors == 0, f"draft errors {loaded.errors} == 0"),
        (
            missing == 0 and bool(delays) and delays[-1] < TARGET_DELIVERY_S,
            f"every event at every stream within {TARGET_DELIVERY_S:.0f} s"
            f" (missing {missing}, slowest {(delays[-1] if delays else 0):.2f} s)",
        ),
    ]
    return judge(verdicts)


def hold_streams(
    port: int,
    matches: list[Match],
    share: range,
    stop: Any,
    results: Any,
) -> None:
    """In a process of its own: open the streams of ``share``, report their statuses, note
    each event's arrival until ``stop`` is set, then report the arrivals."""
    raise_open_files_limit(2 * len(share) + 100)

    async def run() -> None:
        opened = await open_streams(port, matches, len(share), first=share.start, step=share.step)
        results.put([stream.status for stream in opened])
        while not stop.is_set():
            await asyncio.sleep(0.1)
        results.put([(s.match_index, s.received, s.ended) for s in opened if s.status == 200])
        for stream in opened:
            stream.close()

    asyncio.run(run())


# --- part 2 ------------------------------------------------------------------------------------


async def flood_and_slowloris(server: Server) -> list[str]:
    client = Client(server.port)
    match = await create_match(client, 0)
    spare = await create_match(client, 1)
    started = time.monotonic()
    streams = await open_streams(server.port, [match], FLOOD)
    statuses = [s.status for s in streams]
    refusals = [s for s in streams if s.status == 429]
    slowest_refusal = max((s.answered_in for s in refusals), default=0.0)
    half_sent = []
    for _ in range(FLOOD):
        _, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(b"GET /readyz HTTP/1.1\r\nHost: x\r\nX-a: ")
        half_sent.append(writer)
    await asyncio.sleep(0.5)
    print(
        f"  {FLOOD} streams from one address in {time.monotonic() - started:.1f} s:"
        f" {statuses.count(200)} open, {len(refusals)} refused with 429"
        f" (slowest refusal {slowest_refusal * 1000:.0f} ms, other: "
        f"{sorted({s for s in statuses if s not in (200, 429)})}); {FLOOD} half-sent requests"
    )
    probe = Client(server.port)
    timings: dict[str, list[float]] = {"readyz": [], "meld-check": [], "move": []}
    failures: list[str] = []
    meld = {"sets": [["R10", "R11", "R12"]]}
    for _ in range(PROBES):
        for name, call in (
            ("readyz", lambda: probe.call("GET", "/readyz")),
            ("meld-check", lambda: probe.call("POST", "/v1/meld-check", meld)),
            ("move", lambda: draft_and_draw(probe, spare)),
        ):
            began = time.monotonic()
            try:
                status = await asyncio.wait_for(call(), 10)
                if status >= 300:
                    failures.append(f"{name}: {status}")
            except (TimeoutError, OSError) as error:
                failures.append(f"{name}: {type(error).__name__}")
                probe.close()  # that connection is lost: the next call opens another
            timings[name].append(time.monotonic() - began)
        if len(failures) >= 3:
            break  # the service is not answering: no need to wait out every probe
    for stream in streams:
        stream.close()
    for writer in half_sent:
        writer.close()
    slowest = {name: max(values) for name, values in timings.items()}
    print(
        "  while they are open: "
        + ", ".join(f"{name} slowest {value * 1000:.0f} ms" for name, value in slowest.items())
        + (f"; failures: {failures[:5]}" if failures else "")
    )
    verdicts = [
        (
            not failures and max(slowest.values()) < TARGET_ANSWER_S,
            f"readyz, meld-check and moves answered within {TARGET_ANSWER_S:.0f} s",
        ),
        (
            bool(refusals) and slowest_refusal < TARGET_ANSWER_S,
            f"streams over the cap refused with 429 at once ({len(refusals)} refused)",
        ),
    ]
    return judge(verdicts)


async def draft_and_draw(client: Client, match: Match) -> int:
    seat = match.seat
    status = await client.call(
        "PUT", f"/v1/matches/{match.id}/draft", {"table": [[match.drafts[seat]]]},
        token=match.tokens[seat],
    )  # fmt: skip
    if status >= 300:
        return status
    status = await client.call("POST", f"/v1/matches/{match.id}/draw", {}, token=match.tokens[seat])
    match.seat = 1 - seat
    return status


# --- the load generator ------------------------------------------------------------------------


@dataclass
class Match:
    id: str
    tokens: list[str]
    drafts: list[str]  # a tile of each seat's rack
    alternates: list[str]  # two tiles of seat 0's rack
    seat: int = 0
    flip: int = 0


async def create_matches(port: int, number: int) -> list[Match]:
    client = Client(port)
    return [await create_match(client, index) for index in range(number)]


async def create_match(client: Client, number: int) -> Match:
    rng = random.Random(number)
    box = [tile.code for tile, count in full_set().items() for _ in range(count)]
    rng.shuffle(box)
    racks = [box[:14], box[14:28]]
    body = {
        "players": [{"name": "Ann"}, {"name": "Bo"}],
        "rules": {"turn_seconds": 0},
        "setup": {"racks": racks, "pool": box[28:], "first_seat": 0},
    }
    status, created = await client.request("POST", "/v1/matches", body)
    if status != 201:
        raise SystemExit(f"could not create a match: {status} {created}")
    tokens = [seat["token"] for seat in created["seats"]]
    drafts = [next(code for code in rack if code != "J") for rack in racks]
    alternates = [code for code in racks[0] if code != "J"][:2]
    return Match(created["id"], tokens, drafts, alternates)


class Client:
    """HTTP/1.1 on one keep-alive connection, one request at a time."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    async def call(self, method: str, path: str, body: Any = None, token: str = "") -> int:
        return (await self.request(method, path, body, token=token))[0]

    async def request(
        self, method: str, path: str, body: Any = None, *, token: str = ""
    ) -> tuple[int, Any]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        assert self.reader is not None
        payload = b"" if body is None else json.dumps(body).encode()
        head = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", f"Content-Length: {len(payload)}"]
        if body is not None:
            head.append("Content-Type: application/json")
        if token:
            head.append(f"Authorization: Bearer {token}")
        self.writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + payload)
        status, headers = await read_head(self.reader)
        length = int(headers.get("content-length", "0"))
        data = await self.reader.readexactly(length) if length else b""
        if headers.get("connection", "").lower() == "close":
            self.writer.close()
            self.writer = None
        return status, (json.loads(data) if data else None)


async def read_head(reader: asyncio.StreamReader) -> tuple[int, dict[str, str]]:
    raw = await reader.readuntil(b"\r\n\r\n")
    lines = raw.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    return status, headers


@dataclass
class Stream:
    """One event stream: its status and when each event id arrived."""

    match_index: int
    status: int = 0
    answered_in: float = 0.0
    received: dict[int, float] = field(default_factory=dict)
    task: asyncio.Task[None] | None = None
    writer: asyncio.StreamWriter | None = None
    ended: bool = False

    def close(self) -> None:
        if self.task is not None:
            self.task.cancel()
        if self.writer is not None:
            self.writer.close()


async def open_streams(
    port: int, matches: list[Match], number: int, *, first: int = 0, step: int = 1
) -> list[Stream]:
    """Open ``number`` streams, stream ``i`` on match ``(first + i * step) % len(matches)``."""
    gate = asyncio.Semaphore(max(1, OPEN_AT_ONCE // HOLDERS))
    streams = [Stream((first + index * step) % len(matches)) for index in range(number)]

    async def open_one(stream: Stream) -> None:
        async with gate:
            began = time.monotonic()
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                stream.status = -1
                return
            stream.writer = writer
            match = matches[stream.match_index]
            writer.write(
                f"GET /v1/matches/{match.id}/stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
            )
            stream.status, _ = await read_head(reader)
            stream.answered_in = time.monotonic() - began
        if stream.status == 200:
            stream.task = asyncio.create_task(follow(reader, stream))
        else:
            writer.close()

    await asyncio.gather(*(open_one(stream) for stream in streams))
    return streams


async def follow(reader: asyncio.StreamReader, stream: Stream) -> None:
    """Note when each ``id:`` line arrives (chunked framing is skipped over)."""
    try:
        while line := await reader.readline():
            if line.startswith(b"id: "):
                stream.received[int(line[4:])] = time.monotonic()
        stream.ended = True
    except (OSError, asyncio.IncompleteReadError, ValueError):
        stream.ended = True


@dataclass
class WriteRun:
    latencies: list[float]
    errors: int
    committed: list[tuple[int, int, float]]

    @property
    def p99_ms(self) -> float:
        return pct(sorted(self.latencies), 99) * 1000

    def summary(self) -> str:
        ordered = sorted(self.latencies)
        slowest = ordered[-1] if ordered else 0.0
        return (
            f"{len(ordered)} writes, p50 {pct(ordered, 50) * 1000:.1f} ms,"
            f" p99 {pct(ordered, 99) * 1000:.1f} ms, max {slowest * 1000:.1f} ms,"
            f" {self.errors} errors"
        )


class Writer:
    """Draft writes paced at WRITE_RATE a second, each on a match of its own in turn."""

    def __init__(self, port: int, matches: list[Match]) -> None:
        self.port = port
        self.matches = matches

    async def run(self, seconds: float) -> WriteRun:
        result = WriteRun([], 0, [])
        clients = [Client(self.port) for _ in range(8)]
        free: asyncio.Queue[Client] = asyncio.Queue()
        for client in clients:
            free.put_nowait(client)
        tasks = []
        began = time.monotonic()
        count = int(seconds * WRITE_RATE)
        for number in range(count):
            await asyncio.sleep(max(0.0, began + number / WRITE_RATE - time.monotonic()))
            tasks.append(asyncio.create_task(self.one(number, free, result)))
        await asyncio.gather(*tasks)
        for client in clients:
            if client.writer is not None:
                client.writer.close()
        return result

    async def one(self, number: int, free: asyncio.Queue[Client], result: WriteRun) -> None:
        index = number % len(self.matches)
        match = self.matches[index]
        match.flip += 1  # each draft differs from the one before: each is an event
        body = {"table": [[match.alternates[match.flip % 2]]]}
        client = await free.get()
        sent = time.monotonic()
        try:
            status, answer = await client.request(
                "PUT", f"/v1/matches/{match.id}/draft", body, token=match.tokens[0]
            )
            result.latencies.append(time.monotonic() - sent)
            if status == 200:
                result.committed.append((index, int(answer["match"]["version"]), sent))
            else:
                result.errors += 1
        except (OSError, asyncio.IncompleteReadError, ValueError):
            result.errors += 1
            client.writer = None
        finally:
            free.put_nowait(client)


# --- the server --------------------------------------------------------------------------------


class Server:
    """gunicorn (deploy/gunicorn.conf.py) in test mode on a free port of 127.0.0.1."""

    def __init__(self, redis_url: str, log: Path, env: dict[str, str], conf: str = "") -> None:
        self.port = free_port()
        self.conf = conf or "deploy/gunicorn.conf.py"
        self.log = log
        self.env = {
            **os.environ,
            "HOST": "127.0.0.1",
            "PORT": str(self.port),
            "REDIS_URL": redis_url,
            "REFEREE_TEST_MODE": "1",
            "LOG_LEVEL": "warning",
            "WEB_CONCURRENCY": str(WORKERS),
            "RATE_LIMIT": "",
            **{name: value for name, value in env.items() if value},
        }
        self.process: subprocess.Popen[bytes] | None = None

    def worker_class(self) -> str:
        return self.env.get("GUNICORN_WORKER_CLASS") or "gevent (default)"

    def start(self) -> None:
        command = [sys.executable, "-m", "gunicorn", "-c", self.conf,
                   "service.app:create_app()"]  # fmt: skip
        with self.log.open("wb") as output:
            self.process = subprocess.Popen(
                command, cwd=ROOT, env=self.env, stdout=output, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True,
            )  # fmt: skip
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SystemExit(f"gunicorn exited:\n{self.log.read_text()[-2000:]}")
            if len(self.worker_pids()) >= WORKERS and self.ready():
                return
            time.sleep(0.1)
        raise SystemExit("gunicorn was not ready within 30 s")

    def ready(self) -> bool:
        try:
            return asyncio.run(asyncio.wait_for(Client(self.port).call("GET", "/readyz"), 2)) == 200
        except (OSError, TimeoutError, asyncio.IncompleteReadError):
            return False

    def worker_pids(self) -> list[int]:
        return [] if self.process is None else children(self.process.pid)

    def complaints(self, most: int = 5) -> list[str]:
        """The server log's warnings and errors, counted by message."""
        counts: dict[str, int] = {}
        for line in self.log.read_text(errors="replace").splitlines():
            if '"level": "INFO"' in line or "[INFO]" in line:
                continue
            try:
                message = str(json.loads(line).get("message", line))
            except ValueError:
                message = line.split("] ", 2)[-1] if "] " in line else line
            counts[message[:160]] = counts.get(message[:160], 0) + 1
        ordered = sorted(counts.items(), key=lambda item: -item[1])
        return [f"{count} x {message}" for message, count in ordered[:most]]

    def workers_cpu(self) -> float:
        """CPU seconds the workers have used."""
        return cpu_seconds(self.worker_pids())

    def workers_rss(self) -> int:
        total = 0
        for pid in self.worker_pids():
            try:
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) * 1024
            except OSError:
                pass
        return total

    def stop(self) -> None:
        process = self.process
        if process is None or process.poll() is not None:
            return
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def start_profiles(pids: list[int], seconds: float, folder: Path) -> list[subprocess.Popen[bytes]]:
    """py-spy (if installed) sampling each worker for ``seconds``, without pausing it, into
    ``folder/worker-<pid>.txt`` (collapsed stacks: one line per stack and its sample count)."""
    spy = Path(sys.executable).with_name("py-spy")
    if not spy.exists():
        print(f"  no profile: {spy} is not installed (pip install py-spy)")
        return []
    folder.mkdir(parents=True, exist_ok=True)
    spies = []
    for pid in pids:
        command = [str(spy), "record", "--nonblocking", "--format", "raw", "--rate", "200",
                   "--duration", str(max(1, int(seconds))), "--pid", str(pid),
                   "--output", str(folder / f"worker-{pid}.txt")]  # fmt: skip
        spies.append(
            subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        )
    return spies


# --- figures -----------------------------------------------------------------------------------


def pct(ordered: list[float], percent: float) -> float:
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, int(len(ordered) * percent / 100))]


def judge(verdicts: list[tuple[bool, str]]) -> list[str]:
    missed = []
    for ok, text in verdicts:
        line = f"{'PASS' if ok else 'FAIL'} {text}"
        print(line, flush=True)
        if not ok:
            missed.append(line)
    return missed


def raise_open_files_limit(wanted: int) -> None:
    """Each stream is a socket: allow enough of them in this process."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))


if __name__ == "__main__":
    raise SystemExit(main())
