"""The Lua scripts of the store (see :mod:`service.store.keys` for the keys), and the commit
script's keys and arguments (:func:`commit_keys`, :func:`commit_argv`).

``COMMIT`` KEYS: state, events, deadlines, the shard's ``expiry`` (see
:mod:`service.store.listing`), the seat's receipts (the state key when there is none; left out
for an anonymous match with none), then, for a match an app owns (never for an anonymous one,
whose listings are not touched), the shard's listing ``ix`` and ``sum`` and the listing index
keys the match belongs in. ARGV: 1 the header, one argument of nine fields each ended by a
newline but the last (:func:`commit_argv`): the clock the change was computed at, moved on by
the time the worker held it before sending (:func:`with_clock`; '' not to check; how far off it
may be, :data:`CLOCK_TOLERANCE`, is written in the script), the version it replaces ('' for a
new match), the new version, the commit id, the match's TTL (0: none), the next deadline ('' for
none; '=' the one the version it replaces had, which that version's commit indexed), the match
id, the number of events and when the match expires ('' never); 2 the state JSON, 3 the receipt
('' for none: the receipts' TTL, a newline, the Idempotency-Key, a newline, the receipt sealed
by :func:`service.store.archive.seal`), then (version, event JSON) pairs, then the listing item
('' for an anonymous match) and each index key's score, then the app's notifications
(:data:`service.store.outbox.NOTIFY_LUA`, written in the same step): for an anonymous match,
which has neither, nothing after the events (the script reads what is missing as ''). Every
argument costs Redis about 1,300 instructions (parsed, then made a Lua string in ``ARGV``) and
the worker about 1,100 to pack (hiredis): constants are written in the script, and the short
fields go as one header that the script splits with one ``string.match`` (the values it writes
are the same strings, so what Redis stores and appends to its AOF is the same).
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
    "CLOCK_TOLERANCE",
    "COMMIT",
    "DUE",
    "LOAD",
    "TIME",
    "commit_argv",
    "commit_keys",
    "STATE_ARG",
    "clock_of",
    "receipt_of",
    "with_clock",
]

CLOCK_TOLERANCE = 0.1  # seconds a cached clock may be off before a commit is refused
STATE_ARG = 1  # where the commit's arguments hold the state JSON (0-based)
_HEADER_FIELDS = 9
_HEADER_LUA = "'^" + "([^\\n]*)\\n" * (_HEADER_FIELDS - 1) + "([^\\n]*)$'"

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
local clock, before, version, commit, ttl, due, id, count, expires_at = string.match(ARGV[1], """
    + _HEADER_LUA
    + """)
local receipt_key, receipt_ttl, receipt_at
if ARGV[3] ~= '' then
  local cut = string.find(ARGV[3], '\\n', 1, true)
  receipt_ttl = string.sub(ARGV[3], 1, cut - 1)
  receipt_at = string.find(ARGV[3], '\\n', cut + 1, true)
  receipt_key = string.sub(ARGV[3], cut + 1, receipt_at - 1)
  local kept = redis.call('HGET', KEYS[5], receipt_key)
  if kept then return {'replay', kept} end
end
local current = redis.call('HGET', KEYS[1], 'v')
if (before == '' and current) or (before ~= '' and current ~= before) then
  if current and redis.call('HGET', KEYS[1], 'c') == commit then return {'done'} end
  local first = '0-' .. ((before == '' and 0 or tonumber(before)) + 1)
  local entry = redis.call('XRANGE', KEYS[2], first, first)[1]
  if entry then
    local fields = entry[2]
    for i = 1, #fields, 2 do
      if fields[i] == 'c' and fields[i + 1] == commit then return {'done'} end
    end
  end
  if not current then return {'gone'} end
  local t = redis.call('TIME')
  return {'conflict', current, redis.call('HGET', KEYS[1], 's'), t[1], t[2]}
end
if clock ~= '' then  -- strings read as numbers by the arithmetic: once each (tonumber: twice)
  local t = redis.call('TIME')
  if math.abs(t[1] - clock + t[2] / 1000000) > CLOCK_TOLERANCE then
    return {'clock', t[1], t[2]}
  end
end
-- Every index first (the deadline, the listing, the expiry), then the match itself: Redis does
-- not undo a script's writes when a later command fails (a command refused), so a move that
-- fails here fails before anything of it is written.
if due == '' then
  redis.call('ZREM', KEYS[3], id)
elseif due ~= '=' then
  redis.call('ZADD', KEYS[3], due, id)
end
local events = count + 0
local at = 4 + 2 * events
local index_keys, scores = {}, {}
for i = 8, #KEYS do
  index_keys[#index_keys + 1] = KEYS[i]
  scores[#scores + 1] = ARGV[at + 1 + (i - 8)]
end
index_match(id, KEYS[6], KEYS[7], KEYS[4], ARGV[at] or '', expires_at, index_keys, scores)
redis.call('HSET', KEYS[1], 'v', version, 's', ARGV[2], 'c', commit)
for i = 0, events - 1 do
  redis.call('XADD', KEYS[2], '0-' .. ARGV[4 + 2 * i], 'e', ARGV[5 + 2 * i], 'c', commit)
end
if ARGV[3] ~= '' then
  keep_receipt(KEYS[5], receipt_key, version, string.sub(ARGV[3], receipt_at + 1), receipt_ttl)
end
if ttl ~= '0' then  -- the TTL as sent: a Lua number would be formatted again (%.17g)
  redis.call('EXPIRE', KEYS[1], ttl)
  redis.call('EXPIRE', KEYS[2], ttl)
end
notify(id, at + 1 + #index_keys)
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
    if not listed.item:  # an anonymous match: no listing key is read or written (2 keys fewer)
        expiry = keys.tag + ":expiry"  # as keys.listing names it, without the other two
        if change.receipt is None:  # nor the receipts, never read or written without one
            return [keys.state, keys.events, keys.deadlines, expiry]
        return [keys.state, keys.events, keys.deadlines, expiry, keys.receipts(change.receipt[0])]
    ix, summary, expiry = keys.listing
    receipt = keys.state  # a place: never read or written without a receipt (ARGV 3 is '')
    if change.receipt is not None:
        receipt = keys.receipts(change.receipt[0])
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
    expires_at = listed.expires_at
    header = (
        jsoncodec.number(change.now) if change.check_clock else "",
        "" if change.before is None else str(change.before),
        str(match.version),
        change.commit_id,
        str(ttl),
        due,
        match.id,
        str(len(change.events)),
        "" if expires_at is None else jsoncodec.number(expires_at),
    )
    argv: list[Any] = [
        "\n".join(header),
        jsoncodec.dumps({"m": game.to_dict(match), "t": list(change.seats)}),
        receipt,
    ]
    for event in change.events:
        argv += [str(event.version), jsoncodec.dumps(game.event_to_dict(event))]
    if listed.item:  # a match an app owns (an anonymous one has no listing and no app to notify)
        argv.append(listed.item)
        argv += [jsoncodec.number(score) for score in listed.scores]
        argv += notify_args(notices_of(match, change.events, change.now), keys.tag)
    return argv


def with_clock(argv: list[Any], clock: str) -> list[Any]:
    """The arguments ``argv`` of :data:`COMMIT` with ``clock`` as the clock the change was
    computed at (the header's first field), in a new list."""
    header: str = argv[0]
    return [clock + header[header.index("\n") :], *argv[1:]]


def clock_of(argv: list[Any]) -> str:
    """The clock the arguments ``argv`` of :data:`COMMIT` carry ('' not to check)."""
    return str(argv[0]).partition("\n")[0]


def receipt_of(raw: str) -> Receipt:
    """A kept receipt as the seat's hash holds it (and :data:`COMMIT`'s ``replay`` answers)."""
    sealed = raw.split(":", 2)[2]  # "<version>:<g|u>:<sealed>"
    kept = jsoncodec.loads(archive.open_sealed(sealed))
    return Receipt(kept["f"], int(kept["v"]), tuple(kept["d"]), kept["view"])


_PLAYING = game.Status.PLAYING  # read on every commit, twice


def _next_due(match: Match) -> float | None:
    """When the sweeper should next look at ``match`` (None: never), on the server's clock
    (a test-mode match whose clock was advanced runs ``clock_offset`` seconds ahead of it)."""
    if match.status is not _PLAYING:
        return None
    due = match.turn_started if match.players[match.current_seat].bot else match.turn_deadline
    return None if due is None else due - match.clock_offset
