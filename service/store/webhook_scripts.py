"""The Lua scripts of webhooks' deliveries (see :mod:`service.store.notify` for the keys)."""

from __future__ import annotations

__all__ = [
    "CLAIM",
    "FANOUT",
    "FINISH",
    "HOLD",
    "LOG",
    "REDELIVER",
    "REGISTER",
    "RELEASE",
    "REPLACE",
]

# KEYS: an app's webhooks (a hash). ARGV: the webhook's id, its JSON, the most an app may
# have. Adds it unless the app has that many already, in one step (a check, then a write,
# let 40 registrations at once leave 24 webhooks): 1 when added, 0 when full.
REGISTER = """
if redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[3]) then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
"""

# A Lua function: lease the queue ``member`` until ``now + lease`` and answer its head.
_HEAD_LUA = """
local function head(tag, due, member, now, lease)
  local did = redis.call('LINDEX', tag .. ':wh:q:' .. member, 0)
  if not did then
    redis.call('ZREM', due, member)
    return nil
  end
  redis.call('ZADD', due, string.format('%.6f', now + lease), member)
  local d = redis.call('HMGET', tag .. ':wh:d:' .. did, 'webhook', 'type', 'match_id', 'body',
                       'tries', 'created', 'app')
  return {member, did, d[1], d[2], d[3], d[4], d[5], d[6], d[7]}
end
"""

# KEYS: the shard's due and stats keys. ARGV: tag, outbox, entry id, match id, type, the
# compact notification, created (ms), the log's size, the app, the lease, the most heads to
# lease, then (webhook, delivery id) pairs. One delivery per webhook (made once: a claimed
# entry may be fanned out again), then the entry is acknowledged; the queues it made due
# (nobody held them) are leased to the caller, up to the most it asked for, and their heads
# answered. A delivery that leaves the webhook's log (its LOG_KEPT newest on the shard) is
# forgotten if it is finished, and when it finishes if it is still pending.
FANOUT = (
    _HEAD_LUA
    + """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local tag = ARGV[1]
local fresh = {}
for i = 12, #ARGV, 2 do
  local hook, did = ARGV[i], ARGV[i + 1]
  local d = tag .. ':wh:d:' .. did
  if redis.call('EXISTS', d) == 0 then
    redis.call('HSET', d, 'webhook', hook, 'type', ARGV[5], 'match_id', ARGV[4], 'body', ARGV[6],
               'status', 'pending', 'attempts', 0, 'tries', 0, 'code', '', 'next', now,
               'created', ARGV[7], 'app', ARGV[9])
    local member = hook .. ':' .. ARGV[4]
    redis.call('RPUSH', tag .. ':wh:q:' .. member, did)
    if redis.call('ZADD', KEYS[1], 'NX', string.format('%.6f', now), member) == 1 then
      fresh[#fresh + 1] = member
    end
    local log = tag .. ':wh:log:' .. hook
    redis.call('ZADD', log, ARGV[7], did)
    local older = redis.call('ZRANGE', log, 0, -(tonumber(ARGV[8]) + 1))
    if #older > 0 then
      redis.call('ZREMRANGEBYRANK', log, 0, -(tonumber(ARGV[8]) + 1))
      for _, old in ipairs(older) do
        local od = tag .. ':wh:d:' .. old
        if redis.call('HGET', od, 'status') ~= 'pending' then redis.call('DEL', od) end
      end
    end
    redis.call('HINCRBY', KEYS[2], 'pending', 1)
  end
end
redis.call('XACK', ARGV[2], 'dispatch', ARGV[3])
local out = {}
for i = 1, math.min(#fresh, tonumber(ARGV[11])) do
  local h = head(tag, KEYS[1], fresh[i], now, tonumber(ARGV[10]))
  if h then out[#out + 1] = h end
end
return out
"""
)

# KEYS: the shard's due key. ARGV: tag, lease seconds, the most to claim. Leases the queues
# whose head is due by Redis TIME and answers their heads.
CLAIM = (
    _HEAD_LUA
    + """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local members = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', string.format('%.6f', now),
                           'LIMIT', 0, tonumber(ARGV[3]))
local out = {}
for _, member in ipairs(members) do
  local h = head(ARGV[1], KEYS[1], member, now, tonumber(ARGV[2]))
  if h then out[#out + 1] = h end
end
return out
"""
)

