import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { NightshiftError } from '../errors/index.js';

/**
 * What a stored policy text's signatures say to the keys of the process reading it:
 * - `signed`: one of its keys signed this very text;
 * - `unsigned`: nobody signed it (a text written straight into Redis, or by a release before signing);
 * - `unknown-key`: signed, but with no key this process holds (a wrong key, or a key change half done);
 * - `bad-signature`: a signature under one of its keys' ids that does not match the text (forged);
 * - `unchecked`: this process holds no key, so it can vouch for nothing.
 */
export type PolicyVerdict = 'signed' | 'unsigned' | 'unknown-key' | 'bad-signature' | 'unchecked';

/** Signatures of one text, by the id of the key that made each: HMAC-SHA256 in hex. */
export type PolicySignatures = Readonly<Record<string, string>>;

/** What a signature covers besides the text: a key shared with anything else cannot sign a policy by accident. */
const DOMAIN = 'nightshift policy v1\n';

interface PolicyKey {
  /** Derived from the key (HMAC of a fixed label), so it names the key without revealing it. */
  readonly id: string;
  readonly secret: Buffer;
}

function policyKey(secret: Buffer): PolicyKey {
  return {
    id: createHmac('sha256', secret).update('nightshift policy key id').digest('hex').slice(0, 16),
    secret,
  };
}

/**
 * The keys policy texts are signed and checked with (`NIGHTSHIFT_POLICY_KEY`). Every key signs and
 * every key verifies: during a key change processes holding the old key, the new one or both still
 * accept each other's texts, whatever order they are restarted in. The keys stay in private fields,
 * out of reach of logs, JSON and `util.inspect`.
 */
export class PolicyKeyring {
  readonly #keys: readonly PolicyKey[];
  /**
   * A key this process made up for itself (`start` or `demo` without `NIGHTSHIFT_POLICY_KEY`): its
   * own scheduler's texts verify, nobody else's.
   */
  readonly local: boolean;

  private constructor(keys: readonly PolicyKey[], local: boolean) {
    if (keys.length === 0) throw new Error('PolicyKeyring: at least one key is needed');
    this.#keys = keys;
    this.local = local;
  }

  /** The keys of `NIGHTSHIFT_POLICY_KEY`, as text (their UTF-8 bytes are the HMAC keys). */
  static of(keys: readonly string[]): PolicyKeyring {
    return new PolicyKeyring(
      keys.map((key) => policyKey(Buffer.from(key, 'utf8'))),
      false,
    );
  }

  /** A random key known to this process alone. */
  static local(): PolicyKeyring {
    return new PolicyKeyring([policyKey(randomBytes(32))], true);
  }

  /** One signature of `text` per key. */
  sign(text: string): PolicySignatures {
    return Object.fromEntries(this.#keys.map((key) => [key.id, mac(key, text)]));
  }

  /** Whether one of these keys signed `text`, given the signatures stored with it. */
  verify(text: string, signatures: PolicySignatures): Exclude<PolicyVerdict, 'unchecked'> {
    if (Object.keys(signatures).length === 0) return 'unsigned';
    let mine = false;
    for (const key of this.#keys) {
      const stored = signatures[key.id];
      if (stored === undefined) continue;
      mine = true;
      const expected = Buffer.from(mac(key, text), 'hex');
      const given = Buffer.from(stored, 'hex');
      if (given.length === expected.length && timingSafeEqual(given, expected)) return 'signed';
    }
    return mine ? 'bad-signature' : 'unknown-key';
  }
}

function mac(key: PolicyKey, text: string): string {
  return createHmac('sha256', key.secret).update(DOMAIN).update(text, 'utf8').digest('hex');
}

/**
 * A worker will not run a policy text its keys do not vouch for. The message says why and which
 * variable to set; it never holds a key or a signature.
 */
export class PolicyRefusedError extends NightshiftError {
  override name = 'PolicyRefusedError';
  readonly code = 'NS_POLICY_NOT_SIGNED';

  constructor(
    readonly sha: string,
    readonly verdict: Exclude<PolicyVerdict, 'signed'>,
    { local = false }: { local?: boolean } = {},
  ) {
    super(`policy ${sha.slice(0, 12)} refused: ${refusalReason(verdict, local)}`);
  }
}

function refusalReason(verdict: Exclude<PolicyVerdict, 'signed'>, local: boolean): string {
  if (verdict === 'bad-signature')
    return "its signature for this worker's key does not match its text: it was altered in Redis after it was signed";
  if (local)
    return 'this process (start without NIGHTSHIFT_POLICY_KEY) signs with a key of its own and runs only the policies it stored itself; set the same NIGHTSHIFT_POLICY_KEY for it and for the scheduler or `nightshift run` that queued this run';
  switch (verdict) {
    case 'unsigned':
      return 'it is not signed; a worker runs only policy texts signed with NIGHTSHIFT_POLICY_KEY by a scheduler, start or `nightshift run` that holds the key';
    case 'unknown-key':
      return 'it is signed with a key this worker does not hold; set NIGHTSHIFT_POLICY_KEY to the key the schedulers and `nightshift run` sign with (during a key change, both keys)';
    case 'unchecked':
      return 'this process holds no NIGHTSHIFT_POLICY_KEY to check it with';
  }
}

/**
 * A worker will not honour parameters its keys do not vouch for (`PolicyStore.verifyParameters`):
 * given in Redis, they could aim a signed job at what nobody with the key asked for.
 */
export class RunParametersRefusedError extends NightshiftError {
  override name = 'RunParametersRefusedError';
  readonly code = 'NS_PARAMETERS_NOT_SIGNED';

  constructor(
    readonly runId: string,
    readonly verdict: Exclude<PolicyVerdict, 'signed'>,
  ) {
    super(
      `the parameters of run ${runId} refused (${verdict}): a worker honours only parameters signed, with the run they were given to, by a \`nightshift run\` holding a key of its NIGHTSHIFT_POLICY_KEY`,
    );
  }
}
