import { ownVariableMessage, ownVariableReason } from './own-variables.js';
import { suggestionSuffix } from './suggest.js';

/** The environment variables a policy may read: the CLI passes the ones its Settings were read from. */
export type PolicyEnv = Readonly<Record<string, string | undefined>>;

/** One `${NAME}` of a string, and the text it became (the variable's value, or the default). */
export interface VariableRead {
  readonly name: string;
  readonly value: string;
}

export type InterpolationResult =
  | {
      readonly ok: true;
      readonly value: string;
      readonly interpolated: boolean;
      /** Each `${NAME}` of the text, in order. */
      readonly reads: readonly VariableRead[];
    }
  /**
   * `unset` names a variable that is not set; any other failure is a mistake in the text itself,
   * or a variable of nightshift's own that the installation does not let policies read.
   */
  | { readonly ok: false; readonly message: string; readonly unset?: string };

const NOTHING_READ: readonly VariableRead[] = [];

const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Replaces `${NAME}` and `${NAME:-default}` with values from `env`. The default applies when the
 * variable is unset or empty, as in a shell. `$${` stands for a literal `${`; any other `$` is
 * kept. An unset variable without a default is an error, so a missing secret fails the load
 * instead of becoming an empty string; its message suggests a variable of `env` with a close name.
 *
 * A variable of nightshift's own (its settings, `NIGHTSHIFT_*`, `*_FILE`) is refused unless
 * `allowEnv` lists it, set or not, defaulted or not: a policy must not be able to read the
 * credentials nightshift runs with.
 *
 * Messages name variables, never their values: values are often secrets.
 */
export function interpolate(
  text: string,
  env: PolicyEnv,
  allowEnv: ReadonlySet<string> = new Set(),
): InterpolationResult {
  if (!text.includes('${')) return { ok: true, value: text, interpolated: false, reads: NOTHING_READ };
  let value = '';
  let interpolated = false;
  const reads: VariableRead[] = [];
  let index = 0;
  while (index < text.length) {
    const start = text.indexOf('$', index);
    if (start === -1) {
      value += text.slice(index);
      break;
    }
    value += text.slice(index, start);
    if (text.startsWith('$${', start)) {
      value += '${';
      index = start + 3;
      continue;
    }
    if (!text.startsWith('${', start)) {
      value += '$';
      index = start + 1;
      continue;
    }
    const end = text.indexOf('}', start + 2);
    if (end === -1) {
      return {
        ok: false,
        message:
          // biome-ignore lint/suspicious/noTemplateCurlyInString: the message shows the policy's own ${VAR} syntax
          'unterminated "${": expected "${NAME}" or "${NAME:-default}" (write "$${" for a literal "${")',
      };
    }
    const body = text.slice(start + 2, end);
    const separator = body.indexOf(':-');
    const name = separator === -1 ? body : body.slice(0, separator);
    if (!VARIABLE_NAME.test(name)) {
      return {
        ok: false,
        message: `invalid variable reference "\${${body}}": a name holds letters, digits and "_" and does not start with a digit`,
      };
    }
    const own = allowEnv.has(name) ? undefined : ownVariableReason(name);
    if (own !== undefined) return { ok: false, message: ownVariableMessage(name, own) };
    const fromEnv = env[name];
    if (separator !== -1 && (fromEnv === undefined || fromEnv === '')) {
      reads.push({ name, value: body.slice(separator + 2) });
      value += body.slice(separator + 2);
    } else if (fromEnv === undefined) {
      // a name the policy could not read would be no help
      const names = Object.keys(env).filter(
        (key) => env[key] !== undefined && (allowEnv.has(key) || ownVariableReason(key) === undefined),
      );
      return {
        ok: false,
        unset: name,
        message: `environment variable ${name} is not set${suggestionSuffix(name, names)} (set it, or give a default: "\${${name}:-default}")`,
      };
    } else {
      reads.push({ name, value: fromEnv });
      value += fromEnv;
    }
    interpolated = true;
    index = end + 1;
  }
  return { ok: true, value, interpolated, reads };
}
