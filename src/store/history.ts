import type { Redis } from 'ioredis';
import { z } from 'zod';
import { RUN_OUTCOMES, type RunOutcome, type RunSummary, RunSummarySchema } from '../engine/summary.js';
import { DEFAULT_PREFIX, redisKeys } from './keys.js';
import { LuaScript } from './lua.js';

export interface RetentionOptions {
  /** Most runs kept per job. Default 500. */
  maxRunsPerJob?: number;
  /** Most runs kept across all jobs. Default 10 000. */
  maxRunsTotal?: number;
  /** Runs older than this (by when they finished) are dropped. Default 30 days. */
  maxAgeMs?: number;
}

export interface RunHistoryOptions {
  /** Key prefix. Default `nightshift`. */
  prefix?: string;
  retention?: RetentionOptions;
}

export interface ListRunsOptions {
  /** Only this job's runs. Default: every job's. */
  job?: string;
  /** Most summaries returned. Default 50. */
  limit?: number;
  /** Only runs with this outcome. */
  outcome?: RunOutcome;
}

const DEFAULT_RETENTION: Required<RetentionOptions> = {
  maxRunsPerJob: 500,
  maxRunsTotal: 10_000,
  maxAgeMs: 30 * 24 * 3_600_000,
};

/**
 * Both sorted sets hold the same member for a run, `["<job>","<runId>"]` as JSON, so whichever
 * set a run is evicted from, the script knows which other set and which summary to clean without
 * reading the summary (which may already have expired). JSON rather than a separator because
 * neither a run id nor, to this module, a job name is restricted. Members are only ever written
 * by `JSON.stringify` here, so one run always has exactly one member string.
 */
const MemberSchema = z.tuple([z.string(), z.string()]);
const member = (job: string, runId: string) => JSON.stringify([job, runId]);

/** A field of the last-runs hash: `["<job>","<outcome>"]`, for the same reasons as a member. */
const LastRunFieldSchema = z.tuple([z.string(), z.enum(RUN_OUTCOMES)]);

/** When the newest run of a job with an outcome finished, as the last-runs hash keeps it. */
export interface LastRun {
  job: string;
  outcome: RunOutcome;
  /** Epoch ms. */
  at: number;
}

/**
 * Stores the summary and indexes it, then applies every retention limit in the same call, so no
 * writer can leave the history over its bounds. The sets get the same TTL as the summaries: a
 * job that stops running leaves nothing behind once its last run has aged out.
 *
 * It also moves this job's and outcome's entry of the last-runs hash forward (never back: runs
 * of one job may finish out of order); a dry run, or a run already past the retention, leaves
 * the hash alone.
 *
 * KEYS: history, this job's history, this run's summary, the last-runs hash.
 * ARGV: member, score, summary JSON, maxAgeMs, age cut-off score, maxRunsPerJob, maxRunsTotal,
 *       summary key prefix, job history key prefix, last-runs field ('' for a dry run).
 * The keys of evicted runs are built from the prefixes: they share the hash tag of KEYS, so the
 * script stays within one Cluster slot.
 */
