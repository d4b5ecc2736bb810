"""A single Redis's commits on connections they keep between round trips.

Each batch of commit scripts (``EVALSHA`` each, then ``WAIT`` when replicas are waited for)
is written and read on one connection the commits keep, rather than through redis-py's
pipeline and a checkout of the pool for every batch. The pool's checkout asks the connection
whether it can be read and its queue takes locks; the pipeline builds its stack, options and
retry around the same bytes: a lone draft's round trip cost 193,000 instructions that way,
and about 100,000 this way (``bench/instructions.py``).

A kept connection is not asked whether it can be read before it is used again (redis-py's
``can_read``: 30,000 instructions a round trip). It is kept only after a round trip whose
every answer was read, and Redis writes nothing to a connection that sent it nothing (no
tracking, no subscription here): the one thing that can have happened to it meanwhile is that
Redis closed it (a restart, an idle client's timeout, ``CLIENT KILL``). A round trip on a kept
connection that fails for a lost connection before its first answer raises
:class:`KeptConnectionClosed`, and every other connection kept as long is let go: its runs may
have run (Redis may have closed it after reading them), and are to be sent again only by a
caller whose runs are recognised when sent again, the commit script's (``MatchStore.commit``
sends the same commit again at once, on a connection the pool checks). A connection taken from
the pool is checked by the pool. A connection that failed mid-round-trip is closed and goes
back to the pool; at most one connection is kept per batch on its way at once.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import redis
from hiredis import pack_command
from redis.connection import Connection
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError

__all__ = ["CommitLink", "KeptConnectionClosed", "packed_commands"]


class KeptConnectionClosed(RedisConnectionError):
    """A connection kept since an earlier round trip was lost before the first answer of this
    one came: Redis closed it before reading any of it, or after running some of it (see the
    module): only runs recognised when sent again may go again."""


class CommitLink:
    """Round trips of scripts on connections of ``pool`` kept between them (see the module)."""

    def __init__(self, pool: redis.ConnectionPool) -> None:
        self._pool = pool
        self._kept: list[Connection] = []
        self._pid = os.getpid()

    def round_trip(
        self,
        script: str,
        digest: str,
        runs: Sequence[tuple[Sequence[str], Sequence[Any]]],
        replicas: int,
        timeout_ms: int,
        *,
        whole: bool = False,
    ) -> tuple[list[Any], int]:
        """``EVALSHA`` of each run (``whole``: ``EVAL``), then ``WAIT`` when ``replicas`` is
        over 0, written at once and read on one connection; each run's answer (an exception
        for a run Redis refused) and ``WAIT``'s (-1 without it, 0 when it failed). A lost
        connection or a timeout raises: any of the runs may have run (a kept connection lost
        before the first answer: :class:`KeptConnectionClosed`)."""
        commands: list[tuple[Any, ...]] = [
            ("EVAL", script, len(keys), *keys, *args)
            if whole
            else ("EVALSHA", digest, len(keys), *keys, *args)
            for keys, args in runs
        ]
        if replicas > 0:
            commands.append(("WAIT", replicas, timeout_ms))
        packed = packed_commands(commands)
        connection, kept = self._take()
        answers: list[Any] = []
        try:
            connection.send_packed_command(packed, check_health=False)
            for _ in commands:
                answers.append(_answer(connection))
        except RedisConnectionError as error:
            self._drop(connection)
            if kept and not answers:  # closed while kept, or after Redis read this round trip
                for other in self._kept:  # kept as long: Redis may have closed them too
                    self._drop(other)
                self._kept = []
                raise KeptConnectionClosed(f"a kept connection was closed: {error}") from error
            raise
        except BaseException:
            self._drop(connection)
            raise
        self._kept.append(connection)
        if replicas <= 0:
            return answers, -1
        acknowledged = answers.pop()
        return answers, 0 if isinstance(acknowledged, Exception) else int(acknowledged)

    def _take(self) -> tuple[Connection, bool]:
        """A kept connection (and True), else one from the pool, which checks it (and False)."""
        if self._pid != os.getpid():  # a forked child: the parent's connections are not its own
            self._kept, self._pid = [], os.getpid()
        if self._kept:
            return self._kept.pop(), True
        taken: Connection = self._pool.get_connection()
        return taken, False

    def _drop(self, connection: Connection) -> None:
        """Close ``connection`` and give it back to the pool (which connects it again when
        it is next taken)."""
        connection.disconnect()
        self._pool.release(connection)


def packed_commands(commands: Sequence[tuple[Any, ...]]) -> list[bytes]:
    """``commands`` in Redis's protocol, as one piece to write: what redis-py's own packing
    writes with hiredis (``Connection.pack_commands``), by hiredis's ``pack_command`` itself,
    without redis-py's splitting of each command's name and its chunking of the output
    (10,500 instructions a commit; ``bench/instructions.py``)."""
    return [b"".join([pack_command(command) for command in commands])]


def _answer(connection: Connection) -> Any:
    """The next answer on ``connection``; a command Redis refused answers its error."""
    try:
        return connection.read_response()
    except ResponseError as error:
        return error
