"""Where a webhook may point: ``https`` on a global address; in test mode also loopback and
private ranges, by ``https`` or ``http`` (a receiver beside the service, or in a container
network: ``http`` reaches only those, a public receiver still needs ``https``), never
link-local (cloud metadata), multicast, reserved or other non-global addresses. An IPv6
address that carries an IPv4 one (mapped, IPv4-compatible, 6to4, NAT64, Teredo) is judged by
the IPv4 it carries. Checked when a webhook is registered and again, on the address actually
connected to, before every delivery (a name may resolve elsewhere later: DNS rebinding)."""

from __future__ import annotations

import ipaddress
import re
import socket
from dataclasses import dataclass
from urllib.parse import SplitResult, urlsplit

__all__ = ["BadTarget", "Target", "allowed_address", "check_target", "parse_target", "resolve"]

MAX_URL_LENGTH = 2048
_URL_TEXT = re.compile(r"[!-~]+")  # printable ASCII, no space


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
    if len(url) > MAX_URL_LENGTH or not _URL_TEXT.fullmatch(url):
        raise BadTarget(
            f"a webhook URL is at most {MAX_URL_LENGTH} printable ASCII characters (a URI: "
            "its host in punycode, other characters percent-encoded)"
        )
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
    if port == 0:
        raise BadTarget("a webhook URL may not name port 0")
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    default = 443 if parts.scheme == "https" else 80
    return Target(parts.scheme, parts.hostname, port or default, path)


def allowed_address(address: str, *, test_mode: bool, scheme: str = "https") -> bool:
    """Whether a delivery by ``scheme`` may go to ``address`` (an IPv6 one carrying an IPv4
    address is judged by that one, or both of a Teredo address's)."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    cleartext = scheme == "http"
    return all(_allowed(judged, test_mode=test_mode, cleartext=cleartext) for judged in _judged(ip))


IP = ipaddress.IPv4Address | ipaddress.IPv6Address

_PRIVATE = tuple(
    ipaddress.ip_network(net)
    for net in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "fc00::/7")
)
"""Private ranges (RFC 1918, the shared address space of RFC 6598, unique local IPv6): a
container network's, allowed in test mode."""
_NEVER = tuple(ipaddress.ip_network(net) for net in ("192.88.99.0/24", "2001:db8::/32"))
"""Never global, whatever the standard library says: the 6to4 relays' anycast (RFC 7526) and
the documentation prefix."""
_NAT64 = tuple(ipaddress.ip_network(net) for net in ("64:ff9b::/96", "64:ff9b:1::/48"))
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")


def _judged(ip: IP) -> list[IP]:
    """The addresses ``ip`` stands for: the IPv4 address an IPv6 one carries (mapped,
    IPv4-compatible, 6to4, NAT64), both of a Teredo address's (server and client), else
    ``ip`` itself."""
    if isinstance(ip, ipaddress.IPv4Address):
        return [ip]
    last32 = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip.ipv4_mapped is not None:
        return [ip.ipv4_mapped]
    if ip.sixtofour is not None:
        return [ip.sixtofour]
    if ip.teredo is not None:
        return list(ip.teredo)
    if any(ip in net for net in _NAT64):
        return [last32]
    if ip in _IPV4_COMPATIBLE and int(ip) > 1:  # ::a.b.c.d (not :: nor ::1)
        return [last32]
    return [ip]


def _allowed(ip: IP, *, test_mode: bool, cleartext: bool = False) -> bool:
    """Never unspecified, link-local, multicast, site-local or a range in :data:`_NEVER`;
    loopback and private ranges in test mode; otherwise only a global address, and only by
    https (``cleartext``: http, which test mode allows for a receiver beside the service)."""
    site_local = isinstance(ip, ipaddress.IPv6Address) and ip.is_site_local
    if ip.is_unspecified or ip.is_link_local or ip.is_multicast or site_local:
        return False
    if any(ip in net for net in _NEVER):
        return False
    if test_mode and (ip.is_loopback or any(ip in net for net in _PRIVATE)):
        return True
    if cleartext:
        return False
    return ip.is_global and not (ip.is_private or ip.is_reserved or ip.is_loopback)


class Unresolved(BadTarget):
    """The webhook's host name does not resolve (now)."""


def check_target(target: Target, *, test_mode: bool) -> None:
    """The registration's check of ``target``'s address: raise :class:`BadTarget` for an
    address a delivery may not go to. A name is resolved; in test mode a name that does not
    resolve yet is let through (a receiver in a container network may start later), and
    every delivery checks the address it connects to."""
    try:
        resolve(target, test_mode=test_mode)
    except Unresolved:
        if not test_mode:
            raise


def resolve(target: Target, *, test_mode: bool) -> str:
    """The one address a delivery (or the registration check) uses for ``target``; raise
    :class:`BadTarget` when the name does not resolve (:class:`Unresolved`) or resolves to an
    address :func:`allowed_address` refuses."""
    try:
        infos = socket.getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as error:
        raise Unresolved(f"the webhook's host does not resolve ({type(error).__name__})") from None
    addresses = [str(info[4][0]) for info in infos]
    if not addresses:
        raise Unresolved("the webhook's host does not resolve")
    scheme = target.scheme
    refused = [a for a in addresses if not allowed_address(a, test_mode=test_mode, scheme=scheme)]
    if (
        refused
        and scheme == "http"
        and all(allowed_address(a, test_mode=test_mode) for a in refused)
    ):
        raise BadTarget(
            "an http webhook reaches only a loopback or private address (test mode); a public "
            "receiver needs https"
        )
    if refused:
        raise BadTarget(
            "the webhook's host resolves to an address webhooks may not reach (private, "
            "loopback, link-local, multicast or reserved)"
        )
    return addresses[0]