const RECORD = new LuaScript(`
local history, jobHistory = KEYS[1], KEYS[2]
local ttl = tonumber(ARGV[4])
redis.call('SET', KEYS[3], ARGV[3], 'PX', ttl)
redis.call('ZADD', history, ARGV[2], ARGV[1])
redis.call('ZADD', jobHistory, ARGV[2], ARGV[1])
redis.call('PEXPIRE', history, ttl)
redis.call('PEXPIRE', jobHistory, ttl)
if ARGV[10] ~= '' and tonumber(ARGV[2]) >= tonumber(ARGV[5]) then
  local newest = tonumber(redis.call('HGET', KEYS[4], ARGV[10]) or '0')
  if tonumber(ARGV[2]) > newest then redis.call('HSET', KEYS[4], ARGV[10], ARGV[2]) end
  redis.call('PEXPIRE', KEYS[4], ttl)
end

local function evict(victims)
  for _, victim in ipairs(victims) do
    redis.call('ZREM', history, victim)
    local ok, entry = pcall(cjson.decode, victim)
    if ok and type(entry) == 'table' and type(entry[1]) == 'string' and type(entry[2]) == 'string' then
      redis.call('ZREM', ARGV[9] .. entry[1], victim)
      redis.call('DEL', ARGV[8] .. entry[2])
    else
      redis.call('ZREM', jobHistory, victim)
    end
  end
end

local cutoff = '(' .. ARGV[5]
evict(redis.call('ZRANGEBYSCORE', history, '-inf', cutoff))
evict(redis.call('ZRANGEBYSCORE', jobHistory, '-inf', cutoff))
local excess = redis.call('ZCARD', jobHistory) - tonumber(ARGV[6])
if excess > 0 then evict(redis.call('ZRANGE', jobHistory, 0, excess - 1)) end
excess = redis.call('ZCARD', history) - tonumber(ARGV[7])
if excess > 0 then evict(redis.call('ZRANGE', history, 0, excess - 1)) end
return 1
`);

/**
 * Drops index members whose summary has expired, unless the run was recorded again meanwhile.
 * KEYS: history. ARGV: summary key prefix, job history key prefix, members...
 */
const FORGET_EXPIRED = new LuaScript(`
for i = 3, #ARGV do
  local entry = cjson.decode(ARGV[i])
  if redis.call('EXISTS', ARGV[1] .. entry[2]) == 0 then
    redis.call('ZREM', KEYS[1], ARGV[i])
    redis.call('ZREM', ARGV[2] .. entry[1], ARGV[i])
  end
end
return 1
`);

/**
 * Drops last-runs entries still older than the cut-off, not one a run has just moved forward. KEYS: the last-runs hash. ARGV: cut-off (epoch ms), fields...
 */
const FORGET_STALE_LAST_RUNS = new LuaScript(`
for i = 2, #ARGV do
  local at = tonumber(redis.call('HGET', KEYS[1], ARGV[i]) or '')
  if at ~= nil and at < tonumber(ARGV[1]) then redis.call('HDEL', KEYS[1], ARGV[i]) end
end
return 1
`);

function checkRetention(options: RetentionOptions | undefined): Required<RetentionOptions> {
  const retention = { ...DEFAULT_RETENTION, ...options };
  for (const [name, value] of Object.entries(retention)) {
    if (!Number.isSafeInteger(value) || value < 1) {
      throw new RangeError(`RunHistory: retention.${name} must be a positive integer, got ${value}`);
    }
  }
  return retention;
}

/** When a run happened, for ordering and age: the latest instant its summary knows. */
function runScore(summary: RunSummary): number {
  const at = Date.parse(summary.finishedAt ?? summary.startedAt ?? summary.scheduledAt ?? '');
  return Number.isNaN(at) ? Date.now() : at;
}

/** Run summaries in Redis, newest first, bounded in count per job, in total and in age. */
export class RunHistory {
  readonly #redis: Redis;
  readonly #keys: ReturnType<typeof redisKeys>;
  readonly #retention: Required<RetentionOptions>;

  constructor(redis: Redis, options: RunHistoryOptions = {}) {
    this.#redis = redis;
    this.#keys = redisKeys(options.prefix ?? DEFAULT_PREFIX);
    this.#retention = checkRetention(options.retention);
  }

  /** Stores a run's summary; recording the same `runId` again replaces it. */
  async record(summary: RunSummary): Promise<void> {
    const { maxAgeMs, maxRunsPerJob, maxRunsTotal } = this.#retention;
    await RECORD.run(
      this.#redis,
      [
        this.#keys.history,
        this.#keys.jobHistory(summary.job),
        this.#keys.run(summary.runId),
        this.#keys.lastRuns,
      ],
      [
        member(summary.job, summary.runId),
        runScore(summary),
        JSON.stringify(summary),
        maxAgeMs,
        Date.now() - maxAgeMs,
        maxRunsPerJob,
        maxRunsTotal,
        this.#keys.run(''),
        this.#keys.jobHistory(''),
        summary.dryRun ? '' : JSON.stringify([summary.job, summary.outcome]),
      ],
    );
  }

