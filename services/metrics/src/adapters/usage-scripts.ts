/**
 * The Lua scripts behind the Redis usage store (layout and reasoning: services/metrics/README.md).
 *
 * Time is whole seconds. Every scope (`a`, `t:<T>`, `tu:<T>:<U>`, `u:<U>`; T and U are `keyToken`s) keeps two
 * series of time points: `c` the creation times of its nodes, `d` the deletion times of its closed nodes (a
 * deletion recorded before its creation counts as the creation time). A series is a sparse 4-level tree of
 * counters, each hash of bounded size:
 *
 *   <p>s:<scope>:<k>               n<era> / s<era>  count / sum of (t - era start)    era   = 2^22 s (~48.5 days)
 *                                  f                first creation (series c only)
 *   <p>s:<scope>:<k>:e<era>        n<i> / s<i>      block i (0..63) of the era         block = 2^16 s (~18.2 h)
 *   <p>s:<scope>:<k>:b<block>      n<j> / s<j>      page j (0..63) of the block        page  = 2^10 s (~17 min)
 *   <p>s:<scope>:<k>:p<page>       <q>              count at second q (0..1023) of the page
 *
 * S(x) = sum over points t < x of (x - t) is read from 4 hashes (at most ~75 eras a decade, 128, 128 and 1024
 * fields), and node-seconds over [a, b] are S_c(b) - S_c(a) - S_d(b) + S_d(a). Node records (`<p>n:<T>:<C>`
 * hash, field node token -> "created|deleted|owner") make every event idempotent and order-independent.
 */

const COMMON = `
local P = ARGV[1]
local WP, WB, WE = 1024, 65536, 4194304
local floor = math.floor
-- numbers go to Redis as integer text, never in exponent notation
local function int(x) return string.format("%d", x) end
`;

/**
 * Applies node events. ARGV: prefix, then per event 6 values: kind ("c" created | "d" deleted), tenant token,
 * cluster token, node token, owner token, time in seconds. Returns how many events changed something
 * (duplicates change nothing).
 */
export const APPLY_EVENTS = `${COMMON}
-- Counter changes are summed per key and field first and written once at the end: events of one batch mostly
-- share seconds, pages and blocks (a cluster's nodes come and go together; events arrive in time order).
local acc = {}
local function add(key, field, delta)
  local h = acc[key]
  if not h then h = {}; acc[key] = h end
  h[field] = (h[field] or 0) + delta
end

-- the key suffixes, fields and offsets of a second, computed once per distinct second of the batch
local parts = {}
local function partsOf(t)
  local x = parts[t]
  if x then return x end
  local era, blk, pg = floor(t / WE), floor(t / WB), floor(t / WP)
  x = {
    ":e" .. int(era), ":b" .. int(blk), ":p" .. int(pg),
    int(era), int(blk % 64), int(pg % 64), int(t % WP),
    "s" .. int(era), "s" .. int(blk % 64), "s" .. int(pg % 64),
    t - era * WE, t - blk * WB, t - pg * WP,
  }
  parts[t] = x
  return x
end

local function bump(base, t)
  local x = partsOf(t)
  local e, b, p = base .. x[1], base .. x[2], base .. x[3]
  add(base, x[4], 1)
  add(e, x[5], 1)
  add(b, x[6], 1)
  add(p, x[7], 1)
  -- sums of offsets, kept beside the counts of the three upper levels
  add(base, x[8], x[11])
  add(e, x[9], x[12])
  add(b, x[10], x[13])
end

local firsts = {}
local function scopes(T, U)
  return { P .. "s:a", P .. "s:t:" .. T, P .. "s:tu:" .. T .. ":" .. U, P .. "s:u:" .. U }
end

local applied = 0
for i = 2, #ARGV, 6 do
  local kind, T, C, N, U, t = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4], tonumber(ARGV[i + 5])
  local rk = P .. "n:" .. T .. ":" .. C
  local rec = redis.call("HGET", rk, N)
  local c, d, u = nil, nil, nil
  if rec then
    local cs, ds, us = string.match(rec, "^([^|]*)|([^|]*)|(.*)$")
    if cs ~= "" then c = tonumber(cs) end
    if ds ~= "" then d = tonumber(ds) end
    u = us
  end
  local changed = false
  if kind == "c" and c == nil then
    c = t
    if u == nil then u = U end
    for _, base in ipairs(scopes(T, u)) do
      bump(base .. ":c", c)
      local f = firsts[base]
      if f == nil or c < f then firsts[base] = c end
      if d ~= nil then bump(base .. ":d", math.max(c, d)) end
    end
    changed = true
  elseif kind == "d" and d == nil then
    d = t
    if u == nil then u = U end
    if c ~= nil then
      for _, base in ipairs(scopes(T, u)) do bump(base .. ":d", math.max(c, d)) end
    end
    changed = true
  end
  if changed then
    redis.call("HSET", rk, N, (c and int(c) or "") .. "|" .. (d and int(d) or "") .. "|" .. u)
    applied = applied + 1
  end
end

for key, h in pairs(acc) do
  if string.find(key, ":p%d+$") then
    for field, n in pairs(h) do redis.call("HINCRBY", key, field, int(n)) end
  else
    for field, n in pairs(h) do
      -- an upper level's child <i>: count "n<i>" and offset sum "s<i>"
      if string.sub(field, 1, 1) ~= "s" then
        redis.call("HINCRBY", key, "n" .. field, int(n))
        local ds = h["s" .. field]
        if ds ~= 0 then redis.call("HINCRBY", key, "s" .. field, int(ds)) end
      end
    end
  end
end
for base, c in pairs(firsts) do
  local key = base .. ":c"
  local f = redis.call("HGET", key, "f")
  if not f or tonumber(f) > c then redis.call("HSET", key, "f", int(c)) end
end
return applied
`;

