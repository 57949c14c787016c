import { HDEL_IF_EQUAL } from './lua.js';
import { RedisStore } from './redis-store.js';

/**
 * The overdue episodes told, one per job, as raw text: the notifier owns their shape. Several
 * schedulers check the same jobs; Redis decides which of them tells the sinks, once.
 */
export class OverdueEpisodes extends RedisStore {
  /** Every open episode, by job. */
  async all(): Promise<Map<string, string>> {
    return new Map(Object.entries(await this.redis.hgetall(this.keys.overdue)));
  }

  /** Opens an episode for `job` unless one is open: true for the one caller that opened it. */
  async open(job: string, episode: string): Promise<boolean> {
    return (await this.redis.hsetnx(this.keys.overdue, job, episode)) === 1;
  }

  /** Closes the episode `job` has if it is still `episode`: true for the one caller that closed it. */
  async close(job: string, episode: string): Promise<boolean> {
    return (await HDEL_IF_EQUAL.run(this.redis, [this.keys.overdue], [job, episode])) === 1;
  }
}
