"""The compact forms of what a match keeps in Redis: its packed event log and its receipts.

**The packed log.** While a game is played its events are entries of the match's stream
(``{s<k>}:<id>:events``), where followers block on them. Once the match is not being played
(a game is over, the match finished or canceled), the store packs every event in the stream
into the match's state hash, in one compressed blob, and trims them from the stream::

    {s<k>}:<id>:state   a   the events of versions 1..ap: their public JSON, one a line,
                            zlib (level 9), base85 (the clients decode answers as text)
                        ap  the last version packed ('0' or absent: none)

A whole 4-player game's 40-60 events take 9-13 KB as stream entries (a stream's node is
preallocated 4 KB) and 1.5-2.5 KB packed; the stream of a match between games is then empty.
Packing is one script (:data:`ARCHIVE`): it checks that nobody packed meanwhile (``ap``),
writes the new blob (the old one and the stream's events, as the worker read them) and
trims exactly what it holds, so a reader sees every event once, in either form. Readers use
one script too (:data:`READ`, :data:`LAST`), which answers the blob only when the range
asked for starts in it. The blob lives and expires with the state hash. (A commit sent again
after a lost answer is still recognised by the state's ``c``; only when another commit came
in between and the log was packed meanwhile would it be refused as stale instead.)

**Receipts.** The first answer to an ``Idempotency-Key`` (a whole view) is kept compressed
with a preset dictionary of a view's names (:func:`seal`): about 400 bytes instead of 1,500.
When the log is packed, :data:`ARCHIVE` also drops the receipts of requests that carried
``If-Match`` (a resent one is refused as stale without its receipt, never applied again),
except those of the last commit (the move that ended the game, resent); the receipts of
requests without ``If-Match`` stay their 24 hours, since nothing else stops a resent one.
"""

from __future__ import annotations

import base64
import zlib
from functools import lru_cache

__all__ = ["ARCHIVE", "LAST", "READ", "open_sealed", "pack", "seal", "unpack"]

# KEYS: state, events, then the seats' receipts. ARGV: the last version packed as the caller
# read it ('0': none), the last version the new blob holds, the blob ('': leave the log).
# Answers 'ok', 'moved' (another worker packed meanwhile: nothing written) or 'gone'.
ARCHIVE = """
local current = redis.call('HGET', KEYS[1], 'v')
if not current then return 'gone' end
local upto = redis.call('HGET', KEYS[1], 'ap') or '0'
if upto ~= ARGV[1] then return 'moved' end
if ARGV[3] ~= '' then
  redis.call('HSET', KEYS[1], 'a', ARGV[3], 'ap', ARGV[2])
  redis.call('XTRIM', KEYS[2], 'MINID', '0-' .. (tonumber(ARGV[2]) + 1))
end
local last = tonumber(current)
for i = 3, #KEYS do
  local held = redis.call('HGETALL', KEYS[i])
  for j = 1, #held, 2 do
    local version, guard = string.match(held[j + 1], '^([0-9]+):(%a):')
    if guard == 'g' and tonumber(version) < last then redis.call('HDEL', KEYS[i], held[j]) end
  end
end
return 'ok'
"""

# KEYS: state, events. ARGV: after, the last version wanted ('+': all), the most entries.
# Answers {last version packed, the blob when ``after`` is below it (else false), the
# stream's entries in (after, last]} (entries at or below the packed version are gone).
READ = """
local upto = redis.call('HGET', KEYS[1], 'ap') or '0'
local entries = redis.call('XRANGE', KEYS[2], '(0-' .. ARGV[1], ARGV[2], 'COUNT', ARGV[3])
if tonumber(ARGV[1]) < tonumber(upto) then
  return {upto, redis.call('HGET', KEYS[1], 'a'), entries}
end
return {upto, false, entries}
"""

# KEYS: state, events. Answers {the stream's last entry, or false and the blob}.
LAST = """
local last = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1)
if #last > 0 then return {last[1]} end
return {false, redis.call('HGET', KEYS[1], 'a')}
"""


def pack(lines: list[str]) -> str:
    """The blob of the events ``lines`` (their JSON, versions 1..n in order)."""
    return base64.b85encode(zlib.compress("\n".join(lines).encode(), 9)).decode("ascii")


@lru_cache(maxsize=64)
def unpack(blob: str) -> tuple[str, ...]:
    """The events' JSON lines packed in ``blob`` (line ``i`` is version ``i + 1``)."""
    if not blob:
        return ()
    return tuple(zlib.decompress(base64.b85decode(blob)).decode().split("\n"))


# The names and values every view and receipt repeats: zlib finds them here instead of in
# the first half of each receipt. Never change it (``_SEALED`` names this one); add another.
_VIEW_WORDS = (
    b'"rules":{"tile_set":"standard","turn_seconds":60,"initial_meld_points":30,'
    b'"joker_worth_zero_in_meld":false,"joker_locked_sets":false,"hints":true,"rounds":1,'
    b'"target_score":null,"match_winner":"total_score","stalemate_scoring":"difference",'
    b'"stalemate_end":"nobody_can_play","first_player_joker":"draw_again",'
    b'"redeal_duplicates":false,"failed_turn_penalty":3},"last_outcome":null,"winner":null,'
    b'"rematch_id":null,"rack":["R1","R2","R3","R4","R5","R6","R7","R8","R9","R10","R11","R12",'
    b'"R13","B1","B2","B3","B4","B5","B6","B7","B8","B9","B10","B11","B12","B13","K1","K2","K3",'
    b'"K4","K5","K6","K7","K8","K9","K10","K11","K12","K13","O1","O2","O3","O4","O5","O6","O7",'
    b'"O8","O9","O10","O11","O12","O13","J"],'
    b'"players":[{"seat":0,"name":"","bot":false,"rack_count":14,"melded":false,"score":0,'
    b'"games_won":0,"left":false},{"seat":1,"name":"","bot":true,"rack_count":14,"melded":true,'
    b'"score":0,"games_won":0,"left":false}],"game_number":1,"games_total":4,"rounds":1,'
    b'{"f":"","v":1,"d":[],"view":{"id":"","version":1,"status":"playing","current_seat":0,'
    b'"turn_started":1,"turn_deadline":null,"server_time":1,"table":[],"draft":null,"pool_count":'
)
_SEALED = "z1:"


def seal(text: bytes) -> str:
    """``text`` (a receipt's JSON) compressed, as text."""
    packer = zlib.compressobj(9, zdict=_VIEW_WORDS)
    packed = packer.compress(text) + packer.flush()
    return _SEALED + base64.b85encode(packed).decode("ascii")


def open_sealed(sealed: str) -> str:
    """The text :func:`seal` sealed (text stored before receipts were sealed passes as is)."""
    if not sealed.startswith(_SEALED):
        return sealed
    opener = zlib.decompressobj(zdict=_VIEW_WORDS)
    packed = base64.b85decode(sealed[len(_SEALED) :])
    return (opener.decompress(packed) + opener.flush()).decode()