# KEYS: the shard's due and stats keys. ARGV: tag, member, delivery id, outcome (delivered,
# retry, dead), status code ('' none), delay (retry), whether it was sent ('1'), latency
# bucket field ('' none), latency, lease, how long a finished delivery is kept (while it is
# in its webhook's log; out of it, it is forgotten at once). The queue's next head comes back
# (leased) when the delivery left the queue and another one is due now.
FINISH = (
    _HEAD_LUA
    + """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local tag, member, did, outcome = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local q = tag .. ':wh:q:' .. member
if redis.call('LINDEX', q, 0) ~= did then return false end
local d = tag .. ':wh:d:' .. did
if ARGV[7] == '1' then
  redis.call('HINCRBY', d, 'attempts', 1)
  redis.call('HINCRBY', d, 'tries', 1)
end
if outcome == 'retry' then
  local next = now + tonumber(ARGV[6])
  redis.call('HSET', d, 'code', ARGV[5], 'next', string.format('%.3f', next))
  redis.call('ZADD', KEYS[1], string.format('%.6f', next), member)
  redis.call('HINCRBY', KEYS[2], 'retried', 1)
  return false
end
redis.call('HSET', d, 'status', outcome, 'code', ARGV[5], 'next', '')
if redis.call('ZSCORE', tag .. ':wh:log:' .. redis.call('HGET', d, 'webhook'), did) then
  redis.call('EXPIRE', d, tonumber(ARGV[11]))
else
  redis.call('DEL', d)
end
redis.call('LPOP', q)
redis.call('HINCRBY', KEYS[2], 'pending', -1)
redis.call('HINCRBY', KEYS[2], outcome, 1)
if ARGV[8] ~= '' then
  redis.call('HINCRBY', KEYS[2], ARGV[8], 1)
  redis.call('HINCRBYFLOAT', KEYS[2], 'latency_sum', ARGV[9])
end
return head(tag, KEYS[1], member, now, tonumber(ARGV[10])) or false
"""
)

# KEYS: the shard's due and stats keys. ARGV: tag, webhook, delivery id. Queues the delivery
# again (at the end of its match's queue); answers 0 when it is not that webhook's.
REDELIVER = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local tag, hook, did = ARGV[1], ARGV[2], ARGV[3]
local d = tag .. ':wh:d:' .. did
if redis.call('HGET', d, 'webhook') ~= hook then return 0 end
if redis.call('HGET', d, 'status') == 'pending' then return 1 end
redis.call('PERSIST', d)
redis.call('HSET', d, 'status', 'pending', 'tries', 0, 'next', string.format('%.3f', now))
local member = hook .. ':' .. redis.call('HGET', d, 'match_id')
redis.call('RPUSH', tag .. ':wh:q:' .. member, did)
redis.call('ZADD', KEYS[1], 'NX', string.format('%.6f', now), member)
redis.call('HINCRBY', KEYS[2], 'pending', 1)
return 1
"""

# KEYS: a shard's reader lease. ARGV: the consumer, the lease in ms. Answers 2 when the
# consumer takes the lease now, 1 when it held it (renewed), 0 when another holds it.
HOLD = """
local held = redis.call('GET', KEYS[1])
if not held then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 2
end
if held == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
"""

# KEYS: a shard's reader lease. ARGV: the consumer. Gives the lease up if it holds it.
RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0
"""

# KEYS: a hash. ARGV: field, value. Sets the field only if it exists.
REPLACE = """
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
end
"""

# KEYS: a webhook's log on one shard. ARGV: tag, limit. Its newest deliveries' fields.
LOG = """
local ids = redis.call('ZREVRANGE', KEYS[1], 0, tonumber(ARGV[2]) - 1)
local out = {}
for _, did in ipairs(ids) do
  local d = redis.call('HMGET', ARGV[1] .. ':wh:d:' .. did, 'type', 'match_id', 'status',
                       'attempts', 'code', 'next', 'created')
  if d[1] then out[#out + 1] = {did, d[1], d[2], d[3], d[4], d[5], d[6], d[7]} end
end
return out
"""
