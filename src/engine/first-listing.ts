import type { ApiClient, Workgroup } from '../api/index.js';
import { NightshiftError } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import type { PolicyJob } from '../policy/index.js';
import type { Clock } from './clock.js';
import type { FleetListing } from './fleet-listing.js';
import type { OwnershipLedger } from './ownership.js';
import { AttemptsFailedError, logWaits, withRetries } from './retry.js';
import type { RunPart, RunSplitter } from './run-parts.js';
import { type ErrorRecord, errorRecord } from './summary.js';

/**
 * The ownership ledger did not answer when a run read its sequence before listing the fleet: the
 * run cannot order what it sees against the pauses on record, so it acts on nothing.
 */
export class LedgerUnansweredError extends NightshiftError {
  override name = 'LedgerUnansweredError';
  readonly code = 'NS_LEDGER_UNANSWERED';
}

/** The listing a run starts from: when it was asked for, and the ledger's sequence read just before. */
export interface StartingListing {
  workgroups: readonly Workgroup[];
  at: Date;
  seq: number | undefined;
}

/**
 * The fleet a run (or part) starts from: a part's first delivery works from its slice of the
 * listing its run stored (its own targets' workspaces); everything else lists the fleet itself, with the job's retries, reading the ledger's
 * sequence just before each listing is asked for (the listing is then later than every ledger
 * write numbered up to it). A part started before lists afresh, as a run taken over does: the
 * run's listing predates the pauses its earlier start may have made.
 */
export async function firstListing(
  deps: {
    api: ApiClient;
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
  let at = deps.clock.now();
  let seq: number | undefined;
  try {
    const { value: workgroups } = await withRetries(
      request.job.retry,
      deps.signal,
      async () => {
        at = deps.clock.now();
        seq = await deps.ledger?.sequence().catch((error: unknown) => {
          throw new LedgerUnansweredError(
            `Redis did not answer the ownership ledger (its sequence, read before the fleet is listed): ${(error as Error).message}`,
            { cause: error },
          );
        });
        return (await deps.api.listWorkgroups({ signal: deps.signal })).result;
      },
      logWaits(deps.log, 'fleet listing failed; retrying'),
      deps.clock,
    );
    return { workgroups, at, seq };
  } catch (error) {
    deps.interrupted.throwIfAborted();
    const cause = error instanceof AttemptsFailedError ? error.cause : error;
    deps.log.error({ err: errorRecord(cause) }, 'run could not list the fleet');
    return { refused: 'could not list the fleet', error: errorRecord(cause) };
  }
}
