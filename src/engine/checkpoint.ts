import type { z } from 'zod';
import type { Logger } from '../log/index.js';
import type { TargetRecord } from './summary.js';

/**
 * Where a run keeps each target's final record as soon as it has one, so a run picked up again
 * after its worker died redoes nothing that was finished; and, while a target is under way, its
 * action's progress record, so the worker that picks the run up carries on from where the last
 * attempt stopped (a drill whose restore was sent does not restore again).
 */
export interface CheckpointStore {
  /** The run's records by target key; with `keys`, those targets' alone (a part of a split run reads its own). */
  load(runId: string, keys?: readonly string[]): Promise<Map<string, TargetRecord>>;
  /** How many targets of the run have a record: what a split run's progress reads, without loading them. */
  count(runId: string): Promise<number>;
  save(runId: string, record: TargetRecord): Promise<void>;
  /** The progress record last saved for a target of the run, as stored (undefined: none). */
  loadProgress(runId: string, key: string): Promise<unknown>;
  /** Replaces a target's progress record; resolves once it is stored. */
  saveProgress(runId: string, key: string, progress: unknown): Promise<void>;
  /** Drops the run's records and progress records. */
  clear(runId: string): Promise<void>;
}

/**
 * An action's record of what one target's step has done so far, kept with the run's checkpoint:
 * it outlives a failed attempt and a takeover by another worker. Plain JSON data only.
 */
export interface ProgressRecord {
  /** What an earlier attempt wrote, parsed by `schema`; undefined when nothing (readable) was written. */
  read<S extends z.ZodType>(schema: S): Promise<z.output<S> | undefined>;
  write(progress: unknown): Promise<void>;
}

/** The progress record of target `key` of run `runId` in `store`. */
export function progressRecord(
  store: CheckpointStore,
  runId: string,
  key: string,
  log: Logger,
): ProgressRecord {
  return {
    async read(schema) {
      const stored = await store.loadProgress(runId, key);
      if (stored === undefined) return undefined;
      const parsed = schema.safeParse(stored);
      if (parsed.success) return parsed.data;
      // an unreadable record is as good as none: the step starts over, as it did before records
      log.warn({ runId, target: key }, 'dropped an unreadable progress record');
      return undefined;
    },
    write: (progress) => store.saveProgress(runId, key, progress),
  };
}

/** For runs that live and die with one process (`run --inline`). */
export class MemoryCheckpointStore implements CheckpointStore {
  readonly #runs = new Map<string, Map<string, TargetRecord>>();
  readonly #progress = new Map<string, Map<string, string>>();

  async load(runId: string, keys?: readonly string[]): Promise<Map<string, TargetRecord>> {
    const records = new Map(this.#runs.get(runId));
    if (!keys) return records;
    const wanted = new Set(keys);
    return new Map([...records].filter(([key]) => wanted.has(key)));
  }

  async count(runId: string): Promise<number> {
    return this.#runs.get(runId)?.size ?? 0;
  }

  async save(runId: string, record: TargetRecord): Promise<void> {
    let records = this.#runs.get(runId);
    if (!records) {
      records = new Map();
      this.#runs.set(runId, records);
    }
    records.set(record.key, record);
  }

  async loadProgress(runId: string, key: string): Promise<unknown> {
    const text = this.#progress.get(runId)?.get(key);
    // stored as text, as in Redis: what is read back is a copy, never the object written
    return text === undefined ? undefined : JSON.parse(text);
  }

  async saveProgress(runId: string, key: string, progress: unknown): Promise<void> {
    let records = this.#progress.get(runId);
    if (!records) {
      records = new Map();
      this.#progress.set(runId, records);
    }
    records.set(key, JSON.stringify(progress));
  }

  async clear(runId: string): Promise<void> {
    this.#runs.delete(runId);
    this.#progress.delete(runId);
  }
}
