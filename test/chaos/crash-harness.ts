import { type EngineHarness, useEngineHarness } from '../helpers/engine.js';

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

/**
 * A private Redis and a simulator of 10 × 5 workspaces whose pauses take 80 ms, for a file that
 * kills workers mid-run; engines and worker processes for each test. The workers run the build,
 * which must be fresher than every source.
 */
export function useCrashHarness(): EngineHarness {
  return useEngineHarness(
    FLEET,
    { faults: { latencyMs: 80, operations: ['pauseWorkspace'] } },
    { built: true },
  );
}
