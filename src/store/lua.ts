import { createHash } from 'node:crypto';
import type { RedisConnection } from './redis.js';

/** One call of a script: its KEYS and its ARGV. */
export interface ScriptCall {
  readonly keys: readonly string[];
  readonly args: readonly (string | number)[];
}

const isNoScript = (error: unknown): boolean =>
  error instanceof Error && error.message.startsWith('NOSCRIPT');

/** Every script defined in this process, for `loadScripts`. */
const defined = new Set<LuaScript>();

/**
 * A Lua script sent by its SHA1, so hot paths such as the rate limiter do not resend their source
 * on every call. Redis is given the source ahead (`loadScripts`, as a worker starts) or when it
 * answers NOSCRIPT (first use, or after a restart or failover emptied its script cache). Unlike
 * `defineCommand`, it adds nothing to a client that other modules share.
 */
export class LuaScript {
  readonly #source: string;
  readonly #sha: string;
  /** Connections on which the script last ran by its SHA or was sent: Redis has it, as far as known. */
  readonly #known = new WeakSet<RedisConnection>();
  /**
   * Per connection, while Redis may lack the script: the first call, which sends the source if
   * NOSCRIPT answers, and which the calls made meanwhile wait for. Without it a burst (a thousand
   * runs taking their job's lock at a worker's first tick) met NOSCRIPT a thousand times and sent
   * the source as often: 110 ms of that tick's lag on 2 cores.
   */
  readonly #first = new WeakMap<RedisConnection, Promise<unknown>>();

  constructor(source: string) {
    this.#source = source;
    this.#sha = createHash('sha1').update(source).digest('hex');
    defined.add(this);
  }

