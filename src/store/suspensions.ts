import { z } from 'zod';
import { parseJson } from './json.js';
import { COMPARE_AND_SET_FIELD } from './lua.js';
import { RedisStore } from './redis-store.js';

export const SuspensionSchema = z.object({
  job: z.string(),
  /** When the job was first suspended (ISO, UTC); later suspends keep it. */
  since: z.iso.datetime(),
  reason: z.string().optional(),
  /** Who suspended it, e.g. the operator's name from the CLI. */
  by: z.string().optional(),
});
export type Suspension = z.infer<typeof SuspensionSchema>;

/** Why a run of a suspended job is skipped, as its summary says: `suspended since <since> (<reason>)`. */
export function describeSuspension({ since, reason }: Suspension): string {
  return `suspended since ${since}${reason ? ` (${reason})` : ''}`;
}

function readSuspension(job: string, text: string): Suspension | undefined {
  const parsed = SuspensionSchema.safeParse(parseJson(text));
  return parsed.success ? { ...parsed.data, job } : undefined;
}

/**
 * A record nobody can read still means somebody suspended the job: it stays suspended (failing
 * safe) until someone unsuspends it, rather than silently running again.
 */
export function parseSuspension(job: string, text: string): Suspension {
  return (
    readSuspension(job, text) ?? {
      job,
      since: new Date(0).toISOString(),
      reason: 'unreadable suspension record',
    }
  );
}

/** Which jobs an operator has suspended, shared by every scheduler and worker. */
export class Suspensions extends RedisStore {
  /**
   * Suspends a job, or updates the reason and author of a suspension (keeping `since`; an
   * omitted field keeps its old value). True if anything changed.
   */
  async suspend(job: string, { reason, by }: { reason?: string; by?: string } = {}): Promise<boolean> {
    for (;;) {
      const old = await this.redis.hget(this.keys.suspended, job);
      const current = old === null ? undefined : readSuspension(job, old);
      const nextReason = reason ?? current?.reason;
      const nextBy = by ?? current?.by;
      if (current && current.reason === nextReason && current.by === nextBy) return false;
      const next: Suspension = {
        job,
        since: current?.since ?? new Date(this.clock.now()).toISOString(),
        ...(nextReason === undefined ? {} : { reason: nextReason }),
        ...(nextBy === undefined ? {} : { by: nextBy }),
      };
      const set = await COMPARE_AND_SET_FIELD.run(
        this.redis,
        [this.keys.suspended],
        [job, old === null ? '0' : '1', old ?? '', JSON.stringify(next)],
      );
      if (set === 1) return true;
    }
  }

  /** True if the job was suspended. */
  async unsuspend(job: string): Promise<boolean> {
    return (await this.redis.hdel(this.keys.suspended, job)) === 1;
  }

  async get(job: string): Promise<Suspension | undefined> {
    const text = await this.redis.hget(this.keys.suspended, job);
    return text === null ? undefined : parseSuspension(job, text);
  }

  async all(): Promise<Map<string, Suspension>> {
    const fields = await this.redis.hgetall(this.keys.suspended);
    return new Map(Object.entries(fields).map(([job, text]) => [job, parseSuspension(job, text)]));
  }
}
