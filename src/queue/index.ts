export { queueApprovedRun } from './approval-gate.js';
export {
  compactInstant,
  createRunQueue,
  enqueueRuns,
  manualRunId,
  queuePrefix,
  type RunJobData,
  type RunJobResult,
  scheduledRunId,
} from './run-queue.js';
export { keepRun, type RunKeeping } from './run-recorder.js';
export { RunWorker } from './run-worker.js';
export type { RunWorkerOptions, RunWorkerStores } from './run-worker-options.js';
export { type RunUnderWay, runsUnderWay } from './under-way.js';
