import { z } from 'zod';
import { parseJson } from './json.js';
import { LuaScript } from './lua.js';
import type { RedisConnection } from './redis.js';
import { positiveInteger, RedisStore, type StoreOptions } from './redis-store.js';

/** What a person can do that the audit trail records. */
export const AUDIT_ACTIONS = [
  'hold',
  'release',
  'suspend',
  'unsuspend',
  'cancel',
  'approve',
  'reject',
  'run',
  'adopt',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** One change, as whoever made it asked for it; `at` and `id` are filled in by Redis as it is appended. */
export const AuditRequestSchema = z.object({
  /** Who: `--by`, the user and host of the CLI, or the console's signed-in principal. */
  who: z.string().min(1),
  action: z.enum(AUDIT_ACTIONS),
  /** What it acted on: a job, a run id, a hold's pattern, a workspace. */
  subject: z.string().min(1),
  /** From where: `cli <user>@<host>` or `console <address>`. */
  where: z.string().min(1),
  why: z.string().optional(),
  /** What else the change carried (a hold's expiry, a run's parameters as their references). */
  details: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
});
export type AuditRequest = z.infer<typeof AuditRequestSchema>;

export const AuditEntrySchema = AuditRequestSchema.extend({
  /** The stream entry's id: `<ms>-<seq>` of Redis's clock. */
  id: z.string(),
  /** When Redis appended it (ISO, UTC). */
  at: z.iso.datetime(),
});
export type AuditEntry = z.infer<typeof AuditEntrySchema>;

export interface AuditTrailOptions extends StoreOptions {
  /** Entries older than this are dropped as new ones are appended. Default 30 days. */
  maxAgeMs?: number;
  /** Most entries kept. Default 10 000. */
  maxEntries?: number;
}

export interface ListAuditOptions {
  /** Only entries appended at or after this instant (epoch ms, Redis's clock). */
  sinceMs?: number;
  /** Most entries returned, the newest. Default 100. */
  limit?: number;
}

/**
 * Appends with the id Redis gives (its own clock, so entries from every host are in one order) and
 * trims, in the same call, by count and by age measured on that same clock.
 */
const APPEND = new LuaScript(`
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], '*', 'entry', ARGV[1])
redis.call('XTRIM', KEYS[1], 'MINID', '~', tostring(nowMs - tonumber(ARGV[3])))
return id
`);

function readEntry(id: string, fields: string[]): AuditEntry | undefined {
  const index = fields.indexOf('entry');
  if (index < 0) return undefined;
  const parsed = AuditRequestSchema.safeParse(parseJson(fields[index + 1] ?? ''));
  if (!parsed.success) return undefined;
  const ms = Number(id.split('-')[0]);
  return { ...parsed.data, id, at: new Date(ms).toISOString() };
}

/** Who changed what, when, from where and why: appended by every command a person runs. */
export class AuditTrail extends RedisStore {
  readonly #maxAgeMs: number;
  readonly #maxEntries: number;

  constructor(redis: RedisConnection, options: AuditTrailOptions = {}) {
    super(redis, options);
    this.#maxAgeMs = positiveInteger('AuditTrail: maxAgeMs', options.maxAgeMs ?? 30 * 86_400_000);
    this.#maxEntries = positiveInteger('AuditTrail: maxEntries', options.maxEntries ?? 10_000);
  }

  /** Appends one change; its id (Redis's clock) orders it among every other. */
  async append(request: AuditRequest): Promise<string> {
    const entry = AuditRequestSchema.parse(request);
    return String(
      await APPEND.run(
        this.redis,
        [this.keys.audit],
        [JSON.stringify(entry), this.#maxEntries, this.#maxAgeMs],
      ),
    );
  }

  /** The newest entries, newest first; an entry nobody can read is left out. */
  async list({ sinceMs, limit = 100 }: ListAuditOptions = {}): Promise<AuditEntry[]> {
    positiveInteger('AuditTrail: limit', limit);
    const low = sinceMs === undefined ? '-' : `${Math.max(0, Math.floor(sinceMs))}-0`;
    const rows = (await this.redis.xrevrange(this.keys.audit, '+', low, 'COUNT', limit)) as [
      string,
      string[],
    ][];
    return rows.flatMap(([id, fields]) => readEntry(id, fields) ?? []);
  }
}