  /** Has Redis cache the script now, so that no call on `redis` waits for its source to be sent. */
  async load(redis: RedisConnection): Promise<void> {
    await redis.script('LOAD', this.#source);
    this.#known.add(redis);
  }

  async run(
    redis: RedisConnection,
    keys: readonly string[],
    args: readonly (string | number)[],
  ): Promise<unknown> {
    if (this.#known.has(redis)) return this.#call(redis, keys, args);
    const first = this.#first.get(redis);
    if (first) {
      await first;
      return this.#call(redis, keys, args);
    }
    const call = this.#call(redis, keys, args);
    const forget = () => this.#first.delete(redis);
    this.#first.set(redis, call.then(forget, forget));
    return call;
  }

  async #call(
    redis: RedisConnection,
    keys: readonly string[],
    args: readonly (string | number)[],
  ): Promise<unknown> {
    try {
      const result = await redis.evalsha(this.#sha, keys.length, ...keys, ...args);
      this.#known.add(redis);
      return result;
    } catch (error) {
      if (!isNoScript(error)) throw error;
      // Redis lost it (a restart, a failover): the next call waits for one that sends it again
      this.#known.delete(redis);
      const result = await redis.eval(this.#source, keys.length, ...keys, ...args);
      this.#known.add(redis);
      return result;
    }
  }

  /**
   * Runs the script once per call, all in one pipeline: one round trip, and a second one only for
   * the calls that met NOSCRIPT. Answers each call's result in order; rejects with the first
   * call's error, if any.
   */
  async runEach(redis: RedisConnection, calls: readonly ScriptCall[]): Promise<unknown[]> {
    if (calls.length === 0) return [];
    const pipeline = redis.pipeline();
    for (const { keys, args } of calls) pipeline.evalsha(this.#sha, keys.length, ...keys, ...args);
    const replies = (await pipeline.exec()) ?? [];
    const unloaded = calls.flatMap((_, index) => (isNoScript(replies[index]?.[0]) ? [index] : []));
    if (unloaded.length > 0) {
      const retry = redis.pipeline();
      for (const index of unloaded) {
        const { keys, args } = calls[index] as ScriptCall;
        retry.eval(this.#source, keys.length, ...keys, ...args);
      }
      const retried = (await retry.exec()) ?? [];
      for (const [position, index] of unloaded.entries()) replies[index] = retried[position] ?? [null, null];
    }
    return replies.map(([error, result]) => {
      if (error) throw error;
      return result;
    });
  }
}

/**
 * Has Redis cache every script this process defined, in one go: a role calls it as it starts, so
 * its first burst (a thousand runs at one tick) runs every script by its SHA at once. Redis may
 * lose them again (a restart): calls then send the source once more, as they would without this.
 */
export async function loadScripts(redis: RedisConnection): Promise<void> {
  await Promise.all([...defined].map((script) => script.load(redis)));
}

// Run lock (run-lock.ts)

/**
 * Admits a run in one step: not while its job is suspended (when ARGV[2] is '1'); then takes the
 * job's run lock (when ARGV[3] is '1'), or renews it a full TTL if the run already holds it (a
 * resuming execution of the run): a lock merely found its own could lapse before the execution's
 * first renewal, and another run of the job take it while this one acts. An admitted run is
 * told the ownership ledger's sequence (KEYS[3]) as of its admission, which its first listing is
 * ordered after (src/engine/ownership.ts). Given the run's start hash (KEYS[4]), an admitted
 * run's start is recorded in the same step: its first start is kept and the worker running it now
 * named (run-starts.ts).
 * KEYS: suspended jobs hash, the lock, the ledger's sequence[, the run's start hash]. ARGV: job,
 * check suspension, take the lock, run id, TTL ms[, this start (ISO), this worker, the start's TTL ms].
 * Returns { 'suspended', its record } or { 'locked', the run holding it } or { 'admitted', '',
 * the ledger's sequence } (with the start hash, then: first start, the worker before this one
 * ('' for none)).
 */
export const ADMIT_RUN = new LuaScript(`
if ARGV[2] == '1' then
  local suspension = redis.call('HGET', KEYS[1], ARGV[1])
  if suspension then return { 'suspended', suspension } end
end
if ARGV[3] == '1' then
  local holder = redis.call('GET', KEYS[2])
  if holder and holder ~= ARGV[4] then return { 'locked', holder } end
  redis.call('SET', KEYS[2], ARGV[4], 'PX', ARGV[5])
end
local seq = redis.call('GET', KEYS[3]) or '0'
if KEYS[4] then
  local start = redis.call('HMGET', KEYS[4], 'startedAt', 'worker')
  local first = start[1] or ARGV[6]
  redis.call('HSET', KEYS[4], 'startedAt', first, 'worker', ARGV[7])
  redis.call('PEXPIRE', KEYS[4], ARGV[8])
  return { 'admitted', '', seq, first, start[2] or '' }
end
return { 'admitted', '', seq }
`);

/** Extends a run lock's TTL if the run still holds it. KEYS: the lock. ARGV: run id, TTL ms. Returns 1 if extended. */
export const RENEW_IF_OWNER = new LuaScript(
  `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0`,
);

/** Deletes a run lock (or an execution's lease) if its holder still holds it. KEYS: the key. ARGV: the holder. */
export const DELETE_IF_OWNER = new LuaScript(
  `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`,
);

// Execution leases (run-lease.ts)

/**
 * Renews an execution's lease if it still holds it, and then the job's run lock for its run when
 * given: extended if the run holds it, taken back if it expired unclaimed (this worker was stalled),
 * left alone if another run holds it. An execution that lost its lease renews nothing. Reads the
 * run's cancellation too, so an execution learns of a cancel within a renewal.
 * KEYS: the lease, the run lock (unread without a run id), the run's cancellation.
 * ARGV: token, lease TTL ms, run id ('' for no lock), lock TTL ms.
 * Returns { lease (1 renewed, 0 not the token's), lock (1 renewed, 2 taken back, 0 another's,
 * -1 not asked), the lock's holder when another's, the cancellation ('' for none) }.
 */
export const RENEW_LEASE = new LuaScript(`
local cancel = redis.call('GET', KEYS[3]) or ''
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return { 0, -1, '', cancel } end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
if ARGV[3] == '' then return { 1, -1, '', cancel } end
local holder = redis.call('GET', KEYS[2])
if holder == ARGV[3] then
  redis.call('PEXPIRE', KEYS[2], ARGV[4])
  return { 1, 1, '', cancel }
end
if not holder then
  redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[4])
  return { 1, 2, '', cancel }
end
return { 1, 0, holder, cancel }
`);

// Scheduler's last ticks (scheduler/scheduler.ts)

/**
 * Records a job's last tick handled; two schedulers may record the same tick, so the key only
 * ever moves forward. KEYS: the job's last tick. ARGV: the tick (epoch ms). Returns 0.
 */
export const SET_TICK_IF_LATER = new LuaScript(`
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) > current then redis.call('SET', KEYS[1], ARGV[1]) end
return 0
`);

// Run history (history.ts)

/**
 * Stores the summary and indexes it, then applies every retention limit to the two indexes in
 * the same call, so no writer can leave them over their bounds. The sets get the same TTL as the
 * summaries: a job that stops running leaves nothing behind once its last run has aged out.
 *
 * It also moves this job's and outcome's entry of the last-runs hash forward (never back: runs
 * of one job may finish out of order); a dry run, or a run already past the retention, leaves
 * the hash alone.
 *
 * A script may touch only the keys it is given (Redis Cluster routes it by them), and which runs
 * are evicted is known only once the indexes are read here: so it answers the evicted members,
 * whose summaries and other jobs' indexes EVICT_RUNS then drops.
 *
 * KEYS: history, this job's history, this run's summary, the last-runs hash.
 * ARGV: member, score, summary JSON, maxAgeMs, age cut-off score, maxRunsPerJob, maxRunsTotal,
 *       last-runs field ('' for a dry run).
 * Returns the evicted members.
 */
export const RECORD_RUN = new LuaScript(`
local history, jobHistory = KEYS[1], KEYS[2]
local ttl = tonumber(ARGV[4])
redis.call('SET', KEYS[3], ARGV[3], 'PX', ttl)
redis.call('ZADD', history, ARGV[2], ARGV[1])
redis.call('ZADD', jobHistory, ARGV[2], ARGV[1])
redis.call('PEXPIRE', history, ttl)
redis.call('PEXPIRE', jobHistory, ttl)
if ARGV[8] ~= '' and tonumber(ARGV[2]) >= tonumber(ARGV[5]) then
  local newest = tonumber(redis.call('HGET', KEYS[4], ARGV[8]) or '0')
  if tonumber(ARGV[2]) > newest then redis.call('HSET', KEYS[4], ARGV[8], ARGV[2]) end
  redis.call('PEXPIRE', KEYS[4], ttl)
end

local evicted = {}
local function evict(victims)
  for _, victim in ipairs(victims) do
    redis.call('ZREM', history, victim)
    redis.call('ZREM', jobHistory, victim)
    evicted[#evicted + 1] = victim
  end
end

local cutoff = '(' .. ARGV[5]
evict(redis.call('ZRANGEBYSCORE', history, '-inf', cutoff))
evict(redis.call('ZRANGEBYSCORE', jobHistory, '-inf', cutoff))
local excess = redis.call('ZCARD', jobHistory) - tonumber(ARGV[6])
if excess > 0 then evict(redis.call('ZRANGE', jobHistory, 0, excess - 1)) end
excess = redis.call('ZCARD', history) - tonumber(ARGV[7])
if excess > 0 then evict(redis.call('ZRANGE', history, 0, excess - 1)) end
return evicted
`);

/**
 * Drops what RECORD_RUN evicted from the history: each run's summary and its entry in its job's
 * index, unless the run was recorded again meanwhile (it is back in the history).
 * KEYS: history, then for each member: its summary, its job's history. ARGV: members.
 */
export const EVICT_RUNS = new LuaScript(`
for i = 1, #ARGV do
  if not redis.call('ZSCORE', KEYS[1], ARGV[i]) then
    redis.call('DEL', KEYS[2 * i])
    redis.call('ZREM', KEYS[2 * i + 1], ARGV[i])
  end
end
return 1
`);

/**
 * Drops index members whose summary has expired, unless the run was recorded again meanwhile.
 * KEYS: history, then for each member: its summary, its job's history. ARGV: members.
 */
export const FORGET_EXPIRED_RUNS = new LuaScript(`
for i = 1, #ARGV do
  if redis.call('EXISTS', KEYS[2 * i]) == 0 then
    redis.call('ZREM', KEYS[1], ARGV[i])
    redis.call('ZREM', KEYS[2 * i + 1], ARGV[i])
  end
end
return 1
`);

/**
 * Drops last-runs entries still older than the cut-off, not one a run has just moved forward.
 * KEYS: the last-runs hash. ARGV: cut-off (epoch ms), fields...
 */
export const FORGET_STALE_LAST_RUNS = new LuaScript(`
for i = 2, #ARGV do
  local at = tonumber(redis.call('HGET', KEYS[1], ARGV[i]) or '')
  if at ~= nil and at < tonumber(ARGV[1]) then redis.call('HDEL', KEYS[1], ARGV[i]) end
end
return 1
`);

// Suspensions (suspensions.ts)

/**
 * Sets a hash field only if it still holds what the caller read (`ARGV[2]` = '1' when it was
 * present, with its value in ARGV[3]), so two concurrent suspends cannot lose each other's change.
 * KEYS: hash. ARGV: field, was present, old value, new value. Returns 1 if set, 0 on a conflict.
 */
export const COMPARE_AND_SET_FIELD = new LuaScript(`
local current = redis.call('HGET', KEYS[1], ARGV[1])
if (ARGV[2] == '1' and current ~= ARGV[3]) or (ARGV[2] == '0' and current ~= false) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[4])
return 1
`);

// Holds (holds.ts)

/**
 * Places a hold (replacing one on the same pattern) and logs it.
 * KEYS: holds hash, log list. ARGV: pattern, hold JSON, event JSON, log length. Returns 1.
 */
export const PUT_HOLD = new LuaScript(`
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('LPUSH', KEYS[2], ARGV[3])
redis.call('LTRIM', KEYS[2], 0, tonumber(ARGV[4]) - 1)
return 1
`);

/**
 * Deletes a hold only if it is still the one read, and logs why. KEYS: holds hash, log list.
 * ARGV: pattern, hold as read, event JSON, log length. Returns 1 when deleted.
 */
export const DELETE_HOLD = new LuaScript(`
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('LPUSH', KEYS[2], ARGV[3])
redis.call('LTRIM', KEYS[2], 0, tonumber(ARGV[4]) - 1)
return 1
`);

// Rate limiter (rate-limiter.ts)

/**
 * A token bucket that takes one token or says how long until one is due, in microseconds.
 * Time comes from Redis `TIME`, so processes on machines with skewed clocks still share one
 * clock; `at` never moves backwards, so a Redis failover to a host whose clock is behind pauses
 * the refill instead of minting tokens. The key expires once a full refill is due anyway.
 * KEYS: bucket. ARGV: rate per second, burst, key TTL in ms. Returns the wait (µs; 0: taken).
 */
export const TAKE_TOKEN = new LuaScript(`
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local rate, burst = tonumber(ARGV[1]), tonumber(ARGV[2])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1]) or burst
local at = tonumber(state[2]) or now
if now > at then
  tokens = math.min(burst, tokens + (now - at) * rate / 1000000)
  at = now
end
local wait = 0
if tokens >= 1 then
  tokens = tokens - 1
else
  wait = math.ceil((1 - tokens) * 1000000 / rate)
end
redis.call('HSET', KEYS[1], 'tokens', tokens, 'at', at)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return wait
`);

// Notification states (notify-states.ts)

/**
 * Writes a JSON value unless the stored one has a later `at`, so a slow run that ends after a
 * newer one cannot roll the state back (two runs of one job with `overlap: allow`). ISO instants
 * in UTC compare as strings; a stored value that is not such JSON is overwritten.
 * KEYS: the state key. ARGV: value JSON, its `at`, TTL in ms. Returns 1 if written, 0 if not.
 */
export const SET_IF_NOT_OLDER = new LuaScript(`
local current = redis.call('GET', KEYS[1])
if current then
  local ok, stored = pcall(cjson.decode, current)
  if ok and type(stored) == 'table' and type(stored.at) == 'string' and stored.at > ARGV[2] then
    return 0
  end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
return 1
`);

// Fleet listings (fleet-listing.ts)

/**
 * Keeps a listing unless the stored one was listed later, so a run that ends after another but
 * listed before it cannot replace the fresher view. ISO instants in UTC compare as strings.
 * KEYS: the listing's hash. ARGV: its `at`, its body (JSON), the digest of its workgroups.
 * Returns 1 if kept, 0 if not.
 */
export const SAVE_LISTING_IF_NEWER = new LuaScript(`
local stored = redis.call('HGET', KEYS[1], 'at')
if stored and stored > ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'at', ARGV[1], 'body', ARGV[2], 'digest', ARGV[3])
return 1
`);

/**
 * Sets fields of a run's hash (its targets' records, or their progress records) and refreshes the
 * hash's TTL, atomically. KEYS: hash. ARGV: TTL ms, then field, value pairs.
 */
export const SET_FIELDS_AND_TTL = new LuaScript(`
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
`);

/**
 * Adds one entry to each of many lists, keeping each list's newest entries and refreshing its
 * TTL: a run's line in the timeline of every workspace it acted on, in one call per batch.
 * KEYS: the lists. ARGV: entries kept per list, TTL ms, then one entry per key.
 */
export const PUSH_CAPPED_LISTS = new LuaScript(`
local keep = tonumber(ARGV[1]) - 1
for i, key in ipairs(KEYS) do
  redis.call('LPUSH', key, ARGV[i + 2])
  redis.call('LTRIM', key, 0, keep)
  redis.call('PEXPIRE', key, ARGV[2])
end
return #KEYS
`);

// Overdue episodes (overdue-episodes.ts)

/**
 * Deletes a hash field only if it still holds the value read, so of several schedulers closing
 * the same episode one does, and none closes an episode another opened since.
 * KEYS: the hash. ARGV: the field, the value read. Returns 1 if deleted, 0 if not.
 */
export const HDEL_IF_EQUAL = new LuaScript(`
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then
  return redis.call('HDEL', KEYS[1], ARGV[1])
end
return 0
`);
