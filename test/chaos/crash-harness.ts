import { afterAll, afterEach, beforeAll } from 'vitest';
import type { SimulatorHandle } from '../../src/sim/index.js';
import {
  assertBuilt,
  type CliProcess,
  Engine,
  startFleetSim,
  startTakeoverWorker,
} from '../helpers/engine.js';
import { startTestRedis, type TestRedis } from '../helpers/redis.js';

const FLEET = { workgroups: 10, workspacesPerWorkgroup: 5 };
export const TARGETS = FLEET.workgroups * FLEET.workspacesPerWorkgroup;

/** A pause of the whole fleet, two at a time: with 80 ms a pause, a run takes a few seconds. */
export const POLICY = `version: 1
jobs:
  fleet-pause:
    schedule: "0 20 * * *"
    action: pause
    target: { workgroups: ["*"] }
    concurrency: 2
`;

/** What a file that kills workers mid-run gets: its Redis, its simulator, engines and workers, all stopped after it. */
export interface CrashHarness {
  readonly sim: SimulatorHandle;
  /** An Engine under a fresh prefix, closed after the test. */
  engine(label: string): Engine;
  /** A worker process that takes dead workers' runs over fast (startTakeoverWorker), SIGKILLed after the test. */
  startWorker(engine: Engine, env?: Record<string, string>): CliProcess;
}

/**
 * A private Redis and a simulator of 10 × 5 workspaces whose pauses take 80 ms, for the file;
 * engines and worker processes for each test. The workers run the build, which must be fresher
 * than every source.
 */
export function useCrashHarness(): CrashHarness {
  let server: TestRedis | undefined;
  let sim: SimulatorHandle | undefined;
  const engines: Engine[] = [];
  const workers: CliProcess[] = [];

  beforeAll(async () => {
    assertBuilt();
    [server, sim] = await Promise.all([
      startTestRedis(),
      startFleetSim(FLEET, { faults: { latencyMs: 80, operations: ['pauseWorkspace'] } }),
    ]);
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((worker) => worker.stop('SIGKILL')));
    for (const engine of engines.splice(0)) await engine.close();
  });
  afterAll(async () => {
    await sim?.close();
    await server?.stop();
  });

  return {
    get sim() {
      return sim as SimulatorHandle;
    },
    engine(label) {
      const engine = new Engine((server as TestRedis).url, label);
      engines.push(engine);
      return engine;
    },
    startWorker(engine, env = {}) {
      const worker = startTakeoverWorker(
        (server as TestRedis).url,
        (sim as SimulatorHandle).url,
        engine.prefix,
        env,
      );
      workers.push(worker);
      return worker;
    },
  };
}
