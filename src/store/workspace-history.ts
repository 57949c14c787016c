import { z } from 'zod';
import { WORKSPACE_HISTORY_MAX_AGE_MS } from '../config/index.js';
import {
  type Ownership,
  OwnershipSchema,
  type PausedInterval,
  PausedIntervalSchema,
  type RunSummary,
} from '../engine/index.js';
import { parseJson } from './json.js';
import { PUSH_CAPPED_LISTS } from './lua.js';
import type { RedisConnection } from './redis.js';
import { RedisStore, type StoreOptions } from './redis-store.js';

/** What a recorded run did to one workspace: a line of its timeline (the console's `/fleet/<wg>/<ws>`). */
export const WorkspaceRunSchema = z.object({
  /** When the run finished (its targets' own times are not kept). */
  at: z.iso.datetime(),
  runId: z.string(),
  job: z.string(),
  action: z.string(),
  outcome: z.enum(['succeeded', 'failed']),
  reason: z.string().optional(),
  /** The error's message, for a failed target. */
  error: z.string().optional(),
  requestIds: z.array(z.string()),
});
export type WorkspaceRun = z.infer<typeof WorkspaceRunSchema>;

export interface WorkspaceHistoryOptions extends StoreOptions {
  /** How long a workspace's runs are kept after its newest one: the history's own retention. Default 30 days. */
  maxAgeMs?: number;
}

/** Most runs kept per workspace: six days of a daily pause and resume (docs/scaling.md: its size). */
export const RUNS_PER_WORKSPACE = 12;
/** Longest reason kept (a reason is a sentence; an error message can be a page). */
const TEXT_LIMIT = 300;
/** Targets written per script call when a run over the whole fleet is recorded (Redis blocks meanwhile). */
const BATCH = 1_000;

const clip = (text: string | undefined) =>
  text === undefined || text.length <= TEXT_LIMIT ? text : `${text.slice(0, TEXT_LIMIT - 1)}…`;

/**
 * What the timeline of one workspace is read from, each read bounded: the runs that acted on it
 * (an index per workspace, written as runs are recorded: the run summaries themselves are
 * megabytes for a fleet-wide run), its ledger record and pause-journal entry, and its closed
 * pauses among the newest of the fleet.
 */
export class WorkspaceHistory extends RedisStore {
  readonly #maxAgeMs: number;

  constructor(redis: RedisConnection, options: WorkspaceHistoryOptions = {}) {
    super(redis, options);
    this.#maxAgeMs = options.maxAgeMs ?? WORKSPACE_HISTORY_MAX_AGE_MS;
  }

  /**
   * Adds what `summary` did to each workspace it paused, resumed or failed on (a dry run, and a
   * target it skipped, did nothing to it) to that workspace's runs, keeping the newest
   * RUNS_PER_WORKSPACE.
   */
  async record(summary: RunSummary): Promise<void> {
    if (summary.dryRun) return;
    const at = summary.finishedAt ?? summary.startedAt ?? new Date(this.clock.now()).toISOString();
    const acted = summary.targets.filter(
      (target) =>
        target.workgroupId !== undefined &&
        target.workspaceId !== undefined &&
        (target.outcome === 'succeeded' || target.outcome === 'failed'),
    );
    for (let start = 0; start < acted.length; start += BATCH) {
      const batch = acted.slice(start, start + BATCH);
      const entries = batch.map((target) =>
        JSON.stringify({
          at,
          runId: summary.runId,
          job: summary.job,
          action: summary.action,
          outcome: target.outcome as WorkspaceRun['outcome'],
          ...(target.reason ? { reason: clip(target.reason) } : {}),
          ...(target.error ? { error: clip(target.error.message) } : {}),
          requestIds: target.requestIds.slice(-3),
        } satisfies WorkspaceRun),
      );
      await PUSH_CAPPED_LISTS.run(
        this.redis,
        batch.map((target) => this.keys.workspaceRuns(`${target.workgroupId}/${target.workspaceId}`)),
        [RUNS_PER_WORKSPACE, this.#maxAgeMs, ...entries],
      );
    }
  }

  /** The runs that acted on `key` (`workgroupId/workspaceId`), newest first, each run once. */
  async runs(key: string): Promise<WorkspaceRun[]> {
    const lines = await this.redis.lrange(this.keys.workspaceRuns(key), 0, RUNS_PER_WORKSPACE - 1);
    const seen = new Set<string>();
    const runs: WorkspaceRun[] = [];
    for (const line of lines) {
      const parsed = WorkspaceRunSchema.safeParse(parseJson(line));
      if (!parsed.success || seen.has(parsed.data.runId)) continue;
      seen.add(parsed.data.runId);
      runs.push(parsed.data);
    }
    return runs.sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0));
  }

  /** The ledger's record of `key` and the last pause nightshift sent for it (its journal entry). */
  async ownership(key: string): Promise<{ owned?: Ownership; journal?: Ownership }> {
    const [owned, journal] = await Promise.all([
      this.redis.hget(this.keys.owned, key),
      this.redis.hget(this.keys.pauseJournal, key),
    ]);
    const parse = (text: string | null) => {
      const parsed = OwnershipSchema.safeParse(text === null ? undefined : parseJson(text));
      return parsed.success && parsed.data.key === key ? parsed.data : undefined;
    };
    const records = { owned: parse(owned), journal: parse(journal) };
    return Object.fromEntries(Object.entries(records).filter(([, record]) => record)) as {
      owned?: Ownership;
      journal?: Ownership;
    };
  }

  /**
   * The closed pauses of `key` among the `scan` that ended last, fleet-wide (they are kept by end
   * time, not by workspace): newest first, and how many were looked at.
   */
  async closedPauses(key: string, scan: number): Promise<{ pauses: PausedInterval[]; scanned: number }> {
    const members = await this.redis.zrevrange(this.keys.pausedIntervals, 0, scan - 1);
    const needle = JSON.stringify(key);
    const pauses = members.flatMap((text) => {
      // most are another workspace's: only those naming this key are parsed
      if (!text.includes(needle)) return [];
      const parsed = PausedIntervalSchema.safeParse(parseJson(text));
      return parsed.success && parsed.data.key === key ? [parsed.data] : [];
    });
    return { pauses, scanned: members.length };
  }
}
