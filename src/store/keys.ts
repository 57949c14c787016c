import { DEFAULT_REDIS_PREFIX } from '../config/index.js';

/**
 * Every Redis key nightshift owns outside BullMQ's own, in one place so no two modules spell a
 * key differently.
 *
 * All keys share one hash tag, `{<prefix>}`. Redis Cluster runs a Lua script, MULTI or a
 * many-key command only when every key it names hashes to one slot, and several of ours must:
 * recording a run trims the global history, another job's history and the summaries it evicts.
 * One slot for the lot costs nothing at our volume (a few thousand small keys) and lets any
 * script combine any of these keys (each declares every key it touches in KEYS); BullMQ makes the
 * same trade for each queue (its prefix is `{<prefix>}` on a Cluster). On a single Redis the
 * braces are just characters.
 *
 * Job and sink names cannot contain `:` (see the policy's name rule), and each kind of key has its
 * own namespace, so no run id or name can make one key look like another.
 */
export function redisKeys(prefix = DEFAULT_REDIS_PREFIX) {
  const base = `{${prefix}}`;
  return {
    /** Sorted set of every recorded run, scored by when it finished. */
    history: `${base}:history`,
    /** Sorted set of one job's recorded runs. */
    jobHistory: (job: string) => `${base}:history:job:${job}`,
    /**
     * Hash of when the newest run of each job with each outcome finished: `["<job>","<outcome>"]`
     * (JSON) → epoch ms. What the last-run metrics read at each scrape.
     */
    lastRuns: `${base}:last-runs`,
    /** A run's summary (JSON string). */
    run: (runId: string) => `${base}:run:${runId}`,
    /** Hash of a run's finished targets (its checkpoint). */
    runTargets: (runId: string) => `${base}:targets:${runId}`,
    /** Hash of a run's targets under way: target key → the action's progress record (JSON). */
    runProgress: (runId: string) => `${base}:progress:${runId}`,
    /** Hash of suspended jobs: job → suspension (JSON). */
    suspended: `${base}:suspended`,
    /** A policy file's text, by its sha256. */
    policy: (sha: string) => `${base}:policy:${sha}`,
    /** Hash of a policy text's signatures: key id → HMAC-SHA256 of the text (hex). */
    policySignatures: (sha: string) => `${base}:policy-sig:${sha}`,
    /** Which policy the schedulers run: the sha a scheduler last loaded, when and where (JSON). */
    currentPolicy: `${base}:policy-current`,
    /** The last tick the scheduler enqueued for a job. */
    lastTick: (job: string) => `${base}:tick:${job}`,
    /**
     * The lease of one execution of a run or of a run's part (by its queue id): only the execution
     * it names may make API calls for that run or part (run-lease.ts).
     */
    runLease: (unit: string) => `${base}:lease:${unit}`,
    /** An operator's request to cancel a run (JSON: who, why, when), read with each lease renewal. */
    runCancel: (runId: string) => `${base}:cancel:${runId}`,
    /** Runs of a job currently executing. */
    inflight: (job: string) => `${base}:inflight:${job}`,
    /** The lock that keeps a job's runs from overlapping. */
    runLock: (job: string) => `${base}:lock:${job}`,
    /** A shared token bucket. */
    rateLimit: (name: string) => `${base}:rate:${name}`,
    /**
     * Claimed by the first scheduler to tell the sinks about a policy edit rejected (or fixed),
     * so replicas watching the same file send one notice, not one each.
     */
    policyNotice: (event: string, sha: string) => `${base}:policy-notice:${event}:${sha}`,
    /**
     * Hash of the jobs that are overdue: job → the episode told (JSON). Opened by the one scheduler
     * whose HSETNX wins, closed by the one whose compare-and-delete does: one notice each.
     */
    overdue: `${base}:overdue`,
    /** What one notification sink was last told about one job (JSON string). */
    notifyState: (job: string, sink: string) => `${base}:notify:${job}:${sink}`,
    /** Hash of the ownership ledger: workspace key → the pause nightshift owns (JSON). */
    owned: `${base}:owned`,
    /**
     * The ledger's sequence: moved on, atomically, by every intent and confirmation, and read before
     * a run asks for a listing, so a listing is ordered against pauses without comparing clocks.
     */
    ledgerSequence: `${base}:owned:seq`,
    /**
     * Hash of the pause journal: workspace key → the last pause record nightshift wrote for it
     * (JSON), kept until nightshift resumes it or sees it running, whatever becomes of the ledger's
     * record: what tells a stranded workspace.
     */
    pauseJournal: `${base}:owned:journal`,
    /** Sorted set of closed paused intervals (JSON), scored by when they ended: what savings count. */
    pausedIntervals: `${base}:paused`,
    /** Hash of running totals of closed paused intervals: hours, and cost per currency. */
    savingsTotals: `${base}:savings`,
    /** Hash of holds: pattern → hold (JSON). */
    holds: `${base}:holds`,
    /** List of hold events (JSON), newest first: who held or released what, when and why. */
    holdLog: `${base}:holds:log`,
    /**
     * Stream of the audit trail: every change a person made (CLI or console), oldest first; its
     * entry ids are Redis's own clock, so entries from every host are ordered by one clock.
     */
    audit: `${base}:audit`,
    /** Hash of runs waiting for (or approved for) a person's approval: run id → record (JSON). */
    approvals: `${base}:approvals`,
    /** Hash of windows' reconciliation state: window → state (JSON). */
    windowState: `${base}:windows`,
    /** Hash of a run's first start and the worker running it now, to tell a takeover. */
    runStart: (runId: string) => `${base}:start:${runId}`,
    /**
     * List of what the newest runs did to one workspace (`workgroupId/workspaceId`), newest first
     * (JSON, trimmed): the console's timeline of it (workspace-history.ts).
     */
    workspaceRuns: (key: string) => `${base}:ws-runs:${key}`,
    /** Hash of the newest fleet listing a run saw: `at` (ISO), `body` (the listing, JSON). */
    fleetListing: `${base}:fleet-listing`,
    /** Hash of the slices of the fleet listing a split run stored for its parts: part index → listing (JSON), with a TTL. */
    runListing: (runId: string) => `${base}:run-slices:${runId}`,
    /** Hash of each job's open findings: job → its latest succeeded run's findings, with when each first appeared (JSON). */
    findings: `${base}:findings`,
    /** The policy edit a scheduler refused since the one in force was loaded (JSON). */
    rejectedPolicy: `${base}:policy-rejected`,
  };
}

export type RedisKeys = ReturnType<typeof redisKeys>;
