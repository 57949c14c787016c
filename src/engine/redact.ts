import { type HideSecrets, hideSecrets, type PolicyJob } from '../policy/index.js';
import type { CheckpointStore } from './checkpoint.js';

/**
 * What a run shows and stores (its summary: targets' reasons, details and errors, evidence,
 * findings; its checkpoints and progress records in Redis; its log lines), with each of the
 * policy's secret values as its `${NAME}`; only the action gets the values. Every other value,
 * a backup id from `${DRILL_BACKUP_ID}` say, is shown as it is.
 */
export function secretsHiddenFor(job: Pick<PolicyJob, 'secrets'>): HideSecrets {
  return hideSecrets(job.secrets);
}

/** A checkpoint store that keeps each target's record and progress record without secrets (see secretsHiddenFor). */
export function checkpointsWithoutSecrets(store: CheckpointStore, hide: HideSecrets): CheckpointStore {
  return {
    load: (runId, keys) => store.load(runId, keys),
    count: (runId) => store.count(runId),
    save: (runId, record) => store.save(runId, hide(record)),
    loadProgress: (runId, key) => store.loadProgress(runId, key),
    saveProgress: (runId, key, progress) => store.saveProgress(runId, key, hide(progress)),
    clear: (runId) => store.clear(runId),
  };
}
