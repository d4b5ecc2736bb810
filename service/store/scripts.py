"""The Lua scripts of the store (see :mod:`service.store.keys` for the keys), and the commit
script's keys and arguments (:func:`commit_keys`, :func:`commit_argv`).

``COMMIT`` KEYS: state, events, deadlines, the shard's ``expiry`` (see
:mod:`service.store.listing`), the seat's receipts (the state key when there is none), then,
for a match an app owns (never for an anonymous one, whose listings are not touched), the
shard's listing ``ix`` and ``sum`` and the listing index keys the match belongs in. ARGV: 1 the
version it replaces ('' for a new match), 2 the new version, 3 the state JSON, 4 the commit id,
5 the receipt ('' for none: the receipts' TTL, a newline, the Idempotency-Key, a newline, the
receipt sealed by :func:`service.store.archive.seal`), 6 the match's TTL (0: none), 7 the next
deadline ('' for none; '=' the one the version it replaces had, which that version's commit
indexed), 8 the match id, 9 the clock the change was computed at, moved on by the time the
worker held it before sending (``CLOCK_ARG``; '' not to check; how far off it may be,
:data:`CLOCK_TOLERANCE`, is written in the script), 10 the number of events, then (version,
event JSON) pairs, then the listing item ('' for an anonymous match), when the match expires
('' never) and each index key's score, then the app's notifications
(:data:`service.store.outbox.NOTIFY_LUA`, written in the same step). Every argument costs Redis
about 1,300 instructions (parsed, then made a Lua string in ``ARGV``) and the worker about as
many to pack: constants are written in the script.
Answers:

- ``{'ok'}`` applied; ``{'done'}`` this very commit ran before (its answer was lost);
- ``{'replay', receipt}`` the Idempotency-Key already has a receipt: nothing written;
- ``{'conflict', version, state, s, us}`` another commit came first (with the fresh state and
  Redis ``TIME``); ``{'gone'}`` the match no longer exists;
- ``{'clock', s, us}`` the clock it was computed at is off: recompute.

The deadline index is written first: if that fails (an ACL, say) nothing has been written.
The listing indexes are written in the same script, so a listing is never behind a change.
"""

from __future__ import annotations

from typing import Any

from service import game, jsoncodec
from service.game import Match
from service.notices import notices_of
from service.store import archive
from service.store.keys import Keys
from service.store.listing import INDEX_MATCH_LUA, Indexed
from service.store.outbox import NOTIFY_LUA, notify_args
from service.store.values import Change, Receipt

__all__ = [
    "CLOCK_ARG",
    "CLOCK_TOLERANCE",
    "COMMIT",
    "DUE",
    "LOAD",
    "TIME",
    "commit_argv",
    "commit_keys",
    "receipt_of",
]

CLOCK_TOLERANCE = 0.1  # seconds a cached clock may be off before a commit is refused
CLOCK_ARG = 8  # where ARGV holds that clock (0-based): the store moves it on as it sends

# A Lua function for the commit script: keep ``receipt`` of version ``version`` for ``key``
# in the seat's hash, and keep the hash ``ttl`` seconds from now.
KEEP_RECEIPT_LUA = """
local function keep_receipt(hash, key, version, receipt, ttl)
  redis.call('HSET', hash, key, version .. ':' .. receipt)
  redis.call('EXPIRE', hash, ttl)
end
"""

COMMIT = (
    INDEX_MATCH_LUA
    + NOTIFY_LUA
    + KEEP_RECEIPT_LUA
    + f"\nlocal CLOCK_TOLERANCE = {jsoncodec.number(CLOCK_TOLERANCE)}\n"
    + """
local receipt_key, receipt_ttl, receipt_at
if ARGV[5] ~= '' then
  local cut = string.find(ARGV[5], '\\n', 1, true)
  receipt_ttl = string.sub(ARGV[5], 1, cut - 1)
  receipt_at = string.find(ARGV[5], '\\n', cut + 1, true)
  receipt_key = string.sub(ARGV[5], cut + 1, receipt_at - 1)
  local kept = redis.call('HGET', KEYS[5], receipt_key)
  if kept then return {'replay', kept} end
end
local current = redis.call('HGET', KEYS[1], 'v')
local before = ARGV[1]
if (before == '' and current) or (before ~= '' and current ~= before) then
  if current and redis.call('HGET', KEYS[1], 'c') == ARGV[4] then return {'done'} end
  local first = '0-' .. ((before == '' and 0 or tonumber(before)) + 1)
  local entry = redis.call('XRANGE', KEYS[2], first, first)[1]
  if entry then
    local fields = entry[2]
    for i = 1, #fields, 2 do
      if fields[i] == 'c' and fields[i + 1] == ARGV[4] then return {'done'} end
    end
  end
  if not current then return {'gone'} end
  local t = redis.call('TIME')
  return {'conflict', current, redis.call('HGET', KEYS[1], 's'), t[1], t[2]}
end
if ARGV[9] ~= '' then  -- strings read as numbers by the arithmetic: once each (tonumber: twice)
  local t = redis.call('TIME')
  if math.abs(t[1] - ARGV[9] + t[2] / 1000000) > CLOCK_TOLERANCE then
    return {'clock', t[1], t[2]}
  end
end
-- Every index first (the deadline, the listing, the expiry), then the match itself: Redis does
-- not undo a script's writes when a later command fails (a command refused), so a move that
-- fails here fails before anything of it is written.
if ARGV[7] == '' then
  redis.call('ZREM', KEYS[3], ARGV[8])
elseif ARGV[7] ~= '=' then
  redis.call('ZADD', KEYS[3], ARGV[7], ARGV[8])
end
local events = ARGV[10] + 0
local at = 11 + 2 * events
local index_keys, scores = {}, {}
for i = 8, #KEYS do
  index_keys[#index_keys + 1] = KEYS[i]
  scores[#scores + 1] = ARGV[at + 2 + (i - 8)]
end
index_match(ARGV[8], KEYS[6], KEYS[7], KEYS[4], ARGV[at], ARGV[at + 1], index_keys, scores)
redis.call('HSET', KEYS[1], 'v', ARGV[2], 's', ARGV[3], 'c', ARGV[4])
for i = 0, events - 1 do
  redis.call('XADD', KEYS[2], '0-' .. ARGV[11 + 2 * i], 'e', ARGV[12 + 2 * i], 'c', ARGV[4])
end
if ARGV[5] ~= '' then
  keep_receipt(KEYS[5], receipt_key, ARGV[2], string.sub(ARGV[5], receipt_at + 1), receipt_ttl)
end
if ARGV[6] ~= '0' then  -- the TTL as sent: a Lua number would be formatted again (%.17g)
  redis.call('EXPIRE', KEYS[1], ARGV[6])
  redis.call('EXPIRE', KEYS[2], ARGV[6])
end
notify(ARGV[8], at + 2 + #index_keys)
return {'ok'}
"""
)

