"""Listings of the matches an app owns: indexes the commit script keeps, pages with cursors.

Every key lives under the hash tag of its match's shard, so the commit script that writes a
match keeps its index entries right in the same atomic step (single Redis or Cluster)::

    {s<k>}:ix                    hash: match id -> JSON list of the index keys it is in
    {s<k>}:sum                   hash: match id -> its listing item (see game.summary)
    {s<k>}:expiry                sorted set: match id -> when it expires (idle or finished)
    {s<k>}:app:<app>             sorted set: the app's matches -> created_at
    {s<k>}:app:<app>:st:<status>          the same, per status
    {s<k>}:app:<app>:ref:<r>              one player's matches -> their order (below)
    {s<k>}:app:<app>:ref:<r>:st:<status>  the same, per status

``<r>`` is the ref in base64url (a ref may hold ``:``). A player's order is the time of the
last change, plus :data:`YOUR_TURN` when it is that player's turn, so "your turn" sorts first.

A page of an app's matches walks the shards' created-at indexes below the cursor (newest
first): that order never changes, so every match appears once across the pages. A player's
matches are ordered by what changes (whose turn, last change), so the first page of such a
walk keeps the order of that moment as a sorted set of its own (``walk:<query>:<id>``,
:data:`WALK_TTL` seconds; on a single Redis one ZUNIONSTORE, no ids sent back and forth) and
later pages read on from it by rank. Items always show each match as it is now; a match that
expired meanwhile is left out.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import heapq
import math
import re
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from service import jsoncodec
from service.game import Match, Status, summary
from service.game.frozen import maker

__all__ = [
    "EXPIRE_IDLE",
    "INDEX_MATCH_LUA",
    "WALK_TTL",
    "YOUR_TURN",
    "BadCursor",
    "Indexed",
    "Listings",
    "Page",
    "indexed",
]

_EXPIRES = "_expires_at"  # kept in the stored item, so one read tells whether it expired
YOUR_TURN = 1e10  # added to a player's order while it is their turn: later than any time
WALK_TTL = 1800  # seconds a walk over a player's matches keeps its order
_CURSOR_VERSION = 1

# A Lua function for the commit script: put match ``id`` in exactly the index keys ``keys``
# (with ``scores``), keep its listing item and its expiry ('' for none). The keys it leaves
# are read from its ``ix`` entry: they share the shard's hash tag, so the same slot. An
# anonymous match (no item: no app owns it, and an owner never changes) was never in an index:
# its ``ix`` entry is not looked for (a call from the script costs Redis about 7,000
# instructions, whatever the command).
INDEX_MATCH_LUA = """
local function index_match(id, ix, sum, expiry, item, expires_at, keys, scores)
  if item ~= '' then
    local keep = {}
    for i, key in ipairs(keys) do
      keep[key] = true
      redis.call('ZADD', key, scores[i], id)
    end
    local old = redis.call('HGET', ix, id)
    if old then
      for _, key in ipairs(cjson.decode(old)) do
        if not keep[key] then redis.call('ZREM', key, id) end
      end
    end
    if #keys > 0 then
      redis.call('HSET', ix, id, cjson.encode(keys))
    elseif old then
      redis.call('HDEL', ix, id)
    end
    redis.call('HSET', sum, id, item)
  end
  if expires_at ~= '' then
    redis.call('ZADD', expiry, expires_at, id)
  else
    redis.call('ZREM', expiry, id)
  end
