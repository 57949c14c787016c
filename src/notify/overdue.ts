import { z } from 'zod';
import { type Logger, silentLogger } from '../log/index.js';
import { nextFirings, type Policy, type PolicyJob } from '../policy/index.js';
import { type LastRun, parseJson } from '../store/index.js';
import { type Clock, systemClock, type Timer } from '../time/index.js';
import type { Notifier } from './notifier.js';

/** How often a scheduler looks for overdue jobs: a dead-man's switch needs minutes, not seconds. */
export const OVERDUE_CHECK_MS = 60_000;

/**
 * One overdue episode of a job, as told and kept in Redis until it ends. Its identity is the
 * success it counts from: a later success ends it, and a later lapse is a new episode.
 */
export const OverdueEpisodeSchema = z.object({
  /** When the job last succeeded (ISO, UTC); null with none on record. */
  lastSuccessAt: z.string().nullable(),
  /**
   * - `late`: no success within `expectSuccessWithin`, or by the second firing after the last
   *   success (plus the job's timeout).
   * - `missed`: a firing was recorded missed (no scheduler ran at its tick) after the last success,
   *   and no success came within the job's timeout after (a catch-up run's chance).
   */
  reason: z.enum(['late', 'missed']),
  /** When a success was due (ISO, UTC); for `missed`, the miss's record plus the job's timeout. */
  dueBy: z.string(),
});
export type OverdueEpisode = z.infer<typeof OverdueEpisodeSchema>;

/** What the sinks are told: an episode begun (`overdue`), or ended by a success (`cleared`). */
export interface OverdueNotice {
  readonly event: 'overdue' | 'cleared';
  readonly job: string;
  readonly episode: OverdueEpisode;
  /** The job's `expectSuccessWithin` (ms); null when its firings set the deadline. */
  readonly expectSuccessWithin: number | null;
  /** For `cleared`: when the job succeeded again (ISO, UTC). */
  readonly succeededAt: string | null;
  /** When the scheduler saw it (ISO, UTC). */
  readonly at: string;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** When a success is due after `since`: `expectSuccessWithin`, else two firings and the timeout. */
export function dueAfter(job: PolicyJob, since: number): number | undefined {
  if (job.expectSuccessWithin !== undefined) return since + job.expectSuccessWithin;
  const [, second] = nextFirings(job.schedule, { from: new Date(since), count: 2, skipDates: job.skipDates });
  return second === undefined ? undefined : second.at.getTime() + job.timeout;
}

/**
 * Whether `job` is overdue at `now`, by the newest run of each outcome the history keeps. A job
 * is measured from its last success, or (never succeeded) from its oldest run on record; one with
 * no run on record, a suspended or dry-run one and a window are never overdue. Pure.
 */
export function overdueOf(
  job: PolicyJob,
  runs: readonly LastRun[],
  now: number,
  due: typeof dueAfter = dueAfter,
): OverdueEpisode | undefined {
  // a dry-run job's runs are not kept as its last runs: it has no success to count from
  if (job.kind !== 'job' || job.suspend || job.dryRun) return undefined;
  const own = runs.filter((run) => run.job === job.name);
  const success = own.find((run) => run.outcome === 'succeeded')?.at;
  const lastSuccessAt = success === undefined ? null : iso(success);
  const missed = own.find((run) => run.outcome === 'missed')?.at;
  // the catch-up run of a missed firing gets its timeout to succeed before the miss is news
  if (missed !== undefined && (success === undefined || missed > success) && now > missed + job.timeout)
    return { lastSuccessAt, reason: 'missed', dueBy: iso(missed + job.timeout) };
  const since = success ?? (own.length > 0 ? Math.min(...own.map((run) => run.at)) : undefined);
  const by = since === undefined ? undefined : due(job, since);
  if (by === undefined || now <= by) return undefined;
  return { lastSuccessAt, reason: 'late', dueBy: iso(by) };
}

/** Where episodes are kept, shared by every scheduler (OverdueEpisodes in Redis). */
export interface OverdueEpisodeStore {
  all(): Promise<Map<string, string>>;
  open(job: string, episode: string): Promise<boolean>;
  close(job: string, episode: string): Promise<boolean>;
}

export interface OverdueWatchOptions {
  /** The policy in force; undefined before the first load. */
  policy: () => Policy | undefined;
  /** The newest run of each job per outcome (RunHistory.lastRuns). */
  lastRuns: () => Promise<LastRun[]>;
  /** Jobs suspended at run time (`nightshift suspend`): not overdue while suspended. */
  suspended: () => Promise<ReadonlySet<string>>;
  episodes: OverdueEpisodeStore;
  notifier: Pick<Notifier, 'notifyOverdue'>;
  clock?: Clock;
  log?: Logger;
  /** Between two checks. Default OVERDUE_CHECK_MS. */
  everyMs?: number;
}

/**
 * The dead-man's switch, run by every scheduler: a job that stopped succeeding on time is told
 * to its sinks that listen to `overdue` once per episode, and its end (a success) once too, by
 * whichever scheduler wins the episode's claim in Redis.
 */
export class OverdueWatch {
  readonly #options: OverdueWatchOptions;
  readonly #clock: Clock;
  readonly #log: Logger;
  #timer: Timer | undefined;
  #checking: Promise<unknown> = Promise.resolve();
  #stopped = false;
  /**
   * Each job's deadline, by the success (or first run) it counts from: it moves only when that
   * does, and working out two firings of 10,000 jobs at every check took half a second of the
   * scheduler's turn. Keyed by the loaded job, so a reloaded policy starts afresh.
   */
  readonly #deadlines = new WeakMap<PolicyJob, { since: number; due: number | undefined }>();

