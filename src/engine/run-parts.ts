import type { FleetListing } from './fleet-listing.js';
import type { RunSummary } from './summary.js';

/** One part of a split run: which of the run's targets it works (their keys). */
export interface RunPart {
  index: number;
  keys: readonly string[];
}

/**
 * Why an execution of `part` worked none of its targets (refused before any: its listing gone…),
 * its summary giving the reason; undefined when it worked some, or had none.
 */
export function partRefusal(summary: RunSummary, part: RunPart): string | undefined {
  // a cancelled part stopped as asked, before any target: not a failure
  if (summary.counts.total > 0 || part.keys.length === 0 || summary.outcome === 'cancelled') return undefined;
  return summary.reason ?? 'the part worked none of its targets';
}

/** A part that ended without working all its targets, and why. */
export interface FailedPart extends RunPart {
  reason: string;
}

export interface PartsRequest {
  runId: string;
  /**
   * The fleet as the run listed it: each part reads its own slice of it (its targets' workspaces)
   * instead of listing the fleet again.
   */
  listing: FleetListing;
  parts: readonly RunPart[];
  /** Aborts the wait (shutdown, the run's lock lost); the parts go on and a resumed run waits for them again. */
  signal: AbortSignal;
  /**
   * Aborted when the run is cancelled: parts no worker has taken are taken off the queue unworked,
   * and the wait ends once the parts under way have (each stops starting targets too). Default: none.
   */
  halt?: AbortSignal | undefined;
  /** Called at each look at the parts, to report the run's progress. */
  onPoll: () => Promise<void>;
  /**
   * Works a part here, in the run: for one no worker has taken yet, so a run never waits on parts
   * queued behind itself. `deliveries` counts the part's earlier starts too (a worker that took it
   * and stopped). `slice` is the part's slice of the listing as stored for the workers: the part
   * works from it without reading it back. Resolves with why the part failed, if it did.
   */
  work: (part: RunPart, deliveries: number, slice: FleetListing | undefined) => Promise<string | undefined>;
}

/**
 * How a run over many targets is shared between workers (src/queue implements it on the run
 * queue): the run lists the fleet once, hands its targets out in parts and waits for them; each
 * part runs as the run (its id, checkpoints, ownership) over its own targets.
 */
export interface RunSplitter {
  /** Most targets one part holds; a run with no more targets than this is not split. */
  readonly partSize: number;
  /**
   * Stores the listing, enqueues the parts (again: a no-op), works those no worker takes
   * (`work`) and resolves when every part has ended.
   */
  runParts(request: PartsRequest): Promise<FailedPart[]>;
  /** The slice of the listing a split run stored for one of its parts; undefined when it is gone. */
  listing(runId: string, part: RunPart): Promise<FleetListing | undefined>;
  /**
   * The parts an earlier execution of the run shared it out in, while they may still go; undefined
   * when none did. A run taken over after it split shares out exactly these again.
   */
  earlierParts(runId: string): Promise<RunPart[] | undefined>;
}

/** `keys` in order, cut into parts of at most `size` (the last one may be smaller), numbered from 0. */
export function splitTargets(keys: readonly string[], size: number): RunPart[] {
  if (!Number.isInteger(size) || size < 1)
    throw new RangeError(`part size must be a positive integer, got ${size}`);
  const parts: RunPart[] = [];
  for (let start = 0; start < keys.length; start += size)
    parts.push({ index: parts.length, keys: keys.slice(start, start + size) });
  return parts;
}
