import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RunSummary } from '../../src/engine/index.js';
import { scheduledRunId } from '../../src/queue/run-queue.js';
import type { EdgeDrillReport, ResolvedEdgeOptions } from './edge-drill.js';
import {
  check,
  notActive,
  ownedBy,
  pauseCalls,
  runLine,
  summariesVsSimulator,
} from './edge-drill-figures.js';
import { drillReport } from './edge-drill-result.js';
import { openStage, type Stage } from './edge-drill-stage.js';
import { runNightshift } from './nightshift-process.js';

/**
 * The window scenarios of the edge drill (redis-outage, sigkill, sentinel): bench/harness/edge-drill.ts
 * says what each does. Timeline: the workers start; the off period's edge is chosen; the scheduler
 * starts; `outageAfterS` after the edge the fault strikes; at the uptime start the window resumes
 * what it owns; once that settled, `nightshift drift` runs, the processes stop and the figures are
 * taken.
 */

export const WINDOW = 'drill-window';
const MINUTE = 60_000;

/** `Mon-Sun HH:MM-HH:MM` (UTC): uptime everywhere but the off period [`from`, `to`), two whole minutes. */
export function uptimeOutside(from: number, to: number): string {
  const at = (ms: number) => new Date(ms).toISOString().slice(11, 16);
  // uptime runs from the off period's end round the clock to its start: an end before the start crosses midnight
  return `Mon-Sun ${at(to)}-${at(from)}`;
}

export function windowPolicy(uptime: string, everyS: number, concurrency: number | undefined): string {
  return `version: 1
defaults:
  timezone: UTC
windows:
  ${WINDOW}:
    target: { workgroups: ["*"], exclude: ["prod-*"] }
    uptime: "${uptime}"
    enforce: true
    resume: owned
    every: ${everyS}s
${concurrency === undefined ? '' : `    concurrency: ${concurrency}\n`}`;
}

const ran = (run: RunSummary) => run.outcome !== 'skipped' && run.outcome !== 'missed';
const scheduled = (run: RunSummary) => Date.parse(run.scheduledAt ?? '');

/** Whether the uptime start has settled: a reconciliation of uptime ran, owes nothing more, and no workspace is mid-transition. */
async function handedBack(stage: Stage, uptimeAt: number): Promise<boolean> {
  const inUptime = (await stage.history.list({ job: WINDOW, limit: 10_000 }))
    .filter((run) => scheduled(run) >= uptimeAt)
    .sort((a, b) => scheduled(a) - scheduled(b));
  const first = inUptime.find(ran);
  if (!first) return false;
  // what the window still owns is resumed by its next reconciliation: wait for one, not longer
  const owesNothing =
    ownedBy(await stage.ledger.all(), WINDOW).length === 0 ||
    inUptime.some((run) => ran(run) && scheduled(run) > scheduled(first));
  const moving = stage.sim.state.workspaces.some(
    (ws) => ws.status === 'Stopping' || ws.status === 'Resuming',
  );
  return owesNothing && !moving;
}

async function strike(stage: Stage, options: ResolvedEdgeOptions, edgeRunId: string): Promise<void> {
  switch (options.scenario) {
    case 'redis-outage':
      stage.note('Redis stopped (SIGTERM)');
      await stage.haltRedis();
      await sleep(options.outageS * 1000);
      await stage.restartRedis();
      stage.note('Redis started again (same port, same data)');
      return;
    case 'sigkill': {
      const executing = new Set(stage.logs.running(edgeRunId).map((e) => e.process));
      const victim = stage.processes.find((p) => executing.has(p.name) && p.exitedAt() === undefined);
      if (!victim) {
        stage.note('!! no worker was executing the edge run: none killed');
        return;
      }
      await victim.stop('SIGKILL');
      stage.note(`${victim.name} SIGKILLed while executing the edge run`);
      await sleep(options.restartAfterS * 1000);
      const slot = Number(/worker-(\d+)/.exec(victim.name)?.[1]);
      const next = await stage.startWorker(slot);
      stage.note(`${next.name} started`);
      return;
    }
    case 'sentinel':
      await stage.killPrimary();
      stage.note('Redis primary SIGKILLed (the Sentinels fail over to the replica)');
      return;
    case 'split-outage':
      throw new Error('split-outage is not a window scenario');
  }
}

/** When the off period runs and which reconciliation of the window is its edge. */
interface OffPeriod {
  offFrom: number;
  uptimeAt: number;
  edgeAt: number;
  edgeRunId: string;
  policyFile: string;
}

/**
 * Chooses the off period, writes the window's policy and starts the scheduler on it; the edge is
 * the off period's start (`edge: minute`) or the first reconciliation the scheduler announces.
 */
