import { createRequire } from 'node:module';
import type * as Package from 'bullmq';

const require = createRequire(import.meta.url);

/**
 * The BullMQ classes nightshift constructs or throws, required from the modules that define them.
 * The package's index requires every backend and client it ships (PostgreSQL with its SQL, Bun,
 * Valkey GLIDE, node-redis, sandboxed processors), which no role uses. These are the very
 * modules the index re-exports, so the classes are the package's own
 * (test/unit/queue/bullmq.test.ts holds them to it); types still come from `bullmq`.
 */
export const BullMQ = {
  ...(require('bullmq/dist/cjs/classes/queue.js') as Pick<typeof Package, 'Queue'>),
  ...(require('bullmq/dist/cjs/classes/worker.js') as Pick<typeof Package, 'Worker'>),
  ...(require('bullmq/dist/cjs/classes/errors/index.js') as Pick<
    typeof Package,
    'DelayedError' | 'UnrecoverableError' | 'WaitingError'
  >),
};