# KEYS: state. ARGV: the version the caller holds ('' for none). Answers the stored version,
# the state unless it is the caller's version, and Redis TIME.
LOAD = """
local t = redis.call('TIME')
local version = redis.call('HGET', KEYS[1], 'v')
if not version then return {false, false, t[1], t[2]} end
if version == ARGV[1] then return {version, false, t[1], t[2]} end
return {version, redis.call('HGET', KEYS[1], 's'), t[1], t[2]}
"""

# KEYS: any key on the node to ask. Answers Redis TIME.
TIME = "return redis.call('TIME')"

# KEYS: a shard's deadline index. ARGV: the most ids to answer. Ids whose deadline has passed
# by Redis TIME on that node.
DUE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', string.format('%.6f', now), 'LIMIT', 0, ARGV[1])
"""


def commit_keys(change: Change, keys: Keys, listed: Indexed) -> list[str]:
    """The KEYS of :data:`COMMIT` for ``change`` of the match of ``keys``."""
    receipt = keys.state  # never read or written without a receipt (ARGV 5 is then '')
    if change.receipt is not None:
        receipt = keys.receipts(change.receipt[0])
    ix, summary, expiry = keys.listing
    if not listed.item:  # an anonymous match: no listing key is read or written (2 keys fewer)
        return [keys.state, keys.events, keys.deadlines, expiry, receipt]
    return [keys.state, keys.events, keys.deadlines, expiry, receipt, ix, summary, *listed.keys]


def commit_argv(
    change: Change, keys: Keys, *, ttl: int, receipts_ttl: int, listed: Indexed
) -> list[Any]:
    """The ARGV of :data:`COMMIT` for ``change``: the match kept ``ttl`` seconds (0: for
    ever), a receipt ``receipts_ttl`` at most, ``listed`` in the app's listings."""
    match = change.match
    receipt = ""
    if change.receipt is not None:
        kept = change.receipt[2]
        first = {"f": kept.fingerprint, "v": kept.version, "d": list(kept.drawn), "view": kept.view}
        guard = "g:" if change.guarded else "u:"
        kept_for = str(min(receipts_ttl, ttl) if ttl else receipts_ttl)
        sealed = archive.seal(jsoncodec.dumps(first))
        receipt = kept_for + "\n" + change.receipt[1] + "\n" + guard + sealed
    deadline = _next_due(match)
    if change.previous is not None and _next_due(change.previous) == deadline:
        due = "="  # as the commit of the version it replaces indexed it: nothing to write
    else:
        due = "" if deadline is None else jsoncodec.number(deadline)
    argv: list[Any] = [
        "" if change.before is None else str(change.before),
        str(match.version),
        jsoncodec.dumps({"m": game.to_dict(match), "t": list(change.seats)}),
        change.commit_id,
        receipt,
        str(ttl),
        due,
        match.id,
        jsoncodec.number(change.now) if change.check_clock else "",
        str(len(change.events)),
    ]
    for event in change.events:
        argv += [str(event.version), jsoncodec.dumps(game.event_to_dict(event))]
    expires_at = listed.expires_at
    argv += [listed.item, "" if expires_at is None else jsoncodec.number(expires_at)]
    argv += [jsoncodec.number(score) for score in listed.scores]
    argv += notify_args(notices_of(match, change.events, change.now), keys.tag)
    return argv


def receipt_of(raw: str) -> Receipt:
    """A kept receipt as the seat's hash holds it (and :data:`COMMIT`'s ``replay`` answers)."""
    sealed = raw.split(":", 2)[2]  # "<version>:<g|u>:<sealed>"
    kept = jsoncodec.loads(archive.open_sealed(sealed))
    return Receipt(kept["f"], int(kept["v"]), tuple(kept["d"]), kept["view"])


def _next_due(match: Match) -> float | None:
    """When the sweeper should next look at ``match`` (None: never), on the server's clock
    (a test-mode match whose clock was advanced runs ``clock_offset`` seconds ahead of it)."""
    if match.status is not game.Status.PLAYING:
        return None
    due = match.turn_started if match.players[match.current_seat].bot else match.turn_deadline
    return None if due is None else due - match.clock_offset
