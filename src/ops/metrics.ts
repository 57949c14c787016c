import type { JobType } from 'bullmq';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { ApiCallRecord } from '../api/index.js';
import { METRICS_QUEUE_TIMEOUT_MS } from '../config/index.js';
import { type RunSummary, type TargetOutcome, TIMED_OUT, within } from '../engine/index.js';
import { type Logger, silentLogger } from '../log/index.js';
import type { FleetSnapshot, FleetSnapshotSource } from './fleet-metrics.js';

/** What the queue-depth gauge reads at each scrape: a BullMQ `Queue` does. */
export interface QueueDepthSource {
  getJobCounts(...types: JobType[]): Promise<Record<string, number>>;
}

/** When the newest run of a job with an outcome finished (epoch ms). */
export interface LastRunRecord {
  job: string;
  outcome: string;
  at: number;
}

/** What the last-run gauges read at each scrape: a `RunHistory` does. */
export interface LastRunSource {
  lastRuns(): Promise<readonly LastRunRecord[]>;
}

export interface MetricsOptions {
  /** The queue whose job counts `nightshift_queue_jobs` reports, read at each scrape. Default: none (the gauge stays empty). */
  queue?: QueueDepthSource;
  /**
   * The run history the `nightshift_job_last_*_timestamp_seconds` gauges report, read at each
   * scrape, so they survive restarts. Default: none (the gauges stay empty).
   */
  history?: LastRunSource;
  /**
   * The ownership ledger, holds and windows' state the window, hold and savings metrics report,
   * read at each scrape: every process reports the same figures, and a restart loses none.
   * Default: none (those metrics are not registered).
   */
  fleet?: FleetSnapshotSource;
  /** How long a scrape waits for Redis (queue counts, run history, fleet state) before going on without them. Default 2000 ms. */
  queueTimeoutMs?: number;
  /** Where a failed read from Redis is reported. Default: nowhere. */
  log?: Logger;
  /** Node's process metrics (CPU, memory, event loop lag, GC, handles) beside ours. Default true. */
  processMetrics?: boolean;
}

/** The queue states `nightshift_queue_jobs` reports. Completed and failed count what BullMQ still keeps. */
export const QUEUE_STATES = [
  'waiting',
  'active',
  'delayed',
  'prioritized',
  'completed',
  'failed',
] as const satisfies readonly JobType[];

const TARGET_OUTCOME_KEYS = ['succeeded', 'skipped', 'failed', 'planned'] as const satisfies TargetOutcome[];

/** Seconds; from a few ms late (one process) to minutes late (a backlog, an outage). */
const LAG_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900];
/** Seconds; the client's default timeout is 30 s. */
const API_BUCKETS = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * The `status` label of an API call: the HTTP status code, or what happened instead when no
 * response came back (`timeout`, `network`, `aborted`, and `error` for a call refused before
 * it was sent). A bounded set either way.
 */
export function apiCallStatus(call: ApiCallRecord): string {
  if (call.status !== undefined) return String(call.status);
  switch (call.error?.type) {
    case 'Timeout':
      return 'timeout';
    case 'Network':
      return 'network';
    case 'Aborted':
      return 'aborted';
    default:
      return 'error';
  }
}

