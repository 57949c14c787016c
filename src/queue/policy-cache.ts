import type { Logger } from '../log/index.js';
import {
  type ActionCatalog,
  type JobParameters,
  type Policy,
  type PolicyEnv,
  type PolicyJob,
  parsePolicy,
  type RunParameters,
} from '../policy/index.js';
import {
  PolicyRefusedError,
  type PolicyStore,
  type PolicyVerdict,
  RunParametersRefusedError,
} from '../store/index.js';
import { BullMQ } from './bullmq.js';
import type { RunJobData } from './run-queue.js';

export interface PolicyCacheOptions {
  policies: PolicyStore;
  registry: ActionCatalog;
  /** The worker's own environment: `${VAR}`s in policies resolve here, never in Redis. */
  env: PolicyEnv;
  /** Hears of each run refused because its policy text is not signed with a key this worker holds. Default: none. */
  onRefused?: ((data: RunJobData, refusal: PolicyRefusedError) => void) | undefined;
  /** nightshift's own variables policies may read after all (`NIGHTSHIFT_POLICY_ENV_ALLOW`). Default: none. */
  allowEnv?: readonly string[];
}

/** Counts runs refused for their policy (src/ops implements it, as `nightshift_policy_refusals_total`). */
export interface PolicyRefusalCounter {
  policyRefused(verdict: Exclude<PolicyVerdict, 'signed'>): void;
}

/** `onRefused` for a worker: one error line naming the run, its job, policy and verdict, and a count. */
export function reportRefusal(
  log: Logger,
  counter: PolicyRefusalCounter | undefined,
): NonNullable<PolicyCacheOptions['onRefused']> {
  return (data, refusal) => {
    log.error(
      { runId: data.runId, job: data.job, policySha: data.policySha, verdict: refusal.verdict },
      'run refused: its policy is not signed with a key this worker holds',
    );
    counter?.policyRefused(refusal.verdict);
  };
}

/** A run's policy and its job in it. */
export interface RunPolicy {
  policy: Policy;
  job: PolicyJob;
}

/**
 * How many policies a worker keeps parsed: the one in force, and those that runs still queued or
 * running name after a reload or two. One named again after it was dropped is read again.
 */
const KEPT_POLICIES = 4;

/** The policies runs name by hash, each read from Redis, checked against its signatures and parsed once per worker. */
export class PolicyCache {
  readonly #options: PolicyCacheOptions;
  /**
   * By hash, the policy or its read under way, the last used last: every run of a burst waits for
   * the one read and parse of its policy (a worker's first 1,000 runs of a new policy each parsed
   * it when they missed a cache of parsed policies alone), and a reload does not leave each
   * earlier policy in memory for good.
   */
  readonly #parsed = new Map<string, Promise<Policy>>();

  constructor(options: PolicyCacheOptions) {
    this.#options = options;
  }

  /**
   * The run's policy and job. A failure is unrecoverable: a policy this worker cannot parse (a
   * variable missing here) or will not run (not signed with its key) will not change on a retry
   * either, and a job gone from it stays gone. A refusal is reported to `onRefused` first.
   */
  async resolve(data: RunJobData): Promise<RunPolicy> {
    try {
      return await this.#resolve(data);
    } catch (error) {
      if (error instanceof PolicyRefusedError) this.#options.onRefused?.(data, error);
      throw error instanceof BullMQ.UnrecoverableError
        ? error
        : new BullMQ.UnrecoverableError(String((error as Error).message));
    }
  }

  /** The run's policy and job if they can still be had, for a run that failed without them; a refusal is not reported again. */
  async find(data: RunJobData): Promise<RunPolicy | undefined> {
    return this.#resolve(data).catch(() => undefined);
  }

  async #resolve(data: RunJobData): Promise<RunPolicy> {
    const parameters =
      data.parameters && Object.keys(data.parameters).length > 0 ? data.parameters : undefined;
    // A run with parameters gets a policy of its own, read again with them merged into its job's
    // `with:` once their signatures hold: they pass the action's schema, as the file's values would.
    const policy = parameters
      ? await this.#read(data.policySha, this.#signed(data, parameters))
      : await this.#policy(data.policySha);
    const job = policy.jobs.find((candidate) => candidate.name === data.job);
    if (!job)
      throw new BullMQ.UnrecoverableError(
        `job "${data.job}" is not in policy ${data.policySha.slice(0, 12)}`,
      );
    return { policy, job };
  }

  /** The run's parameters, once a key of this worker is found to have signed them for this very run. */
  #signed(data: RunJobData, parameters: RunParameters): JobParameters {
    const verdict = this.#options.policies.verifyParameters(
      { runId: data.runId, job: data.job, policySha: data.policySha, parameters },
      data.parameterSignatures ?? {},
    );
    if (verdict !== 'signed') throw new RunParametersRefusedError(data.runId, verdict);
    return { job: data.job, values: parameters };
  }

  #policy(sha: string): Promise<Policy> {
    let policy = this.#parsed.get(sha);
    if (policy) this.#parsed.delete(sha);
    else {
      policy = this.#read(sha);
      // a read that failed is tried again by the next run that names the policy
      policy.catch(() => {
        if (this.#parsed.get(sha) === policy) this.#parsed.delete(sha);
      });
    }
    this.#parsed.set(sha, policy);
    for (const oldest of this.#parsed.keys()) {
      if (this.#parsed.size <= KEPT_POLICIES) break;
      this.#parsed.delete(oldest);
    }
    return policy;
  }

  async #read(sha: string, parameters?: JobParameters): Promise<Policy> {
    const { policies } = this.#options;
    const stored = await policies.read(sha);
    if (stored === undefined)
      throw new BullMQ.UnrecoverableError(`policy ${sha.slice(0, 12)} is no longer stored`);
    if (stored.verdict !== 'signed')
      throw new PolicyRefusedError(sha, stored.verdict, { local: policies.localKey });
    return parsePolicy(stored.text, `policy@${sha.slice(0, 12)}`, {
      registry: this.#options.registry,
      env: this.#options.env,
      allowEnv: this.#options.allowEnv,
      parameters,
    });
  }
}
