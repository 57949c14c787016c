import { SET_TICK_IF_LATER } from './lua.js';
import { RedisStore } from './redis-store.js';

/**
 * The last tick of each job that a scheduler handed over or recorded, so a scheduler that was
 * down (or lost Redis) knows what it missed. Shared by every scheduler replica.
 */
export class LastTicks extends RedisStore {
  /** Each job's last tick (epoch ms), in the order of `jobs`; undefined for a job never ticked. */
  async get(jobs: readonly string[]): Promise<(number | undefined)[]> {
    if (jobs.length === 0) return [];
    const values = await this.redis.mget(jobs.map((job) => this.keys.lastTick(job)));
    return values.map((value) => {
      const at = value ? Number(value) : Number.NaN;
      return Number.isFinite(at) ? at : undefined;
    });
  }

  /**
   * Records each job's tick as handled, all in one round trip. Two schedulers may record the same
   * tick, or an older one late: a job's last tick only ever moves forward.
   */
  async advance(ticks: readonly (readonly [job: string, at: Date])[]): Promise<void> {
    await SET_TICK_IF_LATER.runEach(
      this.redis,
      ticks.map(([job, at]) => ({ keys: [this.keys.lastTick(job)], args: [String(at.getTime())] })),
    );
  }
}
