import type { TargetRecord } from './summary.js';

/**
 * Where a run keeps each target's final record as soon as it has one, so a run picked up again
 * after its worker died redoes nothing that was finished.
 */
export interface CheckpointStore {
  load(runId: string): Promise<Map<string, TargetRecord>>;
  save(runId: string, record: TargetRecord): Promise<void>;
  clear(runId: string): Promise<void>;
}

/** For runs that live and die with one process (`run --inline`). */
export class MemoryCheckpointStore implements CheckpointStore {
  readonly #runs = new Map<string, Map<string, TargetRecord>>();

  async load(runId: string): Promise<Map<string, TargetRecord>> {
    return new Map(this.#runs.get(runId));
  }

  async save(runId: string, record: TargetRecord): Promise<void> {
    let records = this.#runs.get(runId);
    if (!records) {
      records = new Map();
      this.#runs.set(runId, records);
    }
    records.set(record.key, record);
  }

  async clear(runId: string): Promise<void> {
    this.#runs.delete(runId);
  }
}
