import type { ApiClient, Workgroup } from '../api/index.js';
import type { Logger } from '../log/index.js';
import type { PolicyJob } from '../policy/index.js';
import type { Clock } from '../time/index.js';
import { abortable } from './abortable.js';
import { callScope } from './call-scope.js';
import type { FleetListing } from './fleet-listing.js';
import type { OwnershipLedger } from './ownership.js';
import { AttemptsFailedError, logWaits, withRetries } from './retry.js';
import type { RunPart, RunSplitter } from './run-parts.js';
import { LedgerUnansweredError, type SequencedListing, type SequencedListings } from './shared-listing.js';
import { type ErrorRecord, errorRecord } from './summary.js';

/** The listing a run starts from: when it was asked for, and the ledger's sequence read just before. */
export interface StartingListing {
  workgroups: readonly Workgroup[];
  at: Date;
  seq: number | undefined;
}

/**
 * The fleet a run (or part) starts from: a part's first delivery works from its slice of the
 * listing its run stored (its own targets' workspaces); everything else lists the fleet itself,
 * with the job's retries, the ledger's sequence read after the attempt began and before its
 * request was sent (the listing is then later than every ledger write numbered up to it). The
 * first attempt takes the listing asked for as the run was admitted, when there is one. A part
 * started before lists afresh, as a run taken over does: the run's listing predates the pauses
 * its earlier start may have made.
 */
export async function firstListing(
  deps: {
    api: ApiClient;
    /** Sequenced listings shared with the worker's other runs. Default: the ledger read, then `api`. */
    lister?: SequencedListings | undefined;
    /** The listing asked for as the run was admitted: its first attempt's. */
    ahead?: Promise<SequencedListing> | undefined;
    split?: RunSplitter | undefined;
    ledger: OwnershipLedger | undefined;
    /** The run's own signal (its timeout included): a listing cut short by it is a refusal. */
    signal: AbortSignal;
    /** What aborts the run from outside (shutdown, a lost lease): rethrown, the run is picked up again. */
    interrupted: AbortSignal;
    log: Logger;
    clock: Clock;
  },
  request: {
    runId: string;
    job: PolicyJob;
    part?: RunPart | undefined;
    deliveries?: number | undefined;
    slice?: FleetListing | undefined;
  },
): Promise<StartingListing | { refused: string; error?: ErrorRecord }> {
  if (request.part && (request.deliveries ?? 1) <= 1) {
    const shared = request.slice ?? (await deps.split?.listing(request.runId, request.part));
    if (!shared) return { refused: 'the fleet listing its run stored for its parts is gone' };
    return { workgroups: shared.workgroups, at: new Date(shared.at), seq: shared.seq };
  }
  let ahead = deps.ahead;
  try {
    const { value } = await withRetries(
      request.job.retry,
      deps.signal,
      async () => {
        const listed = ahead ? abortable(ahead, deps.signal) : listSequenced(deps);
        ahead = undefined;
        const { listing, at, seq } = await listed;
        // the shared request belongs to no run: each run it served records its ID
        if (deps.lister && listing.requestId) callScope.getStore()?.requestIds.push(listing.requestId);
        return { workgroups: listing.result, at, seq };
      },
      logWaits(deps.log, 'fleet listing failed; retrying'),
      deps.clock,
    );
    return value;
  } catch (error) {
    deps.interrupted.throwIfAborted();
    const cause = error instanceof AttemptsFailedError ? error.cause : error;
    deps.log.error({ err: errorRecord(cause) }, 'run could not list the fleet');
    return { refused: 'could not list the fleet', error: errorRecord(cause) };
  }
}

/** One sequenced listing: shared with the worker's other runs, or the ledger read and then the fleet listed. */
async function listSequenced(deps: {
  api: ApiClient;
  lister?: SequencedListings | undefined;
  ledger: OwnershipLedger | undefined;
  signal: AbortSignal;
  clock: Clock;
}): Promise<SequencedListing> {
  if (deps.lister) return deps.lister.sequenced(deps.signal);
  const at = new Date(deps.clock.now());
  const seq = await deps.ledger?.sequence().catch((error: unknown) => {
    throw LedgerUnansweredError.of(error);
  });
  return { listing: await deps.api.listWorkgroups({ signal: deps.signal }), at, seq };
}
