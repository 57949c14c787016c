import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { NightshiftError } from '../../errors/index.js';
import { yaml } from '../../policy/index.js';
import { ROLES } from './roles.js';

/** `sha256:` and 64 hex digits: the SHA-256 of a token, never the token itself. */
const HASH = /^sha256:[0-9a-f]{64}$/;

export const PrincipalEntrySchema = z.strictObject({
  /** Who: recorded as `who` in the audit trail for every change this principal makes. */
  name: z
    .string()
    .trim()
    .min(1)
    .max(100)
    .regex(/^[^\s<>"'&]+$/, 'must be one word without <>"\'&'),
  role: z.enum(ROLES),
  /** `sha256:<hex>` of the token (`nightshift console-token` makes both). */
  token: z
    .string()
    .regex(
      HASH,
      'must be "sha256:" and 64 hex digits, the hash `nightshift console-token` prints; the file holds no token itself',
    ),
});
export type Principal = Omit<z.infer<typeof PrincipalEntrySchema>, 'token'>;

export const TokensFileSchema = z.strictObject({ principals: z.array(z.unknown()) });

/** A tokens file (or `NIGHTSHIFT_CONSOLE_TOKENS`) that cannot be used: the message names the source and the entry. */
export class TokensFileError extends NightshiftError {
  override name = 'TokensFileError';
  readonly code = 'NS_CONSOLE_TOKENS_INVALID';
}

/** A token's hash as the tokens file holds it. */
export function tokenHash(token: string): string {
  return `sha256:${createHash('sha256').update(token).digest('hex')}`;
}

/** A new console token (256 random bits) and the hash to put in the tokens file. */
export function newConsoleToken(): { token: string; hash: string } {
  const token = `nsc_${randomBytes(32).toString('base64url')}`;
  return { token, hash: tokenHash(token) };
}

function entryProblems(
  raw: unknown,
  index: number,
): { entry?: z.infer<typeof PrincipalEntrySchema>; problems: string[] } {
  const parsed = PrincipalEntrySchema.safeParse(raw);
  if (parsed.success) return { entry: parsed.data, problems: [] };
  const name =
    typeof (raw as { name?: unknown })?.name === 'string' ? ` (${(raw as { name: string }).name})` : '';
  return {
    problems: parsed.error.issues.map(
      (issue) =>
        `principals[${index}]${name}${issue.path.length > 0 ? `.${issue.path.join('.')}` : ''}: ${issue.message}`,
    ),
  };
}

/** The principals of a tokens file's text; every problem at once, each naming `source` and the entry. */
export function readPrincipals(text: string, source: string): PrincipalDirectory {
  let document: unknown;
  try {
    document = yaml.parse(text);
  } catch (error) {
    throw new TokensFileError(`${source}: not YAML or JSON: ${(error as Error).message.split('\n')[0]}`);
  }
  const file = TokensFileSchema.safeParse(document);
  if (!file.success)
    throw new TokensFileError(
      `${source}: expected { principals: [ { name, role, token: "sha256:<hex>" }, … ] }`,
    );
  const problems: string[] = [];
  const entries: z.infer<typeof PrincipalEntrySchema>[] = [];
  file.data.principals.forEach((raw, index) => {
    const read = entryProblems(raw, index);
    problems.push(...read.problems);
    if (!read.entry) return;
    if (entries.some((other) => other.name === read.entry?.name))
      problems.push(`principals[${index}] (${read.entry.name}): the name is taken by an earlier entry`);
    else if (entries.some((other) => other.token === read.entry?.token))
      problems.push(`principals[${index}] (${read.entry.name}): the same token hash as an earlier entry`);
    else entries.push(read.entry);
  });
  if (problems.length > 0) throw new TokensFileError(`${source}: ${problems.join('; ')}`);
  if (entries.length === 0) throw new TokensFileError(`${source}: no principal`);
  return new PrincipalDirectory(entries);
}

/**
 * The console's principals by token. A presented token is hashed and compared with every entry's
 * hash in constant time, all of them each time, so neither the answer's timing nor its content says
 * how close a guess came or which entry it matched.
 */
export class PrincipalDirectory {
  readonly #entries: readonly { principal: Principal; hash: Buffer }[];

  constructor(entries: readonly z.infer<typeof PrincipalEntrySchema>[]) {
    this.#entries = entries.map(({ token, ...principal }) => ({
      principal,
      hash: Buffer.from(token.slice('sha256:'.length), 'hex'),
    }));
  }

  get size(): number {
    return this.#entries.length;
  }

  /** The principal whose token this is, if any. */
  find(token: string): Principal | undefined {
    const presented = createHash('sha256').update(token).digest();
    let found: Principal | undefined;
    for (const entry of this.#entries)
      if (timingSafeEqual(presented, entry.hash) && !found) found = entry.principal;
    return found;
  }
}
