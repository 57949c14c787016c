import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import { z } from 'zod';
import { POLICY_TTL_MS } from '../config/index.js';
import { parseJson } from './json.js';
import type { PolicyKeyring, PolicySignatures, PolicyVerdict } from './policy-signing.js';
import type { RedisConnection } from './redis.js';
import { positiveInteger, RedisStore, type StoreOptions } from './redis-store.js';

export interface PolicyStoreOptions extends StoreOptions {
  /** How long a policy (and the record of the one in force) is kept after its last write. Default 30 days. */
  ttlMs?: number;
  /**
   * The keys texts are signed with when stored and checked with when read. Without it nothing can
   * be stored, and no text read counts as signed (`unchecked`). Default: none.
   */
  keyring?: PolicyKeyring | undefined;
}

/** A stored policy text and what its signatures say: only a `signed` one may be run. */
export interface StoredPolicy {
  readonly text: string;
  readonly verdict: PolicyVerdict;
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
  /** Its text when signed with a key of this process's, else undefined (expired from Redis, or not vouched for). */
  readonly text: string | undefined;
  /** Its text and verdict whatever they are, for a reader that only lists names; undefined when expired. */
  readonly stored: StoredPolicy | undefined;
}

/** A run's parameters and what they were given to: what their signatures cover. */
export interface ParameterBinding {
  readonly runId: string;
  readonly job: string;
  readonly policySha: string;
  readonly parameters: Readonly<Record<string, string>>;
}

/**
 * What a run's parameters are signed as. Its first line keeps it from ever reading as a policy
 * text a key signed (a policy is a YAML map), and the other way round.
 */
function parametersText({ runId, job, policySha: sha, parameters }: ParameterBinding): string {
  const sorted = Object.entries(parameters).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `nightshift run parameters v1\n${JSON.stringify([runId, job, sha, sorted])}`;
}

/**
 * Policy texts by content hash, so a run enqueued under one version of the policy file executes
 * that version even after the file changes. Texts hold `${VAR}` references, never their values:
 * each worker interpolates with its own environment. Each text is stored with its signatures
 * (`PolicyKeyring`): anyone may write to Redis, only a key holder can sign, and a worker runs
 * signed texts only.
 */
export class PolicyStore extends RedisStore {
  readonly #ttlMs: number;
  readonly #keyring: PolicyKeyring | undefined;

  constructor(redis: RedisConnection, options: PolicyStoreOptions = {}) {
    super(redis, options);
    this.#ttlMs = positiveInteger('PolicyStore: ttlMs', options.ttlMs ?? POLICY_TTL_MS);
    this.#keyring = options.keyring;
  }

  /** Whether this store holds a key to sign with: without one, `put` and `signParameters` throw. */
  get canSign(): boolean {
    return this.#keyring !== undefined;
  }

  /** Whether this store's key is one this process made up for itself (`PolicyKeyring.local`). */
  get localKey(): boolean {
    return this.#keyring?.local ?? false;
  }

  /**
   * Stores the text (again) with this store's signatures, in one transaction, and returns its
   * sha256 in hex. Signatures of other keys already there stay (a peer holding another key during
   * a key change); those of the same keys are replaced.
   */
  async put(text: string): Promise<string> {
    if (!this.#keyring) throw new Error('PolicyStore: no policy key to sign with');
    const sha = policySha(text);
    const replies = await this.redis
      .multi()
      .set(this.keys.policy(sha), text, 'PX', this.#ttlMs)
      .hset(this.keys.policySignatures(sha), this.#keyring.sign(text))
      .pexpire(this.keys.policySignatures(sha), this.#ttlMs)
      .exec();
    const failed = replies?.find(([error]) => error)?.[0];
    if (failed) throw failed;
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
      .pexpire(this.keys.policySignatures(sha), this.#ttlMs)
      .pexpire(this.keys.currentPolicy, this.#ttlMs)
      .pexpire(this.keys.rejectedPolicy, this.#ttlMs)
      .exec();
  }

  /**
   * Signatures of a run's parameters, bound to the run, its job and its policy, for its job data:
   * a worker honours parameters only with them (`verifyParameters`), so whoever can write to Redis
   * cannot add parameters to a run, change them, or move them to another run.
   */
  signParameters(run: ParameterBinding): PolicySignatures {
    if (!this.#keyring) throw new Error('PolicyStore: no policy key to sign with');
    return this.#keyring.sign(parametersText(run));
  }

  /** What the signatures of a run's parameters say to this store's keys. */
  verifyParameters(run: ParameterBinding, signatures: PolicySignatures): PolicyVerdict {
    return this.#keyring ? this.#keyring.verify(parametersText(run), signatures) : 'unchecked';
  }

  /** The text stored under `sha` if one of this store's keys signed it; undefined otherwise. */
  async get(sha: string): Promise<string | undefined> {
    const stored = await this.read(sha);
    return stored?.verdict === 'signed' ? stored.text : undefined;
  }

  /**
   * The text stored under `sha` and what its signatures say, or undefined if it expired or does
   * not match its hash. Run its text only when the verdict is `signed`.
   */
  async read(sha: string): Promise<StoredPolicy | undefined> {
    const [[textError, text], [signaturesError, signatures]] = ((await this.redis
      .multi()
      .get(this.keys.policy(sha))
      .hgetall(this.keys.policySignatures(sha))
      .exec()) ?? []) as [[Error | null, string | null], [Error | null, Record<string, string>]];
    if (textError || signaturesError) throw textError ?? signaturesError;
    if (text === null || policySha(text) !== sha) return undefined;
    return { text, verdict: this.#keyring ? this.#keyring.verify(text, signatures) : 'unchecked' };
  }

  /**
   * Records `sha` (stored with `put`) as the policy the schedulers run, for commands that check
   * a job name against it (`suspend`). Several schedulers share one record: the last to load a
   * policy wins, which is the one in force whenever they all run the same file. A load ends the
   * rejection of an earlier edit (`setRejected`), in the same transaction.
   */
  async setCurrent(
    sha: string,
    { at = new Date(this.clock.now()), host = hostname() }: { at?: Date; host?: string } = {},
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

  /**
   * The policy a scheduler last recorded with `setCurrent`, or undefined when none has (or the
   * record is unreadable). Anyone who can write to Redis can change the record, so its `text` is
   * there only when one of this store's keys signed it.
   */
  async current(): Promise<CurrentPolicy | undefined> {
    const raw = await this.redis.get(this.keys.currentPolicy);
    if (raw === null) return undefined;
    const parsed = CurrentRecordSchema.safeParse(parseJson(raw));
    if (!parsed.success) return undefined;
    const stored = await this.read(parsed.data.sha);
    return { ...parsed.data, text: stored?.verdict === 'signed' ? stored.text : undefined, stored };
  }
}
