import type { PolicyJob } from '../policy/index.js';
import type { CheckpointStore } from './checkpoint.js';

/**
 * Shorter values from `${VAR}` are replaced only where they are a whole string: inside other text,
 * a value like `1` or `ops` is more likely something else than the variable.
 */
export const MIN_EMBEDDED_LENGTH = 8;

/** Deep copies of what a run shows or stores, with the job's `${VAR}` values as written. */
export type AsWritten = <T>(value: T) => T;

function isPlainObject(value: object): value is Record<string, unknown> {
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * The one rule for values that came from `${VAR}` in a job's `with:`: the action gets the value,
 * and everything else (its run summary: targets' reasons, details and errors, evidence, findings;
 * its checkpoints in Redis; its log lines) shows the text the policy file has, `${DRILL_BACKUP_ID}`.
 * A string equal to such a value is replaced whole; a value of at least MIN_EMBEDDED_LENGTH
 * characters is replaced inside other strings too (`restored ${DRILL_BACKUP_ID} in 4.2s`). Keys are
 * left alone, and so are values that are not plain data (errors, dates).
 */
export function asWrittenFor(job: Pick<PolicyJob, 'secretParams'>): AsWritten {
  const params = job.secretParams
    .filter(({ value, written }) => value !== '' && value !== written)
    // longest first, so a value inside a longer one does not break the longer one's replacement
    .sort((a, b) => b.value.length - a.value.length);
  if (params.length === 0) return (value) => value;
  const whole = new Map<string, string>();
  for (const { value, written } of params) if (!whole.has(value)) whole.set(value, written);
  const embedded = params.filter(({ value }) => value.length >= MIN_EMBEDDED_LENGTH);

  const text = (input: string): string => {
    const exact = whole.get(input);
    if (exact !== undefined) return exact;
    let output = input;
    for (const { value, written } of embedded) {
      if (output.includes(value)) output = output.split(value).join(written);
    }
    return output;
  };
  const copy = (value: unknown): unknown => {
    if (typeof value === 'string') return text(value);
    if (Array.isArray(value)) return value.map(copy);
    if (value !== null && typeof value === 'object' && isPlainObject(value)) {
      return Object.fromEntries(Object.entries(value).map(([key, entry]) => [key, copy(entry)]));
    }
    return value;
  };
  return copy as AsWritten;
}

/** A checkpoint store that keeps each target's record and progress record as written (see asWrittenFor). */
export function checkpointsAsWritten(store: CheckpointStore, asWritten: AsWritten): CheckpointStore {
  return {
    load: (runId, keys) => store.load(runId, keys),
    count: (runId) => store.count(runId),
    save: (runId, record) => store.save(runId, asWritten(record)),
    loadProgress: (runId, key) => store.loadProgress(runId, key),
    saveProgress: (runId, key, progress) => store.saveProgress(runId, key, asWritten(progress)),
    clear: (runId) => store.clear(runId),
  };
}
