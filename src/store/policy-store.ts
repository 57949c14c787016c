import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import { z } from 'zod';
import { parseJson } from './json.js';
import type { RedisConnection } from './redis.js';
import { positiveInteger, RedisStore, type StoreOptions } from './redis-store.js';

export interface PolicyStoreOptions extends StoreOptions {
  /** How long a policy (and the record of the one in force) is kept after its last write. Default 30 days. */
  ttlMs?: number;
}

/** A policy text's identity: its sha256 in hex, as stored, logged and carried by runs (`policySha`). */
export const policySha = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

const CurrentRecordSchema = z.object({
  sha: z.string().regex(/^[0-9a-f]{64}$/),
  /** When a scheduler loaded it (ISO, UTC). */
  loadedAt: z.iso.datetime(),
  /** The host of that scheduler. */
  host: z.string(),
});

/** An edit of the policy file a scheduler refused; the policy before it stays in force. */
export const RejectedEditSchema = z.object({
  /** The sha256 of the refused text. */
  sha: z.string().regex(/^[0-9a-f]{64}$/),
  /** When it was refused (ISO, UTC). */
  at: z.iso.datetime(),
  /** The host of the scheduler that refused it. */
  host: z.string(),
  /** Each problem with the text as `file:line:col: message`: about the text, never a `${VAR}` value. */
  problems: z.array(z.string()),
  /** Why a valid text could not be loaded, when the fault was not the text's. */
  error: z.string().optional(),
});
export type RejectedEdit = z.infer<typeof RejectedEditSchema>;

/** The policy the schedulers run, as the last scheduler to load one recorded it. */
export interface CurrentPolicy extends z.infer<typeof CurrentRecordSchema> {
  /** Its text, or undefined when it has expired from Redis. */
  readonly text: string | undefined;
}

/**
 * Policy texts by content hash, so a run enqueued under one version of the policy file executes
 * that version even after the file changes. Texts hold `${VAR}` references, never their values:
 * each worker interpolates with its own environment.
 */
export class PolicyStore extends RedisStore {
  readonly #ttlMs: number;

  constructor(redis: RedisConnection, options: PolicyStoreOptions = {}) {
    super(redis, options);
    this.#ttlMs = positiveInteger('PolicyStore: ttlMs', options.ttlMs ?? 30 * 24 * 3_600_000);
  }

  /** Stores the text (again) and returns its sha256 in hex. */
  async put(text: string): Promise<string> {
    const sha = policySha(text);
    await this.redis.set(this.keys.policy(sha), text, 'PX', this.#ttlMs);
    return sha;
  }

  /**
   * Keeps the text under `sha` (and the records of the policy in force and of an edit refused
   * since) for another full TTL, so a scheduler that runs one policy for months without a reload
   * never lets it expire under the runs it enqueues.
   */
  async keep(sha: string): Promise<void> {
    await this.redis
      .multi()
      .pexpire(this.keys.policy(sha), this.#ttlMs)
      .pexpire(this.keys.currentPolicy, this.#ttlMs)
      .pexpire(this.keys.rejectedPolicy, this.#ttlMs)
      .exec();
  }

  /** The text stored under `sha`, or undefined if it expired or does not match its hash. */
  async get(sha: string): Promise<string | undefined> {
    const text = await this.redis.get(this.keys.policy(sha));
    return text !== null && policySha(text) === sha ? text : undefined;
  }

  /**
   * Records `sha` (stored with `put`) as the policy the schedulers run, for commands that check
   * a job name against it (`suspend`). Several schedulers share one record: the last to load a
   * policy wins, which is the one in force whenever they all run the same file. A load ends the
   * rejection of an earlier edit (`setRejected`), in the same transaction.
   */
  async setCurrent(
    sha: string,
    { at = new Date(), host = hostname() }: { at?: Date; host?: string } = {},
  ): Promise<void> {
    const record: z.infer<typeof CurrentRecordSchema> = { sha, loadedAt: at.toISOString(), host };
    const replies = await this.redis
      .multi()
      .set(this.keys.currentPolicy, JSON.stringify(record), 'PX', this.#ttlMs)
      .del(this.keys.rejectedPolicy)
      .exec();
    const failed = replies?.find(([error]) => error)?.[0];
    if (failed) throw failed;
  }

  /** Records an edit a scheduler refused, until a policy is loaded again (`setCurrent`). */
  async setRejected(edit: RejectedEdit): Promise<void> {
    await this.redis.set(this.keys.rejectedPolicy, JSON.stringify(edit), 'PX', this.#ttlMs);
  }

  /** The edit refused since the policy in force was loaded, or undefined when none was (or it is unreadable). */
  async rejected(): Promise<RejectedEdit | undefined> {
    const raw = await this.redis.get(this.keys.rejectedPolicy);
    if (raw === null) return undefined;
    const parsed = RejectedEditSchema.safeParse(parseJson(raw));
    return parsed.success ? parsed.data : undefined;
  }

  /**
   * Claims the notice about `event` for the policy text `sha`, for `forMs`: true for the first
   * claim only, so replicas watching the same file send one notice, not one each.
   */
  async claimNotice(event: string, sha: string, forMs: number): Promise<boolean> {
    return (await this.redis.set(this.keys.policyNotice(event, sha), '1', 'PX', forMs, 'NX')) === 'OK';
  }

  /** The policy a scheduler last recorded with `setCurrent`, or undefined when none has (or the record is unreadable). */
  async current(): Promise<CurrentPolicy | undefined> {
    const raw = await this.redis.get(this.keys.currentPolicy);
    if (raw === null) return undefined;
    const parsed = CurrentRecordSchema.safeParse(parseJson(raw));
    if (!parsed.success) return undefined;
    return { ...parsed.data, text: await this.get(parsed.data.sha) };
  }
}
