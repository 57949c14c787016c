import type { Logger } from '../log/index.js';
import type { TargetRef } from './action.js';
import type { CheckpointStore } from './checkpoint.js';
import type { Clock } from './clock.js';
import type { FleetListing } from './fleet-listing.js';
import { type RunPart, type RunSplitter, splitTargets } from './run-parts.js';
import {
  countTargets,
  type RunIdentity,
  type RunSummary,
  runOutcome,
  summarize,
  type TargetRecord,
} from './summary.js';

export interface SplitRunRequest {
  run: RunIdentity;
  startedAt: Date;
  listing: FleetListing;
  targets: readonly TargetRef[];
  requestIds: readonly string[];
}

export interface SplitRunDependencies {
  split: RunSplitter;
  checkpoints: CheckpointStore;
  clock: Clock;
  log: Logger;
  signal: AbortSignal;
  onProgress?: ((done: number, total: number) => void) | undefined;
  /** Works one part in this run (as `RunSplitter.runParts`' `work`). */
  workPart: (part: RunPart, deliveries: number) => Promise<string | undefined>;
}

/**
 * The run's side of a split run: hands its targets out in parts, waits for every part, then
 * summarises the run from its checkpoints as a run worked by one worker would. A target no part
 * finished (its part failed for good, or ended early) is a failed target, never a silent gap.
 */
export async function executeSplitRun(
  deps: SplitRunDependencies,
  request: SplitRunRequest,
): Promise<RunSummary> {
  const { runId } = request.run;
  const total = request.targets.length;
  const parts = splitTargets(
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
    work: deps.workPart,
    onPoll: async () => {
      deps.onProgress?.(await deps.checkpoints.count(runId), total);
    },
  });
  const done = await deps.checkpoints.load(runId);
  const lost = new Map(failedParts.flatMap((part) => part.keys.map((key) => [key, part.reason])));
  const records: TargetRecord[] = request.targets.map(
    (target) =>
      done.get(target.key) ?? {
        ...target,
        outcome: 'failed',
        attempts: 0,
        requestIds: [],
        error: { message: `not finished: ${lost.get(target.key) ?? 'its part ended before it'}` },
      },
  );
  deps.onProgress?.(records.length, total);
  for (const part of failedParts)
    deps.log.error({ part: part.index, reason: part.reason }, 'run part failed');
  const summary = summarize(request.run, {
    startedAt: request.startedAt,
    finishedAt: deps.clock.now(),
    outcome: runOutcome(countTargets(records)),
    reason:
      failedParts.length > 0
        ? `${failedParts.length} of ${parts.length} parts failed: ${failedParts.map((part) => `part ${part.index}: ${part.reason}`).join('; ')}`
        : undefined,
    targets: records,
    requestIds: request.requestIds,
  });
  deps.log.info(
    { outcome: summary.outcome, counts: summary.counts, durationMs: summary.durationMs },
    'run finished',
  );
  return summary;
}
