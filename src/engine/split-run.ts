import type { Logger } from '../log/index.js';
import type { TargetRef } from './action.js';
import type { CheckpointStore } from './checkpoint.js';
import type { FleetListing } from './fleet-listing.js';
import { type FailedPart, type RunPart, type RunSplitter, splitTargets } from './run-parts.js';
import type { TargetRecord } from './summary.js';

export interface PartsDependencies {
  split: RunSplitter;
  checkpoints: CheckpointStore;
  log: Logger;
  signal: AbortSignal;
  /** Aborted when the run is cancelled (`PartsRequest.halt`). Default: none. */
  halt?: AbortSignal | undefined;
  onProgress?: ((done: number, total: number) => void) | undefined;
  /** Works one part in this run (as `RunSplitter.runParts`' `work`). */
  workPart: (
    part: RunPart,
    deliveries: number,
    slice: FleetListing | undefined,
  ) => Promise<string | undefined>;
}

/** What the parts of a split run came to. */
export interface PartsOutcome {
  /** A record per target the parts had: its checkpoint, or a failure when no part finished it. */
  records: Map<string, TargetRecord>;
  failedParts: FailedPart[];
  /** Why parts failed, for the run's reason; undefined when none did. */
  reason: string | undefined;
  /** Targets no part finished because the run was cancelled: not recorded, never started. */
  unstarted: number;
}

/**
 * The run's side of a split run: hands `targets` out in parts, waits for every part, and reads
 * their records back from the run's checkpoints. A target no part finished (its part failed for
 * good, or ended early) is a failed target, never a silent gap.
 */
export async function runInParts(
  deps: PartsDependencies,
  request: {
    runId: string;
    listing: FleetListing;
    targets: readonly TargetRef[];
    /** The parts an earlier execution of the run made: shared out again as they were. */
    parts?: readonly RunPart[] | undefined;
  },
): Promise<PartsOutcome> {
  const { runId } = request;
  const total = request.targets.length;
  const parts =
    request.parts ??
    splitTargets(
      request.targets.map((target) => target.key),
      deps.split.partSize,
    );
  deps.log.info(
    { targets: total, parts: parts.length, partSize: deps.split.partSize },
    'run split into parts',
  );
  const failedParts = await deps.split.runParts({
    runId,
    listing: request.listing,
    parts,
    signal: deps.signal,
    halt: deps.halt,
    work: deps.workPart,
    onPoll: async () => {
      deps.onProgress?.(await deps.checkpoints.count(runId), total);
    },
  });
  const done = await deps.checkpoints.load(
    runId,
    request.targets.map((target) => target.key),
  );
  const lost = new Map(failedParts.flatMap((part) => part.keys.map((key) => [key, part.reason])));
  const records = new Map<string, TargetRecord>();
  const cancelled = deps.halt?.aborted === true;
  let unstarted = 0;
  for (const target of request.targets) {
    const record = done.get(target.key);
    if (!record && cancelled) {
      unstarted += 1;
      continue;
    }
    records.set(
      target.key,
      record ?? {
        ...target,
        outcome: 'failed',
        attempts: 0,
        requestIds: [],
        error: { message: `not finished: ${lost.get(target.key) ?? 'its part ended before it'}` },
      },
    );
  }
  for (const part of failedParts)
    deps.log.error({ part: part.index, reason: part.reason }, 'run part failed');
  const reason =
    failedParts.length > 0
      ? `${failedParts.length} of ${parts.length} parts failed: ${failedParts.map((part) => `part ${part.index}: ${part.reason}`).join('; ')}`
      : undefined;
  return { records, failedParts, reason, unstarted };
}