/**
 * Node-seconds of one scope over a window. ARGV: prefix, scope, start (-1: the scope's first creation, or 0
 * when it has none; never after end), end, now (all seconds). Returns [start, end, value].
 *
 * value = integral of live(t) over [min(start, now), min(end, now)], live(t) = nodes created <= t < deleted:
 * a closed node counts [created, deleted], an open one [created, now]; nothing counts after now.
 */
export const QUERY_USAGE = `${COMMON}
local scope = ARGV[2]
local a, b, now = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])

-- adds sum over children i < limit of n_i * (x - (base + i * width)) - s_i, from a hash of n<i>/s<i> fields
local function level(key, x, limit, base, width)
  local h = redis.call("HGETALL", key)
  local n, s = {}, {}
  for j = 1, #h, 2 do
    local f = h[j]
    local kind = string.sub(f, 1, 1)
    if kind == "n" then
      n[tonumber(string.sub(f, 2))] = tonumber(h[j + 1])
    elseif kind == "s" then
      s[tonumber(string.sub(f, 2))] = tonumber(h[j + 1])
    end
  end
  local total = 0
  for i, cnt in pairs(n) do
    if i < limit then
      total = total + cnt * (x - (base + i * width)) - (s[i] or 0)
    end
  end
  return total
end

-- S(x) = sum over recorded points t < x of (x - t)
local function S(series, x)
  if x <= 0 then return 0 end
  local era = floor(x / WE)
  local blk = floor(x / WB)
  local pg = floor(x / WP)
  local total = level(series, x, era, 0, WE)
  total = total + level(series .. ":e" .. int(era), x, blk % 64, era * WE, WB)
  total = total + level(series .. ":b" .. int(blk), x, pg % 64, blk * WB, WP)
  local h = redis.call("HGETALL", series .. ":p" .. int(pg))
  local limit = x % WP
  local base = pg * WP
  for j = 1, #h, 2 do
    local q = tonumber(h[j])
    if q < limit then total = total + tonumber(h[j + 1]) * (x - (base + q)) end
  end
  return total
end

local base = P .. "s:" .. scope
if a < 0 then
  local f = redis.call("HGET", base .. ":c", "f")
  if f then a = math.min(tonumber(f), b) else a = 0 end
end
-- the future holds no usage yet: both edges stop at now
local ca, cb = math.min(a, now), math.min(b, now)
local value = S(base .. ":c", cb) - S(base .. ":c", ca) - S(base .. ":d", cb) + S(base .. ":d", ca)
return { a, b, value }
`;
