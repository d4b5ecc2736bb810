"""What the kernel knows of a test's TCP connections to a server on 127.0.0.1, so that a test
waits for what the server did with a connection instead of for time to pass.

    wait_until_accepted(connection, web.port)    # the server took it (accept() returned)
    wait_until_read(connection, web.port)        # ... and read everything sent so far
    holders(connections, web.port, pids)         # which process holds each one's server side
    wait_for(lambda: ..., "what it waits for")   # any other event, polled

A connection waiting in the listen backlog has no inode on the server's side until a process
accepts it (``/proc/net/tcp``, column ``inode``); once accepted, its receive queue shows what
the server has not read yet. ``/proc/net/tcp`` is read in pages while other connections come
and go, so one read may show an entry twice or miss one: a missing entry is read again, and
entries are keyed by their ports, never counted by line.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "SAFETY",
    "ServerSide",
    "holders",
    "server_side",
    "still_open",
    "wait_for",
    "wait_until_accepted",
    "wait_until_read",
]

SAFETY = 60.0
"""Seconds after which a wait for an event fails: a bound on a broken service or test, never
how long the event may take (a loaded 2-core CI machine takes seconds for what takes
milliseconds when quiet)."""


@dataclass(frozen=True)
class ServerSide:
    """The server's end of one connection: its state, inode (0: not accepted yet) and the
    bytes received that the server has not read."""

    state: str
    inode: int
    unread: int


def wait_for(condition: Callable[[], object], what: str, *, timeout: float = SAFETY) -> None:
    """Poll ``condition`` until it is true; fail with ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s")
        time.sleep(0.01)


def _table(server_port: int) -> dict[int, ServerSide]:
    """The server's ends of the connections to 127.0.0.1:``server_port``, by client port."""
    sides: dict[int, ServerSide] = {}
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, remote = fields[1], fields[2]
        if int(local.rsplit(":", 1)[1], 16) != server_port or remote.endswith(":0000"):
            continue  # another port, or the listening socket
        unread = int(fields[4].split(":")[1], 16)
        sides[int(remote.rsplit(":", 1)[1], 16)] = ServerSide(fields[3], int(fields[9]), unread)
    return sides


def server_side(connection: socket.socket, server_port: int) -> ServerSide | None:
    """The server's end of ``connection`` (None: the kernel shows none, or not in this read)."""
    return _table(server_port).get(connection.getsockname()[1])


def wait_until_accepted(
    connection: socket.socket, server_port: int, *, timeout: float = SAFETY
) -> None:
    """Wait until a server process has accepted ``connection``."""

    def accepted() -> bool:
        side = server_side(connection, server_port)
        return side is not None and side.inode != 0

    wait_for(accepted, f"the server never accepted {connection.getsockname()}", timeout=timeout)


def wait_until_read(
    connection: socket.socket, server_port: int, *, timeout: float = SAFETY
) -> None:
    """Wait until the server has accepted ``connection`` and read all that was sent on it."""

    def read() -> bool:
        side = server_side(connection, server_port)
        return side is not None and side.inode != 0 and side.unread == 0

    wait_for(read, f"the server never read what {connection.getsockname()} sent", timeout=timeout)


def holders(
    connections: Iterable[socket.socket], server_port: int, pids: Iterable[int]
) -> dict[int, int]:
    """How many of ``connections`` each of ``pids`` holds the server's end of (every
    connection must be accepted; ``/proc/net/tcp`` is read again until each one shows)."""
    ports = {connection.getsockname()[1] for connection in connections}
    sides: dict[int, ServerSide] = {}

    def all_shown() -> bool:
        table = _table(server_port)
        sides.update({port: table[port] for port in ports if port in table})
        return ports <= sides.keys() and all(sides[port].inode for port in ports)

    wait_for(all_shown, "not every connection was accepted")
    inodes = {sides[port].inode for port in ports}
    held: dict[int, int] = {}
    for pid in pids:
        mine = set()
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                target = os.readlink(fd)
            except OSError:
                continue  # closed meanwhile
            if target.startswith("socket:["):
                mine.add(int(target[len("socket:[") : -1]))
        held[pid] = len(inodes & mine)
    return held


def still_open(connection: socket.socket) -> bool:
    """False once the server has closed ``connection`` (it peeks: nothing is read)."""
    timeout = connection.gettimeout()
    connection.settimeout(0)  # with a timeout, recv() would first wait for something to read
    try:
        return connection.recv(1, socket.MSG_PEEK) != b""
    except BlockingIOError:
        return True  # nothing sent, not closed
    except ConnectionResetError:
        return False
    finally:
        connection.settimeout(timeout)
