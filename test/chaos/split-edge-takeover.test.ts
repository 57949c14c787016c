import { describe, expect, it } from 'vitest';
import {
  type CliProcess,
  eventually,
  logged,
  logLines,
  pauseRequests,
  workspacesNot,
} from '../helpers/engine.js';
import { TARGETS, useCrashHarness } from './crash-harness.js';

const crash = useCrashHarness();

/** Workers that split runs into parts of 10 and take one run or part at a time. */
const PARTS_OF_TEN = { NIGHTSHIFT_RUN_PART_SIZE: '10', NIGHTSHIFT_WORKER_CONCURRENCY: '1' };

/** A window whose one minute of uptime a day is twelve hours away: it is off now, every workspace owed a pause. */
function offWindow(): string {
  const hour = (new Date().getUTCHours() + 12) % 24;
  const at = `${String(hour).padStart(2, '0')}:00`;
  const end = `${String(hour).padStart(2, '0')}:01`;
  return `version: 1
windows:
  edge:
    target: { workgroups: ["*"] }
    uptime: "Mon-Sun ${at}-${end}"
    timezone: UTC
    concurrency: 2
`;
}

describe('a window edge whose worker is killed once it has split the edge into parts', () => {
  it('is resumed from those parts: no workspace worked by the run and a part at once, each paused once, every pause in the summary, those in flight at the kill included', async () => {
    const engine = crash.engine('split-edge-takeover');
    const runId = await engine.enqueue(offWindow(), 'edge');
    const workers = [crash.startWorker(engine, PARTS_OF_TEN), crash.startWorker(engine, PARTS_OF_TEN)];
    const splitter: CliProcess = await Promise.any(
      workers.map(async (worker) => {
        await logged(worker, 'run split into parts');
        return worker;
      }),
    );
    // killed with pauses of its own in flight (two at a time): accepted, neither answered nor checkpointed
    await eventually('the splitting worker pausing', () =>
      logLines(splitter).some((line) => line.msg === 'api call' && line.operation === 'pauseWorkspace'),
    );
    expect(await splitter.stop('SIGKILL')).toBe('SIGKILL');
    crash.startWorker(engine, PARTS_OF_TEN);

    const run = await engine.waitForRun(runId, 40_000);
    expect(run).toMatchObject({
      outcome: 'succeeded',
      counts: { total: TARGETS, succeeded: TARGETS, skipped: 0, failed: 0 },
    });
    expect(run.evidence?.window).toMatchObject({ up: false, workspaces: TARGETS, acted: TARGETS });
    await eventually('every workspace Stopped', () => workspacesNot(crash.sim, 'Stopped').length === 0);
    const calls = pauseRequests(crash.sim);
    expect(calls.size).toBe(TARGETS);
    // a pause in flight when its worker died may be sent again and refused (400): never accepted twice
    for (const made of calls.values()) expect(made.filter((call) => call.status === 200)).toHaveLength(1);
    const owned = await engine.state.ledger.all();
    expect(
      [...owned.values()].filter((record) => record.owner === 'edge' && record.runId === runId),
    ).toHaveLength(TARGETS);
  }, 60_000);
});
