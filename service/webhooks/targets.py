"""Where a webhook may point: ``https`` on a public address (``http`` and private addresses
too in test mode), checked when it is registered and again, on the address actually used,
before every delivery (a name may resolve elsewhere later: DNS rebinding)."""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import SplitResult, urlsplit

__all__ = ["BadTarget", "Target", "parse_target", "resolve"]

MAX_URL_LENGTH = 2048


class BadTarget(ValueError):
    """400: the webhook's URL may not be used; ``kind`` says why."""

    kind = "bad-webhook-url"


@dataclass(frozen=True)
class Target:
    """A parsed webhook URL: scheme, host (as written), port and the request target."""

    scheme: str
    host: str
    port: int
    path: str


def parse_target(url: str, *, test_mode: bool) -> Target:
    """``url`` checked for form (not its address); raise :class:`BadTarget`."""
    if len(url) > MAX_URL_LENGTH or any(ord(c) <= 32 or ord(c) == 127 for c in url):
        raise BadTarget(f"a webhook URL is at most {MAX_URL_LENGTH} printable characters")
    try:
        parts: SplitResult = urlsplit(url)
        port = parts.port
    except ValueError as error:
        raise BadTarget(f"the webhook URL is not valid: {error}") from None
    allowed = ("https", "http") if test_mode else ("https",)
    if parts.scheme not in allowed:
        also = " (or http in test mode)" if test_mode else ""
        raise BadTarget(f"a webhook URL must be https{also}")
    if not parts.hostname:
        raise BadTarget("the webhook URL has no host")
    if parts.username is not None or parts.password is not None:
        raise BadTarget("a webhook URL may not carry a user or password")
    if parts.fragment:
        raise BadTarget("a webhook URL may not have a #fragment")
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    default = 443 if parts.scheme == "https" else 80
    return Target(parts.scheme, parts.hostname, port or default, path)


def allowed_address(address: str, *, test_mode: bool) -> bool:
    """Whether a delivery may go to ``address``: a global one (any in test mode)."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if test_mode:
        return True
    return ip.is_global and not (
        ip.is_private or ip.is_loopback or ip.is_link_local or ip.is_multicast or ip.is_reserved
    )


def resolve(target: Target, *, test_mode: bool) -> str:
    """The one address a delivery (or the registration check) uses for ``target``; raise
    :class:`BadTarget` when the name does not resolve or resolves to a private, loopback or
    link-local address (outside test mode)."""
    try:
        infos = socket.getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as error:
        raise BadTarget(f"the webhook's host does not resolve ({type(error).__name__})") from None
    addresses = [str(info[4][0]) for info in infos]
    if not addresses:
        raise BadTarget("the webhook's host does not resolve")
    refused = [a for a in addresses if not allowed_address(a, test_mode=test_mode)]
    if refused:
        raise BadTarget("the webhook's host resolves to a private, loopback or link-local address")
    return addresses[0]
