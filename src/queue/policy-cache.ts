import { UnrecoverableError } from 'bullmq';
import {
  type ActionCatalog,
  type Policy,
  type PolicyEnv,
  type PolicyJob,
  parsePolicy,
} from '../policy/index.js';
import type { PolicyStore } from '../store/index.js';
import type { RunJobData } from './run-queue.js';

export interface PolicyCacheOptions {
  policies: PolicyStore;
  registry: ActionCatalog;
  /** The worker's own environment: `${VAR}`s in policies resolve here, never in Redis. */
  env: PolicyEnv;
  /** nightshift's own variables policies may read after all (`NIGHTSHIFT_POLICY_ENV_ALLOW`). Default: none. */
  allowEnv?: readonly string[];
}

/** A run's policy and its job in it. */
export interface RunPolicy {
  policy: Policy;
  job: PolicyJob;
}

/** The policies runs name by hash, each read from Redis and parsed once per worker. */
export class PolicyCache {
  readonly #options: PolicyCacheOptions;
  readonly #parsed = new Map<string, Policy>();

  constructor(options: PolicyCacheOptions) {
    this.#options = options;
  }

  /**
   * The run's policy and job. A failure is unrecoverable: a policy this worker cannot parse (a
   * variable missing here) will not parse on a retry either, and a job gone from it stays gone.
   */
  async resolve(data: RunJobData): Promise<RunPolicy> {
    let policy: Policy;
    try {
      policy = await this.#policy(data.policySha);
    } catch (error) {
      throw error instanceof UnrecoverableError
        ? error
        : new UnrecoverableError(String((error as Error).message));
    }
    const job = policy.jobs.find((candidate) => candidate.name === data.job);
    if (!job)
      throw new UnrecoverableError(`job "${data.job}" is not in policy ${data.policySha.slice(0, 12)}`);
    return { policy, job };
  }

  /** The run's policy and job if they can still be had, for a run that failed without them. */
  async find(data: RunJobData): Promise<RunPolicy | undefined> {
    return this.resolve(data).catch(() => undefined);
  }

  async #policy(sha: string): Promise<Policy> {
    const cached = this.#parsed.get(sha);
    if (cached) return cached;
    const text = await this.#options.policies.get(sha);
    if (text === undefined) throw new UnrecoverableError(`policy ${sha.slice(0, 12)} is no longer stored`);
    const policy = parsePolicy(text, `policy@${sha.slice(0, 12)}`, {
      registry: this.#options.registry,
      env: this.#options.env,
      allowEnv: this.#options.allowEnv,
    });
    this.#parsed.set(sha, policy);
    return policy;
  }
}