/**
 * The Prometheus metrics of one process, in a registry of its own (not prom-client's global
 * one), so a test can make as many as it likes. The engine reports into it (`runFinished`,
 * `apiCall`); the queue depth is read from Redis when scraped.
 *
 * Labels carry names the policy or the code defines (job, action, rule, operation) and small
 * fixed sets (outcome, status, severity, state): never a target id, a run id, a message or a
 * secret.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly #runs: Counter<'job' | 'action' | 'outcome'>;
  readonly #targets: Counter<'action' | 'outcome'>;
  readonly #findings: Counter<'job' | 'rule' | 'severity'>;
  readonly #scheduleLag: Histogram;
  readonly #apiCalls: Counter<'operation' | 'status'>;
  readonly #apiDuration: Histogram<'operation'>;
  readonly #policyInfo: Gauge<'sha'>;
  readonly #policyRejected: Gauge;
  readonly #reloadFailures: Counter;
  readonly #policyRefusals: Counter<'verdict'>;
  readonly #options: MetricsOptions;
  /** What is read from Redis while reads fail, so an outage is logged once, not at every scrape. */
  readonly #failing = new Set<string>();
  /** This scrape's read of the run history, shared by the gauges that report it. */
  #lastRuns: Promise<readonly LastRunRecord[] | undefined> | undefined;
  /** This scrape's read of the fleet state, shared by the metrics that report it. */
  #fleet: Promise<FleetSnapshot | undefined> | undefined;
  /** The last fleet state read: a scrape that cannot read Redis reports it, so a counter never drops. */
  #lastFleet: FleetSnapshot | undefined;

  constructor(options: MetricsOptions = {}) {
    this.#options = options;
    const registers = [this.registry];
    if (options.processMetrics !== false) collectDefaultMetrics({ register: this.registry });
    this.#runs = new Counter({
      name: 'nightshift_runs_total',
      help: 'Runs finished by this process, by job, action and outcome (succeeded, partial, failed, halted, cancelled, skipped, missed).',
      labelNames: ['job', 'action', 'outcome'],
      registers,
    });
    this.#targets = new Counter({
      name: 'nightshift_targets_total',
      help: 'Targets acted on by finished runs, by action and target outcome (succeeded, skipped, failed, planned).',
      labelNames: ['action', 'outcome'],
      registers,
    });
    this.#findings = new Counter({
      name: 'nightshift_findings_total',
      help: 'Findings reported by finished runs, by job, rule and severity.',
      labelNames: ['job', 'rule', 'severity'],
      registers,
    });
    this.#scheduleLag = new Histogram({
      name: 'nightshift_schedule_lag_seconds',
      help: "Time from a scheduled run's tick to the moment a worker started it.",
      buckets: LAG_BUCKETS,
      registers,
    });
    this.#apiCalls = new Counter({
      name: 'nightshift_api_calls_total',
      help: 'Calls to the management API, by operation and status (HTTP code, or timeout, network, aborted, error).',
      labelNames: ['operation', 'status'],
      registers,
    });
    this.#apiDuration = new Histogram({
      name: 'nightshift_api_call_duration_seconds',
      help: 'Duration of calls to the management API, by operation, whatever their outcome.',
      labelNames: ['operation'],
      buckets: API_BUCKETS,
      registers,
    });
    const queueJobs: Gauge<'state'> = new Gauge({
      name: 'nightshift_queue_jobs',
      help: 'Runs in the BullMQ queue by state, read from Redis at scrape time (completed and failed: those BullMQ still keeps).',
      labelNames: ['state'],
      registers,
      collect: () => this.#collectQueueDepth(queueJobs),
    });
    if (options.fleet) this.#registerFleetMetrics(registers);
    const lastRun: Gauge<'job' | 'outcome'> = new Gauge({
      name: 'nightshift_job_last_run_timestamp_seconds',
      help: 'When the newest run of each job with each outcome finished (Unix time; dry runs aside), read from the run history in Redis at scrape time.',
      labelNames: ['job', 'outcome'],
      registers,
      collect: async () => {
        const runs = await this.#readLastRuns();
        lastRun.reset();
        for (const run of runs ?? []) lastRun.set({ job: run.job, outcome: run.outcome }, run.at / 1000);
      },
    });
    const lastSuccess: Gauge<'job'> = new Gauge({
      name: 'nightshift_job_last_success_timestamp_seconds',
      help: 'When the newest successful run of each job finished (Unix time; dry runs aside), read from the run history in Redis at scrape time.',
      labelNames: ['job'],
      registers,
      collect: async () => {
        const runs = await this.#readLastRuns();
        lastSuccess.reset();
        for (const run of runs ?? [])
          if (run.outcome === 'succeeded') lastSuccess.set({ job: run.job }, run.at / 1000);
      },
    });
    this.#policyInfo = new Gauge({
      name: 'nightshift_policy_info',
      help: "The policy this process's scheduler runs, by the sha256 of its text (as in the log and the runs' policySha); always 1.",
      labelNames: ['sha'],
      registers,
    });
    this.#policyRejected = new Gauge({
      name: 'nightshift_policy_rejected',
      help: "1 while the policy file's latest edit is rejected and the scheduler runs an older policy, else 0.",
      registers,
    });
    this.#reloadFailures = new Counter({
      name: 'nightshift_policy_reload_failures_total',
      help: 'Reloads of the policy file the scheduler refused (invalid, or needing what this process lacks), keeping the policy in force.',
      registers,
    });
    this.#policyRefusals = new Counter({
      name: 'nightshift_policy_refusals_total',
      help: "Runs this process's worker refused because their policy text is not signed with a key it holds (NIGHTSHIFT_POLICY_KEY), by verdict: unsigned, unknown-key, bad-signature.",
      labelNames: ['verdict'],
      registers,
    });
  }

  /** A worker refused a run: its policy text is not signed with a key the worker holds. */
  policyRefused(verdict: string): void {
    this.#policyRefusals.inc({ verdict });
  }

  /** The scheduler took a policy: it is the one in force, and no edit stands rejected. */
  policyLoaded(sha: string): void {
    this.#policyInfo.reset();
    this.#policyInfo.set({ sha }, 1);
    this.#policyRejected.set(0);
  }

  /** The scheduler refused a reload and keeps the policy in force. */
  policyRejected(): void {
    this.#reloadFailures.inc();
    this.#policyRejected.set(1);
  }

  /** A run's summary was recorded: count the run, its targets and findings, and its schedule lag. */
  runFinished(summary: RunSummary): void {
    this.#runs.inc({ job: summary.job, action: summary.action, outcome: summary.outcome });
    for (const outcome of TARGET_OUTCOME_KEYS)
      this.#targets.inc({ action: summary.action, outcome }, summary.counts[outcome]);
    for (const finding of summary.findings)
      this.#findings.inc({ job: summary.job, rule: finding.rule, severity: finding.severity });
    if (
      summary.trigger === 'schedule' &&
      summary.outcome !== 'skipped' &&
      summary.outcome !== 'missed' &&
      summary.scheduledAt &&
      summary.startedAt
    ) {
      const lagMs = Date.parse(summary.startedAt) - Date.parse(summary.scheduledAt);
      // a worker whose clock runs a little behind the scheduler's is on time, not early
      if (Number.isFinite(lagMs)) this.#scheduleLag.observe(Math.max(0, lagMs) / 1000);
    }
  }

  /** One API call, as the client's `onCall` reports it. */
  apiCall(call: ApiCallRecord): void {
    this.#apiCalls.inc({ operation: call.operation, status: apiCallStatus(call) });
    this.#apiDuration.observe({ operation: call.operation }, call.durationMs / 1000);
  }

  /** The exposition text for a scrape, and its content type. */
  async scrape(): Promise<{ contentType: string; body: string }> {
    // each scrape reads the run history afresh, once for both gauges that report it
    this.#lastRuns = undefined;
    this.#fleet = undefined;
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  /** Reads the job counts into the gauge; left without values when Redis does not answer. */
  async #collectQueueDepth(gauge: Gauge<'state'>): Promise<void> {
    const queue = this.#options.queue;
    const counts = queue
      ? await this.#fromRedis('queue depth', 'nightshift_queue_jobs', () =>
          queue.getJobCounts(...QUEUE_STATES),
        )
      : undefined;
    gauge.reset();
    if (counts) for (const state of QUEUE_STATES) gauge.set({ state }, counts[state] ?? 0);
  }

  #readFleet(): Promise<FleetSnapshot | undefined> {
    const fleet = this.#options.fleet;
    this.#fleet ??= fleet
      ? this.#fromRedis('fleet state', 'nightshift_paused_hours_total', () =>
          fleet.snapshot(new Date()),
        ).then((read) => {
          this.#lastFleet = read ?? this.#lastFleet;
          return this.#lastFleet;
        })
      : Promise.resolve(undefined);
    return this.#fleet;
  }

  /** The window, hold and savings metrics (see `fleet`); aggregate them across processes with `max`. */
  #registerFleetMetrics(registers: Registry[]): void {
    const drift: Gauge<'window'> = new Gauge({
      name: 'nightshift_window_drift_workspaces',
      help: "Workspaces differing from their window's desired state at its last reconciliation (held ones not counted), by window.",
      labelNames: ['window'],
      registers,
      collect: async () => {
        drift.reset();
        for (const [window, count] of (await this.#readFleet())?.drift ?? []) drift.set({ window }, count);
      },
    });
    const stranded: Gauge<'window'> = new Gauge({
      name: 'nightshift_window_stranded_workspaces',
      help: 'Workspaces of a window that nightshift paused and nobody owns any more, so nothing would hand them back (nightshift adopt does), at its last reconciliation, by window.',
      labelNames: ['window'],
      registers,
      collect: async () => {
        stranded.reset();
        for (const [window, count] of (await this.#readFleet())?.stranded ?? [])
          stranded.set({ window }, count);
      },
    });
    const holds: Gauge<'state'> = new Gauge({
      name: 'nightshift_holds',
      help: 'Holds in force (nightshift hold), by held state.',
      labelNames: ['state'],
      registers,
      collect: async () => {
        holds.reset();
        const read = await this.#readFleet();
        if (read) for (const state of ['active', 'stopped'] as const) holds.set({ state }, read.holds[state]);
      },
    });
    const hours: Counter = new Counter({
      name: 'nightshift_paused_hours_total',
      help: 'Hours workspaces spent paused by nightshift (owned pauses only), all time: what nightshift savings counts.',
      registers,
      collect: async () => {
        const read = await this.#readFleet();
        hours.reset();
        if (read) hours.inc(read.hours);
      },
    });
    const cost: Counter<'currency'> = new Counter({
      name: 'nightshift_estimated_cost_avoided_total',
      help: 'Estimated cost of those hours, from the price table of the policy in force when each pause was made, by currency.',
      labelNames: ['currency'],
      registers,
      collect: async () => {
        const read = await this.#readFleet();
        cost.reset();
        for (const [currency, value] of Object.entries(read?.cost ?? {})) cost.inc({ currency }, value);
      },
    });
  }

  #readLastRuns(): Promise<readonly LastRunRecord[] | undefined> {
    const history = this.#options.history;
    this.#lastRuns ??= history
      ? this.#fromRedis('run history', 'nightshift_job_last_run_timestamp_seconds', () => history.lastRuns())
      : Promise.resolve(undefined);
    return this.#lastRuns;
  }

  /**
   * What `read` returns from Redis, or undefined when Redis does not answer in time. Runs inside
   * a scrape, so it never throws: the gauges it feeds are left without values (absent beats
   * stale), and the failure is logged once per outage.
   */
  async #fromRedis<T>(what: string, metric: string, read: () => Promise<T>): Promise<T | undefined> {
    const timeoutMs = this.#options.queueTimeoutMs ?? METRICS_QUEUE_TIMEOUT_MS;
    try {
      const value = await within(read(), timeoutMs);
      if (value === TIMED_OUT) throw new Error(`no answer from Redis within ${timeoutMs} ms`);
      if (this.#failing.delete(what)) this.#options.log?.info(`${what} readable again`);
      return value;
    } catch (error) {
      const log = this.#options.log ?? silentLogger;
      const fields = { err: { message: (error as Error).message }, metric };
      if (this.#failing.has(what)) log.debug(fields, `${what} not read: scrape goes on without it`);
      else log.warn(fields, `${what} not read: scrape goes on without it`);
      this.#failing.add(what);
      return undefined;
    }
  }
}
