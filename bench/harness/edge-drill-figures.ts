import type { Ownership, RunSummary } from '../../src/engine/index.js';
import type { RequestLogEntry } from '../../src/sim/index.js';

/**
 * The edge drill's figures, from what the simulator saw (its request log and its workspaces'
 * states) and what nightshift wrote (run summaries, the ownership ledger): pure functions, so
 * each definition reads in one place. A workspace is named by its key, `<workgroupId>/<workspaceId>`,
 * as the ledger and the summaries name it.
 */

/** A pause or resume call's workspace key, from its path (`…/workgroups/{wg}/workspaces/{ws}/pause`). */
export function workspaceKey(path: string): string {
  const parts = path.split('/');
  return `${parts.at(-4)}/${parts.at(-2)}`;
}

export interface PauseCalls {
  /** Pause calls answered 200 from `since` on. */
  accepted: number;
  /** Of those, answered after `lateAfter` (the uptime start, for a window): pauses in uptime. */
  acceptedLate: number;
  /** Workspaces with an accepted pause. */
  paused: Set<string>;
  /** Pause calls answered 400 (the workspace was not Active: stopping or stopped already). */
  refused: number;
  /** Pause calls answered anything else (5xx, 429, no answer). */
  failed: number;
  /** Workspaces with two accepted pauses or more and no accepted resume between them. */
  duplicates: string[];
  /** Resume calls answered 200 and 400 from `since` on. */
  resumes: { accepted: number; refused: number };
}

/** What the simulator answered to pause and resume calls made at `since` or later. */
export function pauseCalls(
  requests: readonly RequestLogEntry[],
  since: number,
  lateAfter: number,
): PauseCalls {
  const figures: PauseCalls = {
    accepted: 0,
    acceptedLate: 0,
    paused: new Set(),
    refused: 0,
    failed: 0,
    duplicates: [],
    resumes: { accepted: 0, refused: 0 },
  };
  const pausedSinceResume = new Map<string, number>();
  const duplicated = new Set<string>();
  for (const entry of requests) {
    if (Date.parse(entry.time) < since) continue;
    const key = workspaceKey(entry.path);
    if (entry.operation === 'resumeWorkspace') {
      if (entry.status === 200) {
        figures.resumes.accepted++;
        pausedSinceResume.delete(key);
      } else if (entry.status === 400) figures.resumes.refused++;
    }
    if (entry.operation !== 'pauseWorkspace') continue;
    if (entry.status === 400) figures.refused++;
    else if (entry.status !== 200) figures.failed++;
    else {
      figures.accepted++;
      if (Date.parse(entry.time) >= lateAfter) figures.acceptedLate++;
      figures.paused.add(key);
      const count = (pausedSinceResume.get(key) ?? 0) + 1;
      pausedSinceResume.set(key, count);
      if (count >= 2) duplicated.add(key);
    }
  }
  figures.duplicates = [...duplicated];
  return figures;
}

/** Pause calls as a report shows them: counts, and a sample of the duplicated workspaces. */
export type PauseFigures = Omit<PauseCalls, 'paused' | 'duplicates'> & {
  /** Workspaces with an accepted pause. */
  workspaces: number;
  duplicates: { count: number; sample: string };
};

export function pauseFigures({ paused, duplicates, ...counts }: PauseCalls): PauseFigures {
  return {
    ...counts,
    workspaces: paused.size,
    duplicates: { count: duplicates.length, sample: sample(duplicates) },
  };
}

/** One run as the report lists it. */
export interface RunLine {
  runId: string;
  outcome: string;
  trigger: string;
  counts: RunSummary['counts'];
  /** `evidence.window.acted`: what the reconciliation says it did; undefined for a job's run. */
  acted: number | undefined;
  deliveries: number;
  takenOverFrom: string | undefined;
  /** A window's run: whether its tick fell in the off period or in uptime. */
  period?: 'off' | 'up';
}

export function runLine(summary: RunSummary): RunLine {
  const window = summary.evidence?.window as { acted?: unknown } | undefined;
  return {
    runId: summary.runId,
    outcome: summary.outcome,
    trigger: summary.trigger,
    counts: summary.counts,
    acted: typeof window?.acted === 'number' ? window.acted : undefined,
    deliveries: summary.deliveries ?? 1,
    takenOverFrom: summary.takenOverFrom,
  };
}

export interface SummariesVsSimulator {
  /** What the summaries say was done: the sum of `evidence.window.acted` (a window) or of succeeded targets (a job). */
  said: number;
  /** Pauses the simulator accepted. */
  accepted: number;
  /** Targets a summary records as succeeded without an accepted pause. */
  onlyInSummaries: string[];
  /** Workspaces with an accepted pause that no summary records as succeeded. */
  onlyInSimulator: string[];
}

/** The summaries of `runs` against the simulator's accepted pauses. */
export function summariesVsSimulator(runs: readonly RunSummary[], calls: PauseCalls): SummariesVsSimulator {
  const succeeded = new Set<string>();
  let said = 0;
  for (const run of runs) {
    const acted = runLine(run).acted;
    const done = run.targets.filter((target) => target.outcome === 'succeeded');
    said += acted ?? done.length;
    for (const target of done) succeeded.add(target.key);
  }
  return {
    said,
    accepted: calls.accepted,
    onlyInSummaries: [...succeeded].filter((key) => !calls.paused.has(key)),
    onlyInSimulator: [...calls.paused].filter((key) => !succeeded.has(key)),
  };
}

/** Summaries against the simulator as a report shows them: the differences counted, a few named. */
export type VersusFigures = Pick<SummariesVsSimulator, 'said' | 'accepted'> & {
  onlyInSummaries: { count: number; sample: string };
  onlyInSimulator: { count: number; sample: string };
};

export function versusFigures({
  said,
  accepted,
  onlyInSummaries,
  onlyInSimulator,
}: SummariesVsSimulator): VersusFigures {
  return {
    said,
    accepted,
    onlyInSummaries: { count: onlyInSummaries.length, sample: sample(onlyInSummaries) },
    onlyInSimulator: { count: onlyInSimulator.length, sample: sample(onlyInSimulator) },
  };
}

/** The workspaces of `keys` whose status is not `Active`, counted by status. */
export function notActive(
  keys: Iterable<string>,
  status: ReadonlyMap<string, string>,
): { keys: string[]; byStatus: Record<string, number> } {
  const found: string[] = [];
  const byStatus: Record<string, number> = {};
  for (const key of keys) {
    const state = status.get(key) ?? 'gone';
    if (state === 'Active') continue;
    found.push(key);
    byStatus[state] = (byStatus[state] ?? 0) + 1;
  }
  return { keys: found, byStatus };
}

/** Ledger records owned by `owner`. */
export function ownedBy(ledger: ReadonlyMap<string, Ownership>, owner: string): Ownership[] {
  return [...ledger.values()].filter((record) => record.owner === owner);
}

/** One goal of the drill and whether this run met it. */
export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

export function check(name: string, ok: boolean, detail: string): Check {
  return { name, ok, detail };
}

/** A few keys of a list and how many more, for a report's cell. */
export function sample(keys: readonly string[], count = 3): string {
  if (keys.length === 0) return '0';
  const more = keys.length > count ? ` and ${keys.length - count} more` : '';
  return `${keys.length} (${keys.slice(0, count).join(', ')}${more})`;
}
