export {
  compactInstant,
  createRunQueue,
  enqueueRuns,
  manualRunId,
  type RunJobData,
  type RunJobResult,
  scheduledRunId,
} from './run-queue.js';
export { RunWorker } from './run-worker.js';
