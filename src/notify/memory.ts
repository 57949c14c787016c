import { NotifyStates, type NotifyStatesOptions, type RedisConnection } from '../store/index.js';
import { type SinkState, SinkStateSchema } from './events.js';

/** What each sink was last told about each job; see SinkState. */
export interface NotificationMemory {
  get(job: string, sink: string): Promise<SinkState | undefined>;
  /** Stores `state` unless the stored one comes from a run that finished later. */
  set(job: string, sink: string, state: SinkState): Promise<void>;
}

/** Orders two states by when their runs finished; ISO instants in UTC compare as strings. */
function isOlder(candidate: SinkState, stored: SinkState | undefined): boolean {
  return stored !== undefined && candidate.at < stored.at;
}

/** For `nightshift run --inline` and tests: forgets everything with the process. */
export class InMemoryNotificationMemory implements NotificationMemory {
  readonly #states = new Map<string, SinkState>();

  async get(job: string, sink: string): Promise<SinkState | undefined> {
    const state = this.#states.get(JSON.stringify([job, sink]));
    return state === undefined ? undefined : structuredClone(state);
  }

  async set(job: string, sink: string, state: SinkState): Promise<void> {
    const key = JSON.stringify([job, sink]);
    if (isOlder(state, this.#states.get(key))) return;
    this.#states.set(key, structuredClone(state));
  }
}

export type RedisNotificationMemoryOptions = NotifyStatesOptions;

/** The engine's memory, shared by every worker, under the engine's key prefix. */
export class RedisNotificationMemory implements NotificationMemory {
  readonly #states: NotifyStates;

  constructor(redis: RedisConnection, options: RedisNotificationMemoryOptions = {}) {
    this.#states = new NotifyStates(redis, options);
  }

  /** A state this version cannot read counts as none: its sink hears the run's changes afresh. */
  async get(job: string, sink: string): Promise<SinkState | undefined> {
    const parsed = SinkStateSchema.safeParse(await this.#states.get(job, sink));
    return parsed.success ? parsed.data : undefined;
  }

  async set(job: string, sink: string, state: SinkState): Promise<void> {
    await this.#states.setUnlessOlder(job, sink, state);
  }
}