  constructor(options: OverdueWatchOptions) {
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.#log = options.log ?? silentLogger;
  }

  /** Checks now, then every `everyMs`, until `stop`. */
  start(): void {
    const loop = () => {
      if (this.#stopped) return;
      this.#checking = this.check()
        .catch((error: unknown) => this.#log.warn({ err: error }, 'overdue check failed; trying again later'))
        .finally(() => {
          if (!this.#stopped)
            this.#timer = this.#clock.setTimer(this.#options.everyMs ?? OVERDUE_CHECK_MS, loop, {
              keepAlive: false,
            });
        });
    };
    loop();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#timer?.cancel();
    await this.#checking;
  }

  /** One look at every job; resolves with the notices this scheduler sent. */
  async check(): Promise<OverdueNotice[]> {
    const policy = this.#options.policy();
    if (!policy) return [];
    const [runs, suspended, open] = await Promise.all([
      this.#options.lastRuns(),
      this.#options.suspended(),
      this.#options.episodes.all(),
    ]);
    const now = this.#clock.now();
    const notices: OverdueNotice[] = [];
    const jobs = new Map(policy.jobs.map((job) => [job.name, job]));
    // each job's own runs, found once: 10,000 jobs must not each scan every job's runs
    const runsOf = new Map<string, LastRun[]>();
    for (const run of runs) {
      const own = runsOf.get(run.job);
      if (own) own.push(run);
      else runsOf.set(run.job, [run]);
    }
    // episodes this pass leaves open (or another scheduler closed meanwhile: the next pass sees)
    const stillOpen = new Set(open.keys());
    for (const [name, stored] of open) {
      const job = jobs.get(name);
      const episode = OverdueEpisodeSchema.safeParse(parseJson(stored)).data;
      const own = runsOf.get(name) ?? [];
      const success = own.find((run) => run.outcome === 'succeeded')?.at;
      const succeededAt = success === undefined ? null : iso(success);
      const over = job && !suspended.has(name) ? overdueOf(job, own, now, this.#due) : undefined;
      if (episode && over?.lastSuccessAt === episode.lastSuccessAt) continue;
      if (!(await this.#options.episodes.close(name, stored))) continue;
      stillOpen.delete(name);
      // ended by a success: told; ended by a suspension or an edit of the policy: logged only
      if (job && episode && succeededAt !== episode.lastSuccessAt && succeededAt !== null)
        notices.push(this.#notice('cleared', job, episode, succeededAt, now));
      else
        this.#log.info(
          { job: name },
          'overdue episode ended without a success (suspended, or no longer watched)',
        );
    }
    for (const job of policy.jobs) {
      if (suspended.has(job.name)) continue;
      const episode = overdueOf(job, runsOf.get(job.name) ?? [], now, this.#due);
      if (!episode || stillOpen.has(job.name)) continue;
      if (await this.#options.episodes.open(job.name, JSON.stringify(episode)))
        notices.push(this.#notice('overdue', job, episode, null, now));
    }
    for (const notice of notices) {
      const job = jobs.get(notice.job);
      if (job) await this.#options.notifier.notifyOverdue(policy.notifications, job, notice);
    }
    return notices;
  }

  readonly #due = (job: PolicyJob, since: number): number | undefined => {
    const known = this.#deadlines.get(job);
    if (known?.since === since) return known.due;
    const due = dueAfter(job, since);
    this.#deadlines.set(job, { since, due });
    return due;
  };

  #notice(
    event: OverdueNotice['event'],
    job: PolicyJob,
    episode: OverdueEpisode,
    succeededAt: string | null,
    now: number,
  ): OverdueNotice {
    this.#log.warn(
      { job: job.name, ...episode, succeededAt },
      event === 'overdue' ? 'job overdue' : 'job no longer overdue',
    );
    return {
      event,
      job: job.name,
      episode,
      expectSuccessWithin: job.expectSuccessWithin ?? null,
      succeededAt,
      at: iso(now),
    };
  }
}
