import type { PolicyProblem } from './errors.js';
import { problemAt } from './issues.js';
import { ownVariableReason } from './own-variables.js';
import type { YamlSource } from './yaml/index.js';

/**
 * Names that say a variable holds a secret, in any case: `DB_PASSWORD`, `api_token`,
 * `SIGNING_KEY`, `SLACK_WEBHOOK`, `BASIC_AUTH`.
 */
export const SECRET_NAME = /password|passwd|passphrase|secret|token|key|credential|auth|webhook/i;

/** A value from a secret variable: shown as `${name}` wherever it would appear. */
export interface PolicySecret {
  /** The variable, as `${NAME}` wrote it. */
  readonly name: string;
  /** What it became where the policy read it (its value, or a `:-` default). */
  readonly value: string;
}

/** Which variables a policy reads are secrets, and every value they took in it. */
export interface PolicySecrets {
  readonly names: ReadonlySet<string>;
  readonly values: readonly PolicySecret[];
  /** Problems with the `secrets:` list itself. */
  readonly problems: readonly PolicyProblem[];
}

/**
 * The rule a user can read in docs/policy.md: a variable the policy reads is a secret when
 * `secrets:` lists it, when its name says so (SECRET_NAME), when a notification's `url` reads it
 * (webhook URLs are secrets), or when it is one of nightshift's own that the installation lets
 * policies read. Every other value is no secret and is shown as it is.
 */
export function policySecrets(source: YamlSource, listed: unknown): PolicySecrets {
  const problems: PolicyProblem[] = [];
  const names = new Set<string>();
  if (Array.isArray(listed))
    listed.forEach((name, index) => {
      // a name read from a variable would let the environment decide what is hidden
      if (source.isInterpolated(['secrets', index]))
        problems.push(
          // biome-ignore lint/suspicious/noTemplateCurlyInString: the policy's own ${VAR} syntax
          problemAt(source, ['secrets', index], 'write the name as it is, not as a ${VAR}'),
        );
      else if (typeof name === 'string') names.add(name);
    });
  const reads = source.interpolatedBelow([]).map((path) => ({ path, reads: source.readsAt(path) }));
  for (const { path, reads: read } of reads)
    for (const { name } of read)
      if (
        SECRET_NAME.test(name) ||
        ownVariableReason(name) !== undefined ||
        (path[0] === 'notifications' && path[2] === 'url' && path.length === 3)
      )
        names.add(name);
  const values = new Map<string, PolicySecret>();
  for (const { reads: read } of reads)
    for (const { name, value } of read)
      if (names.has(name) && value !== '') values.set(`${name}\u0000${value}`, { name, value });
  return { names, values: [...values.values()], problems };
}

/** Whether the string at `path` read a secret: a message then shows it as written, never its value. */
export function readsSecret(
  source: YamlSource,
  secrets: Pick<PolicySecrets, 'names'>,
  path: readonly PropertyKey[],
): boolean {
  return source.readsAt(path).some(({ name }) => secrets.names.has(name));
}

/**
 * Shorter secrets are replaced only where they are a whole string: inside other text, a value
 * like `1` or `ops` is more likely something else, and replacing it would garble ids and times.
 */
export const MIN_EMBEDDED_LENGTH = 8;

/** Deep copies of what is shown or stored, each secret value replaced by its `${NAME}`. */
export type HideSecrets = <T>(value: T) => T;

function isPlainObject(value: object): value is Record<string, unknown> {
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * The one way a secret is shown: as its reference, `${DB_PASSWORD}`. A string equal to a secret
 * value is replaced whole; a value of at least MIN_EMBEDDED_LENGTH characters is replaced inside
 * other strings too (`token ${API_TOKEN} refused`). Keys are left alone, and so are values that
 * are not plain data (errors, dates).
 */
export function hideSecrets(secrets: readonly PolicySecret[]): HideSecrets {
  // longest first, so a value inside a longer one does not break the longer one's replacement
  const sorted = secrets.filter(({ value }) => value !== '').sort((a, b) => b.value.length - a.value.length);
  if (sorted.length === 0) return (value) => value;
  const whole = new Map<string, string>();
  for (const { name, value } of sorted) if (!whole.has(value)) whole.set(value, `\${${name}}`);
  const embedded = sorted.filter(({ value }) => value.length >= MIN_EMBEDDED_LENGTH);

  const text = (input: string): string => {
    const exact = whole.get(input);
    if (exact !== undefined) return exact;
    let output = input;
    for (const { name, value } of embedded) {
      if (output.includes(value)) output = output.split(value).join(`\${${name}}`);
    }
    return output;
  };
  const copy = (value: unknown): unknown => {
    if (typeof value === 'string') return text(value);
    if (Array.isArray(value)) return value.map(copy);
    if (value !== null && typeof value === 'object' && isPlainObject(value)) {
      return Object.fromEntries(Object.entries(value).map(([key, entry]) => [key, copy(entry)]));
    }
    return value;
  };
  return copy as HideSecrets;
}