end
"""

# KEYS: the walk's key, then the player's index key in every shard (a single Redis). ARGV: 1 a
# page's size, 2 the walk's TTL. Keeps the union of the indexes as the walk's order when there is
# more than a page, and answers how many matches there are and the first page's ids.
BEGIN_WALK = """
local total = redis.call('ZUNIONSTORE', KEYS[1], #KEYS - 1, unpack(KEYS, 2))
local page = redis.call('ZREVRANGE', KEYS[1], 0, tonumber(ARGV[1]) - 1)
if total > tonumber(ARGV[1]) then
  redis.call('EXPIRE', KEYS[1], ARGV[2])
else
  redis.call('DEL', KEYS[1])
end
return {total, page}
"""

# KEYS: a shard's expiry, ix, sum and deadlines keys. ARGV: 1 the most matches to expire,
# 2 the shard's hash tag. Removes every key and index entry of each match whose time has come
# (by Redis TIME) and answers how many.
EXPIRE_IDLE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', string.format('%.6f', now),
                       'LIMIT', 0, tonumber(ARGV[1]))
for _, id in ipairs(ids) do
  local old = redis.call('HGET', KEYS[2], id)
  if old then
    for _, key in ipairs(cjson.decode(old)) do redis.call('ZREM', key, id) end
  end
  redis.call('HDEL', KEYS[2], id)
  redis.call('HDEL', KEYS[3], id)
  redis.call('ZREM', KEYS[4], id)
  redis.call('ZREM', KEYS[1], id)
  redis.call('DEL', ARGV[2] .. ':' .. id .. ':state', ARGV[2] .. ':' .. id .. ':events')
end
return #ids
"""


class BadCursor(ValueError):
    """A cursor this listing did not hand out, or one whose walk has expired."""


@dataclass(frozen=True, slots=True)
class Indexed:
    """What the commit script writes for a match's listings: its index keys with their
    scores, its listing item (JSON, empty for an anonymous match) and when it expires."""

    keys: tuple[str, ...]
    scores: tuple[float, ...]
    item: bytes
    expires_at: float | None


def ref_part(ref: str) -> str:
    """A ref as it appears in a key: base64url, so no ref can look like another key's part."""
    return base64.urlsafe_b64encode(ref.encode("utf-8", "surrogatepass")).decode().rstrip("=")


def app_key(tag: str, app: str, *, ref: str | None = None, status: str | None = None) -> str:
    """The index key of ``app``'s matches in the shard ``tag`` (one player's, one status)."""
    key = f"{tag}:app:{app}"
    if ref is not None:
        key += f":ref:{ref_part(ref)}"
    if status is not None:
        key += f":st:{status}"
    return key


def your_turn(match: Match, ref: str) -> bool:
    """Whether it is the turn of the player with ``ref``."""
    return (
        match.status is Status.PLAYING
        and match.players[match.current_seat].ref == ref
        and not match.players[match.current_seat].bot
    )


def indexed(match: Match, *, tag: str, updated_at: float, expires_at: float | None) -> Indexed:
    """The index entries, listing item and expiry of ``match``, changed at ``updated_at``."""
    if match.owner is None:
        return _indexed((), (), b"", expires_at)
    app, status = match.owner, match.status.value
    keys = [app_key(tag, app), app_key(tag, app, status=status)]
    scores = [match.created_at, match.created_at]
    for player in match.players:
        if player.ref is None:
            continue
        order = updated_at + (YOUR_TURN if your_turn(match, player.ref) else 0.0)
        keys += [
            app_key(tag, app, ref=player.ref),
            app_key(tag, app, ref=player.ref, status=status),
        ]
        scores += [order, order]
    item = jsoncodec.dumps({**summary(match, updated_at=updated_at), _EXPIRES: expires_at})
    return _indexed(tuple(keys), tuple(scores), item, expires_at)


_indexed = maker(Indexed)  # made on every commit (service.game.frozen)


def _encode(cursor: dict[str, Any]) -> str:
    raw = jsoncodec.dumps({"v": _CURSOR_VERSION, **cursor})
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode(text: str) -> dict[str, Any]:
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        cursor = jsoncodec.loads(raw)
    except (binascii.Error, ValueError, UnicodeDecodeError):
        raise BadCursor("the cursor is not one this listing handed out") from None
    if not isinstance(cursor, dict) or cursor.get("v") != _CURSOR_VERSION:
        raise BadCursor("the cursor is not one this listing handed out")
    return cursor


_WALK = re.compile(r"[A-Za-z0-9_-]{1,32}")
MAX_OFFSET = 2**31  # far past any listing; Redis refuses a range start past 2^63


def _after(decoded: dict[str, Any]) -> tuple[float, str]:
    """Where a page of the newest-first listing starts: below the score and id a cursor
    holds. A cursor the listing did not hand out (a score that is no finite number, an id
    that is no text) raises :class:`BadCursor`, before Redis sees it."""
    score, match_id = decoded.get("s"), decoded.get("i")
    if (
        isinstance(score, bool)
        or not isinstance(score, int | float)
        or not isinstance(match_id, str)
    ):
        raise BadCursor("the cursor is not one this listing handed out")
    if not math.isfinite(score):
        raise BadCursor("the cursor is not one this listing handed out")
    return float(score), match_id


def _walk_place(decoded: dict[str, Any]) -> tuple[str, int]:
    """The walk and the offset in it a player's cursor holds; raise :class:`BadCursor` for
    any other (a negative offset would read the walk again from its end, forever)."""
    walk, offset = decoded.get("w"), decoded.get("o")
    if type(walk) is not str or not _WALK.fullmatch(walk):
        raise BadCursor("the cursor is not one this listing handed out")
    if type(offset) is not int or not 0 < offset <= MAX_OFFSET:
        raise BadCursor("the cursor is not one this listing handed out")
    return walk, offset


@dataclass(frozen=True)
class Page:
    """One page: the listing items, and the cursor of the next page (``None``: the last)."""

    items: list[dict[str, Any]]
    next_cursor: str | None


class Listings:
    """Pages of an app's matches, read from every shard's indexes.

    ``owner.topology`` is the store's :class:`~service.store.topology.Topology`, whose client
    is looked up when a page is read; ``tags`` is the hash tag of every shard and ``tag_of``
    the tag of a match id.
    """

    def __init__(self, owner: Any, *, tags: Sequence[str], tag_of: Callable[[str], str]) -> None:
        self.owner = owner
        self.tags = tuple(tags)
        self.tag_of = tag_of

    @property
    def redis(self) -> Any:
        """The store's Redis client (single or Cluster)."""
        return self.owner.topology.client

    def page(
        self,
        app: str,
        *,
        ref: str | None,
        status: str | None,
        limit: int,
        cursor: str | None,
        now: float,
    ) -> Page:
        """A page of ``app``'s matches (one player's with ``ref``), ``limit`` at most.

        Raises :class:`BadCursor` for a cursor of another walk, app or query.
        """
        if ref is None:
            return self._by_creation(app, status=status, limit=limit, cursor=cursor, now=now)
        return self._by_player(app, ref=ref, status=status, limit=limit, cursor=cursor, now=now)

    # -- an app's matches, newest first ------------------------------------------------

    def _by_creation(
        self, app: str, *, status: str | None, limit: int, cursor: str | None, now: float
    ) -> Page:
        after: tuple[float, str] | None = None
        if cursor is not None:
            decoded = _decode(cursor)
            if decoded.get("k") != "c" or decoded.get("a") != app or decoded.get("st") != status:
                raise BadCursor("this cursor belongs to another listing")
            after = _after(decoded)
        pipe = self.redis.pipeline(transaction=False)
        for tag in self.tags:
            key = app_key(tag, app, status=status)
            if after is None:
                pipe.zrevrangebyscore(key, "+inf", "-inf", start=0, num=limit + 1, withscores=True)
            else:
                pipe.zrevrangebyscore(key, after[0], after[0], withscores=True)  # ties
                pipe.zrevrangebyscore(
                    key, f"({after[0]!r}", "-inf", start=0, num=limit + 1, withscores=True
                )
        found: list[tuple[float, str]] = []
        for answer in pipe.execute():
            for member, score in answer:
                match_id = _text(member)
                if after is None or (score, match_id) < after:
                    found.append((score, match_id))
        ordered = heapq.nlargest(limit + 1, found)
        chosen = ordered[:limit]
        items = self._items([match_id for _, match_id in chosen], ref=None, now=now)
        more = len(ordered) > limit
        next_cursor = None
        if more and chosen:
            score, match_id = chosen[-1]
            next_cursor = _encode({"k": "c", "a": app, "st": status, "s": score, "i": match_id})
        return Page(items, next_cursor)

    # -- one player's matches, their turn first ----------------------------------------

    def _by_player(
        self,
        app: str,
        *,
        ref: str,
        status: str | None,
        limit: int,
        cursor: str | None,
        now: float,
    ) -> Page:
        if cursor is None:
            walk = secrets.token_urlsafe(12)
            total, ids = self._begin_walk(
                _walk_key(app, ref, status, walk), app, ref, status, limit
            )
            offset = 0
        else:
            decoded = _decode(cursor)
            if decoded.get("k") != "w":
                raise BadCursor("this cursor belongs to another listing")
            walk, offset = _walk_place(decoded)
            key = _walk_key(app, ref, status, walk)
            pipe = self.redis.pipeline(transaction=False)
            pipe.zcard(key)
            pipe.zrevrange(key, offset, offset + limit - 1)
            total, members = pipe.execute()
            if not total:
                raise BadCursor(
                    "this cursor belongs to another listing, or its walk is over "
                    f"{WALK_TTL} seconds old: start again"
                )
            if offset >= total:  # a page is handed out only while matches are left
                raise BadCursor("the cursor is not one this listing handed out")
            ids = [_text(member) for member in members]
        items = self._items(ids, ref=ref, now=now)
        end = offset + len(ids)
        next_cursor = _encode({"k": "w", "w": walk, "o": end}) if end < total else None
        return Page(items, next_cursor)

    def _begin_walk(
        self, key: str, app: str, ref: str, status: str | None, limit: int
    ) -> tuple[int, list[str]]:
        """Keep the order of the player's matches now as the walk's sorted set ``key`` (when
        there is more than a page) and return how many there are and the first page's ids.

        On a single Redis one script does it in place (ZUNIONSTORE); on a Cluster, whose
        shards' keys are in other slots, the indexes are read and the order written back.
        """
        sources = [app_key(tag, app, ref=ref, status=status) for tag in self.tags]
        if self.owner.topology.cross_slot:
            total, members = self.redis.eval(
                BEGIN_WALK, len(sources) + 1, key, *sources, limit, WALK_TTL
            )
            return int(total), [_text(member) for member in members]
        pipe = self.redis.pipeline(transaction=False)
        for source in sources:
            pipe.zrange(source, 0, -1, withscores=True)
        found = [(score, _text(member)) for answer in pipe.execute() for member, score in answer]
        found.sort(reverse=True)
        if len(found) > limit:
            self.redis.zadd(key, {match_id: score for score, match_id in found})
            self.redis.expire(key, WALK_TTL)
        return len(found), [match_id for _, match_id in found[:limit]]

    # -- the items ---------------------------------------------------------------------

    def _items(self, ids: Sequence[str], *, ref: str | None, now: float) -> list[dict[str, Any]]:
        """The listing items of ``ids``, in order; matches that expired are left out."""
        by_tag: dict[str, list[str]] = {}
        for match_id in ids:
            by_tag.setdefault(self.tag_of(match_id), []).append(match_id)
        if not by_tag:
            return []
        pipe = self.redis.pipeline(transaction=False)
        tags = list(by_tag)
        for tag in tags:
            pipe.hmget(f"{tag}:sum", by_tag[tag])
        answers = pipe.execute()
        items: dict[str, dict[str, Any]] = {}
        for tag, raw_items in zip(tags, answers, strict=True):
            for match_id, raw in zip(by_tag[tag], raw_items, strict=True):
                if raw is None:
                    continue
                item = jsoncodec.loads(raw)
                expires_at = item.pop(_EXPIRES, None)
                if expires_at is None or expires_at > now:
                    items[match_id] = item
        ordered = [items[match_id] for match_id in ids if match_id in items]
        if ref is not None:
            for item in ordered:
                item["your_turn"] = _your_turn_in(item, ref)
        return ordered


def _your_turn_in(item: dict[str, Any], ref: str) -> bool:
    seat = item.get("current_seat")
    if item.get("status") != Status.PLAYING.value or seat is None:
        return False
    player = item["players"][seat]
    return bool(player.get("ref") == ref and not player.get("bot"))


def _walk_key(app: str, ref: str, status: str | None, walk: str) -> str:
    """A walk's key names its query, so a cursor of another listing finds nothing."""
    query = hashlib.sha256(f"{app}\n{ref}\n{status}".encode("utf-8", "surrogatepass"))
    return f"walk:{query.hexdigest()[:24]}:{walk}"


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