async function scheduleOffPeriod(stage: Stage, options: ResolvedEdgeOptions): Promise<OffPeriod> {
  const now = Date.now();
  const minute = options.edge === 'minute';
  const offFrom = minute
    ? Math.ceil((now + options.leadS * 1000) / MINUTE) * MINUTE
    : Math.floor(now / MINUTE) * MINUTE;
  const uptimeAt = minute
    ? offFrom + options.offMinutes * MINUTE
    : Math.ceil((now + (4 + options.everyS + options.minOffS) * 1000) / MINUTE) * MINUTE;
  const policyFile = join(stage.logDir, 'policy.yaml');
  writeFileSync(
    policyFile,
    windowPolicy(uptimeOutside(offFrom, uptimeAt), options.everyS, options.concurrency),
  );
  const scheduler = await stage.startScheduler(policyFile);
  const next = stage.logs.announced.find((a) => a.process === scheduler.name && a.job === WINDOW)?.next;
  if (next === undefined || (minute && next > offFrom) || next >= uptimeAt)
    throw new Error(
      `the scheduler announced the window's next reconciliation at ${next === undefined ? 'none' : new Date(next).toISOString()}, not before the off period's end; it started too late`,
    );
  const edgeAt = minute ? offFrom : next;
  return { offFrom, uptimeAt, edgeAt, edgeRunId: scheduledRunId(WINDOW, new Date(edgeAt)), policyFile };
}

/** Checks every second, up to `settleTimeoutS` past the uptime start, whether the window handed back. */
async function settleUptime(stage: Stage, options: ResolvedEdgeOptions, uptimeAt: number): Promise<boolean> {
  const settleBy = uptimeAt + options.settleTimeoutS * 1000;
  let settled = false;
  while (!settled && Date.now() < settleBy) {
    settled = await handedBack(stage, uptimeAt);
    if (!settled) await sleep(1000);
  }
  stage.note(
    settled
      ? 'the uptime start settled'
      : `!! not settled ${options.settleTimeoutS} s after the uptime start`,
  );
  return settled;
}

export async function runWindowScenario(
  options: ResolvedEdgeOptions,
  { logDir, progress }: { logDir: string | undefined; progress: (line: string) => void },
): Promise<EdgeDrillReport> {
  const began = Date.now();
  const loadStart = loadavg();
  const stage = await openStage(options, {
    redis: options.scenario === 'sentinel' ? 'sentinels' : 'server',
    env: {},
    logDir,
    progress,
  });
  try {
    await Promise.all(Array.from({ length: options.workers }, (_, i) => stage.startWorker(i + 1)));
    const { offFrom, uptimeAt, edgeAt, edgeRunId, policyFile } = await scheduleOffPeriod(stage, options);
    progress(
      `off period ${new Date(offFrom).toISOString()} to ${new Date(uptimeAt).toISOString()}; edge ${edgeRunId}`,
    );

    await sleep(Math.max(0, edgeAt + options.outageAfterS * 1000 - Date.now()));
    const midEdge = stage.logs.running(edgeRunId).length > 0;
    stage.note(
      `${options.outageAfterS} s after the edge; the edge run is ${midEdge ? 'executing' : 'NOT executing'}`,
    );
    await strike(stage, options, edgeRunId);

    await sleep(Math.max(0, uptimeAt - Date.now()));
    stage.note('uptime starts');
    const settled = await settleUptime(stage, options, uptimeAt);
    const drift = await runNightshift(['drift', policyFile], stage.env);
    const driftLine = drift.stdout.trim().split('\n').at(-1) ?? drift.stderr.trim();
    stage.note(`nightshift drift exited ${drift.code}: ${driftLine}`);
    await stage.stopProcesses();

    // ---- figures ------------------------------------------------------------------------
    const targets = stage.targetKeys();
    const status = stage.statuses();
    const calls = pauseCalls(stage.sim.requests(), offFrom, uptimeAt);
    const runs = (await stage.history.list({ job: WINDOW, limit: 10_000 }))
      .filter((run) => scheduled(run) >= offFrom)
      .sort((a, b) => scheduled(a) - scheduled(b));
    const offRuns = runs.filter((run) => scheduled(run) < uptimeAt);
    return await drillReport({
      options,
      stage,
      began,
      loadStart,
      struckRun: edgeRunId,
      zeroAt: edgeAt,
      targets: targets.size,
      owner: WINDOW,
      calls,
      versus: summariesVsSimulator(offRuns, calls),
      said: 'acted',
      stranded: notActive(
        [...calls.paused].filter((key) => targets.has(key)),
        status,
      ),
      unowned: undefined,
      runs: runs.map((run) => ({ ...runLine(run), period: scheduled(run) < uptimeAt ? 'off' : 'up' })),
      handBack: { command: `nightshift drift ${policyFile}`, code: drift.code, line: driftLine },
      checks: [
        check(
          'the fault struck while the edge run was executing',
          midEdge,
          midEdge ? 'yes' : 'no: nothing was measured',
        ),
        check(
          'the uptime start settled',
          settled,
          settled ? 'yes' : `not within ${options.settleTimeoutS} s`,
        ),
        check('drift exits 0 after the hand-back', drift.code === 0, String(drift.code)),
      ],
    });
  } finally {
    await stage.close();
  }
}