  /**
   * When the newest run of each job with each outcome finished (dry runs aside), in one read of
   * a hash of at most jobs × outcomes fields, cheap enough for every scrape. Entries older than
   * the retention (a job gone from the policy) are dropped, as its runs are.
   */
  async lastRuns(): Promise<LastRun[]> {
    const entries = await this.#redis.hgetall(this.#keys.lastRuns);
    const cutoff = Date.now() - this.#retention.maxAgeMs;
    const runs: LastRun[] = [];
    const stale: string[] = [];
    for (const [field, value] of Object.entries(entries)) {
      const parsed = LastRunFieldSchema.safeParse(safeJson(field));
      const at = Number(value);
      // a field this version cannot read is left alone: a newer version may have written it
      if (!parsed.success || !Number.isFinite(at)) continue;
      if (at < cutoff) stale.push(field);
      else runs.push({ job: parsed.data[0], outcome: parsed.data[1], at });
    }
    if (stale.length > 0)
      await FORGET_STALE_LAST_RUNS.run(this.#redis, [this.#keys.lastRuns], [cutoff, ...stale]);
    return runs;
  }

  async get(runId: string): Promise<RunSummary | undefined> {
    return parseSummary(await this.#redis.get(this.#keys.run(runId)));
  }

  /** Summaries newest first. Summaries that expired are skipped and removed from the index. */
  list({ job, limit = 50, outcome }: ListRunsOptions = {}): Promise<RunSummary[]> {
    return this.#find(job, limit, (summary) => outcome === undefined || summary.outcome === outcome);
  }

  /** Up to `limit` summaries that `matches`, newest first, reading the index in batches. */
  async #find(
    job: string | undefined,
    limit: number,
    matches: (summary: RunSummary) => boolean,
  ): Promise<RunSummary[]> {
    const index = job === undefined ? this.#keys.history : this.#keys.jobHistory(job);
    const found: RunSummary[] = [];
    const expired: string[] = [];
    const batch = Math.max(limit, 50);
    for (let start = 0; found.length < limit; start += batch) {
      const members = await this.#redis.zrevrange(index, start, start + batch - 1);
      if (members.length === 0) break;
      const entries = members.flatMap((raw) => {
        const parsed = MemberSchema.safeParse(safeJson(raw));
        return parsed.success ? [{ raw, runId: parsed.data[1] }] : [];
      });
      if (entries.length === 0) continue;
      const texts = await this.#redis.mget(entries.map((entry) => this.#keys.run(entry.runId)));
      for (const [i, entry] of entries.entries()) {
        const text = texts[i] ?? null;
        if (text === null) {
          expired.push(entry.raw);
          continue;
        }
        const summary = parseSummary(text);
        if (summary && matches(summary) && found.length < limit) {
          found.push(summary);
        }
      }
    }
    if (expired.length > 0) {
      await FORGET_EXPIRED.run(
        this.#redis,
        [this.#keys.history],
        [this.#keys.run(''), this.#keys.jobHistory(''), ...expired],
      );
    }
    return found;
  }

  /** The names of the jobs that have runs kept, sorted. */
  async jobs(): Promise<string[]> {
    const members = await this.#redis.zrange(this.#keys.history, 0, -1);
    const names = new Set<string>();
    for (const raw of members) {
      const parsed = MemberSchema.safeParse(safeJson(raw));
      if (parsed.success) names.add(parsed.data[0]);
    }
    return [...names].sort();
  }

  /** How many runs are kept, for one job or all. */
  async count({ job }: { job?: string } = {}): Promise<number> {
    return this.#redis.zcard(job === undefined ? this.#keys.history : this.#keys.jobHistory(job));
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A summary this version cannot read is treated as absent rather than breaking every listing. */
function parseSummary(text: string | null): RunSummary | undefined {
  if (text === null) return undefined;
  const parsed = RunSummarySchema.safeParse(safeJson(text));
  return parsed.success ? parsed.data : undefined;
}
