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
  /** When it ends by itself (ISO, UTC); none: until someone unsuspends it. */
  until: z.iso.datetime().optional(),
});
export type Suspension = z.infer<typeof SuspensionSchema>;

/** Why a run of a suspended job is skipped, as its summary says: `suspended since <since> until <until> (<reason>)`. */
export function describeSuspension({ since, until, reason }: Suspension): string {
  return `suspended since ${since}${until ? ` until ${until}` : ''}${reason ? ` (${reason})` : ''}`;
}

/** Whether a suspension covers the instant `at` (epoch ms): one with an end covers what comes before it. */
export function suspendsAt(suspension: Suspension | undefined, at: number): suspension is Suspension {
  return suspension !== undefined && (suspension.until === undefined || Date.parse(suspension.until) > at);
}

/** What `suspend` changes: an omitted field keeps its value; `until: null` makes it open-ended. */
export interface SuspendRequest {
  reason?: string | undefined;
  by?: string | undefined;
  until?: string | null | undefined;
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
   * Suspends a job, or updates the reason, author or end of a suspension (keeping `since`; an
   * omitted field keeps its old value). A suspension that has ended is replaced. True if anything
   * changed.
   */
  async suspend(job: string, { reason, by, until }: SuspendRequest = {}): Promise<boolean> {
    for (;;) {
      const old = await this.redis.hget(this.keys.suspended, job);
      const read = old === null ? undefined : readSuspension(job, old);
      const current = suspendsAt(read, this.clock.now()) ? read : undefined;
      const nextReason = reason ?? current?.reason;
      const nextBy = by ?? current?.by;
      const nextUntil = until === null ? undefined : (until ?? current?.until);
      if (current && current.reason === nextReason && current.by === nextBy && current.until === nextUntil)
        return false;
      const next: Suspension = {
        job,
        since: current?.since ?? new Date(this.clock.now()).toISOString(),
        ...(nextReason === undefined ? {} : { reason: nextReason }),
        ...(nextBy === undefined ? {} : { by: nextBy }),
        ...(nextUntil === undefined ? {} : { until: nextUntil }),
      };
      const set = await COMPARE_AND_SET_FIELD.run(
        this.redis,
        [this.keys.suspended],
        [job, old === null ? '0' : '1', old ?? '', JSON.stringify(next)],
      );
      if (set === 1) return true;
    }
  }

  /** True if the job was suspended (a suspension that has ended is removed, and was not). */
  async unsuspend(job: string): Promise<boolean> {
    const text = await this.redis.hget(this.keys.suspended, job);
    if (text === null) return false;
    const deleted = (await this.redis.hdel(this.keys.suspended, job)) === 1;
    return deleted && suspendsAt(parseSuspension(job, text), this.clock.now());
  }

  /** The job's suspension in force now; one that has ended is none. */
  async get(job: string): Promise<Suspension | undefined> {
    const text = await this.redis.hget(this.keys.suspended, job);
    const suspension = text === null ? undefined : parseSuspension(job, text);
    return suspendsAt(suspension, this.clock.now()) ? suspension : undefined;
  }

  /** The suspensions in force now; those that have ended are left out. */
  async all(): Promise<Map<string, Suspension>> {
    const fields = await this.redis.hgetall(this.keys.suspended);
    const now = this.clock.now();
    return new Map(
      Object.entries(fields)
        .map(([job, text]) => [job, parseSuspension(job, text)] as const)
        .filter(([, suspension]) => suspendsAt(suspension, now)),
    );
  }
}
