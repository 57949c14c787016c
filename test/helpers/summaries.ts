import { countTargets, type Finding, type RunSummary, type TargetRecord } from '../../src/engine/index.js';

let runs = 0;

/** A finding as an audit would report it; the message varies, the identity is rule + subject. */
export function finding(rule: string, subject: string, severity: Finding['severity'] = 'warning'): Finding {
  return { rule, subject, severity, message: `${rule} on ${subject}` };
}

function target(index: number, outcome: TargetRecord['outcome']): TargetRecord {
  return {
    key: `wg-1/ws-${index}`,
    workgroupId: 'wg-1',
    workgroupName: 'dev-core',
    workspaceId: `ws-${index}`,
    workspaceName: `ws${index}`,
    outcome,
    attempts: 1,
    requestIds: [`req-${index}`],
    ...(outcome === 'failed'
      ? {
          error: {
            message: 'Internal-Error: boom',
            type: 'Internal-Error',
            status: 500,
            requestId: `req-${index}`,
          },
        }
      : {}),
  };
}

/**
 * A finished run of `job` with a fresh run id, finishing a second after the previous one built
 * here: `failed` and `succeeded` targets as counted, and the given findings.
 */
export function runSummary(
  options: {
    job?: string;
    succeeded?: number;
    failed?: number;
    findings?: Finding[];
    dryRun?: boolean;
    outcome?: RunSummary['outcome'];
    reason?: string;
  } = {},
): RunSummary {
  runs++;
  const targets = [
    ...Array.from({ length: options.succeeded ?? 2 }, (_, i) => target(i, 'succeeded')),
    ...Array.from({ length: options.failed ?? 0 }, (_, i) => target(100 + i, 'failed')),
  ];
  const counts = countTargets(targets);
  const outcome =
    options.outcome ??
    (counts.failed === 0 ? 'succeeded' : counts.failed === counts.total ? 'failed' : 'partial');
  const finishedAt = new Date(Date.UTC(2026, 2, 27, 20, 0, runs)).toISOString();
  return {
    runId: `run-${runs}`,
    job: options.job ?? 'audit',
    action: 'allow-list-audit',
    trigger: 'schedule',
    dryRun: options.dryRun ?? false,
    scheduledAt: '2026-03-27T20:00:00.000Z',
    startedAt: '2026-03-27T20:00:00.000Z',
    finishedAt,
    durationMs: 1000,
    outcome,
    ...(options.reason ? { reason: options.reason } : {}),
    counts,
    targets,
    findings: options.findings ?? [],
    requestIds: [],
  };
}

/**
 * A window's reconciliation that paused and resumed as given, with the record `evidence.window`
 * its action writes; `streak` is the drift streak it reports ([id, reconciliations]).
 */
export function windowRun(
  options: {
    paused?: number;
    resumed?: number;
    failed?: number;
    streak?: [string, number];
    after?: number;
    evidence?: boolean;
  } = {},
): RunSummary {
  const summary = runSummary({ job: 'office', succeeded: (options.paused ?? 0) + (options.resumed ?? 0) });
  const [id, reconciliations] = options.streak ?? [];
  const window = {
    up: false,
    period: 'down@2026-11-20T18:30:00.000Z',
    workspaces: 10,
    drift: id === undefined ? 0 : 2,
    held: 0,
    acted: (options.paused ?? 0) + (options.resumed ?? 0),
    stranded: 0,
    done: {
      paused: options.paused ?? 0,
      resumed: options.resumed ?? 0,
      failed: options.failed ?? 0,
      hourlyCostAvoided: options.paused ? options.paused * 1.5 : null,
      currency: options.paused ? 'EUR' : null,
      unpriced: 0,
    },
    ...(id === undefined
      ? {}
      : { driftStreak: { id, reconciliations, workspaces: 2, since: '2026-11-20T18:31:00.000Z' } }),
    driftPersistsAfter: options.after ?? 3,
  };
  return {
    ...summary,
    action: 'reconcile-window',
    ...(options.evidence === false ? {} : { evidence: { window } }),
  };
}
