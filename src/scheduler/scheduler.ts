import { DEFAULT_SCHEDULE_LEAD_MS } from '../config/index.js';
import {
  type RunOutcome,
  type RunSummary,
  type RunTrigger,
  skippedRunSummary,
  TIMED_OUT,
  within,
} from '../engine/index.js';
import type { Logger } from '../log/index.js';
import { type Firing, nextRunOf, type Policy, type PolicyJob } from '../policy/index.js';
import { compactInstant, type RunJobData, scheduledRunId } from '../queue/index.js';
import {
  describeSuspension,
  type LastTicks,
  type PolicyStore,
  type RedisWindowStates,
  type RunHistory,
  type Suspensions,
  suspendsAt,
} from '../store/index.js';
import type { Clock, Timer } from '../time/index.js';
import { planCatchUp } from './catch-up.js';

/** SchedulerOptions' defaults for what no setting configures (each documented on its option). */
const MAX_SLEEP_MS = 60_000;
const HANDOFF_MS = 1_000;
const LATE_AFTER_MS = 5_000;

/**
 * What the scheduler reads and writes: Redis and the run queue in a process (wired by src/cli),
 * in memory in the unit tests.
 */
export interface SchedulerPorts {
  /** Each job's last tick handled: what a catch-up counts from. */
  lastTicks: Pick<LastTicks, 'get' | 'advance'>;
  /** Forgets the state of windows removed from the policy. */
  windowStates: Pick<RedisWindowStates, 'retain'>;
  /** Hands runs to the workers; a run id handed over before is not handed over again. */
  enqueue(runs: readonly RunJobData[]): Promise<void>;
  policies: Pick<PolicyStore, 'put' | 'setCurrent' | 'keep'>;
  history: Pick<RunHistory, 'record'>;
  suspensions: Pick<Suspensions, 'all'>;
}

export interface SchedulerOptions extends SchedulerPorts {
  log: Logger;
  /** Where ticks are read and waited for. */
  clock: Clock;
  /** Longest sleep between looks at the clock, so a suspended laptop or a clock jump is noticed. Default 60 s. */
  maxSleepMs?: number;
  /**
   * How long a tick may stay unrecorded before a catch-up counts it as missed: another scheduler
   * (or this one, after a reconnect) may be handling it right now. Default 1000 ms.
   */
  handoffMs?: number;
  /**
   * How long before its tick a run is handed to the queue. A worker takes it at once and starts
   * it on the instant, so enqueueing and picking up (about 1 ms per run on one worker when
   * thousands fire together) happen before the tick instead of delaying it. Default
   * `DEFAULT_SCHEDULE_LEAD_MS` (2 s).
   */
  leadMs?: number;
  /**
   * How late past its instant a tick may still be handed over as scheduled. A tick held up
   * longer (Redis unreachable when it came) is left to the catch-up rules instead, as if the
   * scheduler had been down: with `catchUp: none` it is recorded as missed, with a window only the
   * latest such tick runs, once, as a catch-up. Default 5000 ms.
   */
  lateAfterMs?: number;
  /** Hears of every tick the scheduler records itself (skipped or missed), e.g. for metrics. */
  onRecorded?: (summary: RunSummary) => void;
}

interface Scheduled {
  job: PolicyJob;
  /** The job's definition as text, to tell a changed job from an unchanged one on reload. */
  fingerprint: string;
  next: Firing | undefined;
}

interface Due {
  entry: Scheduled;
  firing: Firing;
  trigger: RunTrigger;
}

/**
 * The scheduler role: turns each tick of each job into exactly one run. Any number of
 * schedulers may run against one Redis: a tick's run id is the job name plus the tick's
 * instant, and BullMQ keeps that id claimed for a week, so the second enqueue of a tick is a
 * no-op; skipped and missed ticks are recorded under ids just as deterministic. The last tick
 * handled per job is kept in Redis, so a scheduler that was down (or lost Redis) catches up.
 */
