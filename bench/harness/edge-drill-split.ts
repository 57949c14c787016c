import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
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
import { eventually } from './eventually.js';
import { runNightshift } from './nightshift-process.js';

/**
 * The split-outage scenario of the edge drill: a `pause` job over every workgroup but `prod-*`,
 * more targets than NIGHTSHIFT_RUN_PART_SIZE, so its run is split into parts that both workers
 * work. Timeline: the workers start; the pause's tick is set a few seconds ahead (a 6-field cron)
 * and the scheduler starts; once half the run's targets are checkpointed Redis is stopped (SIGTERM)
 * for `outageS` and started again on the same port and data; once the run is recorded the drill
 * reads the ledger, runs `nightshift run <policy> split-resume` (a `resume` with `onlyPausedBy`
 * the pause job, through the queue) and takes the figures.
 */

const PAUSE = 'split-pause';
const RESUME = 'split-resume';

function splitPolicy(tick: Date, concurrency: number | undefined): string {
  const cron = [
    tick.getUTCSeconds(),
    tick.getUTCMinutes(),
    tick.getUTCHours(),
    tick.getUTCDate(),
    tick.getUTCMonth() + 1,
  ];
  const limit = concurrency === undefined ? '' : `    concurrency: ${concurrency}\n`;
  return `version: 1
defaults:
  timezone: UTC
targets:
  fleet: { workgroups: ["*"], exclude: ["prod-*"] }
jobs:
  ${PAUSE}:
    schedule: "${cron.join(' ')} *"
    action: pause
    target: fleet
${limit}  ${RESUME}:
    description: run by hand after the pause (nightshift run); the drill waits for the workspaces itself
    schedule: "0 0 1 1 *"
    action: resume
    target: fleet
    with: { onlyPausedBy: ${PAUSE}, waitReady: none }
${limit}`;
}

/** The resume's summary line from `nightshift run --json`. */
function resumeLine(stdout: string, stderr: string): string {
  try {
    const run = JSON.parse(stdout) as { outcome: string; counts: Record<string, number> };
    return `${run.outcome}: ${run.counts.succeeded} resumed, ${run.counts.skipped} skipped, ${run.counts.failed} failed`;
  } catch {
    return (stderr.trim() || stdout.trim()).split('\n').at(-1) ?? '';
  }
}

/**
 * Waits for half the run's targets to be checkpointed, then stops Redis for `outageS` and starts
 * it again; answers whether the run was executing when Redis went away.
 */
async function outageHalfway(
  stage: Stage,
  options: ResolvedEdgeOptions,
  run: { runId: string; tick: number; targets: number },
): Promise<boolean> {
  const checkpointed = () => stage.redis.hlen(stage.keys.runTargets(run.runId));
  const halfway = await eventually(
    'half the run checkpointed',
    async () => (await checkpointed()) >= run.targets / 2,
    Math.max(1_000, run.tick + options.settleTimeoutS * 1000 - Date.now()),
    100,
  ).catch(() => false);
  const midRun = halfway !== false && stage.logs.running(run.runId).length > 0;
  stage.note(
    `${await checkpointed()} of ${run.targets} targets checkpointed; the run is ${midRun ? 'executing' : 'NOT executing'}`,
  );
  stage.note('Redis stopped (SIGTERM)');
  await stage.haltRedis();
  await sleep(options.outageS * 1000);
  await stage.restartRedis();
  stage.note('Redis started again (same port, same data)');
  return midRun;
}

export async function runSplitScenario(
  options: ResolvedEdgeOptions,
  { logDir, progress }: { logDir: string | undefined; progress: (line: string) => void },
): Promise<EdgeDrillReport> {
  const began = Date.now();
  const loadStart = loadavg();
  const stage = await openStage(options, {
    redis: 'server',
    env: { NIGHTSHIFT_RUN_PART_SIZE: String(options.partSize) },
    logDir,
    progress,
  });
  try {
    await Promise.all(Array.from({ length: options.workers }, (_, i) => stage.startWorker(i + 1)));
    const tick = Math.ceil((Date.now() + options.leadS * 1000) / 1000) * 1000;
    const runId = scheduledRunId(PAUSE, new Date(tick));
    const policyFile = join(stage.logDir, 'policy.yaml');
    writeFileSync(policyFile, splitPolicy(new Date(tick), options.concurrency));
    await stage.startScheduler(policyFile);
    progress(`pause run ${runId}, parts of ${options.partSize}`);

    const targets = stage.targetKeys();
    const midRun = await outageHalfway(stage, options, { runId, tick, targets: targets.size });

    const run = await eventually(
      'the pause run recorded',
      () => stage.history.get(runId),
      Math.max(1_000, tick + options.settleTimeoutS * 1000 - Date.now()),
      500,
    ).catch(() => undefined);
    stage.note(run ? `the pause run recorded: ${run.outcome}` : '!! the pause run was not recorded');
    await stage.transitionsOver(options.transitionMs + 30_000);
    const ownedBefore = new Set(ownedBy(await stage.ledger.all(), PAUSE).map((record) => record.key));
    const resume = await runNightshift(['run', policyFile, RESUME, '--json'], stage.env, 10 * 60_000);
    const line = resumeLine(resume.stdout, resume.stderr);
    stage.note(`nightshift run ${RESUME} exited ${resume.code}: ${line}`);
    await stage.transitionsOver(options.transitionMs + 30_000);
    await stage.stopProcesses();

    // ---- figures ------------------------------------------------------------------------
    const status = stage.statuses();
    const calls = pauseCalls(stage.sim.requests(), tick, Number.POSITIVE_INFINITY);
    return await drillReport({
      options,
      stage,
      began,
      loadStart,
      struckRun: runId,
      zeroAt: tick,
      targets: targets.size,
      owner: PAUSE,
      calls,
      versus: summariesVsSimulator(run ? [run] : [], calls),
      said: 'succeeded',
      stranded: notActive(calls.paused, status),
      unowned: [...calls.paused].filter((key) => !ownedBefore.has(key)),
      runs: run ? [runLine(run)] : [],
      handBack: { command: `nightshift run ${policyFile} ${RESUME}`, code: resume.code, line },
      checks: [
        check(
          'Redis went away while the run was executing',
          midRun,
          midRun ? 'yes' : 'no: nothing was measured',
        ),
        check(
          'the pause run was recorded',
          run !== undefined,
          run ? run.outcome : `not within ${options.settleTimeoutS} s`,
        ),
        check('the resume exits 0', resume.code === 0, `${resume.code}: ${line}`),
      ],
    });
  } finally {
    await stage.close();
  }
}
