"""How gunicorn listens (deploy/gunicorn.conf.py): a socket per worker, and no silent sharing."""

from __future__ import annotations

import http.client
import os
import resource
from pathlib import Path

import pytest

from tests.support.gunicorn_process import GunicornProcess, GunicornStartError
from tests.support.sockets import holders


def test_a_second_server_on_a_taken_port_refuses_to_start(redis_server, start_gunicorn) -> None:
    first = start_gunicorn(redis_server.url, workers=2)
    second = GunicornProcess(
        env={"REDIS_URL": redis_server.url, "REFEREE_TEST_MODE": "1"}, port=first.port
    )
    try:
        with pytest.raises(GunicornStartError):
            second.start(timeout=20)
        assert f"127.0.0.1:{first.port} is already in use" in second.log_text()
    finally:
        second.stop()
        second.cleanup()
    assert first.request("GET", "/readyz").status == 200


def test_the_log_names_the_address_it_listens_at(redis_server, start_gunicorn) -> None:
    # With a socket per worker gunicorn's master has none to name: the address is the bind.
    web = start_gunicorn(redis_server.url, workers=2)
    assert f"Listening at: http://127.0.0.1:{web.port} (" in web.log_text()
    assert "Listening at:  (" not in web.log_text()


def test_the_open_files_limit_is_raised_to_the_hard_limit(redis_server, start_gunicorn) -> None:
    # Started with a low soft limit (inherited from this process), as from a default shell.
    # Low, yet above the files this test process already holds (earlier tests' sockets and
    # pipes), so that starting gunicorn from it does not run out of files itself.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    low = min(soft, max(256, len(os.listdir("/proc/self/fd")) + 64))
    assert low < hard, "the hard limit leaves nothing to raise"
    resource.setrlimit(resource.RLIMIT_NOFILE, (low, hard))
    try:
        web = start_gunicorn(redis_server.url, workers=1)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    for pid in (web.pid, *web.worker_pids()):
        limits = Path(f"/proc/{pid}/limits").read_text().splitlines()
        soft, hard = next(line for line in limits if line.startswith("Max open files")).split()[3:5]
        assert soft == hard, limits


LISTEN = "0A"  # a socket state as /proc/net/tcp writes it


def sockets(pid: int, port: int, state: str) -> int:
    """How many TCP sockets on local ``port`` in ``state`` the process ``pid`` holds open."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        target = os.readlink(fd) if fd.is_symlink() else ""
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    found = set()  # by inode: /proc/net/tcp may show a line twice while sockets come and go
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local_port = int(fields[1].rsplit(":", 1)[1], 16)
        if local_port == port and fields[3] == state and fields[9] in inodes:
            found.add(fields[9])
    return len(found)


def test_each_worker_listens_on_a_socket_of_its_own(redis_server, start_gunicorn) -> None:
    web = start_gunicorn(redis_server.url, workers=3)
    workers = web.worker_pids()
    assert len(workers) == 3
    assert [sockets(pid, web.port, LISTEN) for pid in workers] == [1, 1, 1]
    assert sockets(web.pid, web.port, LISTEN) == 0  # the master hands out no shared socket


def test_connections_are_spread_over_the_workers(redis_server, start_gunicorn) -> None:
    """The kernel hashes each new connection to one worker's socket: none is left idle."""
    # Kept-alive connections are closed after REQUEST_HEAD_TIMEOUT idle seconds (5 s): a
    # loaded machine may take that long over 32 requests, so they stay open a minute here.
    web = start_gunicorn(redis_server.url, workers=2, env={"REQUEST_HEAD_TIMEOUT": "60"})
    connections = [http.client.HTTPConnection("127.0.0.1", web.port, timeout=30) for _ in range(32)]
    try:
        for connection in connections:
            connection.request("GET", "/readyz")
            assert connection.getresponse().read()
        # Each connection's server end, by its ports (/proc/net/tcp is read while other
        # connections come and go: a line read twice must not count twice).
        held = holders([c.sock for c in connections], web.port, web.worker_pids())
    finally:
        for connection in connections:
            connection.close()
    per_worker = list(held.values())
    assert sum(per_worker) == 32, held
    # Each worker holds some of them (with a shared socket one worker could take nearly all);
    # a binomial split of 32 leaves fewer than 4 on one side about twice in a million runs.
    assert min(per_worker) >= 4, held
