import { hostname } from 'node:os';
import { actionRegistry } from '../../jobs/index.js';
import { TIMED_OUT, within } from '../engine/index.js';
import type { Logger } from '../log/index.js';
import type { Notifier, PolicyNotice } from '../notify/index.js';
import type { Metrics, Readiness } from '../ops/index.js';
import {
  formatProblem,
  type Policy,
  type PolicyEnv,
  PolicyError,
  type PolicyProblem,
  parsePolicy,
} from '../policy/index.js';
import type { Scheduler } from '../scheduler/index.js';
import { type PolicyStore, policySha } from '../store/index.js';

/** An edit of the policy file the scheduler refused, and why. */
export interface RejectedEdit {
  /** The sha256 of the refused text. */
  readonly sha: string;
  /** When it was refused (ISO, UTC). */
  readonly at: string;
  /** What is wrong with the text; empty when the fault was not the text's (`error`). */
  readonly problems: readonly PolicyProblem[];
  /** Why a valid text could not be loaded (Redis refused to store it, say). */
  readonly error?: string;
}

/** The policy a scheduler process runs, and the edit of its file it refused, for `/readyz`. */
export class PolicyStatus {
  readonly #file: string;
  #sha: string | undefined;
  #rejected: RejectedEdit | undefined;

  constructor(file: string) {
    this.#file = file;
  }

  /** The sha256 of the policy in force; undefined until the first one is loaded. */
  get sha(): string | undefined {
    return this.#sha;
  }

  /** The edit refused since the policy in force was loaded, if any. */
  get rejected(): RejectedEdit | undefined {
    return this.#rejected;
  }

  loaded(sha: string): void {
    this.#sha = sha;
    this.#rejected = undefined;
  }

  reject(edit: RejectedEdit): void {
    this.#rejected = edit;
  }

  /** Not ready before the first load; degraded (still ready: the last good policy runs) while an edit stands rejected. */
  readiness(): Readiness {
    if (!this.#sha) return { ok: false, reason: `${this.#file} not loaded yet` };
    const rejected = this.#rejected;
    if (!rejected) return { ok: true };
    const count = rejected.problems.length === 1 ? '1 problem' : `${rejected.problems.length} problems`;
    const why = rejected.error
      ? `could not be loaded at ${rejected.at} (${rejected.error})`
      : `was rejected at ${rejected.at} (${count})`;
    return {
      ok: true,
      degraded: true,
      reason: `the last edit of ${this.#file} ${why}; still running policy ${this.#sha.slice(0, 12)}`,
      problems: rejected.problems.map(formatProblem),
    };
  }
}

/**
 * Problems with jobs this process could not run although the policy is valid: a job whose action
 * lists organization users needs `NIGHTSHIFT_BEARER_TOKEN`, which a process without it lacks.
 * Placed at the job's `action`, so an edit adding such a job is refused like an invalid one.
 */
export function bearerTokenProblems(policy: Policy): PolicyProblem[] {
  return policy.jobs
    .filter((job) => actionRegistry.get(job.action)?.needsBearerToken)
    .map((job) => ({
      ...policy.locate(['jobs', job.name, 'action']),
      message: `jobs.${job.name}.action: "${job.action}" lists organization users, which takes NIGHTSHIFT_BEARER_TOKEN; this process does not have it`,
    }));
}

export interface PolicyReloaderOptions {
  file: string;
  scheduler: Scheduler;
  status: PolicyStatus;
  /**
   * The policies in Redis, signed and checked with this process's keys: the policy in force a
   * first load falls back on, where a refused edit is recorded and where replicas claim a notice,
   * so only one of them sends it.
   */
  policies: PolicyStore;
  /** Tells the policy's sinks about a rejected edit, and about its fix. */
  notifier: Notifier;
  metrics?: Metrics | undefined;
  log: Logger;
  /** Where `${VAR}` values come from: the process's environment. */
  env: PolicyEnv;
  /** nightshift's own variables the policy may read after all (`NIGHTSHIFT_POLICY_ENV_ALLOW`). Default: none. */
  allowEnv?: readonly string[] | undefined;
  /** Problems with jobs this process could not run (see `bearerTokenProblems`). Default: none. */
  check?: ((policy: Policy) => PolicyProblem[]) | undefined;
}

/** How long a notice stays claimed: the same rejected text saved again within it is no news. */
const NOTICE_CLAIM_MS = 7 * 86_400_000;
/**
 * How long a claim waits for Redis before the notice is sent anyway (a duplicate beats silence),
 * and a reload for the rejection to be recorded before it carries on.
 */
const REDIS_TIMEOUT_MS = 2_000;

/**
 * Loads the policy file into the scheduler, first and on every change. A reload that cannot be
 * used (an invalid file, or a job this process could not run) keeps the policy in force and is
 * made visible: logged with every problem, counted (`nightshift_policy_reload_failures_total`),
 * reported by `/readyz` as degraded until a good edit comes, and sent to the sinks of the policy
 * in force that listen to `failure`; the good edit after it to those that listen to `recovered`.
 */
export class PolicyReloader {
  readonly #options: PolicyReloaderOptions;
  /** The policy in force: its sinks hear about the next rejected edit. */
  #policy: Policy | undefined;
  /** Sends under way, so a stop can wait for them. */
  readonly #sending = new Set<Promise<unknown>>();

