export {
  compactInstant,
  createRunQueue,
  enqueueRuns,
  manualRunId,
  type RunJobData,
  type RunJobResult,
  scheduledRunId,
} from './run-queue.js';
export { DEFAULT_LOCK_DURATION_MS, RunWorker } from './run-worker.js';
