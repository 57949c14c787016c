import { z } from 'zod';
import { RUN_OUTCOMES, type RunOutcome, type RunSummary, RunSummarySchema } from '../engine/index.js';
import { parseJson } from './json.js';
import { EVICT_RUNS, FORGET_EXPIRED_RUNS, FORGET_STALE_LAST_RUNS, RECORD_RUN } from './lua.js';
import type { RedisConnection } from './redis.js';
import { positiveInteger, RedisStore, type StoreOptions } from './redis-store.js';
import { WorkspaceHistory } from './workspace-history.js';

export interface RetentionOptions {
  /** Most runs kept per job. Default 500. */
  maxRunsPerJob?: number;
  /** Most runs kept across all jobs. Default 10 000. */
  maxRunsTotal?: number;
  /** Runs older than this (by when they finished) are dropped. Default 30 days. */
  maxAgeMs?: number;
}

export interface RunHistoryOptions extends StoreOptions {
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

function checkRetention(options: RetentionOptions | undefined): Required<RetentionOptions> {
  const retention = { ...DEFAULT_RETENTION, ...options };
  for (const [name, value] of Object.entries(retention))
    positiveInteger(`RunHistory: retention.${name}`, value);
  return retention;
}

/** When a run happened, for ordering and age: the latest instant its summary knows. */
function runScore(summary: RunSummary, now: number): number {
  const at = Date.parse(summary.finishedAt ?? summary.startedAt ?? summary.scheduledAt ?? '');
  return Number.isNaN(at) ? now : at;
}

/** Run summaries in Redis, newest first, bounded in count per job, in total and in age. */
export class RunHistory extends RedisStore {
  readonly #retention: Required<RetentionOptions>;
  readonly #workspaces: WorkspaceHistory;

  constructor(redis: RedisConnection, options: RunHistoryOptions = {}) {
    super(redis, options);
    this.#retention = checkRetention(options.retention);
    this.#workspaces = new WorkspaceHistory(redis, {
      ...(options.prefix ? { prefix: options.prefix } : {}),
      clock: this.clock,
      maxAgeMs: this.#retention.maxAgeMs,
    });
  }

  /**
   * Stores a run's summary; recording the same `runId` again replaces it. What it did to each
   * workspace is indexed first (WorkspaceHistory): a reader that sees the run sees that too.
   */
  async record(summary: RunSummary): Promise<void> {
    await this.#workspaces.record(summary);
    const { maxAgeMs, maxRunsPerJob, maxRunsTotal } = this.#retention;
    const evicted = await RECORD_RUN.run(
      this.redis,
      [
        this.keys.history,
        this.keys.jobHistory(summary.job),
        this.keys.run(summary.runId),
        this.keys.lastRuns,
      ],
      [
        member(summary.job, summary.runId),
        runScore(summary, this.clock.now()),
        JSON.stringify(summary),
        maxAgeMs,
        this.clock.now() - maxAgeMs,
        maxRunsPerJob,
        maxRunsTotal,
        summary.dryRun ? '' : JSON.stringify([summary.job, summary.outcome]),
      ],
    );
    // should this process stop in between, what stays behind is bounded: each summary expires
    // with the retention, and a job's index drops an entry whose summary is gone when read
    await this.#dropRuns(EVICT_RUNS, evicted as string[]);
  }

  /**
   * Runs `script` on `members` (history index entries) with the keys each names declared: its
   * summary and its job's index. An entry this version cannot read is left alone.
   */
  async #dropRuns(script: typeof EVICT_RUNS, members: readonly string[]): Promise<void> {
    const entries = members.flatMap((raw) => {
      const parsed = MemberSchema.safeParse(parseJson(raw));
      return parsed.success ? [{ raw, job: parsed.data[0], runId: parsed.data[1] }] : [];
    });
    if (entries.length === 0) return;
    await script.run(
      this.redis,
      [
        this.keys.history,
        ...entries.flatMap(({ job, runId }) => [this.keys.run(runId), this.keys.jobHistory(job)]),
      ],
      entries.map(({ raw }) => raw),
    );
  }

  /**
   * When the newest run of each job with each outcome finished (dry runs aside), in one read of
   * a hash of at most jobs × outcomes fields, cheap enough for every scrape. Entries older than
   * the retention (a job gone from the policy) are dropped, as its runs are.
   */
  async lastRuns(): Promise<LastRun[]> {
    const entries = await this.redis.hgetall(this.keys.lastRuns);
    const cutoff = this.clock.now() - this.#retention.maxAgeMs;
    const runs: LastRun[] = [];
    const stale: string[] = [];
    for (const [field, value] of Object.entries(entries)) {
      const parsed = LastRunFieldSchema.safeParse(parseJson(field));
      const at = Number(value);
      // a field this version cannot read is left alone: a newer version may have written it
      if (!parsed.success || !Number.isFinite(at)) continue;
      if (at < cutoff) stale.push(field);
      else runs.push({ job: parsed.data[0], outcome: parsed.data[1], at });
    }
    if (stale.length > 0)
      await FORGET_STALE_LAST_RUNS.run(this.redis, [this.keys.lastRuns], [cutoff, ...stale]);
    return runs;
  }

  async get(runId: string): Promise<RunSummary | undefined> {
    return parseSummary(await this.redis.get(this.keys.run(runId)));
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
    const index = job === undefined ? this.keys.history : this.keys.jobHistory(job);
    const found: RunSummary[] = [];
    const expired: string[] = [];
    const batch = Math.max(limit, 50);
    for (let start = 0; found.length < limit; start += batch) {
      const members = await this.redis.zrevrange(index, start, start + batch - 1);
      if (members.length === 0) break;
      const entries = members.flatMap((raw) => {
        const parsed = MemberSchema.safeParse(parseJson(raw));
        return parsed.success ? [{ raw, runId: parsed.data[1] }] : [];
      });
      if (entries.length === 0) continue;
      const texts = await this.redis.mget(entries.map((entry) => this.keys.run(entry.runId)));
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
    await this.#dropRuns(FORGET_EXPIRED_RUNS, expired);
    return found;
  }

  /** The names of the jobs that have runs kept, sorted. */
  async jobs(): Promise<string[]> {
    const members = await this.redis.zrange(this.keys.history, 0, -1);
    const names = new Set<string>();
    for (const raw of members) {
      const parsed = MemberSchema.safeParse(parseJson(raw));
      if (parsed.success) names.add(parsed.data[0]);
    }
    return [...names].sort();
  }

  /** How many runs are kept, for one job or all. */
  async count({ job }: { job?: string } = {}): Promise<number> {
    return this.redis.zcard(job === undefined ? this.keys.history : this.keys.jobHistory(job));
  }
}

/** A summary this version cannot read is treated as absent rather than breaking every listing. */
function parseSummary(text: string | null): RunSummary | undefined {
  if (text === null) return undefined;
  const parsed = RunSummarySchema.safeParse(parseJson(text));
  return parsed.success ? parsed.data : undefined;
}
