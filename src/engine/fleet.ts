import { setTimeout as sleep } from 'node:timers/promises';
import { type ApiClient, ApiError, type Workgroup, type Workspace } from '../api/index.js';
import { NightshiftError } from '../errors/index.js';
import type { Logger } from '../log/logger.js';
import { type CallScope, callScope } from './call-scope.js';
import { isThrottle } from './retry.js';

/** A wait for a workspace state that did not come in time. */
export class WaitTimeoutError extends NightshiftError {
  override name = 'WaitTimeoutError';
  readonly code = 'NS_WAIT_TIMEOUT';
}

/** A wait given up before its deadline: the workspace went where the state will not come from. */
export class WaitAbandonedError extends NightshiftError {
  override name = 'WaitAbandonedError';
  readonly code = 'NS_WAIT_ABANDONED';
}

interface Waiter {
  workgroupId: string;
  workspaceId: string;
  ready: (workspace: Workspace) => boolean;
  hopeless?: ((workspace: Workspace) => string | undefined) | undefined;
  deadline: number;
  resolve: (workspace: Workspace) => void;
  reject: (error: unknown) => void;
  describe: string;
}

/**
 * The fleet as one run sees it. Every read is served from the latest list-workgroups answer;
 * `refresh` calls made at the same time share one request, and every `waitFor` of the run is
 * served by one poll (one list-workgroups call per interval, however many targets wait).
 */
export class FleetView {
  readonly #api: ApiClient;
  readonly #log: Logger;
  readonly #intervalMs: number;
  readonly #signal: AbortSignal;
  #workgroups: readonly Workgroup[];
  #listedAt: Date;
  #index = new Map<string, Workspace>();
  #refreshing: Promise<void> | undefined;
  readonly #waiters = new Set<Waiter>();
  #polling = false;
  /** The run's own scope: poll calls belong to the run, not to whichever target started the poll. */
  readonly #scope: CallScope | undefined = callScope.getStore();

  constructor(options: {
    api: ApiClient;
    log: Logger;
    workgroups: readonly Workgroup[];
    /** When `workgroups` was listed. Default: now. */
    listedAt?: Date;
    pollIntervalMs: number;
    signal: AbortSignal;
  }) {
    this.#api = options.api;
    this.#log = options.log;
    this.#intervalMs = options.pollIntervalMs;
    this.#signal = options.signal;
    this.#workgroups = options.workgroups;
    this.#listedAt = options.listedAt ?? new Date();
    this.#reindex();
  }

  get workgroups(): readonly Workgroup[] {
    return this.#workgroups;
  }

  /** When the listing every read is served from was asked for. */
  get listedAt(): Date {
    return this.#listedAt;
  }

  workspace(workgroupId: string, workspaceId: string): Workspace | undefined {
    return this.#index.get(`${workgroupId}/${workspaceId}`);
  }

  /** Lists the fleet again; callers that overlap share one call. */
  refresh(): Promise<void> {
    const asked = new Date();
    this.#refreshing ??= this.#api
      .listWorkgroups({ signal: this.#signal })
      .then(({ result }) => {
        this.#workgroups = result;
        this.#listedAt = asked;
        this.#reindex();
      })
      .finally(() => {
        this.#refreshing = undefined;
      });
    return this.#refreshing;
  }

  /**
   * Resolves with the workspace once `ready` holds for it, polling with the run's shared poll.
   * `hopeless`, looked at on every poll, gives up the wait at once with the message it returns
   * (a WaitAbandonedError) instead of waiting out the deadline.
   */
  waitFor(
    workgroupId: string,
    workspaceId: string,
    ready: (workspace: Workspace) => boolean,
    options: { timeoutMs: number; describe: string; hopeless?: (workspace: Workspace) => string | undefined },
  ): Promise<Workspace> {
    const current = this.workspace(workgroupId, workspaceId);
    if (current && ready(current)) return Promise.resolve(current);
    return new Promise((resolve, reject) => {
      this.#waiters.add({
        workgroupId,
        workspaceId,
        ready,
        hopeless: options.hopeless,
        deadline: Date.now() + options.timeoutMs,
        resolve,
        reject,
        describe: options.describe,
      });
      this.#startPolling();
    });
  }

  #reindex(): void {
    const index = new Map<string, Workspace>();
    for (const workgroup of this.#workgroups) {
      for (const workspace of workgroup.workspaces ?? []) {
        index.set(`${workgroup.workgroup_id}/${workspace.workspace_id}`, workspace);
      }
    }
    this.#index = index;
  }

  #startPolling(): void {
    if (this.#polling) return;
    this.#polling = true;
    const poll = () => this.#poll();
    (this.#scope ? callScope.run(this.#scope, poll) : poll())
      .catch((error: unknown) => this.#rejectAll(error))
      .finally(() => {
        this.#polling = false;
      });
  }

  async #poll(): Promise<void> {
    let waitMs = this.#intervalMs;
    while (this.#waiters.size > 0) {
      await sleep(waitMs, undefined, { signal: this.#signal });
      waitMs = this.#intervalMs;
      try {
        await this.refresh();
      } catch (error) {
        // a failed poll is only a missed look; waiters keep their own deadlines. A throttled one
        // looks again no sooner than the server asked, or the next look is throttled too.
        if (error instanceof ApiError && isThrottle(error))
          waitMs = Math.max(waitMs, error.retryAfterMs ?? 0);
        this.#log.warn({ err: error }, 'shared fleet poll failed; polling on');
      }
      const now = Date.now();
      for (const waiter of this.#waiters) {
        const workspace = this.workspace(waiter.workgroupId, waiter.workspaceId);
        const hopeless = workspace && waiter.hopeless?.(workspace);
        if (workspace && waiter.ready(workspace)) {
          this.#waiters.delete(waiter);
          waiter.resolve(workspace);
        } else if (hopeless) {
          this.#waiters.delete(waiter);
          waiter.reject(new WaitAbandonedError(hopeless));
        } else if (now >= waiter.deadline) {
          this.#waiters.delete(waiter);
          const status = workspace?.status ?? 'missing';
          waiter.reject(new WaitTimeoutError(`${waiter.describe}: still ${status} when the wait ran out`));
        }
      }
    }
  }

  #rejectAll(error: unknown): void {
    for (const waiter of this.#waiters) waiter.reject(error);
    this.#waiters.clear();
  }
}
