"""One delivery attempt: a signed ``POST`` to the webhook's address, cut off when it takes
too long.

Standard Webhooks (https://www.standardwebhooks.com): ``webhook-id``, ``webhook-timestamp``
(Unix seconds) and ``webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">``,
signed with the ``standardwebhooks`` package. The connection goes to the one address
:func:`service.webhooks.targets.resolve` checked (the ``Host`` header and TLS name stay the
URL's), no redirect is followed (a 3xx is an answer like any non-2xx), at most
:data:`MAX_ANSWER_BYTES` of the answer's body are read, and a watchdog closes the socket when
the whole attempt (connect, TLS, request, answer head) passes the timeout, so a receiver that
answers a byte at a time is cut off as surely as one that never answers.
"""

from __future__ import annotations

import contextlib
import email.utils
import heapq
import http.client
import itertools
import socket
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from standardwebhooks.webhooks import Webhook as Signer

from service.webhooks.targets import Target

__all__ = ["MAX_ANSWER_BYTES", "Attempt", "post", "signed_headers"]

MAX_ANSWER_BYTES = 4096
USER_AGENT = "rummikub-referee-webhooks/1"


@dataclass(frozen=True)
class Attempt:
    """What came of an attempt: the status (None: no answer), the answer's ``Retry-After``
    in seconds, and why it failed (never the secret, nor the body)."""

    status: int | None
    retry_after: float | None = None
    error: str | None = None

    @property
    def delivered(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


def signed_headers(secret: str, message_id: str, body: str, *, now: float) -> dict[str, str]:
    """The Standard Webhooks headers of ``body`` sent as ``message_id`` at ``now``."""
    stamp = datetime.fromtimestamp(int(now), UTC)
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(int(now)),
        "webhook-signature": Signer(secret).sign(message_id, stamp, body),
    }


_TLS: list[ssl.SSLContext] = []  # one context for every delivery (loading the CAs costs)


def _tls() -> ssl.SSLContext:
    if not _TLS:
        _TLS.append(ssl.create_default_context())
    return _TLS[0]


class _Pinned(http.client.HTTPConnection):
    """A connection to a fixed address, with the URL's host for ``Host``, SNI and the
    certificate check (TLS for ``https``, plain TCP for ``http``)."""

    def __init__(self, target: Target, address: str, timeout: float) -> None:
        super().__init__(target.host, target.port, timeout=timeout)
        self._address = address
        self._tls = _tls() if target.scheme == "https" else None

    def connect(self) -> None:
        sock = socket.create_connection((self._address, self.port), self.timeout)
        if self._tls is not None:
            sock = self._tls.wrap_socket(sock, server_hostname=self.host)
        self.sock = sock


class Watchdog:
    """One thread that runs each callback when its deadline passes, unless it was cancelled
    first (a thread per delivery would cost more than the delivery)."""

    def __init__(self) -> None:
        self._due: list[tuple[float, int, Callable[[], None]]] = []
        self._cancelled: set[int] = set()
        self._wake = threading.Condition()
        self._count = itertools.count()
        self._thread: threading.Thread | None = None

    def after(self, seconds: float, callback: Callable[[], None]) -> int:
        with self._wake:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="watchdog", daemon=True)
                self._thread.start()
            ticket = next(self._count)
            heapq.heappush(self._due, (time.monotonic() + seconds, ticket, callback))
            self._wake.notify()
            return ticket

    def cancel(self, ticket: int) -> None:
        with self._wake:
            self._cancelled.add(ticket)

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._due:
                    self._wake.wait()
                when, ticket, callback = self._due[0]
                left = when - time.monotonic()
                if ticket in self._cancelled:
                    heapq.heappop(self._due)
                    self._cancelled.discard(ticket)
                    continue
                if left > 0:
                    self._wake.wait(left)
                    continue
                heapq.heappop(self._due)
            callback()


WATCHDOG = Watchdog()


def post(
    target: Target, address: str, body: str, headers: dict[str, str], *, timeout: float
) -> Attempt:
    """POST ``body`` to ``target`` at ``address``; never raises for a receiver's fault."""
    connection = _Pinned(target, address, timeout)
    expired = threading.Event()

    def cut_off() -> None:
        expired.set()
        sock = connection.sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    ticket = WATCHDOG.after(timeout, cut_off)
    try:
        connection.request(
            "POST",
            target.path,
            body=body.encode(),
            headers={
                **headers,
                "Content-Type": "application/json",
                "User-Agent": USER_AGENT,
                "Connection": "close",
            },
        )
        answer = connection.getresponse()
        answer.read(MAX_ANSWER_BYTES)
        retry_after = _retry_after(answer.getheader("Retry-After"))
        if expired.is_set():
            return Attempt(None, error=f"no answer within {timeout:g} s")
        return Attempt(answer.status, retry_after)
    except (OSError, http.client.HTTPException, ValueError) as error:
        why = f"no answer within {timeout:g} s" if expired.is_set() else type(error).__name__
        return Attempt(None, error=why)
    finally:
        WATCHDOG.cancel(ticket)
        connection.close()


def _retry_after(raw: str | None) -> float | None:
    """``Retry-After`` in seconds (delta-seconds or an HTTP date); None when absent or bad."""
    if not raw:
        return None
    raw = raw.strip()
    if raw.isdigit():
        return float(raw)
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - time.time())