  constructor(options: PolicyReloaderOptions) {
    this.#options = options;
  }

  /**
   * The first load. A file with problems falls back on the policy in force in Redis (the one a
   * scheduler of this installation last loaded), reported like a rejected reload, so a restart
   * after a bad edit keeps scheduling instead of exiting over and over; with no policy in force to
   * run, its problems end the start (PolicyError).
   */
  async load(text: string): Promise<void> {
    let policy: Policy;
    try {
      policy = this.#parse(text);
    } catch (error) {
      if (!(error instanceof PolicyError)) throw error;
      const inForce = await this.#inForce();
      if (!inForce) throw error;
      await this.#options.scheduler.load(inForce.policy, inForce.text);
      this.#accepted(inForce.policy);
      await this.#reject({ sha: policySha(text), at: new Date().toISOString(), problems: error.problems });
      this.#options.log.error(
        { problems: error.problems.map(formatProblem), policySha: inForce.sha, loadedAt: inForce.loadedAt },
        'policy file is invalid; running the policy in force (the last one loaded) until it is fixed',
      );
      return;
    }
    await this.#options.scheduler.load(policy, text);
    this.#accepted(policy);
  }

  /** The policy a scheduler of this installation last loaded, if it is still stored and still parses here. */
  async #inForce(): Promise<{ policy: Policy; text: string; sha: string; loadedAt: string } | undefined> {
    // only a text signed with this process's key: anyone who can write to Redis can name another
    const current = await this.#options.policies.current();
    if (!current?.text) return undefined;
    try {
      return {
        policy: this.#parse(current.text),
        text: current.text,
        sha: current.sha,
        loadedAt: current.loadedAt,
      };
    } catch {
      return undefined;
    }
  }

  /** A change of the file. Never throws: whatever goes wrong, the policy in force stays. */
  async reload(text: string): Promise<void> {
    const { log } = this.#options;
    let policy: Policy;
    try {
      policy = this.#parse(text);
      await this.#options.scheduler.load(policy, text);
    } catch (error) {
      if (error instanceof PolicyError) {
        await this.#reject({ sha: policySha(text), at: new Date().toISOString(), problems: error.problems });
        log.error(
          { problems: error.problems.map(formatProblem) },
          'new policy is invalid; keeping the last good one',
        );
      } else {
        // not the text's fault: counted and shown, but no notice (the log says what broke)
        const reason = error instanceof Error ? error.message : String(error);
        await this.#reject({
          sha: policySha(text),
          at: new Date().toISOString(),
          problems: [],
          error: reason,
        });
        log.error({ err: error }, 'new policy could not be loaded; keeping the last good one');
      }
      return;
    }
    const fixed = this.#options.status.rejected;
    this.#accepted(policy);
    if (policy.warnings.length > 0)
      log.warn({ warnings: policy.warnings.map(formatProblem) }, 'new policy loaded, with warnings');
    if (fixed) this.#notify({ event: 'accepted', rejectedSha: fixed.sha, problems: [] }, policy);
  }

  /** Waits for notices being sent, for at most `waitMs`. */
  async settle(waitMs: number): Promise<void> {
    await within(Promise.all(this.#sending), waitMs);
  }

  #parse(text: string): Policy {
    const { file, env, allowEnv, check } = this.#options;
    const policy = parsePolicy(text, file, { registry: actionRegistry, env, allowEnv });
    const problems = check?.(policy) ?? [];
    if (problems.length > 0) throw new PolicyError(problems);
    return policy;
  }

  /** The policy in force, once one was loaded: what the overdue watch checks. */
  get policy(): Policy | undefined {
    return this.#policy;
  }

  #accepted(policy: Policy): void {
    const sha = this.#options.scheduler.policySha;
    this.#policy = policy;
    this.#options.status.loaded(sha);
    this.#options.metrics?.policyLoaded(sha);
  }

  async #reject(edit: RejectedEdit): Promise<void> {
    this.#options.status.reject(edit);
    this.#options.metrics?.policyRejected();
    if (edit.problems.length > 0 && this.#policy)
      this.#notify({ event: 'rejected', rejectedSha: edit.sha, problems: edit.problems }, this.#policy);
    await this.#recordRejected(edit);
  }

  /**
   * Keeps the refused edit in Redis for readers in other processes (the console) until a policy is
   * loaded again. Its problems are about the text, so no `${VAR}` value is among them. Waited for,
   * so a good edit right after cannot be overtaken by it; a Redis that fails or does not answer is
   * logged, and this process's `/readyz` still reports the edit.
   */
  async #recordRejected(edit: RejectedEdit): Promise<void> {
    const { policies, log } = this.#options;
    const record = {
      sha: edit.sha,
      at: edit.at,
      host: hostname(),
      problems: edit.problems.map(formatProblem),
      ...(edit.error === undefined ? {} : { error: edit.error }),
    };
    try {
      const recorded = await within(policies.setRejected(record), REDIS_TIMEOUT_MS);
      if (recorded === TIMED_OUT)
        log.warn('Redis did not answer: the rejected policy edit is recorded once it does');
    } catch (error) {
      log.warn({ err: error }, 'could not record the rejected policy edit in Redis');
    }
  }

  #notify(notice: Pick<PolicyNotice, 'event' | 'rejectedSha' | 'problems'>, policy: Policy): void {
    const { file, scheduler, notifier, log } = this.#options;
    const sending = (async () => {
      if (!(await this.#claim(notice.event, notice.rejectedSha))) {
        log.debug({ policyEvent: notice.event }, 'policy notification already sent by another scheduler');
        return;
      }
      await notifier.notifyPolicy(policy.notifications, {
        ...notice,
        file,
        policySha: scheduler.policySha,
        at: new Date().toISOString(),
      });
    })().catch((error: unknown) => log.error({ err: error }, 'policy notification failed'));
    this.#sending.add(sending);
    void sending.finally(() => this.#sending.delete(sending));
  }

  /** Whether this process is the one to send the notice: the first to claim it in Redis. */
  async #claim(event: PolicyNotice['event'], sha: string): Promise<boolean> {
    const { policies, log } = this.#options;
    try {
      const claimed = await within(policies.claimNotice(event, sha, NOTICE_CLAIM_MS), REDIS_TIMEOUT_MS);
      if (claimed !== TIMED_OUT) return claimed;
      log.warn({ policyEvent: event }, 'Redis did not answer: sending the policy notification unclaimed');
      return true;
    } catch (error) {
      log.warn(
        { err: error, policyEvent: event },
        'could not claim the policy notification: sending it anyway',
      );
      return true;
    }
  }
}
