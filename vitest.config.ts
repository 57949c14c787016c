import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Files that spend over a minute waiting (the demo runs for 75 s). Without a results cache, as on
 * a fresh CI checkout, vitest starts the biggest files first and a short file like this one last,
 * with the other worker idle until it ends: it goes first instead.
 */
const LONG_RUNNING = ['test/integration/demo/demo.test.ts'];

class LongRunningFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const long = (spec: TestSpecification) => LONG_RUNNING.some((file) => spec.moduleId.endsWith(file));
    return [...sorted.filter(long), ...sorted.filter((spec) => !long(spec))];
  }
}

export default defineConfig({
  test: {
    setupFiles: ['test/setup.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    pool: 'forks',
    sequence: { sequencer: LongRunningFirst },
    projects: [
      {
        extends: true,
        test: {
          // no Redis, no child process, no build: the loop to run while editing
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          // two files at a time even on 2 cores, where vitest's default is one
          maxWorkers: 2,
          // files share a worker's loaded modules: half the CPU. A file that mocks a module
          // imports what uses it after vi.resetModules() (test/unit/policy/single-parse.test.ts).
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          // real Redis, the simulator and the built CLI
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          // most of an integration file's time is spent waiting on ticks, timers and child
          // processes, so two files share 2 cores well; projects in one group need one figure
          maxWorkers: 2,
          // files share a worker's loaded modules (bullmq, fastify, the engine) instead of loading
          // them again: a third less CPU. Each file stops what it starts and mocks nothing.
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          // Redis killed and restarted, workers crashed mid-run: short locks and per-second ticks
          // that a second file's load would turn into false failures, so one file at a time,
          // after the other projects
          name: 'chaos',
          include: ['test/chaos/**/*.test.ts'],
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
