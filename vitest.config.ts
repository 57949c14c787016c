import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    setupFiles: ['test/setup.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: {
          // no Redis, no child process, no build: the loop to run while editing
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
        },
      },
      {
        extends: true,
        test: {
          // real Redis, the simulator and the built CLI
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
        },
      },
      {
        extends: true,
        test: {
          // Redis killed and restarted, processes crashed mid-run
          name: 'chaos',
          include: ['test/chaos/**/*.test.ts'],
        },
      },
    ],
  },
});
