import { z } from 'zod';
import {
  type Finding,
  FindingSchema,
  type RunOutcome,
  type RunSummary,
  STRANDED_RULE,
  type WindowEvidence,
  WindowEvidenceSchema,
} from '../engine/index.js';
import { NOTIFY_EVENTS, type NotifyEvent, WINDOW_ACTION } from '../policy/index.js';

/** The outcomes that say something about a job's health; `skipped` and `missed` runs say nothing. */
export const NOTIFIABLE_OUTCOMES = ['succeeded', 'partial', 'failed', 'cancelled', 'halted'] as const;
export type NotifiableOutcome = (typeof NOTIFIABLE_OUTCOMES)[number];

/**
 * What one sink has been told about one job: the outcome of the last run it heard about and the
 * findings it knows to be open. Stored after a successful send (or when there was nothing to
 * send), so a send that failed is tried again, with the same changes, on the next run.
 */
export const SinkStateSchema = z.object({
  /** The run this state was taken from; a run delivered twice is not notified twice. */
  runId: z.string(),
  /** When that run finished (ISO, UTC): a slower, older run never overwrites a newer state. */
  at: z.string(),
  outcome: z.enum(NOTIFIABLE_OUTCOMES),
  /** Open findings the sink has been told about (none when it does not listen to `findings`). */
  findings: z.array(FindingSchema),
  /** The window's drift streak that has lasted `driftPersistsAfter` reconciliations, once raised. */
  driftStreak: z.string().optional(),
});
export type SinkState = z.infer<typeof SinkStateSchema>;

/** What a finished run changed for one sink, before the sink's `on:` filters the events. */
export interface RunChange {
  /** Every event the run raises, in the order of NOTIFY_EVENTS. */
  readonly events: readonly NotifyEvent[];
  /** The outcome of the previous run the sink knows of. */
  readonly previousOutcome: NotifiableOutcome | undefined;
  /** Findings of this run the sink was not told about yet. */
  readonly newFindings: readonly Finding[];
  /** Findings the sink was told about that this run no longer reports. */
  readonly resolvedFindings: readonly Finding[];
  /** A window reconciliation's record; undefined for a job's run (or one that ended before its record). */
  readonly window: WindowEvidence | undefined;
  /** The state to store once the sink has heard about this run; undefined: keep what it knows (the run is not over). */
  readonly next: SinkState | undefined;
}

/**
 * A finding's identity across runs: its rule and subject. The message and severity may change
 * from run to run ("last backup 3 days ago", then 4) without making it a new finding.
 */
export function findingKey(finding: Pick<Finding, 'rule' | 'subject'>): string {
  return JSON.stringify([finding.rule, finding.subject]);
}

/** A finding of a stranded workspace (see `strandedFinding`). */
export function isStranded(finding: Pick<Finding, 'rule'>): boolean {
  return finding.rule === STRANDED_RULE;
}

function isNotifiable(outcome: RunOutcome): outcome is NotifiableOutcome {
  return (NOTIFIABLE_OUTCOMES as readonly string[]).includes(outcome);
}

/** What a window's reconciliation reports of itself; undefined for a job's run or an older record. */
export function windowEvidence(summary: RunSummary): WindowEvidence | undefined {
  if (summary.action !== WINDOW_ACTION) return undefined;
  return WindowEvidenceSchema.safeParse(summary.evidence?.window).data;
}

/** The drift streak a reconciliation reports once it is as long as its window's `driftPersistsAfter`. */
function persistingDrift(window: WindowEvidence | undefined): string | undefined {
  const streak = window?.driftStreak;
  return streak && streak.reconciliations >= window.driftPersistsAfter ? streak.id : undefined;
}

function byKey(findings: readonly Finding[]): Map<string, Finding> {
  const map = new Map<string, Finding>();
  for (const finding of findings) {
    const key = findingKey(finding);
    if (!map.has(key)) map.set(key, finding);
  }
  return map;
}

/**
 * A run waiting for approval raises `approval-needed` each time it asks (its first ask, and again
 * when its plan grew since it was approved), and leaves what the sink knows as it was: the run's
 * end is yet to be told, under the same run id.
 */
