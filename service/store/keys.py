"""Where things live in Redis: the shards' hash tags and the keys of a match.

Keys share a Redis Cluster hash tag per shard (``k = crc32(id) % SHARDS``), so a match, its
shard's deadline index, listings and outboxes live in one slot and one commit script writes
them all::

    {s<k>}:<id>:state             hash: v version, s state JSON (match + token digests),
                                  c the id of the commit that wrote it
    {s<k>}:<id>:events            stream: entry 0-<n> is the event of version n
                                  (fields e: the public event JSON, c: its commit's id);
                                  once no game is being played they are packed into the
                                  state hash (service.store.archive)
    {s<k>}:<id>:idem:<seat>       hash: Idempotency-Key -> "<version>:<g|u>:<the first
                                  answer, compressed>" (g: the request had If-Match), kept
                                  24 h after the seat's last; those of guarded requests go
                                  when their game ends (service.store.archive)
    {s<k>}:deadlines              sorted set: match id -> its next deadline, for the sweeper

The listings' keys are drawn in :mod:`service.store.listing`, the outboxes' and webhooks' in
:mod:`service.store.notify`.
"""

from __future__ import annotations

import zlib

__all__ = ["SHARDS", "Keys", "shard_tag", "tag_of"]

SHARDS = 32


def shard_tag(shard: int) -> str:
    """The hash tag of shard number ``shard``."""
    return "{s" + str(shard) + "}"


_TAGS = tuple(shard_tag(shard) for shard in range(SHARDS))  # a match's tag: one index, no call
_crc32 = zlib.crc32


def tag_of(match_id: str) -> str:
    """The hash tag of the shard of ``match_id``."""
    return Keys(match_id).tag


class Keys:
    """The Redis keys of one match (see the module), worked out once when made: a commit
    names them many times (a frozen dataclass with properties cost a draft 12,700
    instructions to make and 2,700 a key named)."""

    __slots__ = ("deadlines", "events", "match_id", "state", "tag")

    def __init__(self, match_id: str) -> None:
        tag = _TAGS[_crc32(match_id.encode("utf-8", "surrogatepass")) % SHARDS]
        self.match_id = match_id
        self.tag = tag  # the hash tag of the match's shard
        self.state = f"{tag}:{match_id}:state"
        self.events = f"{tag}:{match_id}:events"
        self.deadlines = f"{tag}:deadlines"

    def __repr__(self) -> str:
        return f"Keys({self.match_id!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Keys) and other.match_id == self.match_id

    def __hash__(self) -> int:
        return hash(self.match_id)

    def receipts(self, seat: int) -> str:
        """The hash of the seat's receipts (kept ``idempotency_ttl``, see the module)."""
        return f"{self.tag}:{self.match_id}:idem:{seat}"

    @property
    def listing(self) -> tuple[str, str, str]:
        """The shard's listing ``ix``, ``sum`` and ``expiry`` keys (service.store.listing)."""
        return f"{self.tag}:ix", f"{self.tag}:sum", f"{self.tag}:expiry"
