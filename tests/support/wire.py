"""Counting what redis-py's connections do, so that a test counts what a call cost on the
wire (commands sent, socket timeouts waited) instead of timing it.

    wire = Wire().install(monkeypatch)   # every connection of the process, for the test
    ...
    assert wire["timeout"] == 1          # one socket timeout waited, not two
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
import redis.connection
import redis.exceptions

__all__ = ["Wire"]


class Wire(Counter[str]):
    """What the store's Redis connections did: ``connect`` (a new connection tried),
    ``send`` (a command or pipeline sent), ``timeout`` (a socket timeout waited out)."""

    def install(self, monkeypatch: pytest.MonkeyPatch) -> Wire:
        connection = redis.connection.AbstractConnection
        send, read, connect = (
            connection.send_packed_command,
            connection.read_response,
            connection.connect,
        )

        def counted_send(conn: Any, *args: Any, **kwargs: Any) -> Any:
            self["send"] += 1
            return send(conn, *args, **kwargs)

        def counted_read(conn: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                return read(conn, *args, **kwargs)
            except redis.exceptions.TimeoutError:
                self["timeout"] += 1
                raise

        def counted_connect(conn: Any, *args: Any, **kwargs: Any) -> Any:
            if conn._sock is None:
                self["connect"] += 1
            return connect(conn, *args, **kwargs)

        monkeypatch.setattr(connection, "send_packed_command", counted_send)
        monkeypatch.setattr(connection, "read_response", counted_read)
        monkeypatch.setattr(connection, "connect", counted_connect)
        return self
