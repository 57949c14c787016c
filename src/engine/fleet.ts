import type { ApiClient, Workgroup, Workspace } from '../api/index.js';
import { NightshiftError } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import type { Clock } from '../time/index.js';
import { type CallScope, callScope } from './call-scope.js';
import type { ListingStamp } from './ownership.js';
import { FailedLooks, type RetryPolicy } from './retry.js';

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
  hopeless?: ((workspace: Workspace, listing: ListingStamp) => string | undefined) | undefined;
  deadline: number;
  resolve: (workspace: Workspace) => void;
  reject: (error: unknown) => void;
  describe: string;
}

/**
 * The fleet as one run sees it. Every read is served from the latest list-workgroups answer;
 * `refresh` calls made at the same time share one request, and every `waitFor` of the run is
 * served by one poll (one list-workgroups call per interval, however many targets wait). A poll
 * that fails follows the wait rule of retry.ts (FailedLooks): a permanent error (a 401, a 403…)
 * ends every wait at once with that error, transient ones are looked past per the job's policy.
 */
export class FleetView {
  readonly #api: ApiClient;
  readonly #log: Logger;
  readonly #intervalMs: number;
  readonly #retry: RetryPolicy;
  readonly #clock: Clock;
  readonly #signal: AbortSignal;
  readonly #sequence: (() => Promise<number>) | undefined;
  #workgroups: readonly Workgroup[];
  #listedAt: Date;
  #stamp: ListingStamp;
  /** The stamp of the listing the view was built from: the run's targets were selected from it. */
  readonly first: ListingStamp;
  /** Listings asked for so far, the first one included. */
  #requested = 1;
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
    /** The ledger's sequence read before `workgroups` was asked for; undefined without a ledger. */
    listedSeq?: number | undefined;
    /** Reads the ledger's sequence before each listing is asked for (see `ListingStamp`). Default: none. */
    sequence?: (() => Promise<number>) | undefined;
    pollIntervalMs: number;
    /** How failed polls are retried: the job's `retry`. */
    retry: RetryPolicy;
    clock: Clock;
    signal: AbortSignal;
  }) {
    this.#api = options.api;
    this.#log = options.log;
    this.#intervalMs = options.pollIntervalMs;
    this.#retry = options.retry;
    this.#clock = options.clock;
    this.#signal = options.signal;
    this.#workgroups = options.workgroups;
    this.#listedAt = options.listedAt ?? new Date(options.clock.now());
    this.#sequence = options.sequence;
    this.#stamp = { seq: options.listedSeq, generation: 1 };
    this.first = this.#stamp;
    this.#reindex();
  }

  get workgroups(): readonly Workgroup[] {
    return this.#workgroups;
  }

  /** When the listing every read is served from was asked for. */
  get listedAt(): Date {
    return this.#listedAt;
  }

  /** Where the listing every read is served from stands in the ledger's and this run's orders. */
  get stamp(): ListingStamp {
    return this.#stamp;
  }

  /**
   * How many listings this run has asked for so far: a listing whose `stamp.generation` is greater
   * was asked for after this was read (an in-process order: no clock is compared).
   */
  get requested(): number {
    return this.#requested;
  }

  workspace(workgroupId: string, workspaceId: string): Workspace | undefined {
    return this.#index.get(`${workgroupId}/${workspaceId}`);
  }

  /**
   * Lists the fleet again; callers that overlap share one call. A caller that must see a listing
   * asked for after some event compares `stamp.generation` with `requested` read at that event.
   */
  refresh(): Promise<void> {
    this.#refreshing ??= this.#list().finally(() => {
      this.#refreshing = undefined;
    });
    return this.#refreshing;
  }

  async #list(): Promise<void> {
    const asked = new Date(this.#clock.now());
    const generation = ++this.#requested;
    const seq = await this.#sequence?.();
    const { result } = await this.#api.listWorkgroups({ signal: this.#signal });
    this.#workgroups = result;
    this.#listedAt = asked;
    this.#stamp = { seq, generation };
    this.#reindex();
  }

  /**
   * Resolves with the workspace once `ready` holds for it, polling with the run's shared poll.
   * `hopeless`, looked at on every poll with the poll's stamp, gives up the wait at once with the
   * message it returns (a WaitAbandonedError) instead of waiting out the deadline.
   */
  waitFor(
    workgroupId: string,
    workspaceId: string,
    ready: (workspace: Workspace) => boolean,
    options: {
      timeoutMs: number;
      describe: string;
      hopeless?: (workspace: Workspace, listing: ListingStamp) => string | undefined;
    },
  ): Promise<Workspace> {
    const current = this.workspace(workgroupId, workspaceId);
    if (current && ready(current)) return Promise.resolve(current);
    const since = this.#clock.monotonic();
    return new Promise((resolve, reject) => {
      this.#waiters.add({
        workgroupId,
        workspaceId,
        ready,
        hopeless: options.hopeless,
        deadline: since + options.timeoutMs,
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
    const looks = new FailedLooks(this.#retry, this.#intervalMs);
    let waitMs = this.#intervalMs;
    while (this.#waiters.size > 0) {
      await this.#clock.sleep(waitMs, this.#signal);
      waitMs = this.#intervalMs;
      try {
        await this.refresh();
        looks.succeeded();
      } catch (error) {
        this.#signal.throwIfAborted();
        // throws (ending every wait: #rejectAll) unless the failure is one to look past
        waitMs = looks.failed(error);
        this.#log.warn({ err: error, delayMs: waitMs }, 'shared fleet poll failed; polling on');
      }
      const now = this.#clock.monotonic();
      for (const waiter of this.#waiters) {
        const workspace = this.workspace(waiter.workgroupId, waiter.workspaceId);
        const hopeless = workspace && waiter.hopeless?.(workspace, this.#stamp);
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
