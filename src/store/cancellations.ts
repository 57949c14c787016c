import { CHECKPOINT_TTL_MS } from '../config/index.js';
import { type Cancellation, CancellationSchema } from '../engine/index.js';
import { parseJson } from './json.js';
import { RedisStore } from './redis-store.js';

/** Reads a cancellation as stored; undefined for none, or one this version cannot read. */
export function readCancellation(text: string | null | undefined): Cancellation | undefined {
  if (!text) return undefined;
  const parsed = CancellationSchema.safeParse(parseJson(text));
  return parsed.success ? parsed.data : undefined;
}

/**
 * Operators' requests to cancel runs (`cancel:<runId>`). Every execution of the run, its parts'
 * included, reads its run's with each lease renewal and stops starting targets. Kept as long as
 * checkpoints, so an execution resumed later still finds it.
 */
export class RunCancellations extends RedisStore {
  /** Asks for `runId` to be cancelled; the first request stands (`requested` false when there was one). */
  async request(
    runId: string,
    { by, reason }: { by: string; reason?: string | undefined },
  ): Promise<{ requested: boolean; cancellation: Cancellation }> {
    const record: Cancellation = {
      by,
      ...(reason ? { reason } : {}),
      at: new Date(this.clock.now()).toISOString(),
    };
    const key = this.keys.runCancel(runId);
    if ((await this.redis.set(key, JSON.stringify(record), 'PX', CHECKPOINT_TTL_MS, 'NX')) === 'OK')
      return { requested: true, cancellation: record };
    return { requested: false, cancellation: readCancellation(await this.redis.get(key)) ?? record };
  }

  async get(runId: string): Promise<Cancellation | undefined> {
    return readCancellation(await this.redis.get(this.keys.runCancel(runId)));
  }
}