export class Scheduler {
  readonly #options: SchedulerOptions;
  readonly #clock: Clock;
  #entries = new Map<string, Scheduled>();
  #policySha = '';
  /** When the policy's text in Redis last had its TTL renewed (loading it renews it too). */
  #keptAt = 0;
  #timer: Timer | undefined;
  #running = false;
  /**
   * The tail of the scheduler's work. Loads, ticks and catch-ups each read and advance the jobs'
   * next ticks across awaits, so they take turns: a catch-up after a reconnect never handles a
   * tick that a tick still in flight is handling, and a tick never mixes two policies.
   */
  #turns: Promise<unknown> = Promise.resolve();
  readonly #leadMs: number;

  constructor(options: SchedulerOptions) {
    this.#options = options;
    this.#clock = options.clock;
    this.#leadMs = options.leadMs ?? DEFAULT_SCHEDULE_LEAD_MS;
  }

  get policySha(): string {
    return this.#policySha;
  }

  /** Jobs currently scheduled, with their next tick. */
  upcoming(): { job: string; next: Date | undefined }[] {
    return [...this.#entries.values()].map((entry) => ({ job: entry.job.name, next: entry.next?.at }));
  }

  /**
   * Takes a (new) policy: stores its text for the workers, keeps the next tick of unchanged
   * jobs, schedules added and changed ones from now, and drops removed ones.
   */
  load(policy: Policy, text: string): Promise<void> {
    return this.#inTurn(() => this.#load(policy, text));
  }

  async #load(policy: Policy, text: string): Promise<void> {
    const sha = await this.#options.policies.put(text);
    this.#keptAt = this.#clock.now();
    await this.#options.policies.setCurrent(sha, { at: new Date(this.#clock.now()) });
    // a window removed from the policy leaves no state (nor drift gauge) behind
    await this.#options.windowStates.retain(
      policy.jobs.filter((job) => job.kind === 'window').map((job) => job.name),
    );
    const now = new Date(this.#clock.now());
    const entries = new Map<string, Scheduled>();
    for (const job of policy.jobs) {
      const fingerprint = JSON.stringify([
        job.schedule,
        job.skip,
        job.suspend,
        job.action,
        job.params,
        job.target,
        job.window && { ...job.window, skipDates: [...job.window.skipDates] },
      ]);
      const previous = this.#entries.get(job.name);
      const next = previous && previous.fingerprint === fingerprint ? previous.next : nextRunOf(job, now);
      entries.set(job.name, { job, fingerprint, next });
    }
    const added = [...entries.keys()].filter((name) => !this.#entries.has(name));
    const removed = [...this.#entries.keys()].filter((name) => !entries.has(name));
    // a window or job kept under its name whose schedule, uptime, target or parameters differ
    const changed = [...entries].flatMap(([name, entry]) => {
      const previous = this.#entries.get(name);
      return previous && previous.fingerprint !== entry.fingerprint ? [name] : [];
    });
    this.#entries = entries;
    this.#policySha = sha;
    this.#options.log.info({ policySha: sha, jobs: entries.size, added, removed, changed }, 'policy loaded');
    if (this.#running) this.#arm();
  }

  /** Catches up what was missed while no scheduler looked, then follows the clock. */
  async start(): Promise<void> {
    this.#running = true;
    // ticks passed while stopped belong to the catch-up, not to the timer firing them one by one
    const now = new Date(this.#clock.now());
    for (const entry of this.#entries.values()) {
      if (entry.next && entry.next.at.getTime() < now.getTime()) entry.next = nextRunOf(entry.job, now);
    }
    await this.catchUp();
    this.#arm();
  }

  /**
   * Stops scheduling. A batch of ticks being handed over finishes first, for at most `waitMs`:
   * with Redis gone it would wait for Redis forever. A batch given up on was not recorded as
   * handled, so the catch-up of the next scheduler to run accounts for its ticks. Resolves to
   * whether the scheduler's work finished.
   */
  async stop(waitMs = 5_000): Promise<boolean> {
    this.#running = false;
    this.#timer?.cancel();
    const finished = (await within(this.#turns, waitMs, this.#clock)) !== TIMED_OUT;
    if (!finished)
      this.#options.log.warn(
        { waitMs },
        'scheduler stopped with ticks still waiting for Redis; the next catch-up accounts for them',
      );
    return finished;
  }

  /** Runs `work` once every load, tick and catch-up queued before it has finished. */
  #inTurn<T>(work: () => Promise<T>): Promise<T> {
    const result = this.#turns.then(work);
    this.#turns = result.catch(() => undefined);
    return result;
  }

  /**
   * For each job, the ticks since the last one recorded and before the next one this scheduler's
   * timer will fire (those are the timer's, catch-up or not): the latest inside `catchUp` runs
   * once (marked catch-up), the others are recorded as missed. Called at start and whenever
   * Redis comes back after an outage. A tick due less than `handoffMs` ago and not yet recorded
   * is first given the rest of that time to be recorded by whoever is handling it.
   */
  catchUp(): Promise<void> {
    return this.#inTurn(() => this.#catchUp());
  }

  async #catchUp(): Promise<void> {
    const now = new Date(this.#clock.now());
    const jobs = [...this.#entries.values()];
    const names = jobs.map((entry) => entry.job.name);
    let lastTicks = await this.#options.lastTicks.get(names);
    // A tick that is only just due may be in the hands of a scheduler that is running: give it
    // the time to record the tick, then look again, so the tick is not also counted as missed.
    const handoffMs = this.#options.handoffMs ?? HANDOFF_MS;
    const horizons = jobs.map(
      (entry) => new Date(Math.min(now.getTime(), (entry.next?.at.getTime() ?? Infinity) - 1)),
    );
    let waitMs = 0;
    for (const [index, entry] of jobs.entries()) {
      const last = lastTicks[index];
      if (last === undefined) continue;
      const horizon = horizons[index] as Date;
      const recent = nextRunOf(entry.job, new Date(now.getTime() - handoffMs));
      if (recent && recent.at.getTime() <= horizon.getTime() && recent.at.getTime() > last) {
        waitMs = Math.max(waitMs, recent.at.getTime() + handoffMs - now.getTime());
      }
    }
    if (waitMs > 0) {
      await this.#clock.sleep(waitMs);
      lastTicks = await this.#options.lastTicks.get(names);
    }
    const due: Due[] = [];
    const missed: RunSummary[] = [];
    for (const [index, entry] of jobs.entries()) {
      const last = lastTicks[index];
      if (last === undefined) continue;
      const plan = planCatchUp(entry.job, new Date(last), horizons[index] as Date);
      if (plan.run) due.push({ entry, firing: plan.run, trigger: 'catch-up' });
      const first = plan.missed[0];
      const latest = plan.missed.at(-1);
      if (first && latest) {
        missed.push(
          this.#record(
            entry.job,
            latest.at,
            'missed',
            `missed ${plan.missed.length} tick(s) from ${first.at.toISOString()} to ${latest.at.toISOString()}`,
            `${entry.job.name}@missed-${compactInstant(latest.at)}`,
          ),
        );
      }
    }
    for (const summary of missed) await this.#recordSummary(summary);
    if (missed.length > 0)
      this.#options.log.warn({ jobs: missed.map((s) => s.job) }, 'ticks missed while no scheduler ran');
    await this.#handle(due, now);
    // jobs never seen before start counting from now
    const fresh = jobs.filter((_, index) => lastTicks[index] === undefined);
    if (fresh.length > 0) await this.#options.lastTicks.advance(fresh.map((entry) => [entry.job.name, now]));
  }

  #arm(): void {
    if (!this.#running) return;
    this.#timer?.cancel();
    const now = this.#clock.now();
    let earliest = Number.POSITIVE_INFINITY;
    for (const entry of this.#entries.values()) {
      if (entry.next) earliest = Math.min(earliest, entry.next.at.getTime());
    }
    const delay = Math.max(
      0,
      Math.min(earliest - this.#leadMs - now, this.#options.maxSleepMs ?? MAX_SLEEP_MS),
    );
    this.#timer = this.#clock.setTimer(delay, () => {
      void this.#inTurn(() => this.#tick()).finally(() => this.#arm());
    });
  }

  async #tick(): Promise<void> {
    const now = new Date(this.#clock.now());
    const due: Due[] = [];
    const handOffUntil = now.getTime() + this.#leadMs;
    for (const entry of this.#entries.values()) {
      while (entry.next && entry.next.at.getTime() <= handOffUntil) {
        due.push({ entry, firing: entry.next, trigger: 'schedule' });
        entry.next = nextRunOf(entry.job, entry.next.at);
      }
    }
    if (due.length === 0) return;
    try {
      await this.#handle(due, now);
    } catch (error) {
      // the ticks stay unrecorded in Redis, so the catch-up after reconnecting accounts for them
      this.#options.log.error(
        { err: error, jobs: due.length },
        'could not hand ticks to Redis; will catch up',
      );
    }
  }

  /**
   * Enqueues, or records as skipped, each due tick, and records the ticks as handled. Whether
   * the previous run is still going is for the worker to tell when the tick comes: this may be
   * up to `leadMs` before it.
   */
  async #handle(all: readonly Due[], now: Date): Promise<void> {
    if (all.length === 0) return;
    const suspended = await this.#options.suspensions.all();
    // Redis answered; a tick now long past its instant waited for it through an outage
    const lateBefore = this.#clock.now() - (this.#options.lateAfterMs ?? LATE_AFTER_MS);
    const due = all.filter((d) => d.trigger !== 'schedule' || d.firing.at.getTime() >= lateBefore);
    if (due.length < all.length) {
      const late = all.filter((d) => !due.includes(d));
      this.#options.log.warn(
        { ticks: late.length, jobs: [...new Set(late.map((d) => d.entry.job.name))] },
        'ticks held up past their instant (Redis unreachable?): handled by the catch-up rules',
      );
    }
    const runs: RunJobData[] = [];
    const skipped: RunSummary[] = [];
    for (const { entry, firing, trigger } of due) {
      const { job } = entry;
      const runId = scheduledRunId(job.name, firing.at);
      const suspension = suspended.get(job.name);
      const covering = suspendsAt(suspension, firing.at.getTime()) ? suspension : undefined;
      if (job.suspend || covering) {
        const why = covering ? describeSuspension(covering) : 'suspended in the policy';
        skipped.push(this.#record(job, firing.at, 'skipped', `skipped: ${why}`, runId, trigger));
      } else if (job.skipDates.has(firing.localDate)) {
        skipped.push(
          this.#record(
            job,
            firing.at,
            'skipped',
            `skipped: ${firing.localDate} is in calendar ${job.skip.join(', ')}`,
            runId,
            trigger,
          ),
        );
      } else {
        runs.push({
          runId,
          job: job.name,
          policySha: this.#policySha,
          trigger,
          scheduledAt: firing.at.toISOString(),
          dryRun: job.dryRun,
        });
      }
    }
    if (runs.length > 0) await this.#options.enqueue(runs);
    // the policy's text outlives the runs that name it, however long this scheduler runs it
    if (this.#clock.now() - this.#keptAt > KEEP_POLICY_EVERY_MS) {
      await this.#options.policies.keep(this.#policySha);
      this.#keptAt = this.#clock.now();
    }
    for (const summary of skipped) await this.#recordSummary(summary);
    await this.#options.lastTicks.advance(due.map((d) => [d.entry.job.name, d.firing.at]));
    if (due.length > 0)
      this.#options.log.info(
        {
          enqueued: runs.length,
          skipped: skipped.length,
          // negative: handed over ahead of the tick, as intended; positive: late
          lagMs: now.getTime() - Math.min(...due.map((d) => d.firing.at.getTime())),
        },
        'ticks handled',
      );
    // late ticks were not recorded as handled: the catch-up finds them (and hands over none late)
    if (due.length < all.length) await this.#catchUp();
  }

  async #recordSummary(summary: RunSummary): Promise<void> {
    await this.#options.history.record(summary);
    this.#options.onRecorded?.(summary);
  }

  #record(
    job: PolicyJob,
    at: Date,
    outcome: Extract<RunOutcome, 'skipped' | 'missed'>,
    reason: string,
    runId: string,
    trigger: RunTrigger = 'schedule',
  ): RunSummary {
    return skippedRunSummary(
      {
        runId,
        job: job.name,
        action: job.action,
        trigger,
        dryRun: job.dryRun,
        scheduledAt: at.toISOString(),
      },
      reason,
      { finishedAt: new Date(this.#clock.now()) },
      outcome,
    );
  }
}

/** How often a running scheduler renews its policy text's TTL in Redis (30 days). */
const KEEP_POLICY_EVERY_MS = 3_600_000;