function approvalNeeded(previous: SinkState | undefined): RunChange {
  return {
    events: ['approval-needed'],
    previousOutcome: previous?.outcome,
    newFindings: [],
    resolvedFindings: [],
    window: undefined,
    next: undefined,
  };
}

/**
 * The events a finished run raises for a sink that last heard `previous` (undefined: never).
 *
 * - `failure`: the run failed; `partial`: some of its targets failed; `halted`: its failure budget
 *   (`stopAfter`) was spent; `cancelled`: an operator cancelled it. Raised by every such run.
 * - `recovered`: the run succeeded and the previous run the sink knows of had failed or partly failed.
 * - `stranded`: the run reports stranded workspaces the sink was not told about (findings of the
 *   rule `stranded`: paused by nightshift, owned by nobody, so nothing would hand them back).
 * - `findings`: the run reports findings the sink was not told about, or no longer reports some it
 *   was told about (resolved). Only a run that succeeded can resolve a finding: a failed target
 *   reports nothing, which must not read as "fixed". After a failed or partial run the open set
 *   is what was known plus what is new.
 * - `acted`: a window's reconciliation paused or resumed at least one workspace. Its record is made
 *   once per run, by the run (never by a part of a split one), so an edge raises it once.
 * - `drift-persists`: a window's reconciliation left the same workspaces drifting for its
 *   `driftPersistsAfter` reconciliations in a row; once per streak (the sink remembers the streak).
 * - `succeeded`: the run succeeded.
 * - `approval-needed`: the run waits for a person's approval of its plan (`approval:`).
 *
 * Dry runs, skipped and missed runs raise nothing and change nothing: undefined. So does a run the
 * sink already heard about (the same run delivered twice).
 */
export function runChange(summary: RunSummary, previous: SinkState | undefined): RunChange | undefined {
  if (summary.outcome === 'awaiting-approval' && !summary.dryRun) return approvalNeeded(previous);
  if (summary.dryRun || !isNotifiable(summary.outcome)) return undefined;
  if (previous?.runId === summary.runId) return undefined;
  const outcome = summary.outcome;
  const known = byKey(previous?.findings ?? []);
  const current = byKey(summary.findings);
  const newFindings = [...current].filter(([key]) => !known.has(key)).map(([, finding]) => finding);
  const resolvedFindings =
    outcome === 'succeeded'
      ? [...known].filter(([key]) => !current.has(key)).map(([, finding]) => finding)
      : [];
  const open =
    outcome === 'succeeded'
      ? [...current.values()]
      : [...known.values(), ...newFindings].map((finding) => current.get(findingKey(finding)) ?? finding);

  const raised = new Set<NotifyEvent>();
  if (outcome === 'failed') raised.add('failure');
  if (outcome === 'partial') raised.add('partial');
  if (outcome === 'cancelled') raised.add('cancelled');
  if (outcome === 'halted') raised.add('halted');
  if (
    outcome === 'succeeded' &&
    (previous?.outcome === 'failed' || previous?.outcome === 'partial' || previous?.outcome === 'halted')
  )
    raised.add('recovered');
  if (newFindings.some(isStranded)) raised.add('stranded');
  if (newFindings.length > 0 || resolvedFindings.length > 0) raised.add('findings');
  if (outcome === 'succeeded') raised.add('succeeded');
  const window = windowEvidence(summary);
  if (window && window.done.paused + window.done.resumed > 0) raised.add('acted');
  const drift = persistingDrift(window);
  if (drift !== undefined && previous?.driftStreak !== drift) raised.add('drift-persists');
  // a reconciliation that ended before its record says nothing of drift: the streak told stays told
  const driftStreak = window ? drift : previous?.driftStreak;

  return {
    events: NOTIFY_EVENTS.filter((event) => raised.has(event)),
    previousOutcome: previous?.outcome,
    newFindings,
    resolvedFindings,
    window,
    next: {
      runId: summary.runId,
      at: summary.finishedAt ?? new Date().toISOString(),
      outcome,
      findings: open,
      ...(driftStreak === undefined ? {} : { driftStreak }),
    },
  };
}
